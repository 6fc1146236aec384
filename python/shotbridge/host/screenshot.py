"""The host's ``screenshot`` command: capture, discover, mask, label and shrink in one call.

The host runs this for any bus client (CLI, MCP server). It asks the extension for the page's
pixels and, when labels are wanted, its elements — both at once, since they are independent — then
hands the pixels to the Rust core with the boxes and the password masks mapped into image space.

Capture modes: the viewport (default), ``scroll`` first (a y offset, top, bottom or a selector),
one element (``selector``), or the whole page (``full_page``, up to ``max_height_css``) as tiles:
CSS bands that each fit the core's caps at full width, so a long page stays legible instead of one
strip shrunk to a sliver. Every image (each tile too) gets a ``screenshot_id`` in the session's
registry (``shotbridge.host.shots``) so ``interact`` can map its pixels back to the page; the
session is then told about the finished screenshot (its recorder and diff memory want it).
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import Field

from shotbridge.host import label_memory
from shotbridge.host.early_pixels import EarlyPixels
from shotbridge.host.extension_link import Partial
from shotbridge.host.shots import ShotRegistry
from shotbridge.wire.errors import CommandError, ErrorCode
from shotbridge.wire.extension import (
    CaptureArgs,
    CaptureResult,
    CaptureTile,
    DiscoverArgs,
    DiscoverResult,
    ElementInfo,
    TileCaps,
)
from shotbridge.wire.geometry import Point, Rect, Size
from shotbridge.wire.model import Model
from shotbridge.wire.screenshot import (
    Annotation,
    PageFacts,
    ScreenshotArgs,
    ScreenshotResult,
    Tile,
    Timings,
)
from shotbridge.wire.timeline import TriggerNote

if TYPE_CHECKING:
    from shotbridge._core import Prepared
    from shotbridge.image import Box, ShrinkOptions, ShrinkResult


class Link(Protocol):
    """What this module needs of the host's connection to the extension."""

    async def request(
        self,
        cmd: str,
        args: dict[str, Any] | None = None,
        timeout: float = 15.0,
        on_partial: Partial | None = None,
    ) -> dict[str, Any]: ...


class Cause(Model):
    """Why a screenshot was taken: a client asked, or the recorder's automatic capture did."""

    trigger: str = "explicit"  # explicit | navigation | action | error
    action_id: str | None = None
    triggers: list[TriggerNote] = Field(default_factory=list)  # merged automatic triggers
    settled: bool | None = None  # automatic: whether the page had settled

    @property
    def automatic(self) -> bool:
        return self.trigger != "explicit"


class Owner(Protocol):
    """The client session a screenshot is taken for (``shotbridge.host.sessions.Session``)."""

    @property
    def shots(self) -> ShotRegistry: ...

    def mask_selectors(self) -> list[str]: ...

    def screenshot_taken(self, result: ScreenshotResult, cause: Cause) -> None: ...


@dataclass(frozen=True)
class _Labels:
    """The page's elements as a screenshot labels them: worked out as soon as they reach the
    host (usually before the pixels), so that what waits for the pixels is the core's call."""

    found: DiscoverResult
    annotations: list[Annotation]
    boxes: list[Box]  # each annotation's box to draw, viewport CSS px
    dumped: list[dict[str, Any]]  # the annotations as the registry keeps them


def _labelled(found: DiscoverResult) -> _Labels:
    from shotbridge import image  # the core loads only where pixels are handled

    annotations = to_annotations(found.elements)
    return _Labels(
        found=found,
        annotations=annotations,
        boxes=[image.Box(label=a.label, **a.bounds.model_dump()) for a in annotations],
        dumped=[a.model_dump() for a in annotations],
    )


@dataclass
class _Page:
    """What the browser gave for one screenshot."""

    capture: CaptureResult
    labels: _Labels | None
    ext_timings: dict[str, Any]
    # The pixels the extension sent ahead of its reply, already being shrunk.
    early: EarlyPixels[list[_Shrunk]] | None = None

    @property
    def found(self) -> DiscoverResult | None:
        return self.labels.found if self.labels else None

    @property
    def annotations(self) -> list[Annotation]:
        return self.labels.annotations if self.labels else []

    @property
    def parts(self) -> list[CaptureTile | CaptureResult]:
        """One image, or one per full-page tile: each is shrunk with its own boxes and masks."""
        return [*self.capture.tiles] or [self.capture]


