"""The page read after a screenshot (host/after_capture.py) against a fake extension link: what
it asks the page, and when a read that only the recorder wants is sent or dropped."""

from __future__ import annotations

import asyncio
from typing import Any

from shotbridge.host.after_capture import DEFER_S, ElementReads, command_arrived


class Link:
    """Answers ``discover`` with a page; notes every request and when it came."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, dict[str, Any]]] = []
        self.listeners: list[Any] = []

    def add_listener(self, listener: Any) -> None:
        self.listeners.append(listener)

    async def request(
        self, cmd: str, args: dict[str, Any] | None = None, timeout: float = 15.0
    ) -> dict[str, Any]:
        self.asked.append((cmd, args or {}))
        return {"url": "http://x/", "elements": []}

    def event(self, name: str) -> None:
        for listener in self.listeners:
            listener({"event": name, "data": {}, "time": 0.0})


def test_the_read_asks_for_names_without_hit_tests() -> None:
    async def go() -> None:
        link = Link()
        found = await ElementReads().of(link, 1, 7, now=True)
        assert found == {"url": "http://x/", "elements": []}
        assert link.asked == [
            ("discover", {"tab_id": 7, "target": "all_visible", "max": 100, "covered": False})
        ]

    asyncio.run(go())


def test_a_read_the_diff_needs_goes_at_once_and_is_shared() -> None:
    async def go() -> None:
        link, reads = Link(), ElementReads()
        task = reads.of(link, 1, None, now=True)
        assert reads.of(link, 1, None) is task  # the recorder joins it
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        assert [c for c, _ in link.asked] == ["discover"]  # sent before any deferral
        await task
        assert len(link.asked) == 1

    asyncio.run(go())


def test_a_recorder_read_waits_then_reads_when_nothing_came() -> None:
    async def go() -> None:
        link = Link()
        task = ElementReads().of(link, 1, None)
        command_arrived(link, "status")  # only reads: the page is as it was
        await asyncio.sleep(DEFER_S / 2)
        assert link.asked == []
        assert await task is not None
        assert [c for c, _ in link.asked] == ["discover"]

    asyncio.run(go())


def test_a_recorder_read_is_dropped_when_a_command_may_change_the_page() -> None:
    async def go() -> None:
        for cmd in ("screenshot", "interact", "navigate", "emulate"):
            link = Link()
            task = ElementReads().of(link, 1, None)
            command_arrived(link, cmd)
            assert await task is None, cmd
            assert link.asked == [], cmd

    asyncio.run(go())


def test_a_recorder_read_is_dropped_when_the_browser_navigates() -> None:
    async def go() -> None:
        link = Link()
        task = ElementReads().of(link, 1, None)
        link.event("console")  # not a change of the page
        link.event("nav")
        assert await task is None
        assert link.asked == []

    asyncio.run(go())


def test_a_deferred_read_the_diff_then_needs_goes_at_once() -> None:
    async def go() -> None:
        link, reads = Link(), ElementReads()
        task = reads.of(link, 1, None)
        assert reads.of(link, 1, None, now=True) is task
        command_arrived(link, "interact")  # the diff asked first: it gets its names
        assert await asyncio.wait_for(task, DEFER_S / 2) is not None

    asyncio.run(go())


def test_a_link_that_cannot_be_tracked_gets_its_reads_at_once() -> None:
    class Unhashable(Link):
        __hash__ = None  # type: ignore[assignment]

    async def go() -> None:
        link = Unhashable()
        command_arrived(link, "interact")  # nothing to note it on: no read may wait
        task = ElementReads().of(link, 1, None)
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        assert [c for c, _ in link.asked] == ["discover"]
        assert await task is not None

    asyncio.run(go())
