"""``shotctl mcp``: the MCP server (named ``mcp_server`` so it cannot shadow the ``mcp`` SDK)."""

from shotbridge.mcp_server.connection import Connection, bus_factory
from shotbridge.mcp_server.server import build_server
from shotbridge.mcp_server.state import ServerState

__all__ = ["Connection", "ServerState", "build_server", "bus_factory"]
