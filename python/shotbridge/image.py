"""Shrink, mask and label screenshots for vision models: the typed front of the Rust core.

One call does the whole hot path, in Rust with the GIL released::

    result = shrink(png_bytes, boxes=[Box(x=10, y=20, width=80, height=24)], device_pixel_ratio=2)
    result.jpeg        # at most options.max_bytes (default 500 000)
    result.thumbnail   # min(320, result.width) px wide, at most options.thumb_max_bytes

Geometry: boxes and masks are CSS px relative to the top-left of the area the image covers.
They are mapped to image px by ``image_px / css_size`` when ``css_size`` is given (robust), else by
``device_pixel_ratio``, then to output px by the resize factor. ``result.css_to_output_scale`` is
output px per CSS px, for mapping a model's click coordinates back.

Labels: a badge shows ``box.label``, or the box's 1-based index when the label is None. Only the
first ``MAX_BADGES`` (500) boxes are considered; later ones are ignored. Boxes wholly outside
the image get no badge and are counted in ``boxes_offscreen``, so for every call
``badges_drawn + boxes_offscreen == min(len(boxes), MAX_BADGES)``. ``text`` (rects of the page's
visible text, same coordinates, the first ``MAX_TEXT_RECTS``) steers each badge to the spot near
its box that covers the least text; ``text_covered`` says how many of those rects a badge covers.

Masks (password fields) are painted opaque black before resampling, again after it, and before
any label or encoding, so secret pixels never reach the output. A JPEG kept as it came (see
``source_quality``) is not decoded: every 8x8 block a mask touches becomes flat black in its DCT
coefficients, and the thumbnail is made from the masked bytes.

Errors: every refusal is an :class:`shotbridge.wire.errors.ImageError` subclass (empty input, bad
base64, unknown format, corrupt/truncated data, too large, bad input, internal); invalid options,
boxes, masks or geometry raise pydantic's ``ValidationError`` (a ``ValueError``). Nothing else
escapes: no OverflowError, IndexError or UnicodeEncodeError, whatever the arguments.

Cost: the pixel cap (``MAX_PIXELS``, 100 MP, and ``MAX_SIDE``) is fixed in the core and checked
from the image header before decoding; no option raises it, so the worst decode is one image at
the cap.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, model_validator

from shotbridge import _core
from shotbridge.wire import budgets
from shotbridge.wire.errors import Base64Error, ImageError, InvalidInputError
from shotbridge.wire.geometry import Rect, Size

__all__ = [
    "MAX_BADGES",
    "MAX_MAX_BYTES",
    "MAX_PIXELS",
    "MAX_SIDE",
    "MAX_TEXT_RECTS",
    "MIN_MAX_BYTES",
    "Box",
    "ShrinkOptions",
    "ShrinkResult",
    "finish",
    "prepare",
    "shrink",
    "thumbnail_of",
]

MAX_PIXELS: int = _core.MAX_PIXELS
"""Images with more pixels than this are refused from their header (decompression bombs)."""
MAX_SIDE: int = _core.MAX_SIDE
"""Images with a side longer than this are refused from their header."""
MIN_MAX_BYTES: int = _core.MIN_MAX_BYTES
"""Smallest byte budget accepted for the image or the thumbnail."""
MAX_BADGES: int = _core.MAX_BADGES
"""At most this many boxes are labelled per image."""
MAX_TEXT_RECTS: int = _core.MAX_TEXT_RECTS
"""At most this many text rects steer badge placement; later ones are ignored."""
MAX_MAX_BYTES: int = budgets.MAX_MAX_BYTES
"""Largest byte budget accepted (1 GiB): anything above means "no limit" in practice."""

_FINITE = ConfigDict(allow_inf_nan=False, frozen=True)
T = TypeVar("T")


class ShrinkOptions(BaseModel):
    """How small the output must be. Defaults suit the Anthropic API and MCP clients."""

    model_config = ConfigDict(allow_inf_nan=False, frozen=True, extra="forbid")

    # The core takes any size up to its own caps; the bus and the CLI bound them tighter.
    max_width: int = Field(
        budgets.MAX_WIDTH, ge=1, le=MAX_SIDE, description="Output width cap, px."
    )
    max_long_edge: int = Field(
        budgets.MAX_LONG_EDGE,
        ge=1,
        le=MAX_SIDE,
        description="Cap on the longer side (clients downscale above it).",
    )
    quality: int = Field(budgets.QUALITY, ge=1, le=100, description="JPEG quality tried first.")
    min_quality: int = Field(
        budgets.MIN_QUALITY, ge=1, le=100, description="Lowest quality before downscaling."
    )
    max_bytes: int = Field(
        budgets.MAX_BYTES,
        ge=MIN_MAX_BYTES,
        le=MAX_MAX_BYTES,
        description="Hard cap on the JPEG size.",
    )
    thumb_width: int = Field(
        budgets.THUMB_WIDTH, ge=1, le=MAX_SIDE, description="Thumbnail width, px."
    )
    thumb_max_bytes: int = Field(
        budgets.THUMB_MAX_BYTES,
        ge=MIN_MAX_BYTES,
        le=MAX_MAX_BYTES,
        description="Hard cap on the thumbnail size.",
    )
    thumbnail: bool = Field(
        True,
        description="Make the thumbnail of an image the core re-encodes (False: `thumbnail` is "
        "empty and 0x0, for a caller that makes one later with `thumbnail_of`; an input kept "
        "as it came still gets one).",
    )

    @model_validator(mode="before")
    @classmethod
    def _default_floor_follows_quality(cls, data: Any) -> Any:
        # A low `quality` with the default floor means "no lower than that quality".
        if isinstance(data, dict) and "min_quality" not in data and "quality" in data:
            quality = data["quality"]
            if isinstance(quality, int) and quality < budgets.MIN_QUALITY:
                return {**data, "min_quality": quality}
        return data

    @model_validator(mode="after")
    def _min_quality_not_above_quality(self) -> ShrinkOptions:
        if self.min_quality > self.quality:
            raise ValueError("min_quality must not exceed quality")
        return self


_QUALITY: TypeAdapter[int | None] = TypeAdapter(Annotated[int, Field(ge=1, le=100)] | None)


class Box(Rect):
    """An element to label: CSS px relative to the image's top-left, plus an optional number."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True, allow_inf_nan=False)

    label: int | None = Field(None, ge=0, le=99_999)


