"""install / uninstall / extension-path, all into temporary folders."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from shotbridge.cli import main
from shotbridge.install import register as inst
from shotbridge.install.register import BROWSERS, MANIFEST_NAME, Layout
from shotbridge.wire.errors import ShotbridgeError
from shotbridge.wire.messages import EXTENSION_ORIGIN, HOST_NAME


@pytest.fixture(autouse=True)
def _no_xdg(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "SHOTBRIDGE_EXTENSION_DIR"):
        monkeypatch.delenv(var, raising=False)


def linux(home: Path) -> Layout:
    return Layout(home=home, platform="linux")


def test_user_install_writes_manifests_and_launcher(tmp_path: Path) -> None:
    result = inst.install(layout=linux(tmp_path), env={"SHOTBRIDGE_RUNTIME_DIR": "/tmp/x y"})
    assert result.guessed  # no browser folder in this home: every browser registered
    expected = {
        "chrome": ".config/google-chrome/NativeMessagingHosts",
        "chromium": ".config/chromium/NativeMessagingHosts",
        "brave": ".config/BraveSoftware/Brave-Browser/NativeMessagingHosts",
        "edge": ".config/microsoft-edge/NativeMessagingHosts",
    }
    assert {b: p.parent for b, p in result.manifests.items()} == {
        b: tmp_path / d for b, d in expected.items()
    }
    launcher = tmp_path / ".local/share/shotbridge/shotbridge-host"
    assert result.launcher == launcher
    for path in result.manifests.values():
        assert path.name == MANIFEST_NAME == f"{HOST_NAME}.json"
        assert json.loads(path.read_text()) == {
            "name": "dev.shotbridge.host",
            "description": "shotbridge: lets AI coding assistants see this browser",
            "path": str(launcher),
            "type": "stdio",
            "allowed_origins": ["chrome-extension://lgpadcfmcnglbejkodbbdfcnfnaffoae/"],
        }
        assert EXTENSION_ORIGIN == "chrome-extension://lgpadcfmcnglbejkodbbdfcnfnaffoae/"
    assert stat.S_IMODE(launcher.stat().st_mode) == 0o755
    text = launcher.read_text()
    assert text.startswith("#!/bin/sh\n")
    assert "export SHOTBRIDGE_RUNTIME_DIR='/tmp/x y'\n" in text
    assert text.rstrip().endswith(f'exec {sys.executable} -m shotbridge host "$@"')


def test_install_only_where_browsers_live(tmp_path: Path) -> None:
    (tmp_path / ".config/chromium").mkdir(parents=True)
    result = inst.install(layout=linux(tmp_path))
    assert list(result.manifests) == ["chromium"] and not result.guessed
    explicit = inst.install(["edge"], layout=linux(tmp_path))
    assert list(explicit.manifests) == ["edge"]


def test_xdg_config_home_is_honoured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    layout = Layout(platform="linux")
    assert layout.manifest_dir("chrome") == tmp_path / "cfg/google-chrome/NativeMessagingHosts"
    assert layout.launcher() == tmp_path / "data/shotbridge/shotbridge-host"


def test_system_and_macos_layouts(tmp_path: Path) -> None:
    system = Layout(system=True, platform="linux", system_root=tmp_path)
    result = inst.install(layout=system)
    dirs = {b: p.parent.relative_to(tmp_path).as_posix() for b, p in result.manifests.items()}
    assert dirs == {
        "chrome": "etc/opt/chrome/native-messaging-hosts",
        "chromium": "etc/chromium/native-messaging-hosts",
        "brave": "etc/opt/chrome/native-messaging-hosts",  # Brave reads Chrome's system folder
        "edge": "etc/opt/edge/native-messaging-hosts",
    }
    assert result.launcher == tmp_path / "usr/local/lib/shotbridge/shotbridge-host"
    mac = Layout(home=tmp_path, platform="darwin")
    support = tmp_path / "Library/Application Support"
    assert mac.manifest_dir("chrome") == support / "Google/Chrome/NativeMessagingHosts"
    assert mac.manifest_dir("edge") == support / "Microsoft Edge/NativeMessagingHosts"
    assert mac.manifest_dir("brave") == support / "BraveSoftware/Brave-Browser/NativeMessagingHosts"
    assert mac.launcher() == support / "shotbridge/shotbridge-host"
    mac_sys = Layout(system=True, platform="darwin", system_root=tmp_path)
    assert mac_sys.manifest_dir("chrome") == tmp_path / "Library/Google/Chrome/NativeMessagingHosts"
    assert mac_sys.manifest_dir("edge") == tmp_path / "Library/Microsoft/Edge/NativeMessagingHosts"


def test_uninstall_removes_what_install_wrote(tmp_path: Path) -> None:
    layout = linux(tmp_path)
    result = inst.install(layout=layout)
    removed = inst.uninstall(["chrome"], layout=layout)
    assert removed == [result.manifests["chrome"]]
    assert result.launcher.exists()  # still used by the other browsers
    removed = inst.uninstall(layout=layout)
    assert set(removed) == {*(result.manifests[b] for b in BROWSERS[1:]), result.launcher}
    assert not result.launcher.parent.exists()
    assert inst.uninstall(layout=layout) == []


def test_write_manifest_and_launcher_for_a_private_profile(tmp_path: Path) -> None:
    """The headless launcher's use: a manifest inside a --user-data-dir profile."""
    launcher = inst.write_launcher(tmp_path / "l.sh", env={"A": "1"})
    manifest = inst.write_manifest(tmp_path / "profile" / "NativeMessagingHosts", launcher)
    assert json.loads(manifest.read_text())["path"] == str(launcher)
    with pytest.raises(ValueError, match="not an environment variable"):
        inst.write_launcher(tmp_path / "bad.sh", env={"A B": "1"})


