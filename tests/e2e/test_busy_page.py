"""Busy pages in real headless Chromium: named in seconds; a navigation always gets out (#12).

A navigation first ends the stuck renderer with Page.crash where a debugger session that predates
the hang can reach it, else puts a new tab in the stuck one's place (the tracked tab follows).

tests/pages/dialogs/busy.html: #spin starts an endless loop in the page's main thread (after the
click returns); #late opens an alert 3 s after the click, when shotbridge's debugger has usually
detached (Chrome does not report a dialog that opened before a debugger attached).

Once, every call on a spinning page waited its full timeout (observe 10 s, capture and
click 15 s) and said "The page may still be loading", and navigating the tab to a same-site URL
failed for good. Each call here has a bus timeout well under those waits.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from shotbridge.client.browser import HeadlessBrowser
from shotbridge.client.bus_client import BusClient
from shotbridge.wire.errors import DialogOpenError, PageBusyError

from tests.e2e.conftest import run_on_bus

pytestmark = pytest.mark.browser

QUICK = 6.0  # shorter than the 10 s / 15 s a blocked page used to cost each call


class Tab:
    def __init__(self, client: BusClient, base: str) -> None:
        self.client = client
        self.base = f"{base}/dialogs"

    async def navigate(self, **args: Any) -> dict[str, Any]:
        return await self.client.request(
            "interact", {"action": "navigate", "timeout_ms": 8000, **args}, timeout=12
        )

    async def goto(self, name: str) -> dict[str, Any]:
        return await self.navigate(url=f"{self.base}/{name}")

    async def click(self, selector: str) -> dict[str, Any]:
        args = {"action": "click", "selector": selector, "timeout_ms": 8000}
        return await self.client.request("interact", args, timeout=QUICK)

    async def spin(self) -> None:
        await self.goto("busy.html")
        await self.click("#spin")

    async def headings(self) -> list[dict[str, Any]]:
        info = await self.client.request("page_info", {}, timeout=QUICK)
        return info["headings"]


def run(browser: HeadlessBrowser, base: str, scenario: Callable[[Tab], Awaitable[None]]) -> None:
    run_on_bus(browser, lambda client: Tab(client, base), scenario)


def test_busy_page_is_named_by_observe_capture_and_click(
    browser: HeadlessBrowser, pages_url: str
) -> None:
    async def scenario(t: Tab) -> None:
        await t.spin()
        with pytest.raises(PageBusyError, match="busy") as err:
            await t.client.request("page_info", {}, timeout=QUICK)
        assert "Navigate elsewhere" in err.value.message and "new tab" in err.value.message
        with pytest.raises(PageBusyError):
            await t.client.request("screenshot", {}, timeout=QUICK)
        with pytest.raises(PageBusyError):
            await t.click("h1")
        await t.goto("alert.html")  # leave it for the next test

    run(browser, pages_url, scenario)


def test_navigating_a_busy_tab_to_a_same_site_url_gets_out(
    browser: HeadlessBrowser, pages_url: str
) -> None:
    async def scenario(t: Tab) -> None:
        await t.spin()
        went = await t.goto("alert.html")  # same site: the stuck renderer would be reused
        assert went["url"].endswith("/dialogs/alert.html")
        # Its renderer ended (Page.crash), or the tab replaced by a new one (a new renderer).
        assert any("was not answering" in n for n in went["notes"]), went
        assert await t.headings() == [{"level": 1, "text": "Dialogs"}]

    run(browser, pages_url, scenario)


def test_reloading_a_busy_tab_gets_out(browser: HeadlessBrowser, pages_url: str) -> None:
    async def scenario(t: Tab) -> None:
        await t.spin()
        went = await t.navigate(navigation="reload")
        assert went["url"].endswith("/dialogs/busy.html")
        assert any("was not answering" in n for n in went["notes"]), went
        assert await t.headings() == [{"level": 1, "text": "Busy page"}]
        await t.click("h1")  # the fresh renderer answers

    run(browser, pages_url, scenario)


def test_dialog_opened_while_nobody_listened_still_lets_the_model_out(
    browser: HeadlessBrowser, pages_url: str
) -> None:
    async def scenario(t: Tab) -> None:
        await t.goto("busy.html")
        await t.click("#late")
        blocked = await blocked_by_dialog(t)
        # Seen by the debugger it is named with how to answer it; opened while it was detached,
        # the page's own report (content/bridge-main.js) names it. Either way navigate works.
        assert "Late news" in blocked.message, blocked.message
        went = await t.goto("alert.html")
        assert went["url"].endswith("/dialogs/alert.html")
        assert await t.headings() == [{"level": 1, "text": "Dialogs"}]

    run(browser, pages_url, scenario)


async def blocked_by_dialog(t: Tab) -> DialogOpenError:
    """Polls page_info until the dialog the page was made to open blocks it."""
    for _ in range(100):  # the dialog opens 3 s after the click
        try:
            await t.client.request("page_info", {}, timeout=QUICK)
        except DialogOpenError as exc:
            return exc
        await asyncio.sleep(0.1)
    raise AssertionError("the page never reported its dialog")


UNATTACHED = "it opened while shotbridge was not attached"


def test_alert_that_opened_with_no_debugger_attached_is_named(
    browser: HeadlessBrowser, pages_url: str
) -> None:
    """Before: PageBusyError ("a long-running or endless script, or a dialog ...")."""

    async def scenario(t: Tab) -> None:
        await t.goto("unattached.html")
        await t.click("#expire")
        blocked = await blocked_by_dialog(t)
        assert "alert dialog: 'Session expired'" in blocked.message, blocked.message
        assert UNATTACHED in blocked.message and 'action="navigate"' in blocked.message
        with pytest.raises(DialogOpenError, match="Session expired"):
            await t.client.request("screenshot", {}, timeout=QUICK)
        went = await t.goto("alert.html")  # navigate still gets out
        assert went["url"].endswith("/dialogs/alert.html")
        assert await t.headings() == [{"level": 1, "text": "Dialogs"}]

    run(browser, pages_url, scenario)


def test_confirm_in_a_frame_with_no_debugger_attached_is_named(
    browser: HeadlessBrowser, pages_url: str
) -> None:
    async def scenario(t: Tab) -> None:
        await t.goto("unattached.html")
        await t.client.request(
            "interact",
            {"action": "click", "selector": "iframe#child >>> #late", "timeout_ms": 8000},
            timeout=QUICK,
        )
        blocked = await blocked_by_dialog(t)
        assert "confirm dialog: 'Leave the editor?'" in blocked.message, blocked.message
        went = await t.navigate(navigation="reload")
        assert went["url"].endswith("/dialogs/unattached.html")
        assert (await t.headings())[0]["text"] == "Session page"  # the record went with the page

    run(browser, pages_url, scenario)
