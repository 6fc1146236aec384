"""The host's ``screenshot`` command: capture, discover, mask, label and shrink in one call.

The host runs this for any bus client (CLI, MCP server). It asks the extension for the page's
pixels and, when labels are wanted, its elements — both at once, since they are independent — then
hands the pixels to the Rust core with the boxes and the password masks mapped into image space.

Capture modes: the viewport (default), ``scroll`` first (a y offset, top, bottom or a selector),
one element (``selector``), or the whole page (``full_page``, up to ``max_height_css``) as tiles:
CSS bands that each fit the core's caps at full width, so a long page stays legible instead of one
strip shrunk to a sliver. Every image (each tile too) gets a ``screenshot_id`` in the host's
registry (``shotbridge.host.shots``) so ``interact`` can map its pixels back to the page.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable
from typing import Any, Literal, Protocol

from pydantic import Field

from shotbridge.host.recording import publish_screenshot
from shotbridge.host.shots import ShotRegistry
from shotbridge.wire.errors import CommandError, ErrorCode
from shotbridge.wire.extension import (
    CaptureResult,
    CaptureTile,
    DiscoverResult,
    ElementInfo,
    ScrollTarget,
)
from shotbridge.wire.geometry import Point, Rect, Size
from shotbridge.wire.model import Model


class Link(Protocol):
    """What this module needs of the host's connection to the extension."""

    async def request(
        self, cmd: str, args: dict[str, Any] | None = None, timeout: float = 15.0
    ) -> dict[str, Any]: ...


class ScreenshotArgs(Model):
    """Arguments of the bus command ``screenshot``."""

    tab_id: int | None = None
    url: str | None = None  # navigate the tab here first
    # What to capture.
    selector: str | None = None  # just this element
    full_page: bool = False  # the whole page (up to max_height_css), as tiles within the caps
    max_height_css: int = Field(16384, ge=1, le=16384)
    scroll: ScrollTarget | None = None  # scroll here before capturing
    method: Literal["auto", "cdp", "visible"] = "auto"
    browser_format: Literal["jpeg", "png"] = "jpeg"
    browser_quality: int = Field(90, ge=1, le=100)
    # Ask the browser to render at the output size (CDP only) instead of shrinking afterwards.
    render_at_output_size: bool = True
    # Set-of-Mark labels.
    annotate: bool = False
    target: Literal["interactive", "all_visible", "custom"] = "interactive"
    annotation_selector: str | None = None
    max_annotations: int = Field(50, ge=1, le=100)
    # Privacy: password fields are always masked; these selectors are masked too.
    mask_selectors: list[str] = Field(default_factory=list)
    # Output budgets (see shotbridge.image.ShrinkOptions).
    max_width: int = Field(1280, ge=16, le=8192)
    max_long_edge: int = Field(1568, ge=16, le=8192)
    quality: int = Field(60, ge=30, le=95)
    max_bytes: int = Field(500_000, ge=2_000)
    timeout_ms: int = Field(15_000, ge=100, le=120_000)


class Annotation(Model):
    """One numbered label drawn on the image, with what the model needs to act on it."""

    label: int
    selector: str
    tag: str
    role: str
    name: str
    text: str
    bounds: Rect  # CSS px, viewport-relative
    interactionHint: str
    in_viewport: bool
    # Issue 14 (additive): shadow path, Playwright locator, states, input type, visible proxy.
    shadow_selector: str = ""
    locator: str = ""
    state: dict[str, bool | str] = Field(default_factory=dict)
    type: str | None = None
    proxy: str | None = None
    frame: list[str] = Field(default_factory=list)  # iframe selectors from the top page


def _shift(rect: Rect, origin: Point) -> Rect:
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


async def _stamped(job: Awaitable[dict[str, Any]], timings: dict[str, float]) -> dict[str, Any]:
    """The capture's reply, with the moment it reached the host noted in ``timings``."""
    reply = await job
    timings["host_got_at"] = _epoch_ms()
    return reply


