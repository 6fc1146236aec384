"""The host's ``interact`` command: act on the tracked tab where the model saw something.

``x``/``y`` are pixels of a screenshot the model was shown (``screenshot_id``, default the latest);
``label`` is a numbered label of the latest annotated screenshot. Both are mapped to CSS viewport
pixels here with that screenshot's scale and origin (``shotbridge.host.shots``), and the extension
is
told the screenshot's URL, scroll position and viewport: it refuses (``stale_screenshot``) when the
tab shows another URL now or a pixel's viewport changed (resize, zoom, Chrome's debugging bar; a
label is then re-aimed at its element), and shifts the point with the content when the page has
scrolled since. A
``selector`` needs no screenshot. The extension performs the action with trusted CDP input and
reports what was under the point; ``include_screenshot`` appends a fresh screenshot.
"""

from __future__ import annotations

import logging
from typing import Any, Literal

from pydantic import Field, model_validator

from shotbridge.host import screenshot
from shotbridge.host.screenshot import Link
from shotbridge.host.shots import Shot, ShotRegistry, image_to_viewport, label_target
from shotbridge.wire.errors import CommandError, ErrorCode
from shotbridge.wire.model import Model

log = logging.getLogger(__name__)

NAVIGATIONS = ("back", "forward", "reload")
Action = Literal[
    "click",
    "hover",
    "type",
    "keypress",
    "scroll",
    "navigate",
    "back",
    "forward",
    "reload",
    "cdp",
    "dialog",
]


class InteractArgs(Model):
    """Arguments of the bus command ``interact``."""

    action: Action
    # Where: one of x/y (pixels of screenshot_id), label, selector.
    x: float | None = None
    y: float | None = None
    label: int | None = Field(None, ge=1)
    selector: str | None = None
    screenshot_id: int | None = None
    # What.
    text: str | None = None  # type
    clear: bool = False  # type: replace the field's content instead of inserting at the caret
    key: str | None = None  # keypress: "Enter", "Control+A", …
    modifiers: list[str] = Field(default_factory=list)  # held during click / keypress
    button: Literal["left", "right", "middle"] = "left"
    click_count: int = Field(1, ge=1, le=3)  # 2 = double click
    delta_x: float = 0.0  # scroll by, CSS px
    delta_y: float = 0.0
    to: Literal["top", "bottom"] | float | None = None  # scroll to a y offset, the top, the bottom
    # navigate.
    url: str | None = None
    navigation: Literal["url", "back", "forward", "reload"] | None = None
    new_tab: bool = False
    # A beforeunload prompt ("Leave site?") of the page being left is accepted, since the model
    # asked to leave; keep_beforeunload=True leaves it open for action="dialog" to answer.
    keep_beforeunload: bool = False
    # dialog: answer the JavaScript dialog open in the tab (OK / Leave = accept).
    accept: bool | None = None
    prompt_text: str | None = None  # a prompt()'s answer (with accept=True)
    # Raw CDP: allowed by the user's host config only (shotbridge.host.rawcdp); allow_cdp is the MCP
    # server saying it was started with --allow-cdp, and grants nothing by itself.
    method: str | None = None
    params: dict[str, Any] | None = None
    allow_cdp: bool = False
    # After the action.
    include_screenshot: bool = False
    screenshot: dict[str, Any] = Field(default_factory=dict)  # args of that screenshot
    tab_id: int | None = None
    timeout_ms: int = Field(10_000, ge=100, le=120_000)

    @model_validator(mode="after")
    def _one_target(self) -> InteractArgs:
        if (self.x is None) != (self.y is None):
            raise ValueError("give both x and y, or neither")
        targets = [self.x is not None, self.label is not None, bool(self.selector)]
        if sum(targets) > 1:
            raise ValueError("give one of x/y, label or selector")
        return self

    @property
    def has_target(self) -> bool:
        return self.x is not None or self.label is not None or bool(self.selector)


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
    if a.to is not None:
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


def _stale_tab(shot: Shot, tab: int | None) -> None:
    if shot.tab_id is not None and tab is not None and shot.tab_id != tab:
        raise CommandError(
            ErrorCode.STALE_SCREENSHOT,
            f"Screenshot {shot.id} was taken in tab {shot.tab_id}, but the tab to act on is "
            f"{tab}: take a fresh screenshot of this tab before acting by coordinates or labels.",
        )


async def run(link: Link, shots: ShotRegistry, raw: dict[str, Any]) -> dict[str, Any]:
    a = InteractArgs.model_validate(raw)
    check_action(a)
    timeout = a.timeout_ms / 1000 + 2
    result: dict[str, Any]
    if a.action in ("navigate", *NAVIGATIONS):
        result = await _navigate(link, a, timeout)
    elif a.action == "dialog":
        result = await _dialog(link, a, timeout)
    elif a.action == "cdp":  # the user's gate, the log and the masks: shotbridge.host.rawcdp
        from shotbridge.host import rawcdp

        return await rawcdp.run(link, shots, a.model_dump(include=rawcdp.ARGS, exclude_none=True))
    else:
        ext_args, shot = input_args(shots, a)
        if shot is not None:
            _stale_tab(
                shot, a.tab_id if a.tab_id is not None else getattr(link, "tracked_tab", None)
            )
        result = await link.request("input", ext_args, timeout=timeout)
        if shot is not None:
            result["screenshot_id"] = shot.id
            result["css_point"] = {"x": ext_args["x"], "y": ext_args["y"]}
            if a.label is not None:
                result["label"] = a.label
                result["label_selector"] = ext_args.get("expect_selector")
    if a.include_screenshot:
        result["screenshot"] = await _after_screenshot(link, shots, a)
    return result


async def _navigate(link: Link, a: InteractArgs, timeout: float) -> dict[str, Any]:
    nav = a.action if a.action in NAVIGATIONS else (a.navigation or "url")
    args: dict[str, Any] = {
        "tab_id": a.tab_id,
        "timeout_ms": a.timeout_ms,
        "keep_beforeunload": a.keep_beforeunload,
    }
    if nav == "url":
        args.update(action="goto", url=a.url, new_tab=a.new_tab)
    else:
        args["action"] = nav
    done = await link.request("navigate", args, timeout=timeout)
    tab = done.get("tab", {})
    out = {
        "action": "navigate",
        "navigation": nav,
        "navigated": True,
        "tab": tab,
        "url": tab.get("url"),
        "title": tab.get("title"),
    }
    # A dialog the new page opened while loading, and what it took to leave the old one.
    return out | {k: done[k] for k in ("dialog", "notes") if done.get(k)}


async def _dialog(link: Link, a: InteractArgs, timeout: float) -> dict[str, Any]:
    """Accept or dismiss the tab's JavaScript dialog (Page.handleJavaScriptDialog)."""
    args: dict[str, Any] = {"tab_id": a.tab_id, "timeout_ms": a.timeout_ms, "accept": a.accept}
    if a.prompt_text is not None:
        args["prompt_text"] = a.prompt_text
    return await link.request("dialog", args, timeout=timeout)


async def _after_screenshot(link: Link, shots: ShotRegistry, a: InteractArgs) -> dict[str, Any]:
    args = {"tab_id": a.tab_id, **a.screenshot}
    args.pop("url", None)  # the action decided where the tab is; never navigate away again
    try:
        return await screenshot.take(link, args, shots)
    except CommandError as exc:
        # The action happened; a failed screenshot after it must not read as a failed action.
        log.info("screenshot after interact failed: %s", exc)
        return {"error": {"code": exc.code, "message": exc.message}}
