"""Secrets moved by script, in real Chromium with the real extension and host: a card-number field
moved by setInterval jumps, by a container scrolled from requestAnimationFrame, by rAF `left` or
`transform`, by a style sheet rule changed from rAF (no DOM mutation), or by a script-toggled CSS
transition is covered in every image served.

The fields are pure green (#00ff00) on a dark page: a leak is any green pixel in the host's output.
"""

from __future__ import annotations

import asyncio
import io
from typing import Any

import pytest
from PIL import Image
from shotbridge.client.browser import HeadlessBrowser
from shotbridge.client.bus_client import BusClient
from shotbridge.wire.errors import CommandError

from .test_security_capture import _captures, green_pixels

pytestmark = pytest.mark.browser

KINDS = ("interval", "scroll", "left", "transform", "rule", "transition")


@pytest.mark.parametrize("kind", KINDS)
def test_a_secret_moved_by_script_never_leaks(
    browser: HeadlessBrowser, pages_url: str, kind: str
) -> None:
    url = f"{pages_url}/security/motion/{kind}.html"
    outcomes, leaks = asyncio.run(_captures(browser, url, 90, {"method": "cdp"}))
    print(f"{kind} (cdp) outcomes:", dict(outcomes))
    assert leaks == [], f"{kind}: {len(leaks)} of 90 images showed the field: {leaks} ({outcomes})"
    assert outcomes["image via cdp"] >= 80, outcomes


@pytest.mark.parametrize("kind", KINDS)
def test_the_visible_tab_path_never_leaks_a_secret_moved_by_script(
    browser: HeadlessBrowser, pages_url: str, kind: str
) -> None:
    url = f"{pages_url}/security/motion/{kind}.html"
    # "visible" reads the last frame shown, which may be from any moment of the motion: it
    # refuses; "auto" hands the capture over to CDP.
    for method, n in (("visible", 6), ("auto", 10)):
        outcomes, leaks = asyncio.run(_captures(browser, url, n, {"method": method}))
        print(f"{kind} ({method}) outcomes:", dict(outcomes))
        assert leaks == [], f"{kind} via {method}: {len(leaks)} of {n} leaked: {leaks} ({outcomes})"
        if method == "auto":
            assert outcomes["image via cdp"] >= 9, outcomes


def test_a_capture_that_fails_half_way_leaves_the_page_moving(
    browser: HeadlessBrowser, pages_url: str
) -> None:
    # The page's title says whether its field still moves. A capture that fails after its first
    # probe (a selector that matches nothing) must not leave the watch or the pause behind: new
    # transitions would then be paused as they start and the field would stand still.
    async def run() -> list[str]:
        titles = []
        async with await BusClient.connect(runtime_dir=browser.runtime_dir) as c:
            url = f"{pages_url}/security/motion/transition.html"
            await c.request("interact", {"action": "navigate", "url": url}, timeout=30)
            for method in ("cdp", "visible"):
                with pytest.raises(CommandError):
                    await c.request(
                        "screenshot", {"method": method, "selector": "#missing"}, timeout=20
                    )
                await asyncio.sleep(0.6)
                shot = await c.request("screenshot", {"method": "cdp"}, timeout=20)
                titles.append(shot["title"])
        return titles

    assert asyncio.run(run()) == ["moving", "moving"]


def test_a_still_secret_is_masked_alone(browser: HeadlessBrowser, pages_url: str) -> None:
    # Following motion must not grow the mask of a field that stands still.
    async def run() -> dict[str, Any]:
        async with await BusClient.connect(runtime_dir=browser.runtime_dir) as c:
            url = f"{pages_url}/security/motion/still.html"
            return await c.request("screenshot", {"url": url, "method": "cdp"}, timeout=30)

    shot = asyncio.run(run())
    assert shot["masked"] == 1 and green_pixels(shot["jpeg"]) == 0
    k = shot["css_to_output_scale"]
    img = Image.open(io.BytesIO(shot["jpeg"])).convert("L")
    black = img.point(lambda v: 255 if v < 12 else 0).histogram()[255]
    # The field is 240×60 CSS px; the mask snaps outwards to the JPEG's 8 px blocks.
    assert black <= (240 * k + 16) * (60 * k + 16), black
