"""A record pages cannot flood, in the host: per-kind budgets keep every step and the first errors,
page events that repeat between two steps are one entry with a count, and the URL changes a page
makes on its own are context, never steps. Table and hypothesis tests; the browser half (what
counts as trusted, the service worker's verdicts) is tests/e2e/test_security_record.py.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from shotbridge.generate import playwright, report
from shotbridge.generate.steps import Session, build_steps
from shotbridge.host.recording import Recorder
from shotbridge.host.shots import ShotRegistry
from shotbridge.wire.recording import TimelineResult
from shotbridge.wire.timeline import (
    BUDGETS,
    KEEP_FIRST,
    ActionEntry,
    ErrorEntry,
    NavEntry,
    NetworkEntry,
    Timeline,
    bucket,
    repeat_key,
)

URL = "http://a/app"


def nav(url: str = URL, phase: str = "commit", **extra: Any) -> dict[str, Any]:
    return {"phase": phase, "url": url, **extra}


def act(kind: str = "click", selector: str = "#b", **extra: Any) -> dict[str, Any]:
    return {"kind": kind, "target": {"selector": selector, "tag": "button"}, "url": URL, **extra}


def err(message: str, kind: str = "exception") -> dict[str, Any]:
    return {"kind": kind, "message": message, "source": f"{URL}.js", "line": 1, "column": 2}


def req(url: str = f"{URL}/api", status: int = 200) -> dict[str, Any]:
    return {"api": "fetch", "method": "GET", "url": url, "status": status}


def messages(t: Timeline) -> list[str]:
    return [e.message for e in t.entries if isinstance(e, ErrorEntry)]


# ---- budgets ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("budget", "first", "n", "kept"),
    [
        (10, 4, 8, list(range(8))),  # under the budget: everything
        (10, 4, 30, [0, 1, 2, 3, *range(24, 30)]),  # the first 4, then the latest
        (10, 0, 30, list(range(20, 30))),  # no first ones kept: a ring
        (10, 10, 30, list(range(10))),  # only the first ones
        (BUDGETS["error"], KEEP_FIRST["error"], 5000, [*range(150), *range(4950, 5000)]),
    ],
)
def test_the_first_errors_stay_the_latest_follow_and_the_rest_are_counted(
    budget: int, first: int, n: int, kept: list[int]
) -> None:
    t = Timeline(budgets={"error": budget}, keep_first={"error": first})
    t.from_event("nav", nav(phase="complete"))
    t.from_event("action", act())
    for i in range(n):
        t.from_event("page_error", err(f"E{i}"))
    assert messages(t) == [f"E{i}" for i in kept]
    assert t.dropped["error"] == n - len(kept)
    assert [e.type for e in t.entries][:2] == ["nav", "action"]  # steps never pay for errors


def test_page_url_changes_have_their_own_budget_and_never_evict_steps() -> None:
    t = Timeline(budgets={"page_nav": 3, "nav": 5})
    t.from_event("nav", nav(phase="complete"))
    for i in range(10):
        t.from_event("action", act(selector=f"#b{i}"))
        for j in range(4):  # four URL changes of the page after each click: one entry
            t.from_event("nav", nav(f"{URL}?r={i}.{j}", by_page=True))
    page = [e for e in t.entries if isinstance(e, NavEntry) and e.by_page]
    assert [(e.url, e.count) for e in page] == [(f"{URL}?r={i}.3", 4) for i in (7, 8, 9)]
    assert t.dropped["page_nav"] == 7 * 4  # events, not entries
    assert len([e for e in t.entries if isinstance(e, ActionEntry)]) == 10
    assert [e.url for e in t.entries if isinstance(e, NavEntry) and not e.by_page] == [URL]


# ---- repeats -----------------------------------------------------------------------------------


def test_repeats_between_two_steps_are_one_entry_with_a_count() -> None:
    t = Timeline()
    t.from_event("nav", nav(phase="complete"))
    for m in ("A", "A", "B", "A", "B"):
        t.from_event("page_error", {**err(m), "time": 1_700_000_000_000})
    t.from_event("page_error", err("A", kind="console"))  # another kind: another error
    t.from_event("network", req())
    t.from_event("network", req())
    t.from_event("network", req(status=500))  # another answer: another entry
    t.from_event("action", act())
    t.from_event("page_error", err("A"))  # after a step: that step's error
    rows = [
        (e.type, getattr(e, "kind", ""), getattr(e, "message", e.url), getattr(e, "count", 1))
        for e in t.entries
    ]
    assert rows == [
        ("nav", "", URL, 1),
        ("error", "exception", "A", 3),
        ("error", "exception", "B", 2),
        ("error", "console", "A", 1),
        ("network", "", f"{URL}/api", 2),
        ("network", "", f"{URL}/api", 1),
        ("action", "click", URL, 1),
        ("error", "exception", "A", 1),
    ]
    first = t.entries[1]
    assert isinstance(first, ErrorEntry) and first.last_time is not None


# Each row: events in, then (url, by_page, count, complete) of every navigation entry out.
NAV_TABLE: list[tuple[str, list[tuple[str, dict[str, Any]]], list[tuple[str, bool, int, bool]]]] = [
    (
        "a pushState loop after the load is one entry with the latest URL",
        [("nav", nav(phase="complete"))]
        + [
            ("nav", nav(f"{URL}?i={i}", p, by_page=True))
            for i in range(620)
            for p in ("commit", "complete")
        ],
        [(URL, False, 1, True), (f"{URL}?i=619", True, 620, True)],
    ),
    (
        "a navigation the tool asked for (a #fragment) is a step",
        [
            ("nav", nav(phase="complete")),
            ("action", act()),
            ("nav", nav(f"{URL}#x", by_page=True, origin="tool")),
        ],
        [(URL, False, 1, True), (f"{URL}#x", False, 1, False)],
    ),
    (
        "the completion of the tool's #fragment joins its step, whatever the page said",
        [
            ("action", act()),
            ("nav", nav(f"{URL}#x", by_page=True, origin="tool")),
            ("nav", nav(f"{URL}#x", "complete", by_page=True, origin="tool")),
        ],
        [(f"{URL}#x", False, 1, True)],
    ),
    (
        "once the tool's request made a load, the page's URL changes are the page's",
        [("nav", nav(origin="tool")), ("nav", nav(f"{URL}?boot", by_page=True, origin="tool"))],
        [(URL, False, 1, False), (f"{URL}?boot", True, 1, False)],
    ),
    (
        "a load of the URL the page pushed is a new step (a reload)",
        [
            ("nav", nav(phase="complete")),
            ("nav", nav(f"{URL}?p", by_page=True)),
            ("nav", nav(f"{URL}?p")),
        ],
        [(URL, False, 1, True), (f"{URL}?p", True, 1, False), (f"{URL}?p", False, 1, False)],
    ),
    (
        "a completion nobody claimed joins the page's entry of that URL",
        [
            ("nav", nav(phase="complete")),
            ("nav", nav(f"{URL}?p", by_page=True)),
            ("nav", nav(f"{URL}?p", "complete")),
        ],
        [(URL, False, 1, True), (f"{URL}?p", True, 1, True)],
    ),
    (
        "a step between the page's URL changes starts a new entry",
        [
            ("nav", nav(f"{URL}?1", by_page=True)),
            ("action", act()),
            ("nav", nav(f"{URL}?2", by_page=True)),
        ],
        [(f"{URL}?1", True, 1, False), (f"{URL}?2", True, 1, False)],
    ),
]


@pytest.mark.parametrize(("why", "events", "out"), NAV_TABLE, ids=[row[0] for row in NAV_TABLE])
def test_the_pages_own_url_changes(
    why: str, events: list[tuple[str, dict[str, Any]]], out: list[tuple[str, bool, int, bool]]
) -> None:
    t = Timeline()
    for name, data in events:
        t.from_event(name, data)
    navs = [e for e in t.entries if isinstance(e, NavEntry)]
    assert [(n.url, n.by_page, n.count, n.complete) for n in navs] == out, why


# ---- what the generators make of a flood ------------------------------------------------------


def flooded() -> Timeline:
    t = Timeline()
    t.from_event("nav", nav(phase="complete", origin="tool"))
    t.from_event("page_error", err("FIRST-REAL-ERROR"))
    t.from_event("action", act("fill", "#name", value="Ada Lovelace", origin="tool"))
    t.from_event("action", act("click", "#save", origin="tool", detail=1))
    t.from_event("action", act("submit", "#signup", via="submitter", origin="tool"))
    for i in range(620):
        t.from_event("nav", nav(f"{URL}?route={i}", by_page=True, origin="tool_action"))
    for i in range(400):
        t.from_event("page_error", err(f"FLOOD {i}"))
        t.from_event("page_error", err("FLOOD-SAME", kind="console"))
    return t


def test_a_flood_leaves_the_steps_and_the_first_error_to_the_generators() -> None:
    t = flooded()
    session = Session.from_export(TimelineResult(entries=t.select()))
    steps = build_steps(session)
    assert [s.kind for s in steps] == ["goto", "action", "action"]  # load, fill, click
    assert steps[0].errors[0].message == "FIRST-REAL-ERROR"
    spec = playwright.generate_test_spec(session)
    assert spec.count(".goto(") == 1 and "Ada Lovelace" in spec and "requestSubmit" not in spec
    assert "FIRST-REAL-ERROR" in report.bug_report(session).splitlines()[0]


def test_the_timeline_command_says_what_was_dropped() -> None:
    rec = Recorder(Link(), ShotRegistry())
    rec.timeline = flooded()
    got = asyncio.run(rec.cmd_timeline(None, {})).model_dump()
    # 402 error entries (the real one, 400 distinct, one counted 400 times) for 200 places.
    assert got["dropped"] == {"error": 402 - BUDGETS["error"]}
    same = [e for e in got["entries"] if e.get("message") == "FLOOD-SAME"]
    assert len(same) == 1 and same[0]["count"] == 400


class Link:
    async def request(self, cmd: str, args: Any = None, timeout: float = 15.0) -> dict[str, Any]:
        return {}


# ---- any order of events -----------------------------------------------------------------------

BUDGET = {"page_nav": 4, "error": 8, "network": 6}
FIRST = {"error": 3}

event = st.one_of(
    st.tuples(st.just("action"), st.sampled_from(["click", "fill", "press"])),
    st.tuples(
        st.just("nav"),
        st.sampled_from([URL, f"{URL}?a", f"{URL}?b", f"{URL}#c"]),
        st.sampled_from(["commit", "complete"]),
        st.booleans(),  # by_page
        st.sampled_from([None, "user", "tool", "tool_action"]),
    ),
    st.tuples(st.just("page_error"), st.sampled_from(["A", "B", "C", "D"]), st.booleans()),
    st.tuples(st.just("network"), st.sampled_from([200, 404, 500])),
)


def feed(t: Timeline, ev: tuple[Any, ...]) -> None:
    if ev[0] == "action":
        t.from_event("action", act(ev[1], value="v" if ev[1] == "fill" else None))
    elif ev[0] == "nav":
        _, url, phase, by_page, origin = ev
        t.from_event("nav", nav(url, phase, by_page=by_page, origin=origin))
    elif ev[0] == "page_error":
        t.from_event("page_error", err(ev[1], kind="console" if ev[2] else "exception"))
    else:
        t.from_event("network", req(status=ev[1]))


@settings(max_examples=300, deadline=None)
@given(st.lists(event, max_size=120))
def test_any_flood_keeps_every_step_and_counts_every_page_event(events: list[Any]) -> None:
    t = Timeline(budgets=BUDGET, keep_first=FIRST)
    for ev in events:
        feed(t, ev)
    entries = list(t.entries)
    assert [e.seq for e in entries] == sorted(e.seq for e in entries)
    # Every action stays (their budget is far away), in order.
    assert len([e for e in entries if isinstance(e, ActionEntry)]) == sum(
        ev[0] == "action" for ev in events
    )
    for kind, limit in BUDGET.items():
        assert len([e for e in entries if bucket(e) == kind]) <= limit
    # Every error and request is an entry's count or a dropped one.
    for kind, cls, name in (
        ("error", ErrorEntry, "page_error"),
        ("network", NetworkEntry, "network"),
    ):
        kept = sum(e.count for e in entries if isinstance(e, cls))
        assert kept + t.dropped[kind] == sum(ev[0] == name for ev in events)
    # The first error the page made is the first one kept.
    first = next((ev for ev in events if ev[0] == "page_error"), None)
    if first is not None:
        head = next(e for e in entries if isinstance(e, ErrorEntry))
        assert (head.message, head.kind) == (first[1], "console" if first[2] else "exception")
    # Between two steps, one entry per repeated page event and one for the page's URL changes.
    seen: set[Any] = set()
    for e in entries:
        if isinstance(e, ActionEntry) or (isinstance(e, NavEntry) and not e.by_page):
            seen = set()
            continue
        key = repeat_key(e)
        if key is not None:
            assert key not in seen, (e, events)
            seen.add(key)
    # The page's URL changes are never a step of the generated code.
    steps = build_steps(Session.from_export(TimelineResult(entries=t.select())))
    step_seqs = {e.seq for e in entries if isinstance(e, NavEntry) and not e.by_page}
    # (A first "goto" may be made up: the recording began on an open page.)
    assert not [s for s in steps[1:] if s.kind != "action" and s.seq not in step_seqs]
