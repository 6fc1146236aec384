"""Emulation, tab closing and the network view without a browser: argument sentences, preset
expansion, the reset when a client leaves, request ordering and redaction, and the replay code."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from mcp.server.mcpserver.exceptions import ToolError
from shotbridge.generate import playwright, report
from shotbridge.generate.steps import Session
from shotbridge.host.emulate import Emulations, extension_args
from shotbridge.mcp_server import console_view, emulation, network_view
from shotbridge.wire.emulate import EmulateRequest, Emulation
from shotbridge.wire.extension import ConsoleMessage
from shotbridge.wire.network import Header, NetworkRequest
from shotbridge.wire.timeline import EmulateEntry, NavEntry, NetworkEntry, TabEntry, Timeline


@pytest.mark.parametrize(
    ("settings", "sentence"),
    [
        (None, 'action="emulate" needs settings, e.g. {"preset": "iPhone 15"}'),
        ({"zoom": 2}, "emulate settings: unknown key 'zoom'; use preset, width, height"),
        ({"width": 99}, "width must be an integer from 100 to 4000 (CSS px). Nothing was changed."),
        ({"height": True}, "height must be an integer from 100 to 4000 (CSS px)"),
        ({"device_scale_factor": 0}, "device_scale_factor must be a number above 0, at most 5."),
        ({"mobile": "yes"}, "mobile must be true or false."),
        ({"color_scheme": "sepia"}, 'color_scheme must be "light" or "dark" or "no-preference"'),
        ({"reduced_motion": "less"}, 'reduced_motion must be "reduce" or "no-preference"'),
        ({"preset": "Nokia 3310"}, "preset 'Nokia 3310' is not known; presets: iPhone 15, iPhone"),
        ({"reset": False}, "reset must be true (it undoes every emulation setting)."),
        ({"reset": True, "width": 500}, '{"reset": true} takes no other setting.'),
    ],
)
def test_bad_settings_are_one_sentence(settings: Any, sentence: str) -> None:
    with pytest.raises(ToolError) as err:
        emulation.request(settings, None)
    assert sentence in str(err.value)
    assert str(err.value).count(". ") <= 2  # one sentence (plus "Nothing was changed.")


def test_a_preset_is_expanded_and_single_settings_win() -> None:
    req = EmulateRequest(preset="pixel 7", width=500, color_scheme="dark")
    args = extension_args(req).model_dump(exclude_unset=True)
    assert args["preset"] == "Pixel 7" and args["width"] == 500 and args["height"] == 839
    assert args["device_scale_factor"] == 2.625 and args["mobile"] and args["touch"]
    assert args["color_scheme"] == "dark" and "Pixel 7" in args["user_agent"]


class _Link:
    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    async def request(self, cmd: str, args: dict[str, Any], timeout: float) -> dict[str, Any]:
        self.sent.append({"cmd": cmd, **args})
        settings = {} if args.get("reset") else {"width": args.get("width")}
        return {"tab_id": args.get("tab_id", 7), "url": "http://a/", "emulation": settings}


class _Conn:
    def __init__(self) -> None:
        self.id = 42
        self.gone = asyncio.Event()

    async def wait_closed(self) -> None:
        await self.gone.wait()


def test_the_tabs_a_client_emulated_are_reset_when_it_leaves() -> None:
    async def scenario() -> list[dict[str, Any]]:
        link, conn, timeline = _Link(), _Conn(), Timeline()
        emulations = Emulations(link)
        await emulations.emulate(conn, timeline, {"width": 400, "height": 700})
        assert [e.type for e in timeline.entries] == ["emulate"]
        conn.gone.set()
        for _ in range(20):
            await asyncio.sleep(0)
        return link.sent

    sent = asyncio.run(scenario())
    assert sent[-1] == {"cmd": "emulate", "tab_id": 7, "reset": True}


def _req(i: int, url: str, status: int, start: float, error: str | None = None) -> NetworkRequest:
    return NetworkRequest(
        id=i,
        method="GET",
        url=url,
        type="xmlhttprequest",
        status=status,
        start=start,
        end=start + 5,
        duration_ms=5,
        error=error,
    )


def test_failed_requests_come_first_and_filters_narrow() -> None:
    reqs = [
        _req(1, "http://a/", 200, 1),
        _req(2, "http://a/api/items?token=tok_9f8e7d6c5b4a39281706", 500, 2),
        _req(3, "http://a/api/user", 200, 3),
        _req(4, "http://b/x.js", 0, 4, error="net::ERR_CONNECTION_REFUSED"),
    ]
    listed = network_view.listing(reqs, None)
    assert [r["id"] for r in listed["requests"]] == [4, 2, 3, 1]
    assert listed["failed"] == 2 and "tok_9f8e7d6c5b4a39281706" not in str(listed)
    assert [r["id"] for r in network_view.listing(reqs, "5xx")["requests"]] == [2]
    assert [r["id"] for r in network_view.listing(reqs, "500")["requests"]] == [2]
    assert [r["id"] for r in network_view.listing(reqs, "failed")["requests"]] == [4, 2]
    assert [r["id"] for r in network_view.listing(reqs, "/API/USER")["requests"]] == [3]


def test_one_request_hides_credentials_and_redacts_its_body() -> None:
    r = _req(2, "http://a/api/login", 401, 2)
    r.request_headers = [
        Header(name="Cookie", value="sid=abc"),
        Header(name="X-Session-Token", value="zzz"),
        Header(name="Accept", value="*/*"),
    ]
    body = '{"user": "ada", "password": "hunter2"}'
    recorded = [NetworkEntry(url=r.url, method="GET", status=401, response_body=body, time=0.002)]
    shown = network_view.detail([r], 2, recorded)
    assert shown["request_headers"] == [
        {"name": "Cookie", "value": "<redacted>"},
        {"name": "X-Session-Token", "value": "<redacted>"},
        {"name": "Accept", "value": "*/*"},
    ]
    assert "hunter2" not in shown["response_body"] and '"ada"' in shown["response_body"]
    assert "not recorded" in network_view.detail([r], 2, [])["body"]


def test_headers_the_page_hook_saw_fill_a_request_listed_without_them() -> None:
    r = _req(5, "http://a/api/save", 200, 5)
    r.method = "POST"
    hooked = [
        Header(name="X-Trace", value="t-1"),
        Header(name="X-Api-Key", value="key_live_0123456789abcdef"),
    ]
    early = NetworkEntry(url=r.url, method="POST", status=200, time=0.001)
    near = NetworkEntry(
        url=r.url,
        method="POST",
        status=200,
        time=0.005,
        request_headers=hooked,
        response_headers=[Header(name="content-type", value="application/json")],
    )
    other = NetworkEntry(url=r.url, method="GET", status=200, time=0.005, request_headers=[])
    shown = network_view.detail([r], 5, [early, near, other])
    assert shown["request_headers"] == [
        {"name": "X-Trace", "value": "t-1"},
        {"name": "X-Api-Key", "value": "<redacted>"},
    ]
    assert shown["response_headers"] == [{"name": "content-type", "value": "application/json"}]
    assert network_view.detail([r], 5, [])["request_headers"] == []


def test_replay_puts_the_device_in_the_context_and_closes_the_last_tab() -> None:
    phone = Emulation(
        preset="iPhone SE",
        width=320,
        height=568,
        device_scale_factor=2,
        mobile=True,
        touch=True,
        user_agent="Mozilla/5.0 (iPhone)",
        color_scheme="dark",
    )
    timeline = Timeline()
    timeline.add(NavEntry(url="http://a/", complete=True, origin="tool"))
    timeline.add(EmulateEntry(url="http://a/", emulation=phone))
    timeline.add(EmulateEntry(url="http://a/", emulation=Emulation()))
    timeline.add(TabEntry(url="http://a/", tab_id=3))
    session = Session(entries=list(timeline.entries))
    script = playwright.reproduction_script(session)
    spec = playwright.generate_test_spec(session, assert_visual=False)
    options = (
        "viewport: { width: 320, height: 568 }, deviceScaleFactor: 2, isMobile: true, "
        "hasTouch: true, userAgent: 'Mozilla/5.0 (iPhone)'"
    )
    assert f"browser.newContext({{ {options} }})" in script
    assert f"test.use({{ {options} }});" in spec
    for code in (script, spec):
        assert "// Step 2: Emulate iPhone SE (320×568, scale 2, mobile, touch, dark)" in code
        assert "await page.emulateMedia({ colorScheme: 'dark', reducedMotion: null });" in code
        assert "await page.setViewportSize({ width: 1280, height: 720 });" in code  # the reset
        assert code.rstrip().count("await page.close();") == 1
    md = report.bug_report(session)
    assert "Emulate iPhone SE (320×568, scale 2, mobile, touch, dark)" in md
    assert "Stop emulating a device" in md and "Close the tab" in md


def test_console_merges_errors_and_logs_in_order_and_redacts_them() -> None:
    errors = [
        {
            "kind": "exception",
            "message": "TypeError: x",
            "source": "http://a/app.js",
            "line": 3,
            "column": 1,
            "time": 2000,
        }
    ]
    logs = [
        ConsoleMessage(
            level="log", message="token=ghp_abcdefghijklmnopqrstuvwxyz0123456789", time=1000
        ),
        ConsoleMessage(
            level="warning", message="slow", source="http://a/app.js", line=9, time=3000
        ),
    ]
    listed = console_view.listing(errors, logs, None)
    assert [m["level"] for m in listed["messages"]] == ["log", "error", "warning"]
    assert "ghp_" not in str(listed) and "source" not in listed["messages"][0]
    assert listed["messages"][2] == {
        "level": "warning",
        "message": "slow",
        "source": "http://a/app.js",
        "line": 9,
        "column": 0,
    }
    assert [m["message"] for m in console_view.listing(errors, logs, "ERROR")["messages"]] == [
        "TypeError: x"
    ]
    assert console_view.listing(errors, logs, "slo")["count"] == 1
