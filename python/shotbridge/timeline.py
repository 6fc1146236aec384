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

from shotbridge.protocol import Model

BODY_LIMIT = 10_000
# Entries kept per kind: each kind is evicted only by its own kind, so a page that floods errors
# or requests can never push the user's own actions and navigations out of the record.
BUDGETS: dict[str, int] = {
    "action": 1000,
    "nav": 500,
    "screenshot": 500,
    "error": 200,
    "network": 300,
    "observation": 60,  # each holds up to ~100 texts
}

ActionKind = Literal["click", "fill", "select", "press", "submit"]
Trigger = Literal["navigation", "action", "error", "explicit"]
# Who made an action or navigation happen (the host's session attribution, shotbridge.sessions):
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
    trusted: bool = False  # seen by the page's fetch/XHR hook: what the page reported


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
    NavEntry | ActionEntry | ErrorEntry | NetworkEntry | ShotEntry | ObservationEntry,
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


class Timeline:
    """Bounded, ordered entries of one host's session (see ``BUDGETS``)."""

    def __init__(self, budgets: dict[str, int] | None = None) -> None:
        self.session = time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(2)
        self.started = time.time()
        self._seq = itertools.count(1)
        self._action_ids = itertools.count(1)
        self.entries: deque[TimelineEntry] = deque()
        self.budgets = {**BUDGETS, **(budgets or {})}
        self.counts: Counter[str] = Counter()

    @property
    def observations(self) -> int:
        return self.counts["observation"]

    def add(self, entry: TimelineEntry) -> TimelineEntry:
        entry.seq = next(self._seq)
        if isinstance(entry, ActionEntry) and not entry.id:
            entry.id = f"a{next(self._action_ids)}"
        self.entries.append(entry)
        self.counts[entry.type] += 1
        if self.counts[entry.type] > self.budgets.get(entry.type, 500):
            self._drop_oldest(entry.type)
        return entry

    def _drop_oldest(self, kind: str) -> None:
        for e in self.entries:
            if e.type == kind:
                self.entries.remove(e)
                self.counts[kind] -= 1
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
        if isinstance(entry, NavEntry) and self._merge_nav(entry):
            return self.last_nav
        return self.add(entry)

    def _parse(self, name: str, data: dict[str, Any]) -> TimelineEntry | None:
        when = _seconds(data.get("time"))
        if name == "nav":
            return NavEntry(
                time=when,
                url=str(data.get("url") or ""),
                title=str(data.get("title") or ""),
                complete=data.get("phase") == "complete",
                origin=data.get("origin") if data.get("origin") in ORIGINS else None,
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

    def _merge_nav(self, nav: NavEntry) -> bool:
        """A load's commit and completion (and repeated updates) make one navigation entry.

        Same URL as the last navigation counts as new only after a user action, or when a load
        starts again after one completed (a reload).
        """
        prev = self.last_nav
        if prev is None or prev.url != nav.url:
            return False
        if any(isinstance(e, ActionEntry) and e.seq > prev.seq for e in self.entries):
            return False
        if prev.complete and not nav.complete:
            return False
        prev.complete = prev.complete or nav.complete
        prev.title = nav.title or prev.title
        prev.origin = prev.origin or nav.origin
        return True

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

    def export(
        self, since: int = 0, kinds: list[str] | None = None, bodies: bool = True
    ) -> list[dict[str, Any]]:
        out = []
        for e in self.entries:
            if e.seq <= since or (kinds and e.type not in kinds):
                continue
            d = e.model_dump()
            if not bodies and isinstance(e, NetworkEntry):
                d.pop("request_body", None)
                d.pop("response_body", None)
            out.append(d)
        return out
