"""The server's one bus client, made on first use and remade after the host goes away.

``--browser connected`` uses the user's browser; ``headless`` starts our own headless Chromium,
lazily so that listing tools never launches a browser. ``auto`` re-decides at each tool call: the
user's browser when one is connected at that moment (a headless browser of ours is then closed),
our headless one only when none is. Every result ``auto`` got from a headless browser of ours
says so (:data:`shotbridge.client.connect.HEADLESS_NOTE`).

Lost state is reported: when the browser at the other end changes (the user's browser or its
extension restarted, so a new host; our headless browser replaced; a move between headless and
the user's browser), a sentence goes into :attr:`Connection.notices`, and the next tool result
starts with it (see :meth:`Connection.attach`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from shotbridge.wire.errors import BusError, NotConnectedError

log = logging.getLogger(__name__)

BrowserMode = Literal["auto", "connected", "headless"]


@dataclass(frozen=True)
class Peer:
    """Who a link reaches: enough to tell that the browser at the other end changed."""

    headless: bool
    pid: int | None  # the host's
    profile_id: str | None
    description: str
    browser_pid: int | None = None  # our headless browser's: outlives a host restart

    def same_browser(self, other: Peer) -> bool:
        if self.headless != other.headless:
            return False
        if self.headless:
            return self.browser_pid == other.browser_pid
        return self.pid == other.pid


class Link(Protocol):
    """What the tools need of a bus connection (a real BusClient, or a fake in unit tests)."""

    async def request(
        self, cmd: str, args: dict[str, Any] | None = None, timeout: float = 15.0
    ) -> dict[str, Any]: ...

    async def close(self) -> None: ...


LinkFactory = Callable[[], Awaitable[Link]]


class _BusLink:
    """Adapts :class:`shotbridge.client.connect.Connection` (client, maybe a browser) to
    :class:`Link`."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn

    @property
    def headless(self) -> bool:
        return bool(self._conn.headless)

    def peer(self) -> Peer:
        info = self._conn.client.info
        process = getattr(self._conn.browser, "process", None)
        return Peer(
            headless=self.headless,
            pid=info.pid if info else None,
            profile_id=info.profile_id if info else None,
            description=self._conn.describe(),
            browser_pid=process.pid if process is not None else None,
        )

    async def request(
        self, cmd: str, args: dict[str, Any] | None = None, timeout: float = 15.0
    ) -> dict[str, Any]:
        return await self._conn.client.request(cmd, args, timeout=timeout)

    async def all_tabs(self, own: dict[str, Any]) -> dict[str, Any]:
        """``list_tabs`` of this browser plus those of the user's other connected browsers.

        Each tab says which host and profile it belongs to and whether it is in the browser this
        server uses (``in_use``); another browser's tab is reached with ``shotctl mcp --host``.
        """
        from shotbridge.client.connect import other_browsers_tabs

        info = self._conn.client.info
        mine = info.pid if info else None
        tabs = [
            {**t, "host": mine, "profile_id": info.profile_id if info else None, "in_use": True}
            for t in own.get("tabs", [])
        ]
        for other, found in [] if self.headless else await other_browsers_tabs(mine):
            extra = {"host": other.pid, "profile_id": other.profile_id, "in_use": False}
            tabs += [{**t, "tracked": False, **extra} for t in found]
        return {**own, "tabs": tabs}

    async def revive(self) -> bool:
        """After the host went away: reach the new host of *our* headless browser, if alive.

        The extension starts a new host when its service worker reconnects; relaunching the
        browser instead would lose its tabs.
        """
        browser = getattr(self._conn, "browser", None)
        if browser is None or not browser.alive():
            return False
        from shotbridge.client.bus_client import BusClient, wait_for_host

        with contextlib.suppress(Exception):
            await self._conn.client.close()
        try:
            await wait_for_host(runtime_dir=browser.runtime_dir, timeout=10, connected=True)
            self._conn.client = await BusClient.connect(runtime_dir=browser.runtime_dir)
        except BusError:
            return False
        return True

    async def close(self) -> None:
        await self._conn.close()

    def close_browser(self) -> None:
        browser = getattr(self._conn, "browser", None)
        if browser is not None:
            browser.close()


