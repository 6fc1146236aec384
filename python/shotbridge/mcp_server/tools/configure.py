"""``configure``: capture settings (screenshot_mode, extra masks), which tab is tracked, device
emulation of the tracked tab, and closing a tab."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from shotbridge.mcp_server import arg_errors, content, emulation, session
from shotbridge.mcp_server.settings import SCREENSHOT_MODES, SettingsError
from shotbridge.mcp_server.state import ServerState
from shotbridge.wire.errors import CommandError
from shotbridge.wire.extension import (
    DiscoverArgs,
    EmulateReply,
    TabCloseArgs,
    TabCloseReply,
    TrackArgs,
)
from shotbridge.wire.interact import Navigated, Tab
from shotbridge.wire.model import Model

ACTION_NAMES = ("capture", "track", "emulate", "close_tab")

DESCRIPTION = f"""\
Session settings. action="capture", settings: screenshot_mode ({" | ".join(SCREENSHOT_MODES)}; \
default off; auto ≤1 per 5 s, 10 per session), mask_selectors (CSS masked in every image), \
auto_screenshot {{on_navigation, on_error, on_action}} (observe what="screenshots"), network \
(record fetch/XHR bodies); none shows them. "track", tab_id: the tab tools act on. "emulate", \
settings: preset ("iPhone 15", "Pixel 7"…), width, height, device_scale_factor, \
mobile, touch, color_scheme, reduced_motion; {{"reset": true}}. "close_tab" [tab_id]."""


CSS_EXAMPLES = "e.g. '#ssn', '.secret', 'input[name=card]', '[data-private]'"
PAIRS = {"]": "[", ")": "("}


def css_syntax_error(selector: str) -> str | None:
    """What is wrong with ``selector`` that any CSS parser would reject, or None.

    A cheap check that needs no browser: emptiness, unbalanced brackets or quotes, a dangling
    combinator. The browser's own parser (see ``_browser_rejects``) has the last word.
    """
    sel = selector.strip()
    if not sel:
        return "it is empty"
    stack: list[str] = []
    quote = ""
    escaped = False
    for ch in sel:
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif quote:
            quote = "" if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in "[(":
            stack.append(ch)
        elif ch in "])" and (not stack or stack.pop() != PAIRS[ch]):
            return f"'{ch}' has no opening bracket"
    if quote:
        return "a quoted string is not closed"
    if stack:
        return f"'{stack[-1]}' is not closed"
    if sel[-1] in ">+~,":
        return f"it ends with '{sel[-1]}'"
    if sel[0] in ">+~,":
        return f"it starts with '{sel[0]}'"
    return None


async def _browser_rejects(state: ServerState, selector: str) -> str | None:
    """The browser's parser verdict through the page library, when a page can be scripted.

    Only over a link that already exists: validating a setting must not launch a browser.
    """
    conn = getattr(state.connection, "inner", state.connection)  # a shared-session wrapper
    if getattr(conn, "_link", True) is None:
        return None
    try:
        args = DiscoverArgs(target="custom", selector=selector, max=1)
        await state.connection.request("discover", args.model_dump(exclude_unset=True), timeout=5)
    except CommandError as exc:
        if exc.code == "invalid_selector":
            return exc.message
    except Exception:  # not connected, restricted page, timeout: the local check stands
        return None
    return None


async def check_mask_selectors(state: ServerState, settings: dict[str, Any]) -> None:
    """Refuse an invalid mask selector at configure time, not at the next capture."""
    selectors = settings.get("mask_selectors")
    if not isinstance(selectors, list):
        return  # the settings' own validation names the type error
    for sel in selectors:
        if not isinstance(sel, str):
            continue
        why = css_syntax_error(sel) or await _browser_rejects(state, sel)
        if why:
            raise ToolError(
                f"mask_selectors: {sel!r} is not a valid CSS selector ({why}); "
                f"use CSS selectors, {CSS_EXAMPLES}. Nothing was changed."
            )


class ToolArgs(Model):
    """The tool's parameters, as the model sees them in the schema."""

    action: Annotated[
        str,
        Field(
            description="See above.",
            json_schema_extra={"enum": list(ACTION_NAMES)},
        ),
    ]
    settings: Annotated[
        dict[str, Any] | None,
        Field(description='e.g. {"screenshot_mode": "on"} or {"preset": "Pixel 7"}.'),
    ] = None
    tab_id: Annotated[
        int | None,
        Field(description="From observe(what='tabs')."),
    ] = None


