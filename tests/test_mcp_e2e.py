"""``shotctl mcp`` end to end: a real stdio subprocess, the real extension, headless Chromium.

Nothing is faked: the server launches its own headless Chromium (``--browser headless``) with the
bundled extension, whose host it reaches over the real bus; pages come from tests/pages/mcp served
on 127.0.0.1. ``--cooldown 0`` lifts the 5 s cooldown of automatic screenshots except in the tests
of the limits themselves and of the assistant's loop, which run with the defaults.
"""

from __future__ import annotations

import base64
import functools
import io
import json
import os
import re
import signal
import tempfile
import threading
import time
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from mcp.types import CallToolResult, ImageContent, TextContent
from PIL import Image, ImageChops, ImageStat
from shotbridge.mcp_server.settings import SENSITIVE_WARNING

from tests.mcp_stdio import McpSession, RawServer

pytestmark = pytest.mark.browser

PAGES = Path(__file__).resolve().parent / "pages"
WINDOW = "1280x800"


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def pages() -> Iterator[str]:
    """Base URL of tests/pages/mcp on 127.0.0.1."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(PAGES)))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/mcp"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def s() -> Iterator[McpSession]:
    """One server (and one headless Chromium) for the module, without the cooldown."""
    with McpSession("--browser", "headless", "--window-size", WINDOW, "--cooldown", "0") as session:
        yield session


# ---- helpers ---------------------------------------------------------------------------------


def ok(r: CallToolResult) -> CallToolResult:
    assert not r.is_error, r.content
    return r


def text_of(r: CallToolResult, index: int = 0) -> str:
    return [b.text for b in r.content if isinstance(b, TextContent)][index]


def image_of(r: CallToolResult) -> Image.Image:
    (block,) = [b for b in r.content if isinstance(b, ImageContent)]
    assert block.mime_type == "image/jpeg"
    img = Image.open(io.BytesIO(base64.b64decode(block.data)))
    img.load()
    assert img.format == "JPEG"
    return img.convert("RGB")


def goto(s: McpSession, url: str) -> None:
    ok(s.call("interact", {"action": "navigate", "url": url}))


def annotated(s: McpSession, **args: Any) -> tuple[Image.Image, dict[str, Any]]:
    r = ok(s.call("observe", {"what": "page", "annotate_screenshot": True, "map": "full", **args}))
    assert [b.type for b in r.content] == ["image", "text"]
    assert r.structured_content is None
    return image_of(r), json.loads(text_of(r))


def compact_labels(r: CallToolResult) -> dict[str, int]:
    """Name -> label number from the default map: a line per label, its name JSON-quoted."""
    image_of(r)
    lines = re.findall(r'^(\d+) \S+ ("(?:[^"\\]|\\.)*")', text_of(r), re.MULTILINE)
    return {json.loads(name): int(number) for number, name in lines}


def box(bounds: dict[str, float], scale: float) -> tuple[int, int, int, int]:
    return (
        round(bounds["x"] * scale),
        round(bounds["y"] * scale),
        round((bounds["x"] + bounds["width"]) * scale),
        round((bounds["y"] + bounds["height"]) * scale),
    )


# ---- tools and structure ---------------------------------------------------------------------


def test_tools_are_listed(s: McpSession) -> None:
    assert {t.name for t in s.list_tools()} == {
        "observe",
        "configure",
        "capture_screenshot",
        "interact",
        "get_reproduction_script",
        "generate_test",
        "generate_bug_report",
    }


def test_navigate_then_observe_page_structure(s: McpSession, pages: str) -> None:
    r = ok(s.call("interact", {"action": "navigate", "url": f"{pages}/structure.html"}))
    assert "Navigated to" in text_of(r) and "structure.html" in text_of(r)
    r = ok(s.call("observe", {"what": "page"}))
    assert len(r.content) == 1  # structure only: no image
    page = json.loads(text_of(r))
    assert page["url"].endswith("/structure.html")
    assert page["title"] == "MCP structure fixture"
    assert page["readyState"] == "complete"
    assert [h["text"] for h in page["headings"]] == ["Checkout", "Shipping", "Payment"]
    assert page["form_count"] == 2
    assert page["interactive_count"] == 4  # 2 inputs, a button, a link
    assert page["viewport"]["width"] == 1280


def test_observe_tabs_shows_the_tracked_tab(s: McpSession, pages: str) -> None:
    goto(s, f"{pages}/structure.html")
    tabs = json.loads(text_of(ok(s.call("observe", {"what": "tabs"}))))
    tracked = [t for t in tabs["tabs"] if t["tracked"]]
    assert len(tracked) == 1 and tracked[0]["id"] == tabs["tracked_tab"]
    assert tracked[0]["url"].endswith("/structure.html")
    r = ok(s.call("configure", {"action": "track", "tab_id": tabs["tracked_tab"]}))
    assert text_of(r).startswith(f"Tracking tab {tabs['tracked_tab']}")
    r = s.call("configure", {"action": "track", "tab_id": 987654})
    assert r.is_error and "987654" in text_of(r)


def test_observe_errors(s: McpSession, pages: str) -> None:
    goto(s, f"{pages}/errors.html")
    deadline = time.monotonic() + 5
    while True:  # the page's errors are relayed asynchronously
        found = json.loads(text_of(ok(s.call("observe", {"what": "errors"}))))
        messages = " | ".join(e["message"] for e in found["errors"])
        if all(m in messages for m in ("console error", "uncaught", "unhandled")):
            break
        assert time.monotonic() < deadline, messages
        time.sleep(0.2)
    assert found["count"] == len(found["errors"])
    kinds = {e["kind"] for e in found["errors"]}
    assert {"console", "exception", "rejection"} <= kinds
    assert all({"message", "source", "line", "time"} <= set(e) for e in found["errors"])


# ---- annotated screenshots -------------------------------------------------------------------


def test_annotated_labels_and_map_match_the_page(s: McpSession, pages: str) -> None:
    goto(s, f"{pages}/labels.html")
    img, body = annotated(s)
    assert body["page"]["url"].endswith("/labels.html")
    assert body["page"]["readyState"] == "complete"
    assert body["page"]["title"] == "MCP labels fixture"
    marks = body["annotations"]
    assert [a["label"] for a in marks] == list(range(1, len(marks) + 1))
    assert body["total_found"] == len(marks) == 5, [a["selector"] for a in marks]
    save, cancel, search, shadow, pw = marks
    # Reading order: the row at y≈40 (left to right), then y=160, then y=300.
    assert (save["selector"], save["name"], save["tag"]) == ("#save", "Save", "button")
    assert 'aria-label="Cancel order"' in cancel["selector"]
    assert cancel["name"] == "Cancel order"
    assert search["selector"] == '[data-testid="search"]'
    assert search["name"] == "Search products" and search["interactionHint"] == "editable"
    assert "Shadow action" in (shadow["name"], shadow["text"])  # found inside the open shadow root
    assert pw["tag"] == "input" and pw["interactionHint"] == "editable"
    # "Roles are right for password inputs (no role; say `type: password`)".
    assert (pw["role"], pw["type"]) == ("", "password")
    assert (save["role"], search["role"]) == ("button", "textbox")
    for a in marks:
        assert a["in_viewport"] is True, json.dumps(a)
        assert a["role"] or a is pw, json.dumps(a)
        assert set(a["bounds"]) == {"x", "y", "width", "height"}
        assert len(a["text"]) <= 100
    assert save["bounds"] == {"x": 40, "y": 40, "width": 160, "height": 50}
    assert shadow["bounds"]["x"] == 400 and shadow["bounds"]["y"] == 160
    selectors = " ".join(a["selector"] for a in marks)
    for skipped in ("hidden", "invisible", "covered"):  # display:none, visibility, covered
        assert skipped not in selectors

    # The labels are drawn where the map says: compare with a plain capture of the same page.
    facts = body["image"]
    viewport = body["page"]["viewport"]  # the window minus what headless Chromium keeps of it
    assert (img.width, img.height) == (facts["width"], facts["height"])
    assert (img.width, img.height) == (round(viewport["width"]), round(viewport["height"]))
    assert img.width == 1280
    assert facts["estimated_tokens"] == round(img.width * img.height / 750)
    plain = image_of(ok(s.call("capture_screenshot", {})))
    diff = ImageChops.difference(img, plain)
    scale = facts["css_to_image_scale"]
    for a in marks:
        x0, y0, x1, y1 = box(a["bounds"], scale)
        pad = 24  # labels sit on the element's corner, partly outside it
        region = diff.crop((max(0, x0 - pad), max(0, y0 - pad), x1 + pad, y1 + pad))
        assert max(ImageStat.Stat(region).extrema[c][1] for c in range(3)) > 64, a["selector"]
    untouched = diff.crop((40, 560, 400, 640))  # plain text area: no label there
    assert max(ImageStat.Stat(untouched).mean) < 4


def test_annotated_more_elements_than_max(s: McpSession, pages: str) -> None:
    goto(s, f"{pages}/many.html")
    _, body = annotated(s, max_annotations=10)
    assert body["total_found"] == 80
    assert [a["label"] for a in body["annotations"]] == list(range(1, 11))
    assert [a["selector"] for a in body["annotations"]] == [f"#m{i}" for i in range(1, 11)]
    _, body = annotated(s)  # default max 50
    assert len(body["annotations"]) == 50 and body["total_found"] == 80


def test_annotated_page_with_nothing_to_label(s: McpSession, pages: str) -> None:
    goto(s, f"{pages}/none.html")
    img, body = annotated(s)
    assert body["annotations"] == [] and body["total_found"] == 0
    assert img.width == 1280


def test_annotated_custom_and_all_visible_targets(s: McpSession, pages: str) -> None:
    goto(s, f"{pages}/many.html")
    _, body = annotated(s, annotation_target="custom", annotation_selector="#m12, #m3")
    assert [a["selector"] for a in body["annotations"]] == ["#m3", "#m12"]  # reading order
    goto(s, f"{pages}/none.html")
    _, body = annotated(s, annotation_target="all_visible")
    names = " ".join(a["name"] + a["text"] for a in body["annotations"])
    assert "Just text" in names


def test_annotated_invalid_selector_is_quoted(s: McpSession, pages: str) -> None:
    goto(s, f"{pages}/many.html")
    r = s.call(
        "observe",
        {"annotate_screenshot": True, "annotation_target": "custom", "annotation_selector": "a[["},
    )
    assert r.is_error
    assert "Invalid CSS selector 'a[['" in text_of(r) and "CSS selector syntax" in text_of(r)


# ---- capture_screenshot ----------------------------------------------------------------------


def test_password_field_comes_back_masked(s: McpSession, pages: str) -> None:
    goto(s, f"{pages}/labels.html")
    r = ok(s.call("capture_screenshot", {}))
    img = image_of(r)
    summary = text_of(r)
    assert f"1280×{img.height} px JPEG" in summary and "labels.html" in summary
    assert "Masked regions: 1 region" in summary
    # #pw is at (1000, 300) 320×44 CSS px on a white page, and its text is black on white:
    # masked, the whole box is an opaque dark block.
    region = img.crop((1004, 304, 1316, 340))
    assert max(ImageStat.Stat(region).mean) < 40
    assert min(ImageStat.Stat(img.crop((40, 560, 400, 640))).mean) > 200  # the page stays white


def test_configured_mask_selectors_are_masked(s: McpSession, pages: str) -> None:
    goto(s, f"{pages}/labels.html")
    ok(s.call("configure", {"action": "capture", "settings": {"mask_selectors": ["#save"]}}))
    try:
        r = ok(s.call("capture_screenshot", {}))
    finally:
        ok(s.call("configure", {"action": "capture", "settings": {"mask_selectors": []}}))
    assert "Masked regions: 2 regions" in text_of(r)
    assert max(ImageStat.Stat(image_of(r).crop((44, 44, 196, 86))).mean) < 40


def test_capture_element_and_full_page(s: McpSession, pages: str) -> None:
    goto(s, f"{pages}/labels.html")
    r = ok(s.call("capture_screenshot", {"selector": "#save"}))
    img = image_of(r)
    assert abs(img.width - 160) <= 2 and abs(img.height - 50) <= 2
    assert "element '#save'" in text_of(r)
    r = ok(s.call("capture_screenshot", {"full_page": True}))
    assert "full page" in text_of(r)


def test_capture_failures_are_actionable(s: McpSession, pages: str) -> None:
    goto(s, f"{pages}/labels.html")
    r = s.call("capture_screenshot", {"selector": "#does-not-exist"})
    assert r.is_error and "No element matches selector" in text_of(r)
    assert "#does-not-exist" in text_of(r)
    r = s.call("capture_screenshot", {"selector": "button[["})
    assert r.is_error and "Invalid CSS selector 'button[['" in text_of(r)


def test_restricted_page(s: McpSession, pages: str) -> None:
    r = s.call("interact", {"action": "navigate", "url": "about:version"})
    assert not r.is_error, text_of(r)
    # "Restricted pages are named ... switch to a web page or pass tab_id".
    named = re.compile(
        r"The tracked tab \(tab \d+\) shows chrome://version/ \(a browser page that cannot be "
        r"captured or scripted\); switch to a web page or pass tab_id\."
    )
    r = s.call("capture_screenshot", {})
    assert r.is_error and named.search(text_of(r)), text_of(r)
    # The annotated observe still answers with what can be known, and says why no image.
    r = s.call("observe", {"annotate_screenshot": True})
    assert not r.is_error, text_of(r)
    page = json.loads(text_of(r))["page"]
    assert page["url"] == "chrome://version/" and page["restricted"] is True, page
    assert "No image can be taken of a browser page" in page["note"], page
    goto(s, f"{pages}/none.html")


# ---- screenshot_mode and the real rate limits ------------------------------------------------


def test_screenshot_mode_matrix_with_real_rate_limits(pages: str) -> None:
    """The real 5 s cooldown; the session cap lowered to 2 (hidden flag) to keep the test short."""
    with McpSession("--browser", "headless", "--window-size", WINDOW, "--session-limit", "2") as m:
        goto(m, f"{pages}/structure.html")
        r = ok(m.call("observe", {}))
        assert len(r.content) == 1  # off by default

        r = ok(m.call("configure", {"action": "capture", "settings": {"screenshot_mode": "on"}}))
        assert SENSITIVE_WARNING in text_of(r)
        r = ok(m.call("observe", {"what": "page"}))
        assert [b.type for b in r.content] == ["text", "text", "image"]
        assert text_of(r, 1).startswith("Auto screenshot (1/2 this session)")
        r = ok(m.call("observe", {"what": "tabs"}))
        assert text_of(r, -1) == "[Screenshot unavailable: rate-limited (5s cooldown)]"

        # One the model asks for is never refused, even within the automatic ones' cooldown.
        assert image_of(ok(m.call("capture_screenshot", {})))
        time.sleep(5)
        r = ok(m.call("observe", {"what": "errors"}))
        assert r.content[-1].type == "image"  # 2/2
        time.sleep(5)
        r = ok(m.call("observe", {"what": "page"}))
        assert text_of(r, -1) == "[Screenshot unavailable: session limit reached (2/2)]"

        ok(
            m.call(
                "configure", {"action": "capture", "settings": {"screenshot_mode": "errors_only"}}
            )
        )
        assert len(ok(m.call("observe", {"what": "page"})).content) == 1
        r = ok(m.call("observe", {"what": "errors"}))
        assert text_of(r, -1) == "[Screenshot unavailable: session limit reached (2/2)]"
        ok(m.call("configure", {"action": "capture", "settings": {"screenshot_mode": "off"}}))
        assert len(ok(m.call("observe", {"what": "errors"})).content) == 1


def test_the_assistants_loop_gets_every_image_it_asks_for(pages: str) -> None:
    """Look, act, look again with the server's defaults: no call is refused by a cooldown."""
    with McpSession("--browser", "headless", "--window-size", WINDOW) as m:
        goto(m, f"{pages}/labels.html")
        r = ok(m.call("observe", {"annotate_screenshot": True}))
        label = compact_labels(r)
        assert list(label) == ["Save", "Cancel order", "Search products", "Shadow action"]
        assert re.search(r'^5 password @\d+,\d+ css="#pw"$', text_of(r), re.MULTILINE)
        assert len(text_of(r)) / 4 / 5 <= 40  # header included; ~10 tokens a line
        ok(m.call("interact", {"action": "click", "label": label["Save"]}))
        assert image_of(ok(m.call("capture_screenshot", {})))
        typed = {"action": "type", "label": label["Search products"], "text": "lamp"}
        ok(m.call("interact", typed))
        assert image_of(ok(m.call("capture_screenshot", {})))
        pressed = {"action": "keypress", "key": "Enter", "include_screenshot": True}
        assert image_of(ok(m.call("interact", pressed)))
        again = compact_labels(ok(m.call("observe", {"annotate_screenshot": True})))
        assert again == label


