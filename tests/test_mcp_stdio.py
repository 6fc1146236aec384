"""``shotctl mcp`` as a real stdio subprocess, without a browser.

Unit tests: where a host is needed it is ``FakeHost``, a small in-process stand-in that listens on
a real Unix socket and speaks the real bus framing (shotbridge.framing), so the server's real
BusClient, host discovery and stdio transport are exercised; no extension or Chromium runs.
"""

from __future__ import annotations

import asyncio
import base64
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp.types import ImageContent, TextContent
from PIL import Image
from shotbridge import paths
from shotbridge.framing import BUS

from tests.mcp_fakes import PAGE_INFO, screenshot_result
from tests.mcp_stdio import McpSession, RawServer, server_params


class FakeHost:
    """A bus host on a real socket in ``runtime_dir``; answers status, page_info and screenshot."""

    def __init__(self, runtime_dir: Path) -> None:
        self.runtime_dir = runtime_dir
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._server: asyncio.AbstractServer | None = None

    def answer(self, cmd: str, args: dict[str, Any]) -> dict[str, Any]:
        if cmd == "status":
            return {"ok": True, "result": {"connected": True, "profile_id": "fake"}}
        if cmd == "page_info":
            return {"ok": True, "result": PAGE_INFO}
        if cmd == "screenshot":
            return {"ok": True, "result": screenshot_result(args)}
        return {"ok": False, "error": {"code": "bad_request", "message": f"unknown {cmd}"}}

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while (msg := await BUS.aread(reader)) is not None:
            self.requests.append((msg["cmd"], msg.get("args") or {}))
            await BUS.awrite(writer, {"id": msg["id"], **self.answer(msg["cmd"], msg["args"])})
        writer.close()

    def __enter__(self) -> FakeHost:
        self._thread.start()
        sock = paths.socket_path(os.getpid(), self.runtime_dir)

        async def start() -> asyncio.AbstractServer:
            return await asyncio.start_unix_server(self._serve, path=str(sock))

        self._server = asyncio.run_coroutine_threadsafe(start(), self.loop).result(5)
        now = time.time()
        info = paths.HostInfo(
            pid=os.getpid(),
            profile_id="fake",
            started=now,
            last_active=now,
            connected=True,
            socket=str(sock),
        )
        paths.write_host_info(info, self.runtime_dir)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.close()
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)
        paths.remove_host_files(os.getpid(), self.runtime_dir)


@pytest.fixture
def runtime_dir() -> Iterator[Path]:
    # Short path: AF_UNIX socket paths are limited to ~108 bytes, and pytest's tmp_path is long.
    d = Path(tempfile.mkdtemp(prefix="sbm-"))
    d.chmod(0o700)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def test_stdout_carries_only_protocol(runtime_dir: Path) -> None:
    """Every line the server writes to stdout is a JSON-RPC message, even when calls fail."""
    raw = RawServer(
        "--browser", "connected", "--log-level", "DEBUG",
        env={"SHOTBRIDGE_RUNTIME_DIR": str(runtime_dir)},
    )  # fmt: skip
    raw.initialize()
    tools = raw.send({"id": 2, "method": "tools/list"})
    assert tools is not None
    assert {t["name"] for t in tools["result"]["tools"]} == {
        "observe", "configure", "capture_screenshot", "interact",
        "get_reproduction_script", "generate_test", "generate_bug_report",
    }  # fmt: skip
    for i, (name, args) in enumerate([("observe", {"what": "page"}), ("capture_screenshot", {})]):
        reply = raw.send({"id": 10 + i, "method": "tools/call",
                          "params": {"name": name, "arguments": args}})  # fmt: skip
        assert reply is not None
        assert reply["result"]["isError"] is True
        assert "No browser is connected" in reply["result"]["content"][0]["text"]
    err = raw.finish()
    assert all(json.loads(line).get("jsonrpc") == "2.0" for line in raw.lines)
    assert b"shotctl mcp" in err  # logging goes to stderr


def test_real_socket_host_screenshot_round_trip(runtime_dir: Path) -> None:
    with (
        FakeHost(runtime_dir) as host,
        McpSession("--browser", "connected", env={"SHOTBRIDGE_RUNTIME_DIR": str(runtime_dir)}) as s,
    ):
        r = s.call("observe", {"what": "page"})
        assert not r.is_error, r
        assert json.loads(r.content[0].text)["title"] == "Fixture page"
        r = s.call("capture_screenshot", {})
        assert not r.is_error, r
        img = next(b for b in r.content if isinstance(b, ImageContent))
        assert img.mime_type == "image/jpeg"
        Image.open(io.BytesIO(base64.b64decode(img.data))).verify()
        text = next(b for b in r.content if isinstance(b, TextContent)).text
        assert "1280×720 px JPEG" in text
        r = s.call("capture_screenshot", {})  # right after: never refused by default
        assert not r.is_error, r
    cmds = [c for c, _ in host.requests]
    assert cmds.count("screenshot") == 2 and "page_info" in cmds


def test_cli_help_and_bad_window_size() -> None:
    params = server_params("--help")
    env = {**os.environ, **(params.env or {})}
    out = subprocess.run(
        [params.command, *params.args], capture_output=True, env=env, text=True, timeout=30
    )
    assert out.returncode == 0 and "--browser [auto|connected|headless]" in out.stdout
    assert "--session-limit" not in out.stdout  # test-only knobs stay hidden
    assert "--cooldown SECONDS" in out.stdout  # a documented limit on explicit screenshots
    bad = server_params("--window-size", "huge")
    out = subprocess.run(
        [bad.command, *bad.args],
        capture_output=True,
        env=env,
        text=True,
        timeout=30,
        stdin=subprocess.DEVNULL,
    )
    assert out.returncode == 2 and "WIDTHxHEIGHT" in out.stderr


if sys.platform == "win32":  # pragma: no cover
    pytestmark = pytest.mark.skip("Unix sockets")
