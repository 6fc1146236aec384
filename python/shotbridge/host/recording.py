"""Session memory in the host: the timeline, the screenshot buffer and automatic captures.

The :class:`Recorder` listens to the extension's events (``nav``, ``action``, ``page_error``,
``network``), is handed every screenshot of its session (``Session.screenshot_taken``), and
serves the bus commands ``timeline``, ``screenshots``, ``screenshot_get`` and ``record_config``.

Automatic capture (``auto_screenshot``): after a completed navigation, a page error or a user
action, a screenshot is taken once the cooldown (``min_interval_s``) has passed and the page has
settled (loaded, and no load, request or trigger for about 1 s; at most 3 s of waiting). Triggers
that come while one waits are merged into it, and its record lists them (``triggers``). The rules
live in :mod:`shotbridge.host.autoshot`.

Observations (for ``mask_dynamic``): the page's visible texts (``discover all_visible``) are noted
with every screenshot and twice after each completed navigation (right away and a second later).
Two observations of the same URL with no user action between them that disagree on an element's
text show dynamic content (clocks, counters, random ids) a visual assertion must mask.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from shotbridge.host import buffer
from shotbridge.host.after_capture import ElementReads
from shotbridge.host.autoshot import Batch, Scheduler
from shotbridge.host.buffer import BufferedShot, ScreenshotBuffer
from shotbridge.wire import extension as ext
from shotbridge.wire.errors import CommandError, ErrorCode
from shotbridge.wire.model import Model
from shotbridge.wire.recording import (
    IMAGES_WANTED,
    AutoScreenshot,
    RecordConfig,
    RecordConfigArgs,
    ScreenshotGetResult,
    ScreenshotsResult,
    ShotItem,
    ShotMeta,
    TimelineResult,
)
from shotbridge.wire.screenshot import ScreenshotResult, Tile
from shotbridge.wire.timeline import (
    ActionEntry,
    ErrorEntry,
    NavEntry,
    NetworkEntry,
    ObservationEntry,
    ShotEntry,
    Timeline,
    Trigger,
)

if TYPE_CHECKING:  # screenshot.take runs the recorder's automatic captures: imported lazily
    from shotbridge.host.screenshot import Cause, Link

log = logging.getLogger(__name__)

SETTLE_S = {"navigation": 0.3}  # the first observation after a load
SECOND_LOOK_S = 1.0  # the second observation after a navigation
OBSERVE_MAX = 100
AUTO_TIMEOUT_MS = 10_000

# A bus command of the recorder: (the client's connection, its raw arguments) -> the result model.
RecorderCommand = Callable[[Any, dict[str, Any]], Awaitable[Model]]


def _sent(args: ext.ExtensionArgs) -> dict[str, Any]:
    """An extension command's arguments as they go to it: only the fields given."""
    return args.model_dump(exclude_unset=True)


def _since(value: Any) -> int:
    """timeline's ``since``: a sequence number (int, or digits); anything else is bad_request."""
    if value is None or value == "":
        return 0
    refusal = CommandError(ErrorCode.BAD_REQUEST, f"since must be an integer, not {value!r}")
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise refusal
    try:
        return max(0, int(value))
    except ValueError:
        raise refusal from None


