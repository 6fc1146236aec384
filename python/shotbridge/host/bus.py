"""The host's side of the local bus: a Unix socket only its own user may use.

Three locks on the door, each enough on its own: the runtime dir is 0700, the socket is 0600 from
the moment it exists (bound under a restrictive umask), and every connection's peer uid is checked
with SO_PEERCRED / LOCAL_PEERCRED. No TCP anywhere.

The server only moves frames: each request frame goes to ``handler`` in a task of its own (so one
slow capture does not hold up the others on that connection); what the frame means is the host's
business. No client can hold the host hostage: what is queued for each is bounded, a client that
stops reading is disconnected, and the bytes of frames being received are capped across all
clients (see the limits below).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import functools
import itertools
import logging
import os
import socket
import struct
import sys
import time
from collections import deque
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from shotbridge.transport.framing import BUS, ByteBudget, Codec
from shotbridge.wire.errors import ErrorCode, FrameError
from shotbridge.wire.messages import ClientHello, ClientInfo

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


def peer_program(sock: Any) -> str:
    """The command name of the process at the other end (Linux ``/proc/PID/comm``), else "".

    ``ssh`` there means the client came through an SSH forward made on this machine: a fact the
    client cannot fake from the far side (unlike what it says in its hello).
    """
    if not hasattr(socket, "SO_PEERCRED"):
        return ""
    try:
        creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        pid = struct.unpack("3i", creds)[0]
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except (OSError, ValueError):
        return ""


def error_frame(request_id: Any, code: str, message: str) -> dict[str, Any]:
    return {
        "id": request_id if isinstance(request_id, str) else "",
        "ok": False,
        "error": {"code": str(code), "message": message},
    }


# Liveness limits. A client that stops reading, or half-sends a frame, costs bounded memory and
# is hung up on after a bounded time; it never holds the host (or its shutdown) hostage.
STALL_TIMEOUT = 10.0  # s: a client that takes none of our bytes for this long is disconnected
CLOSE_GRACE = 1.0  # s: time a final frame gets to leave before the socket is torn down
PROGRESS_CHECK = 0.5  # s: how often a blocked writer looks whether the client read anything
EVENT_QUEUE = 256  # events waiting per subscriber; older ones are dropped (and counted)
REPLY_QUEUE_BYTES = 64 * 1024 * 1024  # unsent replies per client before it counts as not reading
INCOMING_BUDGET = 256 * 1024 * 1024  # bytes of half-received frames, all clients together
READ_LIMIT = 256 * 1024  # per-connection read-ahead of asyncio's StreamReader
TRIM_DELAY = 0.2  # s: heap trimming waits this long after a client leaves, to batch departures


def release_memory() -> None:
    """Hand freed heap pages back to the system (glibc keeps them otherwise); no-op elsewhere."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None)
        return libc.malloc_trim  # type: ignore[no-any-return]
    except (OSError, AttributeError):  # musl and friends have no malloc_trim
        return None


