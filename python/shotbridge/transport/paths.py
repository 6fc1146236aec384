"""Where shotbridge keeps its sockets, host records and logs, and how clients find a host.

Runtime dir (sockets + ``host-<pid>.json`` records, always mode 0700):
``$SHOTBRIDGE_RUNTIME_DIR``, else ``$XDG_RUNTIME_DIR/shotbridge``, else ``/tmp/shotbridge-<uid>``.

Discovery does not depend on the caller's environment. A host started by a desktop browser
inherits the session's variables; an MCP server started by an IDE may keep only HOME, LOGNAME,
PATH, SHELL, TERM and USER (the MCP SDK's default). So clients search every place a host of this
uid may have registered (:func:`search_dirs`), and a host that is not private also leaves a copy
of its record in a registry that depends only on HOME (:func:`registry_dir`). An explicit
``$SHOTBRIDGE_RUNTIME_DIR`` means "private": such a host registers nowhere else, and a client
given it searches only there.
A browser on another machine (SSH) or outside a container reaches clients here through one
socket: ``$SHOTBRIDGE_BUS`` (a socket, or a folder of them: a mounted runtime dir) when set, and
then nothing else; otherwise, after the hosts of this machine, :func:`forward_socket`, the place
``shotctl remote ssh`` forwards the laptop's bus to (it depends only on HOME).
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

from shotbridge.wire.errors import BusError

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
    # How a client reached it when not through a record of this machine: the forwarded or
    # mounted socket it came through (None: a host of this machine).
    via: str | None = None


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


def registry_dir() -> Path:
    """Copies of the records of non-private hosts: found from HOME alone (no XDG variable)."""
    return Path.home() / ".local" / "state" / "shotbridge" / "hosts"


def private_runtime() -> bool:
    """True when ``$SHOTBRIDGE_RUNTIME_DIR`` pins hosts and clients to one directory."""
    return bool(os.environ.get("SHOTBRIDGE_RUNTIME_DIR"))


def search_dirs() -> list[Path]:
    """Every directory a client looks in for hosts of this uid, the registry first.

    Only directories that exist, are directories (not symlinks) and belong to us count: a
    directory another user made could hold planted sockets.
    """
    if explicit := os.environ.get("SHOTBRIDGE_RUNTIME_DIR"):
        candidates = [Path(explicit)]
    else:
        uid = os.getuid()
        candidates = [registry_dir()]
        if xdg := os.environ.get("XDG_RUNTIME_DIR"):
            candidates.append(Path(xdg) / "shotbridge")
        candidates += [
            Path(f"/run/user/{uid}/shotbridge"),
            Path(tempfile.gettempdir()) / f"shotbridge-{uid}",
            Path(f"/tmp/shotbridge-{uid}"),
        ]
    found: list[Path] = []
    for path in candidates:
        if path not in found and is_private_dir(path):
            found.append(path)
    return found


def is_private_dir(path: Path) -> bool:
    """An existing real directory owned by us (mode is not checked: hosts tighten it)."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid()


# ---- another machine's bus: SSH forwards and mounts -------------------------------------------

BUS_ENV = "SHOTBRIDGE_BUS"


def forward_dir() -> Path:
    """Where ``shotctl remote ssh`` puts the laptop's forwarded bus on the remote machine (0700)."""
    return Path.home() / ".local" / "state" / "shotbridge" / "forward"


def forward_socket() -> Path:
    return forward_dir() / "bus.sock"


def forwarded_ports() -> set[int]:
    """Ports of this machine's localhost the laptop's browser reaches (``--forward-port``)."""
    try:
        text = (forward_dir() / "ports").read_text()
    except OSError:
        return set()
    return {int(word) for word in text.split() if word.isdigit()}


# In a runtime dir: a symlink to the socket of a live host there, for SSH forwards (one fixed
# path to forward while hosts come and go with the browser) and container mounts.
BUS_LINK = "bus.sock"