class Recorder:
    def __init__(
        self,
        link: Link,
        shots: Any,
        *,
        reads: ElementReads | None = None,
        clock: Any = time.monotonic,
    ) -> None:
        self.link = link
        self.shots = shots  # the host's ShotRegistry: only its screenshots are ours
        # The session's one read of the page after each screenshot (shared with its diff memory).
        self.reads = reads if reads is not None else ElementReads()
        self.timeline = Timeline()
        self.buffer = ScreenshotBuffer()
        self.config = RecordConfig()
        self.clock = clock
        self.auto = Scheduler(
            self._capture_batch, self._loaded, lambda: self.config.min_interval_s, clock=clock
        )
        self._tasks: set[asyncio.Task[Any]] = set()
        self._nav_done = 0

    # ---- inputs ----------------------------------------------------------------------------

    def on_event(self, event: dict[str, Any]) -> None:
        """Link listener: one extension event."""
        name = str(event.get("event"))
        data = event.get("data") if isinstance(event.get("data"), dict) else {}
        if name == "network" and not self.config.network:
            return  # network=false records nothing, whatever a page (or a stale hook) sends
        if name == "page_error" and not data.get("url"):
            data = {**data, "url": self.timeline.current_url}
        entry = self.timeline.from_event(name, data)
        if entry is None:
            return
        if isinstance(entry, NetworkEntry) or (isinstance(entry, NavEntry) and not entry.complete):
            self.auto.activity()  # the page is not quiet yet: a waiting screenshot waits on
        if isinstance(entry, NavEntry):
            if entry.complete and entry.seq != self._nav_done:  # once per load
                self._nav_done = entry.seq
                self._after_navigation()
        elif isinstance(entry, ErrorEntry):
            if self.config.auto_screenshot.on_error:
                self._auto("error", self._last_action_id())
        elif (
            isinstance(entry, ActionEntry)
            and entry.kind != "submit"
            and self.config.auto_screenshot.on_action
        ):
            self._auto("action", entry.id)

    def on_screenshot(self, result: ScreenshotResult, cause: Cause) -> None:
        """Every image taken for this recorder's session goes into the buffer and timeline."""
        if result.screenshot_id is None:
            return
        # A full page is several images, each announced with its own id: keep every one readable.
        parts: list[ScreenshotResult | Tile] = [result, *(result.tiles or [])[1:]]
        for part in parts:
            if part.screenshot_id is not None:
                self._keep(part, result, cause)

    def _keep(self, part: ScreenshotResult | Tile, result: ScreenshotResult, cause: Cause) -> None:
        """One image (a screenshot, or one tile of a full page) into the buffer and timeline."""
        trigger = cause.trigger
        if trigger not in ("navigation", "action", "error", "explicit"):
            trigger = "explicit"
        action_id = cause.action_id or self._last_action_id()
        meta = ShotMeta(
            id=int(part.screenshot_id or 0),
            url=result.url,
            title=result.title,
            trigger=trigger,
            action_id=action_id,
            width=part.width,
            height=part.height,
            triggers=cause.triggers,
        )
        self.buffer.add(meta, part.jpeg, part.thumbnail)
        meta.file = buffer.write_copy(self.timeline.session, meta, part.jpeg)
        self.timeline.add(
            ShotEntry(
                time=meta.time,
                url=meta.url,
                screenshot_id=meta.id,
                trigger=trigger,
                action_id=action_id,
                bytes=meta.bytes,
                width=meta.width,
                height=meta.height,
                triggers=cause.triggers,
                settled=cause.settled if cause.triggers else None,
            )
        )
        if self.config.observe:
            self._spawn(self._observe_shot(meta.id, result.tab_id))

    def _last_action_id(self) -> str | None:
        action = self.timeline.last_action
        return action.id if action else None

    # ---- automatic work ---------------------------------------------------------------------

    def _spawn(self, coro: Any) -> asyncio.Task[Any] | None:
        try:
            task = asyncio.get_running_loop().create_task(coro)
        except RuntimeError:  # no loop (a synchronous unit test): nothing to schedule
            coro.close()
            return None
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _after_navigation(self) -> None:
        if self.config.observe:
            self._spawn(self._observe_twice())
        if self.config.auto_screenshot.on_navigation:
            self._auto("navigation", self._last_action_id())

    async def _observe_twice(self) -> None:
        await asyncio.sleep(SETTLE_S["navigation"])
        await self._observe(None)
        await asyncio.sleep(SECOND_LOOK_S)
        await self._observe(None)

    async def _observe_shot(self, screenshot_id: int, tab_id: int | None) -> None:
        """The texts on the page when this screenshot was taken (the read the diff shares)."""
        found = await self.reads.of(self.link, screenshot_id, tab_id)
        if found is not None:
            self._observed(found, screenshot_id)

    async def _observe(self, screenshot_id: int | None) -> None:
        try:
            ask = ext.DiscoverArgs(target="all_visible", max=OBSERVE_MAX)
            found = await self.link.request("discover", _sent(ask), timeout=5)
        except Exception as exc:  # a page mid-navigation, no tab: an observation less
            log.debug("observation skipped: %s", exc)
            return
        self._observed(found, screenshot_id)

    def _observed(self, found: dict[str, Any], screenshot_id: int | None) -> None:
        texts: dict[str, str] = {}
        for el in found.get("elements") or []:
            selector, text = el.get("selector"), el.get("text") or el.get("name") or ""
            if selector and text:
                texts[str(selector)] = str(text)
        self.timeline.add(
            ObservationEntry(
                url=str(found.get("url") or ""), screenshot_id=screenshot_id, texts=texts
            )
        )

    def _auto(self, trigger: Trigger, action_id: str | None) -> None:
        if self.auto.add(trigger, action_id):
            self._spawn(self.auto.run())

    async def _loaded(self) -> bool:
        """Whether the tracked page finished loading (a page mid-navigation has not)."""
        try:
            info = await self.link.request("page_info", _sent(ext.PageInfoArgs()), timeout=5)
        except Exception as exc:
            log.debug("page_info while settling: %s", exc)
            return False
        return info.get("ready_state") == "complete"

    async def _capture_batch(self, batch: Batch) -> None:
        await self.capture(batch.latest.trigger, batch.latest.action_id, batch)

    async def capture(
        self, trigger: Trigger, action_id: str | None, batch: Batch | None = None
    ) -> ScreenshotResult | None:
        """One automatic screenshot through the host's own pipeline, taken for this recorder's
        session (so it lands in the buffer and stays out of the model's defaults)."""
        from shotbridge.host import screenshot  # lazy: the core loads only where pixels are handled

        args = {"mask_selectors": list(self.config.mask_selectors), "timeout_ms": AUTO_TIMEOUT_MS}
        cause = screenshot.Cause(trigger=trigger, action_id=action_id)
        if batch is not None:
            cause.triggers, cause.settled = list(batch.triggers), batch.settled
        try:
            return await screenshot.take(self.link, args, self.shots.session, cause)
        except Exception as exc:
            log.info("automatic %s screenshot failed: %s", trigger, exc)
            return None

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(BaseException):
                await task

    # ---- bus commands ------------------------------------------------------------------------

    def commands(self) -> dict[str, RecorderCommand]:
        return {
            "timeline": self.cmd_timeline,
            "screenshots": self.cmd_screenshots,
            "screenshot_get": self.cmd_screenshot_get,
            "record_config": self.cmd_record_config,
        }

    # Arguments arrive as the client sent them (``shotbridge.wire.recording`` declares them); they
    # are read leniently here so a malformed one gets the same bad_request sentence as always.

    async def cmd_timeline(self, conn: Any, args: dict[str, Any]) -> TimelineResult:
        kinds = args.get("kinds")
        result = TimelineResult(
            session=self.timeline.session,
            started=self.timeline.started,
            entries=self.timeline.select(
                since=_since(args.get("since")),
                kinds=list(kinds) if isinstance(kinds, list) else None,
            ),
            screenshots=self.buffer.meta(),
            config=self.config.model_copy(deep=True),
            dropped=dict(self.timeline.dropped),
        )
        return result if args.get("bodies", True) else result.without_bodies()

    async def cmd_screenshots(self, conn: Any, args: dict[str, Any]) -> ScreenshotsResult:
        """Metadata of every screenshot; ``images: thumbnail|full`` adds the kept ones' bytes."""
        images = args.get("images", "none")
        if images not in IMAGES_WANTED:
            raise CommandError(ErrorCode.BAD_REQUEST, "images must be none, thumbnail or full")
        wanted = args.get("ids")
        out = []
        for meta in self.buffer.meta():
            if isinstance(wanted, list) and meta.id not in wanted:
                continue
            shot = self.buffer.get(meta.id)
            jpeg = None
            if shot is not None and images != "none":
                jpeg = await self._thumbnail(shot) if images == "thumbnail" else shot.jpeg
            out.append(ShotItem(**meta.model_dump(), jpeg=jpeg))
        return ScreenshotsResult(
            session=self.timeline.session, screenshots=out, held_bytes=self.buffer.held_bytes
        )

    async def _thumbnail(self, shot: BufferedShot) -> bytes:
        """The shot's thumbnail; one taken without (the MCP server's) gets it made now, once."""
        if not shot.thumbnail:
            from shotbridge import image  # the core loads only where pixels are handled

            made = await asyncio.to_thread(image.thumbnail_of, shot.jpeg)
            self.buffer.add_thumbnail(shot, made)
        return shot.thumbnail

    async def cmd_screenshot_get(self, conn: Any, args: dict[str, Any]) -> ScreenshotGetResult:
        shot_id = args.get("id")
        if not isinstance(shot_id, int):
            raise CommandError(ErrorCode.BAD_REQUEST, "screenshot_get needs id (an integer)")
        shot = self.buffer.get(shot_id)
        if shot is None:
            gone = self.buffer.evicted(shot_id)
            why = (
                f"Screenshot {shot_id} was evicted from the buffer (it keeps the last "
                f"{self.buffer.keep}); its metadata is still in the timeline."
                if gone
                else f"No screenshot {shot_id} in this session."
            )
            raise CommandError(ErrorCode.NOT_FOUND, why)
        thumb = bool(args.get("thumbnail"))
        jpeg = await self._thumbnail(shot) if thumb else shot.jpeg
        return ScreenshotGetResult(**shot.meta.model_dump(), jpeg=jpeg)

    async def cmd_record_config(self, conn: Any, args: dict[str, Any]) -> RecordConfig:
        new = RecordConfigArgs.model_validate(args)
        if new.auto_screenshot is not None:
            unknown = set(new.auto_screenshot) - set(AutoScreenshot.model_fields)
            if unknown:
                raise CommandError(
                    ErrorCode.BAD_REQUEST,
                    f"unknown auto_screenshot field(s): {', '.join(sorted(unknown))}",
                )
        if new.network is not None:
            # The extension owns the wrapper; only a confirmed change counts.
            ask = ext.RecordConfigArgs(network=new.network)
            done = await self.link.request("record_config", _sent(ask), timeout=10)
            self.config.network = ext.RecordConfigReply.model_validate(done).network
        if new.auto_screenshot is not None:
            self.config.auto_screenshot = self.config.auto_screenshot.model_copy(
                update=new.auto_screenshot
            )
        for name in ("mask_selectors", "min_interval_s", "observe"):
            value = getattr(new, name)
            if value is not None:
                setattr(self.config, name, value)
        return self.config.model_copy(deep=True)
