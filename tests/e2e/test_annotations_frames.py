"""Annotations inside iframes, in real headless Chromium with the real extension, host and bus.

The pages (tests/pages/annot/oauth, checkout, nested) embed frames on the other test origin
(127.0.0.1 <-> localhost, so Chromium runs them out of process), three levels deep in `nested`.
Checked here: every control inside a frame is labelled in the page's one numbering, with bounds in
top-page CSS px inside its iframe's box, a `frame` chain, a ">>>" path and a frameLocator chain;
a click by label, by ">>>" selector and by pixel acts on the right element inside the frame, and
typing by label reaches a field in a cross-origin frame; password and card fields inside frames
are masked in the image. The corpus test (test_annotations_corpus.py) checks names, states and the
uniqueness of these pages' selectors and locators in Playwright.
"""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageStat
from shotbridge.client.browser import HeadlessBrowser
from shotbridge.client.bus_client import BusClient

from tests.e2e.conftest import start_browser
from tests.mcp_stdio import McpSession

pytestmark = pytest.mark.browser

FRAME_PAGES = ("oauth", "checkout", "nested")
CORPUS = Path(__file__).resolve().parents[1] / "pages" / "annot"


@pytest.fixture(scope="module")
def fbrowser() -> Iterator[HeadlessBrowser]:
    b = start_browser(window_size=(1280, 900))
    yield b
    b.close()


def _run(browser: HeadlessBrowser, steps: Any) -> Any:
    async def go() -> Any:
        async with await BusClient.connect(runtime_dir=browser.runtime_dir) as client:
            return await steps(client)

    return asyncio.run(go())


async def _shot(client: BusClient, url: str | None = None) -> dict[str, Any]:
    args: dict[str, Any] = {"annotate": True, "max_annotations": 100}
    if url:
        args["url"] = url
    return await client.request("screenshot", args, timeout=40)


def _by_name(shot: dict[str, Any], name: str) -> dict[str, Any]:
    return next(a for a in shot["annotations"] if a["name"] == name)


def _inside(inner: dict[str, float], outer: dict[str, float]) -> bool:
    return (
        inner["x"] >= outer["x"] - 0.01
        and inner["y"] >= outer["y"] - 0.01
        and inner["x"] + inner["width"] <= outer["x"] + outer["width"] + 0.01
        and inner["y"] + inner["height"] <= outer["y"] + outer["height"] + 0.01
    )


def test_frame_controls_are_labelled_inside_their_iframe(
    fbrowser: HeadlessBrowser, pages_url: str
) -> None:
    async def steps(client: BusClient) -> dict[str, dict[str, Any]]:
        return {p: await _shot(client, f"{pages_url}/annot/{p}.html") for p in FRAME_PAGES}

    shots = _run(fbrowser, steps)
    for page, shot in shots.items():
        expected = json.loads((CORPUS / f"{page}.json").read_text())["controls"]
        frames = {tuple(f["frame"]): f for f in shot["frames"]}
        vp = shot["viewport"]
        labels = [a["label"] for a in shot["annotations"]]
        assert labels == list(range(1, len(labels) + 1)), labels  # one numbering
        for want in expected:
            a = _by_name(shot, want["name"])
            chain = want.get("frame", [])
            assert a["frame"] == chain, (page, a)
            b = a["bounds"]
            assert b["x"] >= 0 and b["x"] + b["width"] <= vp["width"], a
            if not chain:
                continue
            box = frames[tuple(chain)]["bounds"]
            assert _inside(a["bounds"], box), (page, a, box)
            assert a["shadow_selector"] == " >>> ".join([*chain, a["selector"]]), a
            prefix = "".join(f"frameLocator({json.dumps(f)})." for f in chain)
            assert a["locator"].startswith(prefix), a
        # Every iframe is listed with its URL (cross-origin ones too) and how many labels it got.
        for chain, f in frames.items():
            inside = [w for w in expected if tuple(w.get("frame", [])) == chain]
            assert f["url"] and f["labelled"] == len(inside), f
    # Offsets from the parent side: the nested frames' content boxes add up (borders, padding).
    nested = {tuple(f["frame"]): f["bounds"] for f in shots["nested"]["frames"]}
    app, embed = nested[("#app",)], nested[("#app", "#embed")]
    assert embed["x"] - app["x"] == 12 + 3 + 5  # shell body margin + #embed border + padding
    assert nested[("#app", "#embed", "#login-frame")]["x"] - embed["x"] == 6 + 1


