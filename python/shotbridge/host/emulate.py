"""The host's ``emulate`` and ``tab_close`` commands: the tool's device and tab changes.

Both run in the extension; the host expands presets, records each change in the caller's
timeline (a step the generators replay) and undoes what a client leaves behind: the tabs a
client emulated are reset when its bus connection closes (an MCP server that exits, a CLI that
ends), so the user's own tab never stays a phone after the session that made it one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from shotbridge.wire.emulate import EmulateRequest, preset_named
from shotbridge.wire.errors import CommandError, ErrorCode
from shotbridge.wire.extension import EmulateArgs, EmulateReply, TabCloseArgs, TabCloseReply
from shotbridge.wire.timeline import EmulateEntry, TabEntry, Timeline

log = logging.getLogger(__name__)

RESET_TIMEOUT_S = 10.0


def extension_args(req: EmulateRequest) -> EmulateArgs:
    """The settings the extension applies: the preset's, with the single settings over them."""
    given = req.model_dump(exclude_none=True, exclude={"preset", "tab_id"})
    if req.preset is not None:
        found = preset_named(req.preset)
        if found is None:
            raise CommandError(ErrorCode.BAD_REQUEST, f"unknown preset {req.preset!r}")
        name, device = found
        given = {**device.model_dump(), **given, "preset": name}
    if req.tab_id is not None:
        given["tab_id"] = req.tab_id
    return EmulateArgs.model_validate(given)


class Emulations:
    """Which client emulated which tab, so a client that goes away leaves no emulation behind."""

    def __init__(self, link: Any) -> None:
        self.link = link
        self._owners: dict[int, set[int]] = {}  # connection id -> tabs it emulated
        self._tasks: set[asyncio.Task[None]] = set()

    async def emulate(self, conn: Any, timeline: Timeline, args: dict[str, Any]) -> EmulateReply:
        sent = extension_args(EmulateRequest.model_validate(args))
        raw = await self.link.request("emulate", sent.model_dump(exclude_unset=True), timeout=15)
        reply = EmulateReply.model_validate(raw)
        timeline.add(EmulateEntry(url=reply.url, emulation=reply.emulation))
        self._note(conn, reply)
        return reply

    def _note(self, conn: Any, reply: EmulateReply) -> None:
        key = getattr(conn, "id", id(conn))
        tabs = self._owners.get(key)
        if reply.emulation.empty:
            if tabs is not None:
                tabs.discard(reply.tab_id)
            return
        if tabs is None:
            tabs = self._owners[key] = set()
            if hasattr(conn, "wait_closed"):
                task = asyncio.get_running_loop().create_task(self._undo_when_closed(conn, key))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
        tabs.add(reply.tab_id)

    async def _undo_when_closed(self, conn: Any, key: int) -> None:
        await conn.wait_closed()
        for tab_id in sorted(self._owners.pop(key, set())):
            log.info("client %s left: resetting the emulation of tab %d", key, tab_id)
            with contextlib.suppress(Exception):  # the tab or the browser may be gone
                reset = EmulateArgs(tab_id=tab_id, reset=True).model_dump(exclude_unset=True)
                await self.link.request("emulate", reset, timeout=RESET_TIMEOUT_S)

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()


async def close_tab(link: Any, timeline: Timeline, args: dict[str, Any]) -> TabCloseReply:
    """Close a tab (the tracked one by default); the closed page is a step of the timeline."""
    sent = TabCloseArgs.model_validate(args).model_dump(exclude_unset=True)
    reply = TabCloseReply.model_validate(await link.request("tab_close", sent, timeout=15))
    timeline.add(TabEntry(url=reply.closed.url, tab_id=reply.closed.id))
    return reply
