"""What each page answered last to a ``discover``, so an unchanged page answers with a token.

An annotated capture asks the page for its labels beside Chrome's capture, and the host reads the
page's elements again after each capture (host/after_capture.py). A page that has not changed
would send the same 10-30 KB of JSON again, through the extension's worker and native messaging,
and the host would validate it again, while Chrome captures on the same two cores. Every answer
carries a token (extension/page/sent.js); the host sends the token of the answer it holds
(``known``), and a page that would answer the same says ``same`` instead. Tokens are the page's
own and unique per document, so a held answer is only ever reused for the answer it is.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, NamedTuple, Protocol, TypeVar

from shotbridge.wire.errors import CommandError, ErrorCode

T = TypeVar("T")
Parse = Callable[[dict[str, Any]], T]

KEEP = 8  # questions remembered per link (tabs × kinds of read)


@dataclass(frozen=True)
class Held(Generic[T]):
    """One answer the host holds, as ``parse`` made it, and the token the extension named it by."""

    token: str
    result: T
    parse: Parse[T]


class Link(Protocol):
    async def request(
        self, cmd: str, args: dict[str, Any] | None = None, timeout: float = 15.0
    ) -> dict[str, Any]: ...


class Got(NamedTuple, Generic[T]):
    """A ``discover`` answer, and whether it was the one held (then ``reused`` is the page's)."""

    result: T
    same: bool
    reused: bool


async def discover(link: Link, args: dict[str, Any], parse: Parse[T], timeout: float) -> Got[T]:
    """``discover`` with ``args``, naming the answer the link's memory holds for them: an
    unchanged page answers ``same`` and the held answer is returned without reading it again."""
    memory = memory_of(link)
    named, held = memory.ask(args)
    raw = await link.request("discover", named, timeout=timeout)
    found = memory.answer(args, raw, held, parse)
    if found is not None:
        return Got(found, "same" in raw, bool(raw.get("reused")))
    # The extension's worker forgot an answer the page still names: ask for it whole (and with
    # no capture to wait for, which is past its frame by now).
    again = {**args, "after_frame": False} if "after_frame" in args else args
    raw = await link.request("discover", again, timeout=timeout)
    found = memory.answer(args, raw, None, parse)
    if found is None:
        raise CommandError(ErrorCode.INTERNAL, "discover said 'same' when asked for no answer")
    return Got(found, False, bool(raw.get("reused")))


class LabelMemory:
    """The last answer to each ``discover`` question, by its arguments (one extension link)."""

    def __init__(self) -> None:
        self._held: dict[str, Held[Any]] = {}

    def ask(self, args: dict[str, Any]) -> tuple[dict[str, Any], Held[Any] | None]:
        """``args`` naming the answer held for them (``known``), and that answer."""
        held = self._held.get(_question(args))
        return {**args, "known": held.token if held else ""}, held

    def answer(
        self, args: dict[str, Any], raw: dict[str, Any], held: Held[Any] | None, parse: Parse[T]
    ) -> T | None:
        """The reply to :meth:`ask`'s arguments, parsed and kept for the next question (a
        ``same`` reply: the answer held); None when it says ``same`` of an answer that is not
        ``held`` (then ask without ``known``). Results are shared: callers only read them."""
        same = raw.get("same")
        if same is not None:
            if held is None or same != held.token or held.parse != parse:
                return None
            result: T = held.result
            return result
        result = parse(raw)
        key, token = _question(args), raw.get("token")
        self._held.pop(key, None)
        if isinstance(token, str) and token:
            self._held[key] = Held(token, result, parse)
            if len(self._held) > KEEP:
                del self._held[next(iter(self._held))]
        return result


def _question(args: dict[str, Any]) -> str:
    """What decides an answer: every argument but the timeout, the timing and ``known``."""
    asked = {k: v for k, v in args.items() if k not in ("timeout_ms", "after_frame", "known")}
    return repr(sorted(asked.items()))


_memories: weakref.WeakKeyDictionary[object, LabelMemory] = weakref.WeakKeyDictionary()


def memory_of(link: object) -> LabelMemory:
    """The memory of one extension link (a reconnected worker keeps the link, and its pages
    their tokens; what the worker forgot it asks the pages for again)."""
    try:
        memory = _memories.get(link)
        if memory is None:
            memory = _memories[link] = LabelMemory()
    except TypeError:  # a link that cannot be a weak key: no memory, every answer sent whole
        return LabelMemory()
    return memory
