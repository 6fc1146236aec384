"""The extension's commands: what the host asks of it, and what it answers."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from shotbridge.wire.geometry import Point, Rect, Size
from shotbridge.wire.messages import PROTOCOL_VERSION
from shotbridge.wire.model import Model


class TabInfo(Model):
    id: int
    window_id: int
    url: str
    title: str
    active: bool
    tracked: bool = False


class Hello(Model):
    """First event the extension sends after connecting."""

    protocol: int = PROTOCOL_VERSION
    extension_version: str
    profile_id: str  # random id kept in chrome.storage.local: one per browser profile
    user_agent: str
    tracked_tab: int | None = None


class ScrollToY(Model):
    y: float


class ScrollToSelector(Model):
    selector: str = Field(min_length=1)


# Where to scroll before capturing: a y offset, the top or bottom, or an element (centred).
ScrollTarget = Literal["top", "bottom"] | ScrollToY | ScrollToSelector


def scroll_target(value: str) -> str | dict[str, Any]:
    """A ``ScrollTarget`` from text: "top" / "bottom", a y offset, or else a selector."""
    v = value.strip()
    if v.lower() in ("top", "bottom"):
        return v.lower()
    try:
        return {"y": float(v)}
    except ValueError:
        return {"selector": v}


class TileCaps(Model):
    """Output px every full-page tile must fit (the core's caps)."""

    max_width: int = Field(ge=16)
    max_long_edge: int = Field(ge=16)


class CaptureArgs(Model):
    """``capture``: screenshot of a tab."""

    tab_id: int | None = None  # default: the tracked tab
    # auto: captureVisibleTab for a plain viewport capture while Chrome's quota allows, else CDP.
    method: Literal["auto", "cdp", "visible"] = "auto"
    format: Literal["jpeg", "png"] = "jpeg"
    quality: int = Field(90, ge=1, le=100)
    # Render scale (image px per CSS px) asked of the browser; None = devicePixelRatio.
    scale: float | None = Field(None, gt=0, le=4)
    selector: str | None = None  # clip to this element
    full_page: bool = False
    max_height_css: int = 16384
    timeout_ms: int = 10000
    scroll: ScrollTarget | None = None  # applied before capturing
    # full_page only: capture CSS bands that each fit these caps instead of one tall image.
    tile: TileCaps | None = None
    # CDP only: render at the scale that makes the image fit these caps (never upscaling).
    fit: TileCaps | None = None
    # With `fit`: the JPEG quality to render at instead of `quality` (the host's final one, so
    # an image with nothing to paint on it can leave as Chrome encoded it).
    fit_quality: int | None = Field(None, ge=1, le=100)
    # Secrets to paint over on top of password fields (the user's configure mask_selectors).
    mask_selectors: list[str] = Field(default_factory=list)
    debugger_idle_ms: int = Field(2000, ge=0, le=60_000)  # keep the debugger attached this long


class CaptureTile(Model):
    """One band of a tiled full-page capture."""

    data_url: str
    origin: Point  # viewport-relative CSS px of the tile's top-left
    css_size: Size


class CaptureResult(Model):
    data_url: str  # data:image/jpeg;base64,...
    method: Literal["cdp", "visible"]
    quality: int | None = None  # the JPEG quality Chrome encoded data_url at
    url: str
    title: str
    tab_id: int
    device_pixel_ratio: float
    viewport: Size  # CSS px
    scroll: Point  # CSS px
    origin: Point  # viewport-relative CSS px of the image's top-left
    css_size: Size  # CSS size the image covers
    # Password fields and other secrets to black out, viewport-relative CSS px.
    masks: list[Rect] = Field(default_factory=list)
    unavailable: list[str] = Field(default_factory=list)  # capture modes not available, and why
    truncated: bool = False  # full page cut at max_height_css
    page_height: float | None = None
    tiles: list[CaptureTile] = Field(default_factory=list)  # full_page with `tile`, top to bottom


class ElementInfo(Model):
    # Plain CSS for document.querySelector; "" inside shadow roots (see shadow_selector).
    selector: str
    tag: str
    role: str = ""
    name: str = ""
    text: str = ""
    bounds: Rect  # viewport-relative CSS px
    # clickable | editable | selectable | toggleable | navigable, or none / text for the rest.
    interaction_hint: str = Field("clickable", alias="interactionHint")
    in_viewport: bool = True
    # "host >>> inner" path for elements inside (open or closed) shadow roots.
    shadow_selector: str = ""
    # Playwright locator checked unique on the page, e.g. getByRole("button", { name: "Save" }).
    locator: str = ""
    # Only the states that apply: checked, pressed, expanded, selected, current, disabled,
    # required, readonly, focused.
    state: dict[str, bool | str] = Field(default_factory=dict)
    type: str | None = None  # input type (e.g. "password", which has no role)
    # The visible element drawn in place of a hidden control (e.g. a switch's label).
    proxy: str | None = None
    # Inside iframes: their selectors from the top page ([] in the top document).
    frame: list[str] = Field(default_factory=list)

    @property
    def target(self) -> str:
        """What resolves to this element in our own selector syntax (CSS or a >>> path)."""
        return self.shadow_selector if self.frame else (self.selector or self.shadow_selector)


class HiddenElement(Model):
    """A control that is there but covered (e.g. by a modal): not labelled."""

    selector: str
    role: str = ""
    name: str = ""
    hidden_by: str  # selector of the element on top of it
    frame: list[str] = Field(default_factory=list)  # iframes it is in, from the top page


class DiscoverArgs(Model):
    """``discover``: find elements to label."""

    tab_id: int | None = None
    target: Literal["interactive", "all_visible", "custom"] = "interactive"
    selector: str | None = None  # with target=custom
    max: int = Field(50, ge=1, le=100)
    include_offscreen: bool = False


class DiscoverResult(Model):
    url: str
    title: str
    ready_state: str
    device_pixel_ratio: float
    viewport: Size
    scroll: Point
    elements: list[ElementInfo]  # reading order, at most `max`
    total_found: int
    headings: list[dict[str, Any]] = Field(default_factory=list)
    forms: int = 0
    interactive_count: int = 0
    hidden: list[HiddenElement] = Field(default_factory=list)  # covered controls, up to 20
    notes: list[str] = Field(default_factory=list)  # crowding hints
    # Iframes on the page: frame (selectors from the top), bounds, url, labelled (count).
    frames: list[dict[str, Any]] = Field(default_factory=list)
    # With text_rects: line boxes of the visible text (viewport CSS px), for badge placement.
    text_rects: list[Rect] = Field(default_factory=list)
