"""Reach a browser for a client: the user's connected one, or a headless one of our own.

``auto`` decides each time it is asked: the user's browser when one is connected at that moment,
else a headless Chromium of ours. ``$SHOTBRIDGE_HOST`` (``--host``: a profile id or a host pid)
names one of the user's browsers, and then ``auto`` never falls back to headless.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from shotbridge.client.browser import HeadlessBrowser
from shotbridge.client.bus_client import BusClient, VersionMismatchError, wait_for_host
from shotbridge.transport import paths
from shotbridge.wire.errors import BrowserError, BusError, NotConnectedError

log = logging.getLogger(__name__)

BrowserMode = Literal["auto", "connected", "headless"]

# A browser we start ourselves: cold start of Chromium plus the extension's first hello.
HEADLESS_START_TIMEOUT = 30.0

# Said by every result that a headless browser of ours produced while `auto` was asked for.
HEADLESS_NOTE = "(headless Chromium started by shotbridge — no browser of yours is connected)"


@dataclass
class Connection:
    """A bus client, and the headless browser behind it when we started one."""

    client: BusClient
    browser: HeadlessBrowser | None = None

    @property
    def headless(self) -> bool:
        return self.browser is not None

    def describe(self) -> str:
        """Who is at the other end, in words for a model or a user."""
        info = self.client.info
        if self.headless:
            return "a headless Chromium started by shotbridge"
        profile = info.profile_id if info else None
        said = f"your browser (profile {profile})" if profile else "your browser"
        if info is not None and info.via:
            return f"{said} on another machine, through the forwarded bus {info.via}"
        return said

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await self.client.close()
        if self.browser is not None:
            self.browser.close()
            self.browser = None


def client_name() -> str:
    """How this process introduces itself to a host: ``shotctl mcp``, ``shotctl capture``…"""
    sub = next((a for a in sys.argv[1:] if not a.startswith("-")), "")
    return f"shotctl {sub}".strip()[:64]


def user_browser_listed(host: str | None = None) -> bool:
    """Cheap check (records and sockets only): is a browser of the user's reachable right now?"""
    name = host or os.environ.get("SHOTBRIDGE_HOST") or None
    if name is None and paths.forward_candidates():
        return True  # the laptop's browser, forwarded: its record lives over there
    return any(
        h.connected and h.profile_id and (name is None or paths.host_matches(h, name))
        for h in paths.list_hosts()
    )


async def _introduced(client: BusClient) -> BusClient:
    """``client`` once it said hello to a host whose extension is connected; else closed."""
    try:
        status = await client.hello(client_name(), timeout=2.0)
    except BaseException:
        await client.close()
        raise
    if not status.connected:
        await client.close()
        raise NotConnectedError("a shotbridge host is running but no extension is connected to it")
    return client


async def _connected_client(host: str | None = None) -> BusClient:
    """A client of the most recently active host whose extension is connected: this machine's
    first, then a browser forwarded from another machine (``shotctl remote ssh``, a mount)."""
    try:
        return await _introduced(await BusClient.connect(host, timeout=2.0))
    except VersionMismatchError:
        raise
    except BusError:
        named = host or os.environ.get("SHOTBRIDGE_HOST")
        if named or paths.explicit_bus() is not None or not paths.forward_candidates():
            raise
    return await _introduced(await BusClient.connect_forward(timeout=2.0))


async def start_headless(
    *, window_size: tuple[int, int] = (1280, 800), device_scale_factor: float | None = None
) -> Connection:
    browser = HeadlessBrowser(window_size=window_size, device_scale_factor=device_scale_factor)
    browser.start()
    try:
        await wait_for_host(
            runtime_dir=browser.runtime_dir, timeout=HEADLESS_START_TIMEOUT, connected=True
        )
        client = await BusClient.connect(runtime_dir=browser.runtime_dir, timeout=5.0)
    except (BusError, TimeoutError) as exc:
        log = browser.tail_log()
        browser.close()
        raise BrowserError(
            f"headless Chromium started but its extension never reached the host: {exc}"
            + (f"\n--- chromium log (tail) ---\n{log}" if log else "")
        ) from exc
    except BaseException:
        browser.close()
        raise
    return Connection(client=client, browser=browser)


async def connect(
    mode: BrowserMode = "auto",
    *,
    window_size: tuple[int, int] = (1280, 800),
    device_scale_factor: float | None = None,
    host: str | None = None,
) -> Connection:
    """``connected``: the user's browser or an error; ``headless``: our own; ``auto``: the
    user's when one is connected now, else our own. A named ``host`` (or ``$SHOTBRIDGE_HOST``),
    or a bus named by ``$SHOTBRIDGE_BUS``, makes ``auto`` mean ``connected``."""
    named = host or os.environ.get("SHOTBRIDGE_HOST") or None
    if mode == "auto" and (named or paths.explicit_bus() is not None):
        mode = "connected"
    if mode != "headless":
        try:
            conn = Connection(client=await _connected_client(named))
            if conn.client.forwarded:  # say so once: the browser is not on this machine
                log.warning("using %s", conn.describe())
            return conn
        except VersionMismatchError:
            raise  # the user's browser is there: a headless one instead would hide the problem
        except BusError:
            if mode == "connected":
                raise
            # On stderr for the CLI (a warning reaches it unconfigured); in the MCP server's log.
            log.warning("%s", HEADLESS_NOTE)
    return await start_headless(window_size=window_size, device_scale_factor=device_scale_factor)


async def other_browsers_tabs(mine: int | None) -> list[tuple[paths.HostInfo, list[Any]]]:
    """``list_tabs`` of each of the user's connected browsers but host ``mine``, with its host.

    A browser that does not answer is left out: another browser is extra information, not required.
    """
    found: list[tuple[paths.HostInfo, list[Any]]] = []
    for other in paths.list_hosts():
        if other.pid == mine or not other.connected:
            continue
        try:
            async with await BusClient.connect_path(
                Path(other.socket), info=other, timeout=2.0
            ) as client:
                reply = await client.request("list_tabs", timeout=5.0)
        except Exception as exc:
            log.info("list_tabs of host %s failed: %s", other.pid, exc)
            continue
        found.append((other, reply.get("tabs", [])))
    return found


async def connect_user(host: str | None = None) -> Connection | None:
    """The user's connected browser, or None when there is none right now."""
    try:
        return Connection(client=await _connected_client(host))
    except BusError:
        return None