def register(server: MCPServer, state: ServerState) -> None:
    # Tool-argument validation errors reach the model as one plain sentence (all tools).
    arg_errors.install()

    @server.tool(
        name="configure",
        description=DESCRIPTION,
        annotations=ToolAnnotations(
            title="Configure shotbridge",
            read_only_hint=False,
            destructive_hint=False,
            idempotent_hint=True,
            open_world_hint=False,
        ),
        structured_output=False,
    )
    @arg_errors.parameters(ToolArgs)
    async def configure(**kwargs: Any) -> CallToolResult:
        a = ToolArgs.model_validate(kwargs)
        act = ACTIONS.get(a.action)
        if act is None:
            raise ToolError(
                f"Unknown action {a.action!r}. Valid actions: {', '.join(ACTION_NAMES)}."
            )
        return await act(state, a)


async def _capture(state: ServerState, a: ToolArgs) -> CallToolResult:
    """Show the capture settings, or change them (the host's share goes to the host)."""
    if a.tab_id is not None:
        raise ToolError("tab_id belongs to action='track'.")
    if a.settings is None:
        return content.result([content.text(state.settings.describe())], tool="configure")
    await check_mask_selectors(state, a.settings)
    try:
        message = state.settings.apply(a.settings)
    except SettingsError as exc:
        raise ToolError(str(exc)) from None
    if session.touches_recording(a.settings):
        await session.push(state, a.settings)  # the host records and auto-captures
    return content.result([content.text(message)], tool="configure")


async def _track(state: ServerState, a: ToolArgs) -> CallToolResult:
    """Pin the tab every tool acts on."""
    if a.tab_id is None:
        raise ToolError("action='track' needs tab_id; observe(what='tabs') lists the open tabs.")
    if a.settings is not None:
        raise ToolError("settings belongs to action='capture'.")
    args = TrackArgs(tab_id=a.tab_id).model_dump(exclude_unset=True)
    tracked = await session.request(state, "track", args)
    return content.result([content.text(_tracking(a.tab_id, tracked))], tool="configure")


async def _emulate(state: ServerState, a: ToolArgs) -> CallToolResult:
    """Emulate a device or media settings in the tracked tab (or reset them)."""
    if a.tab_id is not None:
        raise ToolError(
            "tab_id belongs to action='track' or 'close_tab'; emulate acts on the tracked tab."
        )
    req = emulation.request(a.settings, None)
    raw = await session.request(state, "emulate", req.model_dump(exclude_none=True))
    reply = EmulateReply.model_validate(raw)
    return content.result([content.text(emulation.describe(reply))], tool="configure")


async def _close_tab(state: ServerState, a: ToolArgs) -> CallToolResult:
    """Close a tab (the tracked one by default); the tracked tab moves to another."""
    if a.settings is not None:
        raise ToolError("settings belongs to action='capture' or 'emulate'.")
    args = TabCloseArgs(tab_id=a.tab_id).model_dump(exclude_none=True)
    reply = TabCloseReply.model_validate(await session.request(state, "tab_close", args))
    closed = reply.closed
    text = f"Closed tab {closed.id}" + (f" ({closed.url})" if closed.url else "") + "."
    if reply.tab is not None:
        where = " — ".join(str(p) for p in (reply.tab.title, reply.tab.url) if p)
        text += f" Tracking tab {reply.tab.id}" + (f": {where}" if where else "") + "."
    return content.result([content.text(text)], tool="configure")


Act = Callable[[ServerState, ToolArgs], Awaitable[CallToolResult]]
ACTIONS: dict[str, Act] = {
    "capture": _capture,
    "track": _track,
    "emulate": _emulate,
    "close_tab": _close_tab,
}


def _tracking(tab_id: int, raw: dict[str, Any]) -> str:
    reply = Navigated.model_validate(raw)  # {"tab": TabInfo}; a bare TabInfo reads the same
    tab = reply.tab if reply.tab is not None else Tab.model_validate(raw)
    where = " — ".join(str(p) for p in (tab.title, tab.url) if p)
    return f"Tracking tab {tab.id if tab.id is not None else tab_id}" + (
        f": {where}" if where else ""
    )
