"""Raw CDP in real Chromium: the user's decision, logged, never an unmasked image.

Before: the host ran raw CDP for any bus client that asked, and a raw ``Page.captureScreenshot``
came back with the password field in clear and was not written to SHOTBRIDGE_SCREENSHOT_DIR.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import io
import os
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from mcp.types import ImageContent, TextContent
from PIL import Image
from shotbridge.client.bus_client import BusClient
from shotbridge.wire.errors import CommandError

from tests.e2e.conftest import start_browser
from tests.mcp_stdio import McpSession

GREEN = (0, 200, 0)
# A password field and a control box of the same colour, side by side (CSS px).
PAGE = """<!doctype html><title>login</title>
<style>
  body { margin: 0; background: #fff; }
  .box { position: absolute; top: 100px; width: 300px; height: 80px; border: 0; padding: 0;
         background: rgb(0, 200, 0); color: rgb(0, 200, 0); font-size: 40px; outline: none; }
</style>
<input id="pw" class="box" style="left: 100px" type="password" value="hunter2">
<div id="control" class="box" style="left: 600px"></div>
"""


@pytest.fixture
def site(tmp_path: Path) -> Iterator[str]:
    root = tmp_path / "site"
    root.mkdir()
    (root / "login.html").write_text(PAGE)
    handler = type("Quiet", (SimpleHTTPRequestHandler,), {"log_message": lambda *a: None})
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=root))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/login.html"
    server.shutdown()
    server.server_close()


def shotctl(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "shotbridge", *args],
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, **env},
    )


def near(pixel: tuple[int, ...], colour: tuple[int, int, int], tol: int = 40) -> bool:
    return all(abs(a - b) <= tol for a, b in zip(pixel, colour, strict=False))


def test_the_real_host_refuses_raw_cdp_the_user_did_not_enable(
    tmp_path: Path, site: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bus client asking with ``allow: true`` is refused; the refusal is logged with its pid."""
    monkeypatch.setenv("SHOTBRIDGE_CONFIG_DIR", str(tmp_path / "config"))  # the host inherits it
    browser = start_browser(window_size=(1280, 800))
    try:

        async def ask() -> None:
            async with await BusClient.connect(runtime_dir=browser.runtime_dir) as client:
                await client.request("navigate", {"url": site, "timeout_ms": 15000}, timeout=20)
                for method in ("Runtime.evaluate", "Network.getAllCookies"):
                    with pytest.raises(CommandError) as err:
                        await client.request(
                            "cdp",
                            {"method": method, "params": {"expression": "1"}, "allow": True},
                            timeout=20,
                        )
                    assert "`shotctl config allow-cdp on`" in err.value.message
                with pytest.raises(CommandError) as err:  # raw pixels, before the masks
                    await client.request("capture", {}, timeout=20)
                assert err.value.code == "bad_request"

        asyncio.run(ask())
        log = (browser.root / "state" / "host.log").read_text()
        assert f"raw CDP Network.getAllCookies from client pid {os.getpid()}: refused" in log
        assert stat.S_IMODE((browser.root / "state" / "host.log").stat().st_mode) == 0o600
    finally:
        browser.close()


def test_raw_screenshot_is_masked_kept_and_follows_the_config(tmp_path: Path, site: str) -> None:
    """Real `shotctl mcp --allow-cdp` + `shotctl config allow-cdp on|off` + real host."""
    shots = tmp_path / "shots"
    env = {
        "SHOTBRIDGE_CONFIG_DIR": str(tmp_path / "config"),
        "SHOTBRIDGE_SCREENSHOT_DIR": str(shots),
    }
    on = shotctl("config", "allow-cdp", "on", env=env)
    assert on.returncode == 0, on.stderr

    with McpSession(
        "--browser",
        "headless",
        "--window-size",
        "1280x800",
        "--allow-cdp",
        "--cooldown",
        "0",
        env=env,
    ) as m:
        r = m.call("interact", {"action": "navigate", "url": site})
        assert not r.is_error, r.content
        r = m.call("interact", {"action": "cdp", "method": "Page.captureScreenshot"})
        assert not r.is_error, r.content
        image, caption = r.content
        assert isinstance(image, ImageContent) and isinstance(caption, TextContent)
        assert "1 secret region(s) masked" in caption.text
        img = Image.open(io.BytesIO(base64.b64decode(image.data))).convert("RGB")
        scale = img.width / 1280
        at = lambda x, y: img.getpixel((int(x * scale), int(y * scale)))  # noqa: E731
        assert near(at(750, 140), GREEN)  # the control box: the page was captured
        for x, y in [(110, 110), (250, 140), (390, 170)]:  # the password field: blacked out
            assert near(at(x, y), (0, 0, 0)), (x, y, at(x, y))

        # A copy in the screenshot directory, private like every other.
        files = sorted(shots.glob("*.jpg"))
        assert len(files) == 1
        assert stat.S_IMODE(shots.stat().st_mode) == 0o700
        assert stat.S_IMODE(files[0].stat().st_mode) == 0o600
        kept = Image.open(files[0]).convert("RGB")
        assert near(kept.getpixel((int(250 * scale), int(140 * scale))), (0, 0, 0))

        # Snapshots bypass the masks: refused even with raw CDP on.
        r = m.call("interact", {"action": "cdp", "method": "Page.captureSnapshot"})
        assert r.is_error and "without the secret masks" in r.content[0].text

        # The user turns it off: the very next call is refused, no restart.
        off = shotctl("config", "allow-cdp", "off", env=env)
        assert off.returncode == 0, off.stderr
        r = m.call(
            "interact",
            {"action": "cdp", "method": "Runtime.evaluate", "params": {"expression": "1"}},
        )
        assert r.is_error and "`shotctl config allow-cdp on`" in r.content[0].text
