"""Every MCP request is answered: raw bytes into the real ``shotctl mcp`` over stdio.

The MCP SDK drops lines its parser refuses (a ``\\ud800`` escape, JSON nested 20,000 deep, a wrong
type in the envelope) and the client waits forever. shotbridge screens each line first
(mcp_server/stdio_guard.py). Here a real server process gets raw frames on stdin; every request
must get exactly one reply (an error where the frame is bad, with the request's id when it can be
read) within 1 s, notifications none, and the server must keep answering afterwards.
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from shotbridge.mcp_server.stdio_guard import MAX_DEPTH, MAX_LINE, Rejection, screen

pytestmark = pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisWarning")
REPO = Path(__file__).resolve().parents[1]
REPLY_WITHIN = 1.0  # s: the bound for an answer to any request
INT64 = 2**63


class RawServer:
    """``shotctl mcp`` with stdin/stdout as raw byte pipes; a thread collects reply lines."""

    def __init__(self, workdir: Path) -> None:
        self.stderr_path = workdir / "mcp.stderr"
        env = {
            **os.environ,
            "PYTHONPATH": str(REPO / "python"),
            "SHOTBRIDGE_RUNTIME_DIR": str(workdir / "rt"),  # no host there: nothing to reach
            "SHOTBRIDGE_STATE_DIR": str(workdir / "state"),
        }
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "shotbridge", "mcp", "--browser", "connected"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self.stderr_path.open("wb"), env=env,
        )  # fmt: skip
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._collect, daemon=True).start()
        self.sentinels = itertools.count()

    def _collect(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)

    def send(self, frame: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(frame + b"\n")
        self.proc.stdin.flush()

    def reply(self, timeout: float = REPLY_WITHIN) -> dict[str, Any]:
        return json.loads(self.lines.get(timeout=timeout))

    def request(self, method: str, params: dict[str, Any] | None = None, rid: Any = 1) -> Any:
        msg = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(json.dumps(msg).encode())
        return self.reply(timeout=30)

    def exchange(self, frame: bytes) -> tuple[list[dict[str, Any]], float]:
        """Send ``frame`` then a ping; the replies that came before the ping's, and the time the
        first of them (or the ping's) took."""
        tag = f"sentinel-{next(self.sentinels)}"
        started = time.monotonic()
        self.send(frame)
        self.send(json.dumps({"jsonrpc": "2.0", "id": tag, "method": "ping"}).encode())
        replies: list[dict[str, Any]] = []
        first = None
        while True:
            msg = self.reply()
            first = first if first is not None else time.monotonic() - started
            if msg.get("id") == tag:
                return replies, first
            replies.append(msg)

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()

    def log(self) -> str:
        return self.stderr_path.read_text(errors="replace")


@pytest.fixture(scope="module")
def server() -> Iterator[RawServer]:
    with tempfile.TemporaryDirectory(prefix="sbmcp", dir="/tmp") as tmp:
        srv = RawServer(Path(tmp))
        try:
            init = srv.request(
                "initialize",
                {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "fuzz", "version": "1"},
                },
                rid=0,
            )
            assert "result" in init, init
            srv.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
            yield srv
        finally:
            srv.close()


def tools_list_works(server: RawServer) -> None:
    reply = server.request("tools/list", rid="after")
    assert reply["id"] == "after" and reply["result"]["tools"]


def call_frame(rid: Any, arguments: str, name: str = "observe") -> bytes:
    head = json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call"})[:-1]
    return f'{head}, "params": {{"name": "{name}", "arguments": {arguments}}}}}'.encode()


# ---- the cases named in the issue -----------------------------------------------------------


def test_lone_surrogate_in_arguments_gets_invalid_params(server: RawServer) -> None:
    replies, took = server.exchange(call_frame(11, '{"what": "\\ud800"}'))
    assert [r["id"] for r in replies] == [11] and replies[0]["error"]["code"] == -32602
    assert took < REPLY_WITHIN
    tools_list_works(server)


def test_arguments_nested_20000_deep_get_invalid_params(server: RawServer) -> None:
    deep = "[" * 20_000 + "]" * 20_000
    replies, took = server.exchange(call_frame("deep", f'{{"x": {deep}}}'))
    assert [r["id"] for r in replies] == ["deep"] and replies[0]["error"]["code"] == -32602
    assert took < REPLY_WITHIN
    tools_list_works(server)


