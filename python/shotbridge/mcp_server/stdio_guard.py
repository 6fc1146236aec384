"""Every request on stdio gets an answer: lines the MCP SDK would drop are answered here.

The SDK's stdio transport parses each line with pydantic; when that fails (bad JSON, a lone
surrogate escape such as ``\\ud800``, JSON nested 20,000 deep, a wrong type in the envelope) it
hands the exception to the session, which logs it and never replies: the client waits forever.
So each line is screened before the SDK sees it, with cheap checks that cannot recurse:

* not UTF-8, not JSON, or too big          -> -32700 parse error
  (a line over ``MAX_LINE`` is never held: it is read in pieces and dropped up to its newline,
  while a streaming scanner picks its top-level id out of the pieces in constant memory)
* not a JSON-RPC 2.0 request/notification  -> -32600 invalid request
* params nested too deep, lone surrogates, params not an object -> -32602 invalid params

The reply carries the request's id whenever it can be read (a top-level ``"id"`` found by a
scanner that tracks nesting without recursing), else ``null``. Rejected notifications are logged,
since JSON-RPC forbids answering them. Lines that pass go to the SDK unchanged.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, BinaryIO

import anyio
import anyio.to_thread
import mcp_types as types
from anyio.streams.memory import MemoryObjectSendStream
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

log = logging.getLogger(__name__)

# Bytes in one message. No tool takes an image or a file: the largest legitimate arguments are a
# text to type, a script's selectors or 50 mask selectors of 500 chars — kilobytes. 4 MiB still
# fits a ~3 MB image in base64 should a client send one, and keeps a line's parse (JSON, pydantic)
# near 0.1 s and its memory near 30 MB; a longer line is refused as it streams past.
MAX_LINE = 4 * 1024 * 1024
PIECE = 1 << 20  # how much of an oversized line is held at a time
TOO_BIG = f"message larger than {MAX_LINE // (1024 * 1024)} MiB ({MAX_LINE} bytes): refused unread"
MAX_DEPTH = 64  # nesting of the whole message; MCP messages use a handful of levels
_INT64 = 2**63

# One token of JSON structure: a complete string (unrolled loop: fast on long base64), or a
# structural character. Numbers and literals are skipped; json.loads judges them later.
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}:,]', re.DOTALL)
_SCALAR = re.compile(r'\s*("[^"\\]*(?:\\.[^"\\]*)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|null)')


@dataclass(frozen=True)
class Rejection:
    """Why a line was refused, and the JSON-RPC error to answer it with."""

    code: int
    message: str
    request_id: int | str | None = None
    notification: bool = False

    def reply(self) -> types.JSONRPCError:
        return types.JSONRPCError(
            jsonrpc="2.0",
            id=self.request_id,
            error=types.ErrorData(code=self.code, message=self.message),
        )


@dataclass(frozen=True)
class _Shape:
    depth: int  # deepest nesting in the message
    deep_key: str | None  # the top-level key under which that depth was reached
    request_id: int | str | None  # top-level "id", when readable and valid
    keys: frozenset[str]  # the top-level keys seen

    @property
    def notification(self) -> bool:
        return "method" in self.keys and "id" not in self.keys


def screen(raw: bytes | str) -> str | Rejection | None:
    """The line to hand to the SDK, the error to answer instead, or None for a blank line."""
    if len(raw) - (raw[-1:] in (b"\n", "\n")) > MAX_LINE:
        return Rejection(types.PARSE_ERROR, TOO_BIG)
    if isinstance(raw, bytes):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            shape = _scan(raw.decode("utf-8", "replace"))
            return Rejection(
                types.PARSE_ERROR, f"message is not UTF-8 (byte {exc.start})", shape.request_id
            )
    else:
        text = raw
    if not text.strip():
        return None
    shape = _scan(text)
    if shape.depth > MAX_DEPTH:
        where = types.INVALID_PARAMS if shape.deep_key == "params" else types.INVALID_REQUEST
        why = f"message nested deeper than {MAX_DEPTH} levels"
        return Rejection(where, why, shape.request_id, notification=shape.notification)
    try:
        msg = json.loads(text)
    except (ValueError, RecursionError) as exc:
        why = "a number too long" if "digits" in str(exc) else str(exc)
        return Rejection(types.PARSE_ERROR, f"invalid JSON: {why}", shape.request_id)
    return _check_envelope(msg, shape.request_id) or _check_sdk(text, msg, shape.request_id)


def _scan(text: str) -> _Shape:
    """Nesting depth and the top-level id, in one pass that never recurses."""
    depth = max_depth = 0
    deep_key: str | None = None
    key: str | None = None
    last_string: str | None = None
    request_id: int | str | None = None
    keys: set[str] = set()
    for match in _TOKEN.finditer(text):
        token = match.group()
        char = token[0]
        if char in "[{":
            depth += 1
            if depth > max_depth:
                max_depth, deep_key = depth, key
        elif char in "]}":
            depth -= 1
        elif depth != 1:
            continue
        elif char == '"':
            last_string = token
        elif char == ":" and last_string is not None:
            key = _string(last_string)
            keys.add(key or "")
            if key == "id":
                request_id = _read_id(text, match.end())
        elif char == ",":
            last_string = None
    return _Shape(max_depth, deep_key, request_id, frozenset(keys))


def _string(token: str) -> str | None:
    with contextlib.suppress(ValueError):
        value = json.loads(token)
        return value if isinstance(value, str) else None
    return None


def _read_id(text: str, pos: int) -> int | str | None:
    match = _SCALAR.match(text, pos)
    if match is None:
        return None
    try:
        value = json.loads(match.group(1))
    except ValueError:  # e.g. an integer of more than 4,300 digits
        return None
    return value if _valid_id(value) else None


def _valid_id(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return -_INT64 <= value < _INT64
    return isinstance(value, str) and _encodable(value)


def _encodable(value: Any) -> bool:
    """False when ``value`` holds a lone surrogate (valid JSON escape, not valid Unicode)."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _check_envelope(msg: Any, rid: int | str | None) -> Rejection | None:
    if not isinstance(msg, dict):
        kind = "a batch (array)" if isinstance(msg, list) else type(msg).__name__
        return Rejection(types.INVALID_REQUEST, f"expected a JSON-RPC object, got {kind}")
    if "method" not in msg:  # a response to one of our requests
        if "id" in msg and ("result" in msg or "error" in msg) and _valid_id(msg["id"]):
            return None if _encodable(msg) else Rejection(types.INVALID_REQUEST, "lone surrogate")
        return Rejection(types.INVALID_REQUEST, "neither a request nor a response")
    notification = "id" not in msg
    if not notification and not _valid_id(msg["id"]):
        return Rejection(types.INVALID_REQUEST, "id must be a string or a 64-bit integer")
    problem: tuple[int, str] | None = None
    params = msg.get("params")
    if msg.get("jsonrpc") != "2.0":
        problem = (types.INVALID_REQUEST, 'jsonrpc must be "2.0"')
    elif not isinstance(msg["method"], str) or not _encodable(msg["method"]):
        problem = (types.INVALID_REQUEST, "method must be a string")
    elif params is not None and not isinstance(params, dict):
        problem = (types.INVALID_PARAMS, "params must be an object")
    elif not _encodable(params):
        problem = (types.INVALID_PARAMS, "params hold a lone UTF-16 surrogate (e.g. \\ud800)")
    elif not _encodable(msg):
        problem = (types.INVALID_REQUEST, "message holds a lone UTF-16 surrogate")
    elif msg["method"] == "tools/call":
        problem = _check_tool_call(params or {})
    if problem is None:
        return None
    return Rejection(problem[0], problem[1], None if notification else rid, notification)