class ShrinkResult(BaseModel):
    """What :func:`shrink` produced. Sizes are px; timings are microseconds per stage."""

    model_config = ConfigDict(frozen=True)

    jpeg: bytes
    thumbnail: bytes
    width: int
    height: int
    source_width: int
    source_height: int
    thumb_width: int
    thumb_height: int
    css_to_output_scale: float = Field(description="Output px per CSS px (horizontal).")
    quality: int = Field(description="JPEG quality of `jpeg`.")
    downgraded: bool = Field(description="The budget forced a lower quality or a smaller size.")
    scale_applied: float = Field(description="Width shrink forced by the budget (1.0 = none).")
    thumb_quality: int
    thumb_downgraded: bool
    badges_drawn: int
    boxes_offscreen: int = Field(description="Boxes (of the first 100) wholly outside the image.")
    text_covered: int = Field(0, description="Text rects (of those given) a badge covers.")
    dct_scale_denom: int = Field(description="JPEG input decoded at 1/N scale (1 for PNG).")
    timings_us: dict[str, int] = Field(
        description="decode, resize, draw, encode, thumbnail and total, in microseconds."
    )


def _as_box(item: Box | Rect | Mapping[str, Any]) -> Box:
    if isinstance(item, Box):
        return item
    if isinstance(item, Rect):
        return Box(x=item.x, y=item.y, width=item.width, height=item.height)
    return Box.model_validate(item)


class _Mask(Rect):
    # A mask that cannot be placed must fail loudly: skipping it would leak the secret.
    model_config = ConfigDict(extra="ignore", populate_by_name=True, allow_inf_nan=False)


def _as_rect(item: Rect | Mapping[str, Any]) -> Rect:
    if isinstance(item, Rect):
        item = item.model_dump()
    return _Mask.model_validate(item)


