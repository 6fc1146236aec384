"""Stand-ins for the bus used by the MCP server's unit tests (no browser, no host process)."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Callable
from typing import Any

from PIL import Image
from shotbridge.wire.errors import CommandError
from shotbridge.wire.geometry import Rect, Size
from shotbridge.wire.screenshot import Annotation, PageFacts, ScreenshotResult

Handler = Callable[[dict[str, Any]], Any]


def jpeg(width: int = 64, height: int = 40, color: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (width, height), color).save(buf, "JPEG", quality=60)
    return buf.getvalue()


def annotation(label: int, **over: Any) -> dict[str, Any]:
    base = Annotation(
        label=label,
        selector=f"#b{label}",
        tag="button",
        role="button",
        name=f"Button {label}",
        text=f"Button {label}",
        bounds=Rect(x=10.0 * label, y=20.0, width=80.0, height=30.0),
        interactionHint="clickable",
        in_viewport=True,
    )
    return {**base.model_dump(), **over}


def screenshot_result(
    args: dict[str, Any], *, width: int = 1280, height: int = 720
) -> dict[str, Any]:
    """What the host's ``screenshot`` command returns, as the bus carries it (every key of
    :class:`shotbridge.wire.screenshot.ScreenshotResult`)."""
    data = jpeg()
    annotations: list[dict[str, Any]] = []
    if args.get("annotate"):
        annotations = [annotation(i) for i in range(1, min(3, args.get("max_annotations", 50)) + 1)]
    result = ScreenshotResult(
        jpeg=data,
        thumbnail=data,
        width=width,
        height=height,
        bytes=84_210,
        quality=60,
        css_to_output_scale=1.0,
        method="cdp",
        url="http://127.0.0.1:8000/page.html",
        title="Fixture page",
        tab_id=7,
        device_pixel_ratio=1.0,
        viewport=Size(width=1280.0, height=720.0),
        masked=1 + len(args.get("mask_selectors") or []),
        annotations=[Annotation.model_validate(a) for a in annotations],
        total_found=len(annotations),
        # The host's labels come with the page's facts, readyState among them.
        page=PageFacts(
            headings=[{"level": 1, "text": "Hello"}],
            forms=2,
            interactive_count=5,
            ready_state="complete",
        )
        if args.get("annotate")
        else None,
    )
    return result.model_dump(mode="python")


PAGE_INFO = {
    "url": "http://127.0.0.1:8000/page.html",
    "title": "Fixture page",
    "viewport": {"width": 1280, "height": 720},
    "ready_state": "complete",
    "headings": [{"level": 1, "text": "Hello"}],
    "forms": 2,
    "interactive_count": 5,
    "device_pixel_ratio": 1.0,
    "scroll": {"x": 0, "y": 0},
}

TABS = {
    "tabs": [
        {
            "id": 7,
            "window_id": 1,
            "url": "http://a/",
            "title": "A",
            "active": True,
            "tracked": True,
        },
        {"id": 8, "window_id": 1, "url": "http://b/", "title": "B", "active": False},
    ]
}

ERRORS = {
    "errors": [
        {
            "kind": "console",
            "message": "boom",
            "source": "http://a/app.js",
            "line": 3,
            "column": 9,
            "time": 1.0,
        }
    ]
}


class FakeLink:
    """Implements the server's ``Link`` protocol; records every request it gets."""

    def __init__(self, **handlers: Handler | Exception | dict[str, Any]) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.closed = False
        self.handlers: dict[str, Handler | Exception | dict[str, Any]] = {
            "page_info": PAGE_INFO,
            "list_tabs": TABS,
            "errors": ERRORS,
            "track": lambda a: {"tab": {"id": a["tab_id"], "title": "B", "url": "http://b/"}},
            "navigate": lambda a: {
                "tab": {"id": 7, "url": a.get("url", "http://a/"), "title": "T", "tracked": True}
            },
            "screenshot": screenshot_result,
            **handlers,
        }

    async def request(
        self, cmd: str, args: dict[str, Any] | None = None, timeout: float = 15.0
    ) -> dict[str, Any]:
        args = dict(args or {})
        self.calls.append((cmd, args))
        await asyncio.sleep(0)
        handler = self.handlers.get(cmd)
        if handler is None:
            raise CommandError("bad_request", f"unknown command {cmd!r}")
        if isinstance(handler, Exception):
            raise handler
        if callable(handler):
            result = handler(args)
            if isinstance(result, Exception):
                raise result
            return result
        return handler

    async def close(self) -> None:
        self.closed = True

    def commands(self) -> list[str]:
        return [c for c, _ in self.calls]


class FakeClock:
    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds
