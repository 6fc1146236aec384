"""The visual diff from Python: the core through shotbridge.diff, the host's report
(elements behind each region, the summary) and ``shotctl diff``'s exit codes."""

from __future__ import annotations

import asyncio
import io
import itertools
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageDraw
from shotbridge.diff import DiffOptions, Geometry, compare
from shotbridge.host.diff_memory import Remembered, compare_shots, split_args
from shotbridge.host.sessions import Session
from shotbridge.mcp_server.settings import CaptureSettings, SettingsError
from shotbridge.wire.diff import DiffArgs
from shotbridge.wire.errors import ImageError
from shotbridge.wire.extension import ElementInfo
from shotbridge.wire.geometry import Rect
from shotbridge.wire.screenshot import ScreenshotResult

REPO = Path(__file__).resolve().parents[1]


def page(height: int = 600, save: str = "#1565c0", shift: int = 0) -> Image.Image:
    """A tall "page": a Save button and striped rows, drawn from page y ``shift`` down."""
    img = Image.new("RGB", (400, height), "#fafafa")
    d = ImageDraw.Draw(img)
    d.rectangle((20 - 0, 20 - shift, 120, 56 - shift), fill=save)
    for i in range(40):
        y = 80 + i * 40 - shift
        d.rectangle((20, y, 380, y + 30), fill="#e3f2fd" if i % 2 else "#fff3e0")
        d.text((30, y + 8), f"Row {i}", fill="#222222")
    return img


def png(img: Image.Image) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


def test_identical_images_are_equal() -> None:
    a = png(page())
    r = compare(a, a)
    assert r.equal and r.regions == [] and r.changed_fraction == 0
    assert r.compared_pixels == 400 * 600


def test_a_colour_change_is_one_region_in_css_px() -> None:
    r = compare(
        png(page()),
        png(page(save="#c62828")),
        after_geometry=Geometry(scale=2.0),
        before_geometry=Geometry(scale=2.0),
    )
    assert not r.equal and len(r.regions) == 1
    reg = r.regions[0]
    assert reg.px == (20, 20, 121, 57)
    assert (reg.x, reg.y, reg.width, reg.height) == (10, 10, 50.5, 18.5)  # CSS px at scale 2


def test_scroll_with_known_offset_is_not_a_change() -> None:
    tall = page(height=900)
    before, after = tall.crop((0, 0, 400, 500)), tall.crop((0, 160, 400, 660))
    plain = compare(png(before), png(after))
    assert plain.changed_pixels > 1000
    aligned = compare(png(before), png(after), after_geometry=Geometry(scroll_y=160))
    assert aligned.equal and aligned.offset_px == (0, 160)
    assert aligned.compared_pixels == 400 * 340 and not aligned.covers_all


def test_diff_image_is_a_budgeted_jpeg_with_crops() -> None:
    r = compare(
        png(page()),
        png(page(save="#c62828")),
        image=True,
        options=DiffOptions(max_bytes=40_000),
    )
    assert r.image is not None and r.image[:2] == b"\xff\xd8" and len(r.image) <= 40_000
    img = Image.open(io.BytesIO(r.image))
    assert img.width == 400 and img.height > 600  # crops panel below
    assert r.crops == 1


def test_bad_input_raises_image_errors() -> None:
    with pytest.raises(ImageError):
        compare(b"not an image", png(page()))
    with pytest.raises(ValueError):
        DiffOptions(threshold=3)


# ---- the host's report -----------------------------------------------------------------------


def el(
    selector: str, x: float, y: float, w: float, h: float, text: str = "", **kw: str
) -> ElementInfo:
    return ElementInfo(
        selector=selector, tag=kw.get("tag", "div"), role=kw.get("role", ""),
        name=kw.get("name", ""), text=text, bounds=Rect(x=x, y=y, width=w, height=h),
    )  # fmt: skip


def shot(i: int, img: Image.Image, elements: list[ElementInfo], scroll_y: float = 0) -> Remembered:
    return Remembered(
        shot_id=i,
        jpeg=png(img),
        geometry=Geometry(scroll_y=scroll_y),
        origin=(0.0, 0.0),
        scroll=(0.0, scroll_y),
        size=img.size,
        elements=elements,
    )


