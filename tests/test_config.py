"""The user's host settings (``shotctl config``): where they live, who may write them, the CLI."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner
from shotbridge.cli import main
from shotbridge.install import user_config as config


@pytest.fixture
def cfg_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "cfg"
    monkeypatch.setenv("SHOTBRIDGE_CONFIG_DIR", str(path))
    return path


def test_defaults_are_off_without_a_file(cfg_dir: Path) -> None:
    assert config.load() == config.HostConfig(allow_cdp=False)
    assert config.config_path() == cfg_dir / "config.json"


def test_xdg_config_home_is_the_fallback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SHOTBRIDGE_CONFIG_DIR", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert config.config_path() == tmp_path / "shotbridge" / "config.json"


def test_save_writes_a_private_file_in_a_private_folder(cfg_dir: Path) -> None:
    old = os.umask(0o022)
    try:
        path = config.save(config.HostConfig(allow_cdp=True))
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(cfg_dir.stat().st_mode) == 0o700
    assert config.load().allow_cdp is True
    assert [p.name for p in cfg_dir.iterdir()] == ["config.json"]  # no temp file left


def test_a_file_others_can_write_counts_as_off(cfg_dir: Path) -> None:
    path = config.save(config.HostConfig(allow_cdp=True))
    os.chmod(path, 0o666)
    assert config.load().allow_cdp is False


def test_a_file_of_another_user_counts_as_off(
    cfg_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config.save(config.HostConfig(allow_cdp=True))
    real = os.getuid()
    monkeypatch.setattr(os, "getuid", lambda: real + 1)
    assert config.load().allow_cdp is False


def test_a_symlinked_or_broken_file_counts_as_off(cfg_dir: Path, tmp_path: Path) -> None:
    elsewhere = config.save(config.HostConfig(allow_cdp=True), tmp_path / "other.json")
    cfg_dir.mkdir()
    (cfg_dir / "config.json").symlink_to(elsewhere)
    assert config.load().allow_cdp is False
    (cfg_dir / "config.json").unlink()
    (cfg_dir / "config.json").write_text("{not json")
    os.chmod(cfg_dir / "config.json", 0o600)
    assert config.load().allow_cdp is False


def test_cli_turns_raw_cdp_on_and_off(cfg_dir: Path) -> None:
    runner = CliRunner()
    shown = runner.invoke(main, ["config", "show"])
    assert shown.exit_code == 0 and "allow-cdp: off" in shown.output
    assert "not written yet" in shown.output
    on = runner.invoke(main, ["config", "allow-cdp", "on"])
    assert on.exit_code == 0 and config.load().allow_cdp is True
    assert "allow-cdp: on" in runner.invoke(main, ["config", "show"]).output
    off = runner.invoke(main, ["config", "allow-cdp", "off"])
    assert off.exit_code == 0 and config.load().allow_cdp is False
    bad = runner.invoke(main, ["config", "allow-cdp", "maybe"])
    assert bad.exit_code == 2


def test_the_refusal_names_the_command_that_enables_it() -> None:
    from shotbridge.host.rawcdp import disabled_message

    assert "`shotctl config allow-cdp on`" in disabled_message()
    assert "`shotctl mcp --allow-cdp`" in disabled_message()
