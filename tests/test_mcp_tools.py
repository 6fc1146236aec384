"""Unit tests of the MCP tools, in process (``mcp.Client(server)``).

These are unit tests: the bus is replaced by ``FakeLink`` (tests/mcp_fakes.py), an injected object
implementing the server's ``request``/``close``; no host, extension or browser is involved. The
clock of the screenshot budget is injected too, so rate limits are tested without sleeping.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

import mcp
import pytest
from mcp.types import CallToolResult, ImageContent, TextContent
from shotbridge.mcp_server import Connection, ServerState, build_server, shots
from shotbridge.mcp_server.ratelimit import ScreenshotBudget, budget_from_options
from shotbridge.mcp_server.settings import SENSITIVE_WARNING
from shotbridge.wire.errors import RESTRICTED_MESSAGE, BusError, CommandError, NotConnectedError

from tests.mcp_fakes import FakeClock, FakeLink, annotation, jpeg, screenshot_result

Scenario = Callable[[mcp.Client], Awaitable[None]]


class Harness:
    def __init__(self, link: FakeLink | None = None) -> None:
        self.link = link or FakeLink()
        self.clock = FakeClock()
        self.connects = 0

        async def factory() -> FakeLink:
            self.connects += 1
            return self.link

        self.state = ServerState(
            connection=Connection(factory), budget=ScreenshotBudget(clock=self.clock)
        )
        self.server = build_server(self.state)

    def run(self, scenario: Scenario) -> None:
        async def main() -> None:
            async with mcp.Client(self.server) as client:
                await scenario(client)

        asyncio.run(main())


def texts(result: CallToolResult) -> list[str]:
    return [b.text for b in result.content if isinstance(b, TextContent)]


def images(result: CallToolResult) -> list[ImageContent]:
    return [b for b in result.content if isinstance(b, ImageContent)]


def error_text(result: CallToolResult) -> str:
    assert result.is_error, result
    return texts(result)[0]


def only_json(result: CallToolResult) -> Any:
    assert not result.is_error, result
    return json.loads(texts(result)[0])


# ---- listing ---------------------------------------------------------------------------------


def test_tools_are_listed_with_descriptions_schemas_and_annotations() -> None:
    h = Harness()

    async def scenario(c: mcp.Client) -> None:
        tools = {t.name: t for t in (await c.list_tools()).tools}
        assert set(tools) == {
            "observe",
            "configure",
            "capture_screenshot",
            "interact",
            "get_reproduction_script",
            "generate_test",
            "generate_bug_report",
        }
        for tool in tools.values():
            assert tool.description and len(tool.description) < 800
            assert tool.output_schema is None  # images never go into structuredContent
            for name, prop in tool.input_schema["properties"].items():
                assert prop.get("description"), (tool.name, name)
        assert 'observe(what="page")' in tools["capture_screenshot"].description
        assert tools["observe"].annotations.read_only_hint is True
        assert tools["capture_screenshot"].annotations.read_only_hint is True
        assert tools["configure"].annotations.read_only_hint is False
        assert tools["interact"].annotations.read_only_hint is False
        observe = tools["observe"].input_schema["properties"]
        assert observe["what"]["enum"] == [
            "page",
            "errors",
            "console",
            "network",
            "tabs",
            "screenshots",
        ]
        assert observe["filter"]["type"] == "string"
        assert tools["configure"].input_schema["properties"]["action"]["enum"] == [
            "capture",
            "track",
            "emulate",
            "close_tab",
        ]
        assert observe["max_annotations"]["minimum"] == 1
        assert observe["max_annotations"]["maximum"] == 500
        assert tools["configure"].input_schema["required"] == ["action"]

    h.run(scenario)
    assert h.connects == 0  # listing tools never starts a browser


def test_tool_schemas_are_lean() -> None:
    """What every session pays before its first call: ≤ 10,000 characters, no pydantic noise."""
    h = Harness()

    async def scenario(c: mcp.Client) -> None:
        tools = (await c.list_tools()).tools
        wire = "".join(t.model_dump_json(exclude_none=True, by_alias=True) for t in tools)
        assert len(wire) <= 10_000, len(wire)
        assert '"title":"' not in wire.replace('"annotations":{"title":"', "")
        assert '{"type":"null"}' not in wire
        selector = next(t for t in tools if t.name == "interact").input_schema["properties"]
        assert selector["selector"] == {
            "type": "string",
            "description": selector["selector"]["description"],
        }

    h.run(scenario)


def test_an_explicit_null_is_still_accepted() -> None:
    h = Harness()

    async def scenario(c: mcp.Client) -> None:
        r = await c.call_tool("capture_screenshot", {"selector": None, "scroll": None})
        assert images(r)

    h.run(scenario)


# ---- configure -------------------------------------------------------------------------------


def test_configure_screenshot_mode_matrix_and_first_time_warning() -> None:
    h = Harness()

    async def scenario(c: mcp.Client) -> None:
        r = await c.call_tool("configure", {"action": "capture", "settings": {}})
        assert "screenshot_mode" in error_text(r) and "mask_selectors" in error_text(r)

        r = await c.call_tool("configure", {"action": "capture"})
        assert texts(r) == [
            "Capture settings: screenshot_mode=off, mask_selectors=[] "
            "(password fields are always masked), auto_screenshot={on_navigation: false, "
            "on_error: true, on_action: false}, network=off"
        ]

        r = await c.call_tool(
            "configure", {"action": "capture", "settings": {"screenshot_mode": "errors_only"}}
        )
        assert texts(r) == [
            f"Capture settings updated: screenshot_mode=errors_only\n{SENSITIVE_WARNING}"
        ]
        r = await c.call_tool(
            "configure", {"action": "capture", "settings": {"screenshot_mode": "on"}}
        )
        assert texts(r) == ["Capture settings updated: screenshot_mode=on"]  # warned once only
        r = await c.call_tool(
            "configure", {"action": "capture", "settings": {"screenshot_mode": "off"}}
        )
        assert texts(r) == ["Capture settings updated: screenshot_mode=off"]

    h.run(scenario)
    assert h.state.settings.screenshot_mode == "off"


def test_configure_warning_not_given_for_off() -> None:
    h = Harness()

    async def scenario(c: mcp.Client) -> None:
        r = await c.call_tool(
            "configure", {"action": "capture", "settings": {"screenshot_mode": "off"}}
        )
        assert SENSITIVE_WARNING not in texts(r)[0]
        r = await c.call_tool(
            "configure", {"action": "capture", "settings": {"screenshot_mode": "on"}}
        )
        assert SENSITIVE_WARNING in texts(r)[0]

    h.run(scenario)


def test_settings_reset_on_restart() -> None:
    first = Harness()

    async def turn_on(c: mcp.Client) -> None:
        await c.call_tool("configure", {"action": "capture", "settings": {"screenshot_mode": "on"}})

    first.run(turn_on)
    assert first.state.settings.screenshot_mode == "on"
    assert Harness().state.settings.screenshot_mode == "off"  # a new process starts off


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            {"action": "bogus"},
            "Unknown action 'bogus'. Valid actions: capture, track, emulate, close_tab.",
        ),
        (
            {"action": "capture", "settings": {"screenshot_mode": "always"}},
            "Invalid screenshot_mode 'always'. Valid values: off, on, errors_only.",
        ),
        (
            {"action": "capture", "settings": {"colour": "red"}},
            # an "unchanged" reply can be turned off with configure (skip_unchanged)
            "Unknown capture setting(s): colour. Valid settings: screenshot_mode, mask_selectors, "
            "auto_screenshot, network, skip_unchanged.",
        ),
        ({"action": "capture", "settings": {"mask_selectors": "#x"}}, "must be a list of CSS"),
        # configure validates selectors at once, in one plain sentence naming the field
        (
            {"action": "capture", "settings": {"mask_selectors": [""]}},
            "mask_selectors: '' is not a valid CSS selector (it is empty); use CSS selectors",
        ),
        ({"action": "track"}, "action='track' needs tab_id; observe(what='tabs')"),
        ({"action": "capture", "tab_id": 3}, "tab_id belongs to action='track'"),
        ({"action": "track", "tab_id": 3, "settings": {}}, "settings belongs to action='capture'"),
    ],
)
def test_configure_rejects_unknown_actions_and_values(args: dict, expected: str) -> None:
    h = Harness()

    async def scenario(c: mcp.Client) -> None:
        r = await c.call_tool("configure", args)
        assert expected in error_text(r)

    h.run(scenario)
    assert h.state.settings.screenshot_mode == "off"


def test_invalid_settings_change_nothing() -> None:
    h = Harness()

    async def scenario(c: mcp.Client) -> None:
        r = await c.call_tool(
            "configure",
            {"action": "capture", "settings": {"screenshot_mode": "on", "mask_selectors": 5}},
        )
        assert r.is_error

    h.run(scenario)
    assert h.state.settings.screenshot_mode == "off"
    assert not h.state.settings.warned


def test_configure_track_asks_the_extension() -> None:
    h = Harness()

    async def scenario(c: mcp.Client) -> None:
        r = await c.call_tool("configure", {"action": "track", "tab_id": 8})
        assert texts(r) == ["Tracking tab 8: B — http://b/"]

    h.run(scenario)
    assert h.link.calls == [("track", {"tab_id": 8})]


def test_configure_track_unknown_tab_is_an_error() -> None:
    h = Harness(FakeLink(track=CommandError("no_tab", "No tab with id 99.")))

    async def scenario(c: mcp.Client) -> None:
        r = await c.call_tool("configure", {"action": "track", "tab_id": 99})
        assert "No tab with id 99." in error_text(r)
        assert "observe(what='tabs')" in error_text(r)

    h.run(scenario)


def test_mask_selectors_travel_with_every_screenshot() -> None:
    h = Harness()

    async def scenario(c: mcp.Client) -> None:
        r = await c.call_tool(
            "configure",
            {"action": "capture", "settings": {"mask_selectors": [".ssn", " #card "]}},
        )
        assert texts(r) == ["Capture settings updated: mask_selectors=['.ssn', '#card']"]
        r = await c.call_tool("capture_screenshot", {})
        assert "Masked regions: 3 regions painted over" in texts(r)[0]
        h.clock.advance(5)
        await c.call_tool("observe", {"annotate_screenshot": True})

    h.run(scenario)
    shots_args = [a for cmd, a in h.link.calls if cmd == "screenshot"]
    assert len(shots_args) == 2
    assert all(a["mask_selectors"] == [".ssn", "#card"] for a in shots_args)


# ---- observe ---------------------------------------------------------------------------------


def test_observe_page_is_structure_only() -> None:
    h = Harness()

    async def scenario(c: mcp.Client) -> None:
        r = await c.call_tool("observe", {"what": "page"})
        assert not images(r) and len(r.content) == 1
        assert r.structured_content is None
        assert only_json(r) == {
            "url": "http://127.0.0.1:8000/page.html",
            "title": "Fixture page",
            "viewport": {"width": 1280, "height": 720},
            "readyState": "complete",
            "headings": [{"level": 1, "text": "Hello"}],
            "form_count": 2,
            "interactive_count": 5,
        }
        r = await c.call_tool("observe", {})  # what defaults to page
        assert only_json(r)["readyState"] == "complete"

    h.run(scenario)
    assert h.link.commands() == ["page_info", "page_info"]


def test_observe_page_counts_forms_given_as_a_list() -> None:
    info = {"url": "u", "title": "t", "viewport": {}, "ready_state": "loading", "forms": [{}, {}]}
    h = Harness(FakeLink(page_info=info))

    async def scenario(c: mcp.Client) -> None:
        r = await c.call_tool("observe", {"what": "page"})
        body = only_json(r)
        assert body["form_count"] == 2 and body["interactive_count"] == 0
        assert body["readyState"] == "loading"

    h.run(scenario)


def test_observe_errors_and_tabs() -> None:
    h = Harness()

    async def scenario(c: mcp.Client) -> None:
        errors = only_json(await c.call_tool("observe", {"what": "errors"}))
        assert errors["count"] == 1
        assert errors["errors"][0]["message"] == "boom"
        assert set(errors["errors"][0]) >= {"message", "source", "line", "time"}
        tabs = only_json(await c.call_tool("observe", {"what": "tabs"}))
        assert tabs["tracked_tab"] == 7
        assert [t["id"] for t in tabs["tabs"]] == [7, 8]

    h.run(scenario)


def test_observe_tabs_with_none_tracked() -> None:
    h = Harness(FakeLink(list_tabs={"tabs": [{"id": 1, "url": "about:blank", "title": ""}]}))

    async def scenario(c: mcp.Client) -> None:
        assert only_json(await c.call_tool("observe", {"what": "tabs"}))["tracked_tab"] is None

    h.run(scenario)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            {"what": "dom"},
            "Unknown what='dom'. Valid values: page, errors, console, network, tabs, screenshots.",
        ),
        ({"what": "errors", "annotate_screenshot": True}, "only with what='page'"),
        (
            {"annotate_screenshot": True, "annotation_target": "links"},
            "Valid values: interactive, all_visible, custom",
        ),
        (
            {"annotate_screenshot": True, "annotation_target": "custom"},
            "annotation_target='custom' needs annotation_selector",
        ),
        (
            {"annotate_screenshot": True, "annotation_selector": "button"},
            "annotation_selector is used only with annotation_target='custom'",
        ),
        ({"annotate_screenshot": True, "max_annotations": 0}, "max_annotations"),
        ({"annotate_screenshot": True, "max_annotations": 501}, "max_annotations"),
    ],
)
def test_observe_rejects_bad_arguments(args: dict, expected: str) -> None:
    h = Harness()

    async def scenario(c: mcp.Client) -> None:
        assert expected in error_text(await c.call_tool("observe", args))

    h.run(scenario)
    assert "screenshot" not in h.link.commands()


def test_observe_annotated_returns_image_and_label_map() -> None:
    h = Harness()

    async def scenario(c: mcp.Client) -> None:
        args = {"what": "page", "annotate_screenshot": True, "map": "full"}
        r = await c.call_tool("observe", args)
        assert not r.is_error and r.structured_content is None
        assert [b.type for b in r.content] == ["image", "text"]
        img = images(r)[0]
        assert img.mime_type == "image/jpeg"
        assert base64.b64decode(img.data) == jpeg()
        body = only_json(CallToolResult(content=[r.content[1]]))
        assert body["page"] == {
            "url": "http://127.0.0.1:8000/page.html",
            "title": "Fixture page",
            "viewport": {"width": 1280.0, "height": 720.0},
            "readyState": "complete",
            "headings": [{"level": 1, "text": "Hello"}],
            "form_count": 2,
            "interactive_count": 5,
        }
        assert body["total_found"] == 3
        assert [a["label"] for a in body["annotations"]] == [1, 2, 3]
        first = body["annotations"][0]
        assert set(first) == {
            "label",
            "selector",
            "tag",
            "role",
            "name",
            "text",
            "bounds",
            "interactionHint",
            "in_viewport",
        }
        assert set(first["bounds"]) == {"x", "y", "width", "height"}
        assert body["image"] == {
            "width": 1280,
            "height": 720,
            "bytes": 84_210,
            "quality": 60,
            "estimated_tokens": 1229,
            "masked_regions": 1,
            "css_to_image_scale": 1.0,
        }

    h.run(scenario)
    (args,) = [a for cmd, a in h.link.calls if cmd == "screenshot"]
    assert args["annotate"] is True
    assert args["target"] == "interactive"
    assert args["max_annotations"] == 50
    assert "annotation_selector" not in args


def test_observe_annotated_map_is_a_short_line_per_label_by_default() -> None:
    def shot(args: dict) -> dict:
        result = screenshot_result(args)
        result["annotations"] = [
            annotation(1, locator='getByRole("button", { name: "Button 1" })'),
            annotation(2, name="View", locator='locator("#b2")', state={"disabled": True}),
            annotation(3, name="View", role="", tag="input", type="checkbox",
                       state={"checked": False}, locator='locator("#b3")'),
            annotation(4, name='Evil"\n5 button "Pay', locator="getByRole()"),
            annotation(5, name="", text="ID", role="columnheader", locator='locator("#h1")'),
            annotation(6, name="", text="Make", role="columnheader", locator='locator("#h2")'),
        ]  # fmt: skip
        result["total_found"] = 9
        return result

    h = Harness(FakeLink(screenshot=shot))

    async def scenario(c: mcp.Client) -> None:
        r = await c.call_tool("observe", {"annotate_screenshot": True})
        assert [b.type for b in r.content] == ["image", "text"]
        head, shape, *lines = texts(r)[0].splitlines()
        assert head == 'http://127.0.0.1:8000/page.html "Fixture page"'
        assert "1280×720 JPEG" in shape and "1 masked region" in shape
        assert "6 labels of 9 found (raise max_annotations for more)" in shape
        assert lines == [
            '1 button "Button 1" @10,20',
            '2 button "View" disabled @20,20 css="#b2"',
            '3 checkbox "View" unchecked @30,20 css="#b3"',
            '4 button "Evil\\" 5 button \\"Pay" @40,20',  # page text cannot start a line
            '5 columnheader "ID" @50,20 css="#b5"',  # no "#k of n" among different shown names
            '6 columnheader "Make" @60,20 css="#b6"',
        ]
        assert len(texts(r)[0]) / 4 / 6 < 40

    h.run(scenario)


def test_observe_annotated_passes_target_selector_and_max() -> None:
    h = Harness()

    async def scenario(c: mcp.Client) -> None:
        r = await c.call_tool(
            "observe",
            {
                "annotate_screenshot": True,
                "annotation_target": "custom",
                "annotation_selector": "nav a",
                "max_annotations": 2,
            },
        )
        assert not r.is_error

    h.run(scenario)
    (args,) = [a for cmd, a in h.link.calls if cmd == "screenshot"]
    assert (args["target"], args["annotation_selector"], args["max_annotations"]) == (
        "custom",
        "nav a",
        2,
    )


def test_observe_annotated_more_found_than_drawn_and_text_capped() -> None:
    def shot(args: dict) -> dict:
        result = screenshot_result(args)
        result["annotations"] = [annotation(i, text="x" * 300) for i in range(1, 6)]
        result["total_found"] = 42
        return result

    h = Harness(FakeLink(screenshot=shot))

    async def scenario(c: mcp.Client) -> None:
        args = {"annotate_screenshot": True, "max_annotations": 5, "map": "full"}
        r = await c.call_tool("observe", args)
        body = json.loads(texts(r)[0])
        assert body["total_found"] == 42
        assert len(body["annotations"]) == 5
        assert all(len(a["text"]) == 100 for a in body["annotations"])

    h.run(scenario)


def test_observe_annotated_with_nothing_found() -> None:
    def shot(args: dict) -> dict:
        return {**screenshot_result(args), "annotations": [], "total_found": 0}

    h = Harness(FakeLink(screenshot=shot))

    async def scenario(c: mcp.Client) -> None:
        r = await c.call_tool("observe", {"annotate_screenshot": True, "map": "full"})
        body = json.loads(texts(r)[0])
        assert body["annotations"] == [] and body["total_found"] == 0
        assert len(images(r)) == 1

    h.run(scenario)


def test_observe_annotated_invalid_selector_quotes_it_with_a_css_hint() -> None:
    err = CommandError("invalid_selector", "'button[' is not a valid selector")
    h = Harness(FakeLink(screenshot=err))

    async def scenario(c: mcp.Client) -> None:
        r = await c.call_tool(
            "observe",
            {
                "annotate_screenshot": True,
                "annotation_target": "custom",
                "annotation_selector": "button[",
            },
        )
        text = error_text(r)
        assert "Invalid CSS selector 'button['" in text
        assert "CSS selector syntax" in text

    h.run(scenario)


def test_observe_annotated_in_screenshot_mode_on_gets_no_second_image() -> None:
    h = Harness()
    h.state.settings.screenshot_mode = "on"

    async def scenario(c: mcp.Client) -> None:
        r = await c.call_tool("observe", {"annotate_screenshot": True})
        assert len(images(r)) == 1 and len(r.content) == 2

    h.run(scenario)


# ---- capture_screenshot ----------------------------------------------------------------------


def test_capture_screenshot_returns_image_and_standalone_text() -> None:
    h = Harness()

    async def scenario(c: mcp.Client) -> None:
        r = await c.call_tool("capture_screenshot", {})
        assert not r.is_error and r.structured_content is None
        assert [b.type for b in r.content] == ["image", "text"]
        assert images(r)[0].mime_type == "image/jpeg"
        assert base64.b64decode(images(r)[0].data) == jpeg()
        assert texts(r) == [
            'Screenshot (viewport) of http://127.0.0.1:8000/page.html "Fixture page"\n'
            "1280×720 px JPEG, 84,210 bytes, quality 60, ≈1,229 image tokens.\n"
            "Masked regions: 1 region painted over (password fields and mask_selectors)."
        ]

    h.run(scenario)
    (args,) = [a for cmd, a in h.link.calls if cmd == "screenshot"]
    # The buffer keeps what a diff needs (remember) and, with skip_unchanged on by
    # default, the host checks whether the pixels match the latest image the model was given.
    assert args == {
        "mask_selectors": [],
        "timeout_ms": 15_000,
        "thumbnail": False,  # the model never sees it; made if a resource asks
        "remember": True,
        "unchanged_check": True,
    }


def test_capture_screenshot_selector_and_full_page() -> None:
    h = Harness()

    async def scenario(c: mcp.Client) -> None:
        r = await c.call_tool("capture_screenshot", {"selector": "#main"})
        assert texts(r)[0].startswith("Screenshot (element '#main') of")
        h.clock.advance(5)
        r = await c.call_tool("capture_screenshot", {"full_page": True})
        assert texts(r)[0].startswith("Screenshot (full page) of")
        h.clock.advance(5)
        r = await c.call_tool("capture_screenshot", {"selector": "#a", "full_page": True})
        assert "either selector or full_page" in error_text(r)
        r = await c.call_tool("capture_screenshot", {"selector": "  "})
        assert "selector is empty" in error_text(r)

    h.run(scenario)
    sent = [a for cmd, a in h.link.calls if cmd == "screenshot"]
    assert sent[0]["selector"] == "#main" and "full_page" not in sent[0]
    assert sent[1]["full_page"] is True and "selector" not in sent[1]


def test_capture_screenshot_masked_zero_and_notes() -> None:
    def shot(args: dict) -> dict:
        return {**screenshot_result(args), "masked": 0, "truncated": True, "unavailable": ["x"]}

    h = Harness(FakeLink(screenshot=shot))

    async def scenario(c: mcp.Client) -> None:
        text = texts(await c.call_tool("capture_screenshot", {}))[0]
        assert "Masked regions: 0" in text
        assert "Full page cut off" in text
        assert "Note: x" in text

    h.run(scenario)


@pytest.mark.parametrize(
    ("error", "selector", "expected"),
    [
        (CommandError("restricted_page", RESTRICTED_MESSAGE), None, RESTRICTED_MESSAGE),
        (
            CommandError("not_found", "No element matches selector '#nope'."),
            "#nope",
            "No element matches selector '#nope'.",
        ),
        (CommandError("not_found", "nothing"), "#nope", "No element matches selector '#nope'."),
        (CommandError("invalid_selector", "bad"), "a[", "Invalid CSS selector 'a[' (bad)."),
        (CommandError("no_tab", "No tab is tracked."), None, "interact(action='navigate'"),
        (CommandError("not_connected", "x"), None, "No browser is connected to shotbridge"),
        (CommandError("timeout", "capture did not finish."), None, "try again"),
        (NotConnectedError("no host"), None, "--browser headless"),
    ],
)
def test_capture_screenshot_failures_are_actionable(
    error: Exception, selector: str | None, expected: str
) -> None:
    h = Harness(FakeLink(screenshot=error))

    async def scenario(c: mcp.Client) -> None:
        args = {"selector": selector} if selector else {}
        r = await c.call_tool("capture_screenshot", args)
        assert expected in error_text(r)
        assert not images(r)

    h.run(scenario)
    assert h.state.budget.next_allowed_in() == 0  # a failed capture does not use the cooldown


def test_explicit_screenshots_are_never_refused_by_default() -> None:
    """A look-act-look loop: every screenshot the model asks for comes back, however close."""
    h = Harness()
    _mode(h, "on")

    async def scenario(c: mcp.Client) -> None:
        for _ in range(3):
            assert images(await c.call_tool("capture_screenshot", {}))
            assert images(await c.call_tool("observe", {"annotate_screenshot": True}))
            h.clock.advance(0.1)

    h.run(scenario)
    assert h.link.commands().count("screenshot") == 6


def test_capture_screenshot_cooldown_carries_next_allowed_in() -> None:
    """shotctl mcp --cooldown 5: explicit screenshots are limited too, with a parseable wait."""
    h = Harness()
    h.state.budget = budget_from_options(5.0, 10)
    h.state.budget.clock = h.clock

    async def scenario(c: mcp.Client) -> None:
        assert not (await c.call_tool("capture_screenshot", {})).is_error
        h.clock.advance(1.5)
        r = await c.call_tool("capture_screenshot", {})
        body = json.loads(error_text(r))
        assert body["error"] == "rate_limited"
        assert body["nextAllowedIn"] == 3.5
        assert "one per 5 s" in body["message"]
        r = await c.call_tool("observe", {"annotate_screenshot": True})  # same clock
        assert json.loads(error_text(r))["nextAllowedIn"] == 3.5
        h.clock.advance(3.5)
        assert not (await c.call_tool("capture_screenshot", {})).is_error

    h.run(scenario)
    assert h.link.commands().count("screenshot") == 2


def test_explicit_screenshots_have_no_session_cap() -> None:
    h = Harness()

    async def scenario(c: mcp.Client) -> None:
        for _ in range(12):
            assert not (await c.call_tool("capture_screenshot", {})).is_error
            h.clock.advance(5)

    h.run(scenario)


def test_large_payload_logs_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    def shot(args: dict) -> dict:
        return {**screenshot_result(args), "jpeg": b"\xff" * 450_000}

    h = Harness(FakeLink(screenshot=shot))

    async def scenario(c: mcp.Client) -> None:
        assert not (await c.call_tool("capture_screenshot", {})).is_error

    with caplog.at_level(logging.WARNING, logger="shotbridge.mcp_server"):
        h.run(scenario)
    assert any("over 500 KB" in r.getMessage() for r in caplog.records)


def test_small_payload_logs_no_warning(caplog: pytest.LogCaptureFixture) -> None:
    h = Harness()

    async def scenario(c: mcp.Client) -> None:
        await c.call_tool("capture_screenshot", {})

    with caplog.at_level(logging.WARNING, logger="shotbridge.mcp_server"):
        h.run(scenario)
    assert not [r for r in caplog.records if "KB" in r.getMessage()]


# ---- screenshot_mode -------------------------------------------------------------------------


def _mode(h: Harness, mode: str) -> None:
    h.state.settings.screenshot_mode = mode  # type: ignore[assignment]


@pytest.mark.parametrize(
    ("mode", "what", "appended"),
    [
        ("off", "page", False),
        ("off", "errors", False),
        ("off", "tabs", False),
        ("on", "page", True),
        ("on", "errors", True),
        ("on", "tabs", True),
        ("errors_only", "page", False),
        ("errors_only", "errors", True),
        ("errors_only", "tabs", False),
    ],
)
def test_screenshot_mode_matrix(mode: str, what: str, appended: bool) -> None:
    h = Harness()
    _mode(h, mode)

    async def scenario(c: mcp.Client) -> None:
        r = await c.call_tool("observe", {"what": what})
        assert not r.is_error
        if appended:
            assert [b.type for b in r.content] == ["text", "text", "image"]  # image last
            assert r.content[1].text.startswith("Auto screenshot (1/10 this session) (viewport)")
            assert "1280×720 px JPEG" in r.content[1].text
        else:
            assert [b.type for b in r.content] == ["text"]

    h.run(scenario)


def test_auto_screenshot_cooldown_and_session_limit() -> None:
    h = Harness()
    _mode(h, "on")

    async def scenario(c: mcp.Client) -> None:
        assert len(images(await c.call_tool("observe", {}))) == 1
        h.clock.advance(4.9)
        r = await c.call_tool("observe", {})
        assert texts(r)[-1] == "[Screenshot unavailable: rate-limited (5s cooldown)]"
        assert not images(r) and not r.is_error
        h.clock.advance(0.1)
        for _ in range(9):  # 2nd..10th
            assert len(images(await c.call_tool("observe", {}))) == 1
            h.clock.advance(5)
        r = await c.call_tool("observe", {})
        assert texts(r)[-1] == "[Screenshot unavailable: session limit reached (10/10)]"
        r = await c.call_tool("observe", {"what": "errors"})
        assert texts(r)[-1] == "[Screenshot unavailable: session limit reached (10/10)]"
        # Explicit screenshots still work after the auto cap.
        assert not (await c.call_tool("capture_screenshot", {})).is_error

    h.run(scenario)
    assert h.link.commands().count("screenshot") == 11


def test_auto_screenshot_shares_the_cooldown_with_explicit_ones() -> None:
    h = Harness()
    _mode(h, "on")

    async def scenario(c: mcp.Client) -> None:
        await c.call_tool("capture_screenshot", {})
        h.clock.advance(1)
        r = await c.call_tool("observe", {})
        assert texts(r)[-1] == "[Screenshot unavailable: rate-limited (5s cooldown)]"

    h.run(scenario)


@pytest.mark.parametrize(
    ("error", "note"),
    [
        (CommandError("no_tab", "No tab is tracked."), "[Screenshot unavailable: no tracked tab]"),
        (
            CommandError("not_connected", "extension gone"),
            "[Screenshot unavailable: extension not connected]",
        ),
        (
            CommandError("restricted_page", RESTRICTED_MESSAGE),
            "[Screenshot unavailable: Cannot capture screenshots of browser internal pages]",
        ),
    ],
)
def test_auto_screenshot_failure_notes(error: Exception, note: str) -> None:
    h = Harness(FakeLink(screenshot=error))
    _mode(h, "on")

    async def scenario(c: mcp.Client) -> None:
        r = await c.call_tool("observe", {"what": "tabs"})
        assert not r.is_error
        assert texts(r)[-1] == note

    h.run(scenario)
    assert h.state.budget.auto_taken == 0  # a failed attempt does not count


def test_auto_screenshot_waits_at_most_the_connect_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """The browser never connects: the note comes after the (shortened) connect budget."""
    assert shots.AUTO_CONNECT_TIMEOUT_S == 2.0
    monkeypatch.setattr(shots, "AUTO_CONNECT_TIMEOUT_S", 0.2)
    h = Harness()
    _mode(h, "errors_only")

    async def never() -> FakeLink:
        await asyncio.sleep(3600)
        raise AssertionError

    async def scenario(c: mcp.Client) -> None:
        # Connected for observe, then the link drops and the browser does not come back.
        r = await c.call_tool("observe", {"what": "page"})
        assert not r.is_error
        h.state.connection._link = None
        h.state.connection._factory = never
        t0 = time.perf_counter()
        blocks = await shots.auto_blocks(h.state)
        assert time.perf_counter() - t0 < 1.0
        assert blocks[0].text == "[Screenshot unavailable: extension not connected]"

    h.run(scenario)


# ---- interact --------------------------------------------------------------------------------


def test_interact_navigate() -> None:
    h = Harness()

    async def scenario(c: mcp.Client) -> None:
        r = await c.call_tool("interact", {"action": "navigate", "url": "http://x.test/a"})
        assert texts(r) == ['Navigated to http://x.test/a "T" (tab 7); the page finished loading.']
        r = await c.call_tool("interact", {"action": "navigate", "navigation": "back"})
        assert texts(r)[0].startswith("Went back to")
        r = await c.call_tool(
            "interact", {"action": "navigate", "url": "https://y.test/", "new_tab": True}
        )
        assert not r.is_error

    h.run(scenario)
    sent = [a for cmd, a in h.link.calls if cmd == "navigate"]
    assert sent[0] == {
        "action": "goto",
        "url": "http://x.test/a",
        "new_tab": False,
        "timeout_ms": 30_000,
    }
    assert sent[1] == {"action": "back", "timeout_ms": 30_000}
    assert sent[2]["new_tab"] is True


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"action": "wiggle"}, "Unknown action 'wiggle'. Available actions: navigate, click"),
        ({"action": "navigate"}, "needs url"),
        ({"action": "navigate", "url": "example.com"}, "'https://example.com'"),
        ({"action": "navigate", "navigation": "sideways"}, "Valid values: url, back, forward"),
        ({"action": "navigate", "navigation": "reload", "url": "http://a/"}, "takes no url"),
    ],
)
def test_interact_rejects_bad_arguments(args: dict, expected: str) -> None:
    h = Harness()

    async def scenario(c: mcp.Client) -> None:
        assert expected in error_text(await c.call_tool("interact", args))

    h.run(scenario)
    assert h.link.calls == []


def test_interact_navigation_failure() -> None:
    err = CommandError("navigation_failed", "net::ERR_NAME_NOT_RESOLVED")
    h = Harness(FakeLink(navigate=err))

    async def scenario(c: mcp.Client) -> None:
        r = await c.call_tool("interact", {"action": "navigate", "url": "http://nope.invalid/"})
        assert "ERR_NAME_NOT_RESOLVED" in error_text(r)

    h.run(scenario)


# ---- connection ------------------------------------------------------------------------------


def test_lost_bus_reconnects_once_and_retries() -> None:
    h = Harness()
    failures = [BusError("host went away")]

    def page_info(args: dict) -> Any:
        return failures.pop() if failures else {"url": "u", "ready_state": "complete"}

    h.link.handlers["page_info"] = page_info

    async def scenario(c: mcp.Client) -> None:
        r = await c.call_tool("observe", {})
        assert only_json(r)["readyState"] == "complete"

    h.run(scenario)
    assert h.connects == 2
    assert h.link.commands() == ["page_info", "page_info"]


def test_no_browser_is_an_actionable_error() -> None:
    h = Harness()

    async def refuse() -> FakeLink:
        raise NotConnectedError("no shotbridge host is running")

    h.state.connection._factory = refuse

    async def scenario(c: mcp.Client) -> None:
        for what in ("page", "errors", "tabs"):
            text = error_text(await c.call_tool("observe", {"what": what}))
            assert "No browser is connected" in text and "--browser headless" in text

    h.run(scenario)


def test_one_connect_for_concurrent_calls_and_close_at_shutdown() -> None:
    h = Harness()

    async def slow() -> FakeLink:
        h.connects += 1
        await asyncio.sleep(0.05)
        return h.link

    h.state.connection._factory = slow

    async def scenario(c: mcp.Client) -> None:
        results = await asyncio.gather(*(c.call_tool("observe", {}) for _ in range(5)))
        assert not any(r.is_error for r in results)

    h.run(scenario)
    assert h.connects == 1
    assert h.link.closed  # the server's lifespan closed the connection


def test_lost_host_of_a_live_browser_is_revived_not_relaunched() -> None:
    class RevivableLink(FakeLink):
        revived = 0

        async def revive(self) -> bool:
            self.revived += 1
            return True

    link = RevivableLink()
    failures = [BusError("host restarted")]
    link.handlers["list_tabs"] = lambda a: failures.pop() if failures else {"tabs": []}
    h = Harness(link)

    async def scenario(c: mcp.Client) -> None:
        assert only_json(await c.call_tool("observe", {"what": "tabs"}))["tabs"] == []

    h.run(scenario)
    assert (h.connects, link.revived, link.closed) == (1, 1, True)  # closed only at shutdown
