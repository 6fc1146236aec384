"""A session's memory of its screenshots, and what changed between two of them.

The ``screenshot`` bus command takes diff arguments (``shotbridge.wire.diff.DiffArgs``):
``compare_to`` ("previous" — the latest image this session was shown — or a screenshot id),
``diff_image`` (return the outlined diff picture) and ``unchanged_check`` (when the new pixels match
the latest image within the tolerance, mark the result unchanged and keep it out of the session's
defaults: the client sends text instead of the same pixels again).

What a diff needs of each screenshot is remembered per session in :class:`DiffMemory`: the output
JPEG, its page geometry (scroll, element-capture origin, image px per CSS px) and the visible
elements with their text, read from the page right after the capture (``discover all_visible``).
The elements behind each changed region are those overlapping it in either image; an element
whose text differs between the two (same selector) reports its before/after text.

The chain: :meth:`DiffMemory.attach` → :func:`compare_shots` (two remembered screenshots) →
:func:`changed_pixels` (the core's ``shotbridge.diff.compare``) and :func:`report` (the regions
with the elements behind them, and the sentence the model reads).
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel, Field

from shotbridge.diff import DiffOptions, DiffResult, Geometry, compare
from shotbridge.wire.diff import ChangedElement, ChangedRegion, DiffArgs, DiffReport, Region
from shotbridge.wire.extension import DiscoverResult, ElementInfo
from shotbridge.wire.geometry import Rect
from shotbridge.wire.screenshot import ScreenshotResult

log = logging.getLogger(__name__)

KEEP = 12  # screenshots remembered per session for diffs (JPEG ≈ 50–300 KB each)
ELEMENTS_PER_REGION = 3
MOVE_EPS_CSS = 2.0  # bounds that moved less than this did not "move"
SHIFTED_JPEG_THRESHOLD = 0.25  # see _options(): JPEG noise when the page scrolled in between
SHIFTED_JPEG_MIN_REGION = 8

DIFF_KEYS = tuple(DiffArgs.model_fields)


def split_args(args: dict[str, Any]) -> tuple[DiffArgs, dict[str, Any]]:
    """The diff arguments, and the rest for ``screenshot.take``."""
    diff = DiffArgs.model_validate({k: args[k] for k in DIFF_KEYS if k in args})
    return diff, {k: v for k, v in args.items() if k not in DIFF_KEYS}


class Remembered(BaseModel):
    shot_id: int
    jpeg: bytes = Field(repr=False)
    geometry: Geometry
    origin: tuple[float, float]  # viewport CSS px of the image's top-left
    scroll: tuple[float, float]
    size: tuple[int, int] = (0, 0)  # image px
    annotated: bool = False
    elements: list[ElementInfo] = Field(default_factory=list)

    def same_view(self, other: Remembered) -> bool:
        """Both show the same area of the page at the same size (no scroll, same crop)."""
        return self.geometry == other.geometry and self.size == other.size


def remembered(
    result: ScreenshotResult, elements: list[ElementInfo], annotated: bool
) -> Remembered:
    """What the diff memory keeps of one ``screenshot`` result."""
    ox, oy = result.origin.x, result.origin.y
    sx, sy = result.scroll.x, result.scroll.y
    return Remembered(
        shot_id=int(result.screenshot_id or 0),
        jpeg=result.jpeg,
        geometry=Geometry(scroll_x=sx + ox, scroll_y=sy + oy, scale=result.css_to_output_scale),
        origin=(ox, oy),
        scroll=(sx, sy),
        size=(result.width, result.height),
        annotated=annotated,
        elements=elements,
    )


async def elements_of(read: Awaitable[dict[str, Any] | None]) -> list[ElementInfo]:
    """The page's visible elements from a post-capture read; [] if unavailable."""
    found = await read
    try:
        return DiscoverResult.model_validate(found).elements if found else []
    except ValueError as exc:  # the diff still works without names
        log.info("discover for the diff was not understood: %s", exc)
        return []


