"""Browser profiles that have the shotbridge extension, for ``shotctl doctor``.

A profile folder (``Default``, ``Profile 1``, …) lives in a browser's user-data folder: the
browser's own (``~/.config/chromium``…) or one given with ``--user-data-dir``. Chromium records
each extension under ``extensions.settings.<id>`` of the profile's ``Preferences`` (Chrome may use
``Secure Preferences``). Seen in a real Chromium 156 profile: an extension loaded with
``--load-extension`` has ``location`` 8 (command line) and its ``path``; "Load unpacked" in
chrome://extensions gives ``location`` 4; a store install has ``location`` 1 and an
``Extensions/<id>`` folder.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shotbridge.install.register import BROWSERS, Layout

_LOCATIONS = {
    1: "installed from the Chrome Web Store",
    4: "loaded unpacked in chrome://extensions",
    8: "loaded with --load-extension",
}
_BROWSER_NAMES = ("chrom", "brave", "edge", "msedge")


@dataclass(frozen=True)
class Profile:
    """One profile folder that has our extension."""

    root: Path  # the user-data folder (what --user-data-dir names)
    name: str  # "Default", "Profile 1", …
    browser: str | None  # when root is a browser's own folder
    location: int | None = None
    path: str | None = None  # where an unpacked extension is loaded from
    disabled: bool = False

    @property
    def folder(self) -> Path:
        return self.root / self.name

    def how_loaded(self) -> str:
        how = _LOCATIONS.get(self.location or 0, f"location {self.location}")
        if self.path:
            how += f" from {self.path}"
        return how + (", disabled" if self.disabled else "")


def profile_roots(
    layout: Layout, custom: list[Path], *, scan_processes: bool = True
) -> list[tuple[Path, str | None]]:
    """User-data folders to look in: each browser's own, ``custom`` ones, and those of running
    browsers started with ``--user-data-dir`` (read from /proc). Only folders that exist."""
    roots: dict[Path, str | None] = {}
    for browser in BROWSERS:
        root = layout.browser_root(browser)
        if root.is_dir():
            roots.setdefault(root.absolute(), browser)
    running = running_user_data_dirs() if scan_processes else []
    for root in [*custom, *running]:
        if root.is_dir():
            roots.setdefault(root.absolute(), None)
    return list(roots.items())


def running_user_data_dirs() -> list[Path]:
    """``--user-data-dir`` of this user's running Chromium-family browsers (Linux /proc)."""
    found: list[Path] = []
    uid = os.getuid()
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            with contextlib.suppress(OSError):
                if entry.stat().st_uid != uid:
                    continue
                argv = Path(entry.path, "cmdline").read_bytes().split(b"\0")
                if not argv or not any(
                    n in Path(os.fsdecode(argv[0])).name for n in _BROWSER_NAMES
                ):
                    continue
                if any(a.startswith((b"--type=", b"--headless")) for a in argv):
                    continue  # helper processes repeat the flags; a headless one is not yours
                for arg in argv:
                    if arg.startswith(b"--user-data-dir="):
                        path = Path(os.fsdecode(arg.split(b"=", 1)[1])).expanduser()
                        if path not in found:
                            found.append(path)
    return found


def find_profiles(roots: list[tuple[Path, str | None]], extension_id: str) -> list[Profile]:
    profiles: list[Profile] = []
    for root, browser in roots:
        for folder in sorted(root.iterdir()) if root.is_dir() else []:
            if not (folder / "Preferences").is_file():
                continue
            entry = _extension_entry(folder, extension_id)
            if entry is None and not (folder / "Extensions" / extension_id).is_dir():
                continue
            entry = entry or {}
            location = entry.get("location")
            profiles.append(
                Profile(
                    root=root,
                    name=folder.name,
                    browser=browser,
                    location=location if isinstance(location, int) else None,
                    path=entry.get("path") if isinstance(entry.get("path"), str) else None,
                    disabled=bool(entry.get("disable_reasons")) or entry.get("state") == 0,
                )
            )
    return profiles


def _extension_entry(folder: Path, extension_id: str) -> dict[str, Any] | None:
    for name in ("Preferences", "Secure Preferences"):
        try:
            prefs = json.loads((folder / name).read_text())
        except (OSError, ValueError):
            continue
        settings = (
            prefs.get("extensions", {}).get("settings", {}) if isinstance(prefs, dict) else {}
        )
        entry = settings.get(extension_id) if isinstance(settings, dict) else None
        if isinstance(entry, dict):
            return entry
    return None
