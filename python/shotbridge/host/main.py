"""``shotctl host``: the native-messaging host Chromium starts for the extension.

One host per browser profile: Chromium runs it (through the manifest's launcher) when the extension
calls ``connectNative``, with stdin/stdout as the port. The host publishes a bus socket
``host-<pid>.sock`` plus a record ``host-<pid>.json`` in the runtime dir, relays bus requests to the
extension, and exits when the port closes (stdin EOF) or on SIGTERM, removing both files.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import logging.handlers
import os
import signal
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from pydantic import BaseModel, ValidationError

from shotbridge import __version__
from shotbridge.host import popup_query
from shotbridge.host.bus import BusConnection, BusServer, error_frame
from shotbridge.host.emulate import Emulations, close_tab
from shotbridge.host.extension_link import ExtensionLink, Send
from shotbridge.host.sessions import Sessions
from shotbridge.transport import paths
from shotbridge.transport.framing import NATIVE
from shotbridge.wire.errors import CommandError, ErrorCode, FrameError, ImageError, ShotbridgeError
from shotbridge.wire.interact import CdpResult
from shotbridge.wire.messages import (
    EXTENSION_ORIGIN,
    ClientHello,
    HelloReply,
    HostStatus,
    PageBundle,
    Request,
    ServedPage,
)
from shotbridge.wire.screenshot import ScreenshotResult

log = logging.getLogger(__name__)

ALLOWED_ORIGINS_ENV = "SHOTBRIDGE_ALLOWED_ORIGINS"  # comma-separated, for development builds
INFO_WRITE_INTERVAL = 1.0  # s: routine events refresh host-<pid>.json at most this often
SHUTDOWN_GRACE = 0.5  # s: time given to in-flight replies (not_connected) before hanging up
CLIENT_FLUSH = 0.5  # s: time clients get to read their last frames at shutdown
# Extension commands only the host itself may send: `capture` returns the page's pixels before the
# masks are applied (clients use `screenshot`); `cdp` goes through the user's gate (`_cdp`).
HOST_ONLY = {"capture": "use the `screenshot` command: it returns the masked image"}

# A bus command: (the client's connection, its arguments) -> its result, a model or a plain map
# (dumped once, in _dispatch).
Command = Callable[[BusConnection, dict[str, Any]], Awaitable[BaseModel | dict[str, Any]]]


# ---- the caller ---------------------------------------------------------------------------


def allowed_origins() -> set[str]:
    extra = os.environ.get(ALLOWED_ORIGINS_ENV, "")
    return {EXTENSION_ORIGIN} | {o.strip() for o in extra.split(",") if o.strip()}


def find_origin(argv: Sequence[str]) -> str | None:
    """The caller origin Chromium passes first; other args (``--parent-window=…``) are ignored."""
    for arg in argv:
        if arg.startswith("chrome-extension://"):
            return arg
    positional = [a for a in argv if not a.startswith("--")]
    return positional[0] if positional else None


# ---- the host -----------------------------------------------------------------------------


class Host:
    """Bus server + extension link + the host record. Runs in one event loop."""

    def __init__(self, link: ExtensionLink, *, runtime_dir: Path, pid: int | None = None) -> None:
        self.link = link
        self.runtime_dir = runtime_dir
        self.pid = pid if pid is not None else os.getpid()
        self.started = time.time()
        self.last_active = self.started
        self._info_written = 0.0
        self._stop = asyncio.Event()
        self.exit_code = 0  # 1 when the extension's stream turned out garbage
        self.server = BusServer(paths.socket_path(self.pid, runtime_dir), self.handle)
        self.commands: dict[str, Command] = {
            "status": self._status,
            "hello": self._hello,
            "serve_page": self._serve_page,
            "screenshot": self._screenshot,
            "interact": self._interact,
            "subscribe": self._subscribe,
            "events": self._events,
            "cdp": self._cdp,
            "emulate": self._emulate,
            "tab_close": self._tab_close,
        }
        link.add_listener(self._on_event)
        # Each client's own state: its timeline, screenshot buffer and automatic captures, its
        # diff memory, and the screenshots interact maps pixels and labels from.
        self.sessions = Sessions(link)
        self.commands.update(self.sessions.commands())
        self.emulations = Emulations(link)  # undone when the client that asked leaves
        link.add_listener(self.sessions.on_event)

    async def serve(
        self, native: asyncio.StreamReader, send: Send, first: dict[str, Any] | None = None
    ) -> None:
        """Serve until the extension's stream ends or :meth:`stop`; then clean up. ``first``:
        a frame of the extension's already read (its hello)."""
        await self.server.start()
        self.link.attach(send)
        self.write_info(force=True)
        if first is not None:
            self.link.feed(first)
        log.info("host %d serving on %s", self.pid, self.server.path)
        pump = asyncio.create_task(self._pump(native))
        stopper = asyncio.create_task(self._stop.wait())
        try:
            await asyncio.wait({pump, stopper}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (pump, stopper):
                task.cancel()
            await self.shutdown()

    def stop(self) -> None:
        self._stop.set()

    def closing_reason(self) -> str:
        if self._stop.is_set():
            return "the shotbridge host was stopped"
        return "extension not connected: the browser closed its connection to the host"

    async def shutdown(self) -> None:
        """Bounded whatever the clients do: ends within SHUTDOWN_GRACE + CLIENT_FLUSH seconds."""
        self.link.detach()  # pending requests fail now with not_connected...
        in_flight = self.server.in_flight()
        if in_flight:  # ...and their replies get a moment to be queued for the clients
            await asyncio.wait(in_flight, timeout=SHUTDOWN_GRACE)
        # Tell every client why the bus is closing, so they report it instead of a bare hang-up;
        # a client that does not read gets CLIENT_FLUSH seconds, then its socket is torn down.
        goodbye = {"event": "host_closing", "data": {"reason": self.closing_reason()}}
        await self.server.close(goodbye, flush=CLIENT_FLUSH)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.sessions.close(), CLIENT_FLUSH)
        paths.remove_host_files(self.pid, self.runtime_dir)
        log.info("host %d stopped", self.pid)

    async def _pump(self, native: asyncio.StreamReader) -> None:
        while True:
            try:
                msg = await NATIVE.aread(native)
            except FrameError as exc:
                log.error("bad frame from the extension, closing: %s", exc)
                self.exit_code = 1
                return
            if msg is None:
                log.info("extension closed the port (stdin EOF)")
                return
            self.link.feed(msg)

    # ---- host record --------------------------------------------------------------------

    def info(self) -> paths.HostInfo:
        hello = self.link.hello
        return paths.HostInfo(
            pid=self.pid,
            profile_id=hello.profile_id if hello else None,
            extension_version=hello.extension_version if hello else None,
            started=self.started,
            last_active=self.last_active,
            connected=self.link.connected,
            socket=str(self.server.path),
        )

    def write_info(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._info_written < INFO_WRITE_INTERVAL:
            return
        self._info_written = now
        try:
            paths.write_host_info(self.info(), self.runtime_dir)
        except OSError as exc:
            log.warning("cannot write the host record: %s", exc)

    def _on_event(self, event: dict[str, Any]) -> None:
        # Activity means the user's browser doing something (not clients polling us): it is what
        # picks the host when several browsers/profiles run.
        self.last_active = time.time()
        self.write_info(force=event["event"] in ("hello", "tab_changed"))
        # Queued per subscriber, bounded: a slow one loses its oldest events (and is told how
        # many), and holds up neither the others nor the host.
        self.server.publish({"event": event["event"], "data": event["data"]})

    # ---- bus requests -------------------------------------------------------------------

    async def handle(self, conn: BusConnection, msg: dict[str, Any]) -> None:
        try:
            req = Request.model_validate(msg)
            if not req.cmd:
                raise ValueError("empty cmd")
        except (ValidationError, ValueError) as exc:
            detail = (
                f"{len(exc.errors())} invalid field(s)" if isinstance(exc, ValidationError) else exc
            )
            await conn.send(
                error_frame(
                    msg.get("id"),
                    ErrorCode.BAD_REQUEST,
                    f"invalid request ({detail}): expected {{id: str, cmd: str, args: map}}",
                )
            )
            return
        await self.sessions.before(req.cmd, req.args)
        with self.sessions.acting(conn, req.cmd, req.args):  # whose action the page answers
            reply = await self._dispatch(conn, req)
        await conn.send(reply)

    async def _dispatch(self, conn: BusConnection, req: Request) -> dict[str, Any]:
        try:
            command = self.commands.get(req.cmd)
            if command is not None:
                return {"id": req.id, "ok": True, "result": dump(await command(conn, req.args))}
            if req.cmd in HOST_ONLY:
                why = f"{req.cmd} is internal to the host: {HOST_ONLY[req.cmd]}"
                raise CommandError(ErrorCode.BAD_REQUEST, why)
            reply = await self.link.call(req.cmd, req.args, timeout=forward_timeout(req.args))
            return {**reply, "id": req.id}  # verbatim, under the client's own id
        except CommandError as exc:
            return error_frame(req.id, exc.code, exc.message)
        except ValidationError as exc:
            return error_frame(req.id, ErrorCode.BAD_REQUEST, str(exc))
        except ImageError as exc:
            return error_frame(req.id, ErrorCode.IMAGE_ERROR, str(exc))
        except Exception as exc:
            log.exception("command %r failed", req.cmd)
            return error_frame(req.id, ErrorCode.INTERNAL, f"{type(exc).__name__}: {exc}")

    async def _status(self, conn: BusConnection, args: dict[str, Any]) -> HostStatus:
        hello = self.link.hello
        return HostStatus(
            pid=self.pid,
            profile_id=hello.profile_id if hello else None,
            extension_version=hello.extension_version if hello else None,
            connected=self.link.connected,
            user_agent=hello.user_agent if hello else None,
            tracked_tab=self.link.tracked_tab,
            started=self.started,
            last_active=self.last_active,
            extension_protocol=hello.protocol if hello else None,
            version=__version__,
            clients=self.server.clients(),
        )

    async def _hello(self, conn: BusConnection, args: dict[str, Any]) -> HelloReply:
        """A client says who it is (listed by doctor and the popup; a hint, not a credential)."""
        conn.hello = ClientHello.model_validate(args)
        log.info("client %d said hello: %s", conn.id, conn.describe())
        return HelloReply(version=__version__, status=await self._status(conn, {}))

    async def _serve_page(self, conn: BusConnection, args: dict[str, Any]) -> ServedPage:
        """A page from the client's disk (another machine's), served here until it disconnects."""
        from shotbridge.host import served_pages

        gone = asyncio.ensure_future(conn.wait_closed())
        return await served_pages.serve(PageBundle.model_validate(args), gone)

    async def _screenshot(self, conn: BusConnection, args: dict[str, Any]) -> ScreenshotResult:
        try:  # lazy: both may pull in the core, and its absence is this command's error
            from shotbridge.host import diff_memory, screenshot

            session = self.sessions.get(conn, args)
            diff_args, take_args = diff_memory.split_args(args)
            previous = session.shots.latest.id if session.shots.latest else None
            result = await screenshot.take(self.link, take_args, session)
            if diff_args.wanted:
                annotated = bool(take_args.get("annotate"))
                await session.compare(result, diff_args, annotated=annotated, previous_id=previous)
            return result
        except ImportError as exc:  # take() loads the Rust core on first use
            raise CommandError(
                ErrorCode.INTERNAL,
                f"the image core is unavailable ({exc}); rebuild it: `pip install -e .`",
            ) from exc

    async def _interact(self, conn: BusConnection, args: dict[str, Any]) -> BaseModel:
        from shotbridge.host import interact  # lazy, like screenshot: it may pull in the core

        if args.get("action") == "cdp":  # the same gate as the bus command `cdp`
            return await self._cdp(conn, args)
        return await interact.run(self.link, self.sessions.get(conn, args).shots, args)

    async def _cdp(self, conn: BusConnection, args: dict[str, Any]) -> CdpResult:
        """Raw CDP: only when the user enabled it (``shotctl config allow-cdp on``); logged."""
        from shotbridge.host import rawcdp

        pid = rawcdp.peer_pid(conn.writer.get_extra_info("socket"))
        shots = self.sessions.get(conn, args).shots
        return await rawcdp.run(self.link, shots, args, client_pid=pid)

    async def _emulate(self, conn: BusConnection, args: dict[str, Any]) -> BaseModel:
        timeline = self.sessions.get(conn, args).recorder.timeline
        return await self.emulations.emulate(conn, timeline, args)

    async def _tab_close(self, conn: BusConnection, args: dict[str, Any]) -> BaseModel:
        return await close_tab(self.link, self.sessions.get(conn, args).recorder.timeline, args)

    async def _subscribe(self, conn: BusConnection, args: dict[str, Any]) -> dict[str, Any]:
        conn.subscribed = True
        return {"subscribed": True}

    async def _events(self, conn: BusConnection, args: dict[str, Any]) -> dict[str, Any]:
        return {"events": list(self.link.events)}


def dump(result: BaseModel | dict[str, Any]) -> dict[str, Any]:
    """A command's result as it goes on the bus: models are dumped here, once, by field name."""
    return result.model_dump(mode="python") if isinstance(result, BaseModel) else result


def forward_timeout(args: dict[str, Any]) -> float:
    """How long a forwarded command may take: its own timeout_ms plus slack, or 15 s."""
    timeout_ms = args.get("timeout_ms")
    if isinstance(timeout_ms, int | float) and timeout_ms > 0:
        return timeout_ms / 1000 + 5.0
    return 15.0


# ---- process plumbing -----------------------------------------------------------------------


def claim_stdout() -> int:
    """Keep the real fd 1 for frames only; everything else written to stdout goes to stderr."""
    sys.stdout.flush()
    frames_fd = os.dup(1)
    os.dup2(2, 1)  # print(), C libraries, children: all land on stderr from now on
    sys.stdout = sys.stderr
    return frames_fd


class PrivateLogFile(logging.handlers.RotatingFileHandler):
    """A rotating log whose files are 0600 whatever the umask: host.log names the user's pages."""

    def _open(self):  # type: ignore[no-untyped-def]
        fd = os.open(self.baseFilename, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        os.fchmod(fd, 0o600)  # a log written by an older version was 0644
        return open(fd, "a", encoding=self.encoding, errors=self.errors)


def setup_logging() -> None:
    logger = logging.getLogger("shotbridge")
    logger.setLevel(os.environ.get("SHOTBRIDGE_LOG_LEVEL", "INFO").upper())
    fmt = logging.Formatter("%(asctime)s host[%(process)d] %(levelname)s %(name)s: %(message)s")
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    try:
        handlers.append(
            PrivateLogFile(paths.state_dir() / "host.log", maxBytes=512 * 1024, backupCount=1)
        )
    except OSError as exc:
        print(f"shotbridge host: no log file: {exc}", file=sys.stderr)
    for handler in handlers:
        handler.setFormatter(fmt)
        logger.addHandler(handler)


class NativePort:
    """Chrome's pipes as asyncio streams: frames in on ``in_fd``, frames out on ``out_fd``.

    Owns both fds. Pipes (what Chromium gives) use the event loop; a regular file on stdin
    (``shotctl host < frames.bin``) is read by a thread instead, and written with blocking writes.
    """

    def __init__(self) -> None:
        # Big limit: frames up to 64 MiB arrive in big chunks; a small one means constant pausing.
        self.reader = asyncio.StreamReader(limit=1 << 20)
        self._read_transport: asyncio.BaseTransport | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._out: BinaryIO | None = None

    @classmethod
    async def open(cls, in_fd: int, out_fd: int) -> NativePort:
        port = cls()
        loop = asyncio.get_running_loop()
        pipe_in = os.fdopen(in_fd, "rb", buffering=0)
        try:
            port._read_transport, _ = await loop.connect_read_pipe(
                lambda: asyncio.StreamReaderProtocol(port.reader), pipe_in
            )
        except ValueError:
            threading.Thread(target=port._feed_from, args=(loop, pipe_in), daemon=True).start()
        port._out = os.fdopen(out_fd, "wb", buffering=0)
        try:
            transport, protocol = await loop.connect_write_pipe(
                lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader()), port._out
            )
            port._writer = asyncio.StreamWriter(transport, protocol, None, loop)
        except ValueError:
            pass  # a regular file: blocking writes in send()
        return port

    def _feed_from(self, loop: asyncio.AbstractEventLoop, pipe: BinaryIO) -> None:
        with contextlib.suppress(RuntimeError, OSError):  # loop or file closed under us
            while chunk := pipe.read(1 << 20):
                loop.call_soon_threadsafe(self.reader.feed_data, chunk)
            loop.call_soon_threadsafe(self.reader.feed_eof)

    async def send(self, frame: bytes) -> None:
        if self._writer is not None:
            self._writer.write(frame)
            await self._writer.drain()
        elif self._out is not None:
            self._out.write(frame)

    def close_output(self) -> None:
        """Close the outgoing side: the peer reads EOF."""
        if self._writer is not None:
            self._writer.close()
        elif self._out is not None:
            self._out.close()

    def close(self) -> None:
        self.close_output()
        if self._read_transport is not None:
            self._read_transport.close()


async def run(frames_fd: int) -> int:
    loop = asyncio.get_running_loop()
    port = await NativePort.open(0, frames_fd)
    # The first frame says who called: the extension (its hello) or the popup's one question,
    # answered without registering this process as a host.
    try:
        first = await NATIVE.aread(port.reader)
    except FrameError as exc:
        log.error("bad first frame from the browser: %s", exc)
        port.close()
        return 1
    if first is None or popup_query.asks(first):
        with contextlib.suppress(ConnectionError, OSError):
            if first is not None:
                await port.send(NATIVE.encode(await popup_query.answer(paths.runtime_dir())))
        port.close()
        return 0
    host = Host(ExtensionLink(), runtime_dir=paths.runtime_dir())
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        loop.add_signal_handler(sig, host.stop)
    try:
        await host.serve(port.reader, port.send, first)
    finally:
        port.close()
    return host.exit_code


def main(argv: Sequence[str]) -> int:
    """Entry point of ``shotctl host``: 0 after a clean shutdown, 1 when refusing to serve."""
    frames_fd = claim_stdout()
    setup_logging()
    origin = find_origin(argv)
    if origin not in allowed_origins():
        log.error(
            "refusing to serve caller %r: only %s may use this host (set %s for development)",
            origin,
            EXTENSION_ORIGIN,
            ALLOWED_ORIGINS_ENV,
        )
        return 1
    try:
        return asyncio.run(run(frames_fd))
    except ShotbridgeError as exc:
        log.error("host failed: %s", exc)
        return 1
