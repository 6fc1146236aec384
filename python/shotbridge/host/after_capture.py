"""One read of the page's visible elements after a screenshot, shared by all who need it.

The diff memory (to name what changed) and the recorder's observations (the texts that
``mask_dynamic`` compares) both want the elements as they were when the image was taken. Each
read is a ``discover all_visible`` that runs in the page (7-13 ms from the host even when the page
answers from its last read, 25-50 ms when it reads afresh on the bench's dense pages), and a call
that arrives meanwhile shares the page's main thread and the machine with it: a client's next call
right after a capture took about 10 ms longer on the bench's grid and frames pages.

So a read waits for a quiet moment: :data:`DEFER_S` with no command for this browser. A command
that may change the page does not wait for it, except for the reads the diff memory keeps
(``keep``): those go first, and the command waits for them, at most :data:`FLUSH_S` (to name what
a later diff finds, the elements must be as the image showed them). Reads only the recorder wants
are dropped instead: the recorder goes without one observation rather than note texts of another
page than the image's. Screenshots taken in between, with no command that may change the page,
share one read. A diff that found changed regions asks for its names at once (``now``). A page
that changes by itself (the user's click, a navigation) drops every read not yet sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import weakref
from collections import OrderedDict
from typing import Any, Protocol

from shotbridge.host import label_memory
from shotbridge.wire.extension import DiscoverArgs

log = logging.getLogger(__name__)

MAX_ELEMENTS = 100
KEEP = 8  # reads remembered by screenshot id: a diff looks back at most a few images
TIMEOUT_S = 5.0
# The quiet moment a read waits for. A model's next turn takes seconds; a script's (or the bench's)
# back-to-back calls come 5-200 ms apart, and a read sent between two of them holds up the second.
DEFER_S = 0.3
# A client that never pauses (polling status, say) still gets its reads after this long.
MAX_WAIT_S = 2.0
# How long a command that may change the page waits for the reads sent before it: a page whose
# main thread is stuck (a busy loop, an alert) answers no read, and must not hold up the command
# that would unstick it.
FLUSH_S = 1.0
# Bus commands that leave the page as it is (the rest may change it).
READ_ONLY = frozenset(
    {"status", "hello", "subscribe", "events", "discover", "page_info", "list_tabs", "serve_page"}
    | {"timeline", "screenshots", "screenshot_get", "record_config"}
)
# A screenshot with any of these may move the page (it navigates, scrolls, or lays it out anew).
SCREENSHOT_MOVES = ("url", "scroll", "full_page", "selector")

# The extension's discover reply as it came: the recorder's observation reads what it can of it,
# the diff memory validates it (wire.extension.DiscoverResult) and does without names if it fails.
Found = dict[str, Any]


class Link(Protocol):
    """The host's connection to the extension (shotbridge.host.extension_link)."""

    async def request(
        self, cmd: str, args: dict[str, Any] | None = None, timeout: float = 15.0
    ) -> dict[str, Any]: ...


class _Activity:
    """What reached one extension link: ``count`` moves whenever the page may have changed,
    ``last`` is when the latest command came (loop time), ``kept`` the reads that must go before
    the page changes."""

    def __init__(self) -> None:
        self.count = 0
        self.last = 0.0
        self.kept: set[_Read] = set()


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


def changes_page(cmd: str, args: dict[str, Any] | None = None) -> bool:
    """Whether bus command ``cmd`` may change the page (a plain screenshot does not)."""
    if cmd == "screenshot":
        return any((args or {}).get(k) for k in SCREENSHOT_MOVES)
    return cmd not in READ_ONLY


async def before_command(link: Any, cmd: str, args: dict[str, Any] | None = None) -> None:
    """A bus command for ``link``'s browser is about to run. If it may change the page, the
    diff memory's reads not yet sent go first (it waits for them); the others are dropped."""
    activity = _of(link)
    if activity is None:
        return
    activity.last = asyncio.get_running_loop().time()
    if not changes_page(cmd, args):
        return
    kept = [read.hurry() for read in list(activity.kept)]
    if kept:
        await asyncio.wait(kept, timeout=FLUSH_S)
    activity.count += 1