@dataclass
class _Shrunk:
    image: ShrinkResult
    masked: int
    screenshot_id: int | None = None


def _shift(rect: Rect, origin: Point) -> Rect:
    if origin.x == 0 and origin.y == 0:  # a viewport capture: hundreds of rects, none moves
        return rect
    return Rect(x=rect.x - origin.x, y=rect.y - origin.y, width=rect.width, height=rect.height)


def _placeable(masks: list[Rect]) -> list[Rect]:
    """The masks, or an error: one that cannot be placed (NaN, infinite) is never dropped."""
    for m in masks:
        if not all(math.isfinite(v) for v in (m.x, m.y, m.width, m.height)):
            raise CommandError(
                ErrorCode.CAPTURE_FAILED,
                f"a secret's mask cannot be placed ({m.model_dump()}), so no image was made",
            )
    return masks


def _within(rect: Rect, size: Size) -> bool:
    """``rect`` (image-relative CSS px) overlaps an image covering ``size``."""
    return (
        rect.x < size.width
        and rect.y < size.height
        and rect.x + rect.width > 0
        and rect.y + rect.height > 0
    )


def _inside(rects: list[Rect], origin: Point, size: Size) -> list[Rect]:
    """``rects`` (viewport CSS px) moved into an image at ``origin``, those that touch it."""
    return [r for rect in rects if _within(r := _shift(rect, origin), size)]


def to_annotations(elements: list[ElementInfo]) -> list[Annotation]:
    return [
        Annotation(
            label=i,
            selector=e.selector,
            tag=e.tag,
            role=e.role,
            name=e.name,
            text=e.text,
            bounds=e.bounds,
            interactionHint=e.interaction_hint,
            in_viewport=e.in_viewport,
            shadow_selector=e.shadow_selector,
            locator=e.locator,
            state=e.state,
            type=e.type,
            proxy=e.proxy,
            frame=e.frame,
        )
        for i, e in enumerate(elements, start=1)
    ]


def _epoch_ms() -> float:
    """Wall-clock ms, comparable with the extension's and the MCP client's stage stamps."""
    return round(time.time() * 1000, 1)


def _since(t: float) -> float:
    return (time.perf_counter() - t) * 1000


async def _stamped(
    job: Awaitable[dict[str, Any]], timings: Timings, key: str = "host_got_at"
) -> dict[str, Any]:
    """A reply, with the moment it reached the host noted in ``timings`` under ``key``."""
    reply = await job
    timings[key] = _epoch_ms()
    return reply


