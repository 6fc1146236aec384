"""Hostile pages vs. the session record, in real Chromium (the page is untrusted): a page cannot
write errors or requests into the record, cannot flood the user's steps out of it (not with
errors, nor with the submits and pushState calls Chromium reports as trusted), and network=false
records nothing; a field that was ever secret stays redacted and masked after a
show-password toggle; a page's lone UTF-16 surrogates never break a tool.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from shotbridge.client.browser import HeadlessBrowser
from shotbridge.client.bus_client import BusClient
from shotbridge.generate import playwright, report
from shotbridge.generate.steps import Session

from tests.e2e.test_security_capture import green_pixels
from tests.mcp_stdio import McpSession

pytestmark = pytest.mark.browser

Request = Callable[..., Awaitable[dict[str, Any]]]


async def _until(
    c: BusClient, ok: Callable[[list[dict[str, Any]]], bool], what: str, wait_s: float = 15
) -> list[dict[str, Any]]:
    """Poll the timeline until ``ok(entries)``; fail with the entries after ``wait_s``."""
    entries: list[dict[str, Any]] = []
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        entries = (await c.request("timeline", {}, timeout=10))["entries"]
        if ok(entries):
            return entries
        await asyncio.sleep(0.1)
    raise AssertionError(f"timeline never showed {what}: {entries[-20:]}")


def _errors(entries: list[dict[str, Any]], text: str) -> list[dict[str, Any]]:
    return [e for e in entries if e["type"] == "error" and text in e["message"]]


def test_pages_cannot_forge_flood_or_keep_recording_network(
    browser: HeadlessBrowser, pages_url: str
) -> None:
    url = f"{pages_url}/security/forge.html"

    async def run() -> None:
        async with await BusClient.connect(runtime_dir=browser.runtime_dir) as c:

            async def click(sel: str) -> None:
                await c.request("interact", {"action": "click", "selector": sel}, timeout=30)

            await c.request("record_config", {"network": False}, timeout=10)
            await c.request("interact", {"action": "navigate", "url": url}, timeout=30)
            await click("#forge")
            await click("#fetch")
            await click("#throw")  # a real error: the sentinel that the page's events arrived
            entries = await _until(c, lambda es: bool(_errors(es, "REAL-ERROR")), "REAL-ERROR")
            dump = json.dumps(entries)
            assert "FORGED" not in dump, [e for e in entries if "FORGED" in json.dumps(e)]
            assert not [e for e in entries if e["type"] == "network"]
            (real,) = _errors(entries, "REAL-ERROR")
            assert real["trusted"] is True and real["kind"] == "exception"
            errors = await c.request("errors", {}, timeout=10)
            assert "FORGED" not in json.dumps(errors)

            # Network capture on: a real request is recorded (as page-reported) ...
            await c.request("record_config", {"network": True}, timeout=10)
            await click("#fetch")
            entries = await _until(
                c, lambda es: any(e["type"] == "network" for e in es), "a network entry"
            )
            (net,) = [e for e in entries if e["type"] == "network"]
            assert "real-request" in net["url"] and net["trusted"] is False
            # ... and off again: the page's hooks stay in place but nothing more is recorded.
            await c.request("record_config", {"network": False}, timeout=10)
            await click("#fetch")
            await click("#forge")
            await click("#throw")
            entries = await _until(
                c, lambda es: len(_errors(es, "REAL-ERROR")) == 2, "the second REAL-ERROR"
            )
            assert len([e for e in entries if e["type"] == "network"]) == 1
            assert "FORGED" not in json.dumps(entries)

            # A flood of page errors cannot push the user's steps out of the record.
            await click("#flood")
            await click("#throw")
            entries = await _until(
                c, lambda es: len(_errors(es, "REAL-ERROR")) == 3, "the third REAL-ERROR"
            )
            assert any(e["type"] == "nav" and e["url"] == url for e in entries)
            clicks = [e for e in entries if e["type"] == "action" and e["kind"] == "click"]
            assert len(clicks) == 9, clicks
            assert len(_errors(entries, "FLOOD")) <= 40  # rate-limited at the source

    asyncio.run(run())


def test_a_page_cannot_flood_the_record_with_submits_urls_or_errors(
    browser: HeadlessBrowser, pages_url: str
) -> None:
    """The page submits, types and pushes URLs unasked while it loads, answers the real submit
    with 1,200 submits and 620 pushState calls of its own and floods errors for 20 s: the typing
    and the click stay, the page's URL changes are one entry per span with a count, its submits
    and typing are none, and the first real error leads the bug report."""
    url = f"{pages_url}/security/flood-record.html"

    async def run() -> tuple[dict[str, Any], dict[str, Any]]:
        async with await BusClient.connect(runtime_dir=browser.runtime_dir) as c:

            async def act(**args: Any) -> dict[str, Any]:
                return await c.request("interact", args, timeout=30)

            await act(action="navigate", url=url)
            await _until(c, lambda es: bool(_errors(es, "FIRST-REAL-ERROR")), "the real error")
            await act(action="type", selector="#name", text="Ada Lovelace")
            await act(action="click", selector="#save")
            await _until(c, lambda es: bool(_errors(es, "FLOOD-END")), "the flood's end", 90)
            return await c.request("timeline", {}, timeout=10), await c.request(
                "errors", {}, timeout=10
            )

    export, page_errors = asyncio.run(run())
    entries = export["entries"]
    actions = [e for e in entries if e["type"] == "action"]
    assert [a["value"] for a in actions if a["kind"] == "fill"] == ["Ada Lovelace"]
    assert any(a["kind"] == "click" and a["target"]["selector"] == "#save" for a in actions)
    assert len([a for a in actions if a["kind"] == "submit"]) <= 1, actions  # the real one
    assert len(actions) <= 4, actions  # click #name (type focuses it), fill, click, submit
    navs = [e for e in entries if e["type"] == "nav"]
    steps = [n for n in navs if not n["by_page"]]
    page = [n for n in navs if n["by_page"]]
    # The load, and at most the first URL change right after the click (the click's result).
    assert len(steps) <= 2 and steps[0]["url"] == url, steps
    assert len(page) <= 3 and sum(n["count"] for n in page) >= 100, page
    assert "PAGE-TYPED" not in json.dumps(entries)
    # The first real error is kept and comes first; the repeated console line is counted.
    errors = [e for e in entries if e["type"] == "error"]
    assert "FIRST-REAL-ERROR" in errors[0]["message"], errors[:3]
    same = [e for e in errors if e["message"] == "FLOOD-SAME"]
    assert len(same) <= 5 and max(e["count"] for e in same) > 10, same
    assert len(errors) <= 200
    assert any("FIRST-REAL-ERROR" in e["message"] for e in page_errors["errors"])

    session = Session.from_export(export)
    spec = playwright.generate_test_spec(session)
    script = playwright.reproduction_script(session)
    for code in (spec, script):
        assert "Ada Lovelace" in code and "'Save'" in code, code
        assert code.count(".goto(") == 1 and "requestSubmit" not in code, code
        assert code.count("waitForURL") <= 1, code
    bug = report.bug_report(session)
    assert "FIRST-REAL-ERROR" in bug.splitlines()[0], bug[:400]


def test_url_changes_a_gesture_or_the_tool_made_stay_steps(
    browser: HeadlessBrowser, pages_url: str
) -> None:
    """Next to a page that rewrites its URL on its own, the route change of a click, a fragment
    link, the tool's own #fragment and the tool's back are steps; the ticker's are one entry."""
    url = f"{pages_url}/security/routes.html"

    async def run() -> list[dict[str, Any]]:
        async with await BusClient.connect(runtime_dir=browser.runtime_dir) as c:

            async def act(**args: Any) -> dict[str, Any]:
                return await c.request("interact", args, timeout=30)

            def ticks(es: list[dict[str, Any]]) -> int:
                return sum(e["count"] for e in es if e["type"] == "nav" and e["by_page"])

            await act(action="navigate", url=url)
            await _until(c, lambda es: ticks(es) >= 5, "the ticker's URL changes")
            await act(action="click", selector="#route")  # stops the ticker, pushes ?view=2
            await act(action="click", selector="#details")
            await act(action="navigate", url=f"{url}?view=2#top")
            await act(action="back")
            return await _until(c, lambda es: len(steps_of(es)) >= 5, "the tool's back")

    def steps_of(es: list[dict[str, Any]]) -> list[str]:
        return [e["url"].removeprefix(url) for e in es if e["type"] == "nav" and not e["by_page"]]

    entries = asyncio.run(run())
    navs = [e for e in entries if e["type"] == "nav"]
    steps = steps_of(entries)
    assert steps == ["", "?view=2", "?view=2#details", "?view=2#top", "?view=2#details"], navs
    page = [n for n in navs if n["by_page"]]
    # The ticker's changes are one entry per span between two steps. How many spans it reaches
    # depends on timing (a tick can land between the click's press and its handler), so the check
    # is on the collapse itself: never two page entries without a step between them.
    assert sum(n["count"] for n in page) >= 5 and all("?tick=" in n["url"] for n in page), page
    kinds = ["page" if e in page else "step" for e in entries if e["type"] in ("nav", "action")]
    assert "page" in kinds and ("page", "page") not in itertools.pairwise(kinds), kinds
    session = Session.from_export({"entries": entries})
    spec = playwright.generate_test_spec(session)
    assert "?tick=" not in spec, spec
    assert spec.count(".goto(") == 3, spec  # the tool's: the load, #top, back (to #details)
    assert spec.count("waitForURL") == 2, spec  # the click's route change, the link's fragment


