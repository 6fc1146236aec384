"""Content blocks, built here for every tool: JPEG image blocks, each beside a text block that
stands on its own.

Images go only into ``content`` (never ``structuredContent``: clients count that as text tokens),
and every image comes with text saying what it is, for clients that drop image blocks.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import time
from collections.abc import Sequence
from typing import Any

from mcp.types import CallToolResult, ContentBlock, ImageContent, TextContent

from shotbridge.wire import budgets
from shotbridge.wire.screenshot import ScreenshotResult, Tile

log = logging.getLogger(__name__)

PAYLOAD_WARN_BYTES = budgets.MAX_BYTES  # some MCP clients refuse a larger tool result
# bench/bench_mcp.py sets this to a file: each screenshot's stage stamps are appended to it, so
# the benchmark can split one call's time across the extension, the host and this server.
STAGES_LOG_ENV = "SHOTBRIDGE_BENCH_STAGES"
TOKENS_PER_PIXEL = 1 / 750  # Anthropic's estimate of image tokens: width × height / 750


def text(value: str) -> TextContent:
    return TextContent(type="text", text=value)


def json_text(value: Any) -> TextContent:
    return text(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def image(jpeg: bytes) -> ImageContent:
    return ImageContent(
        type="image", data=base64.b64encode(jpeg).decode("ascii"), mime_type="image/jpeg"
    )


def epoch_ms() -> float:
    return round(time.time() * 1000, 1)


def note_stages(shot: ScreenshotResult, got_at: float, tool: str = "capture_screenshot") -> None:
    """Append the shot's stage stamps to the benchmark's log (only when it asked for one)."""
    path = os.environ.get(STAGES_LOG_ENV)
    if not path:
        return
    stamps = {**shot.timings, "method": shot.method, "tool": tool}
    stamps |= {"mcp_got_at": got_at, "mcp_return_at": epoch_ms()}
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"screenshot_id": shot.screenshot_id, **stamps}) + "\n")


def estimated_tokens(width: int, height: int) -> int:
    return round(width * height * TOKENS_PER_PIXEL)


def image_facts(shot: ScreenshotResult) -> dict[str, Any]:
    """The metadata of one screenshot, as the JSON the annotated ``observe`` embeds."""
    facts: dict[str, Any] = {
        "width": shot.width,
        "height": shot.height,
        "bytes": shot.bytes,
        "quality": shot.quality,
        "estimated_tokens": estimated_tokens(shot.width, shot.height),
        "masked_regions": shot.masked,
        # image px per CSS px: multiply an annotation's bounds by this to find it in the image.
        "css_to_image_scale": shot.css_to_output_scale,
    }
    if shot.screenshot_id is not None:
        facts["screenshot_id"] = shot.screenshot_id  # interact(x, y, screenshot_id) pixels
    return facts


def describe_screenshot(
    shot: ScreenshotResult, *, prefix: str = "Screenshot", scope: str = "viewport"
) -> str:
    """One paragraph that says everything about the image without needing to see it."""
    title = f' "{shot.title}"' if shot.title else ""
    lines = [
        f"{prefix} ({scope}) of {shot.url}{title}",
        f"{shot.width}×{shot.height} px JPEG, {shot.bytes:,} bytes, quality "
        f"{shot.quality}, ≈{estimated_tokens(shot.width, shot.height):,} image tokens.",
        _masked_sentence(shot.masked),
    ]
    if shot.screenshot_id is not None:
        lines.append(f"screenshot_id {shot.screenshot_id}: interact x/y are pixels of this image.")
    lines += shot.notes
    if shot.truncated:
        lines.append("Full page cut off at the maximum height.")
    lines += [f"Note: {note}" for note in shot.unavailable]
    return "\n".join(lines)


def screenshot_blocks(
    shot: ScreenshotResult,
    *,
    prefix: str = "Screenshot",
    scope: str = "viewport",
    more: str = "",
    image_last: bool = False,
) -> list[ContentBlock]:
    """The image and the paragraph that describes it (``more`` appended to it)."""
    described = text(describe_screenshot(shot, prefix=prefix, scope=scope) + more)
    return [described, image(shot.jpeg)] if image_last else [image(shot.jpeg), described]


def image_beside(shot: ScreenshotResult, described: TextContent) -> list[ContentBlock]:
    """The image, then a text block of the caller's that says what it is."""
    return [image(shot.jpeg), described]


def capture_blocks(
    shot: ScreenshotResult, *, scope: str, diff_image: bool, skip_unchanged: bool
) -> list[ContentBlock]:
    """capture_screenshot's blocks: the image and its description with the diff's summary, the
    diff picture instead, or text only when nothing changed."""
    diff = shot.diff
    if diff and diff.unchanged and skip_unchanged:
        return [text(diff.summary)]
    if not diff:
        return screenshot_blocks(shot, scope=scope)
    if diff_image and diff.image:
        note = (
            f"\nThe image is the diff: the new screenshot ({diff.image_width}×"
            f"{diff.image_height} px) with each changed region outlined and numbered, then "
            "before/after crops of the largest regions."
        )
        description = describe_screenshot(shot, scope=scope)
        return [image(diff.image), text(diff.summary + note), text(description)]
    return screenshot_blocks(shot, scope=scope, more="\n" + diff.summary)


def tile_blocks(shot: ScreenshotResult, tiles: list[Tile]) -> list[ContentBlock]:
    """A full page in tiles: the summary, then each tile's image with its own text block."""
    total = tiles[-1].css_y + tiles[-1].css_height
    blocks: list[ContentBlock] = [
        text(
            describe_screenshot(shot, scope="full page")
            + f"\nThe page ({total:.0f} CSS px) comes as {len(tiles)} tiles, top to bottom."
        )
    ]
    for i, tile in enumerate(tiles, start=1):
        blocks.append(image(tile.jpeg))
        blocks.append(
            text(
                f"Tile {i}/{len(tiles)}: page CSS y {tile.css_y:.0f}–"
                f"{tile.css_y + tile.css_height:.0f}, {tile.width}×{tile.height} px, "
                f"{tile.bytes:,} bytes; screenshot_id {tile.screenshot_id} "
                "(interact x/y are pixels of this tile)."
            )
        )
    return blocks


def _masked_sentence(count: int) -> str:
    if count == 0:
        return "Masked regions: 0 (no password fields or mask_selectors matches visible)."
    noun = "region" if count == 1 else "regions"
    return f"Masked regions: {count} {noun} painted over (password fields and mask_selectors)."


def result(blocks: Sequence[ContentBlock], *, tool: str) -> CallToolResult:
    """The tool's result, with a log warning when it would exceed the payload budget."""
    size = sum(
        len(b.data) if isinstance(b, ImageContent) else len(getattr(b, "text", "")) for b in blocks
    )
    if size > PAYLOAD_WARN_BYTES:
        log.warning(
            "%s result is %d KB (over %d KB); some MCP clients refuse large results",
            tool,
            size // 1000,
            PAYLOAD_WARN_BYTES // 1000,
        )
    return CallToolResult(content=list(blocks))


def rate_limited(message: str, next_allowed_in: float) -> CallToolResult:
    """The cooldown error: isError, with ``nextAllowedIn`` as JSON the model can parse."""
    body = {"error": "rate_limited", "message": message, "nextAllowedIn": next_allowed_in}
    return CallToolResult(content=[text(json.dumps(body))], is_error=True)
