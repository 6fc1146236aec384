"""A browser window hidden behind another one (the IDE over Chrome, a second browser): Chromium
marks a fully covered window occluded and its pages stop painting, so a page loaded there never
shows a first paint and the last frame shown goes stale. The assistant must still get its
screenshot of the page as it is now, masks included."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from shotbridge.client.bus_client import CommandError, request_sync

from tests.e2e.headed import Desktop, HeadedChromium, text_of
from tests.mcp_stdio import McpSession

from .test_security_capture import green_pixels

# Longer than the visible path's quota interval and minimum page age: "auto" could take it.
PAUSE_S = 1.2


@pytest.fixture(scope="module")
def covered(desktop: Desktop, pages_url: str) -> Iterator[dict[str, Any]]:
    """The host of a browser whose window another browser covers whole (same place and size)."""
    under = HeadedChromium(
        desktop, desktop.root / "profile-under", start_url=f"{pages_url}/buttons.html"
    )
    over = HeadedChromium(
        desktop, desktop.root / "profile-over", start_url=f"{pages_url}/interact.html"
    )
    try:
        for browser in (under, over):
            done = desktop.run("shotctl", "install", "--user-data-dir", str(browser.profile))
            assert done.returncode == 0, done.stderr
        under.start()
        first = desktop.wait_hosts(1)[0]
        over.start()
        desktop.wait_hosts(2)
        yield first
    finally:
        over.close()
        under.close()


def _ask(desktop: Desktop, host: dict[str, Any], cmd: str, args: dict[str, Any]) -> dict[str, Any]:
    with desktop.as_user():
        return request_sync(cmd, args, host=host["profile_id"], timeout=40)


def test_a_page_loaded_behind_another_window_is_captured(
    desktop: Desktop, covered: dict[str, Any], pages_url: str
) -> None:
    # Through the MCP server, as an assistant would: navigate, then look.
    with McpSession("--host", covered["profile_id"], "--cooldown", "0", env=desktop.env()) as mcp:
        nav = mcp.call("interact", {"action": "navigate", "url": f"{pages_url}/annot/login.html"})
        assert not nav.is_error, text_of(nav)
        shot = mcp.call("capture_screenshot", {})
        assert not shot.is_error, text_of(shot)
        # The labels are read after the page's next frame, which a hidden page makes only for
        # the capture: the map must still come, with the sign-in form's controls.
        mcp.call("interact", {"action": "navigate", "url": f"{pages_url}/annot/login.html"})
        seen = mcp.call("observe", {"what": "page", "annotate_screenshot": True, "map": "full"})
        assert not seen.is_error, text_of(seen)
        names = {a["name"] for a in json.loads(text_of(seen))["annotations"]}
        assert {"Email address", "Password", "Sign in"} <= names, names


def test_a_covered_window_is_rendered_fresh_and_masked(
    desktop: Desktop, covered: dict[str, Any], pages_url: str
) -> None:
    url = f"{pages_url}/security/late-secret.html"
    _ask(desktop, covered, "interact", {"action": "navigate", "url": url})
    # Nothing of it is on screen: the visible path has no current frame to read.
    with pytest.raises(CommandError, match="covered by another window or minimised"):
        _ask(desktop, covered, "screenshot", {"method": "visible", "timeout_ms": 10_000})
    methods, green = [], []
    for step in range(3):
        if step == 2:  # a green password field appears
            _ask(desktop, covered, "interact", {"action": "click", "selector": "#add"})
        time.sleep(PAUSE_S)
        shot = _ask(desktop, covered, "screenshot", {"timeout_ms": 10_000})
        methods.append(shot["method"])
        green.append(green_pixels(shot["jpeg"]))
    # Old enough for the visible path by the second capture, but still hidden: CDP renders it.
    # (Chromium may count the window as shown again after input reaches it, so the path of the
    # third capture is Chromium's call; its masks are ours.)
    assert methods[:2] == ["cdp", "cdp"], methods
    assert green == [0, 0, 0]