class BusFactory:
    """Makes links for one browser mode; ``auto`` can also ask for the user's browser alone."""

    def __init__(
        self,
        mode: BrowserMode,
        window_size: tuple[int, int],
        device_scale_factor: float | None = None,
        host: str | None = None,
    ) -> None:
        self.mode = mode
        self.window_size = window_size
        self.device_scale_factor = device_scale_factor
        self.host = host

    async def __call__(self) -> Link:
        from shotbridge.client.connect import connect  # pulls in the bus client only when needed

        log.info("connecting to the browser (mode=%s)", self.mode)
        conn = await connect(
            self.mode,
            window_size=self.window_size,
            device_scale_factor=self.device_scale_factor,
            host=self.host,
        )
        return _BusLink(conn)

    def user_browser_listed(self) -> bool:
        from shotbridge.client.connect import user_browser_listed

        return self.mode == "auto" and user_browser_listed(self.host)

    async def user_link(self) -> Link | None:
        from shotbridge.client.connect import connect_user

        conn = await connect_user(self.host)
        return _BusLink(conn) if conn is not None else None


def bus_factory(
    mode: BrowserMode,
    window_size: tuple[int, int],
    device_scale_factor: float | None = None,
    host: str | None = None,
) -> BusFactory:
    return BusFactory(mode, window_size, device_scale_factor, host)


