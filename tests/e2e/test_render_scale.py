"""A headless window wider than the images renders at their width (``client.browser.render_dpr``),
through the real ``shotctl capture`` and ``shotctl mcp``: the page still lays out at the window's
CSS width, the screenshot leaves at the size Chrome took it, and its masks, labels and clicks land
where they should. ``--dpr 1`` keeps the old way: full pixels, scaled by Chrome for the image.
"""

from __future__ import annotations

import base64
import io
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from shotbridge.client.browser import render_dpr

from tests.mcp_stdio import McpSession

from .test_security_capture import green_pixels

pytestmark = pytest.mark.browser

PAGES = Path(__file__).resolve().parents[1] / "pages"
WIDE = "1920x1223"  # a 1920 CSS px wide viewport, as in bench/bench_mcp.py


def _capture(tmp_path: Path, *extra: str) -> tuple[dict[str, Any], bytes]:
    out = tmp_path / "shot.jpg"
    page = str(PAGES / "security" / "toggle.html")
    args = ["capture", "--browser", "headless", "--window-size", WIDE, "--json", "-q"]
    run = subprocess.run(
        [sys.executable, "-m", "shotbridge", *args, "-o", str(out), *extra, page],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout), out.read_bytes()


def _labels_inside(meta: dict[str, Any]) -> None:
    """Every label's box, in image px (bounds × css_to_output_scale), lies inside the image."""
    k = meta["css_to_output_scale"]
    assert meta["annotations"], meta
    for a in meta["annotations"]:
        b = a["bounds"]
        assert b["x"] * k >= 0 and (b["x"] + b["width"]) * k <= meta["width"] + 1, a
        assert b["y"] * k >= 0 and (b["y"] + b["height"]) * k <= meta["height"] + 1, a


def test_the_policy_renders_only_wider_windows_below_1() -> None:
    assert render_dpr(1280) is None and render_dpr(800) is None
    assert render_dpr(1920) == pytest.approx(1276 / 1920, abs=1e-4)
    assert render_dpr(1920, image_width=1920) is None  # `shotctl capture --max-width 1920`
    assert render_dpr(2560) == pytest.approx(1276 / 2560, abs=1e-4)


def test_a_wide_window_is_rendered_at_the_image_width(tmp_path: Path) -> None:
    meta, jpeg = _capture(tmp_path)  # unlabelled: labels may be green, like the secrets
    img = Image.open(io.BytesIO(jpeg))
    assert meta["device_pixel_ratio"] < 0.7, meta["device_pixel_ratio"]
    assert meta["viewport"]["width"] >= 1900  # laid out at the window's width
    assert 1270 <= img.width <= 1280 and (img.width, img.height) == (meta["width"], meta["height"])
    # Chrome took it at this size: the core neither scaled it nor re-encoded a scaled copy.
    assert (meta["source_width"], meta["source_height"]) == (meta["width"], meta["height"])
    assert meta["masked"] >= 2 and green_pixels(jpeg) == 0
    labelled, _ = _capture(tmp_path, "--annotate")
    assert labelled["width"] == meta["width"]
    _labels_inside(labelled)


def test_dpr_1_keeps_full_pixels_scaled_by_chrome(tmp_path: Path) -> None:
    meta, jpeg = _capture(tmp_path, "--dpr", "1")
    assert meta["device_pixel_ratio"] == 1
    assert meta["width"] == 1280 and meta["viewport"]["width"] == 1920
    assert meta["masked"] >= 2 and green_pixels(jpeg) == 0
    labelled, _ = _capture(tmp_path, "--dpr", "1", "--annotate")
    _labels_inside(labelled)


@pytest.fixture(scope="module")
def wide_mcp() -> Iterator[McpSession]:
    with McpSession("--browser", "headless", "--window-size", WIDE, "--cooldown", "0") as s:
        yield s


def _observe(s: McpSession) -> tuple[dict[str, Any], Image.Image]:
    r = s.call("observe", {"what": "page", "annotate_screenshot": True, "map": "full"})
    assert not r.is_error, r.content
    (text,) = [b.text for b in r.content if b.type == "text"]
    (data,) = [b.data for b in r.content if b.type == "image"]
    return json.loads(text), Image.open(io.BytesIO(base64.b64decode(data)))


def test_the_mcp_server_renders_a_wide_window_at_the_image_width(
    wide_mcp: McpSession, pages_url: str
) -> None:
    url = f"{pages_url}/security/toggle.html"
    r = wide_mcp.call("interact", {"action": "navigate", "url": url})
    assert not r.is_error, r.content
    body, img = _observe(wide_mcp)
    assert body["page"]["viewport"]["width"] >= 1900
    assert 1270 <= img.width <= 1280 and img.width == body["image"]["width"]
    assert body["image"]["masked_regions"] >= 2
    # A click by label lands on the control at this scale: "Show password" turns the field's type.
    show = next(a for a in body["annotations"] if a["name"] == "Show password")
    r = wide_mcp.call("interact", {"action": "click", "label": show["label"]})
    assert not r.is_error, r.content
    body, img = _observe(wide_mcp)
    pw = next(a for a in body["annotations"] if a["name"] == "Password")
    assert pw["type"] == "text", pw
    # Once a secret, always masked: the revealed field stays black.
    r = wide_mcp.call("capture_screenshot", {})
    (data,) = [b.data for b in r.content if b.type == "image"]
    assert green_pixels(base64.b64decode(data)) == 0
