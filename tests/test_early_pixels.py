"""The host's side of ``early_pixels``: a partial reply routed to its asker, and the shrinking of
early pixels used only when the reply names the same attempt and the same masks."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from shotbridge.host.early_pixels import EarlyPixels
from shotbridge.host.extension_link import ExtensionLink
from shotbridge.wire.errors import CommandError
from shotbridge.wire.extension import CaptureResult

SIZE = {"width": 64, "height": 48}


def capture(data_url: str = "data:image/jpeg;base64,AAAA", attempt: int = 1, **extra: Any) -> dict:
    return {
        "data_url": data_url,
        "attempt": attempt,
        "method": "cdp",
        "url": "http://a/",
        "title": "A",
        "tab_id": 1,
        "device_pixel_ratio": 1,
        "viewport": SIZE,
        "scroll": {"x": 0, "y": 0},
        "origin": {"x": 0, "y": 0},
        "css_size": SIZE,
        "masks": [{"x": 1, "y": 2, "width": 3, "height": 4}],
        **extra,
    }


def test_a_partial_reply_reaches_its_asker_and_only_it() -> None:
    async def run() -> tuple[list[Any], dict[str, Any]]:
        sent: list[dict[str, Any]] = []

        async def send(frame: bytes) -> None:
            sent.append({"bytes": len(frame)})

        link = ExtensionLink(send)
        got: list[Any] = []
        task = asyncio.create_task(link.request("capture", {}, on_partial=got.append))
        await asyncio.sleep(0)
        link.feed({"id": "h2", "partial": {"stray": 1}})  # another request's: dropped
        link.feed({"id": "h1", "partial": "not an object"})  # malformed: dropped
        link.feed({"id": "h1", "partial": {"early": 1}})
        link.feed({"id": "h1", "ok": True, "result": {"final": 1}})
        return got, await task

    got, result = asyncio.run(run())
    assert got == [{"early": 1}] and result == {"final": 1}


def _early(shrunk: list[str]) -> EarlyPixels[str]:
    async def shrink(c: CaptureResult) -> str:
        shrunk.append(c.data_url)
        return f"shrunk {c.attempt}"

    return EarlyPixels(shrink)


def test_the_reply_takes_the_pixels_of_its_own_attempt() -> None:
    async def run() -> None:
        shrunk: list[str] = []
        early = _early(shrunk)
        early.on_partial(capture("data:image/jpeg;base64,ONE", attempt=1))
        early.on_partial(capture("data:image/jpeg;base64,TWO", attempt=2))  # a retry
        final = early.complete(CaptureResult.model_validate(capture("", attempt=2)))
        assert final.data_url.endswith("TWO")
        assert await early.result(final) == "shrunk 2"
        with pytest.raises(CommandError, match="never sent"):
            early.complete(CaptureResult.model_validate(capture("", attempt=3)))

    asyncio.run(run())


def test_a_mask_the_early_pixels_lacked_means_shrinking_again() -> None:
    # The probe after the pixels saw the secret somewhere else too: the early result, made with
    # the first probe's masks only, must not be used.
    async def run() -> None:
        early = _early([])
        early.on_partial(capture())
        moved = capture("", masks=[*capture()["masks"], {"x": 9, "y": 9, "width": 3, "height": 4}])
        final = early.complete(CaptureResult.model_validate(moved))
        assert await early.result(final) is None
        same = early.complete(CaptureResult.model_validate(capture("")))
        assert await early.result(same) == "shrunk 1"

    asyncio.run(run())


def test_without_early_pixels_the_reply_stands_alone() -> None:
    async def run() -> None:
        early = _early([])
        early.on_partial({"broken": True})  # malformed partial: ignored
        final = early.complete(CaptureResult.model_validate(capture()))
        assert await early.result(final) is None
        with pytest.raises(CommandError):
            early.complete(CaptureResult.model_validate(capture("")))

    asyncio.run(run())
