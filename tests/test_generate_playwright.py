"""Locator choice, step building and the generated Playwright code (no browser)."""

from __future__ import annotations

import pytest
from shotbridge.generate.encode import js_string as js
from shotbridge.generate.locators import css, locator, strategy
from shotbridge.generate.playwright import generate_test_spec, reproduction_script
from shotbridge.generate.steps import build_steps, dynamic_selectors, failing_step, watched_pages

from tests.session_builder import Rec, target

BASE = "http://127.0.0.1:8000"


# ---- locators ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        (
            {"testid": "save", "role": "button", "name": "Save", "unique": {"testid": True}},
            "page.getByTestId('save')",
        ),
        (
            {
                "testid": "row",
                "role": "button",
                "name": "Save",
                "unique": {"testid": False, "role": True},
            },
            "page.getByRole('button', { name: 'Save', exact: true })",
        ),
        (
            {"role": "textbox", "name": "Email", "label": "Email", "unique": {"label": True}},
            "page.getByLabel('Email', { exact: true })",
        ),
        (
            {
                "role": "textbox",
                "name": "Search…",
                "name_from_placeholder": True,
                "selector": "#q",
                "unique": {"role": True},
            },
            "page.locator('#q')",
        ),
        (
            {"role": "button", "name": "Very long…", "selector": "#b", "unique": {"role": True}},
            "page.locator('#b')",
        ),
        (
            {"role": "bogusrole", "name": "X", "selector": "div > span", "unique": {"role": True}},
            "page.locator('div > span')",
        ),
        ({"selector": "my-app >>> button.go"}, "page.locator('my-app button.go')"),
    ],
)
def test_locator_preference(fields: dict, expected: str) -> None:
    assert locator(target(**fields)) == expected


def test_strategy_names() -> None:
    assert strategy(target(testid="a", unique={"testid": True})) == "testid"
    assert strategy(target(role="link", name="Home", unique={"role": True})) == "role"
    assert strategy(target(label="Name", unique={"label": True})) == "label"
    assert strategy(target(selector="#x")) == "css"


def test_js_strings_are_escaped() -> None:
    assert js("it's") == "'it\\'s'"
    assert js('say "hi"') == "'say \"hi\"'"
    assert js("a\\b\nc") == "'a\\\\b\\nc'"
    assert css("a >>> b >>> c") == "a b c"


# ---- steps ---------------------------------------------------------------------------------


def session_with_login_flow() -> Rec:
    r = Rec().nav(f"{BASE}/")
    r.click(role="link", name="Sign in", tag="a", selector="a", unique={"role": True})
    r.nav(f"{BASE}/login")  # caused by the click
    r.click(selector="#email", tag="input", type="email", role="textbox", name="Email")
    r.fill(
        "a@b.co",
        selector="#email",
        tag="input",
        type="email",
        label="Email",
        unique={"label": True},
    )
    r.fill(
        "<redacted>",
        secret=True,
        selector="#pw",
        tag="input",
        type="password",
        label="Password",
        unique={"label": True},
    )
    r.act("press", target=target(selector="#pw", tag="input", type="password"), key="Enter")
    r.act("submit", dt=0.05, target=target(selector="form", tag="form"), via="submitter")
    r.nav(f"{BASE}/home")
    return r


def test_steps_fold_caused_navigations_focus_clicks_and_submits() -> None:
    steps = build_steps(session_with_login_flow().session())
    kinds = [(s.kind, s.action.kind if s.action else None) for s in steps]
    assert kinds == [
        ("goto", None),
        ("action", "click"),
        ("action", "fill"),
        ("action", "fill"),
        ("action", "press"),
    ]
    assert steps[1].navigates_to == f"{BASE}/login"
    assert steps[4].navigates_to == f"{BASE}/home"
    assert [s.index for s in steps] == [1, 2, 3, 4, 5]


def test_navigation_long_after_an_action_is_its_own_step() -> None:
    r = Rec().nav(f"{BASE}/a")
    r.click(selector="#b", tag="button")
    r._add(r.timeline.entries[0].model_copy(update={"url": f"{BASE}/c"}), dt=10)
    steps = build_steps(r.session())
    assert [s.kind for s in steps] == ["goto", "action", "goto"]
    assert steps[1].navigates_to is None


def test_errors_attach_to_the_step_they_followed() -> None:
    r = Rec().nav(f"{BASE}/")
    r.click(selector="#ok", tag="button")
    r.click(selector="#bad", tag="button").error("TypeError: x is undefined")
    steps = build_steps(r.session())
    fail = failing_step(steps)
    assert fail is not None and fail.index == 3
    assert [e.message for e in fail.errors] == ["TypeError: x is undefined"]


def test_dynamic_content_is_what_changed_between_quiet_observations() -> None:
    r = Rec().nav(f"{BASE}/")
    r.observe({"#clock": "10:00:01", "h1": "Shop", "#count": "0 items"})
    r.observe({"#clock": "10:00:02", "h1": "Shop", "#count": "0 items"})
    r.fill("x", selector="#q", tag="input")  # typing does not change other content
    r.observe({"#clock": "10:00:04", "h1": "Shop", "#ad": "Buy!", "#count": "0 items"})
    r.click(selector="#add", tag="button")  # this may: no comparison across it
    r.observe({"#clock": "10:00:05", "h1": "Shop", "#count": "1 item"})
    assert dynamic_selectors(r.session()) == {f"{BASE}/": {"#clock"}}


