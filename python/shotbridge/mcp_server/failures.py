"""Turning bus and browser failures into messages a model can act on."""

from __future__ import annotations

import logging

from mcp.server.mcpserver.exceptions import ToolError

from shotbridge.wire.errors import (
    RESTRICTED_MESSAGE,
    BrowserError,
    BusError,
    CommandError,
    ErrorCode,
    NotConnectedError,
)

log = logging.getLogger(__name__)

NOT_CONNECTED_HINT = (
    "No browser is connected to shotbridge. Open Chrome with the shotbridge extension enabled "
    "(`shotctl doctor` checks the setup), or start the server with "
    "`shotctl mcp --browser headless`."
)
NO_TAB_HINT = (
    "No tab is tracked. Call observe(what='tabs') and configure(action='track', tab_id=...), "
    "or open a page with interact(action='navigate', url=...)."
)
CSS_HINT = (
    "Use CSS selector syntax, e.g. 'button.primary', '#login', '[data-testid=\"submit\"]', "
    "'form input[type=email]'."
)


def invalid_selector(selector: str | None, detail: str = "") -> ToolError:
    quoted = f" {selector!r}" if selector else ""
    detail = f" ({detail})" if detail and (not selector or selector not in detail) else ""
    return ToolError(f"Invalid CSS selector{quoted}{detail}. {CSS_HINT}")


def to_tool_error(exc: Exception, *, selector: str | None = None) -> ToolError:
    """A ToolError (an isError result) for anything the bus, host or browser raised."""
    if isinstance(exc, ToolError):
        return exc
    if isinstance(exc, CommandError):
        code, message = exc.code, exc.message
        if code == ErrorCode.NOT_CONNECTED:
            return ToolError(NOT_CONNECTED_HINT)
        if code == ErrorCode.NO_TAB:
            return ToolError(f"{message} {NO_TAB_HINT}" if message else NO_TAB_HINT)
        if code == ErrorCode.RESTRICTED_PAGE:
            return ToolError(message or RESTRICTED_MESSAGE)
        if code == ErrorCode.INVALID_SELECTOR:
            return invalid_selector(selector, message)
        if code == ErrorCode.NOT_FOUND:
            if selector and selector not in message:
                return ToolError(f"No element matches selector {selector!r}.")
            return ToolError(message)
        if code == ErrorCode.TIMEOUT:
            return ToolError(f"{message} The page may still be loading; try again.")
        if code == ErrorCode.TAB_CLOSED:
            return ToolError(f"{message} {NO_TAB_HINT}")
        return ToolError(message or code)
    if isinstance(exc, NotConnectedError):
        return ToolError(f"{NOT_CONNECTED_HINT} ({exc})")
    if isinstance(exc, BrowserError):
        return ToolError(f"Could not start a headless browser: {exc}")
    if isinstance(exc, BusError):
        return ToolError(f"Lost the connection to the shotbridge host ({exc}). Try again.")
    if isinstance(exc, TimeoutError):
        return ToolError("The browser did not answer in time. Try again.")
    log.exception("unexpected failure")
    return ToolError(f"Unexpected failure: {type(exc).__name__}: {exc}")


def unavailable_reason(exc: Exception) -> str:
    """The short reason in ``[Screenshot unavailable: ...]`` for an auto-appended screenshot."""
    if isinstance(exc, CommandError):
        if exc.code == ErrorCode.NO_TAB:
            return "no tracked tab"
        if exc.code == ErrorCode.NOT_CONNECTED:
            return "extension not connected"
        return exc.message.rstrip(".") or exc.code
    if isinstance(exc, NotConnectedError | TimeoutError | BrowserError):
        return "extension not connected"
    if isinstance(exc, BusError):
        return "lost the connection to the host"
    log.exception("unexpected failure of an auto-appended screenshot")
    return f"{type(exc).__name__}"