def capture_args(args: ScreenshotArgs) -> CaptureArgs:
    """The extension's ``capture`` request; asks for the render scale when it helps."""
    out = CaptureArgs(
        tab_id=args.tab_id,
        method=args.method,
        format=args.browser_format,
        quality=args.browser_quality,
        selector=args.selector,
        full_page=args.full_page,
        max_height_css=args.max_height_css,
        mask_selectors=args.mask_selectors,
        # A little under ours, so the extension's own timeout (which names the step) comes first.
        timeout_ms=max(args.timeout_ms - 500, args.timeout_ms * 9 // 10),
    )
    if args.scroll is not None:
        out.scroll = args.scroll
    if not args.full_page:
        out.early_pixels = True
    caps = TileCaps(max_width=args.max_width, max_long_edge=args.max_long_edge)
    if args.full_page:
        # The extension picks the width-fitting scale and cuts the bands: it knows the page size.
        out.tile = caps
    elif args.render_at_output_size and args.method != "visible":
        # The extension knows the captured area: it picks the scale that renders at output size.
        out.fit = caps
        # Chrome encodes at our final quality: with no labels the image leaves as it is, its
        # masks blacked out in its DCT coefficients (no decode and re-encode); with labels, a
        # second q60 pass loses no more than one from a q90 intermediate (within ±0.4 dB PSNR
        # on the corpus) and a third of the bytes cross native messaging.
        out.fit_quality = args.quality
    return out


def _discover_args(args: ScreenshotArgs, *, beside_capture: bool) -> dict[str, Any]:
    """The extension's ``discover`` request for the labels."""
    return DiscoverArgs(
        tab_id=args.tab_id,
        target=args.target,
        selector=args.annotation_selector,
        max=args.max_annotations,
        include_offscreen=args.full_page,
        text_rects=True,  # badges are placed to hide the least of the page's text
        # Both need the page's main thread: the capture's frame first, then the read beside
        # Chrome's raster and encode (in the other order, the pixels wait for the whole read).
        after_frame=beside_capture,
    ).model_dump(mode="python", exclude_unset=True)


def _with_session_masks(raw_args: dict[str, Any], owner: Owner | None) -> dict[str, Any]:
    extra = owner.mask_selectors() if owner is not None else []
    if not extra:
        return raw_args
    asked = list(raw_args.get("mask_selectors") or [])
    return {**raw_args, "mask_selectors": list(dict.fromkeys([*asked, *extra]))}


async def _from_browser(link: Link, args: ScreenshotArgs, timings: Timings) -> _Page:
    """The page's pixels and, for labels, its elements (at once unless a scroll comes first)."""
    t1 = time.perf_counter()
    timeout = args.timeout_ms / 1000
    found_job = _labels_beside(link, args, timings) if args.scroll is None else None

    async def shrink_early(capture: CaptureResult) -> list[_Shrunk]:
        if found_job is None:
            return await _shrink_all(_page(capture, None, {}), args)
        timings["early_at"] = _epoch_ms()
        if found_job.done() and not found_job.cancelled() and not found_job.exception():
            # The labels came first (the page reused them): one call of the core, one thread.
            done = await _shrink_all(_page(capture, found_job.result(), {}), args)
            timings["labelled_at"] = _epoch_ms()
            return done
        # The labels reach the host after the pixels: the pixels are decoded meanwhile.
        prepared = asyncio.ensure_future(asyncio.to_thread(_prepare, capture, args))
        prepared.add_done_callback(lambda t: t.cancelled() or t.exception())
        page = _page(capture, await asyncio.shield(found_job), {})
        if not page.annotations:  # nothing to draw: the image may leave as it came
            return await _shrink_all(page, args)
        decoded = await prepared
        timings["decoded_at"] = _epoch_ms()
        done = [await asyncio.to_thread(_finish_part, page, decoded)]
        timings["labelled_at"] = _epoch_ms()
        return done

    early: EarlyPixels[list[_Shrunk]] = EarlyPixels(shrink_early)
    asked = capture_args(args).model_dump(mode="python", exclude_unset=True)
    asking = link.request("capture", asked, timeout=timeout, on_partial=early.on_partial)
    try:
        raw_capture = await _stamped(asking, timings)
    except BaseException:
        if found_job:
            found_job.cancel()
        raise
    labels = await found_job if found_job else None
    if labels is not None:  # the page read its labels afresh, or reused them (bench stages)
        timings["labels_reused"] = int(labels.found.reused)
    if args.annotate and found_job is None:
        # The capture scrolls first: elements must be found where they are after that.
        found_args = _discover_args(args, beside_capture=False)
        labels = _labelled(await _found(link.request("discover", found_args, timeout=timeout)))
    ext_timings = raw_capture.get("timings") if isinstance(raw_capture, dict) else None
    capture = early.complete(CaptureResult.model_validate(raw_capture))
    timings["browser_ms"] = _since(t1)
    return _page(capture, labels, ext_timings if isinstance(ext_timings, dict) else {}, early)


def _labels_beside(
    link: Link, args: ScreenshotArgs, timings: Timings
) -> asyncio.Task[_Labels] | None:
    """The labels, asked for beside the capture (None without labels)."""
    if not args.annotate:
        return None
    job = asyncio.create_task(_labels_of(link, args, timings))
    # Its error is the caller's only when the capture got that far (awaited there).
    job.add_done_callback(lambda t: t.cancelled() or t.exception())
    return job


async def _labels_of(link: Link, args: ScreenshotArgs, timings: Timings) -> _Labels:
    return _labelled(await _remembered(link, args, timings))


async def _remembered(link: Link, args: ScreenshotArgs, timings: Timings) -> DiscoverResult:
    """The labels, from the answer the host holds when the page says nothing changed."""
    found_args = _discover_args(args, beside_capture=True)
    parse = DiscoverResult.model_validate
    got = await label_memory.discover(link, found_args, parse, args.timeout_ms / 1000)
    timings["labels_got_at"] = _epoch_ms()
    timings["labels_same"] = int(got.same)  # the held answer taken
    return got.result.model_copy(update={"reused": got.reused}) if got.same else got.result


async def _found(job: Awaitable[dict[str, Any]]) -> DiscoverResult:
    return DiscoverResult.model_validate(await job)


def _page(
    capture: CaptureResult,
    labels: _Labels | None,
    ext: dict[str, Any],
    early: EarlyPixels[list[_Shrunk]] | None = None,
) -> _Page:
    _placeable(capture.masks)
    return _Page(capture, labels, ext, early)


def _shrink_part(page: _Page, part: CaptureTile | CaptureResult, options: ShrinkOptions) -> _Shrunk:
    """One image through the core, with the labels, masks and text rects that fall in it."""
    from shotbridge import image  # the core loads only where pixels are handled

    masks = _inside(page.capture.masks, part.origin, part.css_size)
    boxes, text = _labels_in(page, part)
    shrunk = image.shrink(
        part.data_url,
        options,
        boxes=boxes,
        masks=masks,
        device_pixel_ratio=page.capture.device_pixel_ratio,
        css_size=part.css_size,
        text=text,
        source_quality=page.capture.quality if part is page.capture else None,
    )
    return _Shrunk(shrunk, len(masks))


def _labels_in(page: _Page, part: CaptureTile | CaptureResult) -> tuple[list[Box], list[Rect]]:
    """The labels and the page's text rects that fall in one image, in its own CSS px."""
    from shotbridge import image

    if page.labels is None:
        return [], []
    origin, css_size = part.origin, part.css_size
    boxes = [
        # A viewport capture moves no box: the one made when the labels came is drawn.
        box if r is a.bounds else image.Box(label=a.label, **r.model_dump())
        for a, box in zip(page.labels.annotations, page.labels.boxes, strict=True)
        if _within(r := _shift(a.bounds, origin), css_size)
    ]
    return boxes, _inside(page.labels.found.text_rects, origin, css_size)


def _prepare(capture: CaptureResult, args: ScreenshotArgs) -> Prepared:
    """A one-image capture decoded and masked, its labels to come (:func:`_finish_part`)."""
    from shotbridge import image

    return image.prepare(
        capture.data_url,
        _options(args),
        masks=_inside(capture.masks, capture.origin, capture.css_size),
        device_pixel_ratio=capture.device_pixel_ratio,
        css_size=capture.css_size,
    )


def _finish_part(page: _Page, prepared: Prepared) -> _Shrunk:
    """:func:`_shrink_part` of a one-image capture, from its prepared pixels."""
    from shotbridge import image

    boxes, text = _labels_in(page, page.capture)
    masks = _inside(page.capture.masks, page.capture.origin, page.capture.css_size)
    return _Shrunk(image.finish(prepared, boxes=boxes, text=text), len(masks))


def _options(args: ScreenshotArgs) -> ShrinkOptions:
    from shotbridge import image

    return image.ShrinkOptions(
        max_width=args.max_width,
        max_long_edge=args.max_long_edge,
        quality=args.quality,
        max_bytes=args.max_bytes,
        thumbnail=args.thumbnail,
    )


async def _shrink_all(page: _Page, args: ScreenshotArgs) -> list[_Shrunk]:
    """Every part shrunk on its own thread (the core releases the GIL)."""
    options = _options(args)
    jobs = (asyncio.to_thread(_shrink_part, page, p, options) for p in page.parts)
    return list(await asyncio.gather(*jobs))


def _register(owner: Owner | None, page: _Page, args: ScreenshotArgs, done: list[_Shrunk]) -> None:
    """Give every image its ``screenshot_id`` in the session's registry (none without one)."""
    if owner is None:
        return
    capture, labels = page.capture, page.labels.dumped if page.labels else []
    for i, (shrunk, part) in enumerate(zip(done, page.parts, strict=True)):
        shrunk.screenshot_id = owner.shots.add(
            url=capture.url,
            tab_id=capture.tab_id,
            width=shrunk.image.width,
            height=shrunk.image.height,
            css_to_output_scale=shrunk.image.css_to_output_scale,
            device_pixel_ratio=capture.device_pixel_ratio,
            origin=part.origin,
            css_size=part.css_size,
            scroll=capture.scroll,
            viewport=capture.viewport,
            annotated=args.annotate,
            annotations=labels,
            tile=i if capture.tiles else None,
        ).id


def _tiles(page: _Page, done: list[_Shrunk]) -> list[Tile]:
    return [
        Tile(
            screenshot_id=part.screenshot_id,
            jpeg=part.image.jpeg,
            thumbnail=part.image.thumbnail,
            width=part.image.width,
            height=part.image.height,
            bytes=len(part.image.jpeg),
            quality=part.image.quality,
            css_to_output_scale=part.image.css_to_output_scale,
            origin=tile.origin,
            # Document CSS px (not viewport-relative): where the band sits on the page.
            css_y=tile.origin.y + page.capture.scroll.y,
            css_height=tile.css_size.height,
        )
        for part, tile in zip(done, page.parts, strict=True)
    ]


def _notes(page: _Page, args: ScreenshotArgs) -> list[str]:
    notes: list[str] = list(page.found.notes) if page.found else []
    if page.capture.truncated and args.full_page:
        notes.append(
            f"The page is {page.capture.page_height or 0:.0f} CSS px tall; the capture stops at "
            f"{args.max_height_css} CSS px."
        )
    return notes


def _all_timings(page: _Page, timings: Timings, first: ShrinkResult) -> Timings:
    return {
        **{f"ext_{k}": v for k, v in page.ext_timings.items() if isinstance(v, int | float)},
        **timings,
        **{f"core_{k}_us": v for k, v in first.timings_us.items()},
    }


def _labels(found: DiscoverResult | None) -> dict[str, Any]:
    """What discover found besides the elements (all empty without labels)."""
    if found is None:
        return {"total_found": 0, "hidden": [], "frames": [], "page": None}
    facts = PageFacts(
        headings=found.headings,
        forms=found.forms,
        interactive_count=found.interactive_count,
        ready_state=found.ready_state,
    )
    return {
        "total_found": found.total_found,
        "hidden": found.hidden,
        "frames": found.frames,
        "page": facts,
    }


def _result(
    page: _Page, args: ScreenshotArgs, done: list[_Shrunk], timings: Timings
) -> ScreenshotResult:
    """The image and everything needed to read it, in one model."""
    first, capture = done[0].image, page.capture
    return ScreenshotResult(
        screenshot_id=done[0].screenshot_id,
        jpeg=first.jpeg,
        thumbnail=first.thumbnail,
        width=first.width,
        height=first.height,
        thumb_width=first.thumb_width,
        thumb_height=first.thumb_height,
        bytes=len(first.jpeg),
        quality=first.quality,
        downgraded=first.downgraded,
        source_width=first.source_width,
        source_height=first.source_height,
        css_to_output_scale=first.css_to_output_scale,
        method=capture.method,
        url=capture.url,
        title=capture.title,
        tab_id=capture.tab_id,
        device_pixel_ratio=capture.device_pixel_ratio,
        viewport=capture.viewport,
        scroll=capture.scroll,
        origin=page.parts[0].origin,
        css_size=page.parts[0].css_size,
        masked=sum(d.masked for d in done),
        text_covered=sum(d.image.text_covered for d in done),
        annotations=page.annotations,
        **_labels(page.found),
        unavailable=capture.unavailable,
        truncated=capture.truncated,
        page_height=capture.page_height,
        notes=_notes(page, args),
        timings=_all_timings(page, timings, first),
        tiles=_tiles(page, done) if args.full_page else None,
    )


async def take(
    link: Link,
    raw_args: dict[str, Any],
    owner: Owner | None = None,
    cause: Cause | None = None,
) -> ScreenshotResult:
    """Run one screenshot for a bus client (image bytes raw).

    With ``owner`` (the client's session), every image is registered, the result carries its
    ``screenshot_id``, and the session is told about the finished screenshot.
    """
    timings: Timings = {"host_req_at": _epoch_ms()}
    args = ScreenshotArgs.model_validate(_with_session_masks(raw_args, owner))
    t0 = time.perf_counter()
    if args.url:
        await link.request(
            "navigate",
            {"url": args.url, "tab_id": args.tab_id, "timeout_ms": args.timeout_ms},
            timeout=args.timeout_ms / 1000,
        )
        timings["navigate_ms"] = _since(t0)
    page = await _from_browser(link, args, timings)
    t2 = time.perf_counter()
    early = await page.early.result(page.capture) if page.early else None
    done = early if early is not None else await _shrink_all(page, args)
    timings["early_pixels_used"] = float(early is not None)
    timings["core_ms"] = _since(t2)
    timings["total_ms"] = _since(t0)
    _register(owner, page, args, done)
    result = _result(page, args, done, timings)
    if owner is not None:
        owner.screenshot_taken(result, cause or Cause())
    result.timings["host_done_at"] = _epoch_ms()
    return result
