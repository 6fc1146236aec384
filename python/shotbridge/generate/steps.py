"""From a recorded timeline to replayable steps.

A step is a navigation (``goto``/``reload``) or an action, and knows its ``origin``: the user, a
tool (an MCP ``interact``/``navigate`` of this session: the host's attribution, recorded on each
entry) or the page. A navigation a tool asked for is always a step of its own, however soon it
follows a click. Navigations caused by an action (a link click, a submit) are not steps: the
action's step notes where it led (``navigates_to``), so the replay waits for that URL instead of
jumping there. One gesture is one step: Enter in a form and the click the browser then makes up on
its submit button replay as the Enter alone; form submits follow the click or Enter that caused
them and are only replayed when nothing did (a script). Errors, network requests and screenshots
are attached to the step they followed. URL changes the page made on its own (``by_page``) are
no steps.

Steps are built from :func:`redacted` entries: URLs, titles, names, typed values and error
messages lose any secret (:mod:`shotbridge.generate.redact`) before a generator sees them. Request
bodies
are left to :mod:`shotbridge.generate.fixtures`, which sanitises them by structure.
"""

from __future__ import annotations

from pathlib import PurePath
from typing import Any, Literal

from pydantic import Field

from shotbridge.generate import redact
from shotbridge.generate.encode import valid
from shotbridge.generate.masks import smallest
from shotbridge.wire.emulate import Emulation
from shotbridge.wire.model import Model
from shotbridge.wire.recording import ShotMeta, TimelineResult
from shotbridge.wire.timeline import (
    ActionEntry,
    EmulateEntry,
    ErrorEntry,
    NavEntry,
    NetworkEntry,
    ObservationEntry,
    ShotEntry,
    TabEntry,
    TimelineEntry,
    WaitFor,
)

NAV_FOLLOWS_ACTION_S = 3.0  # unattributed: a navigation this soon after a click/Enter is its result
SUBMIT_FOLLOWS_S = 1.0
SYNTHETIC_CLICK_S = 0.3  # a detail-less click on a submit button this soon after Enter is Enter's
# Clicks whose meaning is where they land, not what they land on: replayed at the same offset.
POSITIONAL_TAGS = frozenset({"canvas", "svg", "img", "video", "iframe", "embed", "object", "area"})
POSITIONAL_ROLES = frozenset({"application", "img", "slider"})
# Two quiet observations of a page at least this far apart tell what moves on it: a 1 Hz clock
# ticks between them (the host looks 0.3 s and 1.3 s after each load).
WATCHED_S = 1.0


class Viewport(Model):
    """CSS px, as the extension's ``page_info`` reported them (ints stay ints in the report)."""

    width: int | float | None = None
    height: int | float | None = None


class Environment(Model):
    """Where the session was recorded: the host's ``status`` and the page's ``page_info``."""

    user_agent: str | None = None
    extension_version: str | None = None
    viewport: Viewport | None = None
    device_pixel_ratio: int | float | None = None


class Session(Model):
    """What the generators read: the host's ``timeline`` export, plus images when needed."""

    session: str = ""
    started: float = 0.0
    entries: list[TimelineEntry] = Field(default_factory=list)
    screenshots: list[ShotMeta] = Field(default_factory=list)
    images: dict[int, bytes] = Field(default_factory=dict)  # full JPEGs of kept screenshots
    thumbnails: dict[int, bytes] = Field(default_factory=dict)
    environment: Environment = Field(default_factory=Environment)

    @classmethod
    def from_export(cls, export: TimelineResult | dict[str, Any], **extra: Any) -> Session:
        """From the host's ``timeline`` result, or its wire form (what a bus client holds)."""
        t = export if isinstance(export, TimelineResult) else TimelineResult.model_validate(export)
        return cls(
            session=t.session,
            started=t.started,
            entries=t.entries,
            screenshots=t.screenshots,
            **extra,
        )

    def of(self, kind: type[Any]) -> list[Any]:
        return [e for e in self.entries if isinstance(e, kind)]


