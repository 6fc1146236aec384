"""When automatic screenshots are taken: cooldown, settling and merged triggers.

A trigger (a completed load, a page error, a user action) asks for one screenshot. It is taken:

1. after the configured cooldown (``min_interval_s``) since the previous automatic one started;
2. once the page has settled: loaded (``document.readyState`` is ``complete``) and quiet — no
   load, recorded request or trigger — for ``QUIET_S`` (about 1 s), so content a page adds
   ~700 ms after its load is in the image. A page that never quiets down is taken anyway
   ``MAX_SETTLE_S`` after the wait began (``settled: false`` in the record).

Triggers that come while one is waiting (cooldown or settling) join it: one screenshot, and its
record lists every trigger merged into it (``triggers``), the latest first in ``trigger``. A
trigger that comes while the capture itself runs starts the next wait.

The :class:`Scheduler` is pure orchestration (clock, sleep and the probes are injected), so the
rules are unit-tested without a browser; :class:`shotbridge.host.recording.Recorder` wires it up.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from shotbridge.wire.model import Model
from shotbridge.wire.timeline import Trigger, TriggerNote

QUIET_S = 1.0  # loaded and quiet this long: the page has settled
MAX_SETTLE_S = 3.0  # the longest wait for a page that keeps moving
POLL_S = 0.1


class Batch(Model):
    """What one automatic screenshot is for: the merged triggers, latest last."""

    triggers: list[TriggerNote]
    settled: bool = True  # False: taken at MAX_SETTLE_S while the page was still busy

    @property
    def latest(self) -> TriggerNote:
        return self.triggers[-1]


Capture = Callable[[Batch], Awaitable[object]]
Loaded = Callable[[], Awaitable[bool]]


class Scheduler:
    """One pending batch at a time; ``run()`` drains it (and any that follow) one by one."""

    def __init__(
        self,
        capture: Capture,
        loaded: Loaded,
        cooldown: Callable[[], float],
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.capture, self.loaded, self.cooldown = capture, loaded, cooldown
        self.clock, self.sleep, self.wall = clock, sleep, wall
        self.pending: list[TriggerNote] = []
        self.running = False
        self._last_shot: float | None = None  # when the previous automatic capture started
        self._last_activity = float("-inf")

    def activity(self) -> None:
        """The page did something (a load began, a request finished): quiet starts again."""
        self._last_activity = self.clock()

    def add(self, trigger: Trigger, action_id: str | None) -> bool:
        """Queue a trigger; True when nobody is running the queue (the caller starts ``run``)."""
        self.pending.append(TriggerNote(trigger=trigger, action_id=action_id, time=self.wall()))
        self.activity()
        return not self.running

    def cooldown_left(self) -> float:
        if self._last_shot is None:
            return 0.0
        return max(0.0, self._last_shot + self.cooldown() - self.clock())

    async def run(self) -> None:
        if self.running:
            return
        self.running = True
        try:
            while self.pending:
                while (wait := self.cooldown_left()) > 0:  # triggers meanwhile join the batch
                    await self.sleep(wait)
                settled = await self._settle()
                batch = Batch(triggers=self.pending, settled=settled)
                self.pending = []
                self._last_shot = self.clock()
                await self.capture(batch)
        finally:
            self.running = False

    async def _settle(self) -> bool:
        """Wait until the page is loaded and quiet for QUIET_S; False when MAX_SETTLE_S ran out."""
        deadline = self.clock() + MAX_SETTLE_S
        while True:
            now = self.clock()
            quiet_for = now - self._last_activity
            if quiet_for >= QUIET_S and await self.loaded():
                return True
            if now >= deadline:
                return False
            pause = QUIET_S - quiet_for if quiet_for < QUIET_S else POLL_S
            await self.sleep(max(0.01, min(pause, deadline - now)))
