"""The toolbar popup's question: which clients use this browser, and which came over a forward.

The popup asks with ``chrome.runtime.sendNativeMessage``: Chrome starts a fresh ``shotctl host``
for that one message and keeps its first answer. That process is not the host serving the
browser, so it asks the running hosts of its runtime dir (``status`` over their sockets) and
answers with their clients; it never registers itself, so no client can pick it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path
from typing import Any

from shotbridge.transport import paths
from shotbridge.transport.framing import BUS
from shotbridge.wire.messages import HostStatus

log = logging.getLogger(__name__)

QUERY = "popup_clients"  # the event name the popup sends
ASK_TIMEOUT = 2.0  # s per host: the popup is open, the user is waiting


def asks(frame: dict[str, Any] | None) -> bool:
    return bool(frame) and frame.get("event") == QUERY  # type: ignore[union-attr]


async def _status(info: paths.HostInfo) -> HostStatus | None:
    try:
        reader, writer = await asyncio.wait_for(
            asyncio.open_unix_connection(info.socket), ASK_TIMEOUT
        )
    except (OSError, TimeoutError):
        return None
    try:
        writer.write(BUS.encode({"id": "popup", "cmd": "status", "args": {}}))
        reply = await asyncio.wait_for(BUS.aread(reader), ASK_TIMEOUT)
        return HostStatus.model_validate(reply["result"]) if reply and reply.get("ok") else None
    except Exception as exc:  # a host going away while asked: left out of the answer
        log.info("popup: host %d did not answer: %s", info.pid, exc)
        return None
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()


async def answer(directory: Path) -> dict[str, Any]:
    """``{"hosts": [{pid, profile_id, clients: [...]}]}`` for every host that answers."""
    found = await asyncio.gather(*(_status(h) for h in paths.list_hosts(directory)))
    hosts = [
        {
            "pid": s.pid,
            "profile_id": s.profile_id,
            "clients": [c.model_dump(mode="json") for c in s.clients],
        }
        for s in found
        if s is not None
    ]
    return {"hosts": hosts}