class Step(Model):
    index: int  # 1-based
    kind: Literal["goto", "reload", "action", "emulate", "close"]
    origin: Literal["user", "tool", "page"] = "user"
    url: str  # the page the step happens on (goto: where it goes)
    seq: int
    time: float
    action: ActionEntry | None = None
    emulation: Emulation | None = None  # emulate: the tab's settings after it (empty: reset)
    keep_open: bool = False  # close: later steps follow, so the replay's one page stays open
    navigates_to: str | None = None  # the URL the action led to
    errors: list[ErrorEntry] = Field(default_factory=list)
    requests: list[NetworkEntry] = Field(default_factory=list)
    screenshot_ids: list[int] = Field(default_factory=list)

    @property
    def effect(self) -> Literal["navigation", "write", "content", "none"]:
        """What the step did: led to another page, sent data, changed what is shown, or none."""
        if self.kind in ("emulate", "close"):
            return "content" if self.kind == "emulate" else "none"
        if self.kind != "action" or self.navigates_to:
            return "navigation"
        if any(r.method.upper() not in ("GET", "HEAD", "OPTIONS") for r in self.requests):
            return "write"
        return "content" if self.changes_content else "none"

    @property
    def position(self) -> dict[str, float] | None:
        """Where in its element a click must land, for position-dependent targets (canvas)."""
        a = self.action
        if a is None or a.kind != "click" or not a.position:
            return None
        if a.target.tag in POSITIONAL_TAGS or a.target.role in POSITIONAL_ROLES:
            return {"x": float(a.position.get("x", 0)), "y": float(a.position.get("y", 0))}
        return None

    @property
    def changes_content(self) -> bool:
        """Worth a visual assertion: navigations and actions that change what the page shows."""
        if self.kind == "close":
            return False
        if self.kind != "action" or self.action is None:
            return True
        return bool(self.navigates_to) or changes_content(self.action)

    def describe(self) -> str:
        """One line for humans: 'Click button "Save"'."""
        if self.kind == "goto":
            return f"Open {self.url}"
        if self.kind == "reload":
            return f"Reload {self.url}"
        if self.kind == "emulate":
            return describe_emulation(self.emulation or Emulation())
        if self.kind == "close":
            return "Close the tab"
        assert self.action is not None
        return describe_action(self.action) + (
            f" (goes to {self.navigates_to})" if self.navigates_to else ""
        )


def redacted(entry: TimelineEntry) -> TimelineEntry:
    """A copy of ``entry`` whose page text (not its request bodies) holds no secret."""

    # Repaired first (lone surrogates → U+FFFD): redaction re-encodes what it replaces as UTF-8.
    def text(value: str, *, pairs: bool = True) -> str:
        return redact.text(valid(value), pairs=pairs)

    def url(value: str) -> str:
        return redact.url(valid(value))

    update: dict[str, Any] = {"url": url(entry.url)}
    if isinstance(entry, NavEntry):
        update["title"] = text(entry.title)
    elif isinstance(entry, ActionEntry):
        t = entry.target
        fields = ("selector", "name", "label", "placeholder", "testid", "text")
        ui = {f: text(getattr(t, f), pairs=False) for f in fields}  # UI copy, not data
        ui["selector"] = redact.selector(ui["selector"], t.type)  # a field's value is data
        update["target"] = t.model_copy(update=ui)
        for f in ("value", "option", "title"):
            if getattr(entry, f) is not None:
                update[f] = text(getattr(entry, f))
        if entry.values is not None:
            update["values"] = [text(v) for v in entry.values]
        if entry.wait is not None and entry.wait.text is not None:
            update["wait"] = entry.wait.model_copy(update={"text": text(entry.wait.text)})
    elif isinstance(entry, ErrorEntry):
        update |= {"message": text(entry.message), "source": url(entry.source)}
    elif isinstance(entry, NetworkEntry) and entry.error is not None:
        update["error"] = text(entry.error)
    elif isinstance(entry, ObservationEntry):
        update["texts"] = {k: text(v) for k, v in entry.texts.items()}
    return entry.model_copy(update=update)


def changes_content(a: ActionEntry) -> bool:
    """Whether an action may change what the page shows (typing only changes its own field)."""
    if a.kind in ("select", "press", "submit", "upload", "drag"):
        return True
    return a.kind == "click" and not _is_text_field(a)


def _is_text_field(a: ActionEntry) -> bool:
    t = a.target
    return t.tag == "textarea" or (
        t.tag == "input" and t.type not in ("checkbox", "radio", "submit", "button", "reset")
    )


def target_words(a: ActionEntry) -> str:
    t = a.target
    what = t.role or t.tag or "element"
    name = t.name or t.label or t.text or t.placeholder
    return f'{what} "{name}"' if name else f"{what} {t.selector}".strip()