def point_bus_link(socket: Path, directory: Path) -> None:
    """Make ``directory/bus.sock`` lead to ``socket`` (relative when beside it), atomically."""
    link = directory / BUS_LINK
    target = socket.name if socket.parent == directory else str(socket)
    with contextlib.suppress(OSError):
        if os.readlink(link) == target:
            return
    tmp = directory / f".{BUS_LINK}.{os.getpid()}"
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    os.symlink(target, tmp)
    os.replace(tmp, link)


def _link_dead(directory: Path) -> bool:
    return not stat.S_ISSOCK(_mode(directory / BUS_LINK))


def explicit_bus() -> Path | None:
    """``$SHOTBRIDGE_BUS``: the one socket (or folder of sockets) clients must use."""
    value = os.environ.get(BUS_ENV, "").strip()
    return Path(value).expanduser() if value else None


def bus_sockets(target: Path) -> list[Path]:
    """The sockets ``target`` names: itself, or a folder's ``*.sock``, newest first.

    A mounted runtime dir holds ``host-<pid>.sock`` sockets whose records name this machine's
    pids and paths, meaningless in a container: sockets are all a mount can be trusted to show.
    """
    if stat.S_ISSOCK(_mode(target)):
        return [target]
    try:
        found = [p for p in target.glob("*.sock") if stat.S_ISSOCK(_mode(p))]
    except OSError:
        return []
    return sorted(found, key=lambda p: _mtime(p), reverse=True)


def forward_candidates() -> list[Path]:
    """Sockets leading to another machine's browser: ``$SHOTBRIDGE_BUS``'s, else the forward's
    (only in a private folder of ours: the socket sshd made for us, not one planted there)."""
    if (explicit := explicit_bus()) is not None:
        return bus_sockets(explicit)
    sock = forward_socket()
    if stat.S_ISSOCK(_mode(sock)) and is_private_dir(sock.parent):
        return [sock]
    return []


def _mtime(path: Path) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


def state_dir(create: bool = True) -> Path:
    """The log folder; created 0700, and an older one of ours (made 0755) tightened to 0700.

    host.log holds URLs, titles and errors of the user's pages: no one else may read it.
    """
    if explicit := os.environ.get("SHOTBRIDGE_STATE_DIR"):
        path = Path(explicit)
    elif xdg := os.environ.get("XDG_STATE_HOME"):
        path = Path(xdg) / "shotbridge"
    else:
        path = Path.home() / ".local" / "state" / "shotbridge"
    if create:
        path.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError):
            path.mkdir(mode=0o700)
        st = os.stat(path)
        if st.st_uid == os.getuid() and stat.S_IMODE(st.st_mode) & 0o077:
            os.chmod(path, stat.S_IMODE(st.st_mode) & 0o700)
    return path


