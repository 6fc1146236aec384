"""Chrome's "started debugging this browser" bar in a headed Chromium under Xvfb.

The user's part is done with the real keyboard (xdotool): pressing Cancel on the bar, opening the
shotbridge popup page and pressing its "Allow debugging again". shotbridge's part goes through the
real bus and the real `shotctl mcp`.

Chromium shows one infobar at a time: the "unsupported command-line flag: --no-sandbox" bar every
test browser starts with would hide the debugging bar (and keep the viewport from changing), so the
module first closes it, as a user would.
"""

from __future__ import annotations

import asyncio
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
    images_of,
    keys,
    mcp_call,
    press_infobar_button,
    text_of,
)

POPUP = "chrome-extension://lgpadcfmcnglbejkodbbdfcnfnaffoae/popup/popup.html"
CANCELLED = 'The user pressed Cancel on Chrome\'s "started debugging this browser" bar'
POPUP_CANCELLED = "shotbridge: connected, debugging cancelled"  # the popup's title then
KEEP_ATTACHED = 60_000  # ms: the debugger (and its bar) stays while the test looks at it


class User(BusUser):
    """The desktop's user on the bus, with the window their keyboard acts on."""

    def __init__(self, desktop: Desktop, client: Any, window: str) -> None:
        super().__init__(desktop, client)
        self.window = window

    async def height(self) -> float:
        return (await self.call("page_info"))["viewport"]["height"]

    async def show(self, url: str) -> dict[str, Any]:
        """Type ``url`` into the address bar; the tracked tab once it shows the loaded page."""
        return await self.go(self.window, url)

    async def clicks(self) -> str:
        found = await self.call("discover", {"target": "custom", "selector": "#count"})
        return found["elements"][0]["text"]

    async def no_bar(self, full: float) -> None:
        """Wait until no debugging bar is shown (Chrome closes it 5 s after the last detach)."""

        async def gone() -> bool:
            return await self.height() == full

        await self.until("the debugging bar to close", gone)

    async def popup_says(self, title: str) -> None:
        """Open the popup page in a new tab (Ctrl+T, its address) and wait for its state."""

        async def shown() -> bool:
            return any(t["title"] == title for t in await self.tabs())

        await self.new_tab(self.window)
        await self.go(self.window, POPUP)
        await self.until(f"the popup to say {title!r}", shown)

    async def allow_again(self, page: str) -> None:
        """In the popup: Tab to "Allow debugging again", Return; then close it (Ctrl+W)."""

        async def allowed() -> bool:
            return any(t["title"] == "shotbridge: connected" for t in await self.tabs())

        await self.popup_says(POPUP_CANCELLED)
        keys(self.desktop, self.window, "Tab", "Return")
        await self.until("the popup to allow debugging", allowed)
        keys(self.desktop, self.window, "ctrl+w")  # back to the page
        await self.showing(page)

    async def bar_shown(self, full: float) -> float:
        """Attach the debugger (a hover by selector) and wait for the bar to shrink the viewport."""
        await self.call(
            "input", {"action": "hover", "selector": "#count", "debugger_idle_ms": KEEP_ATTACHED}
        )

        async def shrunk() -> float | None:
            h = await self.height()
            return h if h < full else None

        return await self.until("the debugging bar", shrunk)


def run(desktop: Desktop, window: str, scenario: Callable[[User], Awaitable[None]]) -> None:
    as_user_run(desktop, lambda u: scenario(User(desktop, u.client, window)))


@pytest.fixture(scope="module")
def bare(desktop: Desktop, headed: HeadedChromium) -> Iterator[tuple[str, float]]:
    """The browser's window with no infobar left; its viewport height then."""
    [window] = browser_windows(desktop)
    result: list[float] = []

    async def close_flags_bar(u: User) -> None:
        before = await u.height()

        async def grown() -> float | None:
            h = await u.height()
            return h if h > before else None

        for attempt in (1, 2, 3):  # a key sent while the window is still settling may be lost
            press_infobar_button(desktop, window)  # the --no-sandbox bar's close button
            try:
                result.append(await u.until("the --no-sandbox bar to close", grown, timeout=5))
                return
            except AssertionError:
                if attempt == 3:
                    raise

    run(desktop, window, close_flags_bar)
    yield window, result[0]


def test_pixel_click_whose_own_attach_shows_the_bar_is_refused(
    desktop: Desktop, bare: tuple[str, float], pages_url: str
) -> None:
    """The click itself attaches the debugger, and the bar it brings shrinks the viewport a few
    hundred ms later (measured: 60-150 ms after the click was dispatched, on an idle machine).
    shotbridge waits for the bar before aiming, so the pixel from before is refused instead of
    landing wherever the layout has moved to."""
    window, full = bare
    page = f"{pages_url}/anchored.html?own-attach"

    async def scenario(u: User) -> None:
        await u.show(page)
        await u.no_bar(full)
        old = await u.call("screenshot", {"method": "visible"})
        assert old["viewport"]["height"] == full
        scale = old["width"] / old["viewport"]["width"]
        # 5 px above the bottom edge: below the viewport once the bar has shrunk it.
        with pytest.raises(CommandError) as refused:
            await u.call("interact", {"action": "click", "x": 300 * scale, "y": (full - 5) * scale})
        assert refused.value.code == "stale_screenshot", refused.value
        assert '"started debugging this browser" bar appeared' in str(refused.value)
        assert await u.clicks() == "clicks=0"
        with_bar = await u.height()
        assert with_bar < full

    run(desktop, window, scenario)


