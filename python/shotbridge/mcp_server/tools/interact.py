"""``interact``: act on the tracked tab: navigate, click, hover, type, press keys, scroll, raw CDP.

One function per action (:data:`ACTIONS`). Navigation goes straight to the extension's
``navigate``; every other action is the host's ``interact`` command, which maps screenshot pixels
and labels to the page (its arguments and result: shotbridge.wire.interact).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Awaitable, Callable
from typing import Annotated, Any
from urllib.parse import urlsplit

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, ContentBlock, ToolAnnotations
from pydantic import Field, ValidationError

from shotbridge.client import upload_files
from shotbridge.mcp_server import action_text, arg_errors, content, shots
from shotbridge.mcp_server.failures import to_tool_error
from shotbridge.mcp_server.ratelimit import Refusal, Ticket
from shotbridge.mcp_server.state import NAVIGATE_TIMEOUT_MS, ServerState
from shotbridge.wire.errors import CommandError
from shotbridge.wire.extension import NavigateArgs
from shotbridge.wire.interact import (
    CdpResult,
    DragTarget,
    InteractArgs,
    InteractResult,
    Navigated,
    ScreenshotFailed,
    Tab,
)
from shotbridge.wire.model import Model
from shotbridge.wire.screenshot import ScreenshotResult

ACTION_NAMES = (
    "navigate", "click", "hover", "type", "keypress", "scroll", "dialog", "select", "upload",
    "drag", "wait", "cdp",
)  # fmt: skip
NAVIGATIONS = ("url", "back", "forward", "reload")
SCHEMES = ("http", "https", "file", "about", "data")
BUTTONS = ("left", "right", "middle")
INPUT_TIMEOUT_MS = 15_000
CDP_TEXT_MAX = 20_000

DESCRIPTION = """\
Act on the tracked tab with trusted input, by selector, label (of an annotated screenshot) or \
x, y (pixels of screenshot_id, default latest). click, hover, type, keypress, scroll \
(delta_x/y, to, or a target), navigate, dialog (answer it), select (<select> \
or ARIA options), upload, drag, wait (until text or selector appears, gone: disappears; url \
matches; else network quiet), cdp (raw DevTools, if the user allowed it). Says what it hit; \
include_screenshot adds a screenshot."""


class ToolArgs(Model):
    """The tool's parameters, as the model sees them in the schema (the order is the schema's)."""

    action: Annotated[
        str, Field(description="What to do.", json_schema_extra={"enum": list(ACTION_NAMES)})
    ]
    selector: Annotated[str | None, Field(description="CSS selector of the target.")] = None
    label: Annotated[
        int | None, Field(ge=1, description="A label of the latest annotated screenshot.")
    ] = None
    x: Annotated[float | None, Field(description="Image pixel x.")] = None
    y: Annotated[float | None, Field(description="Image pixel y.")] = None
    screenshot_id: Annotated[
        int | None, Field(description="Screenshot of x, y; default the latest.")
    ] = None
    text: Annotated[str | None, Field(description="type, wait: the text.")] = None
    clear: Annotated[bool, Field(description="type: replace the content.")] = False
    key: Annotated[str | None, Field(description='keypress: "Enter", "Control+A", …')] = None
    modifiers: Annotated[
        list[str] | None, Field(description="Held keys: Alt, Control, Meta, Shift.")
    ] = None
    button: Annotated[
        str, Field(description="click: mouse button.", json_schema_extra={"enum": list(BUTTONS)})
    ] = "left"
    click_count: Annotated[int, Field(ge=1, le=3, description="2 = double click.")] = 1
    delta_x: Annotated[float, Field(description="scroll: CSS px right.")] = 0
    delta_y: Annotated[float, Field(description="scroll: CSS px down.")] = 0
    to: Annotated[
        str | float | dict[str, Any] | None,
        Field(description='scroll: "top", "bottom", y; drag: {selector|label|x,y}.'),
    ] = None
    values: Annotated[
        list[str | int] | None, Field(description="select: values or labels (int: index).")
    ] = None
    files: Annotated[list[str] | None, Field(description="upload: file paths.")] = None
    gone: Annotated[bool | None, Field(description="wait: until it disappears.")] = None
    timeout: Annotated[float | None, Field(ge=0, le=60, description="wait: s (5).")] = None
    url: Annotated[str | None, Field(description="navigate: URL; wait: glob or part.")] = None
    navigation: Annotated[
        str,
        Field(
            description="navigate: url, back, forward or reload.",
            json_schema_extra={"enum": list(NAVIGATIONS)},
        ),
    ] = "url"
    new_tab: Annotated[bool, Field(description="navigate: in a new tracked tab.")] = False
    method: Annotated[str | None, Field(description="cdp: method.")] = None
    params: Annotated[dict[str, Any] | None, Field(description="cdp: params.")] = None
    accept: Annotated[bool | None, Field(description="dialog: true = OK, false = Cancel.")] = None
    prompt_text: Annotated[str | None, Field(description="dialog: the prompt() answer.")] = None
    keep_beforeunload: Annotated[
        bool, Field(description="navigate: keep a 'Leave site?' prompt open.")
    ] = False
    include_screenshot: Annotated[bool, Field(description="Add a screenshot after it settles.")] = (
        False
    )


# What the tool passes on to the host's interact as the model gave it (None: left out).
PASSED = {
    "action", "selector", "label", "x", "y", "screenshot_id", "text", "clear", "key", "button",
    "click_count", "delta_x", "delta_y", "method", "params", "values",
}  # fmt: skip


def register(server: MCPServer, state: ServerState) -> None:
    @server.tool(
        name="interact",
        description=DESCRIPTION,
        annotations=ToolAnnotations(
            title="Interact with the page",
            read_only_hint=False,
            destructive_hint=False,
            idempotent_hint=False,
            open_world_hint=True,
        ),
        structured_output=False,
    )
    @arg_errors.parameters(ToolArgs)
    async def interact(**kwargs: Any) -> CallToolResult:
        a = ToolArgs.model_validate(kwargs)
        act = ACTIONS.get(a.action)
        if act is None:
            raise ToolError(
                f"Unknown action {a.action!r}. Available actions: {', '.join(ACTION_NAMES)}."
            )
        if a.action != "dialog" and (a.accept is not None or a.prompt_text is not None):
            raise ToolError('accept and prompt_text belong to action="dialog".')
        return await act(state, a)


# ---- the actions ----------------------------------------------------------------------------


async def _navigate(state: ServerState, a: ToolArgs) -> CallToolResult:
    """Straight to the extension's navigate: the host has nothing to map."""
    args = _navigate_args(a.navigation, a.url, a.new_tab)
    if a.keep_beforeunload:
        args.keep_beforeunload = True
    try:
        raw = await state.connection.request(
            "navigate",
            args.model_dump(mode="python", exclude_unset=True),
            timeout=NAVIGATE_TIMEOUT_MS / 1000 + 5,
        )
    except Exception as exc:
        raise to_tool_error(exc) from exc
    blocks: list[ContentBlock] = [content.text(_navigated(a.navigation, raw))]
    if a.include_screenshot:
        blocks += await _screenshot_blocks(state)
    return content.result(blocks, tool="interact")


