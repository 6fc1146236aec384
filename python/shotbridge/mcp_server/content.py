"""Content blocks: JPEG image blocks, each beside a text block that stands on its own.

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

log = logging.getLogger(__name__)

PAYLOAD_WARN_BYTES = 500_000
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


def note_stages(shot: dict[str, Any], got_at: float) -> None:
    """Append the shot's stage stamps to the benchmark's log (only when it asked for one)."""
    path = os.environ.get(STAGES_LOG_ENV)
    if not path:
        return
    stamps = {**shot.get("timings", {}), "method": shot.get("method")}
    stamps |= {"mcp_got_at": got_at, "mcp_return_at": epoch_ms()}
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"screenshot_id": shot.get("screenshot_id"), **stamps}) + "\n")


def estimated_tokens(width: int, height: int) -> int:
    return round(width * height * TOKENS_PER_PIXEL)


def image_facts(shot: dict[str, Any]) -> dict[str, Any]:
    """The metadata of one screenshot, as the JSON the annotated ``observe`` embeds."""
    facts = {
        "width": shot["width"],
        "height": shot["height"],
        "bytes": shot["bytes"],
        "quality": shot["quality"],
        "estimated_tokens": estimated_tokens(shot["width"], shot["height"]),
        "masked_regions": shot.get("masked", 0),
        # image px per CSS px: multiply an annotation's bounds by this to find it in the image.
        "css_to_image_scale": shot.get("css_to_output_scale"),
    }
    if shot.get("screenshot_id") is not None:
        facts["screenshot_id"] = shot["screenshot_id"]  # interact(x, y, screenshot_id) pixels
    return facts


def describe_screenshot(
    shot: dict[str, Any], *, prefix: str = "Screenshot", scope: str = "viewport"
) -> str:
    """One paragraph that says everything about the image without needing to see it."""
    title = f' "{shot["title"]}"' if shot.get("title") else ""
    facts = image_facts(shot)
    lines = [
        f"{prefix} ({scope}) of {shot.get('url', '?')}{title}",
        f"{facts['width']}×{facts['height']} px JPEG, {facts['bytes']:,} bytes, quality "
        f"{facts['quality']}, ≈{facts['estimated_tokens']:,} image tokens.",
        _masked_sentence(facts["masked_regions"]),
    ]
    if shot.get("screenshot_id") is not None:
        lines.append(
            f"screenshot_id {shot['screenshot_id']}: interact x/y are pixels of this image."
        )
    for note in shot.get("notes") or []:
        lines.append(note)
    if shot.get("truncated"):
        lines.append("Full page cut off at the maximum height.")
    for note in shot.get("unavailable") or []:
        lines.append(f"Note: {note}")
    return "\n".join(lines)


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
