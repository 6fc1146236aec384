"""``shotctl doctor``: check every link from the browser to the bus, and say how to mend each.

Required links (exit 1 when one fails): the Rust core, the extension folder and its ID, at least
one valid host manifest, its launcher, the runtime dir, a host manifest reachable from every
browser profile that has our extension, and a connected extension of this package's version. The
rest (a host running, its extension connected, a Chromium for headless mode) are warnings:
shotbridge can work without each of them.

Hosts are found the way every client finds them (:func:`paths.list_hosts` over
:func:`paths.search_dirs`), so what doctor sees from a terminal is what an IDE's MCP server sees.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import os
import shlex
import socket
import stat
import subprocess
import sys
from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel

from shotbridge import __version__
from shotbridge.install.profiles import Profile, find_profiles, profile_roots
from shotbridge.install.register import (
    BROWSERS,
    MANIFEST_NAME,
    Layout,
    extension_dir,
    profile_manifest,
    registered_profiles,
)
from shotbridge.transport import paths
from shotbridge.wire.errors import ShotbridgeError
from shotbridge.wire.messages import (
    EXTENSION_ID,
    EXTENSION_ORIGIN,
    HOST_NAME,
    ClientInfo,
    HostStatus,
)


class Status(StrEnum):
    OK = "ok"
    WARN = "warn"
    FAIL = "fail"


class Check(BaseModel):
    name: str
    status: Status
    detail: str
    fix: str | None = None
    required: bool = True


def ok(name: str, detail: str, required: bool = True) -> Check:
    return Check(name=name, status=Status.OK, detail=detail, required=required)


def warn(name: str, detail: str, fix: str) -> Check:
    return Check(name=name, status=Status.WARN, detail=detail, fix=fix, required=False)


def fail(name: str, detail: str, fix: str, required: bool = True) -> Check:
    return Check(name=name, status=Status.FAIL, detail=detail, fix=fix, required=required)


def healthy(checks: list[Check]) -> bool:
    return not any(c.required and c.status is Status.FAIL for c in checks)


# ---- the package --------------------------------------------------------------------------------


def check_python() -> Check:
    return ok("python package", f"shotbridge {__version__} on Python {sys.version.split()[0]}")


def check_core() -> Check:
    try:
        import shotbridge._core  # noqa: F401 - the import is the check
    except ImportError as exc:
        return fail(
            "rust core",
            f"shotbridge._core does not import: {exc}",
            "build it: `pip install -e '.[dev]'` (or `maturin develop`) in the checkout",
        )
    return ok("rust core", "shotbridge._core imports")


# ---- the extension ------------------------------------------------------------------------------


def extension_id_from_key(key: str) -> str:
    """Chromium's ID for a manifest ``key``: SHA-256 of the DER key, 32 hex digits mapped to a-p."""
    digest = hashlib.sha256(base64.b64decode(key)).hexdigest()[:32]
    return digest.translate(str.maketrans("0123456789abcdef", "abcdefghijklmnop"))


def check_extension(expected_id: str = EXTENSION_ID) -> Check:
    name = "extension folder"
    try:
        folder = extension_dir()
    except ShotbridgeError as exc:
        return fail(name, str(exc), "use a shotbridge checkout or set SHOTBRIDGE_EXTENSION_DIR")
    try:
        manifest = json.loads((folder / "manifest.json").read_text())
        key = manifest["key"]
        ext_id = extension_id_from_key(key)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return fail(
            name,
            f"{folder}/manifest.json has no usable key ({type(exc).__name__}: {exc})",
            "restore the extension's manifest.json from the repository (its key fixes the ID)",
        )
    if ext_id != expected_id:
        return fail(
            name,
            f"{folder} has ID {ext_id}, the host only accepts {expected_id}",
            "restore the extension's manifest.json `key` from the repository",
        )
    return ok(name, f"{folder} (ID {ext_id}; load it unpacked in chrome://extensions)")


# ---- manifests and launcher ---------------------------------------------------------------------


