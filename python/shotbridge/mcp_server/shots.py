"""Screenshots through the host's ``screenshot`` command, explicit or auto-appended."""

from __future__ import annotations

import logging
from typing import Any

from mcp.types import CallToolResult, ContentBlock

from shotbridge.mcp_server import content
from shotbridge.mcp_server.failures import to_tool_error, unavailable_reason
from shotbridge.mcp_server.ratelimit import Refusal
from shotbridge.mcp_server.state import AUTO_CONNECT_TIMEOUT_S, SCREENSHOT_TIMEOUT_MS, ServerState
from shotbridge.wire.screenshot import ScreenshotRequest, ScreenshotResult

log = logging.getLogger(__name__)


def screenshot_request(state: ServerState, **args: Any) -> ScreenshotRequest:
    """The host's ``screenshot`` arguments; privacy masks always ride along. Arguments left None
    are not sent (the host's defaults apply)."""
    return ScreenshotRequest(
        mask_selectors=list(state.settings.mask_selectors),
        timeout_ms=SCREENSHOT_TIMEOUT_MS,
        thumbnail=False,  # a model never sees it; the host makes it if a resource asks
        **{k: v for k, v in args.items() if v is not None},
    )


def screenshot_args(state: ServerState, **args: Any) -> dict[str, Any]:
    """:func:`screenshot_request` as it goes on the bus (e.g. inside ``interact``'s arguments)."""
    return screenshot_request(state, **args).model_dump(mode="python", exclude_unset=True)


async def take(
    state: ServerState, args: ScreenshotRequest, *, connect_timeout: float | None = None
) -> ScreenshotResult:
    """One ``screenshot`` on the host, its result validated once here."""
    raw = await state.connection.request(
        "screenshot",
        args.model_dump(mode="python", exclude_unset=True),
        timeout=args.timeout_ms / 1000 + 5,
        **({"connect_timeout": connect_timeout} if connect_timeout is not None else {}),
    )
    return ScreenshotResult.model_validate(raw)


async def explicit(
    state: ServerState, args: ScreenshotRequest, *, selector: str | None = None
) -> ScreenshotResult | CallToolResult:
    """A screenshot the model asked for: the shot, or (only under ``--cooldown``) an isError result.

    Raises ToolError when the capture fails; a failed capture does not use up the cooldown.
    """
    ticket = state.budget.acquire(auto=False)
    if isinstance(ticket, Refusal):
        wait = ticket.next_allowed_in or 0.0
        return content.rate_limited(
            f"Screenshots are limited to one per {state.budget.explicit_cooldown:g} s; "
            f"try again in {wait:g} s. observe(what='page') needs no screenshot.",
            wait,
        )
    try:
        return await take(state, args)
    except Exception as exc:
        ticket.cancel()
        raise to_tool_error(exc, selector=selector) from exc


async def auto_blocks(state: ServerState) -> list[ContentBlock]:
    """screenshot_mode's fresh screenshot (text, then the image last), or why there is none."""
    ticket = state.budget.acquire(auto=True)
    if isinstance(ticket, Refusal):
        return [content.text(f"[Screenshot unavailable: {ticket.reason}]")]
    try:
        shot = await take(state, screenshot_request(state), connect_timeout=AUTO_CONNECT_TIMEOUT_S)
    except Exception as exc:
        ticket.cancel()
        reason = unavailable_reason(exc)
        log.info("auto screenshot unavailable: %s", reason)
        return [content.text(f"[Screenshot unavailable: {reason}]")]
    prefix = (
        f"Auto screenshot ({state.budget.auto_taken}/{state.budget.session_limit} this session)"
    )
    return content.screenshot_blocks(shot, prefix=prefix, image_last=True)
