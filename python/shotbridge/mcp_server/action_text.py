"""What the model reads after ``interact``'s select, upload, drag and wait: one sentence of what
happened (or, for a wait that timed out, what the page still shows)."""

from __future__ import annotations

import json

from shotbridge.wire.interact import DragEnd, InteractResult, PageElement, Seen


def describe(el: PageElement | None) -> str:
    if not el:
        return "nothing"
    name = el.name or el.text or ""
    role = el.role or (el.tag if el.tag is not None else "?")
    where = el.selector if el.selector is not None else "?"
    return f'{role} "{name}" ({where})' if name else f"{role} ({where})"


def _q(s: str | None) -> str:
    return json.dumps(s or "", ensure_ascii=False)


def selected(done: InteractResult) -> str:
    chosen = [
        f"{_q(o.label)} (value {_q(o.value)})" if o.value is not None else _q(o.label)
        for o in done.selected or []
    ]
    now = ", ".join(chosen) or "nothing"
    shows = f"; it shows {_q(done.shows)}" if done.shows else ""
    return f"Selected in {describe(done.element)}: now {now}{shows}."


def uploaded(done: InteractResult) -> str:
    files = ", ".join(f"{f.name} ({f.size:,} bytes)" for f in done.files or [])
    return f"Set {len(done.files or [])} file(s) on {describe(done.element)}: {files}."


def _end(e: DragEnd | None) -> str:
    if e is None or e.point is None:
        return "?"
    return f"CSS ({e.point.x:g}, {e.point.y:g}) on {describe(e.hit)}"


def dragged(done: InteractResult) -> str:
    how = " (an HTML5 drag: dropped with drag events)" if done.html5 else ""
    return f"Dragged from {_end(done.start)} to {_end(done.end)}{how}."


def condition(text: str | None, selector: str | None, url: str | None, gone: bool) -> str:
    if url:
        return f"the URL {'stopped matching' if gone else 'matched'} {_q(url)}"
    what = f"the text {_q(text)}" if text is not None else (selector or "")
    if not text and not selector:
        return "the network went quiet"
    return f"{what} {'disappeared' if gone else 'appeared'}"


def _sees(seen: Seen | None) -> str:
    if seen is None:
        return "the page did not answer (still loading?)"
    if seen.in_flight_count:
        urls = ", ".join(seen.in_flight or [])
        return f"{seen.in_flight_count} request(s) still in flight: {urls}"
    if seen.found:
        return f"{seen.found} match(es), the first {describe(seen.first)}"
    if seen.found == 0:
        return f"no match on {seen.url}"
    return f"the URL is {seen.url}"


def waited(done: InteractResult, cond: str) -> str:
    secs = (done.waited_ms or 0) / 1000
    if done.met:
        return f"Waited {secs:.1f} s: {cond}."
    return f"Timed out after {secs:.1f} s before {cond}; it sees {_sees(done.seen)}."
