"""Settings are the session's: what ``configure`` set reaches every host the server connects to.

In process, the real tools and the real :class:`Connection` over fake links: a mask configured
before any browser exists is handed to the host before the first request that could make a page
do anything; a new host (a browser or host restart) is given it again; nothing is sent while the
settings are at a fresh host's defaults, and configuring a mask alone still launches nothing.
"""

from __future__ import annotations

import asyncio
from typing import Any

import mcp
from shotbridge.mcp_server import Connection, ServerState, build_server
from shotbridge.mcp_server.connection import Peer
from shotbridge.mcp_server.ratelimit import ScreenshotBudget
from shotbridge.mcp_server.session import SettingsSync

from tests.mcp_fakes import FakeClock, FakeLink


class HostLink(FakeLink):
    """A fake link that says which host pid it reaches, as the real one does."""

    def __init__(self, pid: int = 1) -> None:
        super().__init__(record_config=lambda a: {**a})
        self.pid = pid

    def peer(self) -> Peer:
        return Peer(headless=True, pid=self.pid, profile_id="p", description="headless")


class Harness:
    def __init__(self) -> None:
        self.links: list[HostLink] = []

        async def factory() -> HostLink:
            self.links.append(HostLink(pid=len(self.links) + 1))
            return self.links[-1]

        self.connection = Connection(factory)
        self.state = ServerState(
            connection=self.connection, budget=ScreenshotBudget(clock=FakeClock())
        )
        self.state.connection = SettingsSync(self.state.connection, self.state)  # type: ignore[assignment]
        self.server = build_server(self.state)

    def run(self, *calls: tuple[str, dict[str, Any]]) -> list[Any]:
        async def main() -> list[Any]:
            async with mcp.Client(self.server) as client:
                return [await client.call_tool(name, args) for name, args in calls]

        return asyncio.run(main())


NAVIGATE = ("interact", {"action": "navigate", "url": "http://127.0.0.1:9/ssn.html"})
MASK = ("configure", {"action": "capture", "settings": {"mask_selectors": [".ssn"]}})


def cmds(link: HostLink) -> list[str]:
    return [c for c, _ in link.calls]


def test_a_mask_set_before_the_browser_reaches_the_host_before_the_page() -> None:
    h = Harness()
    configured, navigated = h.run(MASK, NAVIGATE)
    assert not configured.is_error and not navigated.is_error
    (link,) = h.links
    first_act = min(i for i, c in enumerate(cmds(link)) if c in ("navigate", "interact"))
    sent = [a for c, a in link.calls[:first_act] if c == "record_config"]
    assert sent == [{"mask_selectors": [".ssn"]}]


def test_configuring_a_mask_alone_launches_no_browser() -> None:
    h = Harness()
    (configured,) = h.run(MASK)
    assert not configured.is_error and h.links == []


def test_defaults_send_nothing() -> None:
    h = Harness()
    h.run(NAVIGATE, NAVIGATE)
    assert "record_config" not in cmds(h.links[0])


def test_a_new_host_is_given_the_settings_again() -> None:
    h = Harness()
    h.run(MASK, NAVIGATE)

    async def restart() -> None:  # the host went away; the next request reaches a new one
        await h.connection.reset(h.links[0])

    asyncio.run(restart())
    h.run(NAVIGATE)
    assert len(h.links) == 2
    assert cmds(h.links[1])[0] == "record_config"
    assert h.links[1].calls[0][1] == {"mask_selectors": [".ssn"]}
    # The same host is not told twice.
    assert cmds(h.links[0]).count("record_config") == 1


def test_recording_settings_travel_once_configured() -> None:
    h = Harness()
    auto = ("configure", {"action": "capture",
                          "settings": {"auto_screenshot": {"on_navigation": True}}})  # fmt: skip
    h.run(auto, MASK)

    async def restart() -> None:
        await h.connection.reset(h.links[0])

    asyncio.run(restart())
    h.run(NAVIGATE)
    sent = h.links[1].calls[0]
    assert sent[0] == "record_config"
    assert sent[1]["mask_selectors"] == [".ssn"]
    assert sent[1]["auto_screenshot"]["on_navigation"] is True
    assert "min_interval_s" in sent[1]
