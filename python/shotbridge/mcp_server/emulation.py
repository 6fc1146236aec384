"""``configure action="emulate"``: the model's settings checked into one clear sentence each, and
the answer told in words (what the tab emulates now, what the page reports, who sees it)."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver.exceptions import ToolError

from shotbridge.wire.emulate import MAX_SCALE, MAX_SIZE, MIN_SIZE, PRESETS, EmulateRequest
from shotbridge.wire.extension import EmulateReply

KEYS = (
    "preset",
    "width",
    "height",
    "device_scale_factor",
    "mobile",
    "touch",
    "color_scheme",
    "reduced_motion",
    "reset",
)
CHOICES = {
    "color_scheme": ("light", "dark", "no-preference"),
    "reduced_motion": ("reduce", "no-preference"),
}
EXAMPLE = '{"preset": "iPhone 15"}, {"width": 800, "height": 600} or {"color_scheme": "dark"}'


def _size(key: str, v: Any) -> str | None:
    ok = isinstance(v, int) and not isinstance(v, bool) and MIN_SIZE <= v <= MAX_SIZE
    return None if ok else f"{key} must be an integer from {MIN_SIZE} to {MAX_SIZE} (CSS px)"


def _scale(v: Any) -> str | None:
    ok = isinstance(v, int | float) and not isinstance(v, bool) and 0 < v <= MAX_SCALE
    return None if ok else f"device_scale_factor must be a number above 0, at most {MAX_SCALE:g}"


def _flaw(key: str, v: Any) -> str | None:
    """What is wrong with one setting, or None."""
    if key in ("width", "height"):
        return _size(key, v)
    if key == "device_scale_factor":
        return _scale(v)
    if key in ("mobile", "touch"):
        return None if isinstance(v, bool) else f"{key} must be true or false"
    if key in CHOICES:
        names = " or ".join(f'"{c}"' for c in CHOICES[key])
        return None if v in CHOICES[key] else f"{key} must be {names}"
    if key == "preset" and not (isinstance(v, str) and _known(v)):
        return f"preset {v!r} is not known; presets: {', '.join(PRESETS)}"
    if key == "reset" and v is not True:
        return "reset must be true (it undoes every emulation setting)"
    return None


def _known(name: str) -> bool:
    key = "".join(name.lower().split())
    return any("".join(n.lower().split()) == key for n in PRESETS)


def request(settings: dict[str, Any] | None, tab_id: int | None) -> EmulateRequest:
    """The host command's arguments, or a ToolError naming the first setting that is wrong."""
    if not settings:
        raise ToolError(
            f'action="emulate" needs settings, e.g. {EXAMPLE}; {{"reset": true}} undoes it.'
        )
    unknown = [k for k in settings if k not in KEYS]
    if unknown:
        raise ToolError(
            f"emulate settings: unknown key {unknown[0]!r}; use {', '.join(KEYS)}. "
            "Nothing was changed."
        )
    if settings.get("reset") is True and len(settings) > 1:
        raise ToolError(
            'emulate settings: {"reset": true} takes no other setting. Nothing was changed.'
        )
    for key, value in settings.items():
        if why := _flaw(key, value):
            raise ToolError(f"emulate settings: {why}. Nothing was changed.")
    return EmulateRequest.model_validate({**settings, "tab_id": tab_id})


def describe(reply: EmulateReply) -> str:
    """What the tab emulates now, what its page reports, and who sees it."""
    e = reply.emulation
    where = f"Tab {reply.tab_id}" + (f" ({reply.url})" if reply.url else "")
    if e.empty:
        return f"{where}: no emulation; the page sees the browser's own window and settings again."
    parts: list[str] = []
    if e.width or e.height:
        parts.append(f"{e.width or 'window'}×{e.height or 'window'} CSS px")
    if e.device_scale_factor:
        parts.append(f"device scale factor {e.device_scale_factor:g}")
    parts += [name for name, on in (("mobile", e.mobile), ("touch", e.touch)) if on]
    if e.color_scheme:
        parts.append(f"prefers-color-scheme {e.color_scheme}")
    if e.reduced_motion:
        parts.append(f"prefers-reduced-motion {e.reduced_motion}")
    text = f"{where} now emulates {e.preset + ': ' if e.preset else ''}{', '.join(parts)}."
    if p := reply.page:
        media = ", prefers dark" if p.dark else ""
        text += (
            f" The page reports {p.width:g}×{p.height:g} at devicePixelRatio "
            f"{p.device_pixel_ratio:g}, {p.touch_points} touch points{media}."
        )
    text += " Screenshots and x/y clicks use the emulated viewport."
    if reply.headed:
        text += (
            " This is a tab of the user's own browser: they see it emulated too (with Chrome's "
            'debugging bar) until settings {"reset": true} or this session ends.'
        )
    return text
