"""What moves on its own: sample the live page and keep the smallest elements that changed.

Before a visual spec is written, the page is looked at several times over a second or two with
nobody acting (``discover all_visible``: selector → visible text). An element whose text differs
between frames — a clock, a counter, a caret's field, a ticker — is masked; when a container and
the element inside it both changed, only the inner one is (the container changed *because* of
it). Video and playing media move without changing text: they are found by tag.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from shotbridge.wire.extension import DiscoverArgs

FRAMES = 5
INTERVAL_S = 0.35  # five frames ≈ 1.4 s: a 1 Hz clock ticks at least once
MAX_ELEMENTS = 100  # the most discover returns
MEDIA_TAGS = ("video",)

Request = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]


def texts_of(found: dict[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for el in found.get("elements") or []:
        selector, text = el.get("selector"), el.get("text") or el.get("name") or ""
        if selector and text:
            out[str(selector)] = str(text)
    return out


def smallest(changed: set[str], texts: dict[str, str]) -> set[str]:
    """``changed`` without the elements that only changed because one inside them did."""

    def inside(inner: str, outer: str) -> bool:
        if inner == outer:
            return False
        a, b = texts.get(inner, ""), texts.get(outer, "")
        nested = inner.startswith(outer + " ") or inner.startswith(outer + ">")
        return nested or (bool(a) and a in b and len(a) < len(b))

    return {s for s in changed if not any(inside(o, s) for o in changed)}


def moving(frames: list[dict[str, str]]) -> set[str]:
    """Selectors whose text differed between any two frames, smallest first."""
    if len(frames) < 2:
        return set()
    changed = {
        sel for sel in set().union(*frames) if len({f.get(sel) for f in frames if sel in f}) > 1
    }
    return smallest(changed, frames[-1])


async def sample(
    request: Request, frames: int = FRAMES, interval: float = INTERVAL_S
) -> dict[str, set[str]]:
    """{url: selectors that moved} from ``frames`` looks at the live page (through the host);
    an empty set when the page was watched and nothing moved, ``{}`` when it was not watched."""
    seen: list[dict[str, str]] = []
    url = ""
    media: set[str] = set()
    for i in range(frames):
        if i:
            await asyncio.sleep(interval)
        ask = DiscoverArgs(target="all_visible", max=MAX_ELEMENTS)
        found = await request("discover", ask.model_dump(exclude_unset=True))
        if url and found.get("url") != url:
            break  # the page moved on: compare only frames of one page
        url = str(found.get("url") or "")
        seen.append(texts_of(found))
        media |= {
            str(el["selector"])
            for el in found.get("elements") or []
            if el.get("tag") in MEDIA_TAGS and el.get("selector")
        }
    moved = moving(seen) | media
    return {url: moved} if url and len(seen) > 1 else {}  # empty: watched, nothing moved
