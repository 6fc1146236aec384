"""One read of the page's visible elements right after a screenshot, shared by all who need it.

The diff memory (to name what changed) and the recorder's observations (the texts that
``mask_dynamic`` compares) both want the elements as they were when the image was taken. Each
read is a ``discover all_visible`` that runs in the page (25-50 ms on the bench's dense pages),
and a capture asked for meanwhile waits for the page to finish it: asking twice would double
that wait.

A read the diff memory needs starts at once. One that only the recorder wants waits a moment
first (``DEFER_S``, 0.1 s): a client that asks for its next image straight away (an annotated
observe, then a capture) gets it without waiting behind the read. Whatever reaches the host in
that moment (that capture, or an action) may change the page, so the read is then dropped: the
recorder goes without one observation rather than note texts of another page than the image's.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import weakref
from collections import OrderedDict
from typing import Any, Protocol

from shotbridge.wire.extension import DiscoverArgs

log = logging.getLogger(__name__)

MAX_ELEMENTS = 100
KEEP = 8  # reads remembered by screenshot id: a diff looks back at most a few images
TIMEOUT_S = 5.0
# How long a recorder-only read waits for the client's next call: the bench's clients send it
# 5-15 ms after our reply on a quiet machine, 20-60 ms on a loaded one; the recorder is in no hurry.
DEFER_S = 0.1
# Bus commands that leave the page as it is (the rest may change it).
READ_ONLY = frozenset(
    {"status", "hello", "subscribe", "events", "discover", "page_info", "list_tabs", "serve_page"}
    | {"timeline", "screenshots", "screenshot_get", "record_config"}
)

# The extension's discover reply as it came: the recorder's observation reads what it can of it,
# the diff memory validates it (wire.extension.DiscoverResult) and does without names if it fails.
Found = dict[str, Any]


class Link(Protocol):
    """The host's connection to the extension (shotbridge.host.extension_link)."""

    async def request(
        self, cmd: str, args: dict[str, Any] | None = None, timeout: float = 15.0
    ) -> dict[str, Any]: ...


class _Activity:
    """What reached one extension link: a count that moves whenever the page may have changed."""

    def __init__(self) -> None:
        self.count = 0


_activity: weakref.WeakKeyDictionary[Any, _Activity] = weakref.WeakKeyDictionary()


# Events of the browser itself that change the page (the user's own clicks and navigations).
PAGE_EVENTS = frozenset({"action", "nav", "tab_changed"})


def _of(link: Any) -> _Activity | None:
    """The activity of ``link``; None for a link that cannot be told apart (then no read waits)."""
    try:
        found = _activity.get(link)
        if found is not None:
            return found
        found = _activity[link] = _Activity()
    except TypeError:  # neither hashable nor weakly referable
        return None
    listen = getattr(link, "add_listener", None)
    if listen is not None:
        listen(functools.partial(_on_event, weakref.ref(found)))
    return found


def _on_event(activity: weakref.ref[_Activity], event: dict[str, Any]) -> None:
    found = activity()
    if found is not None and event.get("event") in PAGE_EVENTS:
        found.count += 1


def command_arrived(link: Any, cmd: str) -> None:
    """A bus command for ``link``'s browser: deferred reads not yet sent are dropped, unless it
    only reads."""
    activity = _of(link)
    if activity is not None and cmd not in READ_ONLY:
        activity.count += 1


class ElementReads:
    """The page's elements read once after each screenshot of one session, by screenshot id."""

    def __init__(self) -> None:
        self._reads: OrderedDict[int, _Read] = OrderedDict()

    def of(
        self, link: Link, shot_id: int, tab_id: int | None, *, now: bool = False
    ) -> asyncio.Task[Found | None]:
        """The read after screenshot ``shot_id``: started by the first caller, shared after.

        ``now``: the caller needs it (a diff naming what changed): no deferral, and a deferred
        read not yet sent goes at once.
        """
        read = self._reads.get(shot_id)
        if read is None:
            read = _Read(link, tab_id, deferred=not now)
            self._reads[shot_id] = read
            while len(self._reads) > KEEP:
                self._reads.popitem(last=False)
        elif now:
            read.go.set()
        return read.task


class _Read:
    """One read: at once, or after ``DEFER_S`` unless the page may have changed meanwhile."""

    def __init__(self, link: Link, tab_id: int | None, *, deferred: bool) -> None:
        self.go = asyncio.Event()
        self.activity = _of(link)
        if not deferred or self.activity is None:
            self.go.set()
        self.seen = self.activity.count if self.activity is not None else 0
        self.task = asyncio.get_running_loop().create_task(self._run(link, tab_id))

    async def _run(self, link: Link, tab_id: int | None) -> Found | None:
        if not self.go.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.go.wait(), DEFER_S)
            moved = self.activity is not None and self.activity.count != self.seen
            if moved and not self.go.is_set():
                log.debug("read after a screenshot dropped: the page may have changed")
                return None
        return await _discover(link, tab_id)


async def _discover(link: Link, tab_id: int | None) -> Found | None:
    """The ``discover`` result now, or None when the page could not answer (the image stands)."""
    # Names and texts only: whether something covers an element is not asked.
    args = DiscoverArgs(tab_id=tab_id, target="all_visible", max=MAX_ELEMENTS, covered=False)
    try:
        return await link.request(
            "discover", args.model_dump(mode="python", exclude_unset=True), timeout=TIMEOUT_S
        )
    except Exception as exc:
        log.info("discover after a screenshot failed: %s", exc)
        return None
