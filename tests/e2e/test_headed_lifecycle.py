"""Update and removal: doctor fails on an extension of another version and says how to
reload it; `shotctl uninstall` stops the running host, removes launcher, manifests and records,
and says how to remove the extension."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from shotbridge import __version__
from shotbridge.install.register import extension_dir
from shotbridge.transport.paths import pid_alive

from tests.e2e.headed import Desktop, HeadedChromium


def _old_extension(folder: Path) -> Path:
    """A copy of the extension whose manifest says an older version (same key, so same ID)."""
    copy = folder / "old-extension"
    shutil.copytree(extension_dir(), copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["version"] = "0.0.1"
    (copy / "manifest.json").write_text(json.dumps(manifest))
    return copy


def test_version_mismatch_then_uninstall(desktop: Desktop, pages_url: str) -> None:
    assert __version__ != "0.0.1"
    profile = desktop.root / "profile"
    done = desktop.run("shotctl", "install", "--user-data-dir", str(profile))
    assert done.returncode == 0, done.stderr
    old = _old_extension(desktop.root)
    url = f"{pages_url}/buttons.html"
    browser = HeadedChromium(desktop, profile, extension=old, start_url=url).start()
    try:
        [host] = desktop.wait_hosts(1)
        assert host["extension_version"] == "0.0.1"
        doctor = desktop.run("shotctl", "doctor")
        assert doctor.returncode == 1, doctor.stdout
        assert (
            f"[FAIL] extension via host {host['pid']}: connected from profile "
            f"{host['profile_id']}, but the extension is version 0.0.1 and this shotbridge is "
            f"{__version__}"
        ) in doctor.stdout
        assert "chrome://extensions → shotbridge → reload" in doctor.stdout
        assert "--load-extension=$(shotctl extension-path)" in doctor.stdout

        launcher = desktop.home / ".local/share/shotbridge/shotbridge-host"
        manifest = profile / "NativeMessagingHosts" / "dev.shotbridge.host.json"
        assert launcher.is_file() and manifest.is_file()
        gone = desktop.run("shotctl", "uninstall")
        assert gone.returncode == 0, gone.stderr
        assert f"stopped host {host['pid']}" in gone.stdout
        assert f"removed {manifest}" in gone.stdout and f"removed {launcher}" in gone.stdout
        assert "chrome://extensions" in gone.stdout and "lgpadcfmcnglbejkodbbdfcnfnaffoae" in (
            gone.stdout
        )
        assert not pid_alive(host["pid"]) or _zombie(host["pid"])
        assert not launcher.exists() and not manifest.exists()
        records = list((desktop.runtime / "shotbridge").glob("host-*"))
        records += list((desktop.home / ".local/state/shotbridge/hosts").glob("host-*"))
        assert records == []
        assert browser.alive()  # the user's browser itself is left alone
    finally:
        browser.close()


def _zombie(pid: int) -> bool:
    """A host Chromium has not reaped yet is gone for every purpose but the process table."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith("Z")
    except OSError:
        return True
