"""``shotctl remote``: the browser on this laptop, the assistant on another machine or in a
container.

``ssh`` keeps an SSH connection open that forwards this machine's bus (a Unix socket) to a
private socket on the remote machine, where the remote ``shotctl mcp`` finds it with no flags;
``devcontainer`` prints the mount that does the same for a container; ``doctor``, run on the
remote side, checks the forward and says how to mend it. No TCP port is opened by any of them.
"""

from __future__ import annotations

import getpass
import json
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import FrameType

import click

from shotbridge.cli import EXIT_FAILED, EXIT_OK
from shotbridge.transport import paths

# Where the remote's `shotctl` looks (paths.forward_dir), relative to the remote user's HOME.
REMOTE_DIR = ".local/state/shotbridge/forward"
# ssh keeps the session alive and notices a dead link; a failed -R ends ssh (then we retry).
SSH_OPTIONS = [
    "-N",
    "-o",
    "ExitOnForwardFailure=yes",
    "-o",
    "ServerAliveInterval=15",
    "-o",
    "ServerAliveCountMax=3",
]
RETRY_MAX = 30.0  # s between reconnection attempts, at most
LINK_CHECK = 1.0  # s: how often the forwarded link is re-pointed at the best host


@click.group()
def remote() -> None:
    """The browser here, the assistant elsewhere: over SSH, or in a container."""


# ---- ssh --------------------------------------------------------------------------------------


def prepare_script(ports: list[int]) -> str:
    """Run on the remote by ssh (POSIX sh): the private folder, no stale socket, the ports."""
    listed = " ".join(str(p) for p in ports)
    return (
        f'umask 077; d="$HOME/{REMOTE_DIR}"; mkdir -p "$d" && chmod 700 "$d" '
        f'&& rm -f "$d/bus.sock" && printf "%s\\n" "{listed}" > "$d/ports" '
        f'&& printf "%s\\n" "$d"'
    )


def forward_args(remote_socket: str, local_socket: Path, ports: list[int]) -> list[str]:
    """``-R remote:local`` for the bus, ``-L p:localhost:p`` for each of the remote's ports."""
    args = ["-R", f"{remote_socket}:{local_socket}"]
    for port in ports:
        args += ["-L", f"{port}:localhost:{port}"]
    return args


def local_link(host: str | None) -> Path | None:
    """Point this machine's ``bus.sock`` at the best host (connected first); its path."""
    info = paths.select_host(host)
    if info is None:
        return None
    directory = paths.runtime_dir()
    paths.point_bus_link(Path(info.socket), directory)
    return directory / paths.BUS_LINK


def guess_remote_home(destination: str) -> str:
    user = destination.split("@", 1)[0] if "@" in destination else getpass.getuser()
    return "/root" if user == "root" else f"/home/{user}"


def print_recipe(destination: str, ssh_args: list[str], ports: list[int], home: str) -> None:
    local = paths.runtime_dir(create=False) / paths.BUS_LINK
    remote_socket = f"{home}/{REMOTE_DIR}/bus.sock"
    prepare = ["ssh", *ssh_args, destination, prepare_script(ports)]
    line = ["ssh", *SSH_OPTIONS, *forward_args(remote_socket, local, ports), *ssh_args, destination]
    forwards = "".join(f"\n    LocalForward {p} localhost:{p}" for p in ports)
    click.echo(
        f"# once per connection (the private folder; a stale socket would make -R fail):\n"
        f"{shlex.join(prepare)}\n"
        f"# the forward (remote HOME assumed {home}; --remote-home says otherwise):\n"
        f"{shlex.join(line)}\n\n"
        f"# or in ~/.ssh/config (VS Code Remote-SSH reads it too):\n"
        f"Host {destination.split('@')[-1]}\n"
        f"    RemoteForward {remote_socket} {local}{forwards}\n"
        f"    ExitOnForwardFailure yes\n"
        f"    ServerAliveInterval 15\n"
        f"# and, on the remote, in /etc/ssh/sshd_config: StreamLocalBindUnlink yes\n"
        f"# ({local} is kept pointing at your browser's host by the host itself)"
    )


class _Stop(Exception):
    pass


def _raise_stop(signum: int, _frame: FrameType | None) -> None:
    raise _Stop(signum)