class _Geometry(BaseModel):
    model_config = _FINITE

    device_pixel_ratio: float = Field(gt=0, le=16)
    css_size: tuple[float, float] | None = None

    @model_validator(mode="after")
    def _positive_css_size(self) -> _Geometry:
        if self.css_size is not None and min(self.css_size) <= 0:
            raise ValueError("css_size must be positive")
        return self


_ITEMS = TypeAdapter(list[Any])  # any iterable in, a list out; ValidationError otherwise


def _text_rects(items: Iterable[Rect | Mapping[str, Any]]) -> list[tuple[float, ...]]:
    """Text rects as the core takes them. They only steer labels: a malformed one is dropped."""
    out: list[tuple[float, ...]] = []
    for item in _ITEMS.validate_python(items):
        if isinstance(item, Rect):  # the host's, hundreds per capture: read, not dumped
            t: tuple[float, ...] = (item.x, item.y, item.width, item.height)
        else:
            try:
                t = tuple(float(item[k]) for k in ("x", "y", "width", "height"))
            except (KeyError, TypeError, ValueError):
                continue
        if all(math.isfinite(v) for v in t) and t[2] > 0 and t[3] > 0:
            out.append(t)
        if len(out) >= MAX_TEXT_RECTS:
            break
    return out


def _as_data(data: Any) -> bytes | str:
    if isinstance(data, bytearray | memoryview):
        return bytes(data)  # an immutable copy: the core reads it without the GIL
    if isinstance(data, str):
        if not data.isascii():  # base64 and data: URLs are ASCII; this also catches surrogates
            raise Base64Error("image text must be base64 or a data: URL (ASCII only)")
        return data
    if isinstance(data, bytes):
        return data
    raise InvalidInputError(f"image data must be bytes or str, not {type(data).__name__}")


def _drawn(
    boxes: Iterable[Box | Rect | Mapping[str, Any]],
    masks: Iterable[Rect | Mapping[str, Any]],
) -> dict[str, list[tuple[Any, ...]]]:
    """Boxes (numbered from 1 when unlabelled) and masks as the core takes them."""
    box_list = [_as_box(b) for b in _ITEMS.validate_python(boxes)]
    mask_list = [_as_rect(m) for m in _ITEMS.validate_python(masks)]
    return {
        "boxes": [
            (b.x, b.y, b.width, b.height, b.label if b.label is not None else i)
            for i, b in enumerate(box_list, start=1)
        ],
        "masks": [(m.x, m.y, m.width, m.height) for m in mask_list],
    }


def shrink(
    data: bytes | bytearray | memoryview | str,
    options: ShrinkOptions | None = None,
    *,
    boxes: Iterable[Box | Rect | Mapping[str, Any]] = (),
    masks: Iterable[Rect | Mapping[str, Any]] = (),
    device_pixel_ratio: float = 1.0,
    css_size: Size | tuple[float, float] | None = None,
    text: Iterable[Rect | Mapping[str, Any]] = (),
    avoid_text: bool = True,
    source_quality: int | None = None,
) -> ShrinkResult:
    """Decode, shrink, mask, label and re-encode one screenshot.

    Args:
        data: PNG or JPEG bytes, a ``data:image/...;base64,`` URL, or bare base64 text.
        options: size, quality and byte budgets (defaults: :class:`ShrinkOptions`).
        boxes: elements to outline and number, CSS px relative to the image's top-left.
        masks: rectangles to black out (password fields), same coordinates.
        device_pixel_ratio: image px per CSS px, used when ``css_size`` is not given.
        css_size: the CSS size the image covers (``wire.extension.CaptureResult.css_size``).
        text: rects of the page's visible text, same coordinates: badges cover as little as
            they can (``DiscoverResult.text_rects``).
        avoid_text: False places badges as if there were no text and only counts what they
            cover (``text_covered``), to compare.
        source_quality: the JPEG quality the browser was asked for. A JPEG already at the output
            size, at most ``options.quality``, within the budget and with no boxes is kept as
            it came: masks are blacked out in its DCT coefficients, only the thumbnail is made.

    Raises:
        shotbridge.wire.errors.ImageError: the image was refused (see the module docstring).
        pydantic.ValidationError: invalid options, boxes or geometry.
    """
    if not isinstance(options, ShrinkOptions):
        options = ShrinkOptions.model_validate({} if options is None else options)
    drawn = _drawn(boxes, masks)
    if isinstance(css_size, Size):
        css_size = (css_size.width, css_size.height)
    geometry = _Geometry(device_pixel_ratio=device_pixel_ratio, css_size=css_size)
    css_width, css_height = geometry.css_size or (None, None)
    raw = _core_call(
        _core.shrink,
        _as_data(data),
        options=options.model_dump(),
        **drawn,
        device_pixel_ratio=geometry.device_pixel_ratio,
        css_width=css_width,
        css_height=css_height,
        text=_text_rects(text),
        avoid_text=bool(avoid_text),
        source_quality=_QUALITY.validate_python(source_quality),
    )
    return ShrinkResult.model_construct(**raw)


