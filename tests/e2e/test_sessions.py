"""Sessions per client: two real ``shotctl mcp`` stdio servers on one browser,
headless and the user's own headed one.

Each server is its own session in the host: its own screenshots, labels, steps and timeline. A
label or pixel click resolves against the screenshots returned to *that* server; another server's
screenshot ids are refused; one server's steps never appear in the other's reproduction script.
``--shared-session`` opts two servers into one session.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.conftest import start_browser
from tests.mcp_stdio import McpSession

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module", params=["headless", "headed"])
def browser_env(request: pytest.FixtureRequest) -> Iterator[dict[str, str]]:
    """What an MCP client's environment needs to reach one browser: a headless Chromium of the
    test's own, or the user's headed Chromium (Xvfb, a normal profile, `shotctl install`) reached
    with the minimal environment an IDE passes."""
    if request.param == "headed":
        request.getfixturevalue("headed")
        yield request.getfixturevalue("desktop").minimal_env()
        return
    b = start_browser(window_size=(1280, 800))
    yield {"SHOTBRIDGE_RUNTIME_DIR": str(b.runtime_dir)}
    b.close()


def _server(env: dict[str, str], *extra: str) -> McpSession:
    return McpSession("--browser", "connected", "--cooldown", "0", *extra, env=env)


def _ok(s: McpSession, name: str, args: dict[str, Any]) -> Any:
    r = s.call(name, args)
    assert not r.is_error, r.content
    return r


def _text(r: Any) -> str:
    return "\n".join(b.text for b in r.content if b.type == "text")


def _label_of(r: Any, selector: str) -> int:
    mapping = json.loads(next(b.text for b in r.content if b.type == "text"))
    return next(a["label"] for a in mapping["annotations"] if a["selector"] == selector)


def _shot_id(r: Any) -> int:
    found = re.search(r"screenshot_id\W+(\d+)", _text(r))
    assert found, _text(r)
    return int(found.group(1))


def _first_json(r: Any) -> Any:
    return json.loads(next(b.text for b in r.content if b.type == "text"))


def test_two_clients_never_see_each_others_screenshots_or_steps(
    browser_env: dict[str, str], pages_url: str
) -> None:
    with _server(browser_env) as a, _server(browser_env) as b:
        _ok(a, "interact", {"action": "navigate", "url": f"{pages_url}/buttons.html"})
        annotated = _ok(a, "observe", {"what": "page", "annotate_screenshot": True, "map": "full"})
        second = _label_of(annotated, "#b2")

        # B takes a screenshot of its own after A's labelled one.
        b_shot = _shot_id(_ok(b, "capture_screenshot", {}))

        # B has no labelled screenshot: A's labels are not B's.
        r = b.call("interact", {"action": "click", "label": 1})
        assert r.is_error and "No annotated screenshot" in _text(r), _text(r)
        # A may not point into B's screenshot.
        r = a.call("interact", {"action": "click", "x": 10, "y": 10, "screenshot_id": b_shot})
        assert r.is_error and "not one of this session's screenshots" in _text(r), _text(r)
        # A's label resolves against A's own map, whatever B captured since.
        clicked = _ok(a, "interact", {"action": "click", "label": second})
        assert "#b2" in _text(clicked)

        a_script = _text(_ok(a, "get_reproduction_script", {}))
        assert "buttons.html" in a_script and "Second" in a_script, a_script
        b_script = _text(_ok(b, "get_reproduction_script", {}))
        assert "buttons.html" not in b_script and "Second" not in b_script, b_script

        a_list = _first_json(_ok(a, "observe", {"what": "screenshots"}))
        b_list = _first_json(_ok(b, "observe", {"what": "screenshots"}))
        a_ids = {s["id"] for s in a_list["screenshots"]}
        b_ids = {s["id"] for s in b_list["screenshots"]}
        assert b_ids == {b_shot} and b_shot not in a_ids and a_ids, (a_ids, b_ids)


def test_shared_session_is_an_explicit_option(browser_env: dict[str, str], pages_url: str) -> None:
    with (
        _server(browser_env, "--shared-session") as a,
        _server(browser_env, "--shared-session") as b,
    ):
        _ok(a, "interact", {"action": "navigate", "url": f"{pages_url}/buttons.html"})
        annotated = _ok(a, "observe", {"what": "page", "annotate_screenshot": True, "map": "full"})
        first = _label_of(annotated, "#b1")
        clicked = _ok(b, "interact", {"action": "click", "label": first})
        assert "#b1" in _text(clicked)
