"""The host's ``screenshot`` command: capture, discover, mask, label and shrink in one call.

The host runs this for any bus client (CLI, MCP server). It asks the extension for the page's
pixels and, when labels are wanted, its elements — both at once, since they are independent — then
hands the pixels to the Rust core with the boxes and the password masks mapped into image space.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Literal, Protocol

from pydantic import Field

from shotbridge.protocol import (
    CaptureResult,
    DiscoverResult,
    ElementInfo,
    Model,
    Point,
    Rect,
    Size,
)


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
    full_page: bool = False
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
    interactionHint: str  # noqa: N815 - the wire name the MCP tools document
    in_viewport: bool


def render_scale(capture_css: Size, dpr: float, args: ScreenshotArgs) -> float:
    """Image px per CSS px that makes the browser's output already fit our caps (never upscale)."""
    fit_width = args.max_width / max(capture_css.width, 1.0)
    fit_long = args.max_long_edge / max(capture_css.width, capture_css.height, 1.0)
    return min(dpr, fit_width, fit_long)


def _shift(rect: Rect, origin: Point) -> Rect:
    return Rect(x=rect.x - origin.x, y=rect.y - origin.y, width=rect.width, height=rect.height)


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
        )
        for i, e in enumerate(elements, start=1)
    ]


async def _capture_args(link: Link, args: ScreenshotArgs) -> dict[str, Any]:
    """Arguments for the extension's ``capture``; asks for the render scale when it helps."""
    out: dict[str, Any] = {
        "tab_id": args.tab_id,
        "method": args.method,
        "format": args.browser_format,
        "quality": args.browser_quality,
        "selector": args.selector,
        "full_page": args.full_page,
        "mask_selectors": args.mask_selectors,
        "timeout_ms": args.timeout_ms,
    }
    if args.render_at_output_size and args.method != "visible" and not args.selector:
        info = await link.request("page_info", {"tab_id": args.tab_id}, timeout=args.timeout_ms / 1000)
        dpr = float(info.get("device_pixel_ratio", 1.0))
        viewport = Size.model_validate(info["viewport"])
        css = (
            Size(width=viewport.width, height=float(info.get("page_height") or viewport.height))
            if args.full_page
            else viewport
        )
        out["scale"] = render_scale(css, dpr, args)
    return out


async def take(link: Link, raw_args: dict[str, Any]) -> dict[str, Any]:
    """Run one screenshot for a bus client; returns a msgpack-ready dict (image bytes raw)."""
    from shotbridge import image  # the core loads only where pixels are handled

    args = ScreenshotArgs.model_validate(raw_args)
    timeout = args.timeout_ms / 1000
    timings: dict[str, float] = {}
    t0 = time.perf_counter()

    if args.url:
        await link.request(
            "navigate", {"url": args.url, "tab_id": args.tab_id, "timeout_ms": args.timeout_ms},
            timeout=timeout,
        )
        timings["navigate_ms"] = (time.perf_counter() - t0) * 1000

    t1 = time.perf_counter()
    capture_args = await _capture_args(link, args)
    capture_job = link.request("capture", capture_args, timeout=timeout)
    discover_job = None
    if args.annotate:
        discover_job = link.request(
            "discover",
            {
                "tab_id": args.tab_id,
                "target": args.target,
                "selector": args.annotation_selector,
                "max": args.max_annotations,
                "include_offscreen": args.full_page,
            },
            timeout=timeout,
        )
        raw_capture, raw_discover = await asyncio.gather(capture_job, discover_job)
        found: DiscoverResult | None = DiscoverResult.model_validate(raw_discover)
    else:
        raw_capture, found = await capture_job, None
    capture = CaptureResult.model_validate(raw_capture)
    timings["browser_ms"] = (time.perf_counter() - t1) * 1000

    elements = found.elements if found else []
    annotations = to_annotations(elements)
    boxes = [
        image.Box(label=a.label, **_shift(a.bounds, capture.origin).model_dump()) for a in annotations
    ]
    masks = [_shift(m, capture.origin) for m in capture.masks]

    t2 = time.perf_counter()
    shrunk = await asyncio.to_thread(
        image.shrink,
        capture.data_url,
        image.ShrinkOptions(
            max_width=args.max_width,
            max_long_edge=args.max_long_edge,
            quality=args.quality,
            max_bytes=args.max_bytes,
        ),
        boxes=boxes,
        masks=masks,
        device_pixel_ratio=capture.device_pixel_ratio,
        css_size=(capture.css_size.width, capture.css_size.height),
    )
    timings["core_ms"] = (time.perf_counter() - t2) * 1000
    timings["total_ms"] = (time.perf_counter() - t0) * 1000

    return {
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
        "origin": capture.origin.model_dump(),
        "css_size": capture.css_size.model_dump(),
        "masked": len(masks),
        "annotations": [a.model_dump() for a in annotations],
        "total_found": found.total_found if found else 0,
        "unavailable": capture.unavailable,
        "truncated": capture.truncated,
        "page_height": capture.page_height,
        "timings": {**timings, **{f"core_{k}_us": v for k, v in shrunk.timings_us.items()}},
    }
