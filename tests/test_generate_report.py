"""The Markdown bug report: structure, embedded screenshots, thumbnails past 1 MB."""

from __future__ import annotations

import base64
import re

from shotbridge.generate.report import FULL_SET_LIMIT, bug_report, severity
from shotbridge.wire.timeline import ErrorEntry, NetworkEntry

from tests.session_builder import Rec

URL = "http://127.0.0.1:8000/form"


def recorded(full_size: int = 2_000) -> Rec:
    r = Rec().nav(URL, "Form").shot(1, "navigation")
    r.fill("Widget", selector="#t", tag="input", label="Title", unique={"label": True})
    r.click(selector="#add", tag="button", role="button", name="Add", unique={"role": True})
    r.shot(2, "action", r.timeline.last_action.id)  # type: ignore[union-attr]
    r.click(selector="#b", tag="button", role="button", name="Break", unique={"role": True})
    r.error("Saving failed: quota exceeded", kind="console")
    r.error("TypeError: boom\n    at app.js:3", kind="exception")
    r.shot(3, "error", r.timeline.last_action.id)  # type: ignore[union-attr]
    return r


def images(size: int) -> dict[int, bytes]:
    return {i: bytes([0xFF, 0xD8]) + bytes([i]) * size for i in (1, 2, 3)}


def test_report_structure() -> None:
    r = recorded()
    md = bug_report(
        r.session(
            images=images(2_000),
            thumbnails=images(100),
            environment={
                "user_agent": "Chromium/156",
                "extension_version": "0.1.0",
                "viewport": {"width": 1280, "height": 657},
            },
        )
    )
    headings = [ln for ln in md.splitlines() if ln.startswith("#")]
    assert headings == [
        "# Bug: Saving failed: quota exceeded",
        "## Steps to reproduce",
        "## Error",
        "## Expected",
        "## Actual",
        "## Environment",
        "## Reproduction script",
    ]
    assert f"- **URL:** `{URL}`" in md
    assert "- **Severity:** high (an uncaught exception or unhandled rejection)" in md
    steps = re.findall(r"^(\d+)\. (.*)$", md, re.M)
    assert [n for n, _ in steps] == ["1", "2", "3", "4"]
    assert steps[0][1] == f"Open `{URL}`"
    assert steps[3][1] == 'Click button "Break"'
    assert "**exception** after step 4, at `app.js:0:0`:" in md
    assert "```\nTypeError: boom\n    at app.js:3\n```" in md
    assert "- **Browser:** Chromium/156" in md and "- **Viewport:** 1280×657 CSS px" in md
    assert "```js\n// Reproduction script" in md
    # Steps 1, 3 and 4 have screenshots; each is a JPEG data URI of the full image.
    uris = re.findall(r"!\[Step (\d+) \(screenshot (\d+)\)\]\(data:image/jpeg;base64,([^)]+)\)", md)
    assert [(s, i) for s, i, _ in uris] == [("1", "1"), ("3", "2"), ("4", "3")]
    assert all(len(base64.b64decode(d)) == 2_002 for _, _, d in uris)
    assert "thumbnails" not in md.split("## Steps")[1].split("1.")[0]


def test_thumbnails_when_the_full_set_would_pass_1_mb() -> None:
    r = recorded()
    big = FULL_SET_LIMIT // 3  # three of these are over the limit once base64-encoded
    md = bug_report(r.session(images=images(big), thumbnails=images(100)))
    assert "_Screenshots are 320 px thumbnails: the full set would pass 1 MB._" in md
    data = re.findall(r"base64,([^)]+)\)", md)
    assert len(data) == 3 and all(len(base64.b64decode(d)) == 102 for d in data)
    assert len(md) < 100_000


def test_evicted_screenshots_are_named_not_embedded() -> None:
    r = recorded()
    r.shots[0].kept = False
    md = bug_report(r.session(images={2: b"\xff\xd8a"}, thumbnails={}))
    assert "_Screenshot 1 is not available (evicted from the buffer)._" in md
    assert "_Screenshot 3 is not available._" in md


def test_severity_levels() -> None:
    console = ErrorEntry(kind="console", message="x")
    assert severity([], [])[0] == "low"
    assert severity([console], [])[0] == "medium"
    assert severity([ErrorEntry(kind="rejection")], [])[0] == "high"
    assert severity([], [NetworkEntry(status=503)])[0] == "high"
    assert severity([], [NetworkEntry(status=404)])[0] == "medium"