class BusConnection:
    """One client, with one writer task draining a bounded outgoing queue.

    ``send`` (replies) and ``push_event`` (events) never block and never raise: they queue. Replies
    are never dropped; a client that lets more than ``REPLY_QUEUE_BYTES`` of them pile up, or reads
    nothing for ``stall_timeout`` seconds, is sent a final error frame and disconnected. Events are
    kept at most ``EVENT_QUEUE`` per subscriber: the oldest go first, and the next event delivered
    carries ``dropped: <n>``, how many this subscriber missed since the previous one.
    """

    _ids = itertools.count(1)

    def __init__(
        self,
        writer: asyncio.StreamWriter,
        codec: Codec,
        *,
        stall_timeout: float = STALL_TIMEOUT,
        event_queue: int = EVENT_QUEUE,
        reply_queue_bytes: int = REPLY_QUEUE_BYTES,
    ) -> None:
        self.id = next(self._ids)
        self.writer = writer
        self.codec = codec
        self.subscribed = False
        self.closed = False  # nothing more will be queued
        self.stall_timeout = stall_timeout
        self.reply_queue_bytes = reply_queue_bytes
        self.dropped = 0  # events dropped since the last one delivered
        self.dropped_total = 0
        self.since = time.time()
        self.hello: ClientHello | None = None  # what the client said of itself, if it did
        self.peer_program = ""  # the process at our end of the socket (ssh for a forward)
        self._replies: deque[bytes] = deque()
        self._reply_bytes = 0
        self._events: deque[dict[str, Any]] = deque(maxlen=event_queue)
        self._final: bytes | None = None
        self._finishing = False
        self._wake = asyncio.Event()
        self._writer_task = asyncio.create_task(self._write_loop())

    # ---- queueing --------------------------------------------------------------------------

    async def send(self, msg: dict[str, Any]) -> bool:
        """Queue one reply; False when the client is gone (its late replies are just dropped)."""
        if self.closed:
            return False
        frame = self._encode(msg)
        if self._replies and self._reply_bytes + len(frame) > self.reply_queue_bytes:
            self._evict(f"{self._reply_bytes} bytes of replies were waiting for it to read")
            return False
        self._replies.append(frame)
        self._reply_bytes += len(frame)
        self._wake.set()
        return True

    def push_event(self, event: dict[str, Any]) -> None:
        """Queue an event (shared, not copied); drops this client's oldest one when full."""
        if self.closed:
            return
        if len(self._events) == self._events.maxlen:
            self.dropped += 1
            self.dropped_total += 1
        self._events.append(event)
        self._wake.set()

    def finish(self, final: dict[str, Any] | None = None) -> asyncio.Task[None]:
        """Send what is queued, then ``final``, then hang up; returns the writer task."""
        if not self.closed:
            self.closed = True
            self._final = self._encode(final) if final is not None else None
            self._finishing = True
            self._wake.set()
        return self._writer_task

    def close(self, final: dict[str, Any] | None = None) -> None:
        """Hang up now: drop what is queued, send ``final`` if the socket takes it, tear down."""
        self.closed = True
        self._drop_queues()
        self._writer_task.cancel()
        if self.writer.is_closing():
            return
        if final is not None:
            # Whole frames only ever go into the transport, so ours starts on a frame boundary.
            with contextlib.suppress(Exception):
                self.writer.write(self._encode(final))
        self._hang_up()

    def abort(self) -> None:
        self.closed = True
        self._drop_queues()
        self._writer_task.cancel()
        self.writer.transport.abort()

    def describe(self) -> ClientInfo | None:
        """This client as doctor and the popup list it; None until it said hello."""
        hello = self.hello
        if hello is None:
            return None
        return ClientInfo(
            id=self.id,
            name=hello.name,
            version=hello.version,
            machine=hello.machine,
            forwarded=hello.forwarded or self.peer_program == "ssh",
            since=self.since,
        )

    @property
    def queued(self) -> tuple[int, int]:
        """(replies, events) waiting to be written."""
        return len(self._replies), len(self._events)

    # ---- writing ---------------------------------------------------------------------------

    def _encode(self, msg: dict[str, Any]) -> bytes:
        try:
            return self.codec.encode(msg)
        except FrameError as exc:
            log.error("frame for client %d not encodable: %s", self.id, exc)
            return self.codec.encode(error_frame(msg.get("id"), ErrorCode.INTERNAL, str(exc)))

    def _next_frame(self) -> bytes | None:
        if self._replies:
            frame = self._replies.popleft()
            self._reply_bytes -= len(frame)
            return frame
        if self._events:
            event = self._events.popleft()
            if self.dropped:
                event = {**event, "dropped": self.dropped}
                self.dropped = 0
            return self._encode(event)
        if self._final is not None:
            frame, self._final = self._final, None
            return frame
        return None

    async def _write_loop(self) -> None:
        try:
            while True:
                frame = self._next_frame()
                if frame is None:
                    if self._finishing:
                        self._hang_up()
                        return
                    self._wake.clear()
                    await self._wake.wait()
                    continue
                self.writer.write(frame)
                del frame
                if not await self._drain():
                    return
        except (ConnectionError, OSError):
            self.abort()

    async def _drain(self) -> bool:
        """Wait until the transport takes our bytes; False (and evicted) if the client stalls."""
        transport = self.writer.transport
        loop = asyncio.get_running_loop()
        last = transport.get_write_buffer_size()
        idle_since = loop.time()
        while True:
            try:
                await asyncio.wait_for(self.writer.drain(), PROGRESS_CHECK)
                return True
            except TimeoutError:
                pending = transport.get_write_buffer_size()
                if pending < last:  # slow but reading: fine
                    last, idle_since = pending, loop.time()
                elif loop.time() - idle_since >= self.stall_timeout:
                    self._evict(f"it read nothing for {self.stall_timeout:g} s")
                    return False

    def _evict(self, why: str) -> None:
        log.warning("disconnecting bus client %d: %s", self.id, why)
        self.close(error_frame("", ErrorCode.TIMEOUT, f"the host disconnected this client: {why}"))

    def _drop_queues(self) -> None:
        self._replies.clear()
        self._reply_bytes = 0
        self._events.clear()
        self._final = None

    def _hang_up(self) -> None:
        """Close after flushing, but never wait more than CLOSE_GRACE for a client to read."""
        transport = self.writer.transport
        self.writer.close()
        asyncio.get_running_loop().call_later(CLOSE_GRACE, transport.abort)

    async def wait_closed(self) -> None:
        with contextlib.suppress(Exception):
            await self.writer.wait_closed()


