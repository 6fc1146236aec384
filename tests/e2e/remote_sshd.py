"""A second machine for the remote tests: a real sshd on 127.0.0.1 and a second account.

The "laptop" is this test process's user with a real browser; the "remote machine" is Debian's
OpenSSH server, started by the test with its own config, host key and user key in a temp folder,
on a free port of 127.0.0.1. As root (CI) the remote account is a second local user, created once
(``useradd``, idempotent); otherwise it is the same user with a HOME of its own (a non-root sshd
can only log its own user in). Every command "on the remote" runs as that account with HOME and
PATH only, the environment an IDE's MCP server gets.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from tests.e2e.headed import VENV_BIN

SSHD = Path("/usr/sbin/sshd")
REMOTE_USER = "shotremote"
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"
CHECKOUT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def ensure_user(name: str) -> pwd.struct_passwd:
    """The second account (root only); created once, reused by later runs. Its password is
    ``*`` (none), not ``!`` (locked): without PAM, sshd lets no one into a locked account."""
    try:
        pwd.getpwnam(name)
    except KeyError:
        subprocess.run(["useradd", "--create-home", "--shell", "/bin/sh", name], check=True)
    subprocess.run(["usermod", "-p", "*", name], check=True)
    return pwd.getpwnam(name)


class Remote:
    """The remote account: its HOME, and how to run a command there as it."""

    def __init__(self, root: Path) -> None:
        self.as_root = os.geteuid() == 0
        if self.as_root:
            entry = ensure_user(REMOTE_USER)
            self.user, self.uid, self.gid = entry.pw_name, entry.pw_uid, entry.pw_gid
            self.home = Path(entry.pw_dir)
        else:
            entry = pwd.getpwuid(os.getuid())
            self.user, self.uid, self.gid = entry.pw_name, entry.pw_uid, entry.pw_gid
            self.home = root / "remote-home"
            self.home.mkdir()
        # What earlier runs left: a forward folder, a project.
        shutil.rmtree(self.home / ".local" / "state" / "shotbridge", ignore_errors=True)
        self.path = f"{VENV_BIN}:{SYSTEM_PATH}"
        if self.as_root and not self._runs_venv():
            self._install_launcher()

    def _runs_venv(self) -> bool:
        probe = self.run(str(VENV_BIN / "python"), "-c", "import shotbridge._core", timeout=60)
        return probe.returncode == 0

    def _install_launcher(self) -> None:
        """The remote machine's own shotctl when the venv's interpreter lives where the second
        account cannot go (a pyenv under /root): the system Python of the same version, over
        the venv's packages and this checkout."""
        version = f"{sys.version_info.major}.{sys.version_info.minor}"
        site = VENV_BIN.parent / "lib" / f"python{version}" / "site-packages"
        launcher = self.write(
            ".local/bin/shotctl",
            f"#!/bin/sh\nPYTHONPATH={CHECKOUT / 'python'}:{site} "
            f'exec /usr/bin/python{version} -m shotbridge "$@"\n',
        )
        launcher.chmod(0o755)
        self.path = f"{launcher.parent}:{SYSTEM_PATH}"

    def env(self) -> dict[str, str]:
        return {"HOME": str(self.home), "PATH": self.path}

    def argv(self, *args: str) -> list[str]:
        """``args`` run as the remote account with HOME and PATH only."""
        clean = ["env", "-i", *(f"{k}={v}" for k, v in self.env().items()), *args]
        return ["runuser", "-u", self.user, "--", *clean] if self.as_root else clean

    def run(self, *args: str, timeout: float = 90) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.argv(*args), capture_output=True, text=True, timeout=timeout, cwd="/"
        )

    def write(self, relative: str, text: str) -> Path:
        """A file of the remote account's (owned by it)."""
        path = self.home / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        if self.as_root:
            for p in [path, *path.relative_to(self.home).parents]:
                target = self.home / p
                if target != self.home:
                    os.chown(target, self.uid, self.gid)
        return path