class DiffMemory:
    """The last :data:`KEEP` screenshots of one session, as a diff needs them.

    A screenshot's elements are read from the page after its reply has gone out (a ``discover``
    round trip costs ~30 ms): they stay pending here until a later diff needs them.
    """

    def __init__(self) -> None:
        self._shots: OrderedDict[int, Remembered] = OrderedDict()
        self._pending: dict[int, asyncio.Task[list[ElementInfo]]] = {}

    def add(
        self, shot: Remembered, elements: asyncio.Task[list[ElementInfo]] | None = None
    ) -> None:
        self._shots[shot.shot_id] = shot
        if elements is not None:
            self._pending[shot.shot_id] = elements
        while len(self._shots) > KEEP:
            gone, _ = self._shots.popitem(last=False)
            self._pending.pop(gone, None)

    def _latest_before(
        self, shot_id: int, result: ScreenshotResult, shown: int
    ) -> Remembered | None:
        """The newest kept screenshot before ``shot_id``, standing in for "previous" when the
        latest image shown was never kept (an annotated observe's labelled image is not)."""
        older = [k for k in self._shots if k != shot_id]
        if not older:
            return None
        result.notes.append(
            f"Compared with screenshot #{older[-1]}, the latest kept for comparing "
            f"(#{shown} was not kept)."
        )
        return self._shots[older[-1]]

    def get(self, shot_id: int) -> Remembered | None:
        """The screenshot as remembered so far (elements may still be pending)."""
        return self._shots.get(shot_id)

    async def ready(self, shot_id: int) -> Remembered | None:
        """The screenshot with its elements (waits for them if they are still being read)."""
        shot = self._shots.get(shot_id)
        task = self._pending.pop(shot_id, None)
        if shot is not None and task is not None:
            shot.elements = await task
        return shot

    async def attach(
        self,
        result: ScreenshotResult,
        args: DiffArgs,
        *,
        annotated: bool,
        previous_id: int | None,
        read: Callable[[], Awaitable[dict[str, Any] | None]],
        hurry: Callable[[int], None] = lambda shot_id: None,
    ) -> DiffReport | None:
        """Remember ``result`` and, when asked, compare it: sets ``result.diff`` (and notes).

        ``previous_id``: the latest image the session was shown before this capture.
        ``read``: starts (or joins) the page's read after this capture, which waits for a quiet
        moment; only a diff that found changed regions waits for it (``hurry`` sends it, and an
        earlier image's, at once), so the reply does not wait for the page otherwise.
        """
        if result.screenshot_id is None or result.tiles:
            if args.compare_to is not None:
                result.notes.append("No diff: a full-page capture is not compared.")
            return None
        now = remembered(result, [], annotated)
        self.add(now, asyncio.ensure_future(elements_of(read())))
        target = previous_id if args.compare_to in (None, "previous") else args.compare_to
        if not args.compares or target is None:
            return None
        before = self.get(int(target))
        if before is None and args.compare_to == "previous":
            before = self._latest_before(now.shot_id, result, int(target))
        if before is None:
            if args.compare_to is not None:  # the unchanged check alone has nothing to say
                result.notes.append(
                    f"No diff: screenshot #{target} is not kept for comparing (the last {KEEP} "
                    "are)."
                )
            return None
        # Equal bytes are told at once; only a real comparison is worth a worker thread.
        found = same_pixels(before, now)
        if found is None:
            found = await asyncio.to_thread(changed_pixels, before, now, args)
        if found.regions:  # the names of what changed, in both images
            hurry(before.shot_id)
            hurry(now.shot_id)
            await asyncio.gather(self.ready(before.shot_id), self.ready(now.shot_id))
        result.diff = report(before, now, found)
        return result.diff


# ---- the report --------------------------------------------------------------------------------


def _area(r: Rect) -> float:
    return max(r.width, 0.0) * max(r.height, 0.0)


