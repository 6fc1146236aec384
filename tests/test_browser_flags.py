"""Extra Chromium flags from the environment (SHOTBRIDGE_EXTRA_BROWSER_FLAGS)."""

from __future__ import annotations

import pytest
from shotbridge.client import browser
from shotbridge.wire.errors import BrowserError


def test_extra_flags_are_split_as_a_shell_would(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(browser.EXTRA_FLAGS_ENV, "--a=1 '--b=two words'")
    assert browser._flags_from_env() == ["--a=1", "--b=two words"]
    monkeypatch.delenv(browser.EXTRA_FLAGS_ENV)
    assert browser._flags_from_env() == []


PORTS = ["--remote-debugging-port=9222", "--remote-debugging-address=0.0.0.0"]


@pytest.mark.parametrize("flag", PORTS)
def test_a_debugging_port_is_refused(monkeypatch: pytest.MonkeyPatch, flag: str) -> None:
    monkeypatch.setenv(browser.EXTRA_FLAGS_ENV, f"--ok {flag}")
    with pytest.raises(BrowserError, match="opens none"):
        browser._flags_from_env()


def test_headless_screenshots_take_a_new_surface() -> None:
    assert "--enable-features=CDPScreenshotNewSurface" in browser._FLAGS
