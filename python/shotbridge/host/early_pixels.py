"""Pixels the extension sends ahead of its capture reply (``early_pixels``), shrunk meanwhile.

The extension hands the pixels over as soon as Chrome gives them, then checks the page (the probe
after the pixels, which adds the places a moving secret took, and the document's identity) and
replies with its verdict and every mask. The host shrinks the early pixels meanwhile. That result
is used only when the reply names the same attempt and the same masks; otherwise the pixels are
shrunk again with the reply's masks. Nothing leaves the host before the reply: a refused capture
discards them.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar

from pydantic import ValidationError

from shotbridge.wire.errors import CommandError, ErrorCode
from shotbridge.wire.extension import CaptureResult

log = logging.getLogger(__name__)

T = TypeVar("T")


class EarlyPixels(Generic[T]):
    """One capture's partial reply and the shrinking started from it."""

    def __init__(self, shrink: Callable[[CaptureResult], Awaitable[T]]) -> None:
        self._shrink = shrink
        self._capture: CaptureResult | None = None
        self._job: asyncio.Task[T] | None = None

    def on_partial(self, data: dict[str, Any]) -> None:
        """The extension's partial reply: keep it and start shrinking (a later try replaces it)."""
        try:
            capture = CaptureResult.model_validate(data)
        except ValidationError as exc:
            log.warning("malformed early pixels from the extension: %s", exc)
            return
        if not capture.data_url or capture.tiles:
            return
        self._capture = capture
        self._job = asyncio.get_running_loop().create_task(self._shrink(capture))
        # Collected here when nobody asks for it (the capture was refused, or a retry replaced it).
        self._job.add_done_callback(lambda t: t.cancelled() or t.exception())

    def complete(self, capture: CaptureResult) -> CaptureResult:
        """The reply with its pixels: from the partial of the same attempt when it has none."""
        if capture.data_url:
            return capture
        early = self._capture
        if early is None or early.attempt != capture.attempt:
            raise CommandError(
                ErrorCode.CAPTURE_FAILED, "the extension's reply names pixels it never sent"
            )
        return capture.model_copy(update={"data_url": early.data_url})

    async def result(self, capture: CaptureResult) -> T | None:
        """The shrinking of the early pixels, if it used what the reply says (None: redo it)."""
        early, job = self._capture, self._job
        if early is None or job is None:
            return None
        same = early.attempt == capture.attempt and early.masks == capture.masks
        if not same or early.data_url != capture.data_url:
            return None
        try:
            return await job
        except Exception as exc:  # the real shrink says it again, with the reply's data
            log.debug("early shrink failed: %s", exc)
            return None
