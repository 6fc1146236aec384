"""Type stub of the Rust extension ``shotbridge._core``. Use :mod:`shotbridge.image` instead."""

from typing import TypedDict

MAX_PIXELS: int
MAX_SIDE: int
MIN_MAX_BYTES: int
MAX_BADGES: int
MAX_TEXT_RECTS: int

class CoreOptions(TypedDict, total=False):
    """``shotbridge.image.ShrinkOptions.model_dump()``: a key left out keeps its default."""

    max_width: int  # 1280
    max_long_edge: int  # 1568
    quality: int  # 60
    min_quality: int  # 30
    max_bytes: int  # 500_000
    thumb_width: int  # 320
    thumb_max_bytes: int  # 30_000
    thumbnail: bool  # True

class CoreResult(TypedDict):
    jpeg: bytes
    thumbnail: bytes
    width: int
    height: int
    source_width: int
    source_height: int
    thumb_width: int
    thumb_height: int
    css_to_output_scale: float
    quality: int
    downgraded: bool
    scale_applied: float
    thumb_quality: int
    thumb_downgraded: bool
    badges_drawn: int
    boxes_offscreen: int
    text_covered: int
    dct_scale_denom: int
    timings_us: dict[str, int]

def shrink(
    data: bytes | str,
    *,
    options: CoreOptions | None = None,
    boxes: list[tuple[float, float, float, float, int]] = ...,
    masks: list[tuple[float, float, float, float]] = ...,
    device_pixel_ratio: float = 1.0,
    css_width: float | None = None,
    css_height: float | None = None,
    text: list[tuple[float, float, float, float]] = ...,
    avoid_text: bool = True,
    source_quality: int | None = None,
) -> CoreResult:
    """Decode, shrink, mask, label and encode; boxes are (x, y, w, h, badge number) in CSS px;
    text (visible page text, CSS px) is what badges keep off (avoid_text=False: only counted);
    source_quality: the browser's JPEG quality, to keep a JPEG with nothing to paint as it is."""

class Prepared:
    """A screenshot decoded for labelling, masks painted; ``finish`` takes it once."""

def prepare(
    data: bytes | str,
    *,
    options: CoreOptions | None = None,
    masks: list[tuple[float, float, float, float]] = ...,
    device_pixel_ratio: float = 1.0,
    css_width: float | None = None,
    css_height: float | None = None,
) -> Prepared:
    """Decode, mask and fit one screenshot for ``finish`` (``shrink`` in two halves)."""

def finish(
    prepared: Prepared,
    *,
    boxes: list[tuple[float, float, float, float, int]] = ...,
    text: list[tuple[float, float, float, float]] = ...,
    avoid_text: bool = True,
) -> CoreResult:
    """Draw the labels on a prepared screenshot and encode it; a second call raises."""

def turbo_floor(
    jpeg: bytes,
    *,
    max_width: int = 1280,
    max_long_edge: int = 1568,
    quality: int = 60,
    thumb_width: int = 320,
) -> int:
    """Benchmark floor: libjpeg-turbo's scaled decode plus output/thumbnail encode, in µs."""

def _panic_for_tests() -> None:
    """Panics inside the core; raises CoreInternalError."""

class CoreDiff(TypedDict, total=False):
    changed: int
    compared: int
    offset: tuple[int, int]
    overlap: tuple[int, int, int, int]
    width: int
    height: int
    regions: list[tuple[int, int, int, int, int]]
    image: bytes | None
    image_width: int
    image_height: int
    image_quality: int
    crops: int
    timings_us: dict[str, int]

def diff(
    before: bytes | str,
    after: bytes | str,
    *,
    before_scroll: tuple[float, float] = (0.0, 0.0),
    after_scroll: tuple[float, float] = (0.0, 0.0),
    before_scale: float = 1.0,
    after_scale: float = 1.0,
    threshold: float = 0.1,
    include_aa: bool = False,
    max_regions: int = 10,
    min_region_pixels: int = 1,
    image: bool = False,
    max_width: int = 1280,
    max_long_edge: int = 1568,
    quality: int = 60,
    min_quality: int = 30,
    max_bytes: int = 500_000,
    max_crops: int = 3,
) -> CoreDiff:
    """pixelmatch-style diff of two screenshots aligned by scroll (CSS px) and scale (px per CSS
    px); regions are (x0, y0, x1, y1, changed) in pixels of ``after``."""