def test_clicks_by_label_selector_and_pixel_act_inside_frames(
    fbrowser: HeadlessBrowser, pages_url: str
) -> None:
    async def steps(client: BusClient) -> None:
        async def clicked(selector: str) -> bool:
            try:
                await client.request("resolve", {"selector": selector}, timeout=10)
            except Exception:
                return False
            return True

        # By label, in a cross-origin card iframe.
        s = await _shot(client, f"{pages_url}/annot/checkout.html")
        pay = _by_name(s, "Pay $42.00")
        assert not await clicked('#pay >>> #paybtn[data-clicked="1"]')
        done = await client.request(
            "interact",
            {"action": "click", "label": pay["label"], "screenshot_id": s["screenshot_id"]},
            timeout=40,
        )
        assert done["hit"]["name"] == "Pay $42.00" and done["hit"]["frame"] == ["#pay"], done
        assert await clicked('#pay >>> #paybtn[data-clicked="1"]')
        assert _by_name(await _shot(client), "Paid")["frame"] == ["#pay"]

        # By ">>>" selector, three frames down (same-origin, cross-origin, its own origin).
        s = await _shot(client, f"{pages_url}/annot/nested.html")
        deep = "#app >>> #embed >>> #login-frame >>> #wgo"
        assert deep == _by_name(s, "Sign in to comment")["shadow_selector"]
        done = await client.request("interact", {"action": "click", "selector": deep}, timeout=40)
        assert done["hit"]["name"] == "Sign in to comment", done
        assert await clicked(deep + '[data-clicked="1"]')

        # By pixel of the screenshot: CDP input lands in the cross-origin frame by itself.
        post = _by_name(s, "Post comment")
        scale, b = s["css_to_output_scale"], post["bounds"]
        px = {"x": (b["x"] + b["width"] / 2) * scale, "y": (b["y"] + b["height"] / 2) * scale}
        done = await client.request(
            "interact", {"action": "click", **px, "screenshot_id": s["screenshot_id"]}, timeout=40
        )
        assert done["hit"]["name"] == "Post comment", done
        assert done["hit"]["frame"] == ["#app", "#embed"], done
        assert await clicked('#app >>> #embed >>> #post[data-clicked="1"]')

        # By label in the same-origin frame: the toggle's state changes.
        s = await _shot(client)
        await client.request(
            "interact",
            {"action": "click", "label": _by_name(s, "Bold")["label"]},
            timeout=40,
        )
        assert _by_name(await _shot(client), "Bold")["state"]["pressed"] is True

        # Typing by label into a field of a cross-origin frame: focus is followed into it.
        s = await _shot(client, f"{pages_url}/annot/oauth.html")
        done = await client.request(
            "interact",
            {
                "action": "type",
                "label": _by_name(s, "Acme ID email")["label"],
                "text": "ann@acme.test",
            },
            timeout=40,
        )
        assert done["focused"]["value"] == "ann@acme.test", done
        assert done["focused"]["frame"] == ["#idp"], done

    _run(fbrowser, steps)


def _dark(img: Image.Image, b: dict[str, float], scale: float) -> float:
    """Mean brightness (0..255) of the CSS box `b` in the image, a pixel inside its edges."""
    box = (
        round(b["x"] * scale) + 2,
        round(b["y"] * scale) + 2,
        round((b["x"] + b["width"]) * scale) - 2,
        round((b["y"] + b["height"]) * scale) - 2,
    )
    return float(ImageStat.Stat(img.convert("L").crop(box)).mean[0])


def test_secrets_inside_frames_are_masked(fbrowser: HeadlessBrowser, pages_url: str) -> None:
    secrets = {
        "oauth": ["Acme ID password"],
        "checkout": ["Card number", "CVC"],
        "nested": ["Comments password"],  # cross-origin to the top, same-origin to its parent
    }

    async def steps(client: BusClient) -> None:
        for page, names in secrets.items():
            s = await _shot(client, f"{pages_url}/annot/{page}.html")
            img = Image.open(io.BytesIO(s["jpeg"]))
            assert s["masked"] >= 1, s["masked"]
            for name in names:
                bright = _dark(img, _by_name(s, name)["bounds"], s["css_to_output_scale"])
                assert bright < 40, (page, name, bright)  # an input is white unless masked

    _run(fbrowser, steps)


# ---- through the real `shotctl mcp` (stdio) --------------------------------------------------


@pytest.fixture(scope="module")
def mcp() -> Iterator[McpSession]:
    with McpSession("--browser", "headless", "--window-size", "1280x900", "--cooldown", "0") as s:
        yield s


