"""observe on a page still streaming, on about:blank and on a browser page (chrome://…).

Real headless Chromium with the real extension and host, driven through the real ``shotctl mcp``
stdio subprocess (``--browser connected``, pointed at the test browser's bus). The streaming page
is tests/e2e/conftest.py's ``/stream``: the start of an HTML document with three controls, then a
byte every 0.2 s that never ends it, so ``document.readyState`` stays "loading".

Each call runs under a 5 s MCP read timeout: once, chrome.scripting waited for the
document to go idle (it never does while streaming) and observe failed after 15 s.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from mcp.types import CallToolResult, ImageContent, TextContent
from shotbridge.client.browser import HeadlessBrowser

from tests.e2e.conftest import start_browser
from tests.mcp_stdio import McpSession

pytestmark = pytest.mark.browser

# What has arrived of the streaming page (conftest.STREAM_HEAD): every control in it.
STREAM_CONTROLS = [
    {"name": "Order number", "role": "textbox"},
    {"name": "Track order", "role": "button"},
    {"name": "Help", "role": "link"},
]
CALL_TIMEOUT_S = 5.0  # well below the 15 s the old code took to fail


def _session(browser: HeadlessBrowser) -> McpSession:
    env = {"SHOTBRIDGE_RUNTIME_DIR": str(browser.runtime_dir)}
    return McpSession("--browser", "connected", "--cooldown", "0", env=env)


@pytest.fixture(scope="module")
def streaming(pages_url: str) -> Iterator[McpSession]:
    """A browser whose tab opened on the never-ending page, and an MCP server on it."""
    b = start_browser(window_size=(1280, 800), start_url=f"{pages_url}/stream?t={time.time()}")
    try:
        with _session(b) as s:
            yield s
    finally:
        b.close()


@pytest.fixture(scope="module")
def browser_page() -> Iterator[McpSession]:
    """A browser whose tab shows a browser page, and an MCP server on it. (Chromium does not open
    chrome://version from its command line; its New Tab page is a chrome:// page all the same.)"""
    b = start_browser(window_size=(1280, 800), start_url="chrome://newtab")
    try:
        with _session(b) as s:
            yield s
    finally:
        b.close()


def _call(s: McpSession, name: str, args: dict[str, Any]) -> CallToolResult:
    """A tool call that must answer within CALL_TIMEOUT_S (the client gives up after that)."""
    assert s._client is not None
    job = s._client.call_tool(name, args, read_timeout_seconds=CALL_TIMEOUT_S)
    result = asyncio.run_coroutine_threadsafe(job, s.loop).result(CALL_TIMEOUT_S + 10)
    assert not result.is_error, result.content
    return result


def _json(r: CallToolResult) -> dict[str, Any]:
    (text,) = [b.text for b in r.content if isinstance(b, TextContent)]
    return json.loads(text)


def _images(r: CallToolResult) -> list[ImageContent]:
    return [b for b in r.content if isinstance(b, ImageContent)]


def test_observe_page_answers_at_once_while_the_page_streams(streaming: McpSession) -> None:
    page = _json(_call(streaming, "observe", {"what": "page"}))
    assert page["readyState"] == "loading", page
    assert page["title"] == "Still streaming"
    assert page["headings"] == [{"level": 1, "text": "Order status"}]
    assert page["interactive_count"] == len(STREAM_CONTROLS) and page["form_count"] == 1
    assert "still loading" in page["note"]
    listed = _json(_call(streaming, "observe", {"what": "page", "include_offscreen": True}))
    found = {(e["name"], e["role"]) for e in listed["elements"]}
    assert found == {(c["name"], c["role"]) for c in STREAM_CONTROLS}, listed["elements"]


def test_annotated_observe_labels_what_has_arrived(streaming: McpSession) -> None:
    r = _call(streaming, "observe", {"what": "page", "annotate_screenshot": True, "map": "full"})
    assert len(_images(r)) == 1
    body = _json(r)
    assert body["page"]["readyState"] == "loading", body["page"]
    assert any("still loading" in n for n in body["notes"]), body.get("notes")
    labelled = {(a["name"], a["role"]): a for a in body["annotations"]}
    for want in STREAM_CONTROLS:
        assert (want["name"], want["role"]) in labelled, (want, labelled)
    assert labelled[("Track order", "button")]["selector"] == "#track"


def test_about_blank_answers_with_url_and_an_image_note_only_when_asked(
    streaming: McpSession,
) -> None:
    nav = streaming.call("interact", {"action": "navigate", "url": "about:blank"})
    assert not nav.is_error, nav.content
    page = _json(_call(streaming, "observe", {"what": "page"}))
    assert page["url"] == "about:blank" and page["restricted"] is True
    assert page["interactive_count"] == 0 and page["headings"] == []
    assert "image" not in page["note"], page["note"]
    r = _call(streaming, "observe", {"what": "page", "annotate_screenshot": True})
    assert not _images(r)
    body = _json(r)
    assert body["page"]["url"] == "about:blank" and body["annotations"] == []
    assert "No image can be taken" in body["page"]["note"], body


def test_browser_page_answers_with_url_title_and_a_note(browser_page: McpSession) -> None:
    page = _json(_call(browser_page, "observe", {"what": "page"}))
    assert page["url"].startswith("chrome://") and page["restricted"] is True, page
    assert page["title"], page
    assert "browser page" in page["note"] and "image" not in page["note"], page["note"]
    assert "interactive_count" not in page  # unknown, not zero
    r = _call(browser_page, "observe", {"what": "page", "annotate_screenshot": True})
    assert not _images(r)
    body = _json(r)
    assert body["page"]["url"] == page["url"] and body["page"]["title"] == page["title"]
    assert "No image can be taken" in body["page"]["note"], body
