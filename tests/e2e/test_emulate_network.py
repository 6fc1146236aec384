"""Device emulation, tab closing, network requests and console levels, end to end.

Real headless Chromium with the real extension, through a real ``shotctl mcp`` stdio subprocess.
tests/pages/emulate-network/index.html is served with an API whose list call answers 500 and
whose profile call returns a token; its menu button is full width low on a phone and small at the
right on a desktop, and tells the server (a beacon) the width and colour scheme it was opened at.

The session that emulates a phone, clicks by the pixels of a screenshot taken under it and closes
a tab is then replayed by the generated script (node, CommonJS) and spec (``@playwright/test``
in an ESM and a CommonJS project): the server hears the replay open the menu at the phone's width
in dark mode.
"""

from __future__ import annotations

import base64
import functools
import io
import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from mcp.types import CallToolResult
from PIL import Image

from tests.e2e.http_json import send_json
from tests.e2e.test_replay_app import CONFIG, ESM_CONFIG, statuses
from tests.e2e.test_session import NODE_MODULES, _npx, run_node
from tests.mcp_stdio import McpSession

pytestmark = pytest.mark.browser

PAGES = Path(__file__).resolve().parents[1] / "pages" / "emulate-network"
TOKEN = "tok_9f8e7d6c5b4a39281706"
BEARER = "Bearer sk_live_abcdef0123456789"
PIXEL_7 = (412, 839)  # Playwright's viewport of the preset
MENU_ON_PHONE = (206, 240)  # CSS px: the centre of the full-width menu button under 500 px


class _Server(SimpleHTTPRequestHandler):
    opened: list[str]  # the query of every /api/opened call, in order

    def do_POST(self) -> None:  # the menu's beacon
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path.startswith("/api/opened"):
            self.opened.append(self.path.partition("?")[2])
        send_json(self, 200, {"ok": True})

    def do_GET(self) -> None:
        if self.path == "/api/items":
            return send_json(self, 500, {"error": "database unavailable"})
        if self.path == "/api/profile":
            return send_json(self, 200, {"name": "Ada", "token": TOKEN})
        if self.path == "/api/dropped":  # no answer at all: the page's fetch rejects
            self.close_connection = True
            return None
        return super().do_GET()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def site() -> Iterator[tuple[str, list[str]]]:
    """(base URL, the /api/opened calls the server heard)."""
    opened: list[str] = []
    handler = type("Handler", (_Server,), {"opened": opened})
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=PAGES))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", opened
    server.shutdown()
    server.server_close()


def _mcp() -> McpSession:
    return McpSession("--browser", "headless", "--window-size", "1280x800", "--cooldown", "0")


def _ok(r: CallToolResult) -> CallToolResult:
    assert not r.is_error, r.content
    return r


def _text(r: CallToolResult) -> str:
    return next(b.text for b in r.content if b.type == "text")


def _json(r: CallToolResult) -> Any:
    return json.loads(_text(_ok(r)))


def _code(r: CallToolResult) -> str:
    """The generated code inside the tool's Markdown fence."""
    text = _text(_ok(r))
    first, _, rest = text.partition("\n")
    assert first.startswith("```"), text[:200]
    return rest[: rest.rindex("\n" + first.rstrip("jstx").rstrip())]


def _refusal(r: CallToolResult) -> str:
    assert r.is_error, r.content
    return _text(r)


def _until(ask: Callable[[], Any], ok: Callable[[Any], bool]) -> Any:
    """``ask()`` again until ``ok`` says its answer is complete (10 s at most); the last one."""
    got = ask()
    for _ in range(100):
        if ok(got):
            break
        time.sleep(0.1)
        got = ask()
    return got