def _capture_args(args: ScreenshotArgs) -> dict[str, Any]:
    """Arguments for the extension's ``capture``; asks for the render scale when it helps."""
    out: dict[str, Any] = {
        "tab_id": args.tab_id,
        "method": args.method,
        "format": args.browser_format,
        "quality": args.browser_quality,
        "selector": args.selector,
        "full_page": args.full_page,
        "max_height_css": args.max_height_css,
        "mask_selectors": args.mask_selectors,
        # A little under ours, so the extension's own timeout (which names the step) comes first.
        "timeout_ms": max(args.timeout_ms - 500, args.timeout_ms * 9 // 10),
    }
    if args.scroll is not None:
        out["scroll"] = args.scroll if isinstance(args.scroll, str) else args.scroll.model_dump()
    if args.full_page:
        # The extension picks the width-fitting scale and cuts the bands: it knows the page size.
        out["tile"] = {"max_width": args.max_width, "max_long_edge": args.max_long_edge}
        return out
    if args.render_at_output_size and args.method != "visible":
        # The extension knows the captured area: it picks the scale that renders at output size.
        out["fit"] = {"max_width": args.max_width, "max_long_edge": args.max_long_edge}
        # Chrome encodes at our final quality: with no labels the image leaves as it is, its
        # masks blacked out in its DCT coefficients (no decode and re-encode); with labels, a
        # second q60 pass loses no more than one from a q90 intermediate (within ±0.4 dB PSNR
        # on the corpus) and a third of the bytes cross native messaging.
        out["fit_quality"] = args.quality
    return out


def _with_session_masks(raw_args: dict[str, Any], shots: ShotRegistry | None) -> dict[str, Any]:
    extra = shots.session_masks() if shots is not None else []
    if not extra:
        return raw_args
    asked = list(raw_args.get("mask_selectors") or [])
    return {**raw_args, "mask_selectors": list(dict.fromkeys([*asked, *extra]))}


async def take(
    link: Link, raw_args: dict[str, Any], shots: ShotRegistry | None = None
) -> dict[str, Any]:
    """Run one screenshot for a bus client; returns a msgpack-ready dict (image bytes raw).

    With ``shots``, every image is registered and the result carries its ``screenshot_id``.
    """
    from shotbridge import image  # the core loads only where pixels are handled

    args = ScreenshotArgs.model_validate(_with_session_masks(raw_args, shots))
    timeout = args.timeout_ms / 1000
    timings: dict[str, float] = {}
    t0 = time.perf_counter()

    if args.url:
        await link.request(
            "navigate",
            {"url": args.url, "tab_id": args.tab_id, "timeout_ms": args.timeout_ms},
            timeout=timeout,
        )
        timings["navigate_ms"] = (time.perf_counter() - t0) * 1000

    t1 = time.perf_counter()
    capture_args = _capture_args(args)
    capture_job = _stamped(link.request("capture", capture_args, timeout=timeout), timings)
    discover_args = {
        "tab_id": args.tab_id,
        "target": args.target,
        "selector": args.annotation_selector,
        "max": args.max_annotations,
        "include_offscreen": args.full_page,
        "text_rects": True,  # badges are placed to hide the least of the page's text
    }
    found: DiscoverResult | None = None
    if not args.annotate:
        raw_capture = await capture_job
    elif args.scroll is not None:
        # The capture scrolls first: elements must be found where they are after that.
        raw_capture = await capture_job
        found = DiscoverResult.model_validate(
            await link.request("discover", discover_args, timeout=timeout)
        )
    else:
        discover_job = link.request("discover", discover_args, timeout=timeout)
        raw_capture, raw_discover = await asyncio.gather(capture_job, discover_job)
        found = DiscoverResult.model_validate(raw_discover)
    ext_timings = raw_capture.get("timings") if isinstance(raw_capture, dict) else None
    ext_timings = ext_timings if isinstance(ext_timings, dict) else {}
    capture = CaptureResult.model_validate(raw_capture)
    _placeable(capture.masks)
    timings["browser_ms"] = (time.perf_counter() - t1) * 1000

    annotations = to_annotations(found.elements if found else [])
    labels = [a.model_dump() for a in annotations]
    # One image, or one per full-page tile: each is shrunk on its own with its own boxes/masks.
    parts: list[CaptureTile | CaptureResult] = [*capture.tiles] or [capture]
    options = image.ShrinkOptions(
        max_width=args.max_width,
        max_long_edge=args.max_long_edge,
        quality=args.quality,
        max_bytes=args.max_bytes,
    )

    def shrink_part(part: CaptureTile | CaptureResult) -> Any:
        origin, css_size = part.origin, part.css_size
        boxes = [
            image.Box(label=a.label, **r.model_dump())
            for a in annotations
            if _within(r := _shift(a.bounds, origin), css_size)
        ]
        masks = [r for m in capture.masks if _within(r := _shift(m, origin), css_size)]
        texts = found.text_rects if found else []
        text = [r for t in texts if _within(r := _shift(t, origin), css_size)]
        shrunk = image.shrink(
            part.data_url,
            options,
            boxes=boxes,
            masks=masks,
            device_pixel_ratio=capture.device_pixel_ratio,
            css_size=css_size,
            text=text,
            source_quality=capture.quality if part is capture else None,
        )
        return shrunk, len(masks)

    t2 = time.perf_counter()
    done = await asyncio.gather(*(asyncio.to_thread(shrink_part, p) for p in parts))
    timings["core_ms"] = (time.perf_counter() - t2) * 1000
    timings["total_ms"] = (time.perf_counter() - t0) * 1000

    ids: list[int | None] = [None] * len(parts)
    if shots is not None:
        ids = [
            shots.add(
                url=capture.url,
                tab_id=capture.tab_id,
                width=shrunk.width,
                height=shrunk.height,
                css_to_output_scale=shrunk.css_to_output_scale,
                device_pixel_ratio=capture.device_pixel_ratio,
                origin=part.origin,
                css_size=part.css_size,
                scroll=capture.scroll,
                viewport=capture.viewport,
                annotated=args.annotate,
                annotations=labels,
                tile=i if capture.tiles else None,
            ).id
            for i, ((shrunk, _), part) in enumerate(zip(done, parts, strict=True))
        ]

    shrunk = done[0][0]
    notes: list[str] = list(found.notes) if found else []
    if capture.truncated and args.full_page:
        notes.append(
            f"The page is {capture.page_height or 0:.0f} CSS px tall; the capture stops at "
            f"{args.max_height_css} CSS px."
        )
    result: dict[str, Any] = {
        "screenshot_id": ids[0],
        "jpeg": shrunk.jpeg,
        "thumbnail": shrunk.thumbnail,
        "width": shrunk.width,
        "height": shrunk.height,
        "thumb_width": shrunk.thumb_width,
        "thumb_height": shrunk.thumb_height,
        "bytes": len(shrunk.jpeg),
        "quality": shrunk.quality,
        "downgraded": shrunk.downgraded,
        "source_width": shrunk.source_width,
        "source_height": shrunk.source_height,
        "css_to_output_scale": shrunk.css_to_output_scale,
        "method": capture.method,
        "url": capture.url,
        "title": capture.title,
        "tab_id": capture.tab_id,
        "device_pixel_ratio": capture.device_pixel_ratio,
        "viewport": capture.viewport.model_dump(),
        "scroll": capture.scroll.model_dump(),
        "origin": parts[0].origin.model_dump(),
        "css_size": parts[0].css_size.model_dump(),
        "masked": sum(m for _, m in done),
        "text_covered": sum(s.text_covered for s, _ in done),  # text rects under a badge
        "annotations": labels,
        "total_found": found.total_found if found else 0,
        "hidden": [h.model_dump() for h in found.hidden] if found else [],
        "frames": found.frames if found else [],
        "page": (
            {"headings": found.headings, "forms": found.forms}
            | {"interactive_count": found.interactive_count}
            if found
            else None
        ),
        "unavailable": capture.unavailable,
        "truncated": capture.truncated,
        "page_height": capture.page_height,
        "notes": notes,
        "timings": {
            **{f"ext_{k}": v for k, v in ext_timings.items() if isinstance(v, int | float)},
            **timings,
            **{f"core_{k}_us": v for k, v in shrunk.timings_us.items()},
        },
    }
    if args.full_page:
        result["tiles"] = [
            {
                "screenshot_id": sid,
                "jpeg": part.jpeg,
                "thumbnail": part.thumbnail,
                "width": part.width,
                "height": part.height,
                "bytes": len(part.jpeg),
                "quality": part.quality,
                "css_to_output_scale": part.css_to_output_scale,
                "origin": tile.origin.model_dump(),
                # Document CSS px (not viewport-relative): where the band sits on the page.
                "css_y": tile.origin.y + capture.scroll.y,
                "css_height": tile.css_size.height,
            }
            for sid, (part, _), tile in zip(ids, done, parts, strict=True)
        ]
    publish_screenshot(shots, result, raw_args)  # the session's screenshot buffer
    result["timings"]["host_done_at"] = _epoch_ms()
    return result
