"""Length-prefixed frames for the two hops: Chrome's native messaging and the local bus.

* native: 32-bit length in native byte order + UTF-8 JSON object (Chrome's rules: at most 1 MB
  host -> browser, at most 64 MiB browser -> host).
* bus: 32-bit big-endian length + msgpack map (bytes stay bytes).

Every reader checks the announced length against its limit *before* reading the body, so a bogus
header cannot make us allocate or wait for gigabytes. A clean end of stream between two frames reads
as ``None``; anything else that goes wrong is a :class:`~shotbridge.errors.FrameError`.
"""

from __future__ import annotations

import asyncio
import json
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, BinaryIO, Protocol

import msgpack

from shotbridge.errors import FrameError

NATIVE_MAX_OUT = 1024 * 1024  # host -> browser: Chrome drops the port on anything bigger
NATIVE_MAX_IN = 64 * 1024 * 1024  # browser -> host
BUS_MAX_DEFAULT = 128 * 1024 * 1024

Message = dict[str, Any]


class _Writable(Protocol):
    def write(self, data: bytes, /) -> Any: ...


def _json_dumps(msg: Message) -> bytes:
    # allow_nan=False: NaN/Infinity are not JSON and Chrome's parser would reject the frame.
    return json.dumps(msg, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def _json_loads(body: bytes) -> Any:
    return json.loads(body.decode("utf-8"))


def _msgpack_dumps(msg: Message) -> bytes:
    return msgpack.packb(msg, use_bin_type=True)


def _msgpack_loads(body: bytes) -> Any:
    return msgpack.unpackb(body, raw=False)


@dataclass(frozen=True)
class Codec:
    """One framing: header layout, size limits each way, and the body encoding."""

    name: str
    header: struct.Struct
    max_in: int  # largest body we accept
    max_out: int  # largest body we send
    dumps: Callable[[Message], bytes]
    loads: Callable[[bytes], Any]

    # ---- bodies ------------------------------------------------------------------------------

    def encode(self, msg: Message) -> bytes:
        """Header + body; FrameError when ``msg`` is not a map, not encodable or over max_out."""
        if not isinstance(msg, dict):
            raise FrameError(f"{self.name} frame must be a map, not {type(msg).__name__}")
        try:
            body = self.dumps(msg)
        except (TypeError, ValueError, OverflowError) as exc:
            raise FrameError(f"cannot encode {self.name} frame: {exc}") from exc
        if len(body) > self.max_out:
            raise FrameError(
                f"{self.name} frame of {len(body)} bytes exceeds the {self.max_out}-byte limit"
            )
        return self.header.pack(len(body)) + body

    def decode(self, body: bytes) -> Message:
        try:
            msg = self.loads(body)
        except Exception as exc:  # each decoder raises its own zoo of exceptions
            raise FrameError(f"undecodable {self.name} frame: {exc}") from exc
        if not isinstance(msg, dict):
            raise FrameError(f"{self.name} frame must be a map, got {type(msg).__name__}")
        return msg

    def body_length(self, header: bytes) -> int:
        (length,) = self.header.unpack(header)
        if length > self.max_in:
            raise FrameError(
                f"{self.name} frame announces {length} bytes, over the {self.max_in}-byte limit"
            )
        return length

    # ---- blocking streams --------------------------------------------------------------------

    def read(self, stream: BinaryIO) -> Message | None:
        """Next frame from a blocking binary stream; None on a clean EOF between frames."""
        header = _read_exactly(stream, self.header.size)
        if not header:
            return None
        if len(header) < self.header.size:
            raise FrameError(f"truncated {self.name} frame header ({len(header)} bytes)")
        length = self.body_length(header)
        body = _read_exactly(stream, length)
        if len(body) < length:
            raise FrameError(f"truncated {self.name} frame: got {len(body)} of {length} bytes")
        return self.decode(body)

    def write(self, stream: _Writable, msg: Message) -> None:
        stream.write(self.encode(msg))

    # ---- asyncio streams ---------------------------------------------------------------------

    async def aread(self, reader: asyncio.StreamReader) -> Message | None:
        """Next frame from an asyncio stream; None on a clean EOF between frames."""
        try:
            header = await reader.readexactly(self.header.size)
        except asyncio.IncompleteReadError as exc:
            if not exc.partial:
                return None
            raise FrameError(
                f"truncated {self.name} frame header ({len(exc.partial)} bytes)"
            ) from None
        length = self.body_length(header)
        try:
            body = await reader.readexactly(length)
        except asyncio.IncompleteReadError as exc:
            raise FrameError(
                f"truncated {self.name} frame: got {len(exc.partial)} of {length} bytes"
            ) from None
        return self.decode(body)

    async def awrite(self, writer: asyncio.StreamWriter, msg: Message) -> None:
        writer.write(self.encode(msg))
        await writer.drain()


def _read_exactly(stream: BinaryIO, n: int) -> bytes:
    """Read ``n`` bytes, looping over short reads (pipes); fewer only at EOF."""
    if n == 0:
        return b""
    chunks: list[bytes] = []
    remaining = n
    while remaining:
        chunk = stream.read(remaining)
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


NATIVE = Codec(
    name="native",
    header=struct.Struct("=I"),
    max_in=NATIVE_MAX_IN,
    max_out=NATIVE_MAX_OUT,
    dumps=_json_dumps,
    loads=_json_loads,
)


def bus_codec(max_size: int = BUS_MAX_DEFAULT) -> Codec:
    """The bus framing with its size limit (same limit both ways)."""
    return Codec(
        name="bus",
        header=struct.Struct(">I"),
        max_in=max_size,
        max_out=max_size,
        dumps=_msgpack_dumps,
        loads=_msgpack_loads,
    )


BUS = bus_codec()
