"""``capture_screenshot``: the tracked tab (or one element, or the full page) as a budgeted JPEG."""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from shotbridge.mcp_server import content, shots
from shotbridge.mcp_server.state import ServerState

DESCRIPTION = """\
Screenshot of the tracked browser tab as a JPEG sized for the model (≤1280 px wide, \
≤500 KB), with a text summary (URL, size, bytes, quality, estimated image tokens, masked \
regions). Password fields are always painted over. Prefer observe(what="page") first: ask for \
pixels only when layout or visuals matter. Limited to one screenshot per 5 s."""


def register(server: MCPServer, state: ServerState) -> None:
    @server.tool(
        name="capture_screenshot",
        description=DESCRIPTION,
        annotations=ToolAnnotations(
            title="Capture a screenshot",
            read_only_hint=True,
            destructive_hint=False,
            idempotent_hint=True,
            open_world_hint=True,
        ),
        structured_output=False,
    )
    async def capture_screenshot(
        selector: Annotated[
            str | None,
            Field(description="CSS selector of one element to capture instead of the viewport."),
        ] = None,
        full_page: Annotated[
            bool, Field(description="Capture the whole scrollable page, not just the viewport.")
        ] = False,
    ) -> CallToolResult:
        if selector is not None and not selector.strip():
            raise ToolError("selector is empty: pass a CSS selector, or omit it for the viewport.")
        if selector and full_page:
            raise ToolError("Pass either selector or full_page, not both.")
        args = shots.screenshot_args(state, selector=selector, full_page=full_page or None)
        shot = await shots.explicit(state, args, selector=selector)
        if isinstance(shot, CallToolResult):
            return shot
        scope = f"element {selector!r}" if selector else "full page" if full_page else "viewport"
        return content.result(
            [
                content.image(shot["jpeg"]),
                content.text(content.describe_screenshot(shot, scope=scope)),
            ],
            tool="capture_screenshot",
        )
