"""What changed between two screenshots: the typed front of the Rust core's visual diff.

::

    result = compare(before_png, after_jpeg, after_geometry=Geometry(scroll_y=240))
    result.changed_fraction   # of the compared pixels
    result.regions            # at most 10, largest first, in CSS px and image px
    compare(..., image=True).image   # the new screenshot, regions outlined and numbered, plus
                                     # before/after crops of the largest; a budgeted JPEG

Per pixel it is pixelmatch's test (mapbox/pixelmatch 7.2, ported to Rust): the squared YIQ
colour distance against ``35215 × threshold²`` (threshold 0.1 by default, as pixelmatch), and a
pixel over it is not counted when it looks like anti-aliasing in either image. Before that, the two
images are aligned in page coordinates from their scroll offset and scale, so a scroll is not a
change; only the part both images show is compared (``compared_pixels``). Changed pixels are
grouped on an 8 px grid into at most ``max_regions`` boxes.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from shotbridge import _core
from shotbridge.image import _as_data
from shotbridge.wire import budgets
from shotbridge.wire.diff import Region
from shotbridge.wire.errors import ImageError, InvalidInputError

__all__ = ["DiffOptions", "DiffResult", "Geometry", "compare"]


class Geometry(BaseModel):
    """Where an image sits on the page: the scroll offset (CSS px) and image px per CSS px.

    ``scroll_*`` is the page position of the image's top-left corner (scroll plus, for an element
    capture, the element's viewport offset).
    """

    model_config = ConfigDict(extra="forbid")

    scroll_x: float = 0.0
    scroll_y: float = 0.0
    scale: float = Field(1.0, gt=0, le=16)


class DiffOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    threshold: float = Field(0.1, ge=0, le=1)
    include_aa: bool = False  # count anti-aliased pixels too
    max_regions: int = Field(10, ge=1, le=100)
    min_region_pixels: int = Field(1, ge=1)  # smaller regions are dropped as noise
    # The outlined image (``compare(image=True)``): caps and budget as any screenshot.
    max_width: budgets.Edge = budgets.MAX_WIDTH
    max_long_edge: budgets.Edge = budgets.MAX_LONG_EDGE
    quality: budgets.Quality = budgets.QUALITY
    max_bytes: budgets.ByteBudget = budgets.MAX_BYTES
    max_crops: int = Field(3, ge=0, le=10)  # before/after crops of the largest regions


class DiffResult(BaseModel):
    changed_pixels: int
    compared_pixels: int
    changed_fraction: float  # changed / compared (0 when nothing overlaps)
    regions: list[Region]
    # After px → before px shift from the scroll difference (what was aligned away).
    offset_px: tuple[int, int]
    width: int  # the after image
    height: int
    image: bytes | None = Field(None, exclude=True, repr=False)
    image_width: int | None = None
    image_height: int | None = None
    crops: int = 0
    timings_us: dict[str, int] = Field(default_factory=dict)

    @property
    def equal(self) -> bool:
        """Equal within the tolerance: no changed pixel counted."""
        return self.changed_pixels == 0

    @property
    def covers_all(self) -> bool:
        """Both images show the same area (no scroll, same size): every pixel was compared."""
        return self.compared_pixels == self.width * self.height


def _regions(raw: list[tuple[int, int, int, int, int]], scale: float) -> list[Region]:
    """The core's changed boxes (after-image px) as regions in CSS px, largest first."""
    return [
        Region(
            number=i,
            x=x0 / scale,
            y=y0 / scale,
            width=(x1 - x0) / scale,
            height=(y1 - y0) / scale,
            px=(x0, y0, x1, y1),
            changed_pixels=n,
        )
        for i, (x0, y0, x1, y1, n) in enumerate(raw, start=1)
    ]


def _result(raw: dict[str, Any], scale: float) -> DiffResult:
    compared = raw["compared"]
    return DiffResult(
        changed_pixels=raw["changed"],
        compared_pixels=compared,
        changed_fraction=raw["changed"] / compared if compared else 0.0,
        regions=_regions(raw["regions"], scale),
        offset_px=raw["offset"],
        width=raw["width"],
        height=raw["height"],
        image=raw.get("image"),
        image_width=raw.get("image_width"),
        image_height=raw.get("image_height"),
        crops=raw.get("crops", 0),
        timings_us=raw["timings_us"],
    )


def compare(
    before: bytes | bytearray | memoryview | str,
    after: bytes | bytearray | memoryview | str,
    *,
    before_geometry: Geometry | None = None,
    after_geometry: Geometry | None = None,
    options: DiffOptions | None = None,
    image: bool = False,
) -> DiffResult:
    """Compare two PNG/JPEG screenshots (bytes, a data: URL or base64) of one page."""
    bg = before_geometry or Geometry()
    ag = after_geometry or Geometry()
    opts = options or DiffOptions()
    try:
        raw = _core.diff(
            _as_data(before),
            _as_data(after),
            before_scroll=(bg.scroll_x, bg.scroll_y),
            after_scroll=(ag.scroll_x, ag.scroll_y),
            before_scale=bg.scale,
            after_scale=ag.scale,
            image=image,
            **opts.model_dump(),
        )
    except ImageError:
        raise
    except (ValueError, TypeError, OverflowError, UnicodeError) as exc:
        raise InvalidInputError(f"the image core refused an argument: {exc}") from exc
    return _result(raw, ag.scale)
