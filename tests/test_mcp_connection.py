"""The MCP server's connection: `auto` re-decides at each call, headless results say so, and a
change of browser is reported before anything else. Fake links, real Connection."""

from __future__ import annotations

import asyncio
from typing import Any

from shotbridge.client.connect import HEADLESS_NOTE
from shotbridge.mcp_server.connection import BusFactory, Connection, Peer
from shotbridge.wire.errors import BusError


class Link:
    def __init__(self, headless: bool, pid: int, profile: str | None = "prof-1") -> None:
        self.headless = headless
        self.pid = pid
        self.profile = profile
        self.closed = False
        self.fail_next = False

    def peer(self) -> Peer:
        description = (
            "a headless Chromium started by shotbridge"
            if self.headless
            else (f"your browser (profile {self.profile})")
        )
        return Peer(self.headless, self.pid, self.profile, description, self.pid * 10)

    async def request(self, cmd: str, args: Any = None, timeout: float = 15.0) -> dict:
        if self.fail_next:
            self.fail_next = False
            raise BusError("host went away")
        return {"pid": self.pid}

    async def close(self) -> None:
        self.closed = True


class Factory(BusFactory):
    """``auto``: the user's browser when ``user`` is set, else a new headless one."""

    def __init__(self, mode: str = "auto") -> None:
        super().__init__(mode, (800, 600))  # type: ignore[arg-type]
        self.user: Link | None = None
        self.made: list[Link] = []

    async def __call__(self) -> Link:
        link = self.user or Link(True, 100 + len(self.made), None)
        self.made.append(link)
        return link

    def user_browser_listed(self) -> bool:
        return self.mode == "auto" and self.user is not None

    async def user_link(self) -> Link | None:
        return self.user


async def call(conn: Connection) -> tuple[dict, list[str]]:
    conn.begin_call()
    result = await conn.request("page_info")
    return result, conn.end_call()


def test_auto_moves_to_the_user_browser_and_says_so() -> None:
    async def run() -> None:
        factory = Factory()
        conn = Connection(factory)
        result, said = await call(conn)
        assert result == {"pid": 100} and said == [HEADLESS_NOTE]
        headless = factory.made[0]

        factory.user = Link(False, 7)
        result, said = await call(conn)
        assert result == {"pid": 7} and headless.closed
        assert len(said) == 1 and said[0].startswith("Now using your browser (profile prof-1)")
        assert (await call(conn))[1] == []  # nothing new: nothing said

        conn.notices.append("The tracked tab was closed.")  # the hook other parts use
        assert (await call(conn))[1] == ["The tracked tab was closed."]

        # The user's browser restarts: a new host for the same profile.
        factory.user.fail_next = True
        factory.user = Link(False, 8)
        result, said = await call(conn)
        assert result == {"pid": 8}
        assert said[0].startswith("Your browser (profile prof-1) restarted")
        assert "pid 8 (was 7)" in said[0]

    asyncio.run(run())


def test_headless_mode_asked_for_is_not_noted() -> None:
    async def run() -> None:
        conn = Connection(Factory("headless"))
        assert (await call(conn))[1] == []

    asyncio.run(run())
