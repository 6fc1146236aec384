"""A field's value never names it in what the host generates: ``redact.selector`` drops every
``[value…]`` condition (any operator, quoting, escapes and case flag) from a recorded selector,
except on a button-like input whose value is its caption; the generators apply it to every
recorded target, so a selector recorded by an older extension (or a page that mirrored a
password into the attribute) never reaches a spec, a script or a bug report."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from shotbridge.generate import playwright, redact, report

from tests.session_builder import Rec

SECRET = "Hunter2Mirror"


def css_string(value: str, quote: str) -> str:
    """``value`` as a CSS string, escaped the way the extension's selector builder does."""
    body = value.replace("\\", "\\\\").replace(quote, "\\" + quote).replace("\n", "\\a ")
    return quote + body + quote


@pytest.mark.parametrize(
    ("selector", "input_type", "expected"),
    [
        (f'input[value="{SECRET}"]', "password", "input"),
        (f"input[value='{SECRET}']", "text", "input"),
        (f"input[value={SECRET}]", "", "input"),
        (f'input[value="{SECRET}" i]', "password", "input"),
        (f'input[ VALUE ^= "{SECRET}" ]', "password", "input"),
        (
            f'form > input[type="password"][value="{SECRET}"]',
            "password",
            'form > input[type="password"]',
        ),
        (f'x-login >>> input[value="{SECRET}"]', "password", "x-login >>> input"),
        (
            'input[type="submit"][value="Sign in"]',
            "submit",
            'input[type="submit"][value="Sign in"]',
        ),
        ('input[value="Reset"]', "RESET", 'input[value="Reset"]'),
        ('input[data-value="x"]', "text", 'input[data-value="x"]'),
        ("input[valued=x]", "text", "input[valued=x]"),
    ],
)
def test_value_conditions_leave_field_selectors(
    selector: str, input_type: str, expected: str
) -> None:
    assert redact.selector(selector, input_type) == expected


@given(
    value=st.text(min_size=1, max_size=40),
    quote=st.sampled_from(['"', "'"]),
    op=st.sampled_from(["=", "~=", "|=", "^=", "$=", "*="]),
    flag=st.sampled_from(["", " i", " s"]),
    before=st.sampled_from(["input", "form input", "#f >>> input", "input[type=password]"]),
    after=st.sampled_from(["", ":nth-of-type(2)", "[name=pw]"]),
    input_type=st.sampled_from(["", "password", "text", "email", "hidden", "checkbox"]),
)
def test_no_quoted_value_survives(
    value: str, quote: str, op: str, flag: str, before: str, after: str, input_type: str
) -> None:
    sel = f"{before}[value{op}{css_string(value, quote)}{flag}]{after}"
    assert redact.selector(sel, input_type) == before + after


def test_generated_code_and_report_never_name_a_field_by_its_value() -> None:
    r = Rec().nav("http://app.test/signup")
    fields = {"tag": "input", "type": "password", "unique": {"css": True}}
    r.click(selector=f'input[value="{SECRET}"]', **fields)
    r.fill("<redacted>", secret=True, selector=f'form input[value="{SECRET}"]', **fields)
    r.click(selector='input[type="submit"][value="Create"]', tag="input", type="submit")
    session = r.session()
    for text in (
        playwright.generate_test_spec(session, assert_visual=False),
        playwright.reproduction_script(session),
        report.bug_report(session),
    ):
        assert SECRET not in text
        assert "form input" in text
    assert '[value="Create"]' in playwright.generate_test_spec(session, assert_visual=False)