class Connection:
    """Hands out the shared link; concurrent callers wait on one connect attempt.

    ``notices`` is the hook for lost state: anything appended there (sentences for the model) is
    put before the next tool result's content and then cleared. This module adds the browser
    changes it sees; other parts of the server may append their own (a tracked tab that closed).
    """

    def __init__(self, factory: LinkFactory) -> None:
        self._factory = factory
        self._link: Link | None = None
        self._connecting: asyncio.Task[Link] | None = None
        self.notices: list[str] = []
        self._peer: Peer | None = None  # who the last link reached
        self._recheck = True  # re-decide (auto) before the next request
        self._used_headless = False  # a request of this call went to our headless browser

    # ---- per tool call ---------------------------------------------------------------------

    def begin_call(self) -> None:
        """A tool call starts: ``auto`` looks again for the user's browser at its first request."""
        self._recheck = True
        self._used_headless = False

    def end_call(self) -> list[str]:
        """Sentences to put before this call's result: lost state, then the headless note."""
        from shotbridge.client.connect import HEADLESS_NOTE

        said, self.notices = self.notices, []
        if self._used_headless and getattr(self._factory, "mode", None) == "auto":
            said.append(HEADLESS_NOTE)
        return said

    def attach(self, server: Any) -> None:
        """Wrap ``server.call_tool`` so every result starts with :meth:`end_call`'s sentences."""
        from mcp.server.mcpserver.exceptions import ToolError
        from mcp.types import CallToolResult, TextContent

        original = server.call_tool

        async def call_tool(name: str, arguments: dict[str, Any], context: Any = None) -> Any:
            self.begin_call()
            try:
                result = await original(name, arguments, context)
            except ToolError as exc:
                said = self.end_call()
                if said:
                    raise type(exc)("\n".join([*said, str(exc)])) from exc
                raise
            said = self.end_call()
            if said and isinstance(result, CallToolResult):
                note = TextContent(type="text", text="\n".join(said))
                result = result.model_copy(update={"content": [note, *result.content]})
            return result

        server.call_tool = call_tool

    # ---- the link --------------------------------------------------------------------------

    async def link(self, timeout: float | None = None) -> Link:
        """The link, connecting first if needed; ``timeout`` bounds the wait, not the attempt.

        The attempt itself is shielded: a caller that gives up (the 2 s auto-screenshot budget)
        must not kill a headless browser halfway through starting for the next caller.
        """
        if self._link is not None and self._recheck:
            self._recheck = False
            await self._prefer_user_browser()
        if self._link is not None:
            return self._link
        if self._connecting is None or self._connecting.done():
            self._connecting = asyncio.ensure_future(self._factory())
            # A caller that timed out no longer awaits it: fetch its exception so none goes unseen.
            self._connecting.add_done_callback(lambda t: t.cancelled() or t.exception())
        task = self._connecting
        try:
            link = await asyncio.wait_for(asyncio.shield(task), timeout)
        except TimeoutError:
            raise NotConnectedError("the browser did not connect in time") from None
        finally:
            if task.done() and self._connecting is task:
                self._connecting = None
        self._link = link
        self._recheck = False
        self._arrived(link)
        return link

    async def _prefer_user_browser(self) -> None:
        """``auto`` on our headless browser: move to the user's as soon as one is connected."""
        link = self._link
        factory = self._factory
        if not getattr(link, "headless", False) or not isinstance(factory, BusFactory):
            return
        if not factory.user_browser_listed():
            return
        new = await factory.user_link()
        if new is None:
            return
        self._link = new
        self._arrived(new)
        with contextlib.suppress(Exception):
            await link.close()  # type: ignore[union-attr]  # ends our headless browser

    def _arrived(self, link: Link) -> None:
        """Note in words when the browser behind the new link is not the one before."""
        peer_of = getattr(link, "peer", None)
        if peer_of is None:
            return
        peer: Peer = peer_of()
        before, self._peer = self._peer, peer
        if before is None or before.same_browser(peer):
            return
        lost = (
            "Its tabs, the tracked tab and page state from before are not there; call "
            "observe(what='tabs') to see what is open now."
        )
        if before.headless and not peer.headless:
            self.notices.append(
                f"Now using {peer.description}: it connected, so the headless Chromium "
                f"shotbridge had started was closed. {lost}"
            )
        elif not before.headless and peer.headless:
            self.notices.append(
                f"{before.description.capitalize()} is no longer connected; now using "
                f"{peer.description}. {lost}"
            )
        elif peer.headless:
            self.notices.append(
                f"The headless Chromium shotbridge started was replaced by a new one. {lost}"
            )
        elif before.profile_id == peer.profile_id:
            self.notices.append(
                f"{before.description.capitalize()} restarted (or its shotbridge extension "
                f"was reloaded): a new host, pid {peer.pid} (was {before.pid}). {lost}"
            )
        else:
            self.notices.append(
                f"Now connected to a different browser: {peer.description} (was "
                f"{before.description}). {lost}"
            )

    async def request(
        self,
        cmd: str,
        args: dict[str, Any] | None = None,
        *,
        timeout: float = 15.0,
        connect_timeout: float | None = None,
    ) -> dict[str, Any]:
        """One bus request; when the host went away, reconnect once and retry."""
        link = await self.link(connect_timeout)
        try:
            return await self._send(link, cmd, args, timeout)
        except NotConnectedError:
            await self.reset(link)
            raise
        except BusError as exc:
            log.warning("bus connection lost (%s); reconnecting", exc)
            revive = getattr(link, "revive", None)
            if revive is None or not await revive():
                await self.reset(link)
            else:
                self._arrived(link)  # same browser of ours, but a new host behind it
        link = await self.link(connect_timeout)
        return await self._send(link, cmd, args, timeout)

    async def _send(
        self, link: Link, cmd: str, args: dict[str, Any] | None, timeout: float
    ) -> dict[str, Any]:
        self._used_headless = self._used_headless or bool(getattr(link, "headless", False))
        result = await link.request(cmd, args, timeout=timeout)
        all_tabs = getattr(link, "all_tabs", None)
        if cmd == "list_tabs" and all_tabs is not None:
            result = await all_tabs(result)
        return result

    async def reset(self, link: Link) -> None:
        """Forget a broken link (only if it is still the current one)."""
        if self._link is link:
            self._link = None
            with contextlib.suppress(Exception):
                await link.close()

    async def close(self) -> None:
        if self._connecting is not None and not self._connecting.done():
            self._connecting.cancel()
            with contextlib.suppress(BaseException):
                await self._connecting
        self._connecting = None
        link, self._link = self._link, None
        if link is not None:
            with contextlib.suppress(Exception):
                await link.close()

    def close_browser_now(self) -> None:
        """Synchronous last resort at exit: end a headless browser even without an event loop."""
        link = self._link
        if isinstance(link, _BusLink):
            link.close_browser()