@pytest.mark.parametrize(
    ("frame", "rid", "code"),
    [
        (b'{"jsonrpc":"2.0","id":3,"method":"tools/call"', 3, -32700),  # truncated
        (b'{"jsonrpc":"2.0","id":4,"method":5}', 4, -32600),  # method of the wrong type
        (b'{"jsonrpc":"1.0","id":"v","method":"ping"}', "v", -32600),
        (b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":"x"}', 7, -32602),
        (b'{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"arguments":{}}}', 8, -32602),
        (b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', None, -32600),  # id not int/str
        (b'{"jsonrpc":"2.0","id":' + b"9" * 5000 + b',"method":"ping"}', None, -32700),
        (b'{"jsonrpc":"2.0","id":18446744073709551616,"method":"ping"}', None, -32600),
        (b'\xff\xfe{"jsonrpc":"2.0","id":5,"method":"tools/list"}', 5, -32700),  # not UTF-8
        (b'{"jsonrpc":"2.0","id":"\\udc00","method":"ping"}', None, -32600),
        (b"[1, 2]", None, -32600),  # a batch: not part of MCP
        (b"nonsense", None, -32700),
    ],
)
def test_malformed_requests_get_json_rpc_errors(
    server: RawServer, frame: bytes, rid: Any, code: int
) -> None:
    replies, took = server.exchange(frame)
    assert len(replies) == 1, replies
    assert replies[0]["id"] == rid and replies[0]["error"]["code"] == code
    assert took < REPLY_WITHIN


def test_bad_notifications_are_logged_not_answered(server: RawServer) -> None:
    replies, _ = server.exchange(b'{"jsonrpc":"2.0","method":"notifications/x","params":"\\ud800"}')
    assert replies == []
    assert "rejected a notification" in server.log()
    tools_list_works(server)


# ---- fuzzing: hypothesis over JSON-RPC frames ----------------------------------------------

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=2**63 - 2, max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),  # includes lone surrogates: json.dumps writes them as \\udXXX
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
ids = st.one_of(
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.text(max_size=12),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.none(),
    st.booleans(),
)
methods = st.sampled_from(["tools/list", "ping", "tools/call", "resources/list", "nope/x"])


@st.composite
def messages(draw: st.DrawFn) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": draw(st.sampled_from(["2.0", "2.0", "2.0", "1.0", 2]))}
    msg["id"] = draw(ids)
    msg["method"] = draw(st.one_of(methods, methods, methods, values))
    if msg["method"] == "tools/call":
        arguments = draw(st.one_of(st.dictionaries(st.text(max_size=8), values), values))
        msg["params"] = {
            "name": draw(st.sampled_from(["nope", "", "x" * 50])),
            "arguments": arguments,
        }
    elif draw(st.booleans()):
        msg["params"] = draw(values)
    if draw(st.integers(0, 5)) == 0:
        del msg["id"]  # a notification
    return msg


@st.composite
def frames(draw: st.DrawFn) -> bytes:
    text = json.dumps(draw(messages()))
    kind = draw(st.sampled_from(["plain", "truncated", "deep", "bytes", "surrogate", "huge_id"]))
    if kind == "truncated":
        text = text[: draw(st.integers(0, max(0, len(text) - 1)))]
    elif kind == "deep":
        n = draw(st.sampled_from([MAX_DEPTH - 3, MAX_DEPTH + 1, 1000, 20_000]))
        text = text[:-1] + ', "params": {"a": ' + "[" * n + "]" * n + "}}"
    elif kind == "surrogate":
        text = text[:-1] + ', "params": {"name": "nope", "arguments": {"t": "\\udfff"}}}'
    elif kind == "huge_id":
        text = (
            '{"jsonrpc": "2.0", "id": ' + "7" * draw(st.integers(18, 6000)) + ', "method": "ping"}'
        )
    raw = text.encode("utf-8", "surrogatepass")
    if kind == "bytes":
        at = draw(st.integers(0, len(raw)))
        junk = draw(st.binary(min_size=1, max_size=4).filter(lambda b: b"\n" not in b))
        raw = raw[:at] + junk + raw[at:]
    return raw.replace(b"\n", b" ")


def expected(frame: bytes) -> tuple[int, Any]:
    """(how many replies, the id the reply must carry or ... for any)."""
    if not frame.strip():
        return 0, None
    try:
        text = frame.decode("utf-8")
        # The fuzzer's deep nesting is one run of brackets: flatten it so this parser copes.
        msg = json.loads(re.sub(r"\[{50,}\]{50,}", "[]", text))
    except ValueError:
        return 1, ...
    if isinstance(msg, dict) and "method" in msg:
        if "id" not in msg:
            return 0, None
        rid = msg["id"]
        ok_id = (isinstance(rid, int) and not isinstance(rid, bool) and -INT64 <= rid < INT64) or (
            isinstance(rid, str) and not any("\ud800" <= c <= "\udfff" for c in rid)
        )
        return 1, rid if ok_id else None
    return 1, ...


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(frame=frames())
def test_fuzzed_frames_are_all_answered(server: RawServer, frame: bytes) -> None:
    count, rid = expected(frame)
    replies, took = server.exchange(frame)
    assert took < REPLY_WITHIN
    if count == 0:
        assert replies == []
    else:
        assert len(replies) == 1, (frame[:200], replies)
        if rid is not ...:
            assert replies[0]["id"] == rid
        if "error" in replies[0]:
            assert replies[0]["error"]["code"] in (-32700, -32600, -32601, -32602, -32603)


def test_server_still_answers_after_the_fuzz(server: RawServer) -> None:
    tools_list_works(server)
    assert server.proc.poll() is None


# ---- the screen on its own -----------------------------------------------------------------


def test_screen_passes_good_lines_unchanged() -> None:
    line = (
        '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", '
        '"params": {"name": "observe", "arguments": {"t": "\\ud83d\\ude00"}}}'
    )
    assert screen(line.encode()) == line  # a valid surrogate pair is fine
    assert screen(b"   \r") is None


def test_screen_refuses_oversized_lines() -> None:
    verdict = screen(b"x" * (MAX_LINE + 1))
    assert isinstance(verdict, Rejection) and verdict.code == -32700


def test_screen_reads_the_top_level_id_only() -> None:
    deep = b"[" * 100 + b"]" * 100
    line = b'{"params": {"id": 99, "x": ' + deep + b'}, "id": "me", "method": "m"}'
    verdict = screen(line)
    assert isinstance(verdict, Rejection) and verdict.request_id == "me"
