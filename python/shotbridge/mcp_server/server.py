"""The MCP server: four tools over one bus connection, state kept for the life of the process."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.types import Tool

from shotbridge import __version__
from shotbridge.mcp_server.lean_schema import lean_schema
from shotbridge.mcp_server.state import ServerState
from shotbridge.mcp_server.tools import capture, configure, generate, interact, observe, screenshots

log = logging.getLogger(__name__)

INSTRUCTIONS = """\
shotbridge shows you the developer's own browser tab. Read structure before pixels: \
observe(what="page") is cheap text; observe(what="errors") shows console errors. Ask for \
pixels (capture_screenshot, or observe with annotate_screenshot=true for numbered labels mapped \
to CSS selectors) only when the structure is not enough. interact clicks, types, presses keys and \
scrolls by selector, by label, or at pixels of a screenshot you were shown."""

LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]


class LeanServer(MCPServer[Any]):
    """MCPServer whose tools/list spends no characters on what a model learns nothing from."""

    async def list_tools(self) -> list[Tool]:
        tools = await super().list_tools()
        return [t.model_copy(update={"input_schema": lean_schema(t.input_schema)}) for t in tools]


def build_server(state: ServerState, *, log_level: LogLevel = "WARNING") -> MCPServer[Any]:
    """An MCPServer with every tool registered; it closes ``state.connection`` when it stops."""

    @asynccontextmanager
    async def lifespan(_: MCPServer[Any]) -> AsyncIterator[None]:
        try:
            yield
        finally:
            log.info("shutting down: closing the browser connection")
            await state.connection.close()

    server: MCPServer[Any] = LeanServer(
        "shotbridge",
        title="shotbridge",
        instructions=INSTRUCTIONS,
        version=__version__,
        log_level=log_level,
        lifespan=lifespan,
    )
    for tool in (observe, configure, capture, interact, generate, screenshots):
        tool.register(server, state)
    state.connection.attach(server)  # lost-state notices and the headless note lead each result
    return server
