"""One read of the page's visible elements right after a screenshot, shared by all who need it.

The diff memory (to name what changed) and the recorder's observations (the texts that
``mask_dynamic`` compares) both want the elements as they were when the image was taken. Each
read is a ``discover all_visible`` that runs in the page (~30 ms, ~80 ms on a 10,000-row grid),
and the next capture waits for the page to finish it: asking twice would double that wait.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from typing import Any, Protocol

from shotbridge.wire.extension import DiscoverArgs

log = logging.getLogger(__name__)

MAX_ELEMENTS = 100
KEEP = 8  # reads remembered by screenshot id: a diff looks back at most a few images
TIMEOUT_S = 5.0

# The extension's discover reply as it came: the recorder's observation reads what it can of it,
# the diff memory validates it (wire.extension.DiscoverResult) and does without names if it fails.
Found = dict[str, Any]


class Link(Protocol):
    """The host's connection to the extension (shotbridge.host.extension_link)."""

    async def request(
        self, cmd: str, args: dict[str, Any] | None = None, timeout: float = 15.0
    ) -> dict[str, Any]: ...


class ElementReads:
    """The page's elements read once after each screenshot of one session, by screenshot id."""

    def __init__(self) -> None:
        self._reads: OrderedDict[int, asyncio.Task[Found | None]] = OrderedDict()

    def of(self, link: Link, shot_id: int, tab_id: int | None) -> asyncio.Task[Found | None]:
        """The read after screenshot ``shot_id``: started by the first caller, shared after."""
        task = self._reads.get(shot_id)
        if task is None:
            task = asyncio.get_running_loop().create_task(_discover(link, tab_id))
            self._reads[shot_id] = task
            while len(self._reads) > KEEP:
                self._reads.popitem(last=False)
        return task


async def _discover(link: Link, tab_id: int | None) -> Found | None:
    """The ``discover`` result now, or None when the page could not answer (the image stands)."""
    # Names and texts only: whether something covers an element is not asked (the hit tests
    # were ~50 of the grid's 65 ms, and the next capture waits for this read to end).
    args = DiscoverArgs(tab_id=tab_id, target="all_visible", max=MAX_ELEMENTS, covered=False)
    try:
        return await link.request(
            "discover", args.model_dump(mode="python", exclude_unset=True), timeout=TIMEOUT_S
        )
    except Exception as exc:
        log.info("discover after a screenshot failed: %s", exc)
        return None
