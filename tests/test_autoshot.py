"""When automatic screenshots are taken (shotbridge.host.autoshot): cooldown, settling, merged
triggers.

A fake clock stands in for time: ``sleep`` advances it and fires what the script planned for that
moment (a trigger, a request finishing, the load completing), so each rule is checked exactly.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from shotbridge.host import autoshot
from shotbridge.host.autoshot import Batch, Scheduler


class World:
    """A fake clock, a page that is loaded or not, and the screenshots taken."""

    def __init__(self, cooldown: float = 0.0, loaded: bool = True) -> None:
        self.now = 0.0
        self.cooldown = cooldown
        self.is_loaded = loaded
        self.plan: list[tuple[float, Callable[[], object]]] = []
        self.shots: list[tuple[float, Batch]] = []
        self.sched = Scheduler(
            self.capture,
            self.loaded,
            lambda: self.cooldown,
            clock=lambda: self.now,
            sleep=self.sleep,
            wall=lambda: 1000 + self.now,
        )

    async def capture(self, batch: Batch) -> None:
        self.shots.append((round(self.now, 3), batch))

    async def loaded(self) -> bool:
        return self.is_loaded

    def at(self, t: float, fn: Callable[[], object]) -> None:
        self.plan.append((t, fn))
        self.plan.sort(key=lambda p: p[0])

    async def sleep(self, d: float) -> None:
        end = self.now + d
        while self.plan and self.plan[0][0] <= end:  # what happens during the sleep
            t, fn = self.plan.pop(0)
            self.now = max(self.now, t)
            fn()
        self.now = end

    def trigger(self, kind: str, action_id: str | None = None) -> None:
        self.sched.add(kind, action_id)  # type: ignore[arg-type]

    def run(self) -> None:
        async def main() -> None:
            while self.sched.pending or self.plan:
                if self.sched.pending:
                    await self.sched.run()
                elif self.plan:  # idle until the next planned event
                    await self.sleep(self.plan[0][0] - self.now)

        asyncio.run(main())

    def kinds(self) -> list[list[str]]:
        return [[t.trigger for t in b.triggers] for _, b in self.shots]


def test_a_load_is_captured_after_a_quiet_second_not_at_once() -> None:
    w = World()
    w.trigger("navigation")
    w.run()
    assert [t for t, _ in w.shots] == [autoshot.QUIET_S]  # content at +0.7 s is in the image
    assert w.shots[0][1].settled


def test_requests_after_the_load_push_the_capture_back() -> None:
    w = World()
    w.trigger("navigation")
    w.at(0.6, w.sched.activity)  # the page's fetch answers 600 ms after the load
    w.run()
    assert [t for t, _ in w.shots] == [0.6 + autoshot.QUIET_S]


def test_a_page_that_never_quiets_down_is_taken_when_the_bound_runs_out() -> None:
    w = World()
    w.trigger("navigation")
    for i in range(1, 60):
        w.at(i * 0.2, w.sched.activity)  # a request every 200 ms, for 12 s
    w.run()
    assert w.shots[0][0] == autoshot.MAX_SETTLE_S and not w.shots[0][1].settled


def test_a_page_still_loading_is_waited_for() -> None:
    w = World(loaded=False)
    w.trigger("error")

    def load() -> None:
        w.is_loaded = True

    w.at(1.5, load)
    w.run()
    assert w.shots[0][0] == pytest.approx(1.5, abs=autoshot.POLL_S + 0.01)


def test_triggers_while_settling_are_merged_into_one_screenshot() -> None:
    w = World()
    w.trigger("action", "a1")
    w.at(0.5, lambda: w.trigger("error", "a1"))
    w.run()
    assert w.kinds() == [["action", "error"]]
    assert w.shots[0][0] == 0.5 + autoshot.QUIET_S
    batch = w.shots[0][1]
    assert batch.latest.trigger == "error" and [t.time for t in batch.triggers] == [1000, 1000.5]


def test_the_cooldown_is_followed_and_triggers_during_it_are_merged() -> None:
    w = World(cooldown=5.0)
    w.trigger("navigation")
    w.at(2.0, lambda: w.trigger("action", "a1"))
    w.at(3.0, lambda: w.trigger("action", "a2"))
    w.at(4.0, lambda: w.trigger("error", "a2"))
    w.run()
    first, second = (t for t, _ in w.shots)
    assert first == autoshot.QUIET_S
    assert second - first >= 5.0  # never sooner than the configured cooldown
    assert second == first + 5.0  # quiet since 4.0 already: no further wait
    assert w.kinds() == [["navigation"], ["action", "action", "error"]]
    assert [t.action_id for t in w.shots[1][1].triggers] == ["a1", "a2", "a2"]


def test_a_trigger_after_the_cooldown_is_not_delayed_by_it() -> None:
    w = World(cooldown=1.0)
    w.trigger("navigation")
    w.at(10.0, lambda: w.trigger("action", "a1"))
    w.run()
    assert [t for t, _ in w.shots] == [1.0, 10.0 + autoshot.QUIET_S]
    assert w.kinds() == [["navigation"], ["action"]]


def test_add_says_whether_a_runner_is_needed() -> None:
    w = World()
    assert w.sched.add("action", "a1") is True
    w.sched.running = True
    assert w.sched.add("action", "a2") is False