def make_private_dir(path: Path, *, follow_symlinks: bool = False) -> None:
    """Create ``path`` with mode 0700, or check an existing one is ours and tighten it to 0700.

    Raises NotADirectoryError (a file, or a symlink unless ``follow_symlinks``) or PermissionError
    (a folder another user owns: they could read our files or plant their own).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        path.mkdir(mode=0o700)
    st = os.stat(path, follow_symlinks=follow_symlinks)
    if not stat.S_ISDIR(st.st_mode):
        raise NotADirectoryError(f"{path} is not a directory (symlink or file)")
    if st.st_uid != os.getuid():
        raise PermissionError(f"{path} belongs to uid {st.st_uid}, not to you (uid {os.getuid()})")
    if stat.S_IMODE(st.st_mode) != 0o700:
        os.chmod(path, 0o700)


def ensure_private_dir(path: Path) -> Path:
    """The runtime dir, made private (see :func:`make_private_dir`); BusError if it cannot be."""
    try:
        make_private_dir(path)
    except NotADirectoryError as exc:
        raise BusError(f"runtime dir {exc}; remove it") from exc
    except PermissionError as exc:
        raise BusError(
            f"runtime dir {exc}; refusing to use it: remove it or set SHOTBRIDGE_RUNTIME_DIR"
        ) from exc
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
    """Write the record atomically (temp file + rename) so readers never see half of it.

    A host that is not private also copies it into :func:`registry_dir`, so that a client whose
    environment lacks the host's XDG_RUNTIME_DIR (or TMPDIR) still finds it.
    """
    path = info_path(info.pid, directory)
    _write_record(path, info)
    if _link_dead(path.parent):  # no live host behind bus.sock: this one takes it
        with contextlib.suppress(OSError):
            point_bus_link(Path(info.socket), path.parent)
    if _registers(path.parent):
        with contextlib.suppress(OSError, BusError):  # the registry is a convenience only
            registry = ensure_private_dir(registry_dir())
            if registry != path.parent:
                _write_record(registry / path.name, info)
    return path


def _write_record(path: Path, info: HostInfo) -> None:
    tmp = path.with_suffix(".json.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(info.model_dump_json())
    os.replace(tmp, path)


def remove_host_files(pid: int, directory: Path | None = None) -> None:
    for path in (socket_path(pid, directory), info_path(pid, directory)):
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
    folder = directory if directory is not None else runtime_dir(create=False)
    with contextlib.suppress(OSError):
        if os.readlink(folder / BUS_LINK) == socket_path(pid, folder).name:
            (folder / BUS_LINK).unlink()  # another live host re-points it when it next writes
    if _registers(directory if directory is not None else runtime_dir(create=False)):
        with contextlib.suppress(OSError):
            (registry_dir() / f"host-{pid}.json").unlink()


def _registers(directory: Path) -> bool:
    """Only a host in the default runtime dir is copied to the registry (not a private one, nor
    one a test put in a folder of its own)."""
    return not private_runtime() and directory == runtime_dir(create=False)


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

    ``directory=None`` searches every place of :func:`search_dirs` (one entry per pid). Records
    whose process is gone or whose socket vanished are dropped, and their files removed when the
    process is gone (a host killed with SIGKILL leaves them behind).
    """
    directories = [directory] if directory is not None else search_dirs()
    hosts: dict[int, HostInfo] = {}
    for folder in directories:
        for info in _hosts_in(folder):
            hosts.setdefault(info.pid, info)
    found = list(hosts.values())
    found.sort(key=lambda h: (h.connected, h.last_active), reverse=True)
    return found


def _hosts_in(directory: Path) -> list[HostInfo]:
    hosts: list[HostInfo] = []
    for path in directory.glob("host-*.json"):
        try:
            info = HostInfo.model_validate(json.loads(path.read_text()))
        except (OSError, ValueError, ValidationError):
            continue  # half-written or foreign file: not a host we can use
        if not pid_alive(info.pid):
            with contextlib.suppress(OSError):
                path.unlink()
            with contextlib.suppress(OSError):
                (directory / f"host-{info.pid}.sock").unlink()
            continue
        sock = Path(info.socket)
        if not stat.S_ISSOCK(_mode(sock)) or not is_private_dir(sock.parent):
            continue  # a record may point anywhere: only a socket in a directory of ours counts
        hosts.append(info)
    return hosts


def select_host(name: str | None = None, directory: Path | None = None) -> HostInfo | None:
    """The host named by ``name`` (profile_id or pid), else ``$SHOTBRIDGE_HOST``, else the best."""
    name = name or os.environ.get("SHOTBRIDGE_HOST") or None
    hosts = list_hosts(directory)
    if name is None:
        return hosts[0] if hosts else None
    for host in hosts:
        if host_matches(host, name):
            return host
    return None


def host_matches(host: HostInfo, name: str) -> bool:
    """``name`` is the host's pid, its profile id, or a prefix of 8+ characters of the id."""
    if name == str(host.pid):
        return True
    profile = host.profile_id or ""
    return bool(profile) and (name == profile or (len(name) >= 8 and profile.startswith(name)))


def _mode(path: Path) -> int:
    try:
        return os.stat(path).st_mode
    except OSError:
        return 0
