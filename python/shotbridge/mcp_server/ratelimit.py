"""How often screenshots may leave the server: a cooldown and a cap on auto-appended ones.

A screenshot the model asks for is its own decision about its context, so it is never refused
by default (``explicit_cooldown`` 0): a look-act-look loop gets every image it asks for. Those
the server appends without being asked (``screenshot_mode``) wait ``cooldown`` seconds after the
previous screenshot of either kind, and at most ``session_limit`` of them are sent: each costs
~1,000+ tokens the model did not choose to spend.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

COOLDOWN_S = 5.0
SESSION_LIMIT = 10


@dataclass(frozen=True)
class Refusal:
    """Why a screenshot may not be taken now."""

    reason: str  # the text after "Screenshot unavailable: "
    next_allowed_in: float | None  # seconds; None when waiting will not help (session cap)


class Ticket:
    """A granted slot; ``cancel()`` gives it back when the capture then failed."""

    def __init__(self, budget: ScreenshotBudget, stamp: float, previous: float | None, auto: bool):
        self._budget, self._stamp, self._previous, self._auto = budget, stamp, previous, auto
        self._cancelled = False

    def cancel(self) -> None:
        if self._cancelled:
            return
        self._cancelled = True
        b = self._budget
        if b._last == self._stamp:  # nobody took a screenshot since: undo ours
            b._last = self._previous
        if self._auto:
            b.auto_taken -= 1


class ScreenshotBudget:
    def __init__(
        self,
        *,
        cooldown: float = COOLDOWN_S,
        explicit_cooldown: float = 0.0,
        session_limit: int = SESSION_LIMIT,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.cooldown = cooldown  # automatic screenshots
        self.explicit_cooldown = explicit_cooldown
        self.session_limit = session_limit
        self.clock = clock
        self.auto_taken = 0
        self._last: float | None = None

    def next_allowed_in(self, *, auto: bool = False) -> float:
        """Seconds until another screenshot of this kind is allowed (0 when it is now)."""
        if self._last is None:
            return 0.0
        cooldown = self.cooldown if auto else self.explicit_cooldown
        return max(0.0, self._last + cooldown - self.clock())

    def acquire(self, *, auto: bool) -> Ticket | Refusal:
        """Take a slot now, or say why not. Check and record happen without an await between."""
        if auto and self.auto_taken >= self.session_limit:
            return Refusal(f"session limit reached ({self.auto_taken}/{self.session_limit})", None)
        wait = self.next_allowed_in(auto=auto)
        if wait > 0:
            cooldown = f"{self.cooldown if auto else self.explicit_cooldown:g}s"
            # Round up to 0.1 s so that waiting exactly nextAllowedIn always suffices.
            return Refusal(f"rate-limited ({cooldown} cooldown)", math.ceil(wait * 10) / 10)
        previous, stamp = self._last, self.clock()
        self._last = stamp
        if auto:
            self.auto_taken += 1
        return Ticket(self, stamp, previous, auto)


def budget_from_options(cooldown: float | None, session_limit: int) -> ScreenshotBudget:
    """``shotctl mcp --cooldown``: when given, it limits explicit screenshots too."""
    if cooldown is None:
        return ScreenshotBudget(session_limit=session_limit)
    return ScreenshotBudget(
        cooldown=cooldown, explicit_cooldown=cooldown, session_limit=session_limit
    )
