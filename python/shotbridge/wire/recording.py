"""The recorder's bus commands: settings, arguments and results.

The host's recorder (``shotbridge.host.recording``) serves ``timeline``, ``screenshots``,
``screenshot_get`` and ``record_config`` with these models; the MCP server and the generators
validate what comes back into them once and read attributes. Field names are the wire keys.
"""

from __future__ import annotations

import time
from typing import Any, Literal

from pydantic import (
    Field,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    field_serializer,
)

from shotbridge.wire.model import Model
from shotbridge.wire.timeline import TimelineEntry, Trigger, TriggerNote

ImagesWanted = Literal["none", "thumbnail", "full"]
IMAGES_WANTED: tuple[ImagesWanted, ...] = ("none", "thumbnail", "full")
BODY_KEYS = ("request_body", "response_body")


# ---- settings (record_config) ------------------------------------------------------------------


class AutoScreenshot(Model):
    """Which events make the host take a screenshot on its own."""

    on_navigation: bool = False
    on_error: bool = True
    on_action: bool = False


class RecordConfig(Model):
    """The recorder's settings: ``record_config``'s result, and ``config`` in ``timeline``."""

    auto_screenshot: AutoScreenshot = Field(default_factory=AutoScreenshot)
    network: bool = False
    mask_selectors: list[str] = Field(default_factory=list)
    min_interval_s: float = Field(5.0, ge=0, le=3600)
    observe: bool = True  # note visible texts for mask_dynamic


class RecordConfigArgs(Model):
    """``record_config``: every field optional; absent ones keep their value.

    ``auto_screenshot`` is a plain mapping so the host can name the unknown fields it refuses.
    """

    mask_selectors: list[str] | None = None
    auto_screenshot: dict[str, bool] | None = None
    min_interval_s: float | None = Field(None, ge=0, le=3600)
    network: bool | None = None
    observe: bool | None = None


# ---- screenshots ---------------------------------------------------------------------------------


class ShotMeta(Model):
    """What the host remembers of one screenshot (its pixels may be evicted; these stay)."""

    id: int
    time: float = Field(default_factory=time.time)
    url: str = ""
    title: str = ""
    trigger: Trigger = "explicit"
    action_id: str | None = None
    triggers: list[TriggerNote] = Field(default_factory=list)  # automatic: the merged triggers
    bytes: int = 0  # the JPEG's size
    width: int = 0
    height: int = 0
    thumb_bytes: int = 0
    kept: bool = True  # False once evicted: the pixels are gone, the facts stay
    file: str | None = None  # where SHOTBRIDGE_SCREENSHOT_DIR got a copy


class ScreenshotsArgs(Model):
    """``screenshots``: ``images`` adds the kept ones' bytes; ``ids`` lists only those."""

    images: ImagesWanted = "none"
    ids: list[int] | None = None


class ShotItem(ShotMeta):
    """One screenshot of ``screenshots``: ``jpeg`` only when images were asked for and kept."""

    # Absent rather than null when there are no bytes, as the key always was.
    jpeg: bytes | None = Field(None, exclude_if=lambda jpeg: jpeg is None)


class ScreenshotsResult(Model):
    session: str = ""
    screenshots: list[ShotItem] = Field(default_factory=list)
    held_bytes: int = 0

    def images(self) -> dict[int, bytes]:
        """The bytes that came back, by screenshot id."""
        return {s.id: s.jpeg for s in self.screenshots if s.jpeg}


class ScreenshotGetArgs(Model):
    """``screenshot_get``: one buffered screenshot (``thumbnail``: its 320 px thumbnail)."""

    id: int
    thumbnail: bool = False


class ScreenshotGetResult(ShotMeta):
    jpeg: bytes


# ---- timeline ----------------------------------------------------------------------------------


class TimelineArgs(Model):
    """``timeline``: entries after ``since`` (a seq), of ``kinds``, with request bodies or not."""

    since: int | None = None
    kinds: list[str] | None = None
    bodies: bool = True


class TimelineResult(Model):
    """``timeline``: the session's entries, every screenshot's facts and the settings.

    Also what the generators read (``shotbridge.generate.steps.Session.from_export``).
    """

    session: str = ""
    started: float = 0.0
    entries: list[TimelineEntry] = Field(default_factory=list)
    screenshots: list[ShotMeta] = Field(default_factory=list)
    config: RecordConfig = Field(default_factory=RecordConfig)
    # Events evicted for room, per budget (an entry's repeats included).
    dropped: dict[str, int] = Field(default_factory=dict)
    _bodies: bool = PrivateAttr(True)

    def without_bodies(self) -> TimelineResult:
        """Network entries go out without their request and response bodies (keys left out)."""
        self._bodies = False
        return self

    @field_serializer("entries", mode="wrap")
    def _entries(
        self, entries: list[TimelineEntry], handler: SerializerFunctionWrapHandler
    ) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = handler(entries)
        if not self._bodies:
            for entry, dumped in zip(entries, out, strict=True):
                if entry.type == "network":
                    for key in BODY_KEYS:
                        dumped.pop(key, None)
        return out
