"""Generated replays: steps that are what happened, served fixtures, error assertions, modules."""

from __future__ import annotations

import json

from shotbridge.generate import fixtures as fx
from shotbridge.generate.playwright import generate_test_spec, recorded_errors, reproduction_script
from shotbridge.generate.steps import build_steps
from shotbridge.wire.timeline import ActionEntry, NavEntry

from tests.session_builder import Rec, target

BASE = "http://127.0.0.1:8000"
BUTTON = {"selector": "#load", "tag": "button", "role": "button", "name": "Load"}


def _nav(r: Rec, url: str, origin: str | None, dt: float = 0.5) -> Rec:
    r.url = url
    return r._add(NavEntry(url=url, complete=True, origin=origin), dt)  # type: ignore[arg-type]


def test_a_navigation_the_tool_asked_for_is_its_own_step_however_soon() -> None:
    r = _nav(Rec(), f"{BASE}/", "tool")
    r.act("click", target=target(**BUTTON), origin="tool")
    _nav(r, f"{BASE}/throw.html", "tool", dt=0.2)  # the agent's next call, 200 ms later
    steps = build_steps(r.session())
    assert [(s.kind, s.origin) for s in steps] == [
        ("goto", "tool"),
        ("action", "tool"),
        ("goto", "tool"),
    ]
    assert steps[1].navigates_to is None and steps[1].effect == "content"
    code = generate_test_spec(r.session())
    assert "waitForURL" not in code
    assert f"await page.goto('{BASE}/throw.html');" in code


def test_a_navigation_after_a_tool_click_is_the_clicks_effect_and_unattributed_keep_3s() -> None:
    r = _nav(Rec(), f"{BASE}/", "tool")
    r.act("click", target=target(**BUTTON), origin="tool")
    _nav(r, f"{BASE}/next", "tool_action", dt=5.0)  # late, but the host saw it follow the click
    steps = build_steps(r.session())
    assert len(steps) == 2 and steps[1].navigates_to == f"{BASE}/next"
    assert steps[1].effect == "navigation"
    r2 = _nav(Rec(), f"{BASE}/", None)
    r2.act("click", target=target(**BUTTON))
    _nav(r2, f"{BASE}/next", None, dt=1.0)
    assert build_steps(r2.session())[1].navigates_to == f"{BASE}/next"


def test_enter_and_the_browsers_submit_click_are_one_step() -> None:
    r = _nav(Rec(), f"{BASE}/form", None)
    field = {"selector": "#title", "tag": "input", "type": "text"}
    r.fill("Widget", **field)
    r.act("press", target=target(**field), key="Enter")
    submit = target(selector="#add", tag="button", type="submit", role="button", name="Add")
    r.act("click", dt=0.001, target=submit, detail=0, position={"x": 0, "y": 0})
    r.act("submit", dt=0.001, target=target(selector="form", tag="form"), via="submitter")
    kinds = [s.action.kind for s in build_steps(r.session()) if s.action]
    assert kinds == ["fill", "press"]
    # A real click on the button (detail 1) right after is the user's: kept.
    r.act("press", target=target(**field), key="Enter")
    r.act("click", dt=0.05, target=submit, detail=1)
    assert [s.action.kind for s in build_steps(r.session()) if s.action][-2:] == ["press", "click"]


def test_canvas_clicks_replay_at_the_recorded_offset() -> None:
    r = _nav(Rec(), f"{BASE}/", None)
    r.act("click", target=target(selector="#pad", tag="canvas"), position={"x": 40, "y": 25})
    r.act("click", target=target(**BUTTON), position={"x": 3, "y": 4})
    code = generate_test_spec(r.session())
    assert "await page.locator('#pad').click({ position: { x: 40, y: 25 } });" in code
    assert "await page.locator('#load').click();" in code  # a button is one wherever it is hit


def test_error_assertions_name_recorded_errors_not_resource_noise() -> None:
    r = _nav(Rec(), f"{BASE}/", None)
    r.act("click", target=target(**BUTTON))
    r.error("Failed to load resource: the server responded with a status of 404", kind="console")
    r.error("Uncaught Error: boom")
    steps = build_steps(r.session())
    assert recorded_errors(steps) == [
        {"kind": "exception", "message": "Uncaught Error: boom", "source": "app.js"}
    ]
    code = generate_test_spec(r.session())
    assert "const recordedErrors: { message: string; source: string }[] = [" in code
    assert "Failed to load resource" not in code.split("test(")[1].split("// Step")[0]
    assert "page.on('pageerror'" in code
    js = generate_test_spec(r.session(), language="js", module="cjs")
    assert "const { test, expect } = require('@playwright/test');" in js
    assert "string[]" not in js


