"""The MCP server's view of the host's session memory (issue 6): recording settings, timeline,
screenshot buffer. The host keeps everything (``shotbridge.recording``); this module validates
what the model asks for and fetches what the tools need."""

from __future__ import annotations

import logging
from typing import Any

from shotbridge.mcp_server.failures import to_tool_error
from shotbridge.mcp_server.record_settings import RECORDING_NAMES
from shotbridge.mcp_server.state import REQUEST_TIMEOUT_S, ServerState

log = logging.getLogger(__name__)


def touches_recording(settings: dict[str, Any]) -> bool:
    return any(name in settings for name in (*RECORDING_NAMES, "mask_selectors"))


async def push(state: ServerState, settings: dict[str, Any]) -> dict[str, Any] | None:
    """Send the recording settings to the host (its automatic captures and network capture).

    A change of auto_screenshot or network must reach the host. A change of mask_selectors alone
    (the host's automatic captures mask them too) is sent only over a link that is already up:
    changing a mask must never launch a browser.
    """
    s = state.settings
    args: dict[str, Any] = {"mask_selectors": list(s.mask_selectors)}
    required = any(name in settings for name in RECORDING_NAMES)
    if not required and getattr(state.connection, "_link", None) is None:
        return None
    if required:
        args["auto_screenshot"] = dict(s.auto_screenshot)
        args["min_interval_s"] = state.budget.cooldown  # the host's auto screenshots follow it
        if "network" in settings:
            args["network"] = s.network
    try:
        return await state.connection.request("record_config", args, timeout=REQUEST_TIMEOUT_S)
    except Exception as exc:
        if required:
            raise to_tool_error(exc) from exc
        log.info("record_config not sent (mask_selectors only): %s", exc)
        return None


async def request(state: ServerState, cmd: str, args: dict[str, Any] | None = None) -> dict:
    """One host or extension command for a tool; a failure becomes the tool's error."""
    try:
        return await state.connection.request(cmd, args, timeout=REQUEST_TIMEOUT_S)
    except Exception as exc:
        raise to_tool_error(exc) from exc


async def timeline(state: ServerState) -> dict[str, Any]:
    return await request(state, "timeline", {"bodies": True})


async def screenshot_images(state: ServerState, images: str) -> dict[int, bytes]:
    """Bytes of the kept screenshots (``thumbnail`` or ``full``) by id."""
    found = await request(state, "screenshots", {"images": images})
    return {int(s["id"]): s["jpeg"] for s in found.get("screenshots", []) if s.get("jpeg")}
