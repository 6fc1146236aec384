"""Reach a browser for a client: the user's connected one, or a headless one of our own."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Literal

from shotbridge.browser import HeadlessBrowser
from shotbridge.client import BusClient, wait_for_host
from shotbridge.errors import BrowserError, BusError, NotConnectedError

BrowserMode = Literal["auto", "connected", "headless"]

# A browser we start ourselves: cold start of Chromium plus the extension's first hello.
HEADLESS_START_TIMEOUT = 30.0


@dataclass
class Connection:
    """A bus client, and the headless browser behind it when we started one."""

    client: BusClient
    browser: HeadlessBrowser | None = None

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await self.client.close()
        if self.browser is not None:
            self.browser.close()
            self.browser = None


async def _connected_client() -> BusClient:
    """A client of the most recently active host whose extension is connected."""
    client = await BusClient.connect(timeout=2.0)
    try:
        status = await client.request("status", timeout=2.0)
    except Exception:
        await client.close()
        raise
    if not status.get("connected"):
        await client.close()
        raise NotConnectedError("a shotbridge host is running but no extension is connected to it")
    return client


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
) -> Connection:
    """``connected``: the user's browser or an error; ``headless``: our own; ``auto``: either."""
    if mode != "headless":
        try:
            return Connection(client=await _connected_client())
        except BusError:
            if mode == "connected":
                raise
    return await start_headless(window_size=window_size, device_scale_factor=device_scale_factor)