def _observe(s: McpSession, url: str) -> dict[str, Any]:
    r = s.call("interact", {"action": "navigate", "url": url})
    assert not r.is_error, r.content
    r = s.call(
        "observe",
        {"what": "page", "annotate_screenshot": True, "max_annotations": 100, "map": "full"},
    )
    assert not r.is_error, r.content
    (text,) = [b.text for b in r.content if b.type == "text"]
    return json.loads(text)


def test_mcp_observe_passes_annotation_fields_through(mcp: McpSession, pages_url: str) -> None:
    base = f"{pages_url}/annot"
    body = _observe(mcp, f"{base}/modal.html")
    assert {h["name"] for h in body["hidden"]} >= {"New project", "Import", "Help"}
    assert all(h["hidden_by"] for h in body["hidden"])
    assert body["page"]["headings"] and body["page"]["interactive_count"] >= 4
    delete = next(a for a in body["annotations"] if a["name"] == "Delete")
    assert delete["state"] == {"disabled": True} and delete["locator"].startswith("getByRole(")

    body = _observe(mcp, f"{base}/settings.html")
    push = next(a for a in body["annotations"] if a["name"] == "Push notifications")
    assert push["proxy"] and push["state"]["checked"] is False

    body = _observe(mcp, f"{base}/login.html")
    pw = next(a for a in body["annotations"] if a["name"] == "Password")
    assert pw["type"] == "password" and pw["role"] == ""

    body = _observe(mcp, f"{base}/components.html")
    assert any(">>>" in a.get("shadow_selector", "") for a in body["annotations"])

    body = _observe(mcp, f"{base}/calendar.html")
    assert any("labels in the" in n for n in body["notes"]), body.get("notes")

    body = _observe(mcp, f"{base}/checkout.html")
    pay = next(a for a in body["annotations"] if a["name"] == "Pay $42.00")
    assert pay["frame"] == ["#pay"] and pay["locator"].startswith('frameLocator("#pay").')
    assert body["frames"][0]["frame"] == ["#pay"] and body["frames"][0]["labelled"] == 4
    r = mcp.call("interact", {"action": "click", "label": pay["label"]})
    assert not r.is_error, r.content
    r = mcp.call("observe", {"what": "page", "annotate_screenshot": True, "map": "full"})
    (text,) = [b.text for b in r.content if b.type == "text"]
    paid = next(a for a in json.loads(text)["annotations"] if a["name"] == "Paid")
    assert paid["frame"] == ["#pay"]
    # The element list of observe(page) names the frame too, with the path interact takes.
    r = mcp.call("observe", {"what": "page", "include_offscreen": True})
    (text,) = [b.text for b in r.content if b.type == "text"]
    paid = next(e for e in json.loads(text)["elements"] if e["name"] == "Paid")
    assert paid["frame"] == ["#pay"] and paid["shadow_selector"] == "#pay >>> #paybtn"


def test_an_unchanged_page_says_same_and_a_changed_frame_sends_itself(
    fbrowser: HeadlessBrowser, pages_url: str
) -> None:
    """A caller that holds an answer names its token (``known``): a page that has not changed
    answers ``same``; when one frame changes, the answer is whole again, the frames that did not
    change filled in by the extension's worker, equal to a read that named nothing."""
    ask = {"target": "interactive", "max": 100, "text_rects": True}

    async def steps(client: BusClient) -> None:
        first = await _shot(client, f"{pages_url}/annot/nested.html")
        again = await _shot(client)
        assert again["timings"]["labels_same"] == 1
        assert again["annotations"] == first["annotations"]

        read = await client.request("discover", ask, timeout=10)
        token = read["token"]
        assert token.count(",") == 3, token  # the top page and its three frames
        same = await client.request("discover", {**ask, "known": token}, timeout=10)
        assert same == {"same": token, "reused": True}
        other = await client.request("discover", {**ask, "known": "x.1"}, timeout=10)
        assert other["token"] == token and other["elements"] == read["elements"]

        bold = next(e for e in read["elements"] if e["name"] == "Bold")
        assert not bold["state"].get("pressed")
        await client.request("interact", {"action": "click", "selector": bold["shadow_selector"]})
        changed = await client.request("discover", {**ask, "known": token}, timeout=10)
        assert "same" not in changed and changed["token"] != token
        assert len(set(changed["token"].split(",")) & set(token.split(","))) == 3  # one changed
        whole = await client.request("discover", ask, timeout=10)
        assert whole["token"] == changed["token"] and whole["elements"] == changed["elements"]
        assert next(e for e in changed["elements"] if e["name"] == "Bold")["state"]["pressed"]

    _run(fbrowser, steps)
