"""The host's end of the native-messaging port: requests to the extension, replies and events back.

:class:`ExtensionLink` is what host-level commands (``screenshot.take``) talk to. It knows nothing
about stdin/stdout: the host hands it a ``send`` coroutine that writes one encoded frame and feeds
it every frame the extension sends.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import ValidationError

from shotbridge.transport.framing import NATIVE
from shotbridge.wire.errors import CommandError, ErrorCode, FrameError
from shotbridge.wire.extension import Hello
from shotbridge.wire.messages import reply_result
from shotbridge.wire.timeline import repair

log = logging.getLogger(__name__)

Send = Callable[[bytes], Awaitable[None]]
EventListener = Callable[[dict[str, Any]], None]
Partial = Callable[[dict[str, Any]], None]


class ExtensionLink:
    """Requests to the extension, matched to replies by a host-side id."""

    def __init__(self, send: Send | None = None, *, keep_events: int = 100) -> None:
        self._send = send
        self._pending: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._partials: dict[str, Partial] = {}
        self._ids = itertools.count(1)
        self._listeners: list[EventListener] = []
        self.hello: Hello | None = None
        self.tracked_tab: int | None = None
        # Recent events for later features (activity, tab history); bounded so it cannot grow.
        self.events: deque[dict[str, Any]] = deque(maxlen=keep_events)

    @property
    def connected(self) -> bool:
        return self._send is not None

    # ---- lifecycle (called by the host) ------------------------------------------------------

    def attach(self, send: Send) -> None:
        self._send = send

    def detach(self) -> None:
        """The port closed: fail every pending request now rather than at its timeout."""
        self._send = None
        pending, self._pending = self._pending, {}
        for future in pending.values():
            if not future.done():
                future.set_exception(
                    CommandError(ErrorCode.NOT_CONNECTED, "extension disconnected")
                )

    def add_listener(self, listener: EventListener) -> None:
        self._listeners.append(listener)

    # ---- requests ----------------------------------------------------------------------------

    async def request(
        self,
        cmd: str,
        args: dict[str, Any] | None = None,
        timeout: float = 15.0,
        on_partial: Partial | None = None,
    ) -> dict[str, Any]:
        """Send ``cmd`` and return the reply's ``result``; CommandError on an error reply."""
        reply = await self.call(cmd, args, timeout, on_partial)
        return reply_result(reply, f"extension refused {cmd!r}")

    async def call(
        self,
        cmd: str,
        args: dict[str, Any] | None = None,
        timeout: float = 15.0,
        on_partial: Partial | None = None,
    ) -> dict[str, Any]:
        """Send ``cmd`` and return the extension's whole reply frame (ok or not).

        ``on_partial`` gets each part of the result the extension sends ahead of its reply.
        """
        send = self._send
        if send is None:
            raise CommandError(ErrorCode.NOT_CONNECTED, "extension not connected")
        request_id = f"h{next(self._ids)}"
        try:
            frame = NATIVE.encode({"id": request_id, "cmd": cmd, "args": args or {}})
        except FrameError as exc:
            # Chrome closes the port on a frame over 1 MB: refuse here, never send it.
            raise CommandError(ErrorCode.BAD_REQUEST, f"cannot send {cmd!r}: {exc}") from exc
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        if on_partial is not None:
            self._partials[request_id] = on_partial
        try:
            await send(frame)
            return await asyncio.wait_for(future, timeout)
        except TimeoutError:
            raise CommandError(
                ErrorCode.TIMEOUT, f"extension did not answer {cmd!r} within {timeout:g}s"
            ) from None
        except (ConnectionError, OSError) as exc:
            raise CommandError(ErrorCode.NOT_CONNECTED, f"extension port broken: {exc}") from exc
        finally:
            self._pending.pop(request_id, None)
            self._partials.pop(request_id, None)

    # ---- incoming frames ---------------------------------------------------------------------

    def feed(self, msg: dict[str, Any]) -> None:
        """One frame from the extension: a reply to route or an event to record.

        Page text can hold lone UTF-16 surrogates (a string cut inside an emoji); they are made
        U+FFFD here, before anything is stored or re-encoded, so no entry can break a tool later.
        """
        msg = repair(msg)
        if "event" in msg:
            self._on_event(msg)
            return
        if "partial" in msg:
            self._on_partial(msg)
            return
        future = self._pending.get(str(msg.get("id")))
        if future is None or future.done():
            # The asker timed out or left: a late reply is expected, not an error.
            log.debug("dropping reply with unknown id %r", msg.get("id"))
            return
        future.set_result(msg)

    def _on_partial(self, msg: dict[str, Any]) -> None:
        """Part of a result ahead of its reply: to the asker's callback, if it still waits."""
        callback = self._partials.get(str(msg.get("id")))
        data = msg.get("partial")
        if callback is None or not isinstance(data, dict):
            log.debug("dropping partial reply with unknown id %r", msg.get("id"))
            return
        try:
            callback(data)
        except Exception:  # a broken callback must not take the port down
            log.exception("partial reply handler failed")

    def _on_event(self, msg: dict[str, Any]) -> None:
        name = str(msg.get("event"))
        data = msg.get("data") if isinstance(msg.get("data"), dict) else {}
        if name == "hello":
            try:
                self.hello = Hello.model_validate(data)
                self.tracked_tab = self.hello.tracked_tab
            except ValidationError as exc:
                log.warning("malformed hello from the extension: %s", exc)
        elif name == "tab_changed":
            # Payload shape is the extension's; accept either spelling of the tab id.
            tab = data.get("tracked_tab", data.get("tab_id"))
            if tab is None or isinstance(tab, int):
                self.tracked_tab = tab
        event = {"event": name, "data": data, "time": time.time()}
        self.events.append(event)
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:
                log.exception("event listener failed")
