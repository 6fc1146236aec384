"""Client sessions in the host: each bus client has its own recording, screenshots and timeline.

A session is named by the ``session`` argument of a request (``shotctl mcp --shared-session``
sends ``"shared"``), else it is the client's bus connection: every ``shotctl mcp`` process and
every ``shotctl capture`` is then a session of its own, which ends when the client disconnects.
A :class:`Session` is the one owner of a client's state: its
:class:`~shotbridge.host.shots.ShotRegistry` (ids drawn from one host-wide counter), its
:class:`~shotbridge.host.recording.Recorder` (timeline, buffer, automatic captures, settings) and
its :class:`~shotbridge.host.diff_memory.DiffMemory`. Every screenshot is taken for a session
(``screenshot.take`` gets it), which hands the finished image to its recorder and diff memory.

Who did what: while a session runs a command that acts on the page (``interact``, ``navigate``,
``screenshot`` with a url) and for :data:`ACT_GRACE_S` after it (the last one to finish, when
none is running), the extension's ``action`` and ``nav`` events are that session's alone; when two
sessions act at the same moment nobody can tell, and the events go to both. Any other event — the
user's own clicks, typing and navigations, page errors, network — goes to every session open at
the time. Automatic captures
of a session are hidden from its x/y and label defaults (the model was not shown them).
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import logging
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from shotbridge.host.after_capture import ElementReads, before_command
from shotbridge.host.recording import Recorder, RecorderCommand
from shotbridge.host.shots import ShotRegistry
from shotbridge.wire.diff import DiffArgs
from shotbridge.wire.model import Model
from shotbridge.wire.screenshot import ScreenshotResult

if TYPE_CHECKING:
    from shotbridge.host.diff_memory import DiffMemory
    from shotbridge.host.screenshot import Cause

log = logging.getLogger(__name__)

ACT_GRACE_S = 0.5  # events this soon after a session's action are that action's echo
MAX_NAMED = 16  # named (shared) sessions a host keeps
ACTING_COMMANDS = frozenset({"interact", "navigate"})
ATTRIBUTED_EVENTS = frozenset({"action", "nav"})
NAVIGATING_ACTIONS = frozenset({"navigate", "back", "forward", "reload"})
RECORDER_COMMANDS = ("timeline", "screenshots", "screenshot_get", "record_config")


class Session:
    """One client's state in the host: its screenshots, its recorder and its diff memory."""

    def __init__(self, key: str, link: Any, ids: Iterator[int], conn: Any = None) -> None:
        self.key = key
        self.conn = conn  # None for a named session: it outlives its clients
        self.link = link
        self.shots = ShotRegistry(ids=ids, session=self)
        # The page's elements after each image, read once for the recorder and the diff memory.
        self.element_reads = ElementReads()
        self.recorder = Recorder(link, self.shots, reads=self.element_reads)

    @property
    def gone(self) -> bool:
        return self.conn is not None and bool(getattr(self.conn, "closed", False))

    @functools.cached_property
    def diff_memory(self) -> DiffMemory:
        from shotbridge.host.diff_memory import DiffMemory  # the core loads where pixels are

        return DiffMemory()

    # ---- what screenshot.take asks of its session ------------------------------------------

    def mask_selectors(self) -> list[str]:
        """The session's own mask_selectors (configure): every image taken for it is masked
        with them, whoever asked for it (automatic, raw CDP…)."""
        return list(self.recorder.config.mask_selectors)

    def screenshot_taken(self, result: ScreenshotResult, cause: Cause) -> None:
        """A finished screenshot: automatic ones leave the x/y and label defaults (the model was
        not shown them); every one goes to the recorder, whose failure never costs the image."""
        if cause.automatic:
            ids = [result.screenshot_id, *(t.screenshot_id for t in result.tiles or [])]
            self.shots.hide(i for i in ids if isinstance(i, int))
        try:
            self.recorder.on_screenshot(result, cause)
        except Exception:
            log.exception("recording screenshot %s failed", result.screenshot_id)

    async def compare(
        self, result: ScreenshotResult, args: DiffArgs, *, annotated: bool, previous_id: int | None
    ) -> None:
        """Remember the screenshot for diffs and, when asked, add ``result.diff``.

        The page's elements come from the one read after the capture that the recorder shares.
        """
        shot_id, tab_id = result.screenshot_id or 0, result.tab_id
        report = await self.diff_memory.attach(
            result,
            args,
            annotated=annotated,
            previous_id=previous_id,
            read=lambda: self.element_reads.of(self.link, shot_id, tab_id, keep=True),
            hurry=self.element_reads.hurry,
        )
        if (
            report
            and report.unchanged
            and args.unchanged_check
            and report.compared_to == previous_id
        ):
            self.shots.hide([shot_id])  # the model keeps the earlier, identical image as its latest


