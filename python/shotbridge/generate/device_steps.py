"""The tool's emulation and tab steps in Playwright: the device in the context's options, viewport
and media changes as page calls, and closing the page.

Playwright fixes a context's device (scale factor, mobile, touch, user agent) when it is created,
so the first emulated device of a session is the replay's from the start (the session was about
how the page looks there); later viewport and media changes are ``setViewportSize`` and
``emulateMedia`` where they happened. Every value is a number, a boolean or an encoded string.
"""

from __future__ import annotations

from shotbridge.generate.encode import js_string, line_comment
from shotbridge.generate.steps import Step
from shotbridge.wire.emulate import Emulation

DEFAULT_VIEWPORT = (1280, 720)  # Playwright's own, what a reset goes back to


def _num(v: float) -> str:
    return f"{float(v):g}"


def context_options(steps: list[Step]) -> list[str]:
    """``key: value`` entries for the context: the first emulated device of the session."""
    first = next((s.emulation for s in steps if s.emulation and not s.emulation.empty), None)
    if first is None:
        return []
    out: list[str] = []
    if first.width and first.height:
        out.append(f"viewport: {{ width: {first.width}, height: {first.height} }}")
    if first.device_scale_factor:
        out.append(f"deviceScaleFactor: {_num(first.device_scale_factor)}")
    if first.mobile is not None:
        out.append(f"isMobile: {'true' if first.mobile else 'false'}")
    if first.touch is not None:
        out.append(f"hasTouch: {'true' if first.touch else 'false'}")
    if first.user_agent:
        out.append(f"userAgent: {js_string(first.user_agent)}")
    return out


def _media(e: Emulation, page: str) -> str:
    scheme = js_string(e.color_scheme) if e.color_scheme else "null"
    motion = js_string(e.reduced_motion) if e.reduced_motion else "null"
    return f"await {page}.emulateMedia({{ colorScheme: {scheme}, reducedMotion: {motion} }});"


def lines(step: Step, page: str = "page") -> list[str]:
    """The statements of an ``emulate`` or ``close`` step."""
    if step.kind == "close":
        if step.keep_open:
            return [line_comment("The tab closed here; the replay goes on in its one page.")]
        return [f"await {page}.close();"]
    e = step.emulation or Emulation()
    if e.empty:
        w, h = DEFAULT_VIEWPORT
        return [
            "// Emulation off: Playwright's default viewport and media (the device stays the",
            "// context's).",
            f"await {page}.setViewportSize({{ width: {w}, height: {h} }});",
            _media(e, page),
        ]
    out = []
    if e.width and e.height:
        out.append(f"await {page}.setViewportSize({{ width: {e.width}, height: {e.height} }});")
    out.append(_media(e, page))
    return out
