"""The session's screenshot buffer over MCP: resources ``screenshot://{id}`` and
``screenshot://{id}/thumbnail`` (image/jpeg blobs), and ``observe(what="screenshots")``, the
timeline of screenshots with what led to each (thumbnails as image blocks on request).

Every URL, title, message and action shown here is redacted first (``shotbridge.generate.redact``):
a token in a query string or a card number in an error message never reaches the model."""

from __future__ import annotations

import time
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError
from mcp.types import ContentBlock

from shotbridge.generate import redact
from shotbridge.generate.encode import md_code, md_text
from shotbridge.generate.steps import describe_action, redacted
from shotbridge.mcp_server import content, session
from shotbridge.mcp_server.state import REQUEST_TIMEOUT_S, ServerState
from shotbridge.wire.errors import CommandError, ErrorCode
from shotbridge.wire.recording import ScreenshotGetArgs, ScreenshotGetResult, ShotMeta
from shotbridge.wire.timeline import (
    ActionEntry,
    ErrorEntry,
    NavEntry,
    NetworkEntry,
    ShotEntry,
    TimelineEntry,
)

RECENT_EVENTS = 60


def register(server: MCPServer, state: ServerState) -> None:
    async def read(raw_id: str, thumbnail: bool) -> bytes:
        try:
            shot_id = int(raw_id)
        except ValueError:
            raise ResourceError(f"screenshot id must be an integer, not {raw_id!r}") from None
        args = ScreenshotGetArgs(id=shot_id, thumbnail=thumbnail)
        try:
            got = await state.connection.request(
                "screenshot_get", session.sent(args), timeout=REQUEST_TIMEOUT_S
            )
        except CommandError as exc:
            if exc.code == ErrorCode.NOT_FOUND:
                raise ResourceError(exc.message) from None
            raise ResourceError(f"cannot read screenshot {shot_id}: {exc.message}") from None
        except Exception as exc:
            raise ResourceError(f"cannot read screenshot {shot_id}: {exc}") from None
        return bytes(ScreenshotGetResult.model_validate(got).jpeg)

    @server.resource(
        "screenshot://{id}",
        name="screenshot",
        title="Buffered screenshot",
        description="A JPEG from this session's screenshot buffer (the last 20 are kept); ids "
        'come from observe(what="screenshots").',
        mime_type="image/jpeg",
    )
    async def screenshot(id: str) -> bytes:
        return await read(id, thumbnail=False)

    @server.resource(
        "screenshot://{id}/thumbnail",
        name="screenshot_thumbnail",
        title="Buffered screenshot, 320 px thumbnail",
        description="The 320 px wide thumbnail of a buffered screenshot.",
        mime_type="image/jpeg",
    )
    async def thumbnail(id: str) -> bytes:
        return await read(id, thumbnail=True)


def _clock(t: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(t)) + f".{int(t % 1 * 1000):03d}"


def _event(entry: TimelineEntry) -> dict[str, Any] | None:
    """A compact line of the timeline for the model (no bodies, no observations)."""
    e = redacted(entry)
    base = {"seq": e.seq, "time": _clock(e.time)}
    if isinstance(e, NavEntry):
        return {**base, "type": "navigation", "url": e.url, "title": e.title}
    if isinstance(e, ActionEntry):
        return {**base, "type": "action", "action_id": e.id, "what": describe_action(e)}
    if isinstance(e, ErrorEntry):
        return {**base, "type": "error", "kind": e.kind, "message": e.message[:300]}
    if isinstance(e, ShotEntry):
        return {**base, "type": "screenshot", "screenshot_id": e.screenshot_id}
    if isinstance(e, NetworkEntry):
        return {**base, "type": "request", "what": f"{e.method} {e.url} → {e.status}"}
    return None


def _shot(m: ShotMeta, actions: dict[str, str]) -> dict[str, Any]:
    """One screenshot as the model reads it: what led to it, and where to read it if kept."""
    item = {
        "id": m.id,
        "time": _clock(m.time),
        "url": redact.url(m.url),
        "trigger": m.trigger,
        "action_id": m.action_id,
        "after": actions.get(m.action_id or ""),
        "width": m.width,
        "height": m.height,
        "bytes": m.bytes,
        "kept": m.kept,
    }
    if len(m.triggers) > 1:  # an automatic one that merged several triggers
        item["triggers"] = [t.trigger for t in m.triggers]
    if m.kept:
        item["resource"] = f"screenshot://{m.id}"
        item["thumbnail"] = f"screenshot://{m.id}/thumbnail"
    return item


async def observe_blocks(state: ServerState, include_thumbnails: bool) -> list[ContentBlock]:
    """observe(what="screenshots"): JSON timeline, then thumbnails (text + image) if asked."""
    export = await session.timeline(state, bodies=False)
    actions = {
        e.id: describe_action(redacted(e))  # type: ignore[arg-type]
        for e in export.entries
        if isinstance(e, ActionEntry)
    }
    shots = [_shot(m, actions) for m in export.screenshots]
    events = [ev for ev in map(_event, export.entries) if ev is not None]
    body = {
        "session": export.session,
        "screenshots": shots,
        "kept": sum(1 for s in shots if s["kept"]),
        "auto_screenshot": export.config.auto_screenshot.model_dump(),
        "recent_events": events[-RECENT_EVENTS:],
        "hint": "Read a screenshot with the resource screenshot://{id} (or /thumbnail); "
        "include_thumbnails=true shows the kept ones here.",
    }
    blocks: list[ContentBlock] = [content.json_text(body)]
    if include_thumbnails and any(s["kept"] for s in shots):
        images = await session.screenshot_images(state, "thumbnail")
        for s in shots:
            if s["id"] in images:
                # Page text in a caption a client may render as Markdown: encoded as such.
                after = f", after {md_text(s['after'], 200)}" if s["after"] else ""
                caption = f"Screenshot {s['id']} thumbnail ({s['trigger']}{after}) of "
                blocks.append(content.text(caption + md_code(s["url"])))
                blocks.append(content.image(images[s["id"]]))
    return blocks
