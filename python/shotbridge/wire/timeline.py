"""The session timeline: what happened in the tracked tab, in arrival order.

Entries come from extension events (``nav``, ``action``, ``page_error``, ``network``) and from the
host itself (``screenshot``, ``observation``). Every entry has a monotonic ``seq``; user actions
also get an id (``a1``, ``a2``…) that screenshots refer to. The models are shared with the
generators (``shotbridge.generate``), which read a timeline exported over the bus.
"""

from __future__ import annotations

import itertools
import re
import secrets
import time
from collections import Counter, deque
from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter, ValidationError

from shotbridge.wire.emulate import Emulation
from shotbridge.wire.model import Model
from shotbridge.wire.network import Header

BODY_LIMIT = 10_000
# Entries kept per kind: each kind is evicted only by its own kind, so a page that floods errors,
# requests or URL changes can never push the user's and the tool's actions and navigations out of
# the record. "page_nav": same-document URL changes the page made with no gesture before them.
BUDGETS: dict[str, int] = {
    "action": 1000,
    "nav": 500,
    "page_nav": 100,
    "screenshot": 500,
    "error": 200,
    "network": 300,
    "observation": 60,  # each holds up to ~100 texts
    "emulate": 100,
    "tab": 100,
}
# The first entries of a kind that a flood never evicts (the first error is usually the bug); past
# them the latest are kept, and ``Timeline.dropped`` counts what went.
KEEP_FIRST: dict[str, int] = {"error": 150}

ActionKind = Literal["click", "fill", "select", "press", "submit", "upload", "drag", "wait"]
Trigger = Literal["navigation", "action", "error", "explicit"]
# Who made an action or navigation happen (the host's session attribution,
# shotbridge.host.sessions):
# "user" (nobody's tool was acting), "tool" (a tool did it, or asked for this navigation),
# "tool_action" (a navigation that followed a tool's click or key press). None: not known.
Origin = Literal["user", "tool", "tool_action"]


class Unique(Model):
    """Whether each locator matched exactly one element when the action happened."""

    role: bool = False
    label: bool = False
    testid: bool = False


class Target(Model):
    """The element an action was done on, described for resilient locators."""

    selector: str = ""
    tag: str = ""
    type: str = ""  # input type
    role: str = ""
    name: str = ""
    name_from_placeholder: bool = False
    label: str = ""
    placeholder: str = ""
    testid: str = ""
    text: str = ""
    unique: Unique = Field(default_factory=Unique)


class _Entry(Model):
    seq: int = 0
    time: float = Field(default_factory=time.time)  # epoch seconds
    url: str = ""


class NavEntry(_Entry):
    type: Literal["nav"] = "nav"
    title: str = ""
    complete: bool = False  # the load finished (a commit alone is not)
    origin: Origin | None = None
    # A same-document URL change (pushState…) the page made with no user or tool gesture before
    # it: context, never a step. Those of one span between steps are one entry; ``count`` says how
    # many there were and ``url`` is the latest.
    by_page: bool = False
    count: int = 1


class WaitFor(Model):
    """What a wait waited for (one of text, selector, url, network) and how long it might."""

    text: str | None = None
    selector: str | None = None
    url: str | None = None
    network: bool = False
    gone: bool = False
    timeout_ms: int = 5000


class ActionEntry(_Entry):
    type: Literal["action"] = "action"
    id: str = ""  # a1, a2, …
    kind: ActionKind
    target: Target = Field(default_factory=Target)
    value: str | None = None  # fill/select; "<redacted>" for secret fields
    secret: bool = False
    key: str | None = None  # press
    checked: bool | None = None  # click on a checkbox/radio: its state after the click
    option: str | None = None  # select: the chosen option's text
    via: str | None = None  # submit: "submitter" (a button / Enter) or "script"
    title: str = ""
    origin: Origin | None = None
    # click: the mouse event's detail (0 for a click the browser made up, e.g. Enter's submit)
    # and where in the element it landed (CSS px from its top-left corner), for canvases/maps.
    detail: int | None = None
    position: dict[str, float] | None = None
    # The tool's select (several options), upload, drag and wait (recorded by the page library).
    values: list[str] | None = None  # select: every option chosen, when the <select> is multiple
    files: list[str] | None = None  # upload: the paths set on the input
    to: Target | None = None  # drag: the element it ended on
    from_point: dict[str, float] | None = None  # drag: both ends, viewport CSS px
    to_point: dict[str, float] | None = None
    by_points: bool = False  # drag: aimed at points, so replayed as mouse moves
    wait: WaitFor | None = None


