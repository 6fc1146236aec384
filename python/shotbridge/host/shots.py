"""The host's screenshot registry, and the mapping from a screenshot's pixels back to the page.

Every image the host's ``screenshot`` command returns (each tile of a full page too) gets a
monotonic ``screenshot_id`` and its mapping metadata is kept here, so ``interact`` can turn "click
at (640, 212) on screenshot 7" or "click label 3" into CSS viewport pixels exactly, whatever the
image's downscale and the device pixel ratio were.

Mapping (see ``shotbridge.wire.geometry``): an image pixel ``(x, y)`` is the viewport-relative
CSS point ``(x / css_to_output_scale + origin.x, y / css_to_output_scale + origin.y)`` *as the page
was scrolled when the screenshot was taken* (``scroll``). If the page has scrolled since, the
extension shifts the point by the difference so it follows the content (it gets ``from_scroll``);
fixed/sticky elements do not move with the page, and the result says when a shift was applied.

Each screenshot also records the viewport (CSS width × height) and the device pixel ratio, which
together change with a resize, a zoom, or Chrome's "started debugging this browser" bar. A pixel
or label point is sent with that viewport (``expect_viewport``) and the extension refuses the
action (``stale_screenshot``) when the viewport differs at the moment of acting: a layout that
depends on the window's size moves, so a point cannot be mapped exactly.

Registries belong to one client session (``shotbridge.host.sessions``): a session only ever resolves
points and labels against its own screenshots, and automatic screenshots the model was not shown
(``hide``) are never its default "latest"; ids stay unique across the host (a shared counter).
"""

from __future__ import annotations

import itertools
import time
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from pydantic import Field

from shotbridge.wire.errors import CommandError, ErrorCode
from shotbridge.wire.geometry import Point, Rect, Size
from shotbridge.wire.model import Model

if TYPE_CHECKING:
    from shotbridge.host.screenshot import Owner

KEEP = 50


class ShotLabel(Model):
    """What ``interact`` needs of one numbered label."""

    label: int
    selector: str
    bounds: Rect  # CSS px, viewport-relative at the screenshot's scroll
    tag: str = ""
    name: str = ""
    # The ">>>" path when the element is inside a shadow root or an iframe.
    shadow_selector: str = ""
    frame: list[str] = Field(default_factory=list)  # iframe selectors from the top page

    @property
    def target(self) -> str:
        """What resolves to this element from the top page (CSS, or a >>> path through frames)."""
        return self.shadow_selector if self.frame else (self.selector or self.shadow_selector)


class Shot(Model):
    """Mapping metadata of one image a client was given."""

    id: int
    url: str
    tab_id: int | None = None
    width: int  # image px
    height: int
    css_to_output_scale: float  # image px per CSS px
    device_pixel_ratio: float
    origin: Point  # viewport-relative CSS px of the image's top-left
    css_size: Size
    scroll: Point  # the page's scroll position at capture time
    viewport: Size
    annotated: bool = False  # taken with labels (even if none were found)
    annotations: list[ShotLabel] = Field(default_factory=list)
    tile: int | None = None  # index within a tiled full page
    taken: float = Field(default_factory=time.time)
    shown: bool = True  # False: an automatic capture the model was not handed

    def viewport_key(self) -> dict[str, float]:
        """What the extension compares before acting at a point of this screenshot."""
        return {
            "width": self.viewport.width,
            "height": self.viewport.height,
            "dpr": self.device_pixel_ratio,
        }


