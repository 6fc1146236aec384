"""The host's ``interact`` command: act on the tracked tab where the model saw something.

``x``/``y`` are pixels of a screenshot the model was shown (``screenshot_id``, default the latest);
``label`` is a numbered label of the latest annotated screenshot. Both are mapped to CSS viewport
pixels here with that screenshot's scale and origin (``shotbridge.host.shots``), and the extension
is told the screenshot's URL, scroll position and viewport: it refuses (``stale_screenshot``) when
the tab shows another URL now or a pixel's viewport changed (resize, zoom, Chrome's debugging bar;
a label is then re-aimed at its element), and shifts the point with the content when the page has
scrolled since. A ``selector`` needs no screenshot. The extension performs the action with trusted
CDP input and reports what was under the point; ``include_screenshot`` appends a fresh screenshot.

Each action is one function in :data:`ACTIONS`; the arguments and the result are the models of
shotbridge.wire.interact (host.main dumps the result at the bus edge).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import ValidationError

from shotbridge.host import actions, screenshot
from shotbridge.host.screenshot import Link
from shotbridge.host.shots import Shot, ShotRegistry, image_to_viewport, label_target
from shotbridge.wire.errors import CommandError, ErrorCode
from shotbridge.wire.interact import (
    HISTORY,
    XY,
    CdpResult,
    DragTarget,
    ErrorInfo,
    InteractArgs,
    InteractResult,
    Navigated,
    ScreenshotFailed,
    Tab,
)
from shotbridge.wire.screenshot import ScreenshotResult

log = logging.getLogger(__name__)


def input_args(shots: ShotRegistry, a: InteractArgs) -> tuple[dict[str, Any], Shot | None]:
    """The extension's ``input`` arguments for ``a``, and the screenshot its point came from."""
    out: dict[str, Any] = {
        "action": a.action,
        "tab_id": a.tab_id,
        "timeout_ms": a.timeout_ms,
        "modifiers": a.modifiers,
        "button": a.button,
        "click_count": a.click_count,
        "delta_x": a.delta_x,
        "delta_y": a.delta_y,
        "clear": a.clear,
    }
    if a.text is not None:
        out["text"] = a.text
    if a.key is not None:
        out["key"] = a.key
    if a.to is not None and not isinstance(a.to, DragTarget):
        out["to"] = a.to if isinstance(a.to, str) else {"y": a.to}
    shot: Shot | None = None
    if a.selector:
        out["selector"] = a.selector
    elif a.label is not None:
        shot = shots.for_label(a.screenshot_id)
        point, ann = label_target(shot, a.label)
        out.update(x=point.x, y=point.y, expect_selector=ann.target)
    elif a.x is not None and a.y is not None:
        shot = shots.for_point(a.screenshot_id)
        point = image_to_viewport(shot, a.x, a.y)
        out.update(x=point.x, y=point.y)
    if shot is not None:
        out["from_scroll"] = shot.scroll.model_dump()
        out["expect_url"] = shot.url
        # The extension refuses a pixel (and re-aims a label) when the viewport differs now.
        out["expect_viewport"] = shot.viewport_key()
        out["screenshot_id"] = shot.id
    return out, shot


def check_action(a: InteractArgs) -> None:
    """Refuse argument combinations the action cannot use, with the fix in the message."""
    bad = lambda msg: CommandError(ErrorCode.BAD_REQUEST, msg)  # noqa: E731
    if a.action in ("click", "hover") and not a.has_target:
        raise bad(f"{a.action} needs x/y (pixels of a screenshot), a label, or a selector.")
    if a.action == "type" and a.text is None:
        raise bad(
            "type needs text (and x/y, a label or a selector of the field, or it types "
            "into the focused element)."
        )
    if a.action == "keypress" and not a.key:
        raise bad('keypress needs key, e.g. "Enter", "Tab", "Escape", "Control+A".')
    if a.action == "scroll" and not (a.delta_x or a.delta_y or a.to is not None or a.has_target):
        raise bad(
            'scroll needs delta_x/delta_y, to ("top", "bottom" or a y offset), a label or a '
            "selector to bring into view."
        )
    if a.action == "navigate" and not a.url and a.navigation in (None, "url"):
        raise bad("navigate needs url (or navigation: back, forward or reload).")
    if a.action == "cdp" and not a.method:
        raise bad('cdp needs method, e.g. "Page.captureScreenshot", and optional params.')
    if a.action == "dialog" and a.accept is None:
        raise bad(
            "dialog needs accept: true (OK, Leave) or false (Cancel, Stay); a prompt takes "
            "prompt_text too."
        )
    if a.action != "dialog" and (a.accept is not None or a.prompt_text is not None):
        raise bad('accept and prompt_text belong to action="dialog".')
    if a.action == "dialog" and a.prompt_text is not None and not a.accept:
        raise bad("prompt_text is typed into a prompt that is accepted: pass accept=true.")
    if a.action in ("select", "upload", "drag", "wait"):
        actions.check(a)
    elif isinstance(a.to, DragTarget):
        raise bad('to as {selector, label or x/y} belongs to action="drag".')