class ErrorEntry(_Entry):
    type: Literal["error"] = "error"
    kind: Literal["console", "exception", "rejection"] = "console"
    message: str = ""
    source: str = ""
    line: int = 0
    column: int = 0
    # Reported from the page's own world: the text is the page's. ``trusted`` only says the
    # browser raised the event (an uncaught error), not that a console call is genuine.
    trusted: bool = False
    # The same error again before the next step is this entry again: how often, and the last time.
    count: int = 1
    last_time: float | None = None


class NetworkEntry(_Entry):
    type: Literal["network"] = "network"
    api: str = "fetch"
    method: str = "GET"
    status: int = 0
    request_body: str | None = None
    response_body: str | None = None
    content_type: str | None = None
    duration_ms: float | None = None
    error: str | None = None
    # As the page's fetch/XHR saw them (cut; credentials' values already "<redacted>").
    request_headers: list[Header] | None = None
    response_headers: list[Header] | None = None
    trusted: bool = False  # seen by the page's fetch/XHR hook: what the page reported
    count: int = 1  # the identical request (and answer) again before the next step
    last_time: float | None = None


class EmulateEntry(_Entry):
    """The tool changed the tab's emulation: its settings after the change (empty: reset)."""

    type: Literal["emulate"] = "emulate"
    emulation: Emulation = Field(default_factory=Emulation)
    origin: Origin | None = "tool"


class TabEntry(_Entry):
    """The tool closed a tab (``url``: the page it showed)."""

    type: Literal["tab"] = "tab"
    action: Literal["close"] = "close"
    tab_id: int = 0
    origin: Origin | None = "tool"


class TriggerNote(Model):
    """One reason for an automatic screenshot (several may be merged into one)."""

    trigger: Trigger
    action_id: str | None = None
    time: float = 0.0  # epoch seconds


class ShotEntry(_Entry):
    type: Literal["screenshot"] = "screenshot"
    screenshot_id: int
    trigger: Trigger = "explicit"  # an automatic one: the latest of ``triggers``
    action_id: str | None = None
    bytes: int = 0
    width: int = 0
    height: int = 0
    # Automatic screenshots: every trigger merged into this one, in order, and whether the page
    # had settled (False: taken when the wait ran out on a page that kept moving).
    triggers: list[TriggerNote] = Field(default_factory=list)
    settled: bool | None = None


class ObservationEntry(_Entry):
    """Visible texts of the page (selector → text) at one moment, to tell dynamic content."""

    type: Literal["observation"] = "observation"
    screenshot_id: int | None = None
    texts: dict[str, str] = Field(default_factory=dict)


TimelineEntry = Annotated[
    NavEntry
    | ActionEntry
    | ErrorEntry
    | NetworkEntry
    | ShotEntry
    | ObservationEntry
    | EmulateEntry
    | TabEntry,
    Field(discriminator="type"),
]
ENTRY = TypeAdapter(TimelineEntry)
ENTRIES = TypeAdapter(list[TimelineEntry])
ORIGINS = ("user", "tool", "tool_action")


def _seconds(value: Any) -> float:
    """Extension times are epoch milliseconds; ours are seconds."""
    if isinstance(value, int | float) and value > 0:
        return value / 1000 if value > 1e11 else float(value)
    return time.time()


def _cut(value: Any, limit: int = BODY_LIMIT) -> str | None:
    return None if value is None else valid_text(str(value)[:limit])