class Sshd:
    """``sshd -D -f <own config>`` on 127.0.0.1:port, accepting one key for the remote account."""

    def __init__(self, remote: Remote, root: Path) -> None:
        self.remote = remote
        self.root = root
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self.key = root / "id_ed25519"

    def _keys(self) -> Path:
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(self.root / "host_key")],
            check=True,
        )
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(self.key)], check=True
        )
        # sshd reads authorized keys as the user it logs in: put them where that user can.
        keys = self.remote.home / ".ssh" / "authorized_keys"
        keys.parent.mkdir(mode=0o700, exist_ok=True)
        keys.write_text(self.key.with_suffix(".pub").read_text())
        keys.chmod(0o600)
        if self.remote.as_root:
            os.chown(keys.parent, self.remote.uid, self.remote.gid)
            os.chown(keys, self.remote.uid, self.remote.gid)
        return keys

    def start(self) -> Sshd:
        keys = self._keys()
        config = self.root / "sshd_config"
        config.write_text(
            f"Port {self.port}\nListenAddress 127.0.0.1\n"
            f"HostKey {self.root / 'host_key'}\nPidFile {self.root / 'sshd.pid'}\n"
            f"AuthorizedKeysFile {keys}\nAllowUsers {self.remote.user}\n"
            "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n"
            "StrictModes no\nLogLevel ERROR\n"
            # Not root: the same user, whose sessions must see the HOME of the "remote" account.
            f"SetEnv HOME={self.remote.home}\n"
            # sshd's defaults for forwarded sockets, said out loud: born 0600, and a leftover
            # socket is not replaced (shotctl remote ssh removes it before forwarding).
            "AllowStreamLocalForwarding yes\nStreamLocalBindMask 0177\nStreamLocalBindUnlink no\n"
        )
        if self.remote.as_root:
            Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # its privilege-separation dir
        self.process = subprocess.Popen(
            [str(SSHD), "-D", "-e", "-f", str(config)],
            stderr=open(self.root / "sshd.log", "wb"),  # noqa: SIM115 - the child owns it
            start_new_session=True,
        )
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), 1),
            ):
                return self
            time.sleep(0.05)
        raise RuntimeError(f"sshd did not listen: {(self.root / 'sshd.log').read_text()}")

    def destination(self) -> str:
        return f"{self.remote.user}@127.0.0.1"

    def ssh_args(self) -> list[str]:
        """What a user's ~/.ssh/config would say for this machine."""
        return [
            "-p", str(self.port), "-i", str(self.key), "-F", "/dev/null",
            "-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes",
            "-o", "StrictHostKeyChecking=no",
            "-o", f"UserKnownHostsFile={self.root / 'known_hosts'}",
            "-o", "LogLevel=ERROR",
        ]  # fmt: skip

    def close(self) -> None:
        proc, self.process = self.process, None
        if proc is not None and proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(10)


class Forward:
    """``shotctl remote ssh`` run as the laptop's user, until closed."""

    def __init__(self, sshd: Sshd, env: Mapping[str, str], *extra: str) -> None:
        self.sshd = sshd
        self.env = dict(env)
        self.extra = extra
        self.process: subprocess.Popen[str] | None = None
        self.log = sshd.root / f"forward-{time.monotonic_ns()}.log"

    def start(self) -> Forward:
        argv = [
            str(VENV_BIN / "shotctl"),
            "remote",
            "ssh",
            *self.extra,
            self.sshd.destination(),
            *self.sshd.ssh_args(),
        ]
        self.process = subprocess.Popen(
            argv, env=self.env, stdout=subprocess.DEVNULL, stderr=open(self.log, "w"),  # noqa: SIM115
            start_new_session=True, text=True,
        )  # fmt: skip
        socket_path = self.sshd.remote.home / ".local/state/shotbridge/forward/bus.sock"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if socket_path.is_socket() and self.remote_answers():
                return self
            if self.process.poll() is not None:
                break
            time.sleep(0.1)
        raise RuntimeError(f"the forward did not come up: {self.log.read_text()}")

    def remote_answers(self) -> bool:
        return self.sshd.remote.run("shotctl", "remote", "doctor", timeout=30).returncode == 0

    def close(self) -> None:
        proc, self.process = self.process, None
        if proc is not None and proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(10)


@contextlib.contextmanager
def remote_machine() -> Iterator[tuple[Remote, Sshd]]:
    root = Path(tempfile.mkdtemp(prefix="sbr-"))
    os.chmod(root, 0o755)  # the remote account reads nothing here but must traverse nothing either
    remote = Remote(root)
    sshd = Sshd(remote, root).start()
    try:
        yield remote, sshd
    finally:
        sshd.close()
        shutil.rmtree(root, ignore_errors=True)


def mcp_params(remote: Remote, *args: str) -> Any:
    """``shotctl mcp`` started on the remote account, as an IDE there would start it."""
    from mcp.client.stdio import StdioServerParameters

    argv = remote.argv("shotctl", "mcp", "--cooldown", "0", *args)
    return StdioServerParameters(command=argv[0], args=argv[1:], env={})