def test_network_lists_the_failed_call_first_and_console_has_levels(
    site: tuple[str, list[str]],
) -> None:
    base = site[0]
    with _mcp() as s:
        _ok(s.call("configure", {"action": "capture", "settings": {"network": True}}))
        _ok(s.call("interact", {"action": "navigate", "url": f"{base}/index.html"}))
        listed: dict[str, Any] = {}
        for _ in range(100):  # the page's two calls finish after its load
            listed = _json(s.call("observe", {"what": "network"}))
            done = [r["url"] for r in listed["requests"] if not r.get("pending")]
            if f"{base}/api/profile" in done and f"{base}/api/items" in done:
                break
            time.sleep(0.1)
        by_url = {r["url"]: r for r in listed["requests"]}
        items, profile = by_url[f"{base}/api/items"], by_url[f"{base}/api/profile"]
        assert (items["method"], items["status"], items["type"]) == ("GET", 500, "fetch")
        assert items["size"] == len(json.dumps({"error": "database unavailable"}))
        assert isinstance(items["duration_ms"], float)
        order = [r["url"] for r in listed["requests"]]
        assert order.index(items["url"]) < order.index(profile["url"])  # failed ones first
        assert order.index(items["url"]) < order.index(f"{base}/index.html")
        assert listed["failed"] >= 1 and by_url[f"{base}/index.html"]["type"] == "main_frame"

        only = _json(s.call("observe", {"what": "network", "filter": "5xx"}))["requests"]
        assert [r["url"] for r in only] == [items["url"]]
        only = _json(s.call("observe", {"what": "network", "filter": "/api/prof"}))["requests"]
        assert [r["url"] for r in only] == [profile["url"]]

        one = _until(
            lambda: _json(s.call("observe", {"what": "network", "request_id": items["id"]})),
            lambda got: "response_body" in got,  # the recorder's copy comes its own way
        )
        sent = {h["name"].lower(): h["value"] for h in one["request_headers"]}
        assert sent["authorization"] == "<redacted>"
        assert BEARER not in json.dumps(one)
        # The page's Headers give names in lower case (the wire's own spelling is not exposed).
        assert {"name": "content-type", "value": "application/json"} in one["response_headers"]
        assert json.loads(one["response_body"]) == {"error": "database unavailable"}
        body = _until(
            lambda: _json(s.call("observe", {"what": "network", "request_id": profile["id"]})),
            lambda got: "response_body" in got,
        )
        assert json.loads(body["response_body"])["name"] == "Ada"
        assert TOKEN not in json.dumps(body)

        console = _until(  # relayed by the page's content scripts, in their own time
            lambda: _json(s.call("observe", {"what": "console"}))["messages"],
            lambda got: len(got) >= 2,
        )
        levels = {m["message"]: m["level"] for m in console}
        assert levels["low disk space on the demo server"] == "warning"
        assert levels["page loaded"] == "log"
        warning = next(m for m in console if m["level"] == "warning")
        assert warning["source"] == f"{base}/index.html" and warning["line"] > 0
        logs = _json(s.call("observe", {"what": "console", "filter": "log"}))["messages"]
        assert [m["message"] for m in logs] == ["page loaded"]

        _calls_page_hook_fills_the_listing(s, base)
        assert _refusal(s.call("observe", {"what": "network", "request_id": 10**6})).endswith(
            "request_id 1000000 is not a request of the tracked tab; "
            'observe(what="network") lists their ids.'
        )
        assert _refusal(s.call("observe", {"what": "page", "filter": "5xx"})).endswith(
            "filter works with what='network' or 'console'; request_id only with 'network'."
        )


def _calls_page_hook_fills_the_listing(s: McpSession, base: str) -> None:
    """A fetch with no answer is failed by the page hook's error, and listed first; an XHR's
    method and headers and a Request's headers come from the hook too."""
    _ok(s.call("interact", {"action": "navigate", "url": f"{base}/calls.html"}))
    urls = [f"{base}/api/{p}" for p in ("dropped", "save")]

    def heard(got: dict[str, Any]) -> bool:  # the hook's reports come their own way
        by_url = {r["url"]: r for r in got["requests"]}
        known = urls[0] in by_url and urls[1] in by_url
        return known and "error" in by_url[urls[0]] and by_url[urls[1]]["method"] == "POST"

    listed = _until(lambda: _json(s.call("observe", {"what": "network", "filter": "/api/"})), heard)
    by_url = {r["url"]: r for r in listed["requests"]}
    dropped, save = by_url[urls[0]], by_url[urls[1]]
    assert (dropped["method"], dropped["status"], dropped["type"]) == ("GET", 0, "fetch")
    assert dropped["error"] and listed["requests"][0]["url"] == urls[0]  # the newest failure
    assert (save["method"], save["status"], save["type"]) == ("POST", 200, "xmlhttprequest")
    one = _until(
        lambda: _json(s.call("observe", {"what": "network", "request_id": save["id"]})),
        lambda got: "request_body" in got,
    )
    assert {"name": "X-Trace", "value": "trace-42"} in one["request_headers"]
    assert {"name": "content-type", "value": "application/json"} in one["response_headers"]
    assert json.loads(one["request_body"]) == {"draft": True}
    profiles = _until(
        lambda: _json(s.call("observe", {"what": "network", "filter": "/api/profile"})),
        lambda got: got["count"] == 2,
    )
    assert profiles["count"] == 2  # the first page's call stays listed after it, this one first
    newest = profiles["requests"]
    again = _until(
        lambda: _json(s.call("observe", {"what": "network", "request_id": newest[0]["id"]})),
        lambda got: "response_body" in got,
    )
    assert {"name": "x-client", "value": "calls-page"} in again["request_headers"]


def _image_size(r: CallToolResult) -> tuple[int, int]:
    data = next(b.data for b in r.content if b.type == "image")
    return Image.open(io.BytesIO(base64.b64decode(data))).size


def _title(s: McpSession) -> str:
    return _json(s.call("observe", {"what": "page"}))["title"]