def test_the_launcher_really_starts_the_host(tmp_path: Path) -> None:
    """Run the launcher as Chromium would, with a foreign origin: the host refuses and exits."""
    launcher = inst.write_launcher(
        tmp_path / "l.sh",
        env={
            "SHOTBRIDGE_STATE_DIR": str(tmp_path / "s"),
            "PYTHONPATH": str(Path(inst.__file__).resolve().parents[1]),
        },
    )
    out = subprocess.run(
        [str(launcher), "chrome-extension://someoneelse/", "--parent-window=0"],
        stdin=subprocess.DEVNULL, capture_output=True, timeout=15,
    )  # fmt: skip
    assert out.returncode == 1
    assert out.stdout == b""  # nothing but frames ever goes to stdout
    assert b"refusing to serve caller 'chrome-extension://someoneelse/'" in out.stderr


def test_extension_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo_ext = Path(__file__).resolve().parents[1] / "extension"
    if (repo_ext / "manifest.json").exists():
        assert inst.extension_dir() == repo_ext.resolve()
    monkeypatch.setenv("SHOTBRIDGE_EXTENSION_DIR", str(tmp_path))
    with pytest.raises(ShotbridgeError, match=r"manifest\.json missing"):
        inst.extension_dir()
    (tmp_path / "manifest.json").write_text("{}")
    assert inst.extension_dir() == tmp_path


def test_cli(tmp_path: Path) -> None:
    runner = CliRunner()
    env = {"HOME": str(tmp_path), "SHOTBRIDGE_EXTENSION_DIR": str(tmp_path / "ext")}
    out = runner.invoke(main, ["install", "--browser", "chrome", "--env", "A=b c"], env=env)
    assert out.exit_code == 0, out.output
    launcher = tmp_path / ".local/share/shotbridge/shotbridge-host"
    assert "export A='b c'" in launcher.read_text()
    bad = runner.invoke(main, ["install", "--env", "nope"], env=env)
    assert bad.exit_code == 2 and "KEY=VALUE" in bad.output
    manifest = tmp_path / ".config/google-chrome/NativeMessagingHosts" / MANIFEST_NAME
    assert f"manifest (chrome): {manifest}" in out.output
    assert "Load unpacked" in out.output and "manifest.json missing" in out.output
    assert manifest.exists()
    out = runner.invoke(main, ["extension-path"], env=env)
    assert out.exit_code == 1 and "manifest.json missing" in out.output
    (tmp_path / "ext").mkdir()
    (tmp_path / "ext" / "manifest.json").write_text("{}")
    out = runner.invoke(main, ["extension-path"], env=env)
    assert out.exit_code == 0 and out.output.strip() == str(tmp_path / "ext")
    out = runner.invoke(main, ["uninstall"], env=env)
    assert out.exit_code == 0 and f"removed {manifest}" in out.output
    assert not manifest.exists()
    assert not os.path.exists(tmp_path / ".local/share/shotbridge/shotbridge-host")
