"""MCP side of session memory, in process with a fake bus: configure's recording settings,
observe(what="screenshots"), the screenshot resources and the generation tools."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Awaitable, Callable
from typing import Any

import mcp
import pytest
from mcp.types import CallToolResult, ImageContent, TextContent
from shotbridge.mcp_server import Connection, ServerState, build_server
from shotbridge.mcp_server.ratelimit import ScreenshotBudget
from shotbridge.wire.errors import CommandError

from tests.mcp_fakes import FakeClock, FakeLink, jpeg
from tests.session_builder import Rec

URL = "http://127.0.0.1:8000/form"
FULL, THUMB = jpeg(64, 40), jpeg(32, 20)


def recorded_export() -> dict[str, Any]:
    r = Rec().nav(URL, "Form").shot(1, "navigation")
    r.click(selector="#add", tag="button", role="button", name="Add", unique={"role": True})
    r.shot(2, "action", "a1").error("boom", kind="console").shot(3, "error", "a1")
    r.shots[0].kept = False
    return {
        "session": r.timeline.session,
        "started": 1_700_000_000.0,
        "entries": [e.model_dump() for e in r.timeline.select()],
        "screenshots": [m.model_dump() for m in r.shots],
        "config": {"auto_screenshot": {"on_navigation": False, "on_error": True}},
    }


def screenshots(args: dict[str, Any]) -> dict[str, Any]:
    out = []
    for m in recorded_export()["screenshots"]:
        if m["kept"] and args.get("images") in ("full", "thumbnail"):
            m = {**m, "jpeg": FULL if args["images"] == "full" else THUMB}
        out.append(m)
    return {"screenshots": out}


def screenshot_get(args: dict[str, Any]) -> Any:
    if args["id"] == 1:
        return CommandError("not_found", "Screenshot 1 was evicted from the buffer.")
    return {"id": args["id"], "jpeg": THUMB if args.get("thumbnail") else FULL}


def link(**over: Any) -> FakeLink:
    handlers: dict[str, Any] = {
        "timeline": lambda a: recorded_export(),
        "screenshots": screenshots,
        "screenshot_get": screenshot_get,
        "record_config": lambda a: {"network": a.get("network", False)},
        "status": {"user_agent": "Chromium/156", "extension_version": "0.1.0"},
    }
    return FakeLink(**{**handlers, **over})


class Harness:
    def __init__(self, fake: FakeLink | None = None) -> None:
        self.link = fake or link()
        self.connects = 0

        async def factory() -> FakeLink:
            self.connects += 1
            return self.link

        self.state = ServerState(
            connection=Connection(factory), budget=ScreenshotBudget(clock=FakeClock())
        )
        self.server = build_server(self.state)

    def run(self, scenario: Callable[[mcp.Client], Awaitable[None]]) -> None:
        async def main() -> None:
            async with mcp.Client(self.server) as client:
                await scenario(client)

        asyncio.run(main())


def texts(r: CallToolResult) -> list[str]:
    return [b.text for b in r.content if isinstance(b, TextContent)]


def images(r: CallToolResult) -> list[ImageContent]:
    return [b for b in r.content if isinstance(b, ImageContent)]


def test_configure_recording_settings_reach_the_host() -> None:
    h = Harness()

    async def scenario(c: mcp.Client) -> None:
        r = await c.call_tool(
            "configure",
            {
                "action": "capture",
                "settings": {"auto_screenshot": {"on_navigation": True}, "network": True},
            },
        )
        assert not r.is_error, texts(r)
        assert texts(r) == [
            "Capture settings updated: auto_screenshot={on_navigation: true, on_error: true, "
            "on_action: false}, network=on"
        ]
        r = await c.call_tool(
            "configure", {"action": "capture", "settings": {"auto_screenshot": {"on_scroll": 1}}}
        )
        assert r.is_error and "Valid fields: on_navigation, on_error, on_action" in texts(r)[0]
        r = await c.call_tool("configure", {"action": "capture", "settings": {"network": "yes"}})
        assert r.is_error and "network must be true or false" in texts(r)[0]

    h.run(scenario)
    assert h.link.calls == [
        (
            "record_config",
            {
                "mask_selectors": [],
                "auto_screenshot": {"on_navigation": True, "on_error": True, "on_action": False},
                "min_interval_s": 5.0,  # the server's --cooldown: auto screenshots follow it
                "network": True,
            },
        )
    ]


def test_changing_masks_alone_never_starts_a_browser() -> None:
    h = Harness()

    async def scenario(c: mcp.Client) -> None:
        r = await c.call_tool(
            "configure", {"action": "capture", "settings": {"mask_selectors": [".ssn"]}}
        )
        assert not r.is_error

    h.run(scenario)
    assert h.connects == 0 and h.link.calls == []


def test_observe_screenshots_timeline_and_thumbnails() -> None:
    h = Harness()

    async def scenario(c: mcp.Client) -> None:
        r = await c.call_tool("observe", {"what": "screenshots"})
        body = json.loads(texts(r)[0])
        assert [(s["id"], s["trigger"], s["kept"]) for s in body["screenshots"]] == [
            (1, "navigation", False),
            (2, "action", True),
            (3, "error", True),
        ]
        assert body["screenshots"][1]["after"] == 'Click button "Add"'
        assert body["screenshots"][1]["resource"] == "screenshot://2"
        assert "resource" not in body["screenshots"][0]
        assert [e["type"] for e in body["recent_events"]] == [
            "navigation",
            "screenshot",
            "action",
            "screenshot",
            "error",
            "screenshot",
        ]
        assert images(r) == []
        r = await c.call_tool("observe", {"what": "screenshots", "include_thumbnails": True})
        assert len(images(r)) == 2
        assert base64.b64decode(images(r)[0].data) == THUMB
        assert texts(r)[1].startswith('Screenshot 2 thumbnail (action, after Click button "Add")')

    h.run(scenario)


def test_screenshot_resources() -> None:
    h = Harness()

    async def scenario(c: mcp.Client) -> None:
        templates = (await c.list_resource_templates()).resource_templates
        assert {t.uri_template for t in templates} == {
            "screenshot://{id}",
            "screenshot://{id}/thumbnail",
        }
        (blob,) = (await c.read_resource("screenshot://2")).contents
        assert blob.mime_type == "image/jpeg" and base64.b64decode(blob.blob) == FULL
        (blob,) = (await c.read_resource("screenshot://3/thumbnail")).contents
        assert base64.b64decode(blob.blob) == THUMB
        try:
            await c.read_resource("screenshot://1")
        except Exception as exc:
            assert "evicted" in str(exc)
        else:
            raise AssertionError("reading an evicted screenshot must fail")

    h.run(scenario)


def test_generation_tools() -> None:
    h = Harness()

    async def scenario(c: mcp.Client) -> None:
        r = await c.call_tool("generate_test", {})
        code = texts(r)[0]
        # Specs are "valid TypeScript and valid ESM" by default; js is opt-in.
        assert code.startswith("```ts\n// Playwright test")
        assert "await page.getByRole('button', { name: 'Add', exact: true }).click();" in code
        assert "toHaveScreenshot('step-1.png'" in code
        r = await c.call_tool("get_reproduction_script", {"include_screenshots": True})
        assert "page.screenshot({ path: 'step-2.png' })" in texts(r)[0]
        # Step 1's screenshot was evicted; step 2 has screenshots 2 and 3, the first is shown.
        assert texts(r)[1] == 'step-2: screenshot 2 — Click button "Add"'
        assert [base64.b64decode(i.data) for i in images(r)] == [FULL]
        r = await c.call_tool("generate_bug_report", {})
        md = texts(r)[0]
        assert md.startswith("# Bug: boom") and "- **Browser:** Chromium/156" in md
        assert "_Screenshot 1 is not available (evicted from the buffer)._" in md
        assert images(r) == []  # screenshot_mode is off

    h.run(scenario)


def test_generation_appends_a_screenshot_when_mode_is_on() -> None:
    h = Harness()

    async def scenario(c: mcp.Client) -> None:
        await c.call_tool("configure", {"action": "capture", "settings": {"screenshot_mode": "on"}})
        r = await c.call_tool("generate_test", {"assert_visual": False})
        assert "toHaveScreenshot" not in texts(r)[0]
        assert len(images(r)) == 1 and texts(r)[1].startswith("Auto screenshot (1/10")

    h.run(scenario)


def test_empty_session_says_so() -> None:
    empty = {"session": "s", "entries": [], "screenshots": []}
    h = Harness(link(timeline=lambda a: empty))

    async def scenario(c: mcp.Client) -> None:
        for tool in ("generate_test", "get_reproduction_script", "generate_bug_report"):
            r = await c.call_tool(tool, {})
            assert not r.is_error and texts(r)[0].startswith("Nothing has been recorded yet")

    h.run(scenario)


# ---- sessions per client (the host's side: shotbridge.host.sessions)
# --------------------------------


BOUNDS = {"x": 1, "y": 1, "width": 2, "height": 2}


class _Conn:
    def __init__(self, n: int) -> None:
        self.id = n
        self.closed = False


def _shot(sessions: Any, conn: Any, **extra: Any) -> int:
    """Register one screenshot in ``conn``'s session, and tell the session, as screenshot.take
    does."""
    reg = sessions.get(conn, {}).shots
    shot = reg.add(
        url=URL,
        width=100,
        height=50,
        css_to_output_scale=1.0,
        device_pixel_ratio=1.0,
        origin={"x": 0, "y": 0},
        css_size={"width": 100, "height": 50},
        scroll={"x": 0, "y": 0},
        viewport={"width": 100, "height": 50},
        annotated=True,
        annotations=[
            {"label": 1, "selector": "#b", "bounds": {"x": 1, "y": 1, "width": 2, "height": 2}}
        ],
    )
    from shotbridge.host.screenshot import Cause
    from shotbridge.wire.screenshot import ScreenshotResult

    result = ScreenshotResult(
        screenshot_id=shot.id, url=URL, jpeg=FULL, thumbnail=THUMB, width=100, height=50,
        bytes=len(FULL), quality=60, css_to_output_scale=1.0, method="cdp",
        viewport={"width": 100, "height": 50},
    )  # fmt: skip
    sessions.get(conn, {}).screenshot_taken(result, Cause(**extra))
    return shot.id


def test_each_client_sees_only_its_own_screenshots_and_steps() -> None:
    from shotbridge.host.sessions import Sessions

    async def main() -> None:
        s = Sessions(FakeLink())
        a, b = _Conn(1), _Conn(2)
        ida, idb = _shot(s, a), _shot(s, b)
        assert ida != idb  # ids are unique across the host
        assert s.get(a, {}).shots.for_point(None).id == ida
        assert s.get(b, {}).shots.for_label(None).id == idb
        with pytest.raises(CommandError, match="not one of this session's screenshots"):
            s.get(a, {}).shots.for_point(idb)
        ta = (await s.commands()["screenshots"](a, {})).model_dump()
        assert [m["id"] for m in ta["screenshots"]] == [ida]
        # B clicks: the extension's action event is B's alone; the user's own click is everyone's.
        with s.acting(b, "interact", {}):
            s.on_event({"event": "action", "data": {"kind": "click", "target": {"selector": "#b"}}})
        s._acted_until.clear()  # the grace after B's action has passed
        s.on_event({"event": "action", "data": {"kind": "click", "target": {"selector": "#u"}}})
        steps = {}
        for name, conn in (("a", a), ("b", b)):
            t = (await s.commands()["timeline"](conn, {})).model_dump()
            steps[name] = [e["target"]["selector"] for e in t["entries"] if e["type"] == "action"]
        assert steps == {"a": ["#u"], "b": ["#b", "#u"]}
        # A named session is shared by every client that names it.
        assert s.get(a, {"session": "shared"}) is s.get(b, {"session": "shared"})
        # A client that left takes its session with it.
        a.closed = True
        s.get(b, {})
        assert all(x.conn is not a for x in s.all())

    asyncio.run(main())


def test_an_automatic_screenshot_is_never_the_default_for_pixels_or_labels() -> None:
    from shotbridge.host.sessions import Sessions

    s = Sessions(FakeLink())
    a = _Conn(1)
    shown = _shot(s, a)
    auto = _shot(s, a, trigger="error")
    reg = s.get(a, {}).shots
    assert reg.for_point(None).id == shown and reg.for_label(None).id == shown
    assert reg.for_point(auto).id == auto  # still reachable by its id
