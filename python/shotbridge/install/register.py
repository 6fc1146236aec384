"""Register the native-messaging host with Chromium-family browsers, and find the extension.

Chromium starts a host through a manifest ``<host name>.json`` in a per-browser folder; the
manifest's ``path`` is a small launcher script (Chromium passes no arguments of ours, so the
launcher carries the interpreter and any environment). Where the folders are:

* Linux user: ``$XDG_CONFIG_HOME`` (else ``~/.config``) ``/<browser>/NativeMessagingHosts``.
* Linux system: ``/etc/opt/chrome/…``, ``/etc/chromium/…``, ``/etc/opt/edge/…``; Brave reads
  Chrome's system folder (traced on Brave 1.96), so it shares ``/etc/opt/chrome``.
* macOS: ``~/Library/Application Support/<browser>/NativeMessagingHosts``; system folders below.
* Any ``--user-data-dir=DIR`` profile: ``DIR/NativeMessagingHosts`` (the headless launcher's).
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import metadata, resources
from pathlib import Path
from typing import Any

from shotbridge.wire.errors import ShotbridgeError
from shotbridge.wire.messages import EXTENSION_ORIGIN, HOST_NAME

BROWSERS = ("chrome", "chromium", "brave", "edge")
MANIFEST_NAME = f"{HOST_NAME}.json"
LAUNCHER_NAME = "shotbridge-host"

# Folders below the user's config root (Linux) or ~/Library/Application Support (macOS).
_LINUX_USER = {
    "chrome": "google-chrome",
    "chromium": "chromium",
    "brave": "BraveSoftware/Brave-Browser",
    "edge": "microsoft-edge",
}
_LINUX_SYSTEM = {
    "chrome": "etc/opt/chrome/native-messaging-hosts",
    "chromium": "etc/chromium/native-messaging-hosts",
    "brave": "etc/opt/chrome/native-messaging-hosts",
    "edge": "etc/opt/edge/native-messaging-hosts",
}
_MAC_USER = {
    "chrome": "Google/Chrome",
    "chromium": "Chromium",
    "brave": "BraveSoftware/Brave-Browser",
    "edge": "Microsoft Edge",
}
_MAC_SYSTEM = {
    "chrome": "Library/Google/Chrome/NativeMessagingHosts",
    "chromium": "Library/Application Support/Chromium/NativeMessagingHosts",
    # Unverified on macOS: Brave follows Chrome's system folder on Linux, assume the same here.
    "brave": "Library/Google/Chrome/NativeMessagingHosts",
    "edge": "Library/Microsoft/Edge/NativeMessagingHosts",
}


@dataclass(frozen=True)
class Layout:
    """Where things go for one platform/scope; every root overridable so tests use tmp dirs."""

    system: bool = False
    home: Path | None = None  # default: $HOME
    platform: str = sys.platform
    system_root: Path = Path("/")

    @property
    def macos(self) -> bool:
        return self.platform == "darwin"

    def _home(self) -> Path:
        return self.home if self.home is not None else Path.home()

    def _config_root(self) -> Path:
        if self.home is None and (xdg := os.environ.get("XDG_CONFIG_HOME")):
            return Path(xdg)
        return self._home() / ".config"

    def browser_root(self, browser: str) -> Path:
        """The browser's own user folder: present when the browser has run for this user."""
        if self.macos:
            return self._home() / "Library" / "Application Support" / _MAC_USER[browser]
        return self._config_root() / _LINUX_USER[browser]

    def manifest_dir(self, browser: str) -> Path:
        if self.system:
            table = _MAC_SYSTEM if self.macos else _LINUX_SYSTEM
            return self.system_root / table[browser]
        return self.browser_root(browser) / "NativeMessagingHosts"

    def data_dir(self) -> Path:
        """Where the launcher lives."""
        if self.system:
            sub = (
                "Library/Application Support/shotbridge"
                if self.macos
                else "usr/local/lib/shotbridge"
            )
            return self.system_root / sub
        if self.macos:
            return self._home() / "Library" / "Application Support" / "shotbridge"
        if self.home is None and (xdg := os.environ.get("XDG_DATA_HOME")):
            return Path(xdg) / "shotbridge"
        return self._home() / ".local" / "share" / "shotbridge"

    def launcher(self) -> Path:
        return self.data_dir() / LAUNCHER_NAME


# ---- the two files ----------------------------------------------------------------------------


