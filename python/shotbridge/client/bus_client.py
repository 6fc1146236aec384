"""Bus clients: talk to a running host over its Unix socket.

``BusClient`` is asyncio; ``request_sync`` / ``wait_for_host_sync`` wrap it for plain code (the CLI,
the headless launcher). A host that dies mid-request makes the request fail at once with BusError:
a reader task watches the socket and fails every pending request when it closes.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import itertools
import os
import socket
import time
from pathlib import Path
from types import TracebackType
from typing import Any, Self, TypeVar
from urllib.parse import urlsplit

from pydantic import BaseModel

from shotbridge import __version__
from shotbridge.transport import paths
from shotbridge.transport.framing import BUS, Codec
from shotbridge.wire.errors import BusError, CommandError, ErrorCode, FrameError, NotConnectedError
from shotbridge.wire.messages import ClientHello, HelloReply, HostStatus, reply_result

M = TypeVar("M", bound=BaseModel)

NO_HOST_MESSAGE = (
    "no shotbridge host is running — is the extension installed and the browser open? "
    "run `shotctl doctor`"
)


NO_FORWARD_MESSAGE = (
    "no browser reachable through a forward: on the laptop, run `shotctl remote ssh "
    "{machine}` (or mount the laptop's bus and set SHOTBRIDGE_BUS); `shotctl remote doctor` "
    "checks it"
)


class VersionMismatchError(NotConnectedError):
    """The host reached runs another shotbridge version than this client."""


def forward_missing(errors: list[str]) -> NotConnectedError:
    message = NO_FORWARD_MESSAGE.format(machine=socket.gethostname())
    return NotConnectedError(message + (f" ({'; '.join(errors)})" if errors else ""))


def loopback_port(url: str) -> int | None:
    """The port of ``url`` when it names this machine's loopback (localhost, 127.x, ::1)."""
    try:
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in ("http", "https", "ws", "wss"):
        return None
    loop = host == "localhost" or host.endswith(".localhost") or host == "0.0.0.0"
    if not loop:
        with contextlib.suppress(ValueError):
            loop = ipaddress.ip_address(host).is_loopback
    if not loop:
        return None
    return port if port is not None else (443 if parts.scheme in ("https", "wss") else 80)