async def _dialog(state: ServerState, a: ToolArgs) -> CallToolResult:
    """Answer the JavaScript dialog open in the tracked tab (through the host's interact)."""
    if a.accept is None:
        raise ToolError(
            'action="dialog" needs accept: true (OK / Leave) or false (Cancel / Stay); a '
            "prompt also takes prompt_text."
        )
    if a.prompt_text is not None and not a.accept:
        raise ToolError("prompt_text is typed into a prompt that is accepted: pass accept=true.")
    args = InteractArgs(action="dialog", accept=a.accept, timeout_ms=INPUT_TIMEOUT_MS)
    if a.prompt_text is not None:
        args.prompt_text = a.prompt_text
    try:
        raw = await _send(state, args, timeout=INPUT_TIMEOUT_MS / 1000 + 5)
    except Exception as exc:
        raise to_tool_error(exc) from exc
    done = InteractResult.model_validate(raw)
    return content.result([content.text(_answered(done))], tool="interact")


async def _input(state: ServerState, a: ToolArgs) -> CallToolResult:
    """click, hover, type, keypress, scroll: the host aims, the extension acts."""
    raw, ticket = await _host_interact(state, a)
    done = InteractResult.model_validate(raw)
    blocks = [content.text(_acted(a.action, done)), *_after_blocks(done.screenshot, ticket)]
    return content.result(blocks, tool="interact")


async def _act(state: ServerState, a: ToolArgs) -> CallToolResult:
    """select, upload, drag, wait: the host aims, the extension acts, a sentence says what now."""
    raw, ticket = await _host_interact(state, a)
    done = InteractResult.model_validate(raw)
    if a.action == "wait":
        said = action_text.waited(
            done, action_text.condition(a.text, a.selector, a.url, bool(a.gone))
        )
        if not done.met:
            raise ToolError(said)
    else:
        said = {"select": action_text.selected, "upload": action_text.uploaded}.get(
            a.action, action_text.dragged
        )(done)
    lines = [
        said,
        *done.notes,
        json.dumps({"url": done.url, "title": done.title}, ensure_ascii=False),
    ]
    blocks = [content.text("\n".join(lines)), *_after_blocks(done.screenshot, ticket)]
    return content.result(blocks, tool="interact")


