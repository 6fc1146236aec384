"""``interact``: act on the tracked tab: navigate, click, hover, type, press keys, scroll, raw CDP.

Navigation goes straight to the extension's ``navigate``; every other action is the host's
``interact`` command, which maps screenshot pixels and labels to the page
(shotbridge.host.interact).
"""

from __future__ import annotations

import json
from typing import Annotated, Any
from urllib.parse import urlsplit

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, ContentBlock, ToolAnnotations
from pydantic import Field

from shotbridge.mcp_server import content, shots
from shotbridge.mcp_server.failures import to_tool_error
from shotbridge.mcp_server.ratelimit import Refusal
from shotbridge.mcp_server.state import NAVIGATE_TIMEOUT_MS, ServerState

ACTIONS = ("navigate", "click", "hover", "type", "keypress", "scroll", "dialog", "cdp")
NAVIGATIONS = ("url", "back", "forward", "reload")
SCHEMES = ("http", "https", "file", "about", "data")
BUTTONS = ("left", "right", "middle")
INPUT_TIMEOUT_MS = 15_000
CDP_TEXT_MAX = 20_000

DESCRIPTION = """\
Act on the tracked tab with trusted input, by selector, label (of an annotated screenshot) or \
x, y (pixels of screenshot_id, default the latest; refused once the tab left that URL). click, \
hover, type (focus, insert text), keypress ("Enter", "Control+A"), scroll (delta_x/y, to, or a \
target), navigate (url or navigation), dialog (answer alert/confirm/prompt), cdp (raw DevTools; \
only if the user allowed it). Names the element hit and the URL after; include_screenshot adds \
a screenshot."""


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
    async def interact(
        action: Annotated[
            str,
            Field(
                description="What to do.",
                json_schema_extra={"enum": list(ACTIONS)},
            ),
        ],
        selector: Annotated[str | None, Field(description="CSS selector of the target.")] = None,
        label: Annotated[
            int | None,
            Field(ge=1, description="A label of the latest annotated screenshot."),
        ] = None,
        x: Annotated[float | None, Field(description="Image pixel x.")] = None,
        y: Annotated[float | None, Field(description="Image pixel y.")] = None,
        screenshot_id: Annotated[
            int | None,
            Field(description="Screenshot of x, y; default the latest."),
        ] = None,
        text: Annotated[str | None, Field(description="type: the text.")] = None,
        clear: Annotated[bool, Field(description="type: replace the content.")] = False,
        key: Annotated[
            str | None,
            Field(description='keypress: "Enter", "Control+A", …'),
        ] = None,
        modifiers: Annotated[
            list[str] | None,
            Field(description="Held keys: Alt, Control, Meta, Shift."),
        ] = None,
        button: Annotated[
            str,
            Field(description="click: mouse button.", json_schema_extra={"enum": list(BUTTONS)}),
        ] = "left",
        click_count: Annotated[int, Field(ge=1, le=3, description="2 = double click.")] = 1,
        delta_x: Annotated[float, Field(description="scroll: CSS px right.")] = 0,
        delta_y: Annotated[float, Field(description="scroll: CSS px down.")] = 0,
        to: Annotated[
            str | float | None,
            Field(description='scroll: "top", "bottom" or a y in CSS px.'),
        ] = None,
        url: Annotated[str | None, Field(description="navigate: absolute URL.")] = None,
        navigation: Annotated[
            str,
            Field(
                description="navigate: url, back, forward or reload.",
                json_schema_extra={"enum": list(NAVIGATIONS)},
            ),
        ] = "url",
        new_tab: Annotated[bool, Field(description="navigate: in a new tracked tab.")] = False,
        method: Annotated[str | None, Field(description="cdp: method.")] = None,
        params: Annotated[dict[str, Any] | None, Field(description="cdp: params.")] = None,
        accept: Annotated[
            bool | None,
            Field(description="dialog: true = OK, false = Cancel."),
        ] = None,
        prompt_text: Annotated[
            str | None,
            Field(description="dialog: the prompt() answer."),
        ] = None,
        keep_beforeunload: Annotated[
            bool,
            Field(description="navigate: leave a 'Leave site?' prompt open for action=dialog."),
        ] = False,
        include_screenshot: Annotated[
            bool, Field(description="Add a screenshot after it settles.")
        ] = False,
    ) -> CallToolResult:
        if action not in ACTIONS:
            raise ToolError(f"Unknown action {action!r}. Available actions: {', '.join(ACTIONS)}.")
        if action != "dialog" and (accept is not None or prompt_text is not None):
            raise ToolError('accept and prompt_text belong to action="dialog".')
        if action == "dialog":
            return await _dialog(state, accept, prompt_text)
        if action == "navigate":
            args = _navigate_args(navigation, url, new_tab)
            if keep_beforeunload:
                args["keep_beforeunload"] = True
            try:
                done = await state.connection.request(
                    "navigate", args, timeout=NAVIGATE_TIMEOUT_MS / 1000 + 5
                )
            except Exception as exc:
                raise to_tool_error(exc) from exc
            blocks: list[ContentBlock] = [content.text(_navigated(navigation, done))]
            if include_screenshot:
                blocks += await _screenshot_blocks(state)
            return content.result(blocks, tool="interact")
        if action == "cdp" and not state.allow_cdp:
            raise ToolError(
                "Raw CDP is off. It is the user's decision: they start the server with "
                "`shotctl mcp --allow-cdp` and allow it in the host with "
                "`shotctl config allow-cdp on`."
            )
        if button not in BUTTONS:
            raise ToolError(f"Unknown button {button!r}. Valid values: {', '.join(BUTTONS)}.")
        if isinstance(to, str) and to not in ("top", "bottom"):
            try:
                to = float(to)
            except ValueError:
                raise ToolError('to must be "top", "bottom" or a y offset in CSS px.') from None
        args = {
            "action": action,
            "selector": selector,
            "label": label,
            "x": x,
            "y": y,
            "screenshot_id": screenshot_id,
            "text": text,
            "clear": clear,
            "key": key,
            "modifiers": modifiers or [],
            "button": button,
            "click_count": click_count,
            "delta_x": delta_x,
            "delta_y": delta_y,
            "to": to,
            "method": method,
            "params": params,
            "allow_cdp": state.allow_cdp,
            "timeout_ms": INPUT_TIMEOUT_MS,
        }
        args = {k: v for k, v in args.items() if v is not None}
        ticket = None
        if include_screenshot:
            ticket = state.budget.acquire(auto=False)
            if not isinstance(ticket, Refusal):
                args["include_screenshot"] = True
                args["screenshot"] = shots.screenshot_args(state)
        try:
            done = await state.connection.request(
                "interact", args, timeout=INPUT_TIMEOUT_MS / 1000 + 25
            )
        except Exception as exc:
            if ticket is not None and not isinstance(ticket, Refusal):
                ticket.cancel()
            raise to_tool_error(exc, selector=selector) from exc
        if action == "cdp":
            return content.result(_cdp_blocks(done), tool="interact")
        blocks = [content.text(_acted(action, done))]
        shot = done.get("screenshot")
        if isinstance(ticket, Refusal):
            blocks.append(content.text(f"[Screenshot not included: {ticket.reason}]"))
        elif isinstance(shot, dict) and "jpeg" in shot:
            blocks += [
                content.image(shot["jpeg"]),
                content.text(content.describe_screenshot(shot, prefix="Screenshot after it")),
            ]
        elif isinstance(shot, dict) and "error" in shot:
            if ticket is not None and not isinstance(ticket, Refusal):
                ticket.cancel()
            blocks.append(content.text(f"[Screenshot unavailable: {shot['error']['message']}]"))
        return content.result(blocks, tool="interact")