def run_ssh_once(
    ssh: str, destination: str, ssh_args: list[str], ports: list[int], host: str | None
) -> int:
    """One connection: prepare the remote folder, then hold the forward until ssh ends."""
    local = local_link(host)
    if local is None:
        click.echo("shotctl remote: no browser with the extension is running here yet", err=True)
        return 255
    prepared = subprocess.run(
        [ssh, *ssh_args, destination, prepare_script(ports)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    folder = prepared.stdout.strip().splitlines()[-1:] if prepared.returncode == 0 else []
    if not folder:
        click.echo(f"shotctl remote: ssh {destination} failed: {prepared.stderr.strip()}", err=True)
        return prepared.returncode or 255
    remote_socket = f"{folder[0]}/bus.sock"
    argv = [ssh, *SSH_OPTIONS, *forward_args(remote_socket, local, ports), *ssh_args, destination]
    process = subprocess.Popen(argv, stdin=subprocess.DEVNULL)
    click.echo(
        f"shotctl remote: forwarding this browser to {destination}:{remote_socket}", err=True
    )
    try:
        while process.poll() is None:
            time.sleep(LINK_CHECK)
            local_link(host)  # the browser restarted: a new host, the same forwarded path
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(5)
    return process.returncode


@remote.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option(
    "--print",
    "print_only",
    is_flag=True,
    help="Print the ssh line and an ssh config snippet; connect nothing.",
)
@click.option(
    "--forward-port",
    "ports",
    type=click.IntRange(1, 65535),
    multiple=True,
    metavar="PORT",
    help="Also let this browser reach the remote's localhost:PORT (ssh -L PORT:localhost:PORT).",
)
@click.option("--once", is_flag=True, help="Do not reconnect when the connection ends.")
@click.option(
    "--host", "host", metavar="ID", help="Which of your browsers (as `shotctl doctor` lists them)."
)
@click.option("--remote-home", metavar="DIR", help="With --print: the remote user's HOME.")
@click.option("--ssh", "ssh_command", default="ssh", show_default=True, hidden=True)
@click.argument("destination")
@click.argument("ssh_args", nargs=-1, type=click.UNPROCESSED)
def ssh(
    print_only: bool,
    ports: tuple[int, ...],
    once: bool,
    host: str | None,
    remote_home: str | None,
    ssh_command: str,
    destination: str,
    ssh_args: tuple[str, ...],
) -> None:
    """Forward this browser to DESTINATION ([user@]host) over SSH; keep it open, reconnecting.

    \b
    On DESTINATION, `shotctl mcp` and `shotctl capture` then find this browser with no flags
    (after any browser of DESTINATION's own). SSH_ARGS go to ssh as they are (-p 2222, -i KEY…).
    Stop with Ctrl-C: the forward ends with the connection (the remote's socket file stays,
    dead, until the next connection replaces it).
    """
    if print_only:
        print_recipe(
            destination, list(ssh_args), list(ports), remote_home or guess_remote_home(destination)
        )
        return
    signal.signal(signal.SIGTERM, _raise_stop)
    delay = 1.0
    try:
        while True:
            started = time.monotonic()
            code = run_ssh_once(ssh_command, destination, list(ssh_args), list(ports), host)
            if once:
                sys.exit(EXIT_OK if code == 0 else EXIT_FAILED)
            delay = 1.0 if time.monotonic() - started > 60 else min(delay * 2, RETRY_MAX)
            click.echo(
                f"shotctl remote: connection ended (ssh exit {code}); again in {delay:g} s",
                err=True,
            )
            time.sleep(delay)
    except (KeyboardInterrupt, _Stop):
        sys.exit(EXIT_OK)


# ---- containers ---------------------------------------------------------------------------------

CONTAINER_DIR = "/run/shotbridge-host"


def devcontainer_snippet(runtime: Path) -> dict[str, object]:
    return {
        "mounts": [f"source={runtime},target={CONTAINER_DIR},type=bind"],
        "containerEnv": {paths.BUS_ENV: CONTAINER_DIR},
        # The host lets in only its own uid: the container's user must have the laptop's.
        "updateRemoteUserUID": True,
    }


@remote.command()
def devcontainer() -> None:
    """Print the devcontainer.json entries and the docker run flags that let a container reach
    this browser (a mount of the bus folder; the container's user must have your uid)."""
    runtime = paths.runtime_dir(create=False)
    click.echo("// .devcontainer/devcontainer.json: merge these entries")
    click.echo(json.dumps(devcontainer_snippet(runtime), indent=2))
    docker = [
        "docker",
        "run",
        "--user",
        "$(id -u):$(id -g)",
        "-v",
        f"{runtime}:{CONTAINER_DIR}",
        "-e",
        f"{paths.BUS_ENV}={CONTAINER_DIR}",
    ]
    click.echo("\n# docker run: add these flags")
    click.echo(" ".join(docker) + " IMAGE …")


# ---- the remote side ---------------------------------------------------------------------------


@remote.command("doctor")
@click.option("--json", "as_json", is_flag=True, help="Print the checks as JSON.")
def remote_doctor(as_json: bool) -> None:
    """On the remote machine or in the container: check the forwarded bus; say how to mend it."""
    from shotbridge.install.doctor import check_forward, healthy, render

    checks = check_forward()
    if as_json:
        click.echo(
            json.dumps(
                {"ok": healthy(checks), "checks": [c.model_dump(mode="json") for c in checks]},
                indent=2,
            )
        )
    else:
        click.echo(render(checks))
    sys.exit(EXIT_OK if healthy(checks) else EXIT_FAILED)


@remote.command("serve-page", hidden=True)
@click.argument("page", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def serve_page(page: Path) -> None:
    """Serve PAGE with the local file server until stdin closes (the host runs this)."""
    from shotbridge.client.localserve import LocalServer

    with LocalServer(page) as url:
        click.echo(url)
        sys.stdout.flush()
        sys.stdin.read()
