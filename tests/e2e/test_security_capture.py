"""Hostile pages vs. the capture path, in real Chromium: one image shows one document, masks follow
moving fields, and every secret the shared rule list names is masked.

Secrets on these pages are pure green (#00ff00) on a dark page, so a leak is any green pixel in
the host's output image: the one that would go to the model.
"""

from __future__ import annotations

import asyncio
import io
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from PIL import Image
from shotbridge.client.browser import HeadlessBrowser
from shotbridge.client.bus_client import BusClient
from shotbridge.wire.errors import CommandError

from .conftest import start_browser

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


@pytest.fixture(scope="module")
def browser_1280() -> Iterator[HeadlessBrowser]:
    """A viewport no wider than the output image: the capture needs no rescale, so Chrome copies
    the compositor's frame as it stands (no forced re-render)."""
    b = start_browser(window_size=(1280, 800))
    yield b
    b.close()


def test_a_secret_in_motion_is_masked_along_its_whole_path(
    browser_1280: HeadlessBrowser, pages_url: str
) -> None:
    # Chrome paints CSS motion on the compositor's clock: without a rescale, a capture shows a
    # moving field a frame away from where the paused page reports it (±39 px at 2 333 px/s),
    # so masks that followed the reported position leaked in most captures. Masks that cover
    # the path never miss, even for a 14 px field moving ~80 px a frame, or one inside a
    # moving panel.
    for page in ("animated.html", "animated-thin.html"):
        url = f"{pages_url}/security/{page}"
        outcomes, leaks = asyncio.run(_captures(browser_1280, url, 30, {"method": "cdp"}))
        assert leaks == [], f"{page}: {len(leaks)} of 30 images leaked: {leaks} ({outcomes})"
        assert outcomes["image via cdp"] >= 27, outcomes


def test_the_mask_of_a_secret_in_motion_covers_its_path(
    browser: HeadlessBrowser, pages_url: str
) -> None:
    # The field slides from x=20 to x=1420 (+300 wide) at y 200..280 CSS px: its mask is black
    # along the whole path, not just where the page reported it when paused.
    async def run() -> dict[str, Any]:
        async with await BusClient.connect(runtime_dir=browser.runtime_dir) as c:
            await c.request(
                "interact",
                {"action": "navigate", "url": f"{pages_url}/security/animated.html"},
                timeout=30,
            )
            return await c.request("screenshot", {"method": "cdp"}, timeout=30)

    shot = asyncio.run(run())
    k = shot["css_to_output_scale"]
    img = Image.open(io.BytesIO(shot["jpeg"])).convert("L")
    row = [img.getpixel((round(x * k), round(240 * k))) for x in range(24, 1716, 4)]
    unmasked = [x for x, v in zip(range(24, 1716, 4), row, strict=True) if v > 20]
    assert unmasked == [], f"path not masked at CSS x={unmasked[:10]}… ({len(unmasked)} points)"


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
