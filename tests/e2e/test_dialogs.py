"""JavaScript dialogs in real headless Chromium: seen, named in every result, answered.

tests/pages/dialogs/alert.html has an alert, a confirm and a prompt button (#result shows what the
page got back); load-alert.html alerts from a script in its head; beforeunload.html arms a
beforeunload handler once something is typed into it.

Once, every call after an alert waited its full timeout (click 15 s, observe 10 s,
capture 15 s) and then said "The page may still be loading". Here each call is given a bus
timeout well under those waits: a call that waited would fail with the client's own timeout, not
with the dialog's name.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from shotbridge.client.browser import HeadlessBrowser
from shotbridge.client.bus_client import BusClient
from shotbridge.wire.errors import DialogOpenError, NoDialogError

from tests.e2e.conftest import run_on_bus
from tests.mcp_stdio import McpSession

pytestmark = pytest.mark.browser

# Shorter than every wait a blocked page used to cost (10 s, 15 s, 30 s).
QUICK = 6.0


class Page:
    def __init__(self, client: BusClient, base: str) -> None:
        self.client = client
        self.base = f"{base}/dialogs"

    async def navigate(self, name: str, **args: Any) -> dict[str, Any]:
        args = {"action": "navigate", "url": f"{self.base}/{name}", "timeout_ms": 8000, **args}
        return await self.client.request("interact", args, timeout=12)

    async def act(self, **args: Any) -> dict[str, Any]:
        return await self.client.request("interact", {"timeout_ms": 8000, **args}, timeout=QUICK)

    async def dialog(self, accept: bool, **args: Any) -> dict[str, Any]:
        return await self.act(action="dialog", accept=accept, **args)

    async def text(self, selector: str) -> str:
        found = await self.client.request(
            "discover", {"target": "custom", "selector": selector}, timeout=QUICK
        )
        return found["elements"][0]["text"]

    async def until_text(self, selector: str, want: str) -> None:
        """Poll (the page runs what follows a dialog on its own schedule)."""
        seen = ""
        for _ in range(50):
            seen = await self.text(selector)
            if seen == want:
                return
            await asyncio.sleep(0.1)
        raise AssertionError(f"{selector} shows {seen!r}, not {want!r}")


def run(browser: HeadlessBrowser, base: str, scenario: Callable[[Page], Awaitable[None]]) -> None:
    run_on_bus(browser, lambda client: Page(client, base), scenario)


def test_alert_is_named_by_click_capture_and_observe_then_accepted(
    browser: HeadlessBrowser, pages_url: str
) -> None:
    async def scenario(p: Page) -> None:
        await p.navigate("alert.html")
        clicked = await p.act(action="click", selector="#alert")
        assert clicked["dialog"]["type"] == "alert"
        assert clicked["dialog"]["message"] == "Saved!"
        assert any("an alert dialog: 'Saved!'" in n for n in clicked["notes"])
        assert any('interact action="dialog"' in n for n in clicked["notes"])

        # Everything that needs the page says why it cannot, at once.
        with pytest.raises(DialogOpenError, match="alert dialog: 'Saved!'"):
            await p.client.request("screenshot", {}, timeout=QUICK)
        with pytest.raises(DialogOpenError, match="alert dialog: 'Saved!'"):
            await p.client.request("page_info", {}, timeout=QUICK)
        with pytest.raises(DialogOpenError, match="alert dialog: 'Saved!'"):
            await p.act(action="click", selector="#confirm")
        tabs = await p.client.request("list_tabs", {}, timeout=QUICK)
        assert [t["dialog"]["message"] for t in tabs["tabs"] if t.get("dialog")] == ["Saved!"]

        done = await p.dialog(True)
        assert done["dialog"]["message"] == "Saved!" and done["accepted"] is True
        await p.until_text("#result", "alert closed")
        shot = await p.client.request("screenshot", {}, timeout=20)
        assert shot["width"] > 0

    run(browser, pages_url, scenario)


def test_confirm_returns_what_the_model_chose(browser: HeadlessBrowser, pages_url: str) -> None:
    async def scenario(p: Page) -> None:
        await p.navigate("alert.html")
        clicked = await p.act(action="click", selector="#confirm")
        dialog = clicked["dialog"]
        assert (dialog["type"], dialog["message"]) == ("confirm", "Leave site?")
        await p.dialog(False)
        await p.until_text("#result", "confirm: false")
        await p.act(action="click", selector="#confirm")
        await p.dialog(True)
        await p.until_text("#result", "confirm: true")

    run(browser, pages_url, scenario)


def test_prompt_text_default_and_dismiss(browser: HeadlessBrowser, pages_url: str) -> None:
    async def scenario(p: Page) -> None:
        await p.navigate("alert.html")
        clicked = await p.act(action="click", selector="#prompt")
        assert clicked["dialog"]["default_prompt"] == "Ada"
        done = await p.dialog(True, prompt_text="Grace")
        assert done["prompt_text"] == "Grace"
        await p.until_text("#result", 'prompt: "Grace"')
        await p.act(action="click", selector="#prompt")
        await p.dialog(True)  # no text: the prompt's default
        await p.until_text("#result", 'prompt: "Ada"')
        await p.act(action="click", selector="#prompt")
        await p.dialog(False)
        await p.until_text("#result", "prompt: null")

    run(browser, pages_url, scenario)


def test_answering_when_no_dialog_is_open_is_a_clear_error(
    browser: HeadlessBrowser, pages_url: str
) -> None:
    async def scenario(p: Page) -> None:
        await p.navigate("alert.html")
        with pytest.raises(NoDialogError, match="No JavaScript dialog is open"):
            await p.dialog(True)

    run(browser, pages_url, scenario)


def test_page_that_alerts_while_loading_does_not_fail_the_navigation(
    browser: HeadlessBrowser, pages_url: str
) -> None:
    async def scenario(p: Page) -> None:
        # Before: "The page did not finish loading within 30000 ms" after 30 s.
        went = await p.navigate("load-alert.html")
        assert went["navigated"] is True
        assert went["dialog"]["message"] == "Welcome during load"
        assert any("alert dialog: 'Welcome during load'" in n for n in went["notes"])
        # A model takes seconds to answer; the dialog must still be answerable then (Chrome lets
        # only a debugger session attached when it opened handle it).
        await asyncio.sleep(3)
        with pytest.raises(DialogOpenError, match="Welcome during load"):
            await p.client.request("page_info", {}, timeout=QUICK)
        await p.dialog(True)
        for _ in range(50):
            info = await p.client.request("page_info", {}, timeout=QUICK)
            if info["ready_state"] == "complete":
                break
            await asyncio.sleep(0.1)
        assert info["headings"] == [{"level": 1, "text": "Loaded after the alert"}]

    run(browser, pages_url, scenario)


def test_beforeunload_never_blocks_a_navigation_unless_kept(
    browser: HeadlessBrowser, pages_url: str
) -> None:
    async def arm(p: Page) -> None:
        await p.navigate("beforeunload.html")
        await p.act(action="type", selector="#draft", text="unsaved")
        await p.until_text("#armed", "armed")

    async def scenario(p: Page) -> None:
        await arm(p)
        went = await p.navigate("alert.html")  # accepted for the model: it asked to leave
        assert went["url"].endswith("/dialogs/alert.html")

        # keep_beforeunload: the prompt is the model's to answer; the navigation waits for it.
        await arm(p)
        held = await p.navigate("alert.html", keep_beforeunload=True)
        assert held["dialog"]["type"] == "beforeunload"
        assert any("beforeunload dialog" in n for n in held["notes"])
        with pytest.raises(DialogOpenError, match="beforeunload"):
            await p.client.request("page_info", {}, timeout=QUICK)
        await p.dialog(True)
        for _ in range(50):
            tab = await p.client.request("page_info", {}, timeout=QUICK)
            if tab["url"].endswith("/dialogs/alert.html"):
                break
            await asyncio.sleep(0.1)
        assert tab["url"].endswith("/dialogs/alert.html")

    run(browser, pages_url, scenario)


def test_mcp_results_name_the_dialog_and_interact_answers_it(pages_url: str) -> None:
    """The real `shotctl mcp` stdio subprocess and its own headless Chromium."""
    base = f"{pages_url}/dialogs"
    # A tool timeout under the old 15 s waits: a call that waited fails instead of naming it.
    with McpSession("--browser", "headless", "--cooldown", "0", timeout=14) as s:
        r = s.call("interact", {"action": "navigate", "url": f"{base}/alert.html"})
        assert not r.is_error, r.content
        r = s.call("interact", {"action": "click", "selector": "#confirm"})
        assert not r.is_error, r.content
        first = r.content[0].text
        assert "The page shows a confirm dialog: 'Leave site?'" in first, first
        assert 'interact action="dialog"' in first

        r = s.call("capture_screenshot", {})
        assert r.is_error and "confirm dialog: 'Leave site?'" in r.content[0].text, r.content
        r = s.call("observe", {"what": "page"})
        assert r.is_error and "confirm dialog: 'Leave site?'" in r.content[0].text, r.content

        r = s.call("interact", {"action": "dialog"})
        assert r.is_error and "needs accept" in r.content[0].text
        r = s.call("interact", {"action": "dialog", "accept": False})
        assert not r.is_error, r.content
        assert r.content[0].text.startswith('Dismissed the confirm dialog "Leave site?".')
        r = s.call("observe", {"what": "page"})
        assert not r.is_error, r.content
        r = s.call("interact", {"action": "dialog", "accept": True})
        assert r.is_error and "No JavaScript dialog is open" in r.content[0].text


def test_navigating_away_from_an_open_dialog_dismisses_it(
    browser: HeadlessBrowser, pages_url: str
) -> None:
    async def scenario(p: Page) -> None:
        await p.navigate("alert.html")
        await p.act(action="click", selector="#confirm")
        went = await p.navigate("beforeunload.html")
        assert went["url"].endswith("/dialogs/beforeunload.html")
        assert any("Dismissed the confirm dialog" in n for n in went["notes"]), went
        assert (await p.text("#armed")) == "not armed"

    run(browser, pages_url, scenario)
