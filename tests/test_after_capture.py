"""The page read after a screenshot (host/after_capture.py) against a fake extension link: what
it asks the page, when it is sent (a quiet moment, or before a command that may change the page),
when it is dropped, and which screenshots share it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from shotbridge.host import after_capture
from shotbridge.host.after_capture import DEFER_S, ElementReads, before_command


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
        # `known` names the answer the host holds (none yet): an unchanged page says `same`.
        asked = {"tab_id": 7, "target": "all_visible", "max": 100, "covered": False, "known": ""}
        assert link.asked == [("discover", asked)]

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
        await before_command(link, "status")  # only reads: the page is as it was
        await asyncio.sleep(DEFER_S / 2)
        assert link.asked == []
        assert await task is not None
        assert [c for c, _ in link.asked] == ["discover"]

    asyncio.run(go())


def test_a_recorder_read_is_dropped_when_a_command_may_change_the_page() -> None:
    async def go() -> None:
        changes = [("interact", {}), ("navigate", {}), ("emulate", {})]
        changes += [("screenshot", {k: v}) for k, v in (("url", "http://y/"), ("scroll", 300))]
        for cmd, args in changes:
            link = Link()
            task = ElementReads().of(link, 1, None)
            await before_command(link, cmd, args)
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
        await before_command(link, "interact")  # the diff asked first: it gets its names
        assert await asyncio.wait_for(task, DEFER_S / 2) is not None

    asyncio.run(go())


def test_a_link_that_cannot_be_tracked_gets_its_reads_at_once() -> None:
    class Unhashable(Link):
        __hash__ = None  # type: ignore[assignment]

    async def go() -> None:
        link = Unhashable()
        await before_command(link, "interact")  # nothing to note it on: no read may wait
        task = ElementReads().of(link, 1, None)
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        assert [c for c, _ in link.asked] == ["discover"]
        assert await task is not None

    asyncio.run(go())


def test_a_kept_read_goes_before_a_command_that_may_change_the_page() -> None:
    async def go() -> None:
        link, reads = Link(), ElementReads()
        task = reads.of(link, 1, None, keep=True)
        await asyncio.sleep(0)
        assert link.asked == []  # waiting for a quiet moment
        await before_command(link, "interact", {"action": "click"})
        assert task.done() and await task is not None  # the click waited for it
        assert [c for c, _ in link.asked] == ["discover"]

    asyncio.run(go())


def test_a_read_waits_while_calls_keep_coming() -> None:
    async def go() -> None:
        link, reads = Link(), ElementReads()
        task = reads.of(link, 1, None, keep=True)
        for _ in range(4):  # a client's back-to-back calls that leave the page as it is
            await asyncio.sleep(DEFER_S * 0.6)
            await before_command(link, "screenshot", {"annotate": True})
            assert link.asked == []
        assert await task is not None
        assert len(link.asked) == 1

    asyncio.run(go())


def test_back_to_back_screenshots_share_one_read() -> None:
    async def go() -> None:
        link, reads = Link(), ElementReads()
        first = reads.of(link, 1, 7, keep=True)
        await before_command(link, "screenshot", {})
        assert reads.of(link, 2, 7, keep=True) is first
        assert reads.of(link, 3, 8, keep=True) is not first  # another tab: a read of its own
        await asyncio.gather(first, reads.of(link, 3, 8))
        await before_command(link, "interact", {"action": "click"})
        fresh = reads.of(link, 4, 7, now=True)  # after a click: the page may have changed
        assert fresh is not first
        await fresh
        assert [a["tab_id"] for _, a in link.asked] == [7, 8, 7]

    asyncio.run(go())


def test_a_kept_read_is_dropped_when_the_page_changes_by_itself() -> None:
    async def go() -> None:
        link = Link()
        task = ElementReads().of(link, 1, None, keep=True)
        link.event("nav")  # the user's own navigation: the image's page is gone
        assert await task is None
        assert link.asked == []

    asyncio.run(go())


def test_a_client_that_never_pauses_still_gets_its_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(after_capture, "MAX_WAIT_S", DEFER_S * 2)

    async def go() -> None:
        link = Link()
        task = ElementReads().of(link, 1, None, keep=True)
        while not task.done():
            await before_command(link, "status")
            await asyncio.sleep(DEFER_S / 4)
        assert await task is not None

    asyncio.run(go())


def test_a_diff_that_needs_names_hurries_the_read() -> None:
    async def go() -> None:
        link, reads = Link(), ElementReads()
        task = reads.of(link, 5, None, keep=True)
        reads.hurry(5)
        assert await asyncio.wait_for(task, DEFER_S / 2) is not None

    asyncio.run(go())


def test_a_page_that_never_answers_holds_a_command_up_only_briefly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(after_capture, "FLUSH_S", 0.05)

    class Stuck(Link):
        async def request(
            self, cmd: str, args: dict[str, Any] | None = None, timeout: float = 15.0
        ) -> dict[str, Any]:
            self.asked.append((cmd, args or {}))
            await asyncio.sleep(timeout)  # a page whose main thread never comes back
            return {}

    async def go() -> None:
        link = Stuck()
        task = ElementReads().of(link, 1, None, keep=True)
        await asyncio.wait_for(before_command(link, "interact", {"action": "click"}), 0.5)
        assert [c for c, _ in link.asked] == ["discover"]  # sent first, not waited out
        task.cancel()

    asyncio.run(go())
