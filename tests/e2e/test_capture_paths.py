"""Which path "auto" takes in headless Chromium, with the real extension and host.

Headless has no user window, so the visible-tab path spares no debugging bar there; on a page with
secrets it would wait two frames before the pixels (the last frame shown may predate the probe),
where CDP renders a new frame at once. So "auto" takes such a page by CDP, and keeps the
visible-tab path (Chrome's cheapest read) for a page without secrets. Every image is masked alike.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import pytest
from shotbridge.client.browser import HeadlessBrowser
from shotbridge.client.bus_client import BusClient

from .test_security_capture import green_pixels

pytestmark = pytest.mark.browser

# Longer than the visible path's quota interval (550 ms) and its minimum page age (1 s): each
# capture could take the visible path if "auto" chose it.
PAUSE_S = 1.2


async def _methods(browser: HeadlessBrowser, url: str, n: int) -> tuple[Counter[str], list[int]]:
    """Paths of n spaced "auto" captures of `url`, and the secret pixels each image showed."""
    methods: Counter[str] = Counter()
    green: list[int] = []
    async with await BusClient.connect(runtime_dir=browser.runtime_dir) as c:
        await c.request("interact", {"action": "navigate", "url": url}, timeout=30)
        for _ in range(n):
            await asyncio.sleep(PAUSE_S)
            shot = await c.request("screenshot", {"timeout_ms": 10_000}, timeout=20)
            methods[shot["method"]] += 1
            green.append(green_pixels(shot["jpeg"]))
    return methods, green


def test_headless_auto_takes_a_page_with_secrets_by_cdp(
    browser: HeadlessBrowser, pages_url: str
) -> None:
    # Green password and PIN fields on a dark page: a leak is any green pixel.
    methods, green = asyncio.run(_methods(browser, f"{pages_url}/security/toggle.html", 4))
    assert methods == Counter({"cdp": 4}), methods
    assert green == [0, 0, 0, 0]


def test_headless_auto_keeps_the_visible_path_for_a_page_without_secrets(
    browser: HeadlessBrowser, pages_url: str
) -> None:
    methods, _ = asyncio.run(_methods(browser, f"{pages_url}/anchored.html", 3))
    assert methods == Counter({"visible": 3}), methods


def test_a_page_that_gains_a_secret_is_taken_by_cdp_and_masked(
    browser: HeadlessBrowser, pages_url: str
) -> None:
    # The path is chosen per capture: a secret that appears after a visible-path capture of the
    # same URL is found by that capture's own probe, which hands the capture over to CDP.
    async def run() -> tuple[list[str], list[int]]:
        methods: list[str] = []
        green: list[int] = []
        url = f"{pages_url}/security/late-secret.html"
        async with await BusClient.connect(runtime_dir=browser.runtime_dir) as c:
            await c.request("interact", {"action": "navigate", "url": url}, timeout=30)
            for step in range(3):
                if step == 1:  # the page adds a green password field
                    await c.request("interact", {"action": "click", "selector": "#add"}, timeout=40)
                await asyncio.sleep(PAUSE_S)
                shot = await c.request("screenshot", {"timeout_ms": 10_000}, timeout=20)
                methods.append(shot["method"])
                green.append(green_pixels(shot["jpeg"]))
        return methods, green

    methods, green = asyncio.run(run())
    assert methods == ["visible", "cdp", "cdp"], methods
    assert green == [0, 0, 0]


def _early_and_leaked(shot: dict[str, Any], annotate: bool) -> tuple[float, bool]:
    """Whether the host used the pixels sent ahead, and whether the secret's green shows. A
    badge's anti-aliased digits can pass for the green in a pixel or two; the field itself,
    unmasked, is hundreds."""
    leaked = green_pixels(shot["jpeg"]) > (3 if annotate else 0)
    return shot["timings"]["early_pixels_used"], leaked


@pytest.mark.parametrize("annotate", [False, True])
def test_the_visible_path_sends_its_pixels_ahead_too(
    browser: HeadlessBrowser, pages_url: str, annotate: bool
) -> None:
    # captureVisibleTab's pixels reach the host before the probe after them, as CDP's do: a page
    # without secrets ("auto") and one whose still secrets the visible path takes when asked to.
    async def run() -> list[tuple[str, tuple[float, bool]]]:
        out = []
        async with await BusClient.connect(runtime_dir=browser.runtime_dir) as c:
            for page, method in (("anchored.html", "auto"), ("security/toggle.html", "visible")):
                url = f"{pages_url}/{page}"
                await c.request("interact", {"action": "navigate", "url": url}, timeout=30)
                for _ in range(2):
                    await asyncio.sleep(PAUSE_S)
                    args = {"method": method, "annotate": annotate, "timeout_ms": 10_000}
                    shot = await c.request("screenshot", args, timeout=20)
                    out.append((shot["method"], _early_and_leaked(shot, annotate)))
        return out

    assert asyncio.run(run()) == [("visible", (1.0, False))] * 4


@pytest.mark.parametrize("annotate", [False, True])
def test_pixels_sent_ahead_are_used_when_the_page_held_still(
    browser: HeadlessBrowser, pages_url: str, annotate: bool
) -> None:
    # The extension hands the pixels over before its probe after them (early_pixels); the host
    # shrinks them meanwhile (labelled: decoded at once, labelled when the labels come) and uses
    # that result when the reply adds no mask. Still secrets: used.
    async def run() -> list[tuple[float, bool, bool]]:
        out = []
        async with await BusClient.connect(runtime_dir=browser.runtime_dir) as c:
            url = f"{pages_url}/security/toggle.html"
            await c.request("interact", {"action": "navigate", "url": url}, timeout=30)
            for _ in range(4):
                args = {"method": "cdp", "annotate": annotate}
                shot = await c.request("screenshot", args, timeout=20)
                early, leaked = _early_and_leaked(shot, annotate)
                out.append((early, leaked, bool(shot["annotations"])))
        return out

    assert asyncio.run(run()) == [(1.0, False, annotate)] * 4