def test_served_fixtures_are_reads_in_order_and_never_writes() -> None:
    r = _nav(Rec(), f"{BASE}/", None)
    items = [{"id": 7, "title": "Old", "createdAt": "2025-03-01T10:00:00Z"}]
    r.get(f"{BASE}/api/items", json.dumps(items))
    r.act("click", target=target(**BUTTON))
    r.request("POST", f"{BASE}/api/items", json.dumps({"title": "New"}), 201)
    after = [*items, {"id": 8, "title": "New", "createdAt": "2025-03-01T10:00:05Z"}]
    r.get(f"{BASE}/api/items", json.dumps(after))
    served = fx.routes(build_steps(r.session()))
    (url,) = served.by_url
    bodies = [x.json_body for x in served.by_url[url]]
    assert bodies[0] == [{"id": 1001, "title": "Old", "createdAt": fx.FAKE_TIME}]
    assert [b["id"] for b in bodies[1]] == [1001, 1002]  # stable: the same id, the same fake
    code = generate_test_spec(r.session(), include_fixtures=True)
    assert "beforeAll" not in code and "route.fulfill" in code
    assert "'New'" in code.split("const replies")[1]  # the second read, after the write
    assert "request.newContext" not in code
    script = reproduction_script(r.session(), include_fixtures=True, module="esm")
    assert "import { chromium } from 'playwright';" in script and "context.route(" in script


def test_large_and_cut_bodies_stay_valid_json_and_personal_data_is_faked() -> None:
    people = [
        {"name": f"P{i}", "phone": "+44 20 7946 0958", "ssn": "123-45-6789", "meta": {"t": 1}}
        for i in range(300)
    ]
    raw = json.dumps({"people": people})
    r = _nav(Rec(), f"{BASE}/", None)
    r.get(f"{BASE}/api/people", raw[: fx.RECORDER_BODY_LIMIT])  # the recorder's cut
    r.get(f"{BASE}/api/broken", "{not json")
    r.act("click", target=target(**BUTTON))
    served = fx.routes(build_steps(r.session()))
    (resp,) = served.responses
    kept = resp.json_body["people"]
    assert len(kept) == fx.MAX_ITEMS and kept[0]["phone"] == fx.FAKE_PHONE
    assert (
        kept[0]["ssn"] in (fx.FAKE_NATIONAL_ID, "REDACTED", "test-token") and kept[0]["meta"] == {}
    )
    assert any("cut by the recorder" in n for n in resp.notes)
    assert any("items" in n for n in resp.notes)
    assert served.skipped == [f"GET {BASE}/api/broken: the recorded body is not valid JSON"]
    code = generate_test_spec(r.session(), include_fixtures=True)
    assert "// Not served: GET" in code and "+44 20" not in code and "123-45-6789" not in code


def test_salvage_closes_after_the_last_complete_item() -> None:
    assert fx.salvage('{"a": [{"b": "c"}, {"b": "d') == {"a": [{"b": "c"}]}
    assert fx.salvage("[1, 2, 3") == [1, 2]
    assert fx.salvage('"unterminated') is None


def test_seed_mode_posts_what_existed_before_never_the_sessions_writes() -> None:
    r = _nav(Rec(), f"{BASE}/", None)
    r.get(f"{BASE}/api/items", json.dumps([{"id": 1, "title": "Old"}]))
    r.act("click", target=target(**BUTTON))
    r.request("POST", f"{BASE}/api/items", json.dumps({"title": "New"}), 201)
    r.request(
        "GET",
        f"{BASE}/api/items",
        json.dumps([{"id": 1, "title": "Old"}, {"id": 2, "title": "New"}]),
    )
    plan = fx.seed(build_steps(r.session()), None)
    assert [q.json_body for q in plan.requests] == [{"title": "Old"}]
    code = generate_test_spec(r.session(), fixtures="seed")
    assert "existed before the session" in code and "'New'" not in code.split("test(")[0]


def test_steps_know_their_origin_from_the_recorded_entries() -> None:
    a = ActionEntry(kind="click", origin="user")
    assert a.origin == "user"


def test_canvas_clicks_keep_the_recorded_fraction_of_a_pixel() -> None:
    # A canvas at a fractional offset: rounding 38.44 to 38 replayed the click a pixel off.
    r = Rec().nav("http://127.0.0.1:8000/")
    r.act("click", target=target(selector="#pad", tag="canvas"), position={"x": 59.5, "y": 38.44})
    code = generate_test_spec(r.session(), assert_visual=False)
    assert "await page.locator('#pad').click({ position: { x: 59.5, y: 38.44 } });" in code