def _stale_tab(shot: Shot, tab: int | None) -> None:
    if shot.tab_id is not None and tab is not None and shot.tab_id != tab:
        raise CommandError(
            ErrorCode.STALE_SCREENSHOT,
            f"Screenshot {shot.id} was taken in tab {shot.tab_id}, but the tab to act on is "
            f"{tab}: take a fresh screenshot of this tab before acting by coordinates or labels.",
        )


Act = Callable[[Link, ShotRegistry, InteractArgs, float], Awaitable[InteractResult | CdpResult]]


def parse(raw: dict[str, Any]) -> InteractArgs:
    """The arguments, or one sentence naming the field and what it takes."""
    try:
        return InteractArgs.model_validate(raw)
    except ValidationError as exc:
        errors = exc.errors()
        # Our own rules (value errors) say the fix; a union's other branches only add noise.
        ours = [e for e in errors if e["type"] == "value_error"]
        e = (ours or errors)[0]
        if ours:
            msg = str(e["msg"]).removeprefix("Value error, ")
        else:
            branch = ("literal[", "function")  # a union's branch names mean nothing to a caller
            where = ".".join(str(p) for p in e["loc"] if not str(p).startswith(branch))
            msg = f"{where}: {e['msg']}"
        raise CommandError(ErrorCode.BAD_REQUEST, msg + ".") from None


async def run(link: Link, shots: ShotRegistry, raw: dict[str, Any]) -> InteractResult | CdpResult:
    a = parse(raw)
    check_action(a)
    result = await ACTIONS.get(a.action, _input)(link, shots, a, a.timeout_ms / 1000 + 2)
    if a.include_screenshot and isinstance(result, InteractResult):
        result.screenshot = await _after_screenshot(link, shots, a)
    return result


async def _input(
    link: Link, shots: ShotRegistry, a: InteractArgs, timeout: float
) -> InteractResult:
    """click, hover, type, keypress, scroll: the extension's trusted input, aimed here."""
    ext_args, shot = input_args(shots, a)
    if shot is not None:
        _stale_tab(shot, a.tab_id if a.tab_id is not None else getattr(link, "tracked_tab", None))
    done = InteractResult.model_validate(await link.request("input", ext_args, timeout=timeout))
    if shot is not None:
        done.screenshot_id = shot.id
        done.css_point = XY(x=ext_args["x"], y=ext_args["y"])
        if a.label is not None:
            done.label = a.label
            done.label_selector = ext_args.get("expect_selector")
    return done


async def _navigate(
    link: Link, shots: ShotRegistry, a: InteractArgs, timeout: float
) -> InteractResult:
    nav = a.action if a.action in HISTORY else (a.navigation or "url")
    args: dict[str, Any] = {
        "tab_id": a.tab_id,
        "timeout_ms": a.timeout_ms,
        "keep_beforeunload": a.keep_beforeunload,
    }
    if nav == "url":
        args.update(action="goto", url=a.url, new_tab=a.new_tab)
    else:
        args["action"] = nav
    done = Navigated.model_validate(await link.request("navigate", args, timeout=timeout))
    tab = done.tab or Tab()
    out = InteractResult(
        action="navigate", navigation=nav, navigated=True, tab=tab, url=tab.url, title=tab.title
    )
    # A dialog the new page opened while loading, and what it took to leave the old one.
    if done.dialog is not None:
        out.dialog = done.dialog
    if done.notes:
        out.notes = done.notes
    return out


async def _dialog(
    link: Link, shots: ShotRegistry, a: InteractArgs, timeout: float
) -> InteractResult:
    """Accept or dismiss the tab's JavaScript dialog (Page.handleJavaScriptDialog)."""
    args: dict[str, Any] = {"tab_id": a.tab_id, "timeout_ms": a.timeout_ms, "accept": a.accept}
    if a.prompt_text is not None:
        args["prompt_text"] = a.prompt_text
    return InteractResult.model_validate(await link.request("dialog", args, timeout=timeout))


async def _cdp(link: Link, shots: ShotRegistry, a: InteractArgs, timeout: float) -> CdpResult:
    """Raw CDP, behind the user's gate, the log and the masks of shotbridge.host.rawcdp."""
    from shotbridge.host import rawcdp

    return await rawcdp.run(link, shots, a.model_dump(include=rawcdp.ARGS, exclude_none=True))


ACTIONS: dict[str, Act] = {
    "navigate": _navigate,
    **dict.fromkeys(HISTORY, _navigate),
    "dialog": _dialog,
    "cdp": _cdp,
    "select": actions.select,
    "upload": actions.upload,
    "drag": actions.drag,
    "wait": actions.wait,
}  # every other action is input


async def _after_screenshot(
    link: Link, shots: ShotRegistry, a: InteractArgs
) -> ScreenshotResult | ScreenshotFailed:
    args = {"tab_id": a.tab_id, **a.screenshot}
    args.pop("url", None)  # the action decided where the tab is; never navigate away again
    try:
        return await screenshot.take(link, args, shots.session)
    except CommandError as exc:
        # The action happened; a failed screenshot after it must not read as a failed action.
        log.info("screenshot after interact failed: %s", exc)
        return ScreenshotFailed(error=ErrorInfo(code=exc.code, message=exc.message))
