"""The MCP server's view of the host's session memory (issue 6): recording settings, timeline,
screenshot buffer. The host keeps everything (``shotbridge.host.recording``); this module validates
what the model asks for and fetches what the tools need.

Settings are the session's, not the browser's: ``configure`` may come before any browser exists
(and a browser or host may be replaced later), so :class:`SettingsSync` hands the settings that
shape the host's own captures (``mask_selectors``, and ``auto_screenshot``/``network`` once set)
to every host the server reaches, before the first request that could make the page do anything.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from shotbridge.mcp_server.failures import to_tool_error
from shotbridge.mcp_server.record_settings import RECORDING_NAMES
from shotbridge.mcp_server.state import REQUEST_TIMEOUT_S, ServerState

log = logging.getLogger(__name__)


def touches_recording(settings: dict[str, Any]) -> bool:
    return any(name in settings for name in (*RECORDING_NAMES, "mask_selectors"))


async def push(state: ServerState, settings: dict[str, Any]) -> dict[str, Any] | None:
    """Send the recording settings to the host (its automatic captures and network capture).

    A change of auto_screenshot or network must reach the host. A change of mask_selectors alone
    (the host's automatic captures mask them too) is sent only over a link that is already up:
    changing a mask must never launch a browser.
    """
    s = state.settings
    args: dict[str, Any] = {"mask_selectors": list(s.mask_selectors)}
    required = any(name in settings for name in RECORDING_NAMES)
    if required and isinstance(state.connection, SettingsSync):
        state.connection.recording_set = True  # from now on every new host gets them too
    if not required and getattr(state.connection, "_link", None) is None:
        return None
    if required:
        args["auto_screenshot"] = dict(s.auto_screenshot)
        args["min_interval_s"] = state.budget.cooldown  # the host's auto screenshots follow it
        if "network" in settings:
            args["network"] = s.network
    try:
        return await state.connection.request("record_config", args, timeout=REQUEST_TIMEOUT_S)
    except Exception as exc:
        if required:
            raise to_tool_error(exc) from exc
        log.info("record_config not sent (mask_selectors only): %s", exc)
        return None


async def request(state: ServerState, cmd: str, args: dict[str, Any] | None = None) -> dict:
    """One host or extension command for a tool; a failure becomes the tool's error."""
    try:
        return await state.connection.request(cmd, args, timeout=REQUEST_TIMEOUT_S)
    except Exception as exc:
        raise to_tool_error(exc) from exc


async def timeline(state: ServerState) -> dict[str, Any]:
    return await request(state, "timeline", {"bodies": True})


async def screenshot_images(state: ServerState, images: str) -> dict[int, bytes]:
    """Bytes of the kept screenshots (``thumbnail`` or ``full``) by id."""
    found = await request(state, "screenshots", {"images": images})
    return {int(s["id"]): s["jpeg"] for s in found.get("screenshots", []) if s.get("jpeg")}


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

    def host_settings(self) -> dict[str, Any]:
        """What a fresh host must be told; empty while everything is at the host's defaults."""
        s = self.state.settings
        args: dict[str, Any] = {}
        if s.mask_selectors:
            args["mask_selectors"] = list(s.mask_selectors)
        if self.recording_set:
            args["auto_screenshot"] = dict(s.auto_screenshot)
            args["min_interval_s"] = self.state.budget.cooldown
            if s.network:
                args["network"] = True
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
        if not self.host_settings():
            return
        async with self._lock:
            link = await self.inner.link(connect_timeout)
            host = self._host(link)
            if host == self._synced:
                return
            # Read again: a configure may have changed them while the link came up.
            await self.inner.request(
                "record_config", self.host_settings(), timeout=REQUEST_TIMEOUT_S
            )
            self._synced = self._host(getattr(self, "_link", None)) or host
            log.info("capture settings given to the host (%s)", ", ".join(self.host_settings()))

    @staticmethod
    def _host(link: Any) -> tuple[Any, int | None] | None:
        """Which host a link reaches: the link object, and the host's pid where known."""
        if link is None:
            return None
        peer = getattr(link, "peer", None)
        return link, (peer().pid if peer is not None else None)

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.inner, attr)
