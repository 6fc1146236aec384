"""Drive ``shotctl mcp`` as a real stdio subprocess from synchronous tests and benchmarks.

The MCP client lives in an event loop on a background thread for the whole session, so one server
(and its headless Chromium) serves many test calls; ``call`` blocks until the result is back.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import threading
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import mcp
from mcp import StdioServerParameters
from mcp.types import CallToolResult

REPO = Path(__file__).resolve().parents[1]


def server_params(*args: str, env: dict[str, str] | None = None) -> StdioServerParameters:
    # PYTHONPATH lets the tests run from a source tree as well as from an install.
    paths = (str(REPO / "python"), os.environ.get("PYTHONPATH"))
    pythonpath = os.pathsep.join(p for p in paths if p)
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "shotbridge", "mcp", *args],
        env={"PYTHONPATH": pythonpath, **(env or {})},
        cwd=str(REPO),
    )


class McpSession:
    """``with McpSession("--browser", "headless") as s: s.call("observe", {...})``."""

    def __init__(self, *args: str, env: dict[str, str] | None = None, timeout: float = 90) -> None:
        self.params = server_params(*args, env=env)
        self.timeout = timeout
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._ready: Future[None] = Future()
        self._client: mcp.Client | None = None
        self._stop: asyncio.Event | None = None
        self._main: Future[None] | None = None

    async def _hold(self) -> None:
        self._stop = asyncio.Event()
        try:
            async with mcp.Client(self.params, read_timeout_seconds=self.timeout) as client:
                self._client = client
                self._ready.set_result(None)
                await self._stop.wait()
        except BaseException as exc:
            if not self._ready.done():
                self._ready.set_exception(exc)
            raise

    def __enter__(self) -> McpSession:
        self._thread.start()
        self._main = asyncio.run_coroutine_threadsafe(self._hold(), self.loop)
        self._ready.result(self.timeout)
        return self

    def call(self, name: str, args: dict[str, Any] | None = None) -> CallToolResult:
        assert self._client is not None
        future = asyncio.run_coroutine_threadsafe(
            self._client.call_tool(name, args or {}), self.loop
        )
        return future.result(self.timeout + 10)

    def list_tools(self) -> list[Any]:
        assert self._client is not None
        future = asyncio.run_coroutine_threadsafe(self._client.list_tools(), self.loop)
        return future.result(self.timeout).tools

    def __exit__(self, *exc: object) -> None:
        if self._stop is not None:
            self.loop.call_soon_threadsafe(self._stop.set)
        if self._main is not None:
            # A server that died is reported by the calls that failed, not here.
            with contextlib.suppress(Exception):
                self._main.result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)
        self.loop.close()


class RawServer:
    """The server over raw pipes, to see every byte it writes to stdout."""

    def __init__(self, *args: str, env: dict[str, str]) -> None:
        params = server_params(*args, env=env)
        self.proc = subprocess.Popen(
            [params.command, *params.args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, **(params.env or {})},
            cwd=params.cwd,
        )
        self.lines: list[bytes] = []

    def send(self, msg: dict[str, Any]) -> dict[str, Any] | None:
        """Write one message; for a request, read stdout up to its reply."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write((json.dumps({"jsonrpc": "2.0", **msg}) + "\n").encode())
        self.proc.stdin.flush()
        if "id" not in msg:
            return None
        while line := self.proc.stdout.readline():
            self.lines.append(line)
            reply = json.loads(line)  # anything that is not JSON fails here
            if reply.get("id") == msg["id"]:
                return reply
        raise AssertionError("server closed stdout before answering")

    def initialize(self) -> None:
        init = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        }
        assert self.send({"id": 1, "method": "initialize", "params": init})
        self.send({"method": "notifications/initialized"})

    def finish(self) -> bytes:
        out, err = self.proc.communicate(timeout=30)  # closing stdin ends the server
        self.lines += out.splitlines(keepends=True)
        assert self.proc.returncode == 0, err.decode()
        return err