async def _cdp(state: ServerState, a: ToolArgs) -> CallToolResult:
    """Raw DevTools: only if the user started the server with --allow-cdp (and the host agrees)."""
    if not state.allow_cdp:
        raise ToolError(
            "Raw CDP is off. It is the user's decision: they start the server with "
            "`shotctl mcp --allow-cdp` and allow it in the host with "
            "`shotctl config allow-cdp on`."
        )
    raw, _ = await _host_interact(state, a)
    return content.result(_cdp_blocks(CdpResult.model_validate(raw)), tool="interact")


Act = Callable[[ServerState, ToolArgs], Awaitable[CallToolResult]]
ACTIONS: dict[str, Act] = {
    "navigate": _navigate,
    "dialog": _dialog,
    "cdp": _cdp,
    **dict.fromkeys(("click", "hover", "type", "keypress", "scroll"), _input),
    "select": _act,
    "upload": _act,
    "drag": _act,
    "wait": _act,
}


# ---- talking to the host --------------------------------------------------------------------


async def _send(state: ServerState, args: InteractArgs, *, timeout: float) -> dict[str, Any]:
    """The host's interact with the arguments that were set (the wire keys of each action)."""
    payload = args.model_dump(mode="python", exclude_unset=True)
    return await state.connection.request("interact", payload, timeout=timeout)


def _input_args(state: ServerState, a: ToolArgs) -> InteractArgs:
    if a.button not in BUTTONS:
        raise ToolError(f"Unknown button {a.button!r}. Valid values: {', '.join(BUTTONS)}.")
    to = a.to
    if isinstance(to, str) and to not in ("top", "bottom"):
        try:
            to = float(to)
        except ValueError:
            raise ToolError('to must be "top", "bottom" or a y offset in CSS px.') from None
    if isinstance(to, dict):  # a drag's end, as its model when it is one (the host judges others)
        with contextlib.suppress(ValidationError):
            to = DragTarget.model_validate(to)
    given = a.model_dump(include=PASSED, exclude_none=True)
    if to is not None:
        given["to"] = to
    given |= _action_args(a)
    # Built unchecked: each argument was validated by the SDK, and whether they fit together
    # (x without y, a label and a selector) is the host's to judge: its answer names the fix.
    return InteractArgs.model_construct(
        **given,
        modifiers=a.modifiers or [],
        allow_cdp=state.allow_cdp,
        timeout_ms=INPUT_TIMEOUT_MS,
    )


def _action_args(a: ToolArgs) -> dict[str, Any]:
    """What upload and wait pass on besides the shared fields."""
    out: dict[str, Any] = {}
    if a.files is not None:
        # Read here, where the server runs (relative to its folder): the host may be on another
        # machine, and reads no path itself.
        paths = [os.path.abspath(os.path.expanduser(f)) for f in a.files]
        try:
            out["uploads"] = upload_files.read_files(paths)
        except CommandError as exc:
            raise ToolError(exc.message) from None
    if a.action == "wait":
        out.update(
            gone=bool(a.gone), wait_ms=int((a.timeout if a.timeout is not None else 5) * 1000)
        )
        if a.url is not None:
            out["url"] = a.url
    return out


async def _host_interact(
    state: ServerState, a: ToolArgs
) -> tuple[dict[str, Any], Ticket | Refusal | None]:
    """Run an input or cdp action on the host; with include_screenshot, its screenshot ticket."""
    args = _input_args(state, a)
    ticket = state.budget.acquire(auto=False) if a.include_screenshot else None
    if isinstance(ticket, Ticket):
        args.include_screenshot = True
        args.screenshot = shots.screenshot_args(state)
    try:
        wait_s = args.wait_ms / 1000 if a.action == "wait" else 0
        return await _send(state, args, timeout=INPUT_TIMEOUT_MS / 1000 + 25 + wait_s), ticket
    except Exception as exc:
        if isinstance(ticket, Ticket):
            ticket.cancel()
        raise to_tool_error(exc, selector=a.selector) from exc


# ---- what the model reads -------------------------------------------------------------------


def _after_blocks(
    shot: ScreenshotFailed | ScreenshotResult | None, ticket: Ticket | Refusal | None
) -> list[ContentBlock]:
    """The screenshot after an action, or why there is none."""
    if isinstance(ticket, Refusal):
        return [content.text(f"[Screenshot not included: {ticket.reason}]")]
    if isinstance(shot, ScreenshotResult):
        return content.screenshot_blocks(shot, prefix="Screenshot after it")
    if isinstance(shot, ScreenshotFailed):
        if ticket is not None:
            ticket.cancel()
        return [content.text(f"[Screenshot unavailable: {shot.error.message}]")]
    return []