# ---- generated code --------------------------------------------------------------------------


def test_spec_has_visual_assertions_after_navigation_and_content_changes() -> None:
    r = Rec().nav(f"{BASE}/")
    r.observe({"#clock": "1"}).observe({"#clock": "2"})
    r.fill("Widget", selector="#t", tag="input", label="Title", unique={"label": True})
    r.click(selector="#add", tag="button", role="button", name="Add", unique={"role": True})
    r.click(selector="#b", tag="button", role="button", name="Break", unique={"role": True})
    r.error("boom", kind="console")
    code = generate_test_spec(r.session())
    lines = [ln.strip() for ln in code.splitlines()]
    assert "import { test, expect } from '@playwright/test';" in lines  # ESM and TypeScript
    assert not any("require(" in ln for ln in lines)
    i_goto = lines.index(f"await page.goto('{BASE}/');")
    shot = (
        "await expect(page).toHaveScreenshot('step-1.png', { maxDiffPixels: 100, threshold: 0.1, "
        "animations: 'disabled', caret: 'hide', mask: [page.locator('#clock')] });"
    )
    assert lines[i_goto + 1] == "await page.waitForLoadState('networkidle');"
    assert lines[i_goto + 2] == shot
    i_fill = lines.index("await page.getByLabel('Title', { exact: true }).fill('Widget');")
    assert "toHaveScreenshot" not in lines[i_fill + 1]  # typing is not content-changing
    i_add = lines.index("await page.getByRole('button', { name: 'Add', exact: true }).click();")
    assert lines[i_add + 2].startswith("await expect(page).toHaveScreenshot('step-3.png'")
    assert "// Recorded console error here: boom (app.js:0)" in lines
    assert "expect(pageErrors, 'errors the page reported').toEqual([]);" in lines[-4:]


def test_spec_options_turn_parts_off() -> None:
    r = Rec().nav(f"{BASE}/")
    r.observe({"#clock": "1"}).observe({"#clock": "2"})
    plain = generate_test_spec(r.session(), assert_visual=False, assert_no_errors=False)
    assert "toHaveScreenshot" not in plain and "pageErrors" not in plain
    unmasked = generate_test_spec(r.session(), mask_dynamic=False)
    assert (
        "toHaveScreenshot('step-1.png', { maxDiffPixels: 100, threshold: 0.1, "
        "animations: 'disabled', caret: 'hide' });" in unmasked
    )


def test_secret_values_are_never_written() -> None:
    code = generate_test_spec(session_with_login_flow().session())
    assert "fill(process.env.TEST_PASSWORD || 'test-password');" in code
    assert "<redacted>" not in code.split("// Step 4")[1].split("\n")[1]


def test_reproduction_script_replays_with_screenshots() -> None:
    code = reproduction_script(session_with_login_flow().session(), include_screenshots=True)
    assert "const { chromium } = require('playwright');" in code
    assert "executablePath: process.env.CHROME_PATH || undefined" in code
    assert code.count("await page.screenshot({ path: 'step-") == 5
    assert f"await page.waitForURL((url) => url.href === '{BASE}/login');" in code
    assert "await page.getByLabel('Password', { exact: true }).press('Enter');" not in code
    assert "press('Enter');" in code
    assert "console.log('replayed 5 steps');" in code


def test_a_page_left_before_it_was_watched_gets_no_screenshot_assertion() -> None:
    # The tool opened the home page and went on within a second: nobody saw its clock tick, so a
    # screenshot of it would differ on every run. The board was watched (observed 1 s apart).
    r = Rec().nav(f"{BASE}/").observe({"#clock": "10:00:00.1"}, dt=0.3)
    r.nav(f"{BASE}/board").observe({"#clock": "1"}).observe({"#clock": "2"})
    assert watched_pages(r.session()) == {f"{BASE}/board"}
    code = generate_test_spec(r.session())
    assert "toHaveScreenshot('step-1.png'" not in code
    assert "left this page before seeing what moves" in code
    assert "toHaveScreenshot('step-2.png'" in code and "page.locator('#clock')" in code
    # A live sampling counts as watching, even when nothing moved.
    sampled = generate_test_spec(r.session(), sampled_dynamic={f"{BASE}/": set()})
    assert "toHaveScreenshot('step-1.png'" in sampled
    # Without mask_dynamic the caller opted out of masks: every step is asserted.
    assert "toHaveScreenshot('step-1.png'" in generate_test_spec(r.session(), mask_dynamic=False)
    # A session with no observation at all (observe off) has nothing to go by: as before.
    blind = Rec().nav(f"{BASE}/").nav(f"{BASE}/board").session()
    assert "toHaveScreenshot('step-2.png'" in generate_test_spec(blind)
