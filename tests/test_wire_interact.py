"""The interact command's wire models: a result keeps exactly the keys it was given, and the MCP
tool's parameters (one model) make the schema it publishes."""

from __future__ import annotations

import asyncio
import inspect
import json
from typing import Any

import mcp
from shotbridge.mcp_server import Connection, ServerState, build_server
from shotbridge.mcp_server.arg_errors import parameters
from shotbridge.mcp_server.ratelimit import ScreenshotBudget
from shotbridge.mcp_server.tools.interact import ToolArgs
from shotbridge.wire.interact import (
    CdpResult,
    ErrorInfo,
    InteractResult,
    Navigated,
    ScreenshotFailed,
    Tab,
)
from shotbridge.wire.screenshot import ScreenshotResult

from tests.mcp_fakes import FakeLink, screenshot_result

# The extension's input reply, as lib/input.js builds it: keys the models do not declare, ints
# where the page measured whole pixels, null scroll after a dialog opened.
INPUT_REPLY: dict[str, Any] = {
    "action": "click",
    "hit": {
        "tag": "button",
        "role": "button",
        "name": "Save",
        "selector": "#save",
        "text": "Save",
        "bounds": {"x": 10, "y": 20, "width": 80, "height": 24},
        "frame": ["iframe#pay"],
    },
    "point": {"x": 50, "y": 32.5},
    "scroll_corrected": {"dx": 0, "dy": 120},
    "scrolled_to": {"x": 0, "y": 900},
    "url": "http://a/",
    "title": "A",
    "scroll": None,
    "scroll_before": {"x": 0, "y": 0},
    "viewport": {"width": 1280, "height": 800},
    "navigated": False,
    "dialog": {"type": "confirm", "message": "Sure?", "default_prompt": "", "opened_at": 1.5},
    "notes": ["The page shows a confirm dialog."],
}


def test_a_reply_dumps_with_the_keys_and_numbers_it_came_with() -> None:
    done = InteractResult.model_validate(json.loads(json.dumps(INPUT_REPLY)))
    out = done.model_dump(mode="python")
    assert out == INPUT_REPLY
    # JSON text of each value is the same too: 50 stays 50, not 50.0.
    for key, value in INPUT_REPLY.items():
        assert json.dumps(out[key]) == json.dumps(value), key
    assert done.hit is not None and done.hit.selector == "#save"
    assert done.point is not None and (done.point.x, done.point.y) == (50, 32.5)


def test_fields_the_host_sets_appear_and_unset_ones_stay_absent() -> None:
    done = InteractResult.model_validate({"action": "hover", "url": "http://a/"})
    assert done.model_dump() == {"action": "hover", "url": "http://a/"}
    done.screenshot_id = 4
    done.label_selector = None  # set, even to None: the key goes out
    assert done.model_dump() == {
        "action": "hover",
        "url": "http://a/",
        "screenshot_id": 4,
        "label_selector": None,
    }
    assert done.notes == [] and "notes" not in done.model_dump()


def test_a_navigation_to_a_tab_without_a_url_still_says_url_null() -> None:
    tab = Navigated.model_validate({}).tab or Tab()
    out = InteractResult(action="navigate", navigated=True, tab=tab, url=tab.url, title=tab.title)
    assert out.model_dump() == {
        "action": "navigate",
        "url": None,
        "title": None,
        "navigated": True,
        "tab": {},
    }


def test_the_screenshot_after_an_action_is_a_result_or_why_not() -> None:
    shot = screenshot_result({})
    done = InteractResult.model_validate({"action": "click", "screenshot": shot})
    assert isinstance(done.screenshot, ScreenshotResult)
    assert done.model_dump()["screenshot"] == ScreenshotResult.model_validate(shot).model_dump()
    failed = {"error": {"code": "timeout", "message": "too slow"}}
    done = InteractResult.model_validate({"action": "click", "screenshot": failed})
    assert done.screenshot == ScreenshotFailed(error=ErrorInfo(code="timeout", message="too slow"))
    assert done.model_dump() == {"action": "click", "screenshot": failed}


def test_a_cdp_result_keeps_chromes_reply_as_sent() -> None:
    raw = {"method": "Runtime.evaluate", "tab_id": 3, "result": {"result": {"value": 3}}}
    done = CdpResult.model_validate(raw)
    assert done.model_dump() == raw and done.image is None
    assert CdpResult.model_validate({"method": "X.y"}).result == {}


def test_the_tools_signature_is_its_argument_model() -> None:
    @parameters(ToolArgs)
    async def tool(**kwargs: Any) -> None:
        return None

    params = inspect.signature(tool).parameters
    assert list(params) == list(ToolArgs.model_fields)
    assert params["action"].default is inspect.Parameter.empty
    assert params["navigation"].default == "url" and params["click_count"].default == 1


def test_the_published_schema_lists_the_models_fields_in_order() -> None:
    async def factory() -> FakeLink:
        return FakeLink()

    state = ServerState(connection=Connection(factory), budget=ScreenshotBudget())

    async def schema() -> dict[str, Any]:
        async with mcp.Client(build_server(state)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
        return tools["interact"].input_schema

    published = asyncio.run(schema())
    assert list(published["properties"]) == list(ToolArgs.model_fields)
    assert published["required"] == ["action"]
    assert published["properties"]["label"]["minimum"] == 1
    assert published["properties"]["button"]["enum"] == ["left", "right", "middle"]
