"""Hostile pages vs. the capture path, in real Chromium: one image shows one document, masks follow
moving fields, and every secret the shared rule list names is masked (issue 9, defects 2, 8, 9).

Secrets on these pages are pure green (#00ff00) on a dark page, so a leak is any green pixel in
the host's output image: the one that would go to the model.
"""

from __future__ import annotations

import asyncio
import io
from collections import Counter
from typing import Any

import pytest
from PIL import Image
from shotbridge.browser import HeadlessBrowser
from shotbridge.client import BusClient
from shotbridge.errors import CommandError

pytestmark = pytest.mark.browser


def green_pixels(jpeg: bytes) -> int:
    """Pixels of the secret's colour (JPEG-tolerant) in an output image."""
    img = Image.open(io.BytesIO(jpeg)).convert("RGB")
    r, g, b = img.split()
    mask = (
        Image.merge(
            "RGB",
            (
                r.point(lambda v: 255 if v < 110 else 0),
                g.point(lambda v: 255 if v > 160 else 0),
                b.point(lambda v: 255 if v < 110 else 0),
            ),
        )
        .convert("L")
        .point(lambda v: 255 if v == 255 else 0)
    )
    return mask.histogram()[255]


async def _captures(
    browser: HeadlessBrowser, url: str, n: int, args: dict[str, Any]
) -> tuple[Counter[str], list[int]]:
    """n screenshots of whatever the tab shows: outcome counts and the leaked-pixel counts."""
    outcomes: Counter[str] = Counter()
    leaks: list[int] = []
    async with await BusClient.connect(runtime_dir=browser.runtime_dir) as c:
        await c.request("interact", {"action": "navigate", "url": url}, timeout=30)
        for _ in range(n):
            try:
                shot = await c.request("screenshot", {"timeout_ms": 10_000, **args}, timeout=20)
            except CommandError as exc:
                # Refusing is the safe outcome (the reason is printed for the record).
                outcomes[f"refused: {exc.code}"] += 1
                print("refused:", exc)
                continue
            outcomes[f"image via {shot['method']}"] += 1
            green = green_pixels(shot["jpeg"])
            if green:
                leaks.append(green)
    return outcomes, leaks


def test_pages_that_redirect_to_each_other_never_leak(
    browser: HeadlessBrowser, pages_url: str
) -> None:
    outcomes, leaks = asyncio.run(
        _captures(browser, f"{pages_url}/security/redirect-a.html", 150, {})
    )
    print("redirect outcomes:", dict(outcomes))
    assert leaks == [], f"{len(leaks)} of 150 images showed a secret: {leaks} ({outcomes})"
    # Refusing is allowed (the page really was between documents), but most captures succeed.
    assert sum(v for k, v in outcomes.items() if k.startswith("image")) >= 100, outcomes


def test_a_password_field_in_css_motion_is_always_masked(
    browser: HeadlessBrowser, pages_url: str
) -> None:
    url = f"{pages_url}/security/animated.html"
    outcomes, leaks = asyncio.run(_captures(browser, url, 100, {"method": "cdp"}))
    print("animated (cdp) outcomes:", dict(outcomes))
    assert leaks == [], f"{len(leaks)} of 100 images showed the moving field: {leaks}"
    assert outcomes["image via cdp"] >= 90, outcomes  # a loaded machine may time one out
    # The visible-tab path reads the last frame shown, which may predate any pause: it refuses
    # a page whose secrets move rather than risk one (auto uses CDP instead).
    outcomes, leaks = asyncio.run(_captures(browser, url, 5, {"method": "visible"}))
    assert leaks == [] and outcomes == {"refused: capture_failed": 5}, outcomes
    outcomes, leaks = asyncio.run(_captures(browser, url, 10, {}))
    assert leaks == [] and outcomes["image via cdp"] >= 9, outcomes


def test_every_rule_of_the_shared_list_is_masked(browser: HeadlessBrowser, pages_url: str) -> None:
    async def run() -> dict[str, Any]:
        async with await BusClient.connect(runtime_dir=browser.runtime_dir) as c:
            return await c.request(
                "screenshot", {"url": f"{pages_url}/security/rules.html"}, timeout=30
            )

    shot = asyncio.run(run())
    # cc-exp, <textarea autocomplete=current-password>, -webkit-text-security: all masked.
    assert shot["masked"] == 3, shot["masked"]
    assert green_pixels(shot["jpeg"]) == 0