def describe_action(a: ActionEntry) -> str:
    where = target_words(a)
    if a.kind == "fill":
        value = "<redacted>" if a.secret else repr(a.value or "")
        return f"Type {value} into {where}"
    if a.kind == "select":
        chosen = ", ".join(repr(v) for v in a.values) if a.values else repr(a.option or a.value)
        return f"Select {chosen} in {where}"
    if a.kind == "upload":
        names = ", ".join(PurePath(f).name for f in a.files or [])
        return f"Upload {names or 'no file'} to {where}"
    if a.kind == "drag":
        to = target_words(a.model_copy(update={"target": a.to})) if a.to else "a point"
        return f"Drag {where} to {to}"
    if a.kind == "wait":
        return f"Wait until {describe_wait(a.wait or WaitFor())}"
    if a.kind == "press":
        return f"Press {a.key or 'Enter'} in {where}"
    if a.kind == "submit":
        return f"Submit {where}"
    if a.checked is not None:
        return f"{'Check' if a.checked else 'Uncheck'} {where}"
    return f"Click {where}"


def describe_wait(w: WaitFor) -> str:
    """'the text "Saved" appears', 'the network is quiet'..."""
    if w.network:
        return "the network is quiet"
    if w.url is not None:
        return f"the URL {'no longer matches' if w.gone else 'matches'} {w.url!r}"
    what = f"the text {w.text!r}" if w.text is not None else f"{w.selector}"
    return f"{what} {'disappears' if w.gone else 'appears'}"


def describe_emulation(e: Emulation) -> str:
    """'Emulate iPhone 15 (393×659, scale 3, mobile, touch, dark)', or 'Stop emulating'."""
    if e.empty:
        return "Stop emulating a device"
    bits = [f"{e.width}×{e.height}" if e.width and e.height else ""]
    bits += [f"scale {e.device_scale_factor:g}" if e.device_scale_factor else ""]
    bits += [n for n, on in (("mobile", e.mobile), ("touch", e.touch)) if on]
    bits += [v or "" for v in (e.color_scheme, e.reduced_motion and f"motion {e.reduced_motion}")]
    inner = ", ".join(b for b in bits if b)
    return f"Emulate {e.preset or 'a device'}" + (f" ({inner})" if inner else "")


def build_steps(session: Session) -> list[Step]:
    steps: list[Step] = []
    last_trigger: Step | None = None  # the latest click/press/submit step that may navigate
    for e in sorted(map(redacted, session.entries), key=lambda x: x.seq):
        if isinstance(e, NavEntry) and e.by_page:
            continue  # the page changed its URL on its own: it will again when replayed
        if isinstance(e, NavEntry):
            if last_trigger is not None and _caused_by(e, last_trigger, steps):
                last_trigger.navigates_to = e.url
                continue
            kind: Literal["goto", "reload"] = (
                "reload" if steps and steps[-1].url == e.url and _is_reload(steps) else "goto"
            )
            origin: Literal["user", "tool", "page"] = "tool" if e.origin == "tool" else "user"
            if e.origin == "tool_action":  # followed a tool's action we could not tie it to
                origin = "page"
            steps.append(Step(index=0, kind=kind, origin=origin, url=e.url, seq=e.seq, time=e.time))
            last_trigger = None
        elif isinstance(e, EmulateEntry | TabEntry):
            steps.append(_tool_step(e))
            last_trigger = None
        elif isinstance(e, ActionEntry):
            if e.kind == "submit" and _submit_covered(steps, e):
                continue
            if e.kind == "click" and _synthetic_submit_click(steps, e):
                continue
            if e.kind == "fill" and _focus_click(steps, e):
                steps.pop()  # the click only focused the field: fill() focuses it too
            if not steps or steps[-1].kind == "close":  # an open page, or the next tab's
                steps.append(Step(index=0, kind="goto", url=e.url, seq=e.seq - 1, time=e.time))
            who: Literal["user", "tool", "page"] = "tool" if e.origin == "tool" else "user"
            step = Step(
                index=0, kind="action", origin=who, url=e.url, seq=e.seq, time=e.time, action=e
            )
            steps.append(step)
            last_trigger = step if e.kind in ("click", "press", "submit") else None
        elif steps and isinstance(e, ErrorEntry):
            steps[-1].errors.append(e)
        elif steps and isinstance(e, NetworkEntry):
            steps[-1].requests.append(e)
    for i, step in enumerate(steps, start=1):
        step.index = i
        step.keep_open = step.kind == "close" and i < len(steps)
    _attach_screenshots(session, steps)
    return steps


def _tool_step(e: EmulateEntry | TabEntry) -> Step:
    """The tool's emulation change or tab close, a step of its own."""
    if isinstance(e, EmulateEntry):
        return Step(
            index=0,
            kind="emulate",
            origin="tool",
            url=e.url,
            seq=e.seq,
            time=e.time,
            emulation=e.emulation,
        )
    return Step(index=0, kind="close", origin="tool", url=e.url, seq=e.seq, time=e.time)