def test_report_names_the_element_behind_a_colour_change() -> None:
    save = el("#save", 20, 20, 101, 37, "Save", tag="button", role="button", name="Save")
    body = el("main", 0, 0, 400, 600)
    before = shot(1, page(), [save, body])
    after = shot(2, page(save="#c62828"), [save, body])
    report = compare_shots(before, after, DiffArgs(compare_to=1))
    assert len(report.regions) == 1 and not report.unchanged
    first = report.regions[0].elements[0]
    assert (first.selector, first.role, first.name, first.change) == (
        "#save",
        "button",
        "Save",
        "appearance",
    )
    assert report.summary.startswith("1 region changed since screenshot #1")
    assert "button 'Save' (#save)" in report.summary


def test_report_gives_before_and_after_text() -> None:
    a, b = page(), page()
    ImageDraw.Draw(b).rectangle((30, 128, 90, 140), fill="#000000")
    row = el("#row-1", 20, 120, 360, 30, "Row 1", role="paragraph")
    changed = row.model_copy(update={"text": "Row one"})
    report = compare_shots(shot(1, a, [row]), shot(2, b, [changed]), DiffArgs(compare_to=1))
    e = report.regions[0].elements[0]
    assert (e.change, e.text_before, e.text_after) == ("text", "Row 1", "Row one")
    assert "text 'Row 1' → 'Row one'" in report.summary


def test_identical_view_is_unchanged_and_a_scroll_is_not() -> None:
    tall = page(height=900)
    same = compare_shots(shot(1, page(), []), shot(2, page(), []), DiffArgs(compare_to=1))
    assert same.unchanged and same.summary == "Unchanged since screenshot #1 (0 regions changed)."
    before = shot(3, tall.crop((0, 0, 400, 500)), [])
    after = shot(4, tall.crop((0, 160, 400, 660)), [], scroll_y=160)
    scrolled = compare_shots(before, after, DiffArgs(compare_to=3))
    assert scrolled.regions == [] and not scrolled.unchanged
    assert "0 regions changed" in scrolled.summary and "scrolled by (+0, +160)" in scrolled.summary


def test_the_same_bytes_in_the_same_view_are_unchanged_without_decoding() -> None:
    # Not an image at all: were it decoded, the core would raise ImageError.
    a = Remembered(
        shot_id=1,
        jpeg=b"same bytes",
        geometry=Geometry(),
        origin=(0, 0),
        scroll=(0, 0),
        size=(40, 30),
    )
    b = a.model_copy(update={"shot_id": 2})
    same = compare_shots(a, b, DiffArgs(compare_to=1))
    assert same.unchanged and same.compared_pixels == 40 * 30


