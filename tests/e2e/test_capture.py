"""Browser link end to end: extension → native messaging → host → bus → client, in real Chromium."""

from __future__ import annotations

import asyncio
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from shotbridge.client.browser import HeadlessBrowser
from shotbridge.client.bus_client import BusClient, wait_for_host
from shotbridge.wire.errors import BusError, CommandError, NotConnectedError

from tests.e2e.conftest import start_browser

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
# CSS boxes of the buttons in tests/pages/buttons.html, in reading order.
BUTTONS = {
    "b1": (40, 40, 160, 50),
    "b2": (400, 40, 160, 50),
    "b3": (40, 300, 200, 60),
    "b4": (1500, 900, 200, 60),
}


async def _screenshot(browser: HeadlessBrowser, args: dict[str, Any]) -> dict[str, Any]:
    async with await BusClient.connect(runtime_dir=browser.runtime_dir) as client:
        return await client.request("screenshot", args, timeout=30)


def _decode(jpeg: bytes) -> Image.Image:
    img = Image.open(io.BytesIO(jpeg))
    img.load()
    assert img.format == "JPEG"
    return img


def test_annotated_capture_matches_buttons(browser: HeadlessBrowser, pages_url: str) -> None:
    result = asyncio.run(
        _screenshot(browser, {"url": f"{pages_url}/buttons.html", "annotate": True})
    )
    img = _decode(result["jpeg"])
    # Headless Chromium keeps part of the 1920×1080 window for its own UI: use the real viewport.
    vw, vh = result["viewport"]["width"], result["viewport"]["height"]
    assert vw == 1920
    assert img.size == (1280, round(vh * 1280 / 1920)) == (result["width"], result["height"])
    assert _decode(result["thumbnail"]).width == 320

    ann = result["annotations"]
    assert [a["selector"] for a in ann if a["tag"] == "button"] == ["#b1", "#b2", "#b3", "#b4"]
    assert [a["label"] for a in ann] == list(range(1, len(ann) + 1))
    for a in ann:
        if a["tag"] != "button":
            continue
        x, y, w, h = BUTTONS[a["selector"][1:]]
        b = a["bounds"]
        assert abs(b["x"] - x) <= 1 and abs(b["y"] - y) <= 1
        assert abs(b["width"] - w) <= 1 and abs(b["height"] - h) <= 1
    # The password input is labelled too (it is interactive) and its pixels are masked.
    assert result["masked"] == 1
    scale = result["css_to_output_scale"]
    assert abs(scale - 1280 / 1920) < 0.01
    # Centre of the password field (600,400 300×40 CSS) must be black in the output.
    cx, cy = int((600 + 150) * scale), int((400 + 20) * scale)
    r, g, b_ = img.convert("RGB").getpixel((cx, cy))
    assert max(r, g, b_) < 40, (r, g, b_)


def test_chromes_jpeg_leaves_as_it_is_masked_in_its_coefficients_unless_labelled(
    browser: HeadlessBrowser, pages_url: str
) -> None:
    # Rendered at the output size and quality, a page with no label is passed on without a
    # decode and re-encode (the core makes only the thumbnail); its secrets are blacked out in
    # the JPEG's DCT coefficients. Labels send it through the whole pipeline.
    plain = asyncio.run(
        _screenshot(browser, {"url": f"{pages_url}/diff/page.html", "method": "cdp"})
    )
    assert (plain["width"], plain["quality"], plain["masked"]) == (1280, 60, 0)
    assert "core_encode_us" not in plain["timings"], plain["timings"]
    assert _decode(plain["thumbnail"]).width == 320 and _decode(plain["jpeg"]).width == 1280
    secret = asyncio.run(
        _screenshot(browser, {"url": f"{pages_url}/security/rules.html", "method": "cdp"})
    )
    assert secret["masked"] > 0 and "core_mask_us" in secret["timings"], secret["timings"]
    assert "core_encode_us" not in secret["timings"], secret["timings"]
    # The three fields (bright green, 500x70 CSS at x 30, y 30 / 130 / 230) are black, in the
    # image and in its thumbnail; the page around them is not.
    img = _decode(secret["jpeg"]).convert("RGB")
    thumb = _decode(secret["thumbnail"]).convert("RGB")
    s, ts = secret["css_to_output_scale"], thumb.width / 1920
    for top in (30, 130, 230):
        for x, y in ((40, top + 10), (280, top + 35), (520, top + 60)):
            assert max(img.getpixel((int(x * s), int(y * s)))) < 40, (x, y)
        assert thumb.getpixel((int(280 * ts), int((top + 35) * ts)))[1] < 60, top
    assert img.getpixel((int(900 * s), int(60 * s)))[2] > 40  # the page's blue background
    labelled = asyncio.run(
        _screenshot(
            browser, {"url": f"{pages_url}/buttons.html", "method": "cdp", "annotate": True}
        )
    )
    assert labelled["annotations"] and "core_encode_us" in labelled["timings"]


