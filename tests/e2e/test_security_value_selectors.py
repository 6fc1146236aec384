"""A field's value never names it: not in selectors, locators, annotations or generated code.

tests/pages/security/mirror.html has two unnamed password fields told apart only by their values:
one server-rendered (``value="PresetSecret41"``), one whose script mirrors what is typed into the
value attribute. Before, the selector builder picked ``input[value="…"]`` for both, so the
secret went into ``interact`` results (next to ``"value_hidden": true``), annotations, the
recorded timeline, the generated test (``page.locator('input[value="…"]').fill(…)``) and the
bug report. Real Chromium, the real extension and host; the generators run on the real record.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from shotbridge.client.browser import HeadlessBrowser
from shotbridge.client.bus_client import BusClient
from shotbridge.generate import playwright, report
from shotbridge.generate.steps import Session

pytestmark = pytest.mark.browser

PRESET = "PresetSecret41"
TYPED = "TypedSecret97"
REPEAT = "form p:nth-of-type(2) input"


async def _record(browser: HeadlessBrowser, url: str) -> dict[str, Any]:
    async with await BusClient.connect(runtime_dir=browser.runtime_dir) as c:

        async def act(**args: Any) -> dict[str, Any]:
            return await c.request("interact", args, timeout=30)

        out: dict[str, Any] = {"navigate": await act(action="navigate", url=url)}
        out["click"] = await act(action="click", selector="form p:nth-of-type(1) input")
        out["type"] = await act(action="type", selector=REPEAT, text=TYPED)
        out["click_again"] = await act(action="click", selector=REPEAT)
        out["discover"] = await c.request("discover", {"target": "interactive"}, timeout=20)
        out["submit"] = await c.request("discover", {"target": "all_visible"}, timeout=20)
        await asyncio.sleep(0.5)  # the recorder's last entries reach the timeline
        out["timeline"] = await c.request("timeline", {}, timeout=10)
        return out


def test_a_password_value_never_names_its_field(browser: HeadlessBrowser, pages_url: str) -> None:
    got = asyncio.run(_record(browser, f"{pages_url}/security/mirror.html"))
    session = Session.from_export(got["timeline"])
    generated = {
        "spec": playwright.generate_test_spec(session, assert_visual=False),
        "script": playwright.reproduction_script(session),
        "report": report.bug_report(session),
    }
    # The typed value did reach the page's attribute (what the builder used to read).
    fields = [e for e in got["discover"]["elements"] if e.get("type") in ("password", "text")]
    assert len(fields) == 2, got["discover"]["elements"]
    for what, value in {**{k: got[k] for k in got if k != "timeline"}, **generated}.items():
        text = value if isinstance(value, str) else json.dumps(value)
        assert PRESET not in text and TYPED not in text, f"{what} holds the secret: {text[:2000]}"
    # The typing was recorded and replays, on a locator without the value.
    fills = [e for e in got["timeline"]["entries"] if e.get("kind") == "fill"]
    assert fills and fills[-1]["secret"], fills
    assert ".fill(" in generated["spec"], generated["spec"]
    # The fields are still told apart, by position under their labels.
    selectors = {e["selector"] for e in fields}
    assert len(selectors) == 2 and all(s and "value" not in s for s in selectors), selectors
    # A submit input's value is its visible caption: it may still name it.
    (button,) = [e for e in got["discover"]["elements"] if e.get("type") == "submit"]
    assert button["name"] == "Create account"