def test_pixel_click_from_before_the_bar_is_refused(
    desktop: Desktop, bare: tuple[str, float], pages_url: str
) -> None:
    """A screenshot taken without the bar (captureVisibleTab, no debugger), then the bar appears:
    a pixel of that screenshot is refused and asks for a fresh one; the fresh one maps exactly."""
    window, full = bare
    page = f"{pages_url}/anchored.html"

    async def scenario(u: User) -> None:
        await u.show(page)
        await u.no_bar(full)
        # captureVisibleTab: no debugger, so no bar (auto would use CDP on a page this young).
        old = await u.call("screenshot", {"method": "visible"})
        assert old["method"] == "visible" and old["viewport"]["height"] == full
        scale = old["width"] / old["viewport"]["width"]
        with_bar = await u.bar_shown(full)
        assert full - with_bar >= 30, (full, with_bar)  # the bar: ~56 px at 100 % zoom

        # The bottom bar of anchored.html as the old screenshot shows it: 15 px above the edge.
        x, y = 300 * scale, (full - 15) * scale
        with pytest.raises(CommandError) as refused:
            await u.call("interact", {"action": "click", "x": x, "y": y})
        assert refused.value.code == "stale_screenshot"
        msg = str(refused.value)
        assert f"since screenshot {old['screenshot_id']} was taken" in msg, msg
        assert f"1280×{full:g} CSS px" in msg and f"1280×{with_bar:g} CSS px" in msg, msg
        assert '"started debugging this browser" bar appeared or closed' in msg, msg
        assert "Take a fresh screenshot" in msg, msg
        assert await u.clicks() == "clicks=0"  # nothing was clicked

        fresh = await u.call("screenshot")
        assert fresh["viewport"]["height"] == with_bar
        done = await u.call(
            "interact", {"action": "click", "x": 300 * scale, "y": (with_bar - 15) * scale}
        )
        assert done["hit"]["selector"] == "#bottom", done
        assert await u.clicks() == "clicks=1"

    run(desktop, window, scenario)


def test_cancel_after_shotbridge_detached_is_a_refusal_too(
    desktop: Desktop, bare: tuple[str, float], pages_url: str
) -> None:
    """Chrome keeps the bar 5 s after the last detach and tells the extension nothing about a
    Cancel pressed then; the page sees the bar close early, and that counts as the refusal."""
    window, full = bare
    page = f"{pages_url}/anchored.html?tail"

    async def scenario(u: User) -> None:
        await u.show(page)
        await u.no_bar(full)
        before = await u.clicks()
        # An action that detaches as soon as it is done (idle 0): the bar stays, nothing attached.
        await u.call("input", {"action": "hover", "selector": "#count", "debugger_idle_ms": 0})
        await u.until("the bar", lambda: _shrunk(u, full))
        press_infobar_button(desktop, window)  # Cancel, in the bar's last 5 s

        async def bar_gone() -> bool:
            return await u.height() == full

        await u.until("the bar to close", bar_gone)
        await u.popup_says(POPUP_CANCELLED)  # the popup shows the refusal...
        keys(desktop, window, "ctrl+w")
        await u.showing(page)
        with pytest.raises(CommandError) as refused:  # ...and actions respect it
            await u.call("interact", {"action": "click", "selector": "#bottom"})
        assert CANCELLED in str(refused.value)
        assert await u.clicks() == before
        await u.allow_again(page)

    run(desktop, window, scenario)


def test_cancel_on_the_bar_is_a_refusal_until_allowed_again(
    desktop: Desktop, bare: tuple[str, float], pages_url: str
) -> None:
    window, full = bare
    page = f"{pages_url}/anchored.html?cancel"  # another URL: a load the test can see

    async def scenario(u: User) -> None:
        await u.show(page)
        web_tab = (await u.showing(page))["id"]
        before = await u.clicks()
        await u.bar_shown(full)  # the bar, with the debugger attached

        # The user presses the bar's real Cancel button (keyboard: F6 to the bar, Return).
        press_infobar_button(desktop, window)

        async def bar_gone() -> bool:
            return await u.height() == full

        await u.until("the bar to close", bar_gone)

        # Interactions that need the debugger are refused, saying why and how to lift it...
        with pytest.raises(CommandError) as refused:
            await u.call("interact", {"action": "click", "selector": "#bottom"})
        assert refused.value.code == "debugger_unavailable"
        assert CANCELLED in str(refused.value) and "Allow debugging again" in str(refused.value)
        # ...without attaching again: no click happened and no bar came back.
        assert await u.clicks() == before
        assert await u.height() == full
        # A plain screenshot still works: captureVisibleTab needs no debugger.
        shot = await u.call("screenshot", {"method": "visible"})
        assert shot["method"] == "visible" and shot["url"] == page
        assert shot["viewport"]["height"] == full

        # The model is told the same through MCP, and its screenshots still work.
        [clicked, captured] = await asyncio.to_thread(
            mcp_call,
            desktop.env(),
            [("interact", {"action": "click", "selector": "#bottom"}), ("capture_screenshot", {})],
            "--browser",
            "connected",
        )
        assert clicked.is_error, text_of(clicked)
        assert CANCELLED in text_of(clicked) and "Allow debugging again" in text_of(clicked)
        assert not captured.is_error, text_of(captured)
        assert images_of(captured)
        assert await u.clicks() == before
        assert await u.height() == full

        # The user lifts it: the popup page, Tab to "Allow debugging again", Return.
        await u.allow_again(page)
        assert (await u.showing(page))["id"] == web_tab
        done = await u.call("interact", {"action": "click", "selector": "#bottom"})
        assert done["hit"]["selector"] == "#bottom"
        assert await u.clicks() != before
        # It attached again: Chrome shows its bar again.
        await u.until("the bar again", lambda: _shrunk(u, full))

    run(desktop, window, scenario)


async def _shrunk(u: User, full: float) -> bool:
    return await u.height() < full
