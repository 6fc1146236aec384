"""Settings are the session's: masks configured before the browser exists cover its first page.

Through the real ``shotctl mcp`` stdio server with its own headless Chromium, the real extension and
the real host: ``configure`` sets ``mask_selectors`` while no browser runs (configuring a mask
never launches one), then a navigation starts the browser on a page that throws on load with an
SSN in a ``.ssn`` box. The host's automatic error screenshot, its copy in
``SHOTBRIDGE_SCREENSHOT_DIR`` and every image embedded in the bug report must be black there.
"""

from __future__ import annotations

import base64
import io
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mcp.types import ImageContent, TextContent
from PIL import Image, ImageStat

from tests.mcp_stdio import McpSession

pytestmark = pytest.mark.browser

BOX = (200, 200, 800, 400)  # the .ssn box in CSS px (the window is 1280 wide: images are 1:1)
WAIT_S = 30


def _text(r: object) -> str:
    assert not r.is_error, r.content  # type: ignore[attr-defined]
    return "\n".join(b.text for b in r.content if isinstance(b, TextContent))  # type: ignore[attr-defined]


def _box_brightness(jpeg: bytes) -> float:
    img = Image.open(io.BytesIO(jpeg)).convert("L")
    scale = img.width / 1280
    inner = tuple(round(v * scale) for v in (BOX[0] + 10, BOX[1] + 10, BOX[2] - 10, BOX[3] - 10))
    return ImageStat.Stat(img.crop(inner)).mean[0]


def _error_shots(s: McpSession) -> list[dict[str, object]]:
    """The automatic screenshots taken for the page's error (polled; WAIT_S at most)."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        body = json.loads(_text(s.call("observe", {"what": "screenshots"})))
        found = [m for m in body["screenshots"] if m["trigger"] == "error"]
        if found:
            return found
        time.sleep(0.3)
    raise AssertionError(f"no automatic error screenshot: {body}")


def test_masks_configured_before_the_browser_cover_the_first_pages_auto_shots(
    pages_url: str, tmp_path: Path
) -> None:
    shot_dir = tmp_path / "shots"
    env = {"SHOTBRIDGE_SCREENSHOT_DIR": str(shot_dir)}
    args = ("--browser", "headless", "--window-size", "1280x800", "--cooldown", "0")
    with McpSession(*args, env=env) as s:
        said = _text(s.call("configure", {"action": "capture",
                                           "settings": {"mask_selectors": [".ssn"]}}))  # fmt: skip
        assert "mask_selectors=['.ssn']" in said
        _text(s.call("interact", {"action": "navigate", "url": f"{pages_url}/mcp/ssn_error.html"}))
        shots = _error_shots(s)
        report = _text(s.call("generate_bug_report"))

    # The copies the host wrote: every image of the session, the error one among them.
    files = sorted(shot_dir.glob("*.jpg"))
    assert files, "no screenshot copies written"
    brightness = {f.name: _box_brightness(f.read_bytes()) for f in files}
    assert all(v < 40 for v in brightness.values()), brightness
    # The bug report embeds the images as data URIs (full or thumbnails): all masked.
    embedded = re.findall(r"data:image/jpeg;base64,([A-Za-z0-9+/=]+)", report)
    assert embedded, report[:2000]
    report_brightness = [_box_brightness(base64.b64decode(b)) for b in embedded]
    assert all(v < 40 for v in report_brightness), report_brightness
    assert shots and all(m["kept"] for m in shots)
    assert "078-05-1120" not in report


def test_session_masks_cover_a_raw_cdp_screenshot_too(pages_url: str, tmp_path: Path) -> None:
    """Every image of the session, not only the tools' own: raw ``Page.captureScreenshot``
    (allowed by the user) goes through the host's pipeline, and gets the session's masks there."""
    env = {
        "SHOTBRIDGE_CONFIG_DIR": str(tmp_path / "config"),
        "SHOTBRIDGE_SCREENSHOT_DIR": str(tmp_path / "shots"),
    }
    on = subprocess.run(
        [sys.executable, "-m", "shotbridge", "config", "allow-cdp", "on"],
        capture_output=True, text=True, timeout=30, env={**os.environ, **env},
    )  # fmt: skip
    assert on.returncode == 0, on.stderr
    args = ("--browser", "headless", "--window-size", "1280x800", "--cooldown", "0", "--allow-cdp")
    with McpSession(*args, env=env) as s:
        _text(s.call("configure", {"action": "capture",
                                   "settings": {"mask_selectors": [".ssn"]}}))  # fmt: skip
        _text(s.call("interact", {"action": "navigate", "url": f"{pages_url}/mcp/ssn_error.html"}))
        r = s.call("interact", {"action": "cdp", "method": "Page.captureScreenshot"})
        assert not r.is_error, r.content
        (image,) = [b for b in r.content if isinstance(b, ImageContent)]
    assert _box_brightness(base64.b64decode(image.data)) < 40
    files = sorted((tmp_path / "shots").glob("*.jpg"))
    assert files and all(_box_brightness(f.read_bytes()) < 40 for f in files)