def prepare(
    data: bytes | bytearray | memoryview | str,
    options: ShrinkOptions | None = None,
    *,
    masks: Iterable[Rect | Mapping[str, Any]] = (),
    device_pixel_ratio: float = 1.0,
    css_size: Size | tuple[float, float] | None = None,
) -> _core.Prepared:
    """The first half of :func:`shrink` for an image to label: decode, mask, fit to size.

    :func:`finish` then draws the labels and encodes, as ``shrink`` would with the same
    arguments (the same bytes). The host decodes a capture this way while its labels are still
    on their way from the page. Arguments and errors as for :func:`shrink`.
    """
    if not isinstance(options, ShrinkOptions):
        options = ShrinkOptions.model_validate({} if options is None else options)
    drawn = _drawn((), masks)
    if isinstance(css_size, Size):
        css_size = (css_size.width, css_size.height)
    geometry = _Geometry(device_pixel_ratio=device_pixel_ratio, css_size=css_size)
    css_width, css_height = geometry.css_size or (None, None)
    return _core_call(
        _core.prepare,
        _as_data(data),
        options=options.model_dump(),
        masks=drawn["masks"],
        device_pixel_ratio=geometry.device_pixel_ratio,
        css_width=css_width,
        css_height=css_height,
    )


def finish(
    prepared: _core.Prepared,
    *,
    boxes: Iterable[Box | Rect | Mapping[str, Any]] = (),
    text: Iterable[Rect | Mapping[str, Any]] = (),
    avoid_text: bool = True,
) -> ShrinkResult:
    """Label and encode an image from :func:`prepare` (once: a second call raises
    ``InvalidInputError``). Arguments and result as for :func:`shrink`."""
    raw = _core_call(
        _core.finish,
        prepared,
        boxes=_drawn(boxes, ())["boxes"],
        text=_text_rects(text),
        avoid_text=bool(avoid_text),
    )
    return ShrinkResult.model_construct(**raw)


def thumbnail_of(image: bytes, options: ShrinkOptions | None = None) -> bytes:
    """The thumbnail of ``image`` (an output of :func:`shrink` or :func:`finish` that was asked
    for none, ``ShrinkOptions.thumbnail=False``), as ``options`` size it: made when someone
    first wants it instead of beside every image. Errors as for :func:`shrink`."""
    o = options or ShrinkOptions()
    thumb = ShrinkOptions(
        max_width=o.thumb_width,
        max_long_edge=MAX_SIDE,  # a thumbnail is only as wide as thumb_width, however tall
        quality=o.quality,
        min_quality=o.min_quality,
        max_bytes=o.thumb_max_bytes,
        thumbnail=False,
    )
    return shrink(image, thumb).jpeg


def _core_call(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Call the core; every refusal comes out as an ImageError."""
    try:
        return fn(*args, **kwargs)
    except ImageError:
        raise
    except (ValueError, TypeError, OverflowError, UnicodeError) as exc:
        # Argument conversion in the binding (a value past what the core's integer types hold);
        # the validation above should leave nothing here, but a caller must still get ImageError.
        raise InvalidInputError(f"the image core refused an argument: {exc}") from exc