@pytest.mark.parametrize("method", ["cdp", "auto"])
def test_a_page_with_nothing_painted_yet_is_captured(
    browser: HeadlessBrowser, pages_url: str, method: str
) -> None:
    # An empty document never gets a `paint` entry; it used to fail "had not painted" for ever.
    # It is on screen once it runs frames past paint holding, and the capture waits for that.
    result = asyncio.run(
        _screenshot(browser, {"url": f"{pages_url}/blank.html?{method}", "method": method})
    )
    img = _decode(result["jpeg"]).convert("L")
    assert result["title"] == "Nothing yet"
    assert img.getextrema()[0] > 235, "a blank page is white"


def test_hidpi_capture_maps_boxes(browser_dpr2: HeadlessBrowser, pages_url: str) -> None:
    result = asyncio.run(
        _screenshot(browser_dpr2, {"url": f"{pages_url}/buttons.html", "annotate": True})
    )
    assert result["device_pixel_ratio"] == 2
    img = _decode(result["jpeg"])
    # A 1280 CSS px wide viewport at DPR 2 is 2560 device pixels wide; the output fits 1280 wide.
    assert img.size == (1280, result["viewport"]["height"])
    assert abs(result["css_to_output_scale"] - 1.0) < 0.01
    selectors = [a["selector"] for a in result["annotations"]]
    assert "#b1" in selectors and "#b3" in selectors
    assert "#b4" not in selectors  # outside the 1280×800 viewport


def test_restricted_page_is_refused(browser: HeadlessBrowser) -> None:
    with pytest.raises(CommandError) as err:
        asyncio.run(_screenshot(browser, {"url": "about:version"}))  # = chrome://version
    assert err.value.code == "restricted_page"
    # The refusal names the tab and its URL, and says how to pick another.
    assert "chrome://version" in str(err.value)
    assert "switch to a web page or pass tab_id" in str(err.value)


def test_bad_selector_is_a_clear_error(browser: HeadlessBrowser, pages_url: str) -> None:
    with pytest.raises(CommandError) as err:
        asyncio.run(_screenshot(browser, {"url": f"{pages_url}/buttons.html", "selector": "a[["}))
    assert err.value.code == "invalid_selector"
    assert "a[[" in err.value.message


def test_element_capture(browser: HeadlessBrowser, pages_url: str) -> None:
    result = asyncio.run(
        _screenshot(browser, {"url": f"{pages_url}/buttons.html", "selector": "#b3"})
    )
    img = _decode(result["jpeg"])
    # 200×60 CSS at DPR 1: the element itself, never upscaled.
    assert abs(img.width - 200) <= 1 and abs(img.height - 60) <= 1


def test_cli_capture_headless(tmp_path: Path) -> None:
    """README's main job: `shotctl capture demo/index.html --annotate --browser headless`."""
    out = tmp_path / "demo.jpg"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "shotbridge",
            "capture",
            str(REPO / "demo" / "index.html"),
            "--annotate",
            "--browser",
            "headless",
            "-o",
            str(out),
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert proc.returncode == 0, proc.stderr
    meta = json.loads(proc.stdout)
    img = _decode(out.read_bytes())
    assert img.width == meta["width"] <= 1280
    assert out.with_name("demo.thumb.jpg").exists()
    amap = json.loads(out.with_name("demo.json").read_text())
    names = {a["name"] for a in amap["annotations"]}
    assert {"Sign in", "Upgrade plan", "Email", "Password"} <= names
    assert meta["masked"] >= 1


def test_cli_bad_input_exit_code(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "shotbridge", "capture", str(tmp_path / "missing.html")],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"shotctl capture: no such file: {tmp_path / 'missing.html'}"


def test_host_killed_mid_capture_then_recovers(pages_url: str) -> None:
    browser = start_browser(window_size=(1280, 800))
    try:

        async def scenario() -> float:
            client = await BusClient.connect(runtime_dir=browser.runtime_dir)
            status = await client.request("status")
            job = asyncio.create_task(
                client.request("screenshot", {"url": f"{pages_url}/slow?ms=4000"}, timeout=30)
            )
            await asyncio.sleep(0.5)
            os.kill(status["pid"], signal.SIGKILL)
            t0 = time.monotonic()
            with pytest.raises(BusError):
                await job
            elapsed = time.monotonic() - t0
            await client.close()
            return elapsed

        assert asyncio.run(scenario()) < 2.0
        # The extension reconnects (Chromium starts a new host); captures work again.
        asyncio.run(wait_for_host(runtime_dir=browser.runtime_dir, timeout=30, connected=True))
        result = asyncio.run(_screenshot(browser, {"url": f"{pages_url}/buttons.html"}))
        assert _decode(result["jpeg"]).width == 1280
    finally:
        browser.close()


def test_browser_gone_gives_clear_error(pages_url: str) -> None:
    browser = start_browser(window_size=(1280, 800))
    try:

        async def scenario() -> None:
            client = await BusClient.connect(runtime_dir=browser.runtime_dir)
            assert (await client.request("status"))["connected"]
            assert browser.process is not None
            browser.process.send_signal(signal.SIGTERM)  # the browser only, not the host
            await asyncio.to_thread(browser.process.wait, 10)
            with pytest.raises((BusError, CommandError)) as err:
                await client.request("screenshot", {}, timeout=10)
            assert "extension not connected" in str(err.value)
            await client.close()
            with pytest.raises(NotConnectedError):
                await wait_for_host(runtime_dir=browser.runtime_dir, timeout=3, connected=True)

        asyncio.run(scenario())
    finally:
        browser.close()
