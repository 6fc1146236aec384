"""``interact``: act on the tracked tab. For now one action, navigate."""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import urlsplit

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from shotbridge.mcp_server import content
from shotbridge.mcp_server.failures import to_tool_error
from shotbridge.mcp_server.state import NAVIGATE_TIMEOUT_MS, ServerState

ACTIONS = ("navigate",)
NAVIGATIONS = ("url", "back", "forward", "reload")
SCHEMES = ("http", "https", "file", "about", "data")

DESCRIPTION = """\
Act on the tracked browser tab. action="navigate": open url in the tracked tab (a new tab when \
none is tracked, or with new_tab=true) and wait for it to load; navigation="back" | "forward" | \
"reload" moves through history instead. Then observe(what="page") to see the result."""


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
                description="What to do. Available: navigate.",
                json_schema_extra={"enum": list(ACTIONS)},
            ),
        ],
        url: Annotated[
            str | None, Field(description="Absolute URL to open (navigation=url).")
        ] = None,
        navigation: Annotated[
            str,
            Field(
                description="url: open url; back / forward: history; reload: reload the page.",
                json_schema_extra={"enum": list(NAVIGATIONS)},
            ),
        ] = "url",
        new_tab: Annotated[
            bool, Field(description="Open url in a new tab, which becomes the tracked tab.")
        ] = False,
    ) -> CallToolResult:
        if action not in ACTIONS:
            raise ToolError(
                f"Unknown action {action!r}. Available actions: {', '.join(ACTIONS)} "
                "(click, type and others are not available yet)."
            )
        args = _navigate_args(navigation, url, new_tab)
        try:
            done = await state.connection.request(
                "navigate", args, timeout=NAVIGATE_TIMEOUT_MS / 1000 + 5
            )
        except Exception as exc:
            raise to_tool_error(exc) from exc
        return content.result([content.text(_navigated(navigation, done))], tool="interact")


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
    return f"{verb} {tab.get('url', '?')}{title}{where}; the page finished loading."
