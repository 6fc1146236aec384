"""``shotctl install --system`` refuses a per-user interpreter.

Before, it wrote a system-wide launcher running whichever Python ran the command, e.g. one user's
``~/.venv``: every user's browser would then run code that user can change.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from shotbridge.cli import main
from shotbridge.install import system_python


def test_a_venv_in_a_home_folder_is_per_user(tmp_path: Path) -> None:
    home = tmp_path / "home" / "alice"
    venv = home / ".venv"
    venv.mkdir(parents=True)
    reason = system_python.per_user_reason(prefix=venv, package=Path("/usr/lib"), homes=[home])
    assert reason is not None and "inside the home folder" in reason


def test_a_prefix_owned_by_another_user_is_per_user(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    venv = tmp_path / "opt" / "venv"
    venv.mkdir(parents=True)
    real_stat = os.stat

    def stat_as_user(path: object, *args: object, **kwargs: object) -> os.stat_result:
        st = real_stat(path, *args, **kwargs)  # type: ignore[arg-type]
        if Path(str(path)) == venv:
            fields = list(st)
            fields[4] = 1000  # st_uid
            return os.stat_result(fields)
        return st

    monkeypatch.setattr(os, "stat", stat_as_user)
    reason = system_python.per_user_reason(prefix=venv, package=Path("/usr/lib"), homes=[])
    assert reason == f"the interpreter's prefix {venv.resolve()} belongs to uid 1000, not root"


def test_a_world_writable_folder_on_the_way_is_refused(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    (shared / "venv").mkdir(parents=True)
    os.chmod(shared, 0o777)  # no sticky bit: anyone may swap the venv
    reason = system_python.per_user_reason(
        prefix=shared / "venv", package=Path("/usr/lib"), homes=[]
    )
    assert reason is not None
    if os.getuid() == 0:  # as root the folder is root's, and only its mode gives it away
        assert "writable by every user" in reason


def test_the_system_python_passes() -> None:
    reason = system_python.per_user_reason(prefix=Path("/usr"), package=Path("/usr/lib"), homes=[])
    assert reason is None


def test_the_package_is_checked_too(tmp_path: Path) -> None:
    """An editable install: root's interpreter, but shotbridge's code in someone's checkout."""
    home = tmp_path / "bob"
    (home / "src" / "shotbridge").mkdir(parents=True)
    reason = system_python.per_user_reason(
        prefix=Path("/usr"), package=home / "src" / "shotbridge", homes=[home]
    )
    assert reason is not None and reason.startswith("the shotbridge package")


def test_cli_refuses_with_exit_2_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home" / "carol"
    (home / ".venv").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setattr(sys, "prefix", str(home / ".venv"))
    written: list[object] = []
    monkeypatch.setattr("shotbridge.cli.install.do_install", lambda *a, **k: written.append(a))
    result = CliRunner().invoke(main, ["install", "--system"])
    assert result.exit_code == 2
    assert "refusing a --system install" in result.output
    assert "inside the home folder" in result.output and "shotctl install" in result.output
    assert written == []