def _overlap(a: Rect, b: Rect) -> float:
    w = min(a.x + a.width, b.x + b.width) - max(a.x, b.x)
    h = min(a.y + a.height, b.y + b.height) - max(a.y, b.y)
    return max(w, 0.0) * max(h, 0.0)


def _page(r: Rect, scroll: tuple[float, float]) -> Rect:
    return Rect(x=r.x + scroll[0], y=r.y + scroll[1], width=r.width, height=r.height)


def _key(e: ElementInfo) -> str:
    return e.selector or e.shadow_selector


def _ranked(
    elements: list[ElementInfo], area: Rect, scroll: tuple[float, float]
) -> list[ElementInfo]:
    """Elements overlapping ``area`` (page CSS px), tightest fit first."""
    hits = []
    for e in elements:
        b = _page(e.bounds, scroll)
        inter = _overlap(b, area)
        if inter <= 0:
            continue
        fit = inter / max(_area(b), _area(area), 1.0)
        hits.append((fit, e))
    hits.sort(key=lambda h: -h[0])
    return [e for _, e in hits]


def _change(
    e: ElementInfo, old: ElementInfo | None, in_after: bool, before: Remembered, after: Remembered
) -> ChangedElement:
    """What happened to one element between the two screenshots."""
    fields = {"selector": _key(e), "role": e.role, "name": e.name, "tag": e.tag}
    if old is None:
        return ChangedElement(**fields, change="added", text_after=e.text or None)
    if not in_after:
        return ChangedElement(**fields, change="removed", text_before=old.text or None)
    if old.text != e.text:
        return ChangedElement(**fields, change="text", text_before=old.text, text_after=e.text)
    a, b = _page(old.bounds, before.scroll), _page(e.bounds, after.scroll)
    moved = max(abs(a.x - b.x), abs(a.y - b.y), abs(a.width - b.width), abs(a.height - b.height))
    return ChangedElement(**fields, change="moved" if moved > MOVE_EPS_CSS else "appearance")


def elements_behind(region: Region, before: Remembered, after: Remembered) -> list[ChangedElement]:
    """The elements that overlap ``region`` in either screenshot, and what changed about them."""
    ox, oy = after.origin
    area = Rect(
        x=region.x + ox + after.scroll[0],
        y=region.y + oy + after.scroll[1],
        width=region.width,
        height=region.height,
    )
    now = _ranked(after.elements, area, after.scroll)
    was = _ranked(before.elements, area, before.scroll)
    was_by_key = {_key(e): e for e in before.elements}
    now_keys = {_key(e) for e in after.elements}
    out: list[ChangedElement] = []
    seen: set[str] = set()
    for e in [*now, *was]:
        key = _key(e)
        if key in seen or len(out) >= ELEMENTS_PER_REGION:
            continue
        seen.add(key)
        out.append(_change(e, was_by_key.get(key), key in now_keys, before, after))
    return out


