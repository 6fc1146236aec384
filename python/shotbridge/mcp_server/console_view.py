"""``observe what="console"``: the tab's errors and its other console messages in one list, each
with its level, oldest first; a level or a piece of text narrows it.

Messages are the page's text, often with what an app logs about itself (tokens, e-mails): each
passes :mod:`generate.redact` before the model sees it.
"""

from __future__ import annotations

from typing import Any

from shotbridge.generate import redact
from shotbridge.wire.extension import ConsoleMessage

LEVELS = ("error", "warning", "info", "log", "debug")
SHOWN_MAX = 100


def _error(e: dict[str, Any]) -> dict[str, Any]:
    """An entry of the ``errors`` buffer (console.error, exception, rejection) as a message."""
    keep = {k: e.get(k) for k in ("kind", "message", "source", "line", "column")}
    return {"level": "error", "time": e.get("time") or 0, **keep}


def _shown(m: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in m.items() if k != "time"}
    out["message"] = redact.text(str(out.get("message") or ""))
    if out.get("source"):
        out["source"] = redact.url(str(out["source"]))
    else:  # a log call's place is not looked up (it would cost the page a stack trace)
        for k in ("source", "line", "column"):
            out.pop(k, None)
    return out


def _matches(m: dict[str, Any], f: str) -> bool:
    """A level names the level; anything else is a piece of the message."""
    return m["level"] == f if f in LEVELS else f in str(m["message"] or "").lower()


def listing(errors: list[dict[str, Any]], logs: list[ConsoleMessage], flt: str | None) -> dict:
    items = [_error(e) for e in errors] + [m.model_dump() for m in logs]
    items.sort(key=lambda m: m["time"])
    if flt and flt.strip():
        f = flt.strip().lower()
        items = [
            m for m in items if (m["level"] == f if f in LEVELS else f in m["message"].lower())
        ]
    return {"count": len(items), "messages": [_shown(m) for m in items[-SHOWN_MAX:]]}
