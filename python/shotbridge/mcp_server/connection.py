"""The server's one bus client, made on first use and remade after the host goes away.

``--browser connected`` uses the user's browser; ``headless`` (and ``auto`` when none is connected)
starts our own headless Chromium, lazily so that listing tools never launches a browser. That
browser lives until the server ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Literal, Protocol

from shotbridge.errors import BusError, NotConnectedError

log = logging.getLogger(__name__)

BrowserMode = Literal["auto", "connected", "headless"]


class Link(Protocol):
    """What the tools need of a bus connection (a real BusClient, or a fake in unit tests)."""

    async def request(
        self, cmd: str, args: dict[str, Any] | None = None, timeout: float = 15.0
    ) -> dict[str, Any]: ...

    async def close(self) -> None: ...


LinkFactory = Callable[[], Awaitable[Link]]


class _BusLink:
    """Adapts :class:`shotbridge.connect.Connection` (client, maybe a browser) to :class:`Link`."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn

    async def request(
        self, cmd: str, args: dict[str, Any] | None = None, timeout: float = 15.0
    ) -> dict[str, Any]:
        return await self._conn.client.request(cmd, args, timeout=timeout)

    async def revive(self) -> bool:
        """After the host went away: reach the new host of *our* headless browser, if alive.

        The extension starts a new host when its service worker reconnects; relaunching the
        browser instead would lose its tabs.
        """
        browser = getattr(self._conn, "browser", None)
        if browser is None or not browser.alive():
            return False
        from shotbridge.client import BusClient, wait_for_host

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


def bus_factory(mode: BrowserMode, window_size: tuple[int, int]) -> LinkFactory:
    async def make() -> Link:
        from shotbridge.connect import connect  # pulls in the bus client only when needed

        log.info("connecting to the browser (mode=%s)", mode)
        return _BusLink(await connect(mode, window_size=window_size))

    return make


class Connection:
    """Hands out the shared link; concurrent callers wait on one connect attempt."""

    def __init__(self, factory: LinkFactory) -> None:
        self._factory = factory
        self._link: Link | None = None
        self._connecting: asyncio.Task[Link] | None = None

    async def link(self, timeout: float | None = None) -> Link:
        """The link, connecting first if needed; ``timeout`` bounds the wait, not the attempt.

        The attempt itself is shielded: a caller that gives up (the 2 s auto-screenshot budget)
        must not kill a headless browser halfway through starting for the next caller.
        """
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
        return link

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
            return await link.request(cmd, args, timeout=timeout)
        except NotConnectedError:
            await self.reset(link)
            raise
        except BusError as exc:
            log.warning("bus connection lost (%s); reconnecting", exc)
            revive = getattr(link, "revive", None)
            if revive is None or not await revive():
                await self.reset(link)
        link = await self.link(connect_timeout)
        return await link.request(cmd, args, timeout=timeout)

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
