"""``shotctl mcp``: the MCP server over stdio, for Claude Code, Cursor, VS Code, Claude Desktop."""

from __future__ import annotations

import json
import logging
import os
import shlex
import signal
import sys
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

import anyio
import click

from shotbridge.cli.bus_option import bus_option
from shotbridge.cli.options import FiniteFloatRange, browser_option, parse_window

if TYPE_CHECKING:  # the server loads only when `shotctl mcp` runs
    from mcp.server.mcpserver import MCPServer

    from shotbridge.mcp_server import Connection

CLIENTS = ("claude-code", "cursor", "vscode", "claude-desktop")


def server_command() -> list[str]:
    """How to start this very server by absolute path: GUI clients do not see the shell's PATH."""
    script = Path(sys.argv[0])
    if script.name == "shotctl" and script.is_file():
        return [str(script.absolute()), "mcp"]
    return [sys.executable, "-m", "shotbridge", "mcp"]


def client_config(client: str, command: list[str]) -> str:
    """The registration for `client`: a shell command (Claude Code) or its JSON config entry."""
    if client == "claude-code":
        argv = " ".join(shlex.quote(a) for a in command)
        return f"claude mcp add --transport stdio --scope user shotbridge -- {argv}"
    entry: dict[str, object] = {"command": command[0], "args": command[1:]}
    if client == "vscode":  # .vscode/mcp.json
        return json.dumps({"servers": {"shotbridge": {"type": "stdio", **entry}}}, indent=2)
    # ~/.cursor/mcp.json; Claude Desktop's claude_desktop_config.json
    return json.dumps({"mcpServers": {"shotbridge": entry}}, indent=2)


@click.command()
@browser_option
@bus_option
@click.option(
    "--window-size", default="1280x800", show_default=True, help="Headless window, WIDTHxHEIGHT."
)
@click.option(
    "--dpr",
    type=FiniteFloatRange(0.5, 4),
    help="Headless device pixel ratio. Default: 1, or under 1 for a window wider than 1280 px, "
    "so the page renders at the width its screenshots are sent at.",
)
@click.option(
    "--log-level",
    type=click.Choice(["DEBUG", "INFO", "WARNING", "ERROR"], case_sensitive=False),
    default="WARNING",
    show_default=True,
    help="Logging on stderr (stdout carries only the protocol).",
)
@click.option(
    "--allow-cdp",
    is_flag=True,
    help="Let the model run raw Chrome DevTools Protocol commands on the tracked tab "
    "(interact action=cdp). Off by default: CDP can read cookies and run script in the page.",
)
@click.option(
    "--shared-session",
    is_flag=True,
    help="Share one recording, screenshot list and timeline with every other server started "
    "with this flag (by default each server has its own).",
)
@click.option(
    "--cooldown",
    type=click.FloatRange(0, 3600),
    default=None,
    metavar="SECONDS",
    help="Also limit the screenshots the model asks for to one per SECONDS, and use SECONDS "
    "between automatic ones. Default: those the model asks for are never refused; automatic "
    "ones (screenshot_mode) wait 5 s.",
)
# For tests and benchmarks; the default is the documented limit.
@click.option("--session-limit", type=click.IntRange(0, 10_000), default=10, hidden=True)
@click.option(
    "--print-config",
    "print_config",
    type=click.Choice(CLIENTS),
    help="Print how to register this server with CLIENT (absolute paths) and exit.",
)
def mcp(
    browser: str,
    window_size: str,
    dpr: float | None,
    log_level: str,
    allow_cdp: bool,
    shared_session: bool,
    cooldown: float | None,
    session_limit: int,
    print_config: str | None,
) -> None:
    """Serve the MCP tools observe, configure, capture_screenshot and interact over stdio.

    \b
    Clients start it by absolute path (they do not see your shell's PATH):
      shotctl mcp --print-config claude-code   # or cursor, vscode, claude-desktop
    prints the registration with this shotctl's full path, e.g.
      claude mcp add --transport stdio --scope user shotbridge -- "$(command -v shotctl)" mcp
    """
    if print_config:
        click.echo(client_config(print_config, server_command()))
        return
    level = log_level.upper()
    logging.basicConfig(
        level=level,
        stream=sys.stderr,
        format="shotctl mcp %(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    from shotbridge.client.browser import render_dpr
    from shotbridge.mcp_server import Connection, ServerState, build_server, bus_factory
    from shotbridge.mcp_server.ratelimit import budget_from_options
    from shotbridge.mcp_server.session import SettingsSync

    window = parse_window(window_size)
    scale = dpr if dpr is not None else render_dpr(window[0])
    connection = Connection(bus_factory(browser, window, scale))  # type: ignore[arg-type]
    state = ServerState(
        connection=connection,
        budget=budget_from_options(cooldown, session_limit),
        allow_cdp=allow_cdp,
        shared_session="shared" if shared_session else None,
    )
    # Settings given before the browser exists reach every host the server connects to.
    state.connection = SettingsSync(state.connection, state)  # type: ignore[assignment]
    serve(connection, build_server(state, log_level=level))  # type: ignore[arg-type]


def serve(connection: Connection, server: MCPServer[Any]) -> None:
    """Serve MCP over stdio until stdin ends or a signal comes; the headless browser ends too."""
    from shotbridge.mcp_server.stdio_guard import serve_stdio

    def exit_on_signal(signum: int, _frame: FrameType | None) -> None:
        # End a headless browser we started, then leave at once: a graceful unwind would wait
        # for the SDK's thread blocked reading stdin, which a signal cannot interrupt.
        logging.getLogger(__name__).info("signal %d: exiting", signum)
        connection.close_browser_now()
        logging.shutdown()
        os._exit(128 + signum)

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, exit_on_signal)
    try:
        # The SDK's transport, with every line screened first: malformed requests get a
        # JSON-RPC error instead of silence (stdio_guard).
        anyio.run(serve_stdio, server)
    except KeyboardInterrupt:
        pass
    finally:
        connection.close_browser_now()
