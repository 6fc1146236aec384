"""Length-prefixed frames for the two hops: Chrome's native messaging and the local bus.

* native: 32-bit length in native byte order + UTF-8 JSON object (Chrome's rules: at most 1 MB
  host -> browser, at most 64 MiB browser -> host).
* bus: 32-bit big-endian length + msgpack map (bytes stay bytes).

Every reader checks the announced length against its limit *before* reading the body, so a bogus
header cannot make us allocate or wait for gigabytes. The asyncio reader can also charge each body
to a shared :class:`ByteBudget` (the bus caps what all its clients together may have half-sent), and
reads big bodies into one buffer allocated for the announced size: a single mapping the allocator
hands back to the system the moment the frame is done or its sender leaves, instead of a growing
buffer that leaves the heap fragmented. A clean end of stream between two frames reads as ``None``;
anything else that goes wrong is a :class:`~shotbridge.wire.errors.FrameError`.
"""

from __future__ import annotations

import asyncio
import json
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, BinaryIO, Protocol

import msgpack

from shotbridge.wire.errors import FrameError

NATIVE_MAX_OUT = 1024 * 1024  # host -> browser: Chrome drops the port on anything bigger
NATIVE_MAX_IN = 64 * 1024 * 1024  # browser -> host
BUS_MAX_DEFAULT = 128 * 1024 * 1024
_CHUNKED_BODY = 256 * 1024  # bodies at least this big are read chunk by chunk into one buffer

Message = dict[str, Any]


class ByteBudget:
    """Bytes that frames being received may hold, shared by every connection of one server."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.used = 0

    @property
    def free(self) -> int:
        return self.total - self.used

    def reserve(self, n: int) -> bool:
        if n > self.free:
            return False
        self.used += n
        return True

    def release(self, n: int) -> None:
        self.used = max(0, self.used - n)


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

    async def aread(
        self,
        reader: asyncio.StreamReader,
        *,
        budget: ByteBudget | None = None,
        stall_timeout: float | None = None,
    ) -> Message | None:
        """Next frame from an asyncio stream; None on a clean EOF between frames.

        ``budget``: the body's announced size is reserved from it before any of it is read (and
        released once decoded, or on any failure); a body that does not fit is a FrameError.
        ``stall_timeout``: a body whose bytes stop arriving for that long is a FrameError.
        """
        try:
            header = await reader.readexactly(self.header.size)
        except asyncio.IncompleteReadError as exc:
            if not exc.partial:
                return None
            raise FrameError(
                f"truncated {self.name} frame header ({len(exc.partial)} bytes)"
            ) from None
        length = self.body_length(header)
        if budget is not None and not budget.reserve(length):
            raise FrameError(
                f"{self.name} frame of {length} bytes refused: the host is already holding "
                f"{budget.used} of its {budget.total} bytes for frames being received"
            )
        try:
            body = await self._read_body(reader, length, stall_timeout)
            return self.decode(body)
        finally:
            body = b""  # drop our reference before handing the reservation back
            if budget is not None:
                budget.release(length)

    async def _read_body(
        self, reader: asyncio.StreamReader, length: int, stall_timeout: float | None
    ) -> bytes | bytearray:
        if length < _CHUNKED_BODY and stall_timeout is None:
            try:
                return await reader.readexactly(length)
            except asyncio.IncompleteReadError as exc:
                raise FrameError(
                    f"truncated {self.name} frame: got {len(exc.partial)} of {length} bytes"
                ) from None
        # Zero-filled and untouched pages cost nothing: memory grows only as bytes arrive.
        buf = bytearray(length)
        view = memoryview(buf)
        got = 0
        try:
            while got < length:
                try:
                    chunk = await asyncio.wait_for(reader.read(length - got), stall_timeout)
                except TimeoutError:
                    raise FrameError(
                        f"{self.name} frame stalled: got {got} of {length} bytes, then nothing "
                        f"for {stall_timeout:g} s"
                    ) from None
                if not chunk:
                    raise FrameError(f"truncated {self.name} frame: got {got} of {length} bytes")
                view[got : got + len(chunk)] = chunk
                got += len(chunk)
            return buf
        finally:
            # A failed read's traceback keeps this frame (and its locals) alive until the cycle
            # collector runs: drop the buffer now so its memory goes back at once.
            view.release()
            del buf

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