async def _dialog(
    state: ServerState, accept: bool | None, prompt_text: str | None
) -> CallToolResult:
    """Answer the JavaScript dialog open in the tracked tab (through the host's interact)."""
    if accept is None:
        raise ToolError(
            'action="dialog" needs accept: true (OK / Leave) or false (Cancel / Stay); a '
            "prompt also takes prompt_text."
        )
    if prompt_text is not None and not accept:
        raise ToolError("prompt_text is typed into a prompt that is accepted: pass accept=true.")
    args: dict[str, Any] = {"action": "dialog", "accept": accept, "timeout_ms": INPUT_TIMEOUT_MS}
    if prompt_text is not None:
        args["prompt_text"] = prompt_text
    try:
        done = await state.connection.request("interact", args, timeout=INPUT_TIMEOUT_MS / 1000 + 5)
    except Exception as exc:
        raise to_tool_error(exc) from exc
    return content.result([content.text(_answered(done))], tool="interact")


def _answered(done: dict[str, Any]) -> str:
    d = done.get("dialog") or {}
    verb = "Accepted" if done.get("accepted") else "Dismissed"
    what = (
        f"the {d['type']} dialog {json.dumps(d.get('message', ''), ensure_ascii=False)}"
        if d
        else "the dialog"
    )
    lines = [f"{verb} {what}."]
    if done.get("prompt_text") is not None:
        lines.append(f"The prompt returned {json.dumps(done['prompt_text'], ensure_ascii=False)}.")
    lines += done.get("notes") or []
    facts = {k: done[k] for k in ("url", "title", "accepted", "prompt_text") if k in done}
    lines.append(json.dumps(facts, ensure_ascii=False, separators=(",", ":")))
    return "\n".join(lines)


