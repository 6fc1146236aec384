"""``configure``: capture settings (screenshot_mode, extra masks) and which tab is tracked."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from shotbridge.mcp_server import content, session
from shotbridge.mcp_server.settings import SCREENSHOT_MODES, SettingsError
from shotbridge.mcp_server.state import ServerState

ACTIONS = ("capture", "track")

DESCRIPTION = f"""\
Change how shotbridge works for this session.
action="capture" with settings: screenshot_mode ({" | ".join(SCREENSHOT_MODES)}; default off): \
"on" appends a fresh screenshot to every observe result, "errors_only" only to \
observe(what="errors"); auto screenshots are limited to one per 5 s and 10 per session. \
mask_selectors: CSS selectors painted over in every image (password fields always are). \
auto_screenshot: {{on_navigation, on_error, on_action}} (default only on_error): events after \
which a screenshot is buffered (observe what="screenshots"). network: true records fetch/XHR for \
generate_test fixtures. With no settings, shows the current ones.
action="track" with tab_id (from observe(what="tabs")): the tab every tool acts on."""


def register(server: MCPServer, state: ServerState) -> None:
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
    async def configure(
        action: Annotated[
            str,
            Field(
                description="capture: change capture settings; track: choose the tracked tab.",
                json_schema_extra={"enum": list(ACTIONS)},
            ),
        ],
        settings: Annotated[
            dict[str, Any] | None,
            Field(
                description='With action=capture, e.g. {"screenshot_mode": "on"} or '
                '{"mask_selectors": [".ssn"]}.'
            ),
        ] = None,
        tab_id: Annotated[
            int | None,
            Field(description="With action=track: the tab's id from observe(what='tabs')."),
        ] = None,
    ) -> CallToolResult:
        if action == "capture":
            if tab_id is not None:
                raise ToolError("tab_id belongs to action='track'.")
            if settings is None:
                return content.result([content.text(state.settings.describe())], tool="configure")
            try:
                message = state.settings.apply(settings)
            except SettingsError as exc:
                raise ToolError(str(exc)) from None
            if session.touches_recording(settings):
                await session.push(state, settings)  # the host records and auto-captures
            return content.result([content.text(message)], tool="configure")
        if action == "track":
            if tab_id is None:
                raise ToolError(
                    "action='track' needs tab_id; observe(what='tabs') lists the open tabs."
                )
            if settings is not None:
                raise ToolError("settings belongs to action='capture'.")
            tracked = await session.request(state, "track", {"tab_id": tab_id})
            return content.result([content.text(_tracking(tab_id, tracked))], tool="configure")
        raise ToolError(f"Unknown action {action!r}. Valid actions: {', '.join(ACTIONS)}.")


def _tracking(tab_id: int, tracked: dict[str, Any]) -> str:
    tab = tracked.get("tab", tracked)
    title, url = tab.get("title"), tab.get("url")
    where = " — ".join(str(p) for p in (title, url) if p)
    return f"Tracking tab {tab.get('id', tab_id)}" + (f": {where}" if where else "")
