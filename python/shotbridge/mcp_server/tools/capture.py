"""``capture_screenshot``: the tracked tab (or one element, or the full page) as a budgeted JPEG."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from shotbridge.mcp_server import content, shots
from shotbridge.mcp_server.state import ServerState
from shotbridge.wire.budgets import MAX_BYTES, MAX_WIDTH
from shotbridge.wire.extension import scroll_target

DESCRIPTION = f"""\
JPEG of the tracked tab sized for a model (≤{MAX_WIDTH} px wide, ≤{MAX_BYTES // 1000} KB) with \
URL, size and tokens; password fields are always masked. Prefer observe(what="page") unless \
visuals matter. full_page: tiles, each a screenshot_id for interact(x, y). compare_to: the changed \
regions and the elements behind them (diff_image outlines them)."""


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
            Field(description="CSS selector of one element to capture."),
        ] = None,
        full_page: Annotated[
            bool,
            Field(description="The whole page, as tiles top to bottom."),
        ] = False,
        scroll: Annotated[
            str | float | None,
            Field(description='Scroll first: "top", "bottom", a y in CSS px or a selector.'),
        ] = None,
        compare_to: Annotated[
            str | int | None,
            Field(description='"previous" or a screenshot_id: what changed since.'),
        ] = None,
        diff_image: Annotated[
            bool,
            Field(description="The outlined diff picture instead of the screenshot."),
        ] = False,
    ) -> CallToolResult:
        return await _capture(state, selector, full_page, scroll, compare_to, diff_image)


async def _capture(
    state: ServerState,
    selector: str | None,
    full_page: bool,
    scroll: str | float | None,
    compare_to: str | int | None,
    diff_image: bool,
) -> CallToolResult:
    if selector is not None and not selector.strip():
        raise ToolError("selector is empty: pass a CSS selector, or omit it for the viewport.")
    if selector and full_page:
        raise ToolError("Pass either selector or full_page, not both.")
    target = _compare_target(compare_to, diff_image)
    args = shots.screenshot_request(
        state,
        selector=selector,
        full_page=full_page or None,
        scroll=_scroll_arg(scroll),
        compare_to=target,
        diff_image=diff_image or None,
        unchanged_check=state.settings.skip_unchanged or None,
        remember=True,
    )
    shot = await shots.explicit(state, args, selector=selector)
    if isinstance(shot, CallToolResult):
        return shot
    got_at = content.epoch_ms()
    scope = f"element {selector!r}" if selector else "full page" if full_page else "viewport"
    tiles = shot.tiles or []
    if len(tiles) > 1:
        return content.result(content.tile_blocks(shot, tiles), tool="capture_screenshot")
    skip = state.settings.skip_unchanged
    blocks = content.capture_blocks(shot, scope=scope, diff_image=diff_image, skip_unchanged=skip)
    content.note_stages(shot, got_at)
    return content.result(blocks, tool="capture_screenshot")


def _compare_target(compare_to: str | int | None, diff_image: bool) -> str | int | None:
    """ "previous", a screenshot id (number or numeric text), or None."""
    if compare_to is None:
        return "previous" if diff_image else None
    if isinstance(compare_to, int):
        return compare_to
    text = compare_to.strip().lstrip("#")
    if text.lower() == "previous":
        return "previous"
    if text.isdigit():
        return int(text)
    raise ToolError('compare_to takes "previous" or a screenshot_id (a number).')


def _scroll_arg(scroll: str | float | None) -> str | dict[str, Any] | None:
    """ "top" / "bottom", a y offset (number or numeric text), or else a selector."""
    if scroll is None:
        return None
    if isinstance(scroll, int | float):
        return {"y": float(scroll)}
    if not scroll.strip():
        raise ToolError('scroll is empty: pass "top", "bottom", a y offset or a CSS selector.')
    return scroll_target(scroll)
