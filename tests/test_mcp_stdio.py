"""``shotctl mcp`` as a real stdio subprocess, without a browser.

Unit tests: where a host is needed it is ``FakeHost``, a small in-process stand-in that listens on
a real Unix socket and speaks the real bus framing (shotbridge.transport.framing), so the server's
real
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
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp.types import ImageContent, TextContent
from PIL import Image
from shotbridge.transport import paths
from shotbridge.transport.framing import BUS
from shotbridge.wire.messages import HostStatus

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
            status = HostStatus(
                pid=os.getpid(), connected=True, profile_id="fake", started=0, last_active=0
            )
            return {"ok": True, "result": status.model_dump()}
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


# ---- a line over the limit: refused as it streams past, with its id -----------------------------


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def _huge_call(size: int, rid: Any, *, id_last: bool = False) -> bytes:
    """A tools/call whose argument is ``size`` bytes of base64-like text; the id first (as the
    Python SDK writes it) or last (as the TypeScript SDK's ``{...request, jsonrpc, id}`` does)."""
    blob = b"QUJD" * (size // 4)
    params = b'{"name": "interact", "arguments": {"action": "type", "text": "' + blob + b'"}}'
    rid_json = json.dumps(rid).encode()
    if id_last:
        return (
            b'{"jsonrpc": "2.0", "method": "tools/call", "params": '
            + params
            + (b', "id": ' + rid_json + b"}\n")
        )
    return (
        b'{"jsonrpc": "2.0", "id": '
        + rid_json
        + b', "method": "tools/call", "params": '
        + (params + b"}\n")
    )


def _reply(raw: RawServer, rid: Any) -> dict[str, Any]:
    """The next line on stdout, which must be the reply to ``rid`` (replies come in order)."""
    assert raw.proc.stdout is not None
    line = raw.proc.stdout.readline()
    assert line, "server closed stdout"
    raw.lines.append(line)
    reply = json.loads(line)
    assert reply.get("id") == rid, reply
    return reply


def test_oversized_lines_are_refused_with_their_id_and_memory_stays_flat(
    runtime_dir: Path,
) -> None:
    """70 MB and 50 MB lines: each refused with its own id (first or last in the object), the
    next request answered, and the server's RSS grows by less than 32 MB over all of them."""
    from shotbridge.mcp_server.stdio_guard import MAX_LINE

    raw = RawServer("--browser", "connected", env={"SHOTBRIDGE_RUNTIME_DIR": str(runtime_dir)})
    raw.initialize()
    assert raw.send({"id": 2, "method": "tools/list"}) is not None
    before = _rss_kb(raw.proc.pid)
    cases: list[tuple[bytes, Any]] = [
        (_huge_call(70_000_000, 71), 71),
        (_huge_call(50_000_000, "late-id", id_last=True), "late-id"),
        (_huge_call(MAX_LINE + 10, 72, id_last=True), 72),
        (b"x" * 20_000_000 + b"\n", None),  # not JSON: no id to read
    ]
    assert raw.proc.stdin is not None
    for line, rid in cases:
        raw.proc.stdin.write(line)
        raw.proc.stdin.write(b'{"jsonrpc": "2.0", "id": "after", "method": "ping"}\n')
        raw.proc.stdin.flush()
        refused = _reply(raw, rid)
        assert refused["error"]["code"] == -32700
        assert "larger than 4 MiB" in refused["error"]["message"]
        assert _reply(raw, "after") == {"jsonrpc": "2.0", "id": "after", "result": {}}
    # An oversized notification is not answered (JSON-RPC forbids it); the next request is.
    note = b'{"jsonrpc": "2.0", "method": "notifications/x", "params": {"b": "'
    raw.proc.stdin.write(note + b"A" * 30_000_000 + b'"}}\n')
    raw.proc.stdin.write(b'{"jsonrpc": "2.0", "id": "last", "method": "ping"}\n')
    raw.proc.stdin.flush()
    assert _reply(raw, "last")["result"] == {}
    grown_mb = (_rss_kb(raw.proc.pid) - before) / 1024
    assert grown_mb < 32, f"RSS grew by {grown_mb:.0f} MB"
    raw.finish()
    ids = [json.loads(line).get("id") for line in raw.lines]
    assert ids.count(None) == 1  # only the line that was not JSON


def test_a_line_just_under_the_limit_is_still_handled(runtime_dir: Path) -> None:
    from shotbridge.mcp_server.stdio_guard import MAX_LINE

    raw = RawServer("--browser", "connected", env={"SHOTBRIDGE_RUNTIME_DIR": str(runtime_dir)})
    raw.initialize()
    line = _huge_call(MAX_LINE - 200, 9)
    assert len(line) - 1 <= MAX_LINE
    assert raw.proc.stdin is not None
    raw.proc.stdin.write(line)
    raw.proc.stdin.flush()
    reply = _reply(raw, 9)
    assert "larger than" not in json.dumps(reply)  # parsed, and answered by the tool itself
    raw.finish()


@given(
    rid=st.one_of(st.integers(-(2**63), 2**63 - 1), st.text(max_size=40)),
    filler=st.text(alphabet='ab"\\{}[]:,é \n', max_size=300),
    big=st.integers(0, 3000),
    id_last=st.booleans(),
    cuts=st.lists(st.integers(1, 4000), max_size=12),
)
@settings(max_examples=300, deadline=None)
def test_id_scanner_reads_the_id_whatever_the_pieces(
    rid: Any, filler: str, big: int, id_last: bool, cuts: list[int]
) -> None:
    """The streaming scanner agrees with json.loads on the top-level id, pieces cut anywhere."""
    from shotbridge.mcp_server.stdio_guard import IdScanner

    params = {"n": {"id": "inner", "x": [filler, {"id": 5}]}, "blob": "Q" * big + filler}
    msg = (
        {"jsonrpc": "2.0", "method": "m", "params": params, "id": rid}
        if id_last
        else {"jsonrpc": "2.0", "id": rid, "method": "m", "params": params}
    )
    line = json.dumps(msg, ensure_ascii=bool(big % 2)).encode()
    scanner = IdScanner()
    pos = 0
    for cut in sorted(cuts):
        scanner.feed(line[pos:cut])
        pos = max(pos, cut)
    scanner.feed(line[pos:])
    short = len(json.dumps(rid, ensure_ascii=bool(big % 2)).encode()) <= 256
    assert scanner.request_id == (rid if short else None)
    assert not scanner.notification