def _record_phone_session(s: McpSession, base: str) -> None:
    """Emulate a dark Pixel 7, click the phone's menu by screenshot pixels, open and close a tab."""
    _ok(s.call("interact", {"action": "navigate", "url": f"{base}/index.html"}))
    settings = {"preset": "Pixel 7", "color_scheme": "dark"}
    said = _text(_ok(s.call("configure", {"action": "emulate", "settings": settings})))
    assert "now emulates Pixel 7: 412×839 CSS px, device scale factor 2.625, mobile, touch" in said
    assert (
        "The page reports 412×839 at devicePixelRatio 2.625, 5 touch points, prefers dark" in said
    )
    assert "user's own browser" not in said  # our headless browser: nobody else sees it
    assert _json(s.call("observe", {"what": "page"}))["viewport"] == {"width": 412, "height": 839}
    # Settings not given keep their value: the phone stays a dark Pixel 7.
    said = _text(
        _ok(s.call("configure", {"action": "emulate", "settings": {"reduced_motion": "reduce"}}))
    )
    assert "Pixel 7: 412×839 CSS px, device scale factor 2.625, mobile, touch, " in said
    assert "prefers-color-scheme dark, prefers-reduced-motion reduce." in said

    shot = _ok(s.call("capture_screenshot", {}))
    width, height = _image_size(shot)
    assert abs(width / height - PIXEL_7[0] / PIXEL_7[1]) < 0.01  # the phone's viewport, whole
    x, y = (round(c * width / PIXEL_7[0]) for c in MENU_ON_PHONE)
    _ok(s.call("interact", {"action": "click", "x": x, "y": y}))
    assert _title(s) == "opened at 412 dark"  # the desktop layout has nothing there

    refused = _refusal(s.call("configure", {"action": "emulate", "settings": {"width": 50}}))
    assert refused.endswith(
        "emulate settings: width must be an integer from 100 to 4000 (CSS px). Nothing was changed."
    )
    refused = _refusal(s.call("configure", {"action": "emulate", "settings": {"zoom": 2}}))
    assert "unknown key 'zoom'; use preset, width, height" in refused

    _ok(s.call("interact", {"action": "navigate", "url": f"{base}/other.html", "new_tab": True}))
    tabs = _json(s.call("observe", {"what": "tabs"}))
    first = next(t["id"] for t in tabs["tabs"] if t["url"].endswith("/index.html"))
    said = _text(_ok(s.call("configure", {"action": "close_tab"})))
    assert said.startswith(f"Closed tab {tabs['tracked_tab']} ({base}/other.html).")
    assert f"Tracking tab {first}: opened at 412 dark" in said
    tabs = _json(s.call("observe", {"what": "tabs"}))
    assert tabs["tracked_tab"] == first and len(tabs["tabs"]) == 1
    refused = _refusal(s.call("configure", {"action": "close_tab"}))
    assert refused.endswith(
        f"Tab {first} is the last tab of this browser, and closing it would close the browser: "
        'shotbridge does not close it. Navigate it elsewhere instead (interact action="navigate").'
    )


def _heard(opened: list[str], n: int) -> list[str]:
    """The beacons the server heard once there are ``n`` (a beacon may land after its page)."""
    for _ in range(50):
        if len(opened) >= n:
            break
        time.sleep(0.1)
    return opened


def _spec_project(tmp: Path, module: str, spec: str) -> Path:
    tmp.mkdir(parents=True)
    (tmp / "node_modules").symlink_to(NODE_MODULES)
    pkg: dict[str, Any] = {"name": f"emulate-{module}", "private": True}
    if module == "esm":
        pkg["type"] = "module"
    (tmp / "package.json").write_text(json.dumps(pkg))
    (tmp / "playwright.config.js").write_text(ESM_CONFIG if module == "esm" else CONFIG)
    (tmp / ("phone.spec.ts" if module == "esm" else "phone.spec.cjs")).write_text(spec)
    return tmp


def test_phone_emulation_click_by_pixels_and_tab_close_replay(
    site: tuple[str, list[str]], tmp_path: Path
) -> None:
    base, opened = site
    with _mcp() as s:
        _record_phone_session(s, base)
        assert _heard(opened, 1) == ["width=412&dark=true"]
        script = _code(s.call("get_reproduction_script", {"module": "cjs"}))
        spec_esm = _code(s.call("generate_test", {"assert_visual": False}))
        cjs_args = {"assert_visual": False, "module": "cjs", "language": "js"}
        spec_cjs = _code(s.call("generate_test", cjs_args))

    device = "deviceScaleFactor: 2.625, isMobile: true, hasTouch: true, userAgent: 'Mozilla/5.0"
    for code in (script, spec_esm, spec_cjs):
        assert "viewport: { width: 412, height: 839 }, " + device in code
        assert "await page.emulateMedia({ colorScheme: 'dark', reducedMotion: null });" in code
        assert "await page.emulateMedia({ colorScheme: 'dark', reducedMotion: 'reduce' });" in code
        assert "await page.close();" in code
    (tmp_path / "script").mkdir()
    (tmp_path / "script" / "node_modules").symlink_to(NODE_MODULES)
    (tmp_path / "script" / "repro.js").write_text(script)
    run = run_node(tmp_path / "script", "repro.js", timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    assert _heard(opened, 2)[-1] == "width=412&dark=true"
    for module, spec in (("esm", spec_esm), ("cjs", spec_cjs)):
        project = _spec_project(tmp_path / module, module, spec)
        before = len(opened)
        ran = _npx(project)
        assert list(statuses(ran).values()) == [["passed"]], ran.stdout[-3000:] + ran.stderr
        assert _heard(opened, before + 1)[before:] == ["width=412&dark=true"], module