class ShotRegistry:
    """The last ``keep`` screenshots by id; ids never repeat within a host's life."""

    def __init__(
        self, keep: int = KEEP, ids: Iterator[int] | None = None, session: Owner | None = None
    ) -> None:
        self.keep = keep
        # Sessions of one host share ``ids`` so a screenshot_id names one image host-wide.
        self._ids = ids if ids is not None else itertools.count(1)
        self._shots: OrderedDict[int, Shot] = OrderedDict()
        # The session these screenshots belong to: a command that holds only the registry
        # (interact's screenshot after acting, raw CDP's) takes its screenshot for that session.
        self.session = session

    def add(self, **fields: Any) -> Shot:
        shot = Shot.model_validate({**fields, "id": next(self._ids)})
        self._shots[shot.id] = shot
        while len(self._shots) > self.keep:
            self._shots.popitem(last=False)
        return shot

    def hide(self, shot_ids: Iterable[int]) -> None:
        """Mark automatic captures: reachable by id, never the default for x/y or labels."""
        for shot_id in shot_ids:
            shot = self._shots.get(shot_id)
            if shot is not None:
                shot.shown = False

    def get(self, shot_id: int) -> Shot | None:
        return self._shots.get(shot_id)

    @property
    def latest(self) -> Shot | None:
        """The newest screenshot this session's model was shown."""
        return next((s for s in reversed(self._shots.values()) if s.shown), None)

    @property
    def latest_annotated(self) -> Shot | None:
        return next((s for s in reversed(self._shots.values()) if s.shown and s.annotated), None)

    def __len__(self) -> int:
        return len(self._shots)

    # ---- lookups with the errors interact reports ----------------------------------------

    def for_point(self, shot_id: int | None) -> Shot:
        """The screenshot whose pixel space x/y are in: ``shot_id``, else the latest."""
        if shot_id is not None:
            return self._require(shot_id)
        shot = self.latest
        if shot is None:
            raise CommandError(
                ErrorCode.STALE_SCREENSHOT,
                "No screenshot has been taken yet, so x/y have no pixel space: take a screenshot "
                "first, or act by selector.",
            )
        return shot

    def for_label(self, shot_id: int | None) -> Shot:
        """The screenshot whose labels ``label`` numbers: ``shot_id``, else the latest annotated."""
        if shot_id is not None:
            shot = self._require(shot_id)
            if not shot.annotated:
                raise CommandError(
                    ErrorCode.BAD_REQUEST,
                    f"Screenshot {shot_id} has no labels; take an annotated screenshot.",
                )
            return shot
        shot = self.latest_annotated
        if shot is None:
            raise CommandError(
                ErrorCode.STALE_SCREENSHOT,
                "No annotated screenshot is kept, so there are no labels: take an annotated "
                "screenshot first, or act by selector.",
            )
        return shot

    def _require(self, shot_id: int) -> Shot:
        shot = self.get(shot_id)
        if shot is None:
            newest = self.latest
            raise CommandError(
                ErrorCode.STALE_SCREENSHOT,
                f"Screenshot {shot_id} is not one of this session's screenshots (it keeps its "
                f"last {self.keep}"
                + (f"; the newest is {newest.id}" if newest else "")
                + "): take a fresh screenshot.",
            )
        return shot


# ---- pure mapping ----------------------------------------------------------------------------


def image_to_viewport(shot: Shot, x: float, y: float) -> Point:
    """Image px of ``shot`` → viewport-relative CSS px at the screenshot's scroll position."""
    if not (0 <= x <= shot.width and 0 <= y <= shot.height):
        raise CommandError(
            ErrorCode.BAD_REQUEST,
            f"({x:g}, {y:g}) lies outside screenshot {shot.id}, which is "
            f"{shot.width}×{shot.height} px; x and y are pixels of that image.",
        )
    scale = shot.css_to_output_scale
    if not scale > 0:
        raise CommandError(ErrorCode.INTERNAL, f"screenshot {shot.id} has no usable scale")
    return Point(x=x / scale + shot.origin.x, y=y / scale + shot.origin.y)


def viewport_to_image(shot: Shot, point: Point) -> tuple[float, float]:
    """Inverse of :func:`image_to_viewport` (for tests and for reporting)."""
    scale = shot.css_to_output_scale
    return ((point.x - shot.origin.x) * scale, (point.y - shot.origin.y) * scale)


def label_target(shot: Shot, label: int) -> tuple[Point, ShotLabel]:
    """Centre of ``label``'s bounds (viewport CSS px at the screenshot's scroll) and the label."""
    for ann in shot.annotations:
        if ann.label == label:
            b = ann.bounds
            return Point(x=b.x + b.width / 2, y=b.y + b.height / 2), ann
    known = ", ".join(str(a.label) for a in shot.annotations[:12])
    more = "…" if len(shot.annotations) > 12 else ""
    raise CommandError(
        ErrorCode.BAD_REQUEST,
        f"Screenshot {shot.id} has no label {label}"
        + (f" (its labels: {known}{more})" if known else " (it has no labels)")
        + ".",
    )
