"""A Markdown bug report from a recorded session.

Layout: title, facts (URL, time, severity), numbered steps each with its screenshot embedded as a
``data:`` URI, the error, Expected / Actual, Environment, and the reproduction script. Full JPEGs
are embedded while the whole set stays under 1 MB of base64; above that, every step gets its
320 px thumbnail instead (a report that big is refused by chat clients and issue trackers).

Page text is data: it enters the Markdown only through :mod:`shotbridge.generate.encode` — text
spans (no HTML, links, images or autolinks), code spans for URLs and error locations, fences
longer than any backtick run for messages and the script — after :mod:`shotbridge.generate.redact`
(through the steps) took the secrets out.
"""

from __future__ import annotations

import base64
import time
from typing import Literal

from shotbridge.generate.encode import md_code, md_fence, md_text
from shotbridge.generate.playwright import reproduction_script
from shotbridge.generate.steps import (
    Session,
    Step,
    Viewport,
    build_steps,
    describe_action,
    failing_step,
)
from shotbridge.wire.timeline import ErrorEntry, NetworkEntry

FULL_SET_LIMIT = 1_000_000  # bytes of base64 for all embedded images together

Severity = Literal["high", "medium", "low"]


def severity(errors: list[ErrorEntry], requests: list[NetworkEntry]) -> tuple[Severity, str]:
    if any(e.kind in ("exception", "rejection") for e in errors):
        return "high", "an uncaught exception or unhandled rejection"
    if any(r.status >= 500 for r in requests):
        return "high", "a server error response"
    if errors:
        return "medium", "console errors"
    if any(r.status >= 400 for r in requests):
        return "medium", "failed requests"
    return "low", "no error was recorded"


def data_uri(jpeg: bytes) -> str:
    return "data:image/jpeg;base64," + base64.b64encode(jpeg).decode("ascii")


def pick_images(session: Session, ids: list[int]) -> tuple[dict[int, bytes], bool]:
    """The images to embed for ``ids`` and whether they are thumbnails (full set over 1 MB)."""
    full = {i: session.images[i] for i in ids if i in session.images}
    if sum(len(b) * 4 // 3 + 4 for b in full.values()) <= FULL_SET_LIMIT:
        return full, False
    return {i: session.thumbnails[i] for i in ids if i in session.thumbnails}, True


def _when(t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(t))


def bug_report(session: Session, *, title: str | None = None) -> str:
    steps = build_steps(session)
    failing = failing_step(steps)
    errors = [e for s in steps for e in s.errors]
    requests = [r for s in steps for r in s.requests]
    out = _facts(session, steps, failing, errors, requests, title)
    out += _steps_md(session, steps)
    out += _errors_md(steps, errors, requests)
    out += _expected_actual(failing, errors[0] if errors else None)
    out += _environment_md(session)
    out += ["## Reproduction script", "", md_fence(reproduction_script(session), "js"), ""]
    return "\n".join(out)


def _facts(
    session: Session,
    steps: list[Step],
    failing: Step | None,
    errors: list[ErrorEntry],
    requests: list[NetworkEntry],
    title: str | None,
) -> list[str]:
    """The title and what a triager reads first: where, when, how bad."""
    level, why = severity(errors, requests)
    first = errors[0] if errors else None
    url = (first.url if first and first.url else None) or (failing.url if failing else "?")
    when = first.time if first else (failing.time if failing else session.started)
    heading = title or (_first_line(first.message) if first else f"Session {session.session}")
    return [
        f"# Bug: {md_text(heading, 120)}",
        "",
        f"- **URL:** {md_code(url)}",
        f"- **Time:** {_when(when)}",
        f"- **Severity:** {level} ({why})",
        f"- **Session:** {md_text(session.session)} ({len(steps)} steps, {len(errors)} errors)",
        "",
    ]


def _steps_md(session: Session, steps: list[Step]) -> list[str]:
    """Numbered steps, each with its first screenshot (or why it is missing)."""
    shot_ids = [s.screenshot_ids[0] for s in steps if s.screenshot_ids]
    images, thumbs = pick_images(session, shot_ids)
    kept = {m.id: m for m in session.screenshots}
    out = ["## Steps to reproduce", ""]
    if thumbs:
        out += ["_Screenshots are 320 px thumbnails: the full set would pass 1 MB._", ""]
    for step in steps:
        out.append(f"{step.index}. {_step_md(step)}")
        if step.screenshot_ids:
            sid = step.screenshot_ids[0]
            if sid in images:
                out += ["", f"   ![Step {step.index} (screenshot {sid})]({data_uri(images[sid])})"]
            else:
                meta = kept.get(sid)
                gone = " (evicted from the buffer)" if meta is not None and not meta.kept else ""
                out += ["", f"   _Screenshot {sid} is not available{gone}._"]
        out.append("")
    return out


def _errors_md(
    steps: list[Step], errors: list[ErrorEntry], requests: list[NetworkEntry]
) -> list[str]:
    """The first errors with the step they followed, then the failed requests."""
    out = ["## Error", ""]
    if errors:
        for e in errors[:10]:
            where = md_code(f"{e.source}:{e.line}:{e.column}") if e.source else "unknown location"
            step = next(s for s in steps if e in s.errors)
            out += [
                f"**{e.kind}** after step {step.index}, at {where}:",
                "",
                md_fence(e.message),
                "",
            ]
    else:
        out += ["No console error, exception or rejection was recorded.", ""]
    bad = [r for r in requests if r.status >= 400 or r.error]
    if bad:
        out += ["Failed requests:", ""]
        out += [
            f"- {md_code(f'{r.method} {r.url}')} → {r.status or md_text(r.error or '')}"
            for r in bad[:10]
        ]
        out.append("")
    return out


def _expected_actual(failing: Step | None, first: ErrorEntry | None) -> list[str]:
    out = ["## Expected", ""]
    out += [
        f"Step {failing.index if failing else '?'} ({_step_md(failing) if failing else '?'}) "
        "completes without errors. _(Describe the expected result.)_",
        "",
        "## Actual",
        "",
    ]
    if first:
        out.append(f"The page reported: {md_code(_first_line(first.message), 300)}.")
    else:
        out.append("_(Describe what went wrong.)_")
    out.append("")
    return out


def _environment_md(session: Session) -> list[str]:
    env = session.environment
    out = ["## Environment", ""]
    for label, value in (
        ("Browser", env.user_agent),
        ("Extension", env.extension_version),
        ("Viewport", env.viewport),
        ("Device pixel ratio", env.device_pixel_ratio),
    ):
        if isinstance(value, Viewport):
            value = f"{value.width}×{value.height} CSS px"
        if value:
            out.append(f"- **{label}:** {md_text(str(value))}")
    out += [f"- **Recorded:** {_when(session.started)}", ""]
    return out


def _first_line(message: str) -> str:
    return message.strip().splitlines()[0] if message.strip() else ""


def _step_md(step: Step) -> str:
    """One step for the report: URLs as code spans, everything else as a text span."""
    if step.kind in ("goto", "reload"):
        return f"{'Open' if step.kind == 'goto' else 'Reload'} {md_code(step.url)}"
    if step.kind in ("emulate", "close"):
        return md_text(step.describe())
    assert step.action is not None
    text = md_text(describe_action(step.action))
    return text + (f" (goes to {md_code(step.navigates_to)})" if step.navigates_to else "")