def manifest_for(launcher: Path) -> dict[str, Any]:
    return {
        "name": HOST_NAME,
        "description": "shotbridge: lets AI coding assistants see this browser",
        "path": str(launcher),
        "type": "stdio",
        "allowed_origins": [EXTENSION_ORIGIN],
    }


def write_manifest(directory: Path, launcher: Path) -> Path:
    """Write ``<directory>/dev.shotbridge.host.json`` pointing at ``launcher`` (made absolute)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / MANIFEST_NAME
    _write_atomic(path, json.dumps(manifest_for(launcher.absolute()), indent=2) + "\n", 0o644)
    return path


def default_launcher_env() -> dict[str, str]:
    """Environment the launcher needs: PYTHONPATH when shotbridge runs from a source tree."""
    try:
        metadata.distribution("shotbridge")
    except metadata.PackageNotFoundError:
        return {"PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    return {}


def write_launcher(path: Path, env: Mapping[str, str] | None = None) -> Path:
    """Write an executable ``/bin/sh`` launcher running this interpreter's ``shotbridge host``.

    ``env`` is baked in as exports (plus PYTHONPATH when running from a source tree).
    """
    merged = {**default_launcher_env(), **(env or {})}
    lines = ["#!/bin/sh", "# shotbridge native-messaging host launcher (written by shotbridge)."]
    for key, value in merged.items():
        if not key.isidentifier():
            raise ValueError(f"not an environment variable name: {key!r}")
        lines.append(f"export {key}={shlex.quote(value)}")
    lines.append(f'exec {shlex.quote(sys.executable)} -m shotbridge host "$@"')
    path.parent.mkdir(parents=True, exist_ok=True)
    _write_atomic(path, "\n".join(lines) + "\n", 0o755)
    return path


def _write_atomic(path: Path, text: str, mode: int) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    os.chmod(tmp, mode)
    os.replace(tmp, path)


# ---- the extension ----------------------------------------------------------------------------


def extension_dir() -> Path:
    """The unpacked extension: ``$SHOTBRIDGE_EXTENSION_DIR``, else the copy inside the package.

    The extension lives in the ``shotbridge`` package itself (``shotbridge/extension``), so a
    checkout and an installed wheel find it the same way, through ``importlib.resources``.
    """
    explicit = os.environ.get("SHOTBRIDGE_EXTENSION_DIR")
    path = Path(explicit) if explicit else Path(str(resources.files("shotbridge") / "extension"))
    if not (path / "manifest.json").is_file():
        hint = "" if explicit else " (set SHOTBRIDGE_EXTENSION_DIR to the folder that holds it)"
        raise ShotbridgeError(f"no unpacked extension at {path}: manifest.json missing{hint}")
    return path.resolve()


# ---- install / uninstall ----------------------------------------------------------------------


@dataclass
class InstallResult:
    launcher: Path
    manifests: dict[str, Path] = field(default_factory=dict)  # browser or profile -> manifest
    guessed: bool = False  # no browser folder found: wrote for every browser


PROFILES_NAME = "profiles.json"


def profile_manifest(user_data_dir: Path) -> Path:
    """Where Chromium started with ``--user-data-dir=DIR`` looks for our manifest."""
    return user_data_dir / "NativeMessagingHosts" / MANIFEST_NAME


def registered_profiles(layout: Layout) -> list[Path]:
    """The ``--user-data-dir`` folders `shotctl install` registered (remembered beside the
    launcher, so that doctor checks them and uninstall removes them)."""
    try:
        data = json.loads((layout.data_dir() / PROFILES_NAME).read_text())
    except (OSError, ValueError):
        return []
    return [Path(p) for p in data if isinstance(p, str)] if isinstance(data, list) else []


def _remember_profiles(layout: Layout, dirs: list[Path]) -> None:
    path = layout.data_dir() / PROFILES_NAME
    if dirs:
        path.parent.mkdir(parents=True, exist_ok=True)
        _write_atomic(path, json.dumps([str(d) for d in dirs], indent=2) + "\n", 0o644)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def detected_browsers(layout: Layout) -> tuple[str, ...]:
    return tuple(b for b in BROWSERS if layout.browser_root(b).is_dir())


def install(
    browsers: Iterable[str] | None = None,
    *,
    layout: Layout | None = None,
    env: Mapping[str, str] | None = None,
    user_data_dirs: Iterable[Path] = (),
) -> InstallResult:
    """Write the launcher and a manifest per browser (or per ``user_data_dirs`` profile).

    ``browsers=None`` means every browser: for a user install, those whose folder exists (all of
    them when none does, so a browser installed later works too). With ``user_data_dirs`` and no
    ``browsers``, only those profiles are registered.
    """
    layout = layout or Layout()
    profiles = [Path(d).expanduser().absolute() for d in user_data_dirs]
    guessed = False
    if browsers is None and profiles:
        browsers = ()
    if browsers is None:
        found = () if layout.system else detected_browsers(layout)
        guessed = not layout.system and not found
        browsers = found or BROWSERS
    launcher = write_launcher(layout.launcher(), env)
    result = InstallResult(launcher=launcher, guessed=guessed)
    for browser in browsers:
        result.manifests[browser] = write_manifest(layout.manifest_dir(browser), launcher)
    for profile in profiles:
        manifest = write_manifest(profile_manifest(profile).parent, launcher)
        result.manifests[str(profile)] = manifest
    if profiles:
        known = registered_profiles(layout)
        _remember_profiles(layout, known + [p for p in profiles if p not in known])
    return result


def uninstall(
    browsers: Iterable[str] | None = None,
    *,
    layout: Layout | None = None,
    user_data_dirs: Iterable[Path] | None = None,
) -> list[Path]:
    """Remove our manifests (and the launcher once no manifest uses it); returns what went.

    ``user_data_dirs=None`` means every profile `install --user-data-dir` registered, and only
    when ``browsers`` is None too (a plain `shotctl uninstall` removes everything).
    """
    layout = layout or Layout()
    removed: list[Path] = []
    known = registered_profiles(layout)
    if user_data_dirs is None:
        profiles = known if browsers is None else []
    else:
        profiles = [Path(d).expanduser().absolute() for d in user_data_dirs]
    paths = [layout.manifest_dir(b) / MANIFEST_NAME for b in (browsers or BROWSERS)]
    if user_data_dirs is not None and browsers is None:
        paths = []  # `uninstall --user-data-dir DIR` touches only that profile
    paths += [profile_manifest(p) for p in profiles]
    for path in paths:
        if _is_ours(path):
            path.unlink()
            removed.append(path)
    left = [p for p in known if p not in profiles and _is_ours(profile_manifest(p))]
    _remember_profiles(layout, left)
    launcher = layout.launcher()
    still_used = left or any((layout.manifest_dir(b) / MANIFEST_NAME).exists() for b in BROWSERS)
    if launcher.exists() and not still_used:
        launcher.unlink()
        removed.append(launcher)
        with contextlib.suppress(OSError):
            launcher.parent.rmdir()  # only if empty
    return removed


def _is_ours(manifest: Path) -> bool:
    try:
        return json.loads(manifest.read_text()).get("name") == HOST_NAME
    except (OSError, ValueError, AttributeError):
        return False


# ---- running hosts ----------------------------------------------------------------------------


def is_our_host(pid: int) -> bool:
    """The process runs `shotbridge host` as this user (a pid from a record may be reused)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    uid_line = next((line for line in status.splitlines() if line.startswith("Uid:")), "")
    if uid_line.split()[1:2] != [str(os.getuid())]:
        return False
    words = [w.decode(errors="replace") for w in cmdline if w]
    return any(w.endswith(("shotbridge", "shotctl")) for w in words) and "host" in words


def stop_hosts(timeout: float = 5.0) -> list[int]:
    """SIGTERM every registered host that is ours, wait for them to go; their pids.

    Their records and sockets are removed too (a host that ignored SIGTERM is left alone).
    """
    import signal
    import time

    from shotbridge.transport import paths

    stopped: list[int] = []
    for info in paths.list_hosts():
        if not is_our_host(info.pid):
            continue
        with contextlib.suppress(ProcessLookupError):
            os.kill(info.pid, signal.SIGTERM)
            stopped.append(info.pid)
    deadline = time.monotonic() + timeout
    while any(paths.pid_alive(p) for p in stopped) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid in stopped:
        if not paths.pid_alive(pid):
            for folder in paths.search_dirs():
                for name in (f"host-{pid}.json", f"host-{pid}.sock"):
                    with contextlib.suppress(OSError):
                        (folder / name).unlink()
    return stopped


REMOVE_EXTENSION_HINT = (
    "To remove the extension: open chrome://extensions (edge://extensions, brave://extensions), "
    "find “shotbridge” (ID {id}) and click Remove. If you start Chromium with "
    "--load-extension=…/shotbridge/extension, drop that flag."
)