def _answered(done: InteractResult) -> str:
    d = done.dialog
    verb = "Accepted" if done.accepted else "Dismissed"
    what = f"the {d.type} dialog {json.dumps(d.message, ensure_ascii=False)}" if d else "the dialog"
    lines = [f"{verb} {what}."]
    if done.prompt_text is not None:
        lines.append(f"The prompt returned {json.dumps(done.prompt_text, ensure_ascii=False)}.")
    lines += done.notes
    given = done.model_dump(mode="python")  # only the keys the host sent
    facts = {k: given[k] for k in ("url", "title", "accepted", "prompt_text") if k in given}
    lines.append(json.dumps(facts, ensure_ascii=False, separators=(",", ":")))
    return "\n".join(lines)


async def _screenshot_blocks(state: ServerState) -> list[ContentBlock]:
    shot = await shots.explicit(state, shots.screenshot_request(state))
    if isinstance(shot, CallToolResult):  # only under shotctl mcp --cooldown
        return [content.text("[Screenshot not included: rate-limited]")]
    return content.screenshot_blocks(shot, prefix="Screenshot after it")


VERBS = {
    "click": "Clicked",
    "hover": "Hovered",
    "type": "Typed",
    "keypress": "Pressed",
    "scroll": "Scrolled",
}
# What an input action's facts line carries, in this order, when the host sent it (not null).
FACTS = (
    "hit", "focused", "url", "title", "scroll", "navigated", "screenshot_id", "label",
    "scroll_corrected", "retargeted",
)  # fmt: skip


def _acted(action: str, done: InteractResult) -> str:
    """A sentence for the model, then the facts as JSON."""
    verb = VERBS.get(action, action)
    p = done.point
    where = f" at CSS ({p.x:g}, {p.y:g})" if p else ""
    hit = f"; hit {action_text.describe(done.hit)}" if done.hit or p else ""
    lines = [f"{verb}{where}{hit}."]
    if done.navigated:
        lines.append(f"The page navigated to {done.url}.")
    lines += done.notes
    given = done.model_dump(mode="python")
    facts = {k: given[k] for k in FACTS if given.get(k) is not None}
    lines.append(json.dumps(facts, ensure_ascii=False, separators=(",", ":")))
    return "\n".join(lines)


def _cdp_blocks(done: CdpResult) -> list[ContentBlock]:
    image = done.image
    if image is not None:
        shot_id = (
            f"; screenshot_id {image.screenshot_id})." if image.screenshot_id is not None else ")."
        )
        return [
            content.image(image.jpeg),
            content.text(
                f"{done.method}: the screenshot as a {image.width}×{image.height} px JPEG "
                f"({image.bytes:,} bytes; captured at {image.source_width}×{image.source_height} "
                f"px; {image.masked} secret region(s) masked{shot_id}"
            ),
        ]
    body = json.dumps(done.result, ensure_ascii=False)
    if len(body) > CDP_TEXT_MAX:
        body = body[:CDP_TEXT_MAX] + f"… [cut: {len(body):,} chars in all]"
    return [content.text(f"{done.method} → {body}")]


def _navigate_args(navigation: str, url: str | None, new_tab: bool) -> NavigateArgs:
    if navigation not in NAVIGATIONS:
        raise ToolError(
            f"Unknown navigation {navigation!r}. Valid values: {', '.join(NAVIGATIONS)}."
        )
    if navigation != "url":
        if url:
            raise ToolError(f"navigation={navigation!r} takes no url.")
        return NavigateArgs(action=navigation, timeout_ms=NAVIGATE_TIMEOUT_MS)
    if not url or not url.strip():
        raise ToolError("action='navigate' needs url (or navigation='back'|'forward'|'reload').")
    url = url.strip()
    if urlsplit(url).scheme.lower() not in SCHEMES:
        raise ToolError(
            f"url must be absolute with a scheme ({', '.join(SCHEMES)}), e.g. 'https://{url}'."
        )
    return NavigateArgs(action="goto", url=url, new_tab=new_tab, timeout_ms=NAVIGATE_TIMEOUT_MS)


def _navigated(navigation: str, raw: dict[str, Any]) -> str:
    verb = {"url": "Navigated to", "back": "Went back to", "forward": "Went forward to"}.get(
        navigation, "Reloaded"
    )
    done = Navigated.model_validate(raw)
    # The extension answers {"tab": TabInfo} once the load completes; a bare TabInfo reads the same.
    tab = done.tab if done.tab is not None else Tab.model_validate(raw)
    title = f' "{tab.title}"' if tab.title else ""
    where = f" (tab {tab.id})" if tab.id is not None else ""
    url = tab.url if tab.url is not None else "?"
    if done.dialog is not None:  # a dialog the page opened while loading holds the load
        first = f"{verb} {url}{title}{where}."
    else:
        first = f"{verb} {url}{title}{where}; the page finished loading."
    return "\n".join([first, *done.notes])
