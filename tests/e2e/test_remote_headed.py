"""The remote path once with the user's headed browser: a Chromium window under Xvfb with its own
profile (tests/e2e/headed.py), the laptop user's `shotctl remote ssh` run from their session,
and on the remote account (a real sshd, tests/e2e/remote_sshd.py) an MCP server with HOME and
PATH only that captures the tab the user is looking at and clicks in it."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.headed import BusUser, Desktop, HeadedChromium, as_user_run, images_of, text_of
from tests.e2e.remote_sshd import Forward, Remote, Sshd, mcp_params, remote_machine


@pytest.fixture(scope="module")
def machine() -> Iterator[tuple[Remote, Sshd]]:
    with remote_machine() as found:
        yield found


async def _calls(remote: Remote, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    results = []
    async with stdio_client(mcp_params(remote)) as (r, w), ClientSession(r, w) as session:
        await session.initialize()
        for name, args in calls:
            result = await session.call_tool(name, args)
            assert not result.is_error, text_of(result)
            results.append(result)
    return results


def settled(desktop: Desktop, url: str) -> None:
    """Wait until the user's fresh window answers a page read. On a loaded machine its first
    renderer can stay busy (the local headed tests see it too); the user would reload it, and
    so does this: a navigate ends a stuck renderer. Not what this test is about."""
    from shotbridge.wire.errors import CommandError, PageBusyError

    async def read(user: BusUser) -> None:
        for _ in range(20):
            try:
                await user.call("page_info", {})
                return
            except PageBusyError:
                await user.call("navigate", {"url": url})
            except CommandError:
                await asyncio.sleep(0.5)
        await user.call("page_info", {})

    as_user_run(desktop, read)


def test_remote_mcp_sees_and_clicks_the_users_window(
    desktop: Desktop, headed: HeadedChromium, machine: tuple[Remote, Sshd], pages_url: str
) -> None:
    remote, sshd = machine
    desktop.wait_hosts(1)
    settled(desktop, f"{pages_url}/buttons.html")
    forward = Forward(sshd, desktop.env()).start()
    try:
        page, shot, clicked = asyncio.run(
            _calls(
                remote,
                [
                    ("observe", {"what": "page"}),
                    ("capture_screenshot", {}),
                    ("interact", {"action": "click", "selector": "#b2"}),
                ],
            )
        )
    finally:
        forward.close()
    assert "/buttons.html" in text_of(page) and "Buttons fixture" in text_of(page)
    assert len(images_of(shot)) == 1
    assert "headless" not in text_of(shot)  # the user's window, not a browser of the remote's
    assert "Second" in text_of(clicked) or "#b2" in text_of(clicked)
