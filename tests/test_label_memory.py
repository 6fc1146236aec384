"""The host's memory of the labels each page sent (host/label_memory.py), without a browser.

The e2e side (a real page saying ``same``, a changed frame sending itself) is in
tests/e2e/test_annotations_frames.py.
"""

from __future__ import annotations

import asyncio
from typing import Any

from shotbridge.host import screenshot
from shotbridge.host.label_memory import LabelMemory
from shotbridge.wire.extension import DiscoverResult
from shotbridge.wire.screenshot import ScreenshotArgs


def _answer(token: str, name: str = "Save") -> dict[str, Any]:
    element = {"selector": "#save", "tag": "button", "role": "button", "name": name,
               "bounds": {"x": 1, "y": 2, "width": 30, "height": 20}}  # fmt: skip
    return {
        "url": "http://a.test/",
        "title": "A",
        "ready_state": "complete",
        "device_pixel_ratio": 1,
        "viewport": {"width": 800, "height": 600},
        "scroll": {"x": 0, "y": 0},
        "elements": [element],
        "total_found": 1,
        "token": token,
    }


ASK = {"tab_id": None, "target": "interactive", "max": 50, "after_frame": True}
PARSE = DiscoverResult.model_validate


def test_an_answer_is_named_next_time_and_same_gives_it_back() -> None:
    memory = LabelMemory()
    asked, held = memory.ask(ASK)
    assert asked["known"] == "" and held is None
    first = memory.answer(ASK, _answer("d.1"), held, PARSE)
    assert first is not None and first.elements[0].name == "Save"

    asked, held = memory.ask({**ASK, "after_frame": False})  # the same question
    assert asked["known"] == "d.1"
    # (a bound classmethod is a new object at each access: the same parse all the same)
    again = memory.answer(ASK, {"same": "d.1"}, held, DiscoverResult.model_validate)
    assert again is first  # the answer held, not read again
    assert memory.answer(ASK, {"same": "d.1"}, held, dict) is None  # held as another kind

    assert memory.ask({**ASK, "max": 10})[1] is None  # another question holds nothing
    assert memory.answer(ASK, {"same": "d.0", "reused": True}, held, PARSE) is None  # not held


def test_a_new_answer_replaces_the_one_held() -> None:
    memory = LabelMemory()
    memory.answer(ASK, _answer("d.1"), None, PARSE)
    memory.answer(ASK, _answer("d.2", "Send"), memory.ask(ASK)[1], PARSE)
    asked, held = memory.ask(ASK)
    assert asked["known"] == "d.2" and held is not None and held.result.elements[0].name == "Send"


class _Link:
    """Answers ``discover`` from a list; records what it was asked."""

    def __init__(self, replies: list[dict[str, Any]]) -> None:
        self.replies, self.asked = replies, []

    async def request(
        self, cmd: str, args: Any = None, timeout: float = 15.0, on_partial: Any = None
    ) -> Any:
        assert cmd == "discover"
        self.asked.append(args)
        return self.replies.pop(0)


def test_same_of_an_answer_the_worker_forgot_is_asked_again_whole() -> None:
    """A page names a token the host holds, but the extension's worker (restarted) cannot fill
    in the frames it holds no more: the host asks again, naming nothing."""
    args = ScreenshotArgs.model_validate({"annotate": True})
    link = _Link([_answer("d.1")])
    first = asyncio.run(screenshot._remembered(link, args, {}))
    link.replies = [{"same": "stale", "reused": True}, _answer("d.2", "Send")]
    timings: dict[str, Any] = {}
    found = asyncio.run(screenshot._remembered(link, args, timings))
    assert first.token == "d.1" and found.elements[0].name == "Send"
    assert [a["known"] for a in link.asked[1:2]] == ["d.1"] and "known" not in link.asked[2]
    assert link.asked[2]["after_frame"] is False and timings["labels_same"] == 0
