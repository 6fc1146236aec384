"""``capture_screenshot``: the tracked tab (or one element, or the full page) as a budgeted JPEG."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, ContentBlock, ToolAnnotations
from pydantic import Field

from shotbridge.mcp_server import content, shots
from shotbridge.mcp_server.state import ServerState
from shotbridge.wire.extension import scroll_target

DESCRIPTION = """\
JPEG of the tracked tab sized for a model (≤1280 px wide, ≤500 KB) with a summary (URL, size, \
tokens, masked regions); password fields are always masked. Prefer observe(what="page") unless \
layout or visuals matter. full_page: tiles, each with a screenshot_id for interact(x, y). \
compare_to: the changed regions and the elements behind them; diff_image outlines them. An \
unchanged page answers "Unchanged since screenshot #N"."""


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
        if selector is not None and not selector.strip():
            raise ToolError("selector is empty: pass a CSS selector, or omit it for the viewport.")
        if selector and full_page:
            raise ToolError("Pass either selector or full_page, not both.")
        target = _compare_target(compare_to, diff_image)
        args = shots.screenshot_args(
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
        tiles = shot.get("tiles") or []
        if len(tiles) > 1:
            return content.result(_tile_blocks(shot, tiles), tool="capture_screenshot")
        blocks = _blocks(state, shot, scope, diff_image)
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


def _blocks(
    state: ServerState, shot: dict[str, Any], scope: str, diff_image: bool
) -> list[ContentBlock]:
    """The image and its description, the diff summary; or text only when nothing changed."""
    diff = shot.get("diff")
    if diff and diff.get("unchanged") and state.settings.skip_unchanged:
        return [content.text(diff["summary"])]
    description = content.describe_screenshot(shot, scope=scope)
    if not diff:
        return [content.image(shot["jpeg"]), content.text(description)]
    if diff_image and diff.get("image"):
        note = (
            f"\nThe image is the diff: the new screenshot ({diff['image_width']}×"
            f"{diff['image_height']} px) with each changed region outlined and numbered, then "
            "before/after crops of the largest regions."
        )
        return [
            content.image(diff["image"]),
            content.text(diff["summary"] + note),
            content.text(description),
        ]
    return [content.image(shot["jpeg"]), content.text(description + "\n" + diff["summary"])]


def _scroll_arg(scroll: str | float | None) -> str | dict[str, Any] | None:
    """ "top" / "bottom", a y offset (number or numeric text), or else a selector."""
    if scroll is None:
        return None
    if isinstance(scroll, int | float):
        return {"y": float(scroll)}
    if not scroll.strip():
        raise ToolError('scroll is empty: pass "top", "bottom", a y offset or a CSS selector.')
    return scroll_target(scroll)


def _tile_blocks(shot: dict[str, Any], tiles: list[dict[str, Any]]) -> list[ContentBlock]:
    """A full page in tiles: the summary, then each tile's image with its own text block."""
    total = tiles[-1]["css_y"] + tiles[-1]["css_height"]
    blocks: list[ContentBlock] = [
        content.text(
            content.describe_screenshot(shot, scope="full page")
            + f"\nThe page ({total:.0f} CSS px) comes as {len(tiles)} tiles, top to bottom."
        )
    ]
    for i, tile in enumerate(tiles, start=1):
        blocks.append(content.image(tile["jpeg"]))
        blocks.append(
            content.text(
                f"Tile {i}/{len(tiles)}: page CSS y {tile['css_y']:.0f}–"
                f"{tile['css_y'] + tile['css_height']:.0f}, {tile['width']}×{tile['height']} px, "
                f"{tile['bytes']:,} bytes; screenshot_id {tile['screenshot_id']} "
                "(interact x/y are pixels of this tile)."
            )
        )
    return blocks