# What is typed into the PIN field: letters around the digits, so no tab or window id in a
# result can contain it by chance (a bare "8642" once matched a window id).
PIN = "q8642z"


def test_a_field_that_was_ever_secret_stays_secret(
    browser: HeadlessBrowser, pages_url: str
) -> None:
    async def run() -> None:
        async with await BusClient.connect(runtime_dir=browser.runtime_dir) as c:

            async def act(**args: Any) -> dict[str, Any]:
                return await c.request("interact", args, timeout=30)

            url = f"{pages_url}/security/toggle.html"
            results = [await act(action="navigate", url=url)]
            results.append(await act(action="click", selector="#show"))  # password -> text
            results.append(await act(action="type", selector="#pw", text="hunter2X"))
            results.append(await act(action="type", selector="#pin", text=PIN))
            results.append(await act(action="click", selector="#show"))
            results.append(await act(action="click", selector="#show"))  # text again
            shot = await c.request("screenshot", {}, timeout=30)
            entries = await _until(
                c,
                lambda es: (
                    len([e for e in es if e["type"] == "action" and e["kind"] == "fill"]) == 2
                ),
                "both fills",
            )
        for r in results:
            assert "hunter2X" not in json.dumps(r, default=str) and PIN not in json.dumps(
                r, default=str
            ), r
        fills = [e for e in entries if e["type"] == "action" and e["kind"] == "fill"]
        assert [f["value"] for f in fills] == ["<redacted>", "<redacted>"]
        assert all(f["secret"] for f in fills)
        assert "hunter2X" not in json.dumps(entries) and PIN not in json.dumps(entries)
        # Both fields (green) are masked in the image the model gets.
        assert shot["masked"] == 2 and green_pixels(shot["jpeg"]) == 0
        session = Session.from_export({"entries": entries, "screenshots": []})
        for text in (
            playwright.reproduction_script(session),
            playwright.generate_test_spec(session),
            report.bug_report(session),
        ):
            assert "hunter2X" not in text and PIN not in text

    asyncio.run(run())


def test_lone_surrogates_never_break_a_tool(pages_url: str) -> None:
    url = f"{pages_url}/security/surrogate.html"
    with McpSession("--browser", "headless", "--window-size", "1280x800", "--cooldown", "0") as s:

        def call(name: str, args: dict[str, Any]) -> Any:
            r = s.call(name, args)
            assert not r.is_error, (name, r.content)
            return r

        call("interact", {"action": "navigate", "url": url})
        call("interact", {"action": "click", "selector": "#err"})
        call("interact", {"action": "type", "selector": "#field", "text": "v" * 499 + "\U0001f600"})
        call("interact", {"action": "click", "selector": "#go"})
        text = ""
        for _ in range(60):
            text = call("observe", {"what": "errors"}).content[0].text
            if "thrown lone" in text:
                break
            time.sleep(0.25)
        assert "thrown lone" in text and "\ufffd" in text
        call("observe", {"what": "screenshots"})
        call("get_reproduction_script", {})
        call("generate_test", {})
        call("generate_bug_report", {})
