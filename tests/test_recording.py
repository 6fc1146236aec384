"""The host's session memory: timeline from extension events, buffer hook, automatic captures,
bus commands. A fake link stands in for the extension (no browser)."""

from __future__ import annotations

import asyncio
import io
import itertools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image
from shotbridge.host import after_capture, autoshot, recording
from shotbridge.host.autoshot import Batch
from shotbridge.host.extension_link import ExtensionLink
from shotbridge.host.recording import Recorder
from shotbridge.host.screenshot import Cause
from shotbridge.host.sessions import Session
from shotbridge.host.shots import ShotRegistry
from shotbridge.image import shrink
from shotbridge.wire.diff import DiffArgs
from shotbridge.wire.errors import CommandError
from shotbridge.wire.screenshot import ScreenshotResult
from shotbridge.wire.timeline import ActionEntry, NavEntry, Timeline, valid_text


class Link:
    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    async def request(
        self, cmd: str, args: dict[str, Any] | None = None, timeout: float = 15.0
    ) -> dict[str, Any]:
        self.calls.append((cmd, dict(args or {})))
        if cmd == "record_config":
            return {"network": bool((args or {}).get("network"))}
        if cmd == "discover":
            return {"url": "http://a/", "elements": [{"selector": "#c", "text": "1"}]}
        if cmd == "page_info":
            return {"url": "http://a/", "ready_state": "complete"}
        raise CommandError("bad_request", cmd)


def ev(name: str, **data: Any) -> dict[str, Any]:
    return {"event": name, "data": data}


def action(kind: str = "click", selector: str = "#b", **extra: Any) -> dict[str, Any]:
    return ev("action", kind=kind, target={"selector": selector, "tag": "button"}, **extra)


def shot_result(shot_id: int, url: str = "http://a/", **extra: Any) -> ScreenshotResult:
    images = {"jpeg": b"\xff\xd8" + bytes(100), "thumbnail": b"\xff\xd8" + bytes(10)}
    return ScreenshotResult(
        screenshot_id=shot_id,
        **{k: extra.pop(k, v) for k, v in images.items()},
        width=1280,
        height=720,
        bytes=102,
        quality=60,
        css_to_output_scale=1.0,
        method="cdp",
        url=url,
        title="A",
        viewport={"width": 1280, "height": 720},
        **extra,
    )


def session(name: str = "a", link: Any = None) -> Session:
    return Session(name, link or Link(), itertools.count(1))


# ---- timeline ------------------------------------------------------------------------------


def test_commit_and_completion_make_one_navigation() -> None:
    t = Timeline()
    t.from_event("nav", {"phase": "commit", "url": "http://a/", "time": 1_700_000_000_000})
    t.from_event("nav", {"phase": "complete", "url": "http://a/", "title": "A"})
    t.from_event("nav", {"phase": "complete", "url": "http://a/", "title": "A"})
    (nav,) = t.entries
    assert isinstance(nav, NavEntry) and nav.complete and nav.title == "A"
    assert nav.time == 1_700_000_000.0  # ms → s


def test_reload_and_navigation_after_an_action_are_new_entries() -> None:
    t = Timeline()
    t.from_event("nav", {"phase": "complete", "url": "http://a/"})
    t.from_event("nav", {"phase": "commit", "url": "http://a/"})  # reload starts
    t.from_event("nav", {"phase": "complete", "url": "http://a/"})
    t.from_event("action", action()["data"])
    t.from_event("nav", {"phase": "complete", "url": "http://a/"})
    assert [e.type for e in t.entries] == ["nav", "nav", "action", "nav"]


def test_action_ids_are_sequential_and_bad_events_are_ignored() -> None:
    t = Timeline()
    a1 = t.from_event("action", action()["data"])
    assert t.from_event("action", {"kind": "dance"}) is None
    assert t.from_event("mystery", {}) is None
    a2 = t.from_event("action", action("fill", value="x")["data"])
    assert isinstance(a1, ActionEntry) and isinstance(a2, ActionEntry)
    assert (a1.id, a2.id) == ("a1", "a2")
    assert [e.seq for e in t.entries] == [1, 2]


def test_network_bodies_are_capped() -> None:
    t = Timeline()
    entry = t.from_event("network", {"method": "POST", "url": "u", "request_body": "x" * 50_000})
    assert entry is not None and len(entry.request_body or "") == 10_000  # type: ignore[union-attr]


# ---- recorder ------------------------------------------------------------------------------