def validate_manifest(path: Path) -> tuple[list[str], Path | None]:
    """Problems with one host manifest, and the launcher it names."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        return [f"unreadable: {exc}"], None
    if not isinstance(data, dict):
        return ["not a JSON object"], None
    problems = []
    if data.get("name") != HOST_NAME:
        problems.append(f"name is {data.get('name')!r}, not {HOST_NAME!r}")
    if data.get("type") != "stdio":
        problems.append("type is not 'stdio'")
    origins = data.get("allowed_origins")
    if not isinstance(origins, list) or EXTENSION_ORIGIN not in origins:
        problems.append(f"allowed_origins lacks {EXTENSION_ORIGIN}")
    launcher = Path(str(data.get("path", "")))
    if not launcher.is_absolute():
        problems.append(f"path {str(launcher)!r} is not absolute")
        return problems, None
    if not launcher.is_file():
        problems.append(f"path {launcher} does not exist")
    elif not os.access(launcher, os.X_OK):
        problems.append(f"path {launcher} is not executable")
    return problems, launcher


def check_manifests(
    layouts: list[Layout], user_data_dirs: list[Path] | None = None
) -> tuple[list[Check], set[Path]]:
    checks: list[Check] = []
    launchers: set[Path] = set()
    valid = 0
    seen: set[Path] = set()
    for root in user_data_dirs or []:
        path = profile_manifest(root)
        seen.add(path)
        name = f"host manifest (--user-data-dir {root})"
        if not path.exists():
            continue  # check_profiles says whether a profile there needs it
        problems, launcher = validate_manifest(path)
        if problems:
            fix = f"run `shotctl install --user-data-dir {root}` again"
            checks.append(fail(name, f"{path}: {'; '.join(problems)}", fix))
            continue
        valid += 1
        if launcher is not None:
            launchers.add(launcher)
        checks.append(ok(name, str(path)))
    for layout in layouts:
        scope = "system" if layout.system else "user"
        for browser in BROWSERS:
            path = layout.manifest_dir(browser) / MANIFEST_NAME
            if path in seen:
                continue  # Brave shares Chrome's system folder
            seen.add(path)
            name = f"host manifest ({browser}, {scope})"
            if not path.exists():
                if not layout.system and layout.browser_root(browser).is_dir():
                    checks.append(
                        warn(
                            name,
                            f"{browser} is set up for your user but shotbridge is not registered",
                            f"run `shotctl install --browser {browser}` if you use {browser}",
                        )
                    )
                continue
            problems, launcher = validate_manifest(path)
            if launcher is not None and not problems:
                launchers.add(launcher)
            if problems:
                checks.append(
                    fail(name, f"{path}: {'; '.join(problems)}", "run `shotctl install` again")
                )
            else:
                valid += 1
                checks.append(ok(name, str(path)))
    if not valid:
        checks.append(
            fail(
                "host manifest",
                "no valid native-messaging manifest for dev.shotbridge.host in any browser folder",
                "run `shotctl install` (or `shotctl install --browser chromium`)",
            )
        )
    return checks, launchers


def parse_launcher(path: Path) -> tuple[list[str], dict[str, str]]:
    """The ``exec`` command and the exported variables of a launcher we wrote."""
    command: list[str] = []
    env: dict[str, str] = {}
    for line in path.read_text().splitlines():
        words = shlex.split(line, comments=True)
        if words[:1] == ["export"] and len(words) == 2 and "=" in words[1]:
            key, _, value = words[1].partition("=")
            env[key] = value
        elif words[:1] == ["exec"]:
            command = words[1:]
    return command, env


def check_launcher(path: Path) -> Check:
    name = f"launcher {path}"
    try:
        command, env = parse_launcher(path)
    except (OSError, ValueError) as exc:
        return fail(name, f"unreadable: {exc}", "run `shotctl install` again")
    if not command:
        return ok(name, "executable (not written by shotbridge: not inspected further)")
    interpreter = Path(command[0])
    if not (interpreter.is_file() and os.access(interpreter, os.X_OK)):
        return fail(
            name,
            f"its interpreter {interpreter} is gone (virtualenv removed or Python upgraded?)",
            "run `shotctl install` again from the Python environment that has shotbridge",
        )
    try:
        probe = subprocess.run(
            [str(interpreter), "-c", "import shotbridge.host.main"],
            env={**os.environ, **env},
            capture_output=True,
            timeout=20,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return fail(name, f"{interpreter} did not run: {exc}", "run `shotctl install` again")
    if probe.returncode != 0:
        last = probe.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["?"]
        return fail(
            name,
            f"{interpreter} cannot import shotbridge: {last[0]}",
            "install shotbridge into that environment, or re-run `shotctl install` from the "
            "environment that has it",
        )
    return ok(name, f"runs {interpreter} -m shotbridge host")


# ---- runtime: dir, hosts, extension -------------------------------------------------------------


def check_runtime_dir(directory: Path) -> Check:
    name = "host registry" if directory == paths.registry_dir() else "runtime dir"
    try:
        st = os.lstat(directory)
    except FileNotFoundError:
        return ok(name, f"{directory} (not created yet: the first host creates it)")
    if not stat.S_ISDIR(st.st_mode):
        return fail(name, f"{directory} is not a directory", f"remove {directory}")
    if st.st_uid != os.getuid():
        return fail(
            name,
            f"{directory} belongs to uid {st.st_uid}, not you: hosts will refuse to start",
            f"remove {directory} or set SHOTBRIDGE_RUNTIME_DIR to a folder of yours",
        )
    mode = stat.S_IMODE(st.st_mode)
    if mode != 0o700:
        return warn(
            name,
            f"{directory} has mode {mode:o} (the next host tightens it to 700)",
            f"chmod 700 {directory}",
        )
    return ok(name, f"{directory} (mode 700, yours)")


async def _host_status(info: paths.HostInfo) -> HostStatus:
    from shotbridge.client.bus_client import BusClient

    async with await BusClient.connect_path(Path(info.socket), info=info, timeout=2.0) as client:
        return await client.ask("status", None, HostStatus, timeout=2.0)


def manifest_reachable(root: Path, browser: str | None, layouts: list[Layout]) -> Path | None:
    """The valid host manifest a browser using profile folder ``root`` would read, if any.

    A browser's own folder reads its user manifest folder; a ``--user-data-dir`` profile reads
    ``DIR/NativeMessagingHosts``. Both also read the system folders.
    """
    candidates = [profile_manifest(root)]
    for layout in layouts:
        if layout.system:
            browsers = [browser] if browser else list(BROWSERS)
            candidates += [layout.manifest_dir(b) / MANIFEST_NAME for b in browsers]
        elif browser:
            candidates.append(layout.manifest_dir(browser) / MANIFEST_NAME)
    for path in candidates:
        if path.exists() and not validate_manifest(path)[0]:
            return path
    return None


def check_profiles(profiles: list[Profile], layouts: list[Layout]) -> list[Check]:
    """Every profile that has our extension, and whether its browser can start our host."""
    checks: list[Check] = []
    for profile in profiles:
        name = f"profile {profile.folder}"
        how = profile.how_loaded()
        manifest = manifest_reachable(profile.root, profile.browser, layouts)
        if manifest is not None:
            checks.append(ok(name, f"has the extension ({how}); host manifest {manifest}"))
            continue
        fix = (
            f"shotctl install --browser {profile.browser}"
            if profile.browser and profile.root == Layout().browser_root(profile.browser)
            else f"shotctl install --user-data-dir {profile.root}"
        )
        checks.append(
            fail(
                name,
                f"has the extension ({how}) but its browser finds no host manifest: the "
                "extension will never connect (its console says “Specified native messaging "
                "host not found”)",
                f"run `{fix}`, then restart that browser or reload the extension",
            )
        )
    if not profiles:
        checks.append(
            warn(
                "profiles",
                "no browser profile with the shotbridge extension found",
                "load the extension (chrome://extensions → Load unpacked → the folder "
                "`shotctl extension-path` prints); pass --user-data-dir DIR for a custom profile",
            )
        )
    return checks


def version_fix() -> str:
    return (
        "reload the extension: chrome://extensions → shotbridge → reload (⟳), or restart "
        "Chromium with --load-extension=$(shotctl extension-path); make sure it is loaded from "
        "the folder `shotctl extension-path` prints"
    )


def check_hosts(directory: Path | None = None) -> list[Check]:
    """Each live host (all search locations when ``directory`` is None) and its extension."""
    hosts = paths.list_hosts(directory) if directory is None or directory.is_dir() else []
    if not hosts:
        return [
            warn(
                "host running",
                "no shotbridge host is running (the browser starts one for the extension)",
                "open the browser with the extension loaded; check chrome://extensions for errors "
                "(headless mode does not need this)",
            )
        ]
    checks: list[Check] = []
    for info in hosts:
        name = f"host {info.pid}"
        try:
            status = asyncio.run(_host_status(info))
        except Exception as exc:
            checks.append(
                warn(name, f"does not answer on {info.socket}: {exc}", "reload the extension")
            )
            continue
        checks.append(ok(name, f"answers on {info.socket}", required=False))
        checks += [client_check(info.pid, c) for c in status.clients]
        version = status.extension_version
        if status.ready and version != __version__:
            checks.append(
                fail(
                    f"extension via host {info.pid}",
                    f"connected from profile {status.profile_id}, but the extension is "
                    f"version {version} and this shotbridge is {__version__}",
                    version_fix(),
                )
            )
        elif status.ready:
            checks.append(
                ok(
                    f"extension via host {info.pid}",
                    f"connected: extension {version}, profile "
                    f"{status.profile_id} (`--host {status.profile_id}` or "
                    f"`--host {info.pid}` picks it), tracked tab {status.tracked_tab}",
                    required=False,
                )
            )
        else:
            checks.append(
                warn(
                    f"extension via host {info.pid}",
                    "the host runs but the extension has not said hello",
                    "reload the extension in chrome://extensions",
                )
            )
    return checks


def client_check(pid: int, client: ClientInfo) -> Check:
    """One client connected to host ``pid``, and whether it came over a forward."""
    where = f"on {client.machine}" if client.machine else "here"
    how = " over a forward (SSH or a mounted socket)" if client.forwarded else ""
    return ok(
        f"client of host {pid}",
        f"{client.name} {client.version} {where}{how}",
        required=False,
    )


# ---- the remote side of a forward ---------------------------------------------------------------


def forward_fix() -> str:
    here = socket.gethostname()
    return (
        f"on the laptop with the browser, run `shotctl remote ssh {here}` (it keeps the forward "
        "open); in a container, mount the laptop's bus folder and set SHOTBRIDGE_BUS "
        "(`shotctl remote devcontainer` on the laptop prints how)"
    )


def check_forward() -> list[Check]:
    """This machine reaches a browser on another one: the socket is there, a host answers it,
    its extension is connected, and both sides run the same version."""
    from shotbridge.client.bus_client import VersionMismatchError

    explicit = paths.explicit_bus()
    where = explicit if explicit is not None else paths.forward_socket()
    if explicit is None:
        folder = check_forward_dir(paths.forward_dir())
        if folder.status is not Status.OK:
            return [folder]
    sockets = paths.forward_candidates()
    if not sockets:
        return [fail("forwarded bus", f"no socket at {where}", forward_fix())]
    try:
        status = asyncio.run(_forward_status(sockets[0]))
    except VersionMismatchError as exc:
        return [fail("forwarded bus", str(exc), "install the same shotbridge version on both")]
    except (ShotbridgeError, OSError) as exc:
        why = exc.__cause__ or exc
        return [
            fail(
                "forwarded bus",
                f"{sockets[0]} is there but no host answers it ({why}): the SSH session "
                "ended, or the laptop's browser closed",
                "on the laptop: open the browser with the extension, and restart "
                f"`shotctl remote ssh {socket.gethostname()}`",
            )
        ]
    found = ok("forwarded bus", f"{sockets[0]}: host {status.pid}, shotbridge {status.version}")
    if not status.ready:
        return [
            found,
            fail(
                "browser over the forward",
                "the laptop's host answers but its extension is not connected",
                "open the browser on the laptop (shotctl doctor there says what is missing)",
            ),
        ]
    return [
        found,
        ok("browser over the forward", f"connected: profile {status.profile_id}"),
    ]


def check_forward_dir(folder: Path) -> Check:
    try:
        st = os.lstat(folder)
    except FileNotFoundError:
        return fail(
            "forward folder", f"{folder} does not exist: nothing was forwarded here", forward_fix()
        )
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
        return fail(
            "forward folder",
            f"{folder} is not a folder of yours",
            f"remove {folder}, then {forward_fix()}",
        )
    if stat.S_IMODE(st.st_mode) != 0o700:
        return fail(
            "forward folder",
            f"{folder} has mode {stat.S_IMODE(st.st_mode):o}, not 700",
            f"chmod 700 {folder}",
        )
    return ok("forward folder", f"{folder} (mode 700, yours)")


async def _forward_status(sock: Path) -> HostStatus:
    from shotbridge.client.bus_client import BusClient

    info = paths.HostInfo(pid=0, started=0, last_active=0, socket=str(sock), via=str(sock))
    async with await BusClient.connect_path(sock, info=info, timeout=3.0) as client:
        return await client.hello("shotctl doctor", timeout=3.0)


def forward_present() -> bool:
    """Whether this machine is set up to reach a browser elsewhere (then doctor checks it)."""
    return paths.explicit_bus() is not None or paths.forward_dir().exists()


def check_chrome() -> Check:
    from shotbridge.client.browser import find_chrome
    from shotbridge.wire.errors import BrowserError

    try:
        return ok("chromium for headless mode", str(find_chrome()), required=False)
    except BrowserError as exc:
        return warn("chromium for headless mode", str(exc), "only needed for --browser headless")


# ---- all together -------------------------------------------------------------------------------


def run_checks(
    *,
    layouts: list[Layout] | None = None,
    runtime_dir: Path | None = None,
    expected_id: str = EXTENSION_ID,
    user_data_dirs: list[Path] | None = None,
    scan_processes: bool = True,
) -> list[Check]:
    """Every check. ``runtime_dir=None`` searches for hosts exactly as a client does."""
    layouts = layouts if layouts is not None else [Layout(), Layout(system=True)]
    user_layout = next((lay for lay in layouts if not lay.system), Layout())
    given = [Path(d).expanduser().absolute() for d in user_data_dirs or []]
    custom = list(dict.fromkeys([*given, *registered_profiles(user_layout)]))
    roots = profile_roots(user_layout, custom, scan_processes=scan_processes)
    checks = [check_python(), check_core(), check_extension(expected_id)]
    manifest_checks, launchers = check_manifests(layouts, [r for r, b in roots if b is None])
    checks += manifest_checks
    checks += [check_launcher(path) for path in sorted(launchers)]
    checks += check_profiles(find_profiles(roots, expected_id), layouts)
    if runtime_dir is not None:
        dirs = [runtime_dir]
    else:
        dirs = paths.search_dirs() or [paths.runtime_dir(create=False)]
    checks += [check_runtime_dir(d) for d in dirs]
    checks += check_hosts(runtime_dir)
    if runtime_dir is None and forward_present():
        checks += check_forward()
    checks.append(check_chrome())
    return checks


def render(checks: list[Check]) -> str:
    marks = {Status.OK: " ok ", Status.WARN: "warn", Status.FAIL: "FAIL"}
    lines = []
    for check in checks:
        lines.append(f"[{marks[check.status]}] {check.name}: {check.detail}")
        if check.fix and check.status is not Status.OK:
            lines.append(f"       fix: {check.fix}")
    verdict = "all required checks pass" if healthy(checks) else "some required checks fail"
    lines.append(verdict)
    return "\n".join(lines)
