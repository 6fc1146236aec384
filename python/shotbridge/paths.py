"""Where shotbridge keeps its sockets, host records and logs, and how clients find a host.

Runtime dir (sockets + ``host-<pid>.json`` records, always mode 0700):
``$SHOTBRIDGE_RUNTIME_DIR``, else ``$XDG_RUNTIME_DIR/shotbridge``, else ``/tmp/shotbridge-<uid>``.
State dir (logs): ``$SHOTBRIDGE_STATE_DIR``, else ``$XDG_STATE_HOME/shotbridge``, else
``~/.local/state/shotbridge``.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import tempfile
from pathlib import Path

from pydantic import BaseModel, ValidationError

from shotbridge.errors import BusError

# sockaddr_un.sun_path is 108 bytes on Linux (104 on macOS), NUL included.
MAX_SOCKET_PATH = 103


class HostInfo(BaseModel):
    """What a running host publishes about itself in ``host-<pid>.json``."""

    pid: int
    profile_id: str | None = None
    extension_version: str | None = None
    started: float
    last_active: float
    connected: bool = False
    socket: str  # absolute path of its bus socket


# ---- directories ----------------------------------------------------------------------------


def runtime_dir(create: bool = True) -> Path:
    """The private runtime directory; created (0700) and checked when ``create``."""
    if explicit := os.environ.get("SHOTBRIDGE_RUNTIME_DIR"):
        path = Path(explicit)
    elif xdg := os.environ.get("XDG_RUNTIME_DIR"):
        path = Path(xdg) / "shotbridge"
    else:
        # /tmp is shared: someone else may have made this name first, hence the checks below.
        path = Path(tempfile.gettempdir()) / f"shotbridge-{os.getuid()}"
    if create:
        ensure_private_dir(path)
    return path


def state_dir(create: bool = True) -> Path:
    if explicit := os.environ.get("SHOTBRIDGE_STATE_DIR"):
        path = Path(explicit)
    elif xdg := os.environ.get("XDG_STATE_HOME"):
        path = Path(xdg) / "shotbridge"
    else:
        path = Path.home() / ".local" / "state" / "shotbridge"
    if create:
        path.mkdir(parents=True, exist_ok=True)
    return path


def ensure_private_dir(path: Path) -> Path:
    """Create ``path`` with mode 0700, or check an existing one is ours; fix its mode if so.

    Refuses (BusError) a symlink, a non-directory, or a directory someone else owns: another
    user could otherwise read our sockets or plant fake ones.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        path.mkdir(mode=0o700)
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode):
        raise BusError(f"runtime dir {path} is not a directory (symlink or file); remove it")
    if st.st_uid != os.getuid():
        raise BusError(
            f"runtime dir {path} belongs to uid {st.st_uid}, not to you (uid {os.getuid()}); "
            "refusing to use it: remove it or set SHOTBRIDGE_RUNTIME_DIR"
        )
    if stat.S_IMODE(st.st_mode) != 0o700:
        os.chmod(path, 0o700)
    return path


# ---- per-host files -------------------------------------------------------------------------


def socket_path(pid: int, directory: Path | None = None) -> Path:
    directory = directory if directory is not None else runtime_dir()
    path = directory / f"host-{pid}.sock"
    if len(os.fsencode(path)) > MAX_SOCKET_PATH:
        raise BusError(
            f"socket path {path} is too long for a Unix socket; set SHOTBRIDGE_RUNTIME_DIR "
            "to a shorter directory"
        )
    return path


def info_path(pid: int, directory: Path | None = None) -> Path:
    directory = directory if directory is not None else runtime_dir()
    return directory / f"host-{pid}.json"


def write_host_info(info: HostInfo, directory: Path | None = None) -> Path:
    """Write the record atomically (temp file + rename) so readers never see half of it."""
    path = info_path(info.pid, directory)
    tmp = path.with_suffix(".json.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(info.model_dump_json())
    os.replace(tmp, path)
    return path


def remove_host_files(pid: int, directory: Path | None = None) -> None:
    for path in (socket_path(pid, directory), info_path(pid, directory)):
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, belongs to someone else
        return True
    return True


def list_hosts(directory: Path | None = None) -> list[HostInfo]:
    """Live hosts, most preferable first (connected, then most recently active).

    Records whose process is gone or whose socket vanished are dropped, and their files removed
    when the process is gone (a host killed with SIGKILL leaves them behind).
    """
    directory = directory if directory is not None else runtime_dir()
    hosts: list[HostInfo] = []
    for path in directory.glob("host-*.json"):
        try:
            info = HostInfo.model_validate(json.loads(path.read_text()))
        except (OSError, ValueError, ValidationError):
            continue  # half-written or foreign file: not a host we can use
        if not pid_alive(info.pid):
            remove_host_files(info.pid, directory)
            continue
        if not stat.S_ISSOCK(_mode(Path(info.socket))):
            continue
        hosts.append(info)
    hosts.sort(key=lambda h: (h.connected, h.last_active), reverse=True)
    return hosts


def select_host(name: str | None = None, directory: Path | None = None) -> HostInfo | None:
    """The host named by ``name`` (profile_id or pid), else ``$SHOTBRIDGE_HOST``, else the best."""
    name = name or os.environ.get("SHOTBRIDGE_HOST") or None
    hosts = list_hosts(directory)
    if name is None:
        return hosts[0] if hosts else None
    for host in hosts:
        if name in (host.profile_id, str(host.pid)):
            return host
    return None


def _mode(path: Path) -> int:
    try:
        return os.stat(path).st_mode
    except OSError:
        return 0