def test_screenshots_go_into_the_buffer_with_trigger_and_action() -> None:
    mine, other = session("a"), session("b")
    rec = mine.recorder
    rec.on_event(ev("nav", phase="complete", url="http://a/"))
    rec.on_event(action())
    mine.screenshot_taken(shot_result(1), Cause())  # explicit: related to the last action
    mine.screenshot_taken(shot_result(2), Cause(trigger="error", action_id="a9"))
    other.screenshot_taken(shot_result(3), Cause())  # another session's screenshot: not ours
    metas = rec.buffer.meta()
    assert [(m.id, m.trigger, m.action_id) for m in metas] == [
        (1, "explicit", "a1"),
        (2, "error", "a9"),
    ]
    assert metas[0].bytes == 102 and metas[0].thumb_bytes == 12
    assert [e.type for e in rec.timeline.entries] == ["nav", "action", "screenshot", "screenshot"]


def test_page_errors_take_the_current_url() -> None:
    rec = Recorder(Link(), ShotRegistry())
    rec.on_event(ev("nav", phase="complete", url="http://a/x"))
    rec.on_event(ev("page_error", kind="exception", message="boom"))
    assert rec.timeline.entries[-1].url == "http://a/x"


def test_a_failing_recorder_never_costs_the_image(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[int] = []

    def bad(*_: Any) -> None:
        raise RuntimeError("recorder broke")

    s = session()
    monkeypatch.setattr(s.recorder, "on_screenshot", bad)
    monkeypatch.setattr(s.shots, "hide", lambda ids: seen.extend(ids))
    s.screenshot_taken(shot_result(4), Cause(trigger="error"))  # does not raise
    assert seen == [4] and "recording screenshot 4 failed" in caplog.text


def test_screenshot_dir_copy(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    monkeypatch.setenv("SHOTBRIDGE_SCREENSHOT_DIR", str(tmp_path))
    rec = Recorder(Link(), ShotRegistry())
    rec.on_screenshot(shot_result(5), Cause())
    (f,) = tmp_path.iterdir()
    assert f.name.startswith(rec.timeline.session) and f.name.endswith("-00005.jpg")
    assert rec.buffer.meta()[0].file == str(f)


class Captures:
    """Replaces Recorder.capture: notes each automatic screenshot instead of taking one."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.taken: list[tuple[str, str | None]] = []
        self.merged: list[list[str]] = []
        monkeypatch.setattr(autoshot, "QUIET_S", 0.02)

        async def capture(
            rec: Recorder, trigger: str, action_id: str | None, batch: Batch | None = None
        ) -> None:
            self.taken.append((trigger, action_id))
            self.merged.append(
                [f"{t.trigger}:{t.action_id}" for t in batch.triggers] if batch else []
            )

        monkeypatch.setattr(Recorder, "capture", capture)


def test_auto_capture_defaults_to_errors_only(monkeypatch: pytest.MonkeyPatch) -> None:
    cap = Captures(monkeypatch)

    async def main() -> None:
        rec = Recorder(Link(), ShotRegistry())
        rec.config.observe = False
        rec.on_event(ev("nav", phase="complete", url="http://a/"))
        rec.on_event(action())
        await asyncio.sleep(0.05)
        assert cap.taken == []
        rec.on_event(ev("page_error", kind="console", message="x"))
        await asyncio.sleep(0.05)
        assert cap.taken == [("error", "a1")]

    asyncio.run(main())


def test_auto_capture_cooldown_merges_triggers(monkeypatch: pytest.MonkeyPatch) -> None:
    cap = Captures(monkeypatch)

    async def main() -> None:
        rec = Recorder(Link(), ShotRegistry())
        rec.config.observe = False
        rec.config.min_interval_s = 0.3
        rec.config.auto_screenshot.on_action = True
        rec.on_event(action(selector="#one"))
        await asyncio.sleep(0.05)
        assert cap.taken == [("action", "a1")]
        rec.on_event(action(selector="#two"))
        rec.on_event(action(selector="#three"))
        rec.on_event(action("submit"))  # a submit never triggers its own capture
        await asyncio.sleep(0.1)
        assert len(cap.taken) == 1  # cooling down
        await asyncio.sleep(0.35)
        assert cap.taken == [("action", "a1"), ("action", "a3")]  # the latest leads the record
        assert cap.merged == [["action:a1"], ["action:a2", "action:a3"]]  # and names them all

    asyncio.run(main())


def test_observations_after_navigation(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(recording, "SETTLE_S", {"navigation": 0, "error": 0, "action": 0})
    monkeypatch.setattr(recording, "SECOND_LOOK_S", 0.01)

    async def main() -> None:
        link = Link()
        rec = Recorder(link, ShotRegistry())
        rec.on_event(ev("nav", phase="complete", url="http://a/"))
        await asyncio.sleep(0.1)
        obs = [e for e in rec.timeline.entries if e.type == "observation"]
        assert len(obs) == 2 and obs[0].texts == {"#c": "1"}  # type: ignore[union-attr]
        assert [c for c, _ in link.calls] == ["discover", "discover"]
        await rec.close()

    asyncio.run(main())


def test_one_discover_after_a_screenshot_feeds_the_observation_and_the_diff() -> None:
    """The page does the post-capture read once, at the first quiet moment."""

    async def main() -> None:
        link = Link()
        s = session(link=link)
        rec = s.recorder
        result = shot_result(5, tab_id=3)
        s.screenshot_taken(result, Cause())  # what screenshot.take tells the session
        await s.compare(result, DiffArgs(remember=True), annotated=False, previous_id=None)
        await asyncio.sleep(after_capture.DEFER_S * 1.5)
        obs = [e for e in rec.timeline.entries if e.type == "observation"]
        assert len(obs) == 1 and obs[0].screenshot_id == 5  # type: ignore[union-attr]
        assert [c for c, _ in link.calls] == ["discover"]
        assert link.calls[0][1]["tab_id"] == 3
        await rec.close()

    asyncio.run(main())


# ---- bus commands ----------------------------------------------------------------------------


def test_record_config_forwards_network_and_validates() -> None:
    async def main() -> None:
        link = Link()
        rec = Recorder(link, ShotRegistry())
        out = (
            await rec.cmd_record_config(
                None, {"network": True, "auto_screenshot": {"on_action": True}}
            )
        ).model_dump()
        assert out["network"] is True
        assert out["auto_screenshot"] == {
            "on_navigation": False,
            "on_error": True,
            "on_action": True,
        }
        assert link.calls == [("record_config", {"network": True})]
        with pytest.raises(CommandError, match="unknown auto_screenshot field"):
            await rec.cmd_record_config(None, {"auto_screenshot": {"on_scroll": True}})
        out = (await rec.cmd_record_config(None, {"mask_selectors": [".ssn"]})).model_dump()
        assert out["mask_selectors"] == [".ssn"] and len(link.calls) == 1

    asyncio.run(main())


def test_screenshot_commands() -> None:
    async def main() -> None:
        shots = ShotRegistry()
        rec = Recorder(Link(), shots)
        rec.config.observe = False
        for i in range(1, 23):
            rec.on_screenshot(shot_result(i), Cause())
        listed = (await rec.cmd_screenshots(None, {"images": "thumbnail"})).model_dump()
        assert len(listed["screenshots"]) == 22
        assert [s["id"] for s in listed["screenshots"] if "jpeg" in s] == list(range(3, 23))
        got = (await rec.cmd_screenshot_get(None, {"id": 22})).model_dump()
        assert got["jpeg"] == shot_result(22).jpeg and got["trigger"] == "explicit"
        with pytest.raises(CommandError, match="was evicted"):
            await rec.cmd_screenshot_get(None, {"id": 1})
        with pytest.raises(CommandError, match="No screenshot 99"):
            await rec.cmd_screenshot_get(None, {"id": 99})
        tl = (await rec.cmd_timeline(None, {"kinds": ["screenshot"], "since": 20})).model_dump()
        assert [e["screenshot_id"] for e in tl["entries"]] == [21, 22]
        assert tl["screenshots"][0]["kept"] is False

    asyncio.run(main())


def test_a_thumbnail_the_capture_did_not_make_is_made_when_first_asked_for() -> None:
    async def main() -> None:
        rec = Recorder(Link(), ShotRegistry())
        rec.config.observe = False
        image = shrink(light_page_png()).jpeg
        rec.on_screenshot(shot_result(1, jpeg=image, thumbnail=b""), Cause())
        held = rec.buffer.held_bytes
        got = (await rec.cmd_screenshot_get(None, {"id": 1, "thumbnail": True})).jpeg
        assert got[:2] == b"\xff\xd8" and rec.buffer.held_bytes == held + len(got)
        listed = (await rec.cmd_screenshots(None, {"images": "thumbnail"})).screenshots
        assert listed[0].jpeg == got and listed[0].thumb_bytes == len(got)  # made once, kept

    asyncio.run(main())


def light_page_png() -> bytes:
    """A 1280x720 PNG to shrink (a plain light page)."""
    buf = io.BytesIO()
    Image.new("RGB", (1280, 720), (240, 240, 240)).save(buf, "PNG")
    return buf.getvalue()


# ---- hostile pages: what a page sends must never crowd out or break the record ------------


def test_a_flood_of_page_entries_never_evicts_the_users_steps() -> None:
    t = Timeline()
    t.from_event("nav", {"phase": "complete", "url": "http://a/"})
    t.from_event("action", action()["data"])
    for i in range(5000):
        t.from_event("page_error", {"kind": "console", "message": f"flood {i}"})
        t.from_event("network", {"api": "fetch", "method": "GET", "url": f"http://a/{i}"})
    kinds = [e.type for e in t.entries]
    assert kinds.count("nav") == 1 and kinds.count("action") == 1
    assert kinds.count("error") == 200 and kinds.count("network") == 300
    assert t.entries[-2].message == "flood 4999"  # type: ignore[union-attr]


def test_network_entries_are_dropped_while_network_capture_is_off() -> None:
    rec = Recorder(Link(), ShotRegistry())
    rec.on_event(ev("network", api="fetch", method="GET", url="http://forged/"))
    assert not rec.timeline.entries
    rec.config.network = True
    rec.on_event(ev("network", api="fetch", method="GET", url="http://real/"))
    assert [e.url for e in rec.timeline.entries] == ["http://real/"]


# Text as JSON from Chrome can decode to: any code points, lone surrogates included.
page_text = st.text(
    alphabet=st.one_of(st.characters(), st.sampled_from(["\ud83d", "\ude00", "\ud800", "\udfff"]))
)


@settings(max_examples=200, deadline=None)
@given(message=page_text, selector=page_text, value=page_text)
def test_lone_surrogates_from_a_page_never_break_the_record(
    message: str, selector: str, value: str
) -> None:
    link = ExtensionLink()
    rec = Recorder(link, ShotRegistry())
    link.add_listener(rec.on_event)
    link.feed({"event": "page_error", "data": {"kind": "exception", "message": message}})
    link.feed(
        {
            "event": "action",
            "data": {"kind": "fill", "value": value, "target": {"selector": selector}},
        }
    )
    exported = [e.model_dump() for e in rec.timeline.select()]
    assert len(exported) == 2
    # Everything stored can be encoded (msgpack/JSON/UTF-8), as every tool has to.
    for e in exported:
        for v in (e.get("message"), e.get("value"), e.get("target", {}).get("selector")):
            if v is not None:
                v.encode("utf-8")
    assert exported[0]["message"] == valid_text(message)


@given(page_text)
def test_valid_text_only_replaces_lone_surrogates(s: str) -> None:
    out = valid_text(s)
    out.encode("utf-8")
    assert len(out) == len(s)
    assert all(a == b for a, b in zip(s, out, strict=True) if not 0xD800 <= ord(a) <= 0xDFFF)


class CaptureLink:
    """Answers ``capture`` with a 64x48 image whose only mask is ``mask``."""

    def __init__(self, mask: dict[str, float]) -> None:
        self.mask = mask

    async def request(
        self,
        cmd: str,
        args: dict[str, Any] | None = None,
        timeout: float = 15.0,
        on_partial: Any = None,
    ) -> dict[str, Any]:
        import base64
        import io

        from PIL import Image

        buf = io.BytesIO()
        Image.new("RGB", (64, 48), (0, 255, 0)).save(buf, "JPEG")
        size = {"width": 64, "height": 48}
        return {
            "data_url": "data:image/jpeg;base64," + base64.b64encode(buf.getvalue()).decode(),
            "method": "cdp",
            "url": "http://a/",
            "title": "A",
            "tab_id": 1,
            "device_pixel_ratio": 1,
            "viewport": size,
            "scroll": {"x": 0, "y": 0},
            "origin": {"x": 0, "y": 0},
            "css_size": size,
            "masks": [self.mask],
        }


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
def test_a_mask_that_cannot_be_placed_fails_the_screenshot(bad: float) -> None:
    from shotbridge.host import screenshot

    mask = {"x": bad, "y": 0.0, "width": 10.0, "height": 10.0}
    with pytest.raises(CommandError, match="cannot be placed"):
        asyncio.run(screenshot.take(CaptureLink(mask), {}))
    ok = {"x": 0.0, "y": 0.0, "width": 10.0, "height": 10.0}
    assert asyncio.run(screenshot.take(CaptureLink(ok), {})).masked == 1
