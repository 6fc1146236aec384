"""The committed schema of the extension's commands matches the models it is exported from."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _exporter():
    spec = importlib.util.spec_from_file_location(
        "export_wire_schema", ROOT / "scripts" / "export_wire_schema.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_schema_is_current() -> None:
    exporter = _exporter()
    committed = exporter.OUT.read_text()
    assert committed == exporter.text(), (
        "tests/extension/wire-schema.json is stale: run "
        ".venv/bin/python scripts/export_wire_schema.py and commit it"
    )


def test_every_command_has_argument_properties() -> None:
    commands = _exporter().schema()["commands"]
    assert {"capture", "discover", "input", "navigate", "dialog"} <= commands.keys()
    for cmd, entry in commands.items():
        assert "timeout_ms" in entry["args"]["properties"], cmd
