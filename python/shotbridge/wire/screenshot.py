"""The bus command ``screenshot``: what a client asks for, and the image with what it shows.

The host runs it for any bus client (CLI, MCP server): capture, discover, mask, label and shrink
in one call. A full page comes as tiles: CSS bands that each fit the output caps at full width.
Every image (each tile too) carries a ``screenshot_id`` when the host registered it, so
``interact`` can map its pixels back to the page.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from shotbridge.wire import budgets
from shotbridge.wire.diff import DiffArgs, DiffReport, absent
from shotbridge.wire.extension import HiddenElement, ScrollTarget
from shotbridge.wire.geometry import Point, Rect, Size
from shotbridge.wire.model import Model

MAX_HEIGHT_CSS = 16384  # a full page stops here


class ScreenshotArgs(Model):
    """Arguments of the bus command ``screenshot`` (the capture; see DiffArgs for the diff)."""

    tab_id: int | None = None
    url: str | None = None  # navigate the tab here first
    # What to capture.
    selector: str | None = None  # just this element
    full_page: bool = False  # the whole page (up to max_height_css), as tiles within the caps
    max_height_css: int = Field(MAX_HEIGHT_CSS, ge=1, le=MAX_HEIGHT_CSS)
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
    # Up to what a dense page has; each label costs a line of the map (~12 tokens).
    max_annotations: int = Field(50, ge=1, le=500)
    # Privacy: password fields are always masked; these selectors are masked too.
    mask_selectors: list[str] = Field(default_factory=list)
    # Output budgets (see shotbridge.wire.budgets).
    max_width: budgets.Edge = budgets.MAX_WIDTH
    max_long_edge: budgets.Edge = budgets.MAX_LONG_EDGE
    quality: budgets.Quality = budgets.QUALITY
    max_bytes: budgets.ByteBudget = budgets.MAX_BYTES
    timeout_ms: int = Field(15_000, ge=100, le=120_000)
    # The 320 px thumbnail in the result. False (the MCP server, which never shows it): none is
    # made beside the image; the buffer makes it when first asked for (screenshot_get).
    thumbnail: bool = True


class ScreenshotRequest(ScreenshotArgs, DiffArgs):
    """Everything a client may send with ``screenshot``: the capture and the diff."""


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
    # Where and how to reach it: shadow path, Playwright locator, states, input type, the
    # visible proxy of a hidden control, iframe selectors from the top page.
    shadow_selector: str = ""
    locator: str = ""
    state: dict[str, bool | str] = Field(default_factory=dict)
    type: str | None = None
    proxy: str | None = None
    frame: list[str] = Field(default_factory=list)


class PageFacts(Model):
    """What the labelled page has beyond its labels (an annotated capture only)."""

    headings: list[dict[str, Any]] = Field(default_factory=list)
    forms: int = 0
    interactive_count: int = 0
    # document.readyState when the labels were read ("loading": the page is still arriving).
    ready_state: str | None = None


class Tile(Model):
    """One band of a full page, an image of its own."""

    screenshot_id: int | None = None
    jpeg: bytes = Field(repr=False)
    thumbnail: bytes = Field(repr=False)
    width: int
    height: int
    bytes: int
    quality: int
    css_to_output_scale: float
    origin: Point
    # Document CSS px (not viewport-relative): where the band sits on the page.
    css_y: float
    css_height: float


# Stage timings, ms (and the core's stages in µs, ``core_*_us``): open-ended, since the
# extension (``ext_*``) and the core each report their own stages.
Timings = dict[str, int | float]


class ScreenshotResult(Model):
    """The image (JPEG bytes, raw) and everything needed to read it without seeing it."""

    screenshot_id: int | None = None  # None when the host kept no registry for the caller
    jpeg: bytes = Field(repr=False)
    thumbnail: bytes = Field(repr=False)
    width: int
    height: int
    thumb_width: int = 0
    thumb_height: int = 0
    bytes: int
    quality: int
    downgraded: bool = False
    source_width: int = 0
    source_height: int = 0
    css_to_output_scale: float  # image px per CSS px
    method: str  # cdp or visible
    url: str
    title: str = ""
    tab_id: int | None = None
    device_pixel_ratio: float = 1.0
    viewport: Size
    scroll: Point = Field(default_factory=lambda: Point(x=0, y=0))
    origin: Point = Field(default_factory=lambda: Point(x=0, y=0))  # viewport CSS px
    css_size: Size | None = None  # the CSS size the image covers
    masked: int = 0  # regions painted over
    text_covered: int = 0  # text rects under a badge
    annotations: list[Annotation] = Field(default_factory=list)
    total_found: int = 0
    hidden: list[HiddenElement] = Field(default_factory=list)  # covered controls
    frames: list[dict[str, Any]] = Field(default_factory=list)
    page: PageFacts | None = None
    unavailable: list[str] = Field(default_factory=list)  # capture modes not available, why
    truncated: bool = False
    page_height: float | None = None
    notes: list[str] = Field(default_factory=list)
    timings: Timings = Field(default_factory=dict)
    tiles: list[Tile] | None = Field(None, exclude_if=absent)  # full_page only
    diff: DiffReport | None = Field(None, exclude_if=absent)  # when a diff was asked for
