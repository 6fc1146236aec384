"""The tracked tab in a headed Chromium under Xvfb: it follows the tab and window the
user focuses (switched with the real keyboard through xdotool) unless one was chosen with
``track`` / ``tab_id``; a ``chrome://`` tab is named when it cannot be captured, and text-only
tools still answer there."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import pytest
from shotbridge.wire.errors import CommandError

from tests.e2e.headed import (
    BusUser,
    Desktop,
    HeadedChromium,
    as_user_run,
    browser_windows,
    focus_window,
    images_of,
    keys,
    mcp_call,
    text_of,
)


class User(BusUser):
    async def shot(self, **args: Any) -> dict[str, Any]:
        """A screenshot (auto: captureVisibleTab, or CDP for a young page or a hidden tab)."""
        return await self.call("screenshot", args)


def run(desktop: Desktop, scenario: Callable[[User], Awaitable[None]]) -> None:
    as_user_run(desktop, lambda u: scenario(User(desktop, u.client)))


@pytest.fixture(scope="module")
def windows(desktop: Desktop, headed: HeadedChromium, pages_url: str) -> Iterator[dict[str, Any]]:
    """Two windows as a user makes them: window 1 with buttons.html and (Ctrl+T) interact.html,
    window 2 (Ctrl+N) with anchored.html. Their X ids and tab ids."""
    [first] = browser_windows(desktop)
    urls = {
        "a": f"{pages_url}/buttons.html",
        "b": f"{pages_url}/interact.html",
        "c": f"{pages_url}/anchored.html",
    }
    found: dict[str, Any] = {"w1": first, "urls": urls}

    async def setup(u: User) -> None:
        found["a"] = (await u.showing(urls["a"]))["id"]
        await u.new_tab(first)
        found["b"] = (await u.go(first, urls["b"]))["id"]
        await u.new_tab(first, "ctrl+n")

        async def second_window() -> str | None:
            more = [w for w in browser_windows(desktop) if w != first]
            return more[0] if more else None

        found["w2"] = await u.until("a second window", second_window)
        found["c"] = (await u.go(found["w2"], urls["c"]))["id"]

    run(desktop, setup)
    yield found


def test_tracked_tab_follows_the_tab_and_window_the_user_focuses(
    desktop: Desktop, windows: dict[str, Any]
) -> None:
    urls = windows["urls"]

    async def scenario(u: User) -> None:
        # Window 2 has the focus: its tab is the one captured.
        shot = await u.shot()
        assert (shot["url"], shot["tab_id"]) == (urls["c"], windows["c"])
        # The user clicks into window 1 (the window manager's focus) ...
        focus_window(desktop, windows["w1"])
        await u.showing(urls["b"])
        shot = await u.shot()
        assert (shot["url"], shot["tab_id"]) == (urls["b"], windows["b"])
        # ... and switches tabs with Ctrl+Tab.
        keys(desktop, windows["w1"], "ctrl+Tab")
        await u.showing(urls["a"])
        shot = await u.shot()
        assert (shot["url"], shot["tab_id"]) == (urls["a"], windows["a"])

    run(desktop, scenario)
    # An MCP client sees the same tab.
    [page, tabs] = mcp_call(
        desktop.env(),
        [("observe", {"what": "page"}), ("observe", {"what": "tabs"})],
        "--browser",
        "connected",
    )
    assert not page.is_error, text_of(page)
    assert urls["a"] in text_of(page) and "Buttons fixture" in text_of(page)
    assert not tabs.is_error, text_of(tabs)
    for key in ("a", "b", "c"):
        assert urls[key] in text_of(tabs)


def test_a_chosen_tab_stays_whatever_the_user_focuses(
    desktop: Desktop, windows: dict[str, Any]
) -> None:
    urls = windows["urls"]

    async def scenario(u: User) -> None:
        focus_window(desktop, windows["w1"])
        keys(desktop, windows["w1"], "ctrl+1")  # first tab of window 1: buttons.html
        await u.showing(urls["a"])
        # Chosen as configure(action="track") does. (A tab the user leaves in the background of
        # its window cannot be captured at all: Chrome paints only the front tab of a window.)
        pinned = await u.call("track", {"tab_id": windows["a"]})
        assert pinned["tab"]["id"] == windows["a"]
        try:
            # The user moves to window 2: the chosen tab stays tracked.
            focus_window(desktop, windows["w2"])

            async def w2_active() -> bool:
                tabs = {t["id"]: t for t in await u.tabs()}
                a, c = tabs[windows["a"]], tabs[windows["c"]]
                return c["active"] and a["tracked"] and not c["tracked"]

            await u.until("window 2 focused, tab a still tracked", w2_active)
            shot = await u.shot()
            assert (shot["url"], shot["tab_id"]) == (urls["a"], windows["a"])
            # A tab_id names another tab for one call, without changing the tracked one.
            shot = await u.shot(tab_id=windows["c"])
            assert (shot["url"], shot["tab_id"]) == (urls["c"], windows["c"])
            assert next(t for t in await u.tabs() if t["tracked"])["id"] == windows["a"]
        finally:
            await u.call("track", {"tab_id": None})
        # Following the focus again: window 2's tab.
        await u.showing(urls["c"])
        shot = await u.shot()
        assert shot["tab_id"] == windows["c"]

    run(desktop, scenario)
    # Through MCP: configure track pins, observe(page) then answers for that tab.
    [pinned, page] = mcp_call(
        desktop.env(),
        [
            ("configure", {"action": "track", "tab_id": windows["a"]}),
            ("observe", {"what": "page"}),
        ],
        "--browser",
        "connected",
    )
    assert not pinned.is_error, text_of(pinned)
    assert urls["a"] in text_of(page), text_of(page)

    async def unpin(u: User) -> None:
        await u.call("track", {"tab_id": None})

    run(desktop, unpin)


def test_a_chrome_page_is_named_and_still_observed(
    desktop: Desktop, windows: dict[str, Any]
) -> None:
    url = "chrome://version/"
    found: dict[str, Any] = {}

    async def scenario(u: User) -> None:
        await u.new_tab(windows["w2"])
        tab = await u.go(windows["w2"], url)
        found["tab"] = tab["id"]
        with pytest.raises(CommandError) as refused:
            await u.shot()
        assert refused.value.code == "restricted_page"
        assert refused.value.message.startswith(
            f"The tracked tab (tab {tab['id']}) shows {url} (a browser page that cannot be "
            "captured or scripted); switch to a web page or pass tab_id."
        ), refused.value.message
        # A tab_id of a web page still captures.
        shot = await u.shot(tab_id=windows["a"])
        assert shot["url"] == windows["urls"]["a"]

    run(desktop, scenario)
    shot, page, tabs = mcp_call(
        desktop.env(),
        [
            ("capture_screenshot", {}),
            ("observe", {"what": "page"}),
            ("observe", {"what": "tabs"}),
        ],
        "--browser",
        "connected",
    )
    assert shot.is_error and not images_of(shot)
    assert f"The tracked tab (tab {found['tab']}) shows {url}" in text_of(shot), text_of(shot)
    assert "switch to a web page or pass tab_id" in text_of(shot)
    # Text-only tools answer there with the URL and title.
    assert not page.is_error, text_of(page)
    assert url in text_of(page) and "About Version" in text_of(page), text_of(page)
    assert not tabs.is_error and url in text_of(tabs)
    # The CLI says the same and fails.
    done = desktop.run("shotctl", "capture", "--browser", "connected", "-o", "/dev/null")
    assert done.returncode != 0
    assert f"shows {url} (a browser page that cannot be captured" in done.stderr, done.stderr