def _clip(text: str, n: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def describe_element(e: ChangedElement) -> str:
    what = e.role or e.tag or "element"
    name = f" '{_clip(e.name)}'" if e.name else ""
    sel = f" ({e.selector})" if e.selector else ""
    if e.change == "text":
        detail = f" text '{_clip(e.text_before or '')}' → '{_clip(e.text_after or '')}'"
    elif e.change in ("added", "removed", "moved"):
        detail = f" {e.change}"
    else:
        detail = " colour/appearance"
    return f"{what}{name}{sel}{detail}"


def summarise(report: DiffReport) -> str:
    """The sentence the model reads: "2 regions changed, 1.8 % of pixels: 1. button 'Save' …"."""
    sx, sy = report.scrolled_css
    scrolled = ""
    if abs(sx) >= 1 or abs(sy) >= 1:
        scrolled = (
            f" The page scrolled by ({sx:+.0f}, {sy:+.0f}) CSS px since then: the content is "
            "aligned, and what came into view is not compared."
        )
    n = len(report.regions)
    if n == 0 and report.unchanged:
        return f"Unchanged since screenshot #{report.compared_to} (0 regions changed)."
    if n == 0:
        return (
            f"0 regions changed since screenshot #{report.compared_to} in what both images "
            f"show.{scrolled}"
        )
    head = (
        f"{n} region{'s' if n != 1 else ''} changed since screenshot #{report.compared_to}, "
        f"{report.changed_fraction * 100:.1f} % of pixels"
    )
    parts = []
    for r in report.regions:
        where = f"at ({r.x:.0f}, {r.y:.0f}) {r.width:.0f}×{r.height:.0f} CSS px"
        if r.elements:
            parts.append(
                f"{r.number}. " + "; ".join(describe_element(e) for e in r.elements) + f" {where}"
            )
        else:
            parts.append(f"{r.number}. {where}")
    return head + ": " + "; ".join(parts) + "." + scrolled


# ---- comparing two remembered screenshots ------------------------------------------------------


def _options(before: Remembered, after: Remembered, args: DiffArgs) -> DiffOptions:
    opts = DiffOptions(threshold=args.threshold)
    if (before.geometry.scroll_x, before.geometry.scroll_y) != (
        after.geometry.scroll_x,
        after.geometry.scroll_y,
    ):
        # Shifted JPEGs: the same text falls on other 8/16 px blocks, and q60 ringing around it
        # differs by more than pixelmatch's 0.1. Measured on the corpus (std-vec, 300 px scroll):
        # 2,189 noise pixels at 0.1, 2 at 0.25, none in a region of 8+; a changed line of text
        # still shows (285 px).
        opts = DiffOptions(
            threshold=max(args.threshold, SHIFTED_JPEG_THRESHOLD),
            min_region_pixels=SHIFTED_JPEG_MIN_REGION,
        )
    return opts


def same_pixels(before: Remembered, after: Remembered) -> DiffResult | None:
    """The same bytes in the same view: nothing changed, nothing to decode (None: compare)."""
    if before.jpeg != after.jpeg or not before.same_view(after):
        return None
    w, h = after.size
    return DiffResult(
        changed_pixels=0,
        compared_pixels=w * h,
        changed_fraction=0.0,
        regions=[],
        offset_px=(0, 0),
        width=w,
        height=h,
    )


def changed_pixels(before: Remembered, after: Remembered, args: DiffArgs) -> DiffResult:
    """The pixel comparison alone (pure; runs the core)."""
    same = same_pixels(before, after)
    if same is not None:  # the common "unchanged" case
        return same
    return compare(
        before.jpeg,
        after.jpeg,
        before_geometry=before.geometry,
        after_geometry=after.geometry,
        options=_options(before, after, args),
        image=args.diff_image,
    )


def report(before: Remembered, after: Remembered, result: DiffResult) -> DiffReport:
    """The model's report of a pixel comparison: regions with the elements behind them."""
    regions = [
        ChangedRegion(**r.model_dump(), elements=elements_behind(r, before, after))
        for r in result.regions
    ]
    out = DiffReport(
        compared_to=before.shot_id,
        changed_pixels=result.changed_pixels,
        compared_pixels=result.compared_pixels,
        changed_fraction=result.changed_fraction,
        regions=regions,
        scrolled_css=(
            after.geometry.scroll_x - before.geometry.scroll_x,
            after.geometry.scroll_y - before.geometry.scroll_y,
        ),
        unchanged=result.equal and before.same_view(after),
        image=result.image if regions else None,
        image_width=result.image_width if regions else None,
        image_height=result.image_height if regions else None,
    )
    out.summary = summarise(out)
    return out


def compare_shots(before: Remembered, after: Remembered, args: DiffArgs) -> DiffReport:
    """Compare two remembered screenshots (pure; runs the core)."""
    return report(before, after, changed_pixels(before, after, args))