class BusClient:
    """One connection to one host. Requests may run concurrently; replies are matched by id."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        info: paths.HostInfo | None = None,
        codec: Codec = BUS,
    ) -> None:
        self.info = info
        self._reader = reader
        self._writer = writer
        self._codec = codec
        self._ids = itertools.count(1)
        self._pending: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._events: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._lost: BusError | None = None
        self._read_task = asyncio.create_task(self._read_loop())
        self.host_version: str | None = None  # from the host's answer to hello
        self.own_urls: set[str] = set()  # pages the host serves for us (not our localhost)

    # ---- connecting ---------------------------------------------------------------------

    @classmethod
    async def connect(
        cls, host: str | None = None, *, runtime_dir: Path | None = None, timeout: float = 5.0
    ) -> Self:
        """Connect to the host named ``host`` (profile_id or pid; default ``$SHOTBRIDGE_HOST``),
        else to the best live one (connected, most recently active), trying the next on failure.

        Without ``runtime_dir`` every place a host may have registered is searched
        (:func:`paths.search_dirs`). With one (a private browser of ours), only that directory,
        and ``$SHOTBRIDGE_HOST`` is not applied: it names a browser of the user's.
        """
        if runtime_dir is None and paths.explicit_bus() is not None:
            return await cls.connect_forward(timeout=timeout)
        hosts = paths.list_hosts(runtime_dir)
        name = host or (os.environ.get("SHOTBRIDGE_HOST") if runtime_dir is None else None)
        if name:
            hosts = [h for h in hosts if paths.host_matches(h, name)]
            if not hosts:
                raise NotConnectedError(
                    f"no running shotbridge host matches {name!r} "
                    "(`shotctl doctor` lists the hosts and their profile ids)"
                )
        errors: list[str] = []
        for info in hosts:
            try:
                return await cls.connect_path(Path(info.socket), info=info, timeout=timeout)
            except BusError as exc:
                errors.append(str(exc))
        if runtime_dir is None and not name and paths.forward_candidates():
            with contextlib.suppress(NotConnectedError):  # no local host: a forwarded one will do
                return await cls.connect_forward(timeout=timeout)
        if errors:
            raise NotConnectedError(f"{NO_HOST_MESSAGE} ({'; '.join(errors)})")
        raise NotConnectedError(NO_HOST_MESSAGE)

    @classmethod
    async def connect_forward(cls, *, timeout: float = 5.0) -> Self:
        """The host at the other end of ``$SHOTBRIDGE_BUS`` or of ``shotctl remote ssh``'s
        forward (:func:`paths.forward_candidates`); NotConnectedError, with the fix, if none."""
        errors: list[str] = []
        for sock in paths.forward_candidates():
            # Its record (pid, profile) is on the other machine: hello fills it in.
            info = paths.HostInfo(pid=0, started=0, last_active=0, socket=str(sock), via=str(sock))
            try:
                return await cls.connect_path(sock, info=info, timeout=timeout)
            except BusError as exc:
                errors.append(str(exc))
        raise forward_missing(errors)

    @property
    def forwarded(self) -> bool:
        """Reached through a forwarded or mounted socket: the browser runs on another machine."""
        return bool(self.info and self.info.via)

    async def hello(self, name: str, *, timeout: float = 5.0) -> HostStatus:
        """Say who we are, check the host's version, and return its status.

        A host too old to know ``hello`` is asked ``status`` instead. VersionMismatchError, in
        one sentence, when the two sides run different shotbridge versions.
        """
        said = ClientHello(
            name=name, version=__version__, machine=socket.gethostname(), forwarded=self.forwarded
        )
        try:
            reply = await self.ask("hello", said, HelloReply, timeout=timeout)
        except CommandError as exc:
            if exc.code == ErrorCode.TIMEOUT:
                raise
            return HostStatus.model_validate(await self.request("status", timeout=timeout))
        self.host_version = reply.version
        if self.info is not None and self.forwarded:
            self.info = self.info.model_copy(update=_record_of(reply.status))
        if reply.version != __version__:
            via = self.info.via if self.info is not None else None
            where = f"the host behind {via}" if via else "the host"
            raise VersionMismatchError(
                f"shotbridge {__version__} here cannot drive {where}, which runs shotbridge "
                f"{reply.version}: install the same version on both sides"
            )
        return reply.status

    @classmethod
    async def connect_path(
        cls, path: Path, *, info: paths.HostInfo | None = None, timeout: float = 5.0
    ) -> Self:
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_unix_connection(os.fspath(path), limit=1 << 20), timeout
            )
        except (OSError, TimeoutError) as exc:
            raise BusError(f"cannot connect to {path}: {exc or 'timed out'}") from exc
        return cls(reader, writer, info=info)

    # ---- requests -----------------------------------------------------------------------

    async def request(
        self, cmd: str, args: dict[str, Any] | None = None, *, timeout: float = 30.0
    ) -> dict[str, Any]:
        """Run ``cmd`` on the host and return its result.

        CommandError on an error reply (``code`` from ErrorCode, ``timeout`` when no
        reply came in time); BusError as soon as the connection to the host is lost.
        """
        reply = await self.call(cmd, args, timeout=timeout)
        return reply_result(reply, f"{cmd!r} failed")

    async def ask(
        self, cmd: str, args: BaseModel | None, result: type[M], *, timeout: float = 30.0
    ) -> M:
        """:meth:`request` with typed ends: ``args`` is sent as the fields it was given, and the
        result is validated once, here, into ``result``."""
        payload = args.model_dump(mode="python", exclude_unset=True) if args is not None else None
        return result.model_validate(await self.request(cmd, payload, timeout=timeout))

    async def call(
        self, cmd: str, args: dict[str, Any] | None = None, *, timeout: float = 30.0
    ) -> dict[str, Any]:
        """Like :meth:`request` but returns the whole reply frame, error or not."""
        if self._lost is not None:
            raise self._lost
        if self.forwarded:
            self._check_url(args)
        request_id = f"c{next(self._ids)}"
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            try:
                self._writer.write(
                    self._codec.encode({"id": request_id, "cmd": cmd, "args": args or {}})
                )
                await self._writer.drain()
            except FrameError as exc:
                raise CommandError(ErrorCode.BAD_REQUEST, str(exc)) from exc
            except (ConnectionError, OSError) as exc:
                # The reader may hold the host's parting words (why it closed): let it finish.
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(asyncio.shield(self._read_task), 0.5)
                raise self._lost or BusError(f"lost the connection to the host: {exc}") from exc
            try:
                return await asyncio.wait_for(future, timeout)
            except TimeoutError:
                raise CommandError(
                    ErrorCode.TIMEOUT, f"the host did not answer {cmd!r} within {timeout:g}s"
                ) from None
        finally:
            self._pending.pop(request_id, None)

    def _check_url(self, args: dict[str, Any] | None) -> None:
        """A URL naming this machine's localhost would load the laptop's: say so, not capture it."""
        url = (args or {}).get("url")
        if not isinstance(url, str) or any(url.startswith(own) for own in self.own_urls):
            return
        port = loopback_port(url)
        if port is None or port in paths.forwarded_ports():
            return
        raise CommandError(
            ErrorCode.BAD_REQUEST,
            f"url {url} names localhost of {socket.gethostname()}, but the browser runs on "
            f"another machine, whose localhost is not this one: forward the port (on the laptop: "
            f"`shotctl remote ssh {socket.gethostname()} --forward-port {port}`), then ask again",
        )

    async def subscribe(self) -> None:
        """Ask the host to push extension events; read them with :meth:`next_event`."""
        await self.request("subscribe")

    async def next_event(self, timeout: float | None = None) -> dict[str, Any]:
        """Next pushed ``{"event", "data"}``; BusError once the connection is gone."""
        if self._lost is not None and self._events.empty():
            raise self._lost
        try:
            event = await asyncio.wait_for(self._events.get(), timeout)
        except TimeoutError:
            raise CommandError(ErrorCode.TIMEOUT, "no event in time") from None
        if "event" not in event:  # the sentinel put by _read_loop on loss
            raise self._lost or BusError("connection closed")
        return event

    # ---- lifecycle ----------------------------------------------------------------------

    async def close(self) -> None:
        self._read_task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._read_task
        self._fail_all(BusError("connection closed by the client"))
        self._writer.close()
        with contextlib.suppress(OSError):
            await self._writer.wait_closed()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def _read_loop(self) -> None:
        reason = "the shotbridge host closed the connection"
        goodbye = ""
        try:
            while True:
                msg = await self._codec.aread(self._reader)
                if msg is None:
                    break
                if "event" in msg:
                    if msg["event"] == "host_closing":
                        goodbye = str(msg.get("data", {}).get("reason") or reason)
                        reason = goodbye
                    self._events.put_nowait(msg)
                    continue
                future = self._pending.get(str(msg.get("id")))
                if future is not None and not future.done():
                    future.set_result(msg)
                elif msg.get("ok") is False:
                    # Unaddressed error (e.g. bad_frame): the host is about to hang up on us.
                    reason = f"the host refused our data: {msg.get('error')}"
        except FrameError as exc:
            reason = f"bad frame from the host: {exc}"
        except (ConnectionError, OSError) as exc:
            reason = goodbye or f"lost the connection to the host: {exc}"
        self._fail_all(BusError(reason))

    def _fail_all(self, error: BusError) -> None:
        if self._lost is None:
            self._lost = error
            self._events.put_nowait({})
        pending, self._pending = self._pending, {}
        for future in pending.values():
            if not future.done():
                future.set_exception(self._lost)


# ---- helpers --------------------------------------------------------------------------------


def _record_of(status: HostStatus) -> dict[str, Any]:
    """The fields of a host record that a forwarded host's status tells us."""
    return {
        "pid": status.pid,
        "profile_id": status.profile_id,
        "extension_version": status.extension_version,
        "started": status.started,
        "last_active": status.last_active,
        "connected": status.connected,
    }