Handler = Callable[[BusConnection, dict[str, Any]], Awaitable[None]]


class BusServer:
    def __init__(
        self,
        path: Path,
        handler: Handler,
        *,
        codec: Codec = BUS,
        incoming_budget: int = INCOMING_BUDGET,
        stall_timeout: float = STALL_TIMEOUT,
    ) -> None:
        self.path = path
        self.handler = handler
        self.codec = codec
        self.connections: set[BusConnection] = set()
        self.budget = ByteBudget(incoming_budget)
        self.stall_timeout = stall_timeout
        self._tasks: set[asyncio.Task[None]] = set()  # every in-flight request, any client
        self._server: asyncio.Server | None = None
        self._trim: asyncio.TimerHandle | None = None
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
        # Modest read-ahead: big frames are read chunk by chunk, and a client's unread bytes in
        # asyncio's buffer are not charged to the budget.
        self._server = await asyncio.start_unix_server(self._serve, sock=sock, limit=READ_LIMIT)

    def publish(self, event: dict[str, Any]) -> None:
        """Fan an event out to every subscriber; never waits for any of them."""
        for conn in self.connections:
            if conn.subscribed:
                conn.push_event(event)

    async def close(self, goodbye: dict[str, Any] | None = None, flush: float = 0.5) -> None:
        """Stop listening, tell every client ``goodbye``, drop them all, remove the socket file.

        Clients get ``flush`` seconds to take their last replies and the goodbye; then the
        sockets are torn down whatever the clients do.
        """
        if self._server is not None:
            self._server.close()
        if self._trim is not None:
            self._trim.cancel()
        for task in list(self._tasks):
            task.cancel()
        conns = list(self.connections)
        writers = [conn.finish(goodbye) for conn in conns]
        if writers:
            await asyncio.wait(writers, timeout=flush)
        for conn in conns:
            conn.abort()
        if self._server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 0.5)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()

    def clients(self) -> list[ClientInfo]:
        """The connected clients that said hello, oldest first."""
        found = [conn.describe() for conn in sorted(self.connections, key=lambda c: c.id)]
        return [info for info in found if info is not None]

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
        conn = BusConnection(writer, self.codec, stall_timeout=self.stall_timeout)
        conn.peer_program = peer_program(writer.get_extra_info("socket"))
        self.connections.add(conn)
        try:
            await self._read_requests(conn, reader)
        finally:
            self.connections.discard(conn)
            # Its in-flight requests finish on their own; their replies are then dropped.
            if not conn.closed:
                conn.close()
            # Whatever it had half-sent is gone: give the pages back soon, not at a later peak.
            self._schedule_trim()

    def _schedule_trim(self) -> None:
        """One ``release_memory`` shortly after a burst of departures, not one per client."""
        if self._trim is None or self._trim.cancelled():
            self._trim = asyncio.get_running_loop().call_later(TRIM_DELAY, self._run_trim)

    def _run_trim(self) -> None:
        self._trim = None
        release_memory()

    async def _read_requests(self, conn: BusConnection, reader: asyncio.StreamReader) -> None:
        while not conn.closed:
            try:
                msg = await self.codec.aread(
                    reader, budget=self.budget, stall_timeout=self.stall_timeout
                )
            except FrameError as exc:
                # No way to resynchronise the stream: answer once, hang up on this client only.
                log.warning("client %d sent a bad frame: %s", conn.id, exc)
                conn.close(error_frame("", ErrorCode.BAD_FRAME, str(exc)))
                return
            except (ConnectionError, OSError):
                return
            if msg is None:
                return
            task = asyncio.create_task(self.handler(conn, msg))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
