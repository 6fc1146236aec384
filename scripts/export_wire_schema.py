"""Write the JSON Schema of the extension's commands (shotbridge.wire.extension.COMMANDS).

The committed file, tests/extension/wire-schema.json, is what the extension's unit tests hold its
argument parsing (extension/lib/args.js) to; tests/extension/test_wire_schema.py fails when the
file no longer matches the models. Run after changing a model:

    .venv/bin/python scripts/export_wire_schema.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from shotbridge.wire.extension import COMMANDS

OUT = Path(__file__).resolve().parent.parent / "tests" / "extension" / "wire-schema.json"


def schema() -> dict[str, Any]:
    """Per command: the schema of its arguments, and of its reply (null where none is declared)."""
    return {
        "commands": {
            cmd: {
                "args": args.model_json_schema(mode="validation"),
                "reply": None if reply is None else reply.model_json_schema(mode="serialization"),
            }
            for cmd, (args, reply) in COMMANDS.items()
        }
    }


def text() -> str:
    return json.dumps(schema(), indent=1, sort_keys=True) + "\n"


def main() -> int:
    OUT.write_text(text())
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
