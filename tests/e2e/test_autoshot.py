"""Automatic screenshots in real headless Chromium: settle, cooldown, merged triggers.

tests/pages/replay/late.html adds a tall orange block 700 ms after its load. The automatic
screenshot of that load must show it (the host waits for the page to be loaded and quiet for
about a second). Then, with a cooldown of a few seconds, two clicks in quick succession make one
screenshot whose record lists both triggers.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from shotbridge.client.browser import HeadlessBrowser
from shotbridge.client.bus_client import BusClient

from tests.e2e.conftest import start_browser

pytestmark = pytest.mark.browser

ORANGE = (0xE6, 0x7E, 0x22)


@pytest.fixture(scope="module")
def chromium() -> Iterator[HeadlessBrowser]:
    b = start_browser(window_size=(1280, 800))
    yield b
    b.close()


def _orange_share(jpeg: bytes) -> float:
    img = Image.open(io.BytesIO(jpeg)).convert("RGB").resize((128, 80))
    pixels = (img.getpixel((x, y)) for y in range(img.height) for x in range(img.width))
    near = [p for p in pixels if all(abs(c - o) < 30 for c, o in zip(p, ORANGE, strict=True))]
    return len(near) / (128 * 80)


async def _shots(c: BusClient, count: int) -> list[dict[str, Any]]:
    """The timeline's screenshot entries once there are ``count`` (polled; 20 s at most)."""
    for _ in range(200):
        timeline = await c.request("timeline", {"kinds": ["screenshot"]}, timeout=10)
        if len(timeline["entries"]) >= count:
            return timeline["entries"]
        await asyncio.sleep(0.1)
    raise AssertionError(f"fewer than {count} automatic screenshots: {timeline['entries']}")


async def _scenario(runtime_dir: Path, url: str) -> dict[str, Any]:
    async with await BusClient.connect(runtime_dir=runtime_dir) as c:
        await c.request(
            "record_config",
            {
                "auto_screenshot": {"on_navigation": True, "on_action": True, "on_error": False},
                "min_interval_s": 4,
                "observe": False,
            },
            timeout=10,
        )
        await c.request("interact", {"action": "navigate", "url": url}, timeout=30)
        (load,) = await _shots(c, 1)
        image = await c.request("screenshot_get", {"id": load["screenshot_id"]}, timeout=10)
        # Two clicks well within the cooldown (the load's screenshot just started it).
        for _ in range(2):
            await c.request("interact", {"action": "click", "selector": "h1"}, timeout=30)
        entries = await _shots(c, 2)
        actions = await c.request("timeline", {"kinds": ["action"]}, timeout=10)
    return {
        "load": load,
        "jpeg": image["jpeg"],
        "entries": entries,
        "actions": [a["id"] for a in actions["entries"]],
    }


def test_auto_screenshot_waits_for_late_content_and_merges_triggers(
    chromium: HeadlessBrowser, pages_url: str
) -> None:
    got = asyncio.run(_scenario(chromium.runtime_dir, f"{pages_url}/replay/late.html"))
    load = got["load"]
    assert load["trigger"] == "navigation" and load["settled"] is True, load
    assert [t["trigger"] for t in load["triggers"]] == ["navigation"]
    # The block that appeared 700 ms after the load fills a good part of the image.
    assert _orange_share(got["jpeg"]) > 0.2, _orange_share(got["jpeg"])

    assert len(got["entries"]) == 2, got["entries"]
    merged = got["entries"][1]
    assert [t["trigger"] for t in merged["triggers"]] == ["action", "action"], merged
    assert [t["action_id"] for t in merged["triggers"]] == got["actions"]
    assert merged["action_id"] == got["actions"][-1]  # the latest leads the record
