"""Playwright statements replaying the tool's upload, drag and wait (and a multiple select).

Every recorded string (a path, a text, a selector, a URL pattern) enters the code as a literal
through ``encode.js_string``.
"""

from __future__ import annotations

import re

from shotbridge.generate.encode import js_string
from shotbridge.generate.locators import css, locator
from shotbridge.wire.timeline import ActionEntry, WaitFor

DRAG_STEPS = 10
MIN_WAIT_MS = 5_000  # a replay's page may be slower than the recorded one


def _num(v: float) -> str:
    return f"{float(v):.2f}".rstrip("0").rstrip(".")


def _xy(p: dict[str, float] | None) -> str:
    p = p or {}
    return f"{_num(p.get('x', 0))}, {_num(p.get('y', 0))}"


def lines(a: ActionEntry, loc: str, page: str) -> list[str] | None:
    """The statements for ``a``, or None when it is not one of these."""
    if a.kind == "select" and a.values:
        return [f"await {loc}.selectOption([{', '.join(js_string(v) for v in a.values)}]);"]
    if a.kind == "upload":
        return [f"await {loc}.setInputFiles([{', '.join(js_string(f) for f in a.files or [])}]);"]
    if a.kind == "drag":
        return _drag(a, loc, page)
    if a.kind == "wait":
        return [_wait(a.wait or WaitFor(network=True), page)]
    return None


def _drag(a: ActionEntry, loc: str, page: str) -> list[str]:
    if a.to is not None and not a.by_points:
        return [f"await {loc}.dragTo({locator(a.to, page)});"]
    # Aimed at points (a slider's track, a spot on a board): the same mouse path.
    return [
        f"await {page}.mouse.move({_xy(a.from_point)});",
        f"await {page}.mouse.down();",
        f"await {page}.mouse.move({_xy(a.to_point)}, {{ steps: {DRAG_STEPS} }});",
        f"await {page}.mouse.up();",
    ]


def glob_regex(pattern: str) -> str:
    """The regex of a URL glob as the tool reads it ("**" any text, "*" any text but "/")."""
    parts = ("[^/]*".join(re.escape(p) for p in part.split("*")) for part in pattern.split("**"))
    return "^" + ".*".join(parts) + "$"


def _wait(w: WaitFor, page: str) -> str:
    timeout = max(w.timeout_ms, MIN_WAIT_MS)
    state = "hidden" if w.gone else "visible"
    if w.network:
        return f"await {page}.waitForLoadState('networkidle', {{ timeout: {timeout} }});"
    if w.url is not None:
        if "*" in w.url:
            test = f"new RegExp({js_string(glob_regex(w.url))}).test(url.href)"
        else:
            test = f"url.href.includes({js_string(w.url)})"
        test = f"!{test}" if w.gone else test
        return f"await {page}.waitForURL((url) => {test}, {{ timeout: {timeout} }});"
    if w.text is not None:
        where = f"{page}.getByText({js_string(w.text)})"
    else:
        where = f"{page}.locator({js_string(css(w.selector or 'body'))})"
    return f"await {where}.first().waitFor({{ state: '{state}', timeout: {timeout} }});"