async def _screenshot_blocks(state: ServerState) -> list[ContentBlock]:
    shot = await shots.explicit(state, shots.screenshot_args(state))
    if isinstance(shot, CallToolResult):  # only under shotctl mcp --cooldown
        return [content.text("[Screenshot not included: rate-limited]")]
    return [
        content.image(shot["jpeg"]),
        content.text(content.describe_screenshot(shot, prefix="Screenshot after it")),
    ]


VERBS = {
    "click": "Clicked",
    "hover": "Hovered",
    "type": "Typed",
    "keypress": "Pressed",
    "scroll": "Scrolled",
}


def _describe(el: dict[str, Any] | None) -> str:
    if not el:
        return "nothing"
    name = el.get("name") or el.get("text") or ""
    role = el.get("role") or el.get("tag", "?")
    where = el.get("selector", "?")
    return f'{role} "{name}" ({where})' if name else f"{role} ({where})"


def _acted(action: str, done: dict[str, Any]) -> str:
    """A sentence for the model, then the facts as JSON."""
    verb = VERBS.get(action, action)
    where = ""
    if done.get("point"):
        p = done["point"]
        where = f" at CSS ({p['x']:g}, {p['y']:g})"
    hit = f"; hit {_describe(done.get('hit'))}" if done.get("hit") or done.get("point") else ""
    lines = [f"{verb}{where}{hit}."]
    if done.get("navigated"):
        lines.append(f"The page navigated to {done.get('url')}.")
    for note in done.get("notes") or []:
        lines.append(note)
    facts = {
        k: done[k]
        for k in (
            "hit",
            "focused",
            "url",
            "title",
            "scroll",
            "navigated",
            "screenshot_id",
            "label",
            "scroll_corrected",
            "retargeted",
        )
        if done.get(k) is not None
    }
    lines.append(json.dumps(facts, ensure_ascii=False, separators=(",", ":")))
    return "\n".join(lines)


def _cdp_blocks(done: dict[str, Any]) -> list[ContentBlock]:
    image = done.get("image")
    if isinstance(image, dict) and "jpeg" in image:
        return [
            content.image(image["jpeg"]),
            content.text(
                f"{done.get('method')}: the screenshot as a {image['width']}×{image['height']} px "
                f"JPEG ({image['bytes']:,} bytes; captured at {image['source_width']}×"
                f"{image['source_height']} px; {image.get('masked', 0)} secret region(s) masked"
                + (
                    f"; screenshot_id {image['screenshot_id']})."
                    if image.get("screenshot_id") is not None
                    else ")."
                )
            ),
        ]
    body = json.dumps(done.get("result", {}), ensure_ascii=False)
    if len(body) > CDP_TEXT_MAX:
        body = body[:CDP_TEXT_MAX] + f"… [cut: {len(body):,} chars in all]"
    return [content.text(f"{done.get('method')} → {body}")]


def _navigate_args(navigation: str, url: str | None, new_tab: bool) -> dict[str, Any]:
    if navigation not in NAVIGATIONS:
        raise ToolError(
            f"Unknown navigation {navigation!r}. Valid values: {', '.join(NAVIGATIONS)}."
        )
    if navigation != "url":
        if url:
            raise ToolError(f"navigation={navigation!r} takes no url.")
        return {"action": navigation, "timeout_ms": NAVIGATE_TIMEOUT_MS}
    if not url or not url.strip():
        raise ToolError("action='navigate' needs url (or navigation='back'|'forward'|'reload').")
    url = url.strip()
    if urlsplit(url).scheme.lower() not in SCHEMES:
        raise ToolError(
            f"url must be absolute with a scheme ({', '.join(SCHEMES)}), e.g. 'https://{url}'."
        )
    return {"action": "goto", "url": url, "new_tab": new_tab, "timeout_ms": NAVIGATE_TIMEOUT_MS}


def _navigated(navigation: str, done: dict[str, Any]) -> str:
    verb = {"url": "Navigated to", "back": "Went back to", "forward": "Went forward to"}.get(
        navigation, "Reloaded"
    )
    tab = done.get("tab", done)  # the extension answers {"tab": TabInfo} once the load completes
    title = f' "{tab["title"]}"' if tab.get("title") else ""
    where = f" (tab {tab['id']})" if tab.get("id") is not None else ""
    if done.get("dialog"):  # a dialog the page opened while loading holds the load
        first = f"{verb} {tab.get('url', '?')}{title}{where}."
    else:
        first = f"{verb} {tab.get('url', '?')}{title}{where}; the page finished loading."
    return "\n".join([first, *(done.get("notes") or [])])
