"""`--browser auto` re-decides at every call, says when a result comes from a headless browser of
ours, and reports in plain words when the browser behind it changed."""

from __future__ import annotations

import json

from shotbridge.client.connect import HEADLESS_NOTE

from tests.e2e.headed import Desktop, HeadedChromium, text_of
from tests.mcp_stdio import McpSession


def test_auto_moves_to_the_users_browser_and_reports_restarts(
    desktop: Desktop, pages_url: str
) -> None:
    done = desktop.run("shotctl", "install")  # README's step, for Chromium's default profile
    assert done.returncode == 0, done.stderr
    browser = HeadedChromium(desktop, start_url=f"{pages_url}/buttons.html")
    try:
        with McpSession("--browser", "auto", "--cooldown", "0", env=desktop.env()) as mcp:
            # No browser of the user's yet: a headless one of ours, and the result says so.
            first = mcp.call("observe", {"what": "page"})
            assert not first.is_error, text_of(first)
            assert first.content[0].text == HEADLESS_NOTE
            assert json.loads(first.content[1].text)["url"] == "about:blank"

            browser.start()
            [host] = desktop.wait_hosts(1)
            second = mcp.call("observe", {"what": "page"})
            assert not second.is_error, text_of(second)
            said = second.content[0].text
            assert said.startswith(f"Now using your browser (profile {host['profile_id']})"), said
            assert "headless Chromium shotbridge had started was closed" in said
            assert HEADLESS_NOTE not in text_of(second)
            assert json.loads(second.content[1].text)["url"].endswith("/buttons.html")

            # Quiet while nothing changes.
            third = mcp.call("observe", {"what": "page"})
            assert len(third.content) == 1 and "/buttons.html" in third.content[0].text

            # The user closes the browser and starts it again: reconnect with no other action.
            browser.close()
            browser.start()
            [again] = desktop.wait_hosts(1)
            assert again["pid"] != host["pid"]
            fourth = mcp.call("observe", {"what": "page"})
            assert not fourth.is_error, text_of(fourth)
            said = fourth.content[0].text
            assert said.startswith(f"Your browser (profile {host['profile_id']}) restarted"), said
            assert f"pid {again['pid']} (was {host['pid']})" in said
            assert "/buttons.html" in fourth.content[1].text
    finally:
        browser.close()
