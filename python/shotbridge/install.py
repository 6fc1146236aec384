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

from shotbridge.errors import ShotbridgeError
from shotbridge.protocol import EXTENSION_ORIGIN, HOST_NAME

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
        return {"PYTHONPATH": str(Path(__file__).resolve().parents[1])}
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
    manifests: dict[str, Path] = field(default_factory=dict)  # browser -> manifest written
    guessed: bool = False  # no browser folder found: wrote for every browser


def detected_browsers(layout: Layout) -> tuple[str, ...]:
    return tuple(b for b in BROWSERS if layout.browser_root(b).is_dir())


def install(
    browsers: Iterable[str] | None = None,
    *,
    layout: Layout | None = None,
    env: Mapping[str, str] | None = None,
) -> InstallResult:
    """Write the launcher and a manifest per browser.

    ``browsers=None`` means every browser: for a user install, those whose folder exists (all of
    them when none does, so a browser installed later works too).
    """
    layout = layout or Layout()
    guessed = False
    if browsers is None:
        found = () if layout.system else detected_browsers(layout)
        guessed = not layout.system and not found
        browsers = found or BROWSERS
    launcher = write_launcher(layout.launcher(), env)
    result = InstallResult(launcher=launcher, guessed=guessed)
    for browser in browsers:
        result.manifests[browser] = write_manifest(layout.manifest_dir(browser), launcher)
    return result


def uninstall(browsers: Iterable[str] | None = None, *, layout: Layout | None = None) -> list[Path]:
    """Remove our manifests (and the launcher once no manifest uses it); returns what went."""
    layout = layout or Layout()
    removed: list[Path] = []
    for browser in browsers if browsers is not None else BROWSERS:
        path = layout.manifest_dir(browser) / MANIFEST_NAME
        if path.exists():
            path.unlink()
            removed.append(path)
    launcher = layout.launcher()
    still_used = any((layout.manifest_dir(b) / MANIFEST_NAME).exists() for b in BROWSERS)
    if launcher.exists() and not still_used:
        launcher.unlink()
        removed.append(launcher)
        with contextlib.suppress(OSError):
            launcher.parent.rmdir()  # only if empty
    return removed
