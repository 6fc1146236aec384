"""Early, plain errors: configure refuses bad mask selectors at once, and a tool's
argument validation error reaches the model as one sentence naming the field and allowed values.
Runs the real ``shotctl mcp`` over stdio; neither check needs a browser."""

from __future__ import annotations

from shotbridge.mcp_server.tools.configure import css_syntax_error

from tests.mcp_stdio import McpSession


def _text(result: object) -> str:
    return " ".join(getattr(c, "text", "") for c in result.content)  # type: ignore[attr-defined]


def test_css_syntax_error_catches_what_every_parser_rejects() -> None:
    assert css_syntax_error("#ssn") is None
    assert css_syntax_error('input[name="a]b"]') is None
    assert css_syntax_error("div:not(.x)") is None
    assert css_syntax_error("div[") == "'[' is not closed"
    assert css_syntax_error(".a)") == "')' has no opening bracket"
    assert css_syntax_error("form >") == "it ends with '>'"
    assert css_syntax_error("  ") == "it is empty"


def test_configure_and_validation_errors_are_plain_sentences() -> None:
    with McpSession("--browser", "connected") as s:
        bad = s.call("configure", {"action": "capture", "settings": {"mask_selectors": ["div["]}})
        assert bad.is_error
        text = _text(bad)
        assert "mask_selectors" in text and "'div['" in text and "not closed" in text, text
        shown = _text(s.call("configure", {"action": "capture"}))
        assert "div[" not in shown, shown  # nothing was changed

        wrong = s.call("observe", {"what": "page", "max_annotations": "lots"})
        assert wrong.is_error
        text = _text(wrong)
        assert text.startswith("observe: argument 'max_annotations' must be"), text
        assert "'lots'" in text and "pydantic" not in text and "\n" not in text, text
