"""The MCP server's view of the host's session memory: recording settings, timeline, screenshot
buffer. The host keeps everything (it outlives a server restart and is shared by every client of
the browser); this module validates what the model asks for and fetches what the tools need, typed
by :mod:`shotbridge.wire.recording`.

Settings are the session's, not the browser's: ``configure`` may come before any browser exists
(and a browser or host may be replaced later), so :class:`SettingsSync` hands the settings that
shape the host's own captures (``mask_selectors``, and ``auto_screenshot``/``network`` once set)
to every host the server reaches, before the first request that could make the page do anything.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, TypeVar

from pydantic import BaseModel

from shotbridge.mcp_server.failures import to_tool_error
from shotbridge.mcp_server.record_settings import RECORDING_NAMES
from shotbridge.mcp_server.state import REQUEST_TIMEOUT_S, ServerState
from shotbridge.wire.recording import (
    ImagesWanted,
    RecordConfig,
    RecordConfigArgs,
    ScreenshotsArgs,
    ScreenshotsResult,
    TimelineArgs,
    TimelineResult,
)

M = TypeVar("M", bound=BaseModel)

log = logging.getLogger(__name__)


def touches_recording(settings: dict[str, Any]) -> bool:
    return any(name in settings for name in (*RECORDING_NAMES, "mask_selectors"))


async def push(state: ServerState, settings: dict[str, Any]) -> RecordConfig | None:
    """Send the recording settings to the host (its automatic captures and network capture).

    A change of auto_screenshot or network must reach the host. A change of mask_selectors alone
    (the host's automatic captures mask them too) is sent only over a link that is already up:
    changing a mask must never launch a browser.
    """
    s = state.settings
    args = RecordConfigArgs(mask_selectors=list(s.mask_selectors))
    required = any(name in settings for name in RECORDING_NAMES)
    if required and isinstance(state.connection, SettingsSync):
        state.connection.recording_set = True  # from now on every new host gets them too
    if not required and getattr(state.connection, "_link", None) is None:
        return None
    if required:
        args.auto_screenshot = s.auto_screenshot.model_dump()
        args.min_interval_s = state.budget.cooldown  # the host's auto screenshots follow it
        if "network" in settings:
            args.network = s.network
    try:
        got = await state.connection.request("record_config", sent(args), timeout=REQUEST_TIMEOUT_S)
        return RecordConfig.model_validate(got)
    except Exception as exc:
        if required:
            raise to_tool_error(exc) from exc
        log.info("record_config not sent (mask_selectors only): %s", exc)
        return None


def sent(args: BaseModel) -> dict[str, Any]:
    """An argument model as it goes on the bus: the fields it was given, by name."""
    return args.model_dump(mode="python", exclude_unset=True)


async def request(state: ServerState, cmd: str, args: dict[str, Any] | None = None) -> dict:
    """One host or extension command for a tool; a failure becomes the tool's error."""
    try:
        return await state.connection.request(cmd, args, timeout=REQUEST_TIMEOUT_S)
    except Exception as exc:
        raise to_tool_error(exc) from exc


async def ask(state: ServerState, cmd: str, args: BaseModel, result: type[M]) -> M:
    """:func:`request` with typed ends: the result is validated once, here."""
    return result.model_validate(await request(state, cmd, sent(args)))


async def timeline(state: ServerState, *, bodies: bool = True) -> TimelineResult:
    return await ask(state, "timeline", TimelineArgs(bodies=bodies), TimelineResult)


async def screenshot_images(state: ServerState, images: ImagesWanted) -> dict[int, bytes]:
    """Bytes of the kept screenshots (``thumbnail`` or ``full``) by id."""
    found = await ask(state, "screenshots", ScreenshotsArgs(images=images), ScreenshotsResult)
    return found.images()


class SettingsSync:
    """``state.connection``, with the session's capture settings delivered to each new host first.

    Before a request, if the link (or the host behind it: our headless browser's host may be
    restarted) is not the one last given the settings, ``record_config`` goes first. So masks
    configured before the browser started are applied to the automatic screenshots of the very
    first page, and survive a browser or host restart. A host that cannot take them fails the
    request: an automatic capture without its masks is worse than none.
    """

    def __init__(self, inner: Any, state: ServerState) -> None:
        self.inner = inner
        self.state = state
        self.recording_set = False  # auto_screenshot/network were configured: they travel too
        # The link last given the settings (held, so no new link can reuse its id) and its host.
        self._synced: tuple[Any, int | None] | None = None
        self._lock = asyncio.Lock()

    def host_settings(self) -> RecordConfigArgs:
        """What a fresh host must be told; no field set while all is at the host's defaults."""
        s = self.state.settings
        args = RecordConfigArgs()
        if s.mask_selectors:
            args.mask_selectors = list(s.mask_selectors)
        if self.recording_set:
            args.auto_screenshot = s.auto_screenshot.model_dump()
            args.min_interval_s = self.state.budget.cooldown
            if s.network:
                args.network = True
        return args

    async def request(
        self, cmd: str, args: dict[str, Any] | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        await self._sync(kwargs.get("connect_timeout"))
        result = await self.inner.request(cmd, args, **kwargs)
        now = self._host(getattr(self, "_link", None))
        if now is not None and self._synced is not None and now != self._synced:
            await self._sync(None)  # the request reconnected to a new host on its way
        return result

    async def _sync(self, connect_timeout: float | None) -> None:
        if not self.host_settings().model_fields_set:
            return
        async with self._lock:
            link = await self.inner.link(connect_timeout)
            host = self._host(link)
            if host == self._synced:
                return
            # Read again: a configure may have changed them while the link came up.
            given = sent(self.host_settings())
            await self.inner.request("record_config", given, timeout=REQUEST_TIMEOUT_S)
            self._synced = self._host(getattr(self, "_link", None)) or host
            log.info("capture settings given to the host (%s)", ", ".join(given))

    @staticmethod
    def _host(link: Any) -> tuple[Any, int | None] | None:
        """Which host a link reaches: the link object, and the host's pid where known."""
        if link is None:
            return None
        peer = getattr(link, "peer", None)
        return link, (peer().pid if peer is not None else None)

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.inner, attr)
