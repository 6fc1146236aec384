"""Tool schemas as a model reads them: every character of a schema is context spent before a call.

pydantic writes a ``title`` for every property and spells an optional argument as
``anyOf: [T, null]`` with ``default: null``. A model learns nothing from either: the name says the
title, and an argument that is not ``required`` may be left out. Arguments are still validated by
the tools' own pydantic models, so an explicit ``null`` from a client is accepted as before.
"""

from __future__ import annotations

from typing import Any

NULL = {"type": "null"}


def lean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A copy of a JSON schema without titles, null defaults and ``anyOf [T, null]`` wrappers."""
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" or (key == "default" and value is None):
            continue
        if key in ("properties", "$defs"):
            out[key] = {name: lean_schema(sub) for name, sub in value.items()}
        elif key in ("items", "additionalProperties") and isinstance(value, dict):
            out[key] = lean_schema(value)
        elif key == "anyOf":
            options = [lean_schema(o) for o in value if o != NULL]
            if len(options) == 1:
                out.update(options[0])
            else:
                out[key] = options
        else:
            out[key] = value
    return out
