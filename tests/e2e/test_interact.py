"""Acting on what the model saw, in real headless Chromium at devicePixelRatio 1 and 2.

tests/pages/interact.html has a counter button, a text field, a search form (Enter submits), a
link away and a 6 400 px tall body with a button at the bottom.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from shotbridge.client.browser import HeadlessBrowser
from shotbridge.client.bus_client import BusClient
from shotbridge.install import user_config as config
from shotbridge.wire.errors import CommandError

from tests.e2e.conftest import run_on_bus, start_browser

pytestmark = pytest.mark.browser

Scenario = Callable[["Session"], Awaitable[None]]


@pytest.fixture(scope="module", params=[1, 2], ids=["dpr1", "dpr2"])
def ibrowser(request: pytest.FixtureRequest) -> Iterator[HeadlessBrowser]:
    b = start_browser(window_size=(1280, 800), device_scale_factor=request.param)
    yield b
    b.close()


class Session:
    def __init__(self, client: BusClient, base: str) -> None:
        self.client = client
        self.base = base

    async def shot(self, **args: Any) -> dict[str, Any]:
        return await self.client.request("screenshot", args, timeout=40)

    async def act(self, **args: Any) -> dict[str, Any]:
        return await self.client.request("interact", args, timeout=40)

    async def open(self, **args: Any) -> dict[str, Any]:
        """A fresh interact.html (state reset), with an annotated screenshot of it."""
        return await self.shot(url=f"{self.base}/interact.html", annotate=True, **args)

    async def text(self, selector: str) -> str:
        found = await self.client.request(
            "discover",
            {"target": "custom", "selector": selector, "include_offscreen": True},
            timeout=10,
        )
        return found["elements"][0]["text"]


def run(browser: HeadlessBrowser, base: str, scenario: Scenario) -> None:
    run_on_bus(browser, lambda client: Session(client, base), scenario)


def label_of(shot: dict[str, Any], selector: str) -> dict[str, Any]:
    return next(a for a in shot["annotations"] if a["selector"] == selector)


def decode(jpeg: bytes) -> Image.Image:
    img = Image.open(io.BytesIO(jpeg))
    img.load()
    assert img.format == "JPEG"
    return img


def test_click_by_image_coordinates_and_by_label(ibrowser: HeadlessBrowser, pages_url: str) -> None:
    async def scenario(s: Session) -> None:
        # 800 px wide output: image px are not CSS px (scale 0.625), at either DPR.
        shot = await s.open(max_width=800)
        done = await s.act(action="hover", selector="#count-btn")
        assert done["hit"]["selector"] == "#count-btn"
        assert await s.text("#hovered") == "hovered=yes"
        scale = shot["css_to_output_scale"]
        assert scale == pytest.approx(800 / 1280, abs=0.01)
        btn = label_of(shot, "#count-btn")
        b = btn["bounds"]
        x = (b["x"] + b["width"] / 2 - shot["origin"]["x"]) * scale
        y = (b["y"] + b["height"] / 2 - shot["origin"]["y"]) * scale
        done = await s.act(action="click", x=x, y=y)
        assert done["hit"]["selector"] == "#count-btn"
        assert done["hit"]["name"] == "Increment"
        assert done["screenshot_id"] == shot["screenshot_id"]
        assert done["css_point"]["x"] == pytest.approx(140, abs=1)
        assert await s.text("#count") == "clicks=1 dbl=0 ctx=0 trusted=true"

        done = await s.act(action="click", label=btn["label"])
        assert done["hit"]["selector"] == "#count-btn" and done["label"] == btn["label"]
        assert (await s.text("#count")).startswith("clicks=2 ")

        await s.act(action="click", label=btn["label"], click_count=2)
        await s.act(action="click", selector="#count-btn", button="right")
        assert await s.text("#count") == "clicks=4 dbl=1 ctx=1 trusted=true"

    run(ibrowser, pages_url, scenario)


def test_a_still_page_is_read_once_and_every_action_shows(
    ibrowser: HeadlessBrowser, pages_url: str
) -> None:
    """A look at a page that has not changed since the last reuses that one's geometry
    (extension/page/unchanged.js); an action changes the page, and the next look says so, read
    again while the page was idle when it comes a turn later."""

    async def look(s: Session) -> dict[str, Any]:
        args = {"target": "interactive", "text_rects": True, "include_offscreen": True}
        return await s.client.request("discover", args, timeout=10)

    def count_text(found: dict[str, Any]) -> str:
        return next(e["text"] for e in found["elements"] if e["selector"] == "#count-btn")

    async def scenario(s: Session) -> None:
        await s.open()
        first = await look(s)
        again = await look(s)
        assert again["reused"] is True
        assert again["elements"] == first["elements"]
        await s.act(action="type", selector="#q", text="hello")
        typed = await look(s)  # read afresh, or again while the action waited for a paint
        query = next(e for e in typed["elements"] if e["selector"] == "#q")
        assert query["state"].get("focused") is True  # no mutation says so: read afresh
        assert not next(e for e in first["elements"] if e["selector"] == "#q")["state"].get(
            "focused"
        )
        await s.act(action="scroll", delta_y=300)
        await asyncio.sleep(1.5)  # the assistant's turn: the page reads itself again meanwhile
        scrolled = await look(s)
        assert scrolled["reused"] is True
        assert scrolled["scroll"]["y"] == pytest.approx(300, abs=1)
        button = next(e for e in scrolled["elements"] if e["selector"] == "#count-btn")
        button_before = next(e for e in first["elements"] if e["selector"] == "#count-btn")
        assert button["bounds"]["y"] == pytest.approx(button_before["bounds"]["y"] - 300, abs=1)
        assert count_text(scrolled) == "Increment"

    run(ibrowser, pages_url, scenario)


def test_the_look_right_after_an_action_is_the_read_made_while_it_waited(
    ibrowser: HeadlessBrowser, pages_url: str
) -> None:
    """An action waits for a navigation to start; the page reads what the last look asked
    meanwhile (page/discover.js readAhead), so the look right after it reuses that read, and the
    read shows what the action changed."""

    async def look(s: Session) -> dict[str, Any]:
        args = {"target": "interactive", "text_rects": True, "include_offscreen": True}
        return await s.client.request("discover", args, timeout=10)

    def bottom(found: dict[str, Any]) -> dict[str, Any]:
        return next(e for e in found["elements"] if e["selector"] == "#bottom-btn")

    async def scenario(s: Session) -> None:
        await s.open()
        assert bottom(await look(s))["text"] == "Bottom"
        await s.act(action="click", selector="#bottom-btn")  # renames it, scrolls to it
        after = await look(s)
        assert after["reused"] is True
        assert bottom(after)["text"] == "Bottom clicked"
        assert after["scroll"]["y"] > 5000
        await s.act(action="scroll", to="top")
        assert (await look(s))["scroll"]["y"] == 0

    run(ibrowser, pages_url, scenario)


def test_type_fills_the_field_and_enter_submits(ibrowser: HeadlessBrowser, pages_url: str) -> None:
    async def scenario(s: Session) -> None:
        shot = await s.open()
        done = await s.act(action="type", label=label_of(shot, "#q")["label"], text="hello")
        assert done["hit"]["selector"] == "#q"
        assert done["focused"]["value"] == "hello"
        done = await s.act(action="type", text="world", clear=True)  # into the focused field
        assert done["focused"]["value"] == "world"
        done = await s.act(action="keypress", key="Enter")
        assert await s.text("#result") == "submitted q=world"
        await s.act(action="keypress", key="Control+A")
        assert (await s.text("#lastkey")).startswith("lastkey=ctrl+a code=KeyA")

        with pytest.raises(CommandError) as err:  # a button takes no text
            await s.act(action="type", selector="#count-btn", text="x")
        assert err.value.code == "bad_request" and "does not take text" in err.value.message

    run(ibrowser, pages_url, scenario)


def test_scroll_changes_scroll_y(ibrowser: HeadlessBrowser, pages_url: str) -> None:
    async def scenario(s: Session) -> None:
        await s.open()
        done = await s.act(action="scroll", delta_y=1200)
        assert done["scroll_before"]["y"] == 0 and done["scroll"]["y"] > 500
        done = await s.act(action="scroll", to="bottom")
        assert done["scroll"]["y"] >= 6400 - done["viewport"]["height"] - 1
        done = await s.act(action="scroll", to="top")
        assert done["scroll"]["y"] == 0
        done = await s.act(action="scroll", selector="#bottom-btn")
        assert done["scroll"]["y"] > 5000

    run(ibrowser, pages_url, scenario)


def test_full_page_tiles_cover_the_page(ibrowser: HeadlessBrowser, pages_url: str) -> None:
    async def scenario(s: Session) -> None:
        shot = await s.shot(url=f"{pages_url}/interact.html", full_page=True)
        tiles = shot["tiles"]
        assert len(tiles) >= 2
        assert tiles[0]["jpeg"] == shot["jpeg"]
        y = 0.0
        for tile in tiles:
            img = decode(tile["jpeg"])
            assert (img.width, img.height) == (tile["width"], tile["height"])
            assert img.width <= 1280 and img.height <= 1568
            assert tile["css_y"] == pytest.approx(y)
            y += tile["css_height"]
        assert sum(t["css_height"] for t in tiles) >= 6000
        assert len({t["screenshot_id"] for t in tiles}) == len(tiles)
        assert not shot["truncated"] and shot["notes"] == []
        # Every announced id is readable from the session's buffer, with its own pixels.
        for tile in tiles:
            sid = tile["screenshot_id"]
            got = await s.client.request("screenshot_get", {"id": sid})
            assert got["jpeg"] == tile["jpeg"]
            thumb = await s.client.request("screenshot_get", {"id": sid, "thumbnail": True})
            assert decode(thumb["jpeg"]).width == min(320, tile["width"])

    run(ibrowser, pages_url, scenario)


def test_element_capture_is_the_element_times_the_scale(
    ibrowser: HeadlessBrowser, pages_url: str
) -> None:
    async def scenario(s: Session) -> None:
        shot = await s.shot(url=f"{pages_url}/interact.html", selector="#count-btn")
        scale = shot["css_to_output_scale"]
        assert scale == pytest.approx(shot["device_pixel_ratio"])  # small: never shrunk
        img = decode(shot["jpeg"])
        assert abs(img.width - 200 * scale) <= 1 and abs(img.height - 60 * scale) <= 1

    run(ibrowser, pages_url, scenario)


def test_scroll_then_capture_then_click_a_label(ibrowser: HeadlessBrowser, pages_url: str) -> None:
    async def scenario(s: Session) -> None:
        shot = await s.open(scroll={"selector": "#bottom-btn"})
        assert shot["scroll"]["y"] > 5000
        bottom = label_of(shot, "#bottom-btn")
        assert bottom["in_viewport"]
        done = await s.act(action="click", label=bottom["label"])
        assert done["hit"]["selector"] == "#bottom-btn"
        assert await s.text("#bottom-btn") == "Bottom clicked"
        # Scrolled away since: the label's point follows the content (the page scrolls back).
        await s.act(action="scroll", to="top")
        done = await s.act(action="click", label=bottom["label"])
        assert done["hit"]["selector"] == "#bottom-btn"
        assert done["scroll_corrected"]["dy"] < -5000

    run(ibrowser, pages_url, scenario)


def test_coordinate_action_after_navigation_is_refused(
    ibrowser: HeadlessBrowser, pages_url: str
) -> None:
    async def scenario(s: Session) -> None:
        shot = await s.open()
        done = await s.act(action="click", selector="#away")
        assert done["navigated"] and done["url"].endswith("/buttons.html")
        for args in ({"x": 100, "y": 60}, {"label": label_of(shot, "#count-btn")["label"]}):
            with pytest.raises(CommandError) as err:
                await s.act(action="click", **args)
            assert err.value.code == "stale_screenshot"
            assert "take a fresh screenshot" in err.value.message
        # A fresh screenshot of the new page works, and include_screenshot returns an image.
        fresh = await s.shot(annotate=True)
        first = label_of(fresh, "#b1")
        done = await s.act(action="click", label=first["label"], include_screenshot=True)
        assert done["hit"]["selector"] == "#b1"
        after = done["screenshot"]
        assert decode(after["jpeg"]).width == after["width"]
        assert after["screenshot_id"] > fresh["screenshot_id"]
        # Back to interact.html: by URL the first screenshot is valid again.
        done = await s.act(action="back")
        assert done["url"].endswith("/interact.html")

    run(ibrowser, pages_url, scenario)


def test_raw_cdp_is_opt_in(pages_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The client's allow_cdp grants nothing; the user's host config does."""
    monkeypatch.setenv("SHOTBRIDGE_CONFIG_DIR", str(tmp_path))  # the browser's host inherits it
    browser = start_browser(window_size=(1280, 800))

    async def scenario(s: Session) -> None:
        await s.open()
        for claim in (False, True):
            with pytest.raises(CommandError) as err:
                await s.act(
                    action="cdp",
                    method="Runtime.evaluate",
                    params={"expression": "1"},
                    allow_cdp=claim,
                )
            assert "`shotctl config allow-cdp on`" in err.value.message
        config.save(config.HostConfig(allow_cdp=True))  # what `shotctl config allow-cdp on` does
        out = await s.act(
            action="cdp",
            method="Runtime.evaluate",
            params={"expression": "document.title", "returnByValue": True},
        )
        assert out["result"]["result"]["value"] == "Interact fixture"
        out = await s.act(action="cdp", method="Page.captureScreenshot")
        img = decode(out["image"]["jpeg"])
        assert img.width <= 1280 and out["image"]["screenshot_id"] is not None

    try:
        run(browser, pages_url, scenario)
    finally:
        browser.close()