_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_text(s: str) -> str:
    """``s`` with every lone UTF-16 surrogate replaced by U+FFFD (so it can always be encoded).

    JSON from the extension may carry ``"\\ud83d"`` alone (a page cut an emoji in half); a Python
    str holding it cannot be written as UTF-8, and one such entry would break every export.
    """
    return s if s.isascii() else _SURROGATE.sub("\ufffd", s)


def repair(value: Any) -> Any:
    """``value`` (decoded JSON) with every string, key included, made valid Unicode."""
    if isinstance(value, str):
        return valid_text(value)
    if isinstance(value, dict):
        return {repair(k): repair(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [repair(v) for v in value]
    return value


def bucket(entry: TimelineEntry) -> str:
    """The budget an entry counts against (``BUDGETS``)."""
    if isinstance(entry, NavEntry) and entry.by_page:
        return "page_nav"
    return entry.type


def repeat_key(entry: TimelineEntry) -> tuple[Any, ...] | None:
    """What makes a page event the same as an earlier one (None: never merged).

    Errors and requests must match in every field the page reported; a page's own URL changes
    are all one (a pushState loop is one fact, whatever URLs it writes).
    """
    if isinstance(entry, ErrorEntry):
        return ("error", entry.kind, entry.message, entry.source, entry.line, entry.column)
    if isinstance(entry, NetworkEntry):
        return (
            "network",
            entry.api,
            entry.method,
            entry.url,
            entry.status,
            entry.request_body,
            entry.response_body,
            entry.content_type,
            entry.error,
        )
    if isinstance(entry, NavEntry) and entry.by_page:
        return ("page_nav",)
    return None


class Timeline:
    """Bounded, ordered entries of one host's session (see ``BUDGETS``, ``KEEP_FIRST``).

    Page events (errors, requests, the page's own URL changes) that repeat between two steps are
    one entry with a ``count``; ``dropped`` counts, per budget, the events evicted for room.
    """

    def __init__(
        self, budgets: dict[str, int] | None = None, keep_first: dict[str, int] | None = None
    ) -> None:
        self.session = time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(2)
        self.started = time.time()
        self._seq = itertools.count(1)
        self._action_ids = itertools.count(1)
        self.entries: deque[TimelineEntry] = deque()
        self.budgets = {**BUDGETS, **(budgets or {})}
        self.keep_first = {**KEEP_FIRST, **(keep_first or {})}
        self.counts: Counter[str] = Counter()
        self.dropped: Counter[str] = Counter()
        # Page events since the last step, by ``repeat_key``: a repeat is counted on them.
        self._span: dict[tuple[Any, ...], TimelineEntry] = {}
        self._tool_loaded = False  # a navigation the tool asked for came since the last action

    @property
    def observations(self) -> int:
        return self.counts["observation"]

    def add(self, entry: TimelineEntry) -> TimelineEntry:
        key = repeat_key(entry)
        if key is None and (
            isinstance(entry, ActionEntry | EmulateEntry | TabEntry)
            or (isinstance(entry, NavEntry) and not entry.by_page)
        ):
            self._span.clear()  # a step: what the page does next belongs to it
            self._tool_loaded = isinstance(entry, NavEntry) and entry.origin == "tool"
        entry.seq = next(self._seq)
        if isinstance(entry, ActionEntry) and not entry.id:
            entry.id = f"a{next(self._action_ids)}"
        self.entries.append(entry)
        if key is not None:
            self._span[key] = entry
        kind = bucket(entry)
        self.counts[kind] += 1
        if self.counts[kind] > self.budgets.get(kind, 500):
            self._drop_oldest(kind)
        return entry

    def _repeat(self, entry: TimelineEntry) -> TimelineEntry | None:
        """The earlier entry ``entry`` repeats (now counted once more), or None."""
        key = repeat_key(entry)
        prev = self._span.get(key) if key is not None else None
        if not isinstance(prev, ErrorEntry | NetworkEntry):
            return None
        prev.count += 1
        prev.last_time = entry.time
        return prev

    def _drop_oldest(self, kind: str) -> None:
        """Evict the oldest entry of ``kind`` past the first ``keep_first[kind]`` of it."""
        skip = self.keep_first.get(kind, 0)
        for e in self.entries:
            if bucket(e) != kind:
                continue
            if skip:
                skip -= 1
                continue
            self.entries.remove(e)
            self.counts[kind] -= 1
            self.dropped[kind] += getattr(e, "count", 1)  # events, repeats included
            key = repeat_key(e)
            if key is not None and self._span.get(key) is e:
                del self._span[key]
            return

    # ---- from extension events ---------------------------------------------------------------

    def from_event(self, name: str, data: dict[str, Any]) -> TimelineEntry | None:
        """The entry for one extension event (None for events the timeline does not keep)."""
        try:
            entry = self._parse(name, repair(data))
        except ValidationError:
            return None
        if entry is None:
            return None
        if isinstance(entry, NavEntry):
            if entry.by_page and entry.origin == "tool" and not self._tool_loaded:
                # The tool asked for a same-document URL (a #fragment): its step. Once its
                # request made a load, what the page does with the URL next is the page's.
                entry.by_page = False
            # A load's completion joins the latest navigation of its URL, whoever made it.
            merged = self._merge_nav(entry) if entry.complete or not entry.by_page else None
            if merged is None and entry.by_page:
                merged = self._page_nav(entry)
            if merged is not None:
                return merged
        return self._repeat(entry) or self.add(entry)

    def _parse(self, name: str, data: dict[str, Any]) -> TimelineEntry | None:
        when = _seconds(data.get("time"))
        if name == "nav":
            origin = data.get("origin") if data.get("origin") in ORIGINS else None
            return NavEntry(
                time=when,
                url=str(data.get("url") or ""),
                title=str(data.get("title") or ""),
                complete=data.get("phase") == "complete",
                origin=origin,
                by_page=data.get("by_page") is True,
            )
        if name == "action":
            return ActionEntry.model_validate({**data, "time": when, "id": ""})
        if name == "page_error":
            return ErrorEntry.model_validate({**data, "time": when, "url": data.get("url", "")})
        if name == "network":
            return NetworkEntry.model_validate(
                {
                    **data,
                    "time": when,
                    "request_body": _cut(data.get("request_body")),
                    "response_body": _cut(data.get("response_body")),
                }
            )
        return None

    def _merge_nav(self, nav: NavEntry) -> NavEntry | None:
        """A load's commit and completion (and repeated updates) make one navigation entry.

        Same URL as the last navigation counts as new only after a user action, or when a load
        starts again after one completed (a reload), or after the page's own URL changes. The
        entry ``nav`` went into, or None when it is a new one.
        """
        prev = self.last_nav
        if prev is None or prev.url != nav.url:
            return None
        if any(isinstance(e, ActionEntry) and e.seq > prev.seq for e in self.entries):
            return None
        if not nav.complete and (prev.complete or prev.by_page):
            return None
        prev.complete = prev.complete or nav.complete
        prev.title = nav.title or prev.title
        prev.origin = prev.origin or nav.origin
        return prev

    def _page_nav(self, nav: NavEntry) -> NavEntry | None:
        """The page's own URL changes since the last step are one entry: the latest URL, and how
        many changes (commits) it made. None when this is the first of the span."""
        prev = self._span.get(("page_nav",))
        if not isinstance(prev, NavEntry):
            return None
        if nav.complete:
            prev.complete = True
        else:
            prev.count += 1
            prev.complete = False
        prev.url = nav.url
        prev.title = nav.title or prev.title
        return prev

    # ---- queries ---------------------------------------------------------------------------

    @property
    def last_nav(self) -> NavEntry | None:
        return next((e for e in reversed(self.entries) if isinstance(e, NavEntry)), None)

    @property
    def last_action(self) -> ActionEntry | None:
        return next((e for e in reversed(self.entries) if isinstance(e, ActionEntry)), None)

    @property
    def current_url(self) -> str:
        nav = self.last_nav
        return nav.url if nav else ""

    def select(self, since: int = 0, kinds: list[str] | None = None) -> list[TimelineEntry]:
        """The entries after seq ``since``, of ``kinds`` (all when None or empty), in order."""
        return [e for e in self.entries if e.seq > since and (not kinds or e.type in kinds)]