def test_no_browser_connected_is_an_actionable_error() -> None:
    """--browser connected with no host at all (an empty runtime dir)."""
    with (
        tempfile.TemporaryDirectory(prefix="sbm-") as run,
        McpSession("--browser", "connected", env={"SHOTBRIDGE_RUNTIME_DIR": run}) as m,
    ):
        os.chmod(run, 0o700)
        for name, args in [
            ("observe", {}),
            ("capture_screenshot", {}),
            ("observe", {"what": "tabs"}),
        ]:
            r = m.call(name, args)
            assert r.is_error and "No browser is connected" in text_of(r)


# ---- lifecycle -------------------------------------------------------------------------------


def _children(pid: int) -> list[int]:
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def test_headless_browser_ends_with_the_server(pages: str) -> None:
    before = set(_children(os.getpid()))
    with McpSession("--browser", "headless", "--window-size", WINDOW) as m:
        goto(m, f"{pages}/none.html")  # the browser starts on first use
        (server,) = [
            p for p in set(_children(os.getpid())) - before if "shotbridge mcp" in _cmdline(p)
        ]
        browsers = [p for p in _children(server) if "chrom" in _cmdline(p)]
        assert browsers
    deadline = time.monotonic() + 15
    while any(Path(f"/proc/{p}").exists() and "chrom" in _cmdline(p) for p in browsers):
        assert time.monotonic() < deadline, "headless Chromium outlived the MCP server"
        time.sleep(0.2)


def test_sigterm_ends_server_and_browser(pages: str) -> None:
    raw = RawServer("--browser", "headless", "--window-size", WINDOW, env={})
    try:
        raw.initialize()
        reply = raw.send(
            {
                "id": 2,
                "method": "tools/call",
                "params": {
                    "name": "interact",
                    "arguments": {"action": "navigate", "url": f"{pages}/none.html"},
                },
            }
        )
        assert reply is not None and not reply["result"].get("isError"), reply
        browsers = [p for p in _children(raw.proc.pid) if "chrom" in _cmdline(p)]
        assert browsers
        raw.proc.send_signal(signal.SIGTERM)
        raw.proc.wait(20)
    finally:
        if raw.proc.poll() is None:
            raw.proc.kill()
            raw.proc.wait()
    deadline = time.monotonic() + 15
    while any(Path(f"/proc/{p}").exists() and "chrom" in _cmdline(p) for p in browsers):
        assert time.monotonic() < deadline, "headless Chromium outlived a SIGTERM'd server"
        time.sleep(0.2)