def _caused_by(nav: NavEntry, trigger: Step, steps: list[Step]) -> bool:
    """Whether ``nav`` is the result of ``trigger`` (the latest click/Enter/submit step).

    A navigation a tool asked for never is, however soon it comes (agents act within seconds).
    One the host saw follow a tool's action is, whenever it lands. Unattributed ones (the user's
    own browsing, older recordings) are when they come within ``NAV_FOLLOWS_ACTION_S``.
    """
    if trigger.navigates_to is not None or trigger is not steps[-1] or nav.origin == "tool":
        return False
    if nav.origin == "tool_action":
        return True
    return nav.time - trigger.time <= NAV_FOLLOWS_ACTION_S


def _synthetic_submit_click(steps: list[Step], click: ActionEntry) -> bool:
    """Enter in a form makes the browser click its submit button (``detail`` 0, at once): that
    click is part of the Enter gesture, and replaying it after the Enter finds a form gone."""
    prev = steps[-1].action if steps else None
    if prev is None or prev.kind != "press" or (prev.key or "Enter") != "Enter":
        return False
    if click.detail not in (None, 0) or click.time - prev.time > SYNTHETIC_CLICK_S:
        return False
    t = click.target
    return (t.tag == "button" and t.type in ("", "submit")) or (
        t.tag == "input" and t.type in ("submit", "image")
    )


def _is_reload(steps: list[Step]) -> bool:
    # Same URL again with no action between: a reload (goto would do the same, but say so).
    return steps[-1].kind in ("goto", "reload")


def _focus_click(steps: list[Step], fill: ActionEntry) -> bool:
    prev = steps[-1].action if steps else None
    return (
        prev is not None
        and prev.kind == "click"
        and _is_text_field(prev)
        and prev.target.selector == fill.target.selector
        and not steps[-1].errors
        and not steps[-1].requests
    )


def _submit_covered(steps: list[Step], submit: ActionEntry) -> bool:
    """A submit right after a click or Enter was caused by it: replaying both submits twice."""
    if not steps or steps[-1].action is None:
        return False
    prev = steps[-1].action
    return prev.kind in ("click", "press") and submit.time - prev.time <= SUBMIT_FOLLOWS_S


def _attach_screenshots(session: Session, steps: list[Step]) -> None:
    by_action = {s.action.id: s for s in steps if s.action is not None}
    for shot in session.of(ShotEntry):
        step = by_action.get(shot.action_id or "") if shot.trigger == "action" else None
        if step is None:  # the latest step before the screenshot
            step = next((s for s in reversed(steps) if s.seq < shot.seq), None)
        if step is not None:
            step.screenshot_ids.append(shot.screenshot_id)


def failing_step(steps: list[Step]) -> Step | None:
    """The first step after which the page reported an error; else the last step."""
    return next((s for s in steps if s.errors), steps[-1] if steps else None)


def dynamic_selectors(session: Session) -> dict[str, set[str]]:
    """Per URL, selectors whose text changed between two observations of that page with no user
    action in between: clocks, counters, ids — content a screenshot comparison must mask."""
    return _motion(session)[0]


def watched_pages(session: Session) -> set[str]:
    """URLs observed quietly for at least ``WATCHED_S``: what moves on them is known. A page the
    agent left sooner (a tool navigation a moment after the load) may hide a clock."""
    return _motion(session)[1]


def _motion(session: Session) -> tuple[dict[str, set[str]], set[str]]:
    out: dict[str, set[str]] = {}
    watched: set[str] = set()
    first: dict[str, ObservationEntry] = {}  # the first observation of each page in this span
    last: dict[str, ObservationEntry] = {}
    for e in sorted(map(redacted, session.entries), key=lambda x: x.seq):
        if isinstance(e, NavEntry) or (isinstance(e, ActionEntry) and changes_content(e)):
            last.clear()  # what the user did may change the page: compare only quiet spans
            first.clear()
            continue
        if not isinstance(e, ObservationEntry):
            continue
        prev = last.get(e.url)
        if prev is not None:
            before = prev.texts
            changed = {sel for sel, text in e.texts.items() if before.get(sel, text) != text}
            changed = smallest(changed, e.texts)  # the clock, not the header holding it
            if changed:
                out.setdefault(e.url, set()).update(changed)
        start = first.setdefault(e.url, e)
        if e.time - start.time >= WATCHED_S - 0.05:  # timer jitter of the host's second look
            watched.add(e.url)
        last[e.url] = e
    return out, watched
