"""The visual diff end to end: ``capture_screenshot`` diffs through the real ``shotctl mcp`` stdio
subprocess, its own headless Chromium with the real extension, and the real host and bus.

A page's CSS changed between two captures → the summary names the changed element; nothing changed
→ the second capture is text only ("Unchanged since screenshot #N"); a scroll between two captures
→ no change reported for the content that scrolled.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from mcp.types import CallToolResult, ImageContent, TextContent

from tests.mcp_stdio import McpSession


@pytest.fixture(scope="module")
def s() -> Iterator[McpSession]:
    with McpSession("--browser", "headless", "--window-size", "1280x800", "--cooldown", "0") as m:
        yield m


def ok(r: CallToolResult) -> CallToolResult:
    assert not r.is_error, r.content
    return r


def texts(r: CallToolResult) -> str:
    return "\n".join(b.text for b in r.content if isinstance(b, TextContent))


def images(r: CallToolResult) -> list[ImageContent]:
    return [b for b in r.content if isinstance(b, ImageContent)]


def shot_id(r: CallToolResult) -> int:
    m = re.search(r"screenshot_id (\d+)", texts(r))
    assert m, texts(r)
    return int(m.group(1))


def goto(s: McpSession, url: str) -> None:
    ok(s.call("interact", {"action": "navigate", "url": url}))


def fresh(s: McpSession, url: str) -> int:
    """Navigate and capture the top of the page with the image (skip_unchanged off for it)."""
    goto(s, url)
    ok(s.call("configure", {"action": "capture", "settings": {"skip_unchanged": False}}))
    try:
        r = ok(s.call("capture_screenshot", {"scroll": "top"}))
    finally:
        ok(s.call("configure", {"action": "capture", "settings": {"skip_unchanged": True}}))
    assert images(r), texts(r)
    return shot_id(r)


def test_css_change_names_the_element(s: McpSession, pages_url: str) -> None:
    first = fresh(s, f"{pages_url}/diff/page.html")
    goto(s, f"{pages_url}/diff/page.html?css=red")  # the stylesheet changed, page reloaded
    r = ok(s.call("capture_screenshot", {"compare_to": first}))
    text = texts(r)
    assert f"changed since screenshot #{first}" in text, text
    assert "(#save)" in text and "button 'Save'" in text, text
    assert len(images(r)) == 1

    goto(s, f"{pages_url}/diff/page.html?css=dark")
    r = ok(s.call("capture_screenshot", {"compare_to": "previous", "diff_image": True}))
    assert "(#cancel)" in texts(r) and "The image is the diff" in texts(r), texts(r)
    assert len(images(r)) == 1


def test_nothing_changed_comes_back_as_text_only(s: McpSession, pages_url: str) -> None:
    first = fresh(s, f"{pages_url}/diff/page.html")
    goto(s, f"{pages_url}/diff/page.html")  # reloaded, nothing changed
    r = ok(s.call("capture_screenshot", {}))
    assert images(r) == []
    assert texts(r) == f"Unchanged since screenshot #{first} (0 regions changed)."
    # Switched off (as fresh() does), the same pixels come back as an image.
    again = fresh(s, f"{pages_url}/diff/page.html")
    assert again > first


def test_scroll_is_not_a_change(s: McpSession, pages_url: str) -> None:
    first = fresh(s, f"{pages_url}/diff/page.html?scroll")  # no ?css: same styles
    r = ok(s.call("capture_screenshot", {"scroll": 300, "compare_to": first}))
    text = texts(r)
    assert len(images(r)) == 1
    assert f"0 regions changed since screenshot #{first}" in text, text
    assert "scrolled by (+0, +300)" in text, text


def test_diff_after_an_annotated_observe_names_the_element(s: McpSession, pages_url: str) -> None:
    """The page reads after each image skip the hit tests (and an annotated observe's read runs
    between the two captures): what changed is still named."""
    first = fresh(s, f"{pages_url}/diff/page.html?observed")
    r = ok(s.call("observe", {"what": "page", "annotate_screenshot": True}))
    assert len(images(r)) == 1 and "Save" in texts(r), texts(r)
    goto(s, f"{pages_url}/diff/page.html?css=red")
    r = ok(s.call("capture_screenshot", {"compare_to": first}))
    text = texts(r)
    assert f"changed since screenshot #{first}" in text, text
    assert "(#save)" in text and "button 'Save'" in text, text