class ElementReads:
    """The page's elements read once after each screenshot of one session, by screenshot id."""

    def __init__(self) -> None:
        self._reads: OrderedDict[int, _Read] = OrderedDict()

    def of(
        self,
        link: Link,
        shot_id: int,
        tab_id: int | None,
        *,
        now: bool = False,
        keep: bool = False,
    ) -> asyncio.Task[Found | None]:
        """The read after screenshot ``shot_id``: started by the first caller, shared after.

        ``now``: the caller needs it (a diff naming what changed): it goes at once. ``keep``:
        it must not be dropped when a command may change the page (it goes before it).
        """
        read = self._reads.get(shot_id)
        if read is None:
            read = self._unsent(tab_id) or _Read(link, tab_id)
            self._reads[shot_id] = read
            while len(self._reads) > KEEP:
                self._reads.popitem(last=False)
        if keep:
            read.keep()
        if now:
            read.hurry()
        return read.task

    def hurry(self, shot_id: int) -> None:
        """The read after ``shot_id`` is needed now (if it is still waiting)."""
        read = self._reads.get(shot_id)
        if read is not None:
            read.hurry()

    def _unsent(self, tab_id: int | None) -> _Read | None:
        """The latest read, if it can stand for a new screenshot's too: not sent yet, same tab,
        and nothing that may change the page since."""
        latest = next(reversed(self._reads.values()), None)
        ok = latest is not None and latest.waiting() and latest.tab_id == tab_id
        return latest if ok else None


class _Read:
    """One read: once the browser is quiet (:data:`DEFER_S`), or at once when hurried."""

    def __init__(self, link: Link, tab_id: int | None) -> None:
        self.tab_id = tab_id
        self.go = asyncio.Event()
        self.sent = False
        self.activity = _of(link)
        if self.activity is None:
            self.go.set()
        self.seen = self.activity.count if self.activity is not None else 0
        loop = asyncio.get_running_loop()
        self.since = loop.time()
        self.task = loop.create_task(self._run(link, tab_id))

    def moved(self) -> bool:
        """The page may have changed since the read was asked for."""
        return self.activity is not None and self.activity.count != self.seen

    def waiting(self) -> bool:
        """Not sent, not hurried, and the page has not (as far as we know) changed since."""
        return not self.sent and not self.go.is_set() and not self.moved()

    def keep(self) -> None:
        if self.activity is not None and not self.sent:
            self.activity.kept.add(self)

    def hurry(self) -> asyncio.Task[Found | None]:
        self.go.set()
        return self.task

    async def _run(self, link: Link, tab_id: int | None) -> Found | None:
        try:
            await self._quiet()
            if self.moved() and not self.go.is_set():
                log.debug("read after a screenshot dropped: the page may have changed")
                return None
            self.sent = True
        finally:
            if self.activity is not None:
                self.activity.kept.discard(self)
        return await _discover(link, tab_id)

    async def _quiet(self) -> None:
        """Until hurried, or no command came for DEFER_S, or the page may have changed (bounded
        by MAX_WAIT_S)."""
        activity, loop = self.activity, asyncio.get_running_loop()
        deadline = self.since + MAX_WAIT_S
        while activity is not None and not self.go.is_set() and not self.moved():
            until = min(max(self.since, activity.last) + DEFER_S, deadline)
            if loop.time() >= until:
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.go.wait(), until - loop.time())


async def _discover(link: Link, tab_id: int | None) -> Found | None:
    """The ``discover`` result now, or None when the page could not answer (the image stands)."""
    # Names and texts only: whether something covers an element is not asked.
    args = DiscoverArgs(tab_id=tab_id, target="all_visible", max=MAX_ELEMENTS, covered=False)
    asked = args.model_dump(mode="python", exclude_unset=True)
    try:
        # An unchanged page answers `same`: the list it sent last time, without sending it.
        return (await label_memory.discover(link, asked, dict, TIMEOUT_S)).result
    except Exception as exc:
        log.info("discover after a screenshot failed: %s", exc)
        return None
