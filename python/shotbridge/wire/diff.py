"""What changed between two screenshots, as the ``screenshot`` command asks for and reports it."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from shotbridge.wire.model import Model


def absent(value: Any) -> bool:
    """Fields that leave the wire when None: clients have always seen them absent, not null."""
    return value is None


class DiffArgs(Model):
    """The ``screenshot`` command's diff arguments (all optional).

    ``compare_to``: "previous" (the latest image the session was shown) or a screenshot id.
    ``unchanged_check``: when the new pixels match the latest image within the tolerance, mark the
    result unchanged and keep it out of the session's defaults (the client sends text instead of
    the same pixels again). ``remember``: keep this capture for later diffs even when not
    comparing now.
    """

    compare_to: Literal["previous"] | int | None = None
    diff_image: bool = False  # return the outlined diff picture
    unchanged_check: bool = False
    threshold: float = Field(0.1, ge=0, le=1)
    remember: bool = False

    @property
    def wanted(self) -> bool:
        return (
            self.compare_to is not None or self.unchanged_check or self.diff_image or self.remember
        )

    @property
    def compares(self) -> bool:
        """Whether this capture is compared now (not only remembered)."""
        return self.compare_to is not None or self.unchanged_check or self.diff_image


class Region(Model):
    """One changed area (numbered as in the image: 1 is the largest)."""

    number: int
    # CSS px relative to the after image's top-left.
    x: float
    y: float
    width: float
    height: float
    # Pixels of the after image: [x0, x1) × [y0, y1).
    px: tuple[int, int, int, int]
    changed_pixels: int


class ChangedElement(Model):
    selector: str
    role: str = ""
    name: str = ""
    tag: str = ""
    change: str  # "text", "moved", "added", "removed", "appearance"
    text_before: str | None = None
    text_after: str | None = None


class ChangedRegion(Region):
    elements: list[ChangedElement] = Field(default_factory=list)


class DiffReport(Model):
    """A screenshot compared with an earlier one: regions with the elements behind them."""

    compared_to: int
    changed_pixels: int
    compared_pixels: int
    changed_fraction: float
    regions: list[ChangedRegion]
    scrolled_css: tuple[float, float] = (0.0, 0.0)
    # Same view (scroll, crop, size) and no pixel counted: the client may send text only.
    unchanged: bool = False
    summary: str = ""
    image_width: int | None = None
    image_height: int | None = None
    # The outlined diff picture (a JPEG), when asked for and something changed.
    image: bytes | None = Field(None, repr=False, exclude_if=absent)