def _check_tool_call(params: dict[str, Any]) -> tuple[int, str] | None:
    if not isinstance(params.get("name"), str):
        return types.INVALID_PARAMS, "tools/call needs params.name, a string"
    if params.get("arguments") is not None and not isinstance(params["arguments"], dict):
        return types.INVALID_PARAMS, "tools/call params.arguments must be an object"
    return None


def _check_sdk(text: str, msg: dict[str, Any], rid: int | str | None) -> str | Rejection:
    """Last net: what the SDK's own parser refuses is answered here rather than dropped."""
    try:
        types.jsonrpc_message_adapter.validate_json(text, by_name=False)
    except Exception as exc:  # pydantic's ValidationError, or whatever else it may raise
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        why = f"not a valid MCP message: {first}"
        return Rejection(types.INVALID_REQUEST, why, rid, notification="id" not in msg)
    return text


# ---- an oversized line, in pieces ------------------------------------------------------------

# In a piece: a whole string (or one cut by the piece's end: no closing quote), or a structural
# character. Bytes: a UTF-8 continuation byte is never a quote, a backslash or a bracket.
_PIECE_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*("?)|[\[\]{}:,]', re.DOTALL)
_STRING_REST = re.compile(rb'[^"\\]*(?:\\.[^"\\]*)*', re.DOTALL)
SHORT = 256  # a key or an id longer than this is not read (not "cheap"); nothing longer is held


class IdScanner:
    """The top-level ``id`` (and whether there is a ``method``) of a line seen piece by piece.

    Keeps the nesting depth, whether it is inside a string, and at most ``SHORT`` bytes carried
    from one piece to the next, so a 70 MB line costs one piece of memory. An id that is not a
    short string or a 64-bit integer reads as None, as a wrong one does in :func:`screen`.
    """

    def __init__(self) -> None:
        self.depth = 0
        self.request_id: int | str | None = None
        self.keys: set[str] = set()
        self._carry = b""  # a short string cut by the last piece's end, or the id's start
        self._in_long_string = False  # inside a string too long to keep
        self._escaped = False  # that string's last piece ended with a lone backslash
        self._key: bytes | None = None  # the last depth-1 string: a key if a colon follows
        self._want_id = False  # the last depth-1 key was "id": its value comes next

    @property
    def notification(self) -> bool:
        return "method" in self.keys and "id" not in self.keys

    def feed(self, piece: bytes) -> None:
        if self._in_long_string:
            piece = self._skip_string(piece)
            if self._in_long_string:
                return
        data, self._carry = self._carry + piece, b""
        pos = value_start = 0
        while (m := _PIECE_TOKEN.search(data, pos)) is not None:
            token = m.group()
            if token[:1] == b'"' and not m.group(1):  # a string cut by the piece's end
                self._cut_string(data, m.start(), m.end())
                return
            if self._want_id:
                self._read_value(data[value_start : m.start()], token)
            self._token(token)
            pos = value_start = m.end()
        if self._want_id:  # the id's scalar may go on in the next piece
            rest = data[value_start:]
            if len(rest) <= SHORT:
                self._carry = rest
            else:
                self._want_id = False  # a scalar that long is no id

    def _token(self, token: bytes) -> None:
        char = token[:1]
        if char in (b"[", b"{"):
            self.depth += 1
        elif char in (b"]", b"}"):
            self.depth -= 1
        elif self.depth != 1:
            return
        elif char == b'"':
            self._key = token
        elif char == b":" and self._key is not None:
            key = _string(self._key.decode("utf-8", "replace"))
            self.keys.add(key or "")
            self._key = None
            self._want_id = key == "id"
        elif char == b",":
            self._key = None

    def _read_value(self, scalar: bytes, token: bytes) -> None:
        """The string token after ``"id":``, or the bare scalar before the next token."""
        self._want_id = False
        text = token if token[:1] == b'"' else scalar.strip()
        try:
            value = json.loads(text)
        except ValueError:
            value = None
        self.request_id = value if _valid_id(value) else None

    def _cut_string(self, data: bytes, start: int, end: int) -> None:
        if len(data) - start <= SHORT:
            self._carry = data[start:]  # a key or an id, most likely: finish it next piece
            return
        self._in_long_string = True
        self._escaped = end < len(data)  # the piece ends with a lone backslash
        self._key = None
        if self._want_id:
            self._want_id, self.request_id = False, None  # an id that long is not read

    def _skip_string(self, piece: bytes) -> bytes:
        start = 1 if self._escaped and piece else 0
        m = _STRING_REST.match(piece, start)
        end = m.end() if m else start
        if end < len(piece) and piece[end : end + 1] == b'"':
            self._in_long_string = False
            return piece[end + 1 :]
        self._escaped = end < len(piece)  # stopped at a lone backslash at the very end
        return b""


# ---- the transport ---------------------------------------------------------------------------


class GuardedLines:
    """stdin as the SDK's line source: good lines pass, bad ones are answered on ``replies``."""

    def __init__(self, wire: BinaryIO) -> None:
        self.wire = wire
        self.replies: MemoryObjectSendStream[SessionMessage] | None = None
        self._ready = anyio.Event()

    def attach(self, replies: MemoryObjectSendStream[SessionMessage]) -> None:
        self.replies = replies
        self._ready.set()

    async def __aiter__(self) -> AsyncIterator[str]:
        while True:
            raw = await self._read(MAX_LINE + 1)
            if not raw:
                return
            if len(raw) > MAX_LINE and not raw.endswith(b"\n"):
                await self._refuse_oversized(raw)
                continue
            verdict = screen(raw)
            if isinstance(verdict, str):
                yield verdict
            elif verdict is not None:
                await self._reject(verdict)

    async def _read(self, limit: int) -> bytes:
        return await anyio.to_thread.run_sync(self.wire.readline, limit, abandon_on_cancel=True)

    async def _refuse_oversized(self, head: bytes) -> None:
        """Answer a line over MAX_LINE and drop the rest of it, a piece at a time.

        The answer goes out as soon as the id is known (at once when the client put it first),
        else when the line ends; a notification is only logged. Nothing of the line is kept.
        """
        scanner = IdScanner()
        for start in range(0, len(head), PIECE):
            scanner.feed(head[start : start + PIECE])
        del head
        answered = scanner.request_id is not None
        if answered:
            await self._reject(Rejection(types.PARSE_ERROR, TOO_BIG, scanner.request_id))
        while piece := await self._read(PIECE):
            if not answered:
                scanner.feed(piece)
            if piece.endswith(b"\n"):
                break
        if not answered:
            why = Rejection(types.PARSE_ERROR, TOO_BIG, scanner.request_id, scanner.notification)
            await self._reject(why)

    async def _reject(self, rejection: Rejection) -> None:
        if rejection.notification:
            log.warning("rejected a notification: %s", rejection.message)
            return
        log.warning(
            "answering request %r with JSON-RPC error %d: %s",
            rejection.request_id,
            rejection.code,
            rejection.message,
        )
        await self._ready.wait()
        assert self.replies is not None
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            await self.replies.send(SessionMessage(rejection.reply()))


def _claim_stdin() -> BinaryIO:
    """The wire, on a private fd; fd 0 itself reads /dev/null so children cannot eat our input."""
    wire = os.dup(0)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    return os.fdopen(wire, "rb", closefd=False)


async def serve_stdio(server: Any) -> None:
    """Run an MCPServer over stdio with every line screened (``server.run("stdio")``, guarded)."""
    lines = GuardedLines(_claim_stdin())
    lowlevel = server._lowlevel_server
    async with stdio_server(stdin=lines) as (read_stream, write_stream):  # type: ignore[arg-type]
        lines.attach(write_stream)
        await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