class SlowLink:
    """A host link whose ``discover`` answers only when released: the page being read."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.asked = 0

    async def request(self, cmd: str, args: dict[str, Any], timeout: float) -> dict[str, Any]:
        self.asked += 1
        await self.release.wait()
        save = el("#save", 20, 20, 101, 37, "Save", tag="button", role="button", name="Save")
        return {
            "url": "http://app.test/", "title": "app", "ready_state": "complete",
            "device_pixel_ratio": 1.0, "viewport": {"width": 400, "height": 600},
            "scroll": {"x": 0, "y": 0}, "elements": [save.model_dump()], "total_found": 1,
        }  # fmt: skip


class Shots(Session):
    """A session whose hidden screenshots are noted."""

    def __init__(self, link: SlowLink) -> None:
        super().__init__("test", link, itertools.count(1))
        self.hidden: list[int] = []
        self.shots.hide = self.hidden.extend  # type: ignore[method-assign]

    async def attach(self, result: ScreenshotResult, args: DiffArgs, previous: int | None) -> None:
        await self.compare(result, args, annotated=False, previous_id=previous)


def result_of(i: int, img: Image.Image) -> ScreenshotResult:
    data = png(img)
    return ScreenshotResult(
        screenshot_id=i, jpeg=data, thumbnail=data, width=img.width, height=img.height,
        bytes=len(data), quality=60, css_to_output_scale=1.0, method="cdp", url="http://app.test/",
        tab_id=7, viewport={"width": img.width, "height": img.height},
    )  # fmt: skip


def test_the_reply_does_not_wait_for_the_page_elements_unless_a_change_needs_naming() -> None:
    async def run() -> None:
        link = SlowLink()
        shots = Shots(link)
        remember = DiffArgs(remember=True, unchanged_check=True)
        first = result_of(1, page())
        await asyncio.wait_for(shots.attach(first, remember, None), 1)
        again = result_of(2, page())  # same pixels: "unchanged" without the elements
        await asyncio.wait_for(shots.attach(again, remember, 1), 1)
        assert again.diff and again.diff.unchanged and shots.hidden == [2]
        assert link.asked == 0  # the read waits for a quiet moment, and both images share it
        changed = result_of(3, page(save="#c62828"))
        task = asyncio.ensure_future(shots.attach(changed, DiffArgs(compare_to=1), 2))
        await asyncio.sleep(0.2)
        assert not task.done()  # a change is named with the page's elements: it waits for them
        assert link.asked == 1  # asked for at once
        link.release.set()
        await asyncio.wait_for(task, 5)
        assert changed.diff and "button 'Save' (#save)" in changed.diff.summary, changed.diff

    asyncio.run(run())


def test_split_args_takes_the_diff_keys_out() -> None:
    d, rest = split_args({"compare_to": 7, "diff_image": True, "quality": 60})
    assert (d.compare_to, d.diff_image, rest) == (7, True, {"quality": 60})
    assert not split_args({})[0].wanted


def test_skip_unchanged_setting() -> None:
    s = CaptureSettings()
    assert s.skip_unchanged
    assert "skip_unchanged=false" in s.apply({"skip_unchanged": False}) and not s.skip_unchanged
    assert "skip_unchanged=false" in s.describe()
    with pytest.raises(SettingsError):
        s.apply({"skip_unchanged": "no"})


# ---- shotctl diff ----------------------------------------------------------------------------


def shotctl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "shotbridge", "diff", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
    )


def test_cli_exit_codes_and_outputs(tmp_path: Path) -> None:
    a, b = tmp_path / "a.png", tmp_path / "b.png"
    a.write_bytes(png(page()))
    b.write_bytes(png(page(save="#c62828")))
    same = shotctl(str(a), str(a))
    assert same.returncode == 0 and same.stdout.startswith("equal")
    out = tmp_path / "d.jpg"
    diff_run = shotctl(str(a), str(b), "-o", str(out), "--json")
    assert diff_run.returncode == 1, diff_run.stderr
    doc = json.loads(diff_run.stdout)
    assert doc["equal"] is False and len(doc["regions"]) == 1
    assert out.read_bytes()[:2] == b"\xff\xd8"
    missing = shotctl(str(a), str(tmp_path / "nope.png"))
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1 and "error" in missing.stderr
    bad = shotctl(str(a), str(b), "--threshold", "7")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1


def test_previous_after_an_image_never_kept_compares_with_the_latest_kept_one() -> None:
    """An annotated observe's image is not kept for diffs: "previous" then means the latest kept."""

    async def run() -> None:
        link = SlowLink()
        link.release.set()
        shots = Shots(link)
        await shots.attach(result_of(1, page()), DiffArgs(remember=True), None)
        changed = result_of(3, page(save="#c62828"))  # #2 was shown but never kept
        await asyncio.wait_for(shots.attach(changed, DiffArgs(compare_to="previous"), 2), 5)
        assert changed.diff is not None and changed.diff.compared_to == 1, changed.notes
        assert "button 'Save' (#save)" in changed.diff.summary
        assert any("#1, the latest kept" in n and "#2 was not kept" in n for n in changed.notes)
        lone = Shots(link)
        first = result_of(5, page())
        await lone.attach(first, DiffArgs(compare_to="previous"), 4)
        assert first.diff is None and any("#4 is not kept" in n for n in first.notes)

    asyncio.run(run())
