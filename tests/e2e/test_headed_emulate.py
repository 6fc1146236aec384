"""Device emulation in the user's own headed Chromium (Xvfb), through a real ``shotctl mcp``.

The user's tab becomes a dark iPhone SE: the result says the user sees it, a screenshot has the
phone's shape, a click by its pixels lands on the phone layout's button, and once the MCP server
exits the host gives the user their tab back as it was.
"""

from __future__ import annotations

import base64
import io
import json
from typing import Any

from PIL import Image

from tests.e2e.headed import BusUser, Desktop, HeadedChromium, as_user_run
from tests.mcp_stdio import McpSession

IPHONE_SE = (320, 568)
MENU_ON_PHONE = (160, 240)  # CSS px: the centre of the full-width menu button under 500 px


def _text(r: Any) -> str:
    assert not r.is_error, r.content
    return next(b.text for b in r.content if b.type == "text")


def test_emulation_shows_in_the_users_tab_and_ends_with_the_session(
    desktop: Desktop, headed: HeadedChromium, pages_url: str
) -> None:
    url = f"{pages_url}/emulate-network/index.html"
    with McpSession("--browser", "connected", "--cooldown", "0", env=desktop.minimal_env()) as s:
        _text(s.call("interact", {"action": "navigate", "url": url}))
        before = json.loads(_text(s.call("observe", {"what": "page"})))["viewport"]
        assert before["width"] > 500  # the window's own: the desktop layout
        settings = {"preset": "iPhone SE", "color_scheme": "dark"}
        said = _text(s.call("configure", {"action": "emulate", "settings": settings}))
        assert "now emulates iPhone SE: 320×568 CSS px, device scale factor 2, mobile" in said
        assert "This is a tab of the user's own browser: they see it emulated too" in said

        shot = s.call("capture_screenshot", {})
        _text(shot)
        data = next(b.data for b in shot.content if b.type == "image")
        width, height = Image.open(io.BytesIO(base64.b64decode(data))).size
        assert abs(width / height - IPHONE_SE[0] / IPHONE_SE[1]) < 0.01, (width, height)
        x, y = (round(c * width / IPHONE_SE[0]) for c in MENU_ON_PHONE)
        _text(s.call("interact", {"action": "click", "x": x, "y": y}))
        page = json.loads(_text(s.call("observe", {"what": "page"})))
        assert page["title"] == "opened at 320 dark"
        assert page["viewport"] == {"width": 320, "height": 568}

    async def scenario(user: BusUser) -> None:
        async def restored() -> dict[str, Any] | None:
            info = await user.call("page_info")
            return info if info["viewport"]["width"] == before["width"] else None

        info = await user.until("the emulation to end with the MCP session", restored)
        assert info["url"] == url

    as_user_run(desktop, scenario)
