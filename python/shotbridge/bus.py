"""The host's side of the local bus: a Unix socket only its own user may use.

Three locks on the door, each enough on its own: the runtime dir is 0700, the socket is 0600 from
the moment it exists (bound under a restrictive umask), and every connection's peer uid is checked
with SO_PEERCRED / LOCAL_PEERCRED. No TCP anywhere.

The server only moves frames: each request frame goes to ``handler`` in a task of its own (so one
slow capture does not hold up the others on that connection); what the frame means is the host's
business.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import socket
import struct
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from shotbridge.errors import FrameError
from shotbridge.framing import BUS, Codec
from shotbridge.protocol import ErrorCode

log = logging.getLogger(__name__)

_LOCAL_PEERCRED = 0x001  # macOS <sys/un.h>; level SOL_LOCAL = 0
_XUCRED = struct.Struct("2Ih16I")  # struct xucred: version, uid, ngroups, groups[16]


def peer_uid(sock: Any) -> int:
    """Uid of the process at the other end of a connected AF_UNIX stream socket."""
    if hasattr(socket, "SO_PEERCRED"):  # Linux: struct ucred {pid, uid, gid}
        creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        return struct.unpack("3i", creds)[1]
    if sys.platform == "darwin":
        return _XUCRED.unpack(sock.getsockopt(0, _LOCAL_PEERCRED, _XUCRED.size))[1]
    raise OSError("cannot read the peer's credentials on this platform")


def error_frame(request_id: Any, code: str, message: str) -> dict[str, Any]:
    return {
        "id": request_id if isinstance(request_id, str) else "",
        "ok": False,
        "error": {"code": str(code), "message": message},
    }


class BusConnection:
    """One client. ``send`` is safe to call from many tasks; it never raises."""

    _ids = itertools.count(1)

    def __init__(self, writer: asyncio.StreamWriter, codec: Codec) -> None:
        self.id = next(self._ids)
        self.writer = writer
        self.codec = codec
        self.subscribed = False
        self.closed = False
        self._lock = asyncio.Lock()

    async def send(self, msg: dict[str, Any]) -> bool:
        """Write one frame; False when the client is gone (its late replies are just dropped)."""
        if self.closed:
            return False
        try:
            frame = self.codec.encode(msg)
        except FrameError as exc:
            log.error("reply to client %d not encodable: %s", self.id, exc)
            frame = self.codec.encode(error_frame(msg.get("id"), ErrorCode.INTERNAL, str(exc)))
        try:
            async with self._lock:
                self.writer.write(frame)
                await self.writer.drain()
        except (ConnectionError, OSError):
            self.close()
            return False
        return True

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.writer.close()


Handler = Callable[[BusConnection, dict[str, Any]], Awaitable[None]]


class BusServer:
    def __init__(self, path: Path, handler: Handler, *, codec: Codec = BUS) -> None:
        self.path = path
        self.handler = handler
        self.codec = codec
        self.connections: set[BusConnection] = set()
        self._tasks: set[asyncio.Task[None]] = set()  # every in-flight request, any client
        self._server: asyncio.Server | None = None
        # Seam for tests: the uid a connection must come from.
        self.expected_uid = os.getuid()

    async def start(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()  # a leftover of a dead process that had our pid
            old_umask = os.umask(0o177)  # the socket file is born 0600: no window to sneak in
            try:
                sock.bind(os.fspath(self.path))
            finally:
                os.umask(old_umask)
            os.chmod(self.path, 0o600)
            sock.listen(64)
        except BaseException:
            sock.close()
            raise
        # 1 MiB buffer: image-sized frames would otherwise pause the socket every 64 KiB.
        self._server = await asyncio.start_unix_server(self._serve, sock=sock, limit=1 << 20)

    async def close(self) -> None:
        """Stop listening, drop every client, remove the socket file."""
        if self._server is not None:
            self._server.close()
        for conn in list(self.connections):
            conn.close()
        for task in list(self._tasks):
            task.cancel()
        if self._server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 1.0)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()

    def in_flight(self) -> set[asyncio.Task[None]]:
        return set(self._tasks)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            uid = peer_uid(writer.get_extra_info("socket"))
        except OSError as exc:
            log.warning("refusing a bus connection: cannot read its credentials (%s)", exc)
            writer.close()
            return
        if uid != self.expected_uid:
            log.warning(
                "refusing a bus connection from uid %d (expected %d)", uid, self.expected_uid
            )
            writer.close()
            return
        conn = BusConnection(writer, self.codec)
        self.connections.add(conn)
        try:
            await self._read_requests(conn, reader)
        finally:
            self.connections.discard(conn)
            # Its in-flight requests finish on their own; their replies are then dropped.
            conn.close()

    async def _read_requests(self, conn: BusConnection, reader: asyncio.StreamReader) -> None:
        while not conn.closed:
            try:
                msg = await self.codec.aread(reader)
            except FrameError as exc:
                # No way to resynchronise the stream: answer once, hang up on this client only.
                log.warning("client %d sent a bad frame: %s", conn.id, exc)
                await conn.send(error_frame("", ErrorCode.BAD_FRAME, str(exc)))
                return
            except (ConnectionError, OSError):
                return
            if msg is None:
                return
            task = asyncio.create_task(self.handler(conn, msg))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
