"""select, upload, drag and wait in the user's own headed Chromium (Xvfb) with the extension,
through a real ``shotctl mcp`` with a minimal environment: the same session as the headless test
(tests/e2e/test_interact_actions.py), every action and refusal, ending on the page's "All set"."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.headed import Desktop, HeadedChromium
from tests.e2e.test_interact_actions import Agent, _drive
from tests.mcp_stdio import McpSession


def test_select_upload_drag_wait_in_the_users_browser(
    desktop: Desktop, headed: HeadedChromium, pages_url: str, tmp_path: Path
) -> None:
    with McpSession("--browser", "connected", "--cooldown", "0", env=desktop.minimal_env()) as s:
        _drive(Agent(s), pages_url, tmp_path)
