"""Every CLI usage error exits 2 with one line on stderr, never a traceback.

Each subcommand's typed options get values their type refuses (numbers past the range, nan,
words, text that is not UTF-8); click's CliRunner runs the real ``shotctl`` group, and two real
subprocesses check what a user's terminal shows.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image
from shotbridge.cli import main
from shotbridge.cli.options import FiniteFloatRange

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _isolated(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """A value a command accepts runs the command for real: keep it out of the checkout and HOME."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.chdir(home)
    for var, sub in (("HOME", ""), ("XDG_CONFIG_HOME", ".config"), ("XDG_STATE_HOME", ".state")):
        monkeypatch.setenv(var, str(home / sub))
    monkeypatch.setenv("SHOTBRIDGE_RUNTIME_DIR", str(home / "run"))


def typed_options() -> list[tuple[str, str, click.ParamType]]:
    """(subcommand, option, type) for every option whose type can refuse a value."""
    ctx = click.Context(main)
    found = []
    for name in main.list_commands(ctx):
        command = main.get_command(ctx, name)
        assert command is not None
        for param in command.params:
            refusable = (click.types.IntParamType, click.types.FloatParamType, click.Choice)
            if isinstance(param, click.Option) and isinstance(param.type, refusable):
                found.append((name, param.opts[0], param.type))
    return found


OPTIONS = typed_options()


def refused_values(kind: click.ParamType) -> list[str]:
    values = ["abc", "", "\udcff"]
    if isinstance(kind, click.types.IntParamType):
        values += ["1.5", "nan", "1e400"]
        if isinstance(kind, click.IntRange):
            if kind.max is not None:
                values += [str(kind.max + 1), str(2**64)]
            if kind.min is not None:
                values += [str(kind.min - 1), str(-(2**64))]
    elif isinstance(kind, click.types.FloatParamType):
        if isinstance(kind, FiniteFloatRange):
            values += ["nan", "inf", "-inf"]
        if isinstance(kind, click.FloatRange) and kind.max is not None:
            values += ["1e400"]
    else:  # Choice
        values += ["definitely-not-a-choice"]
    return values


CASES = [(cmd, opt, value) for cmd, opt, kind in OPTIONS for value in refused_values(kind)]


def check_usage_error(args: list[str]) -> None:
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, (args, result.exit_code, result.output, result.exception)
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, (args, result.stderr)
    assert "error" in lines[0].lower() and "Traceback" not in result.stderr


def test_the_table_covers_the_subcommands() -> None:
    assert {cmd for cmd, _, _ in OPTIONS} >= {"shrink", "capture", "mcp"}


@pytest.mark.parametrize(("cmd", "opt", "value"), CASES)
def test_refused_option_values_exit_2_with_one_line(cmd: str, opt: str, value: str) -> None:
    check_usage_error([cmd, opt, value])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    case=st.sampled_from(OPTIONS),
    value=st.one_of(
        st.integers(min_value=2**40).map(str),
        st.integers(max_value=-(2**40)).map(str),
        st.text(alphabet=st.characters(categories=["L", "Cs", "So"]), min_size=1, max_size=8),
    ),
)
def test_fuzzed_option_values_are_refused_in_one_line(
    case: tuple[str, str, click.ParamType], value: str
) -> None:
    cmd, opt, kind = case
    try:
        kind.convert(value, None, None)
        return  # a value the type takes is not a usage error
    except click.BadParameter:
        pass
    check_usage_error([cmd, opt, value])


def test_unknown_subcommand_and_option_are_one_line() -> None:
    check_usage_error(["no-such-command"])
    check_usage_error(["shrink", "--no-such-option"])


@pytest.fixture
def png(tmp_path: Path) -> Path:
    path = tmp_path / "shot.png"
    buf = io.BytesIO()
    Image.new("RGB", (64, 48), "white").save(buf, "PNG")
    path.write_bytes(buf.getvalue())
    return path


def test_shrink_out_of_range_budgets_exit_2(png: Path) -> None:
    for value in (str(2**64), "1073741825", "10"):
        check_usage_error(["shrink", "--max-bytes", value, str(png)])
    check_usage_error(["shrink", "--dpr", "nan", str(png)])


def run_shotctl(*args: str | bytes) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "python")}
    argv = [os.fsencode(a) if isinstance(a, str) else a for a in args]
    return subprocess.run(
        [os.fsencode(sys.executable), b"-m", b"shotbridge", *argv],
        capture_output=True, timeout=60, env=env,
    )  # fmt: skip


def test_real_process_max_bytes_2_to_the_64(png: Path) -> None:
    out = run_shotctl("shrink", "--max-bytes", str(2**64), str(png))
    assert out.returncode == 2
    assert len(out.stderr.strip().splitlines()) == 1 and b"Traceback" not in out.stderr
    assert b"max-bytes" in out.stderr or b"max_bytes" in out.stderr


def test_real_process_argument_that_is_not_utf8() -> None:
    out = run_shotctl("install", "--user-data-dir", b"/tmp/\xff\xfe")
    assert out.returncode == 2
    assert len(out.stderr.strip().splitlines()) == 1 and b"Traceback" not in out.stderr