def request_sync(
    cmd: str,
    args: dict[str, Any] | None = None,
    *,
    host: str | None = None,
    runtime_dir: Path | None = None,
    timeout: float = 30.0,
) -> dict[str, Any]:
    """One request from synchronous code (connect, ask, close)."""

    async def once() -> dict[str, Any]:
        async with await BusClient.connect(host, runtime_dir=runtime_dir) as client:
            return await client.request(cmd, args, timeout=timeout)

    return asyncio.run(once())


async def wait_for_host(
    runtime_dir: Path | None = None,
    timeout: float = 30.0,
    connected: bool = True,
    *,
    host: str | None = None,
    interval: float = 0.1,
) -> HostStatus:
    """Poll until a host answers ``status``; return that status.

    With ``connected``, also wait for its extension to be connected *and* to have said hello
    (``profile_id`` known), so a capture can follow straight away. NotConnectedError on timeout.
    """
    deadline = time.monotonic() + timeout
    last = NO_HOST_MESSAGE
    while True:
        try:
            async with await BusClient.connect(host, runtime_dir=runtime_dir, timeout=1.0) as c:
                status = HostStatus.model_validate(await c.request("status", timeout=2.0))
            if not connected or status.ready:
                return status
            last = "a host is running but its extension has not connected yet"
        except (BusError, CommandError) as exc:
            last = str(exc)
        if time.monotonic() >= deadline:
            raise NotConnectedError(f"waited {timeout:g}s for a shotbridge host: {last}")
        await asyncio.sleep(interval)


def wait_for_host_sync(
    runtime_dir: Path | None = None,
    timeout: float = 30.0,
    connected: bool = True,
    *,
    host: str | None = None,
) -> HostStatus:
    return asyncio.run(wait_for_host(runtime_dir, timeout, connected, host=host))
