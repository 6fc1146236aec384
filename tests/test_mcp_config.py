"""``shotctl mcp --print-config CLIENT``: registrations name this shotctl by absolute path."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

SHOTCTL = Path(sys.executable).parent / "shotctl"


def print_config(client: str, *launcher: str) -> str:
    cmd = [*(launcher or [str(SHOTCTL)]), "mcp", "--print-config", client]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd="/", check=True, timeout=60)
    return r.stdout


def test_claude_code_command_uses_the_absolute_shotctl() -> None:
    argv = shlex.split(print_config("claude-code"))
    assert argv[:2] == ["claude", "mcp"] and argv[-2:] == [str(SHOTCTL), "mcp"]
    assert Path(argv[-2]).is_absolute()


@pytest.mark.parametrize(
    ("client", "key"),
    [("cursor", "mcpServers"), ("claude-desktop", "mcpServers"), ("vscode", "servers")],
)
def test_json_configs_start_this_server(client: str, key: str) -> None:
    entry = json.loads(print_config(client))[key]["shotbridge"]
    assert entry["command"] == str(SHOTCTL) and entry["args"] == ["mcp"]
    if client == "vscode":
        assert entry["type"] == "stdio"


def test_python_m_launch_names_the_interpreter() -> None:
    entry = json.loads(print_config("cursor", sys.executable, "-m", "shotbridge"))
    entry = entry["mcpServers"]["shotbridge"]
    assert entry == {"command": sys.executable, "args": ["-m", "shotbridge", "mcp"]}


def test_help_never_suggests_a_bare_shotctl() -> None:
    r = subprocess.run([str(SHOTCTL), "mcp", "--help"], capture_output=True, text=True, check=True)
    assert "-- shotctl mcp" not in r.stdout
    assert '"$(command -v shotctl)" mcp' in r.stdout and "--print-config" in r.stdout