class Sessions:
    """Every client session of one host, and the routing of events and screenshots to them."""

    def __init__(self, link: Any, *, clock: Any = time.monotonic) -> None:
        self.link = link
        self.clock = clock
        self._ids = itertools.count(1)
        self._sessions: dict[str, Session] = {}
        self._acting: dict[str, int] = {}  # session key → commands in flight
        self._acted_until: dict[str, float] = {}
        self._asked_nav: dict[str, bool] = {}  # session key → its latest command asked to navigate

    # ---- which session --------------------------------------------------------------------

    @staticmethod
    def key_of(conn: Any, args: dict[str, Any]) -> str:
        name = args.get("session")
        if isinstance(name, str) and name.strip():
            return "named:" + name.strip()[:64]
        return f"conn:{getattr(conn, 'id', id(conn))}"

    def get(self, conn: Any, args: dict[str, Any]) -> Session:
        self._prune()
        key = self.key_of(conn, args)
        session = self._sessions.get(key)
        if session is None:
            named = key.startswith("named:")
            if named and sum(k.startswith("named:") for k in self._sessions) >= MAX_NAMED:
                oldest = next(k for k in self._sessions if k.startswith("named:"))
                self._drop(oldest)
            session = Session(key, self.link, self._ids, conn=None if named else conn)
            self._sessions[key] = session
            log.info("session %s started", key)
        return session

    def _prune(self) -> None:
        for key in [k for k, s in self._sessions.items() if s.gone]:
            self._drop(key)

    def _drop(self, key: str) -> None:
        session = self._sessions.pop(key, None)
        self._acted_until.pop(key, None)
        if session is not None:
            log.info("session %s ended", key)
            for task in list(session.recorder._tasks):
                task.cancel()

    def all(self) -> list[Session]:
        return list(self._sessions.values())

    # ---- attribution ------------------------------------------------------------------------

    async def before(self, cmd: str, args: dict[str, Any]) -> None:
        """A command is about to run: page reads deferred till now go first, or are dropped, if
        it may change the page (host/after_capture.py)."""
        await before_command(self.link, cmd, args)

    @contextlib.contextmanager
    def acting(self, conn: Any, cmd: str, args: dict[str, Any]) -> Iterator[None]:
        """Mark the caller's session as the author of what the page does while ``cmd`` runs."""
        acts = cmd in ACTING_COMMANDS or (cmd == "screenshot" and bool(args.get("url")))
        if not acts:
            yield
            return
        session = self.get(conn, args)
        self._asked_nav[session.key] = cmd == "navigate" or bool(
            args.get("action") in NAVIGATING_ACTIONS or (cmd == "screenshot" and args.get("url"))
        )
        self._acting[session.key] = self._acting.get(session.key, 0) + 1
        try:
            yield
        finally:
            self._acting[session.key] -= 1
            if not self._acting[session.key]:
                del self._acting[session.key]
            self._acted_until[session.key] = self.clock() + ACT_GRACE_S

    def _author(self) -> str | None:
        """The session whose action the page is answering now, if it can be told.

        A session acting right now wins; when two act at once nobody can tell whose the event is,
        so it is everyone's. With none acting, the one that finished last within the grace.
        """
        if self._acting:
            return next(iter(self._acting)) if len(self._acting) == 1 else None
        now = self.clock()
        recent = [(t, k) for k, t in self._acted_until.items() if t > now]
        return max(recent)[1] if recent else None

    def on_event(self, event: dict[str, Any]) -> None:
        """Link listener: an extension event goes to its author, or to every open session."""
        self._prune()
        name = event.get("event")
        author = self._author() if name in ATTRIBUTED_EVENTS else None
        targets = [self._sessions[author]] if author in self._sessions else self.all()
        if name in ATTRIBUTED_EVENTS and isinstance(event.get("data"), dict):
            event = {**event, "data": {**event["data"], "origin": self._origin(name, author)}}
        for session in targets:
            session.recorder.on_event(event)

    def _origin(self, name: Any, author: str | None) -> str:
        """The timeline's ``origin`` of an action/nav event: the generators replay a navigation a
        tool asked for as its own step, and one that followed a tool's click as that click's."""
        if author is None:
            return "user"
        if name == "nav" and not self._asked_nav.get(author):
            return "tool_action"
        return "tool"

    async def close(self) -> None:
        for session in self.all():
            await session.recorder.close()

    # ---- bus commands ----------------------------------------------------------------------

    def commands(self) -> dict[str, RecorderCommand]:
        """The recorder's commands, each run by the caller's session."""

        def bind(name: str) -> RecorderCommand:
            async def command(conn: Any, args: dict[str, Any]) -> Model:
                session = self.get(conn, args)
                rest = {k: v for k, v in args.items() if k != "session"}
                return await session.recorder.commands()[name](conn, rest)

            return command

        return {name: bind(name) for name in RECORDER_COMMANDS}
