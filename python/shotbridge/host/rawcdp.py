"""Raw Chrome DevTools Protocol commands for bus clients: the user's decision, logged, masked.

The host is the only way into the extension, so it is where raw CDP is gated:

* off unless the user ran ``shotctl config allow-cdp on`` (re-read per call: turning it off
  needs no restart). What a client puts in its request (``allow_cdp``, ``allow``) grants nothing;
* every call is logged to host.log with the method, the client's pid and the verdict;
* no image leaves unmasked: ``Page.captureScreenshot`` is served by the host's own screenshot
  pipeline (secret fields masked by the core, registered, written to SHOTBRIDGE_SCREENSHOT_DIR);
  methods that return pixels or page renderings any other way are refused.
"""

from __future__ import annotations

import logging
import socket
import struct
from typing import Any

from pydantic import Field

from shotbridge.host import screenshot
from shotbridge.host.screenshot import Link
from shotbridge.host.shots import ShotRegistry
from shotbridge.install import user_config as config
from shotbridge.wire.errors import CommandError, ErrorCode
from shotbridge.wire.interact import CdpImage, CdpResult
from shotbridge.wire.model import Model

log = logging.getLogger(__name__)

SCREENSHOT = "Page.captureScreenshot"
# Ways to get the page's pixels (or a rendering of it) that would bypass the masks.
REFUSED_METHODS = frozenset(
    {
        "Page.captureSnapshot",  # MHTML: the whole document, field values included
        "Page.startScreencast",
        "Page.screencastFrameAck",
        "Page.printToPDF",
        "Tracing.start",  # the devtools.screenshot category records frames
    }
)
REFUSED_DOMAINS = frozenset({"HeadlessExperimental", "LayerTree"})  # beginFrame, replaySnapshot

# Page.captureScreenshot parameters the masked pipeline can honour; anything else is refused
# rather than silently ignored.
# (captureBeyondViewport only matters with a clip; the image is the viewport either way.)
SCREENSHOT_PARAMS = frozenset({"format", "quality", "captureBeyondViewport", "fromSurface"})


ARGS = {"method", "params", "tab_id", "timeout_ms"}  # what interact passes on


class RawCdpArgs(Model):
    method: str
    params: dict[str, Any] = Field(default_factory=dict)
    tab_id: int | None = None
    timeout_ms: int = Field(15_000, ge=100, le=120_000)


def refusal(method: str) -> str | None:
    """Why ``method`` is never run raw, or None."""
    if method in REFUSED_METHODS or method.split(".", 1)[0] in REFUSED_DOMAINS:
        return (
            f"{method} is refused: it returns the page's pixels or contents without the secret "
            "masks. Use capture_screenshot (or raw Page.captureScreenshot, which is masked)."
        )
    return None


def peer_pid(sock: socket.socket | None) -> int | None:
    """The pid of the process on the other end of a Unix socket (Linux), else None."""
    if sock is None or not hasattr(socket, "SO_PEERCRED"):
        return None
    try:
        creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    except OSError:
        return None
    return int(struct.unpack("3i", creds)[0])


def disabled_message() -> str:
    return (
        "Raw CDP is off in the shotbridge host. It is the user's decision: they enable it by "
        f"running `{config.ENABLE_CDP_COMMAND}` (and, for the MCP server, "
        "`shotctl mcp --allow-cdp`)."
    )


async def run(
    link: Link, shots: ShotRegistry | None, raw: dict[str, Any], client_pid: int | None = None
) -> CdpResult:
    """Run one raw CDP command for a bus client, if the user allowed raw CDP."""
    a = RawCdpArgs.model_validate(raw)
    who = f"client pid {client_pid}" if client_pid is not None else "client pid unknown"
    if not config.load().allow_cdp:
        log.warning("raw CDP %s from %s: refused (allow-cdp is off)", a.method, who)
        raise CommandError(ErrorCode.BAD_REQUEST, disabled_message())
    if why := refusal(a.method):
        log.warning("raw CDP %s from %s: refused (no unmasked images)", a.method, who)
        raise CommandError(ErrorCode.BAD_REQUEST, why)
    if a.method == SCREENSHOT and (extra := sorted(set(a.params) - SCREENSHOT_PARAMS)):
        log.warning("raw CDP %s from %s: refused (params %s)", a.method, who, extra)
        raise CommandError(
            ErrorCode.BAD_REQUEST,
            f"Page.captureScreenshot through raw CDP is masked, and {', '.join(extra)} cannot be "
            "honoured with the masks: leave it out, or use capture_screenshot (selector, "
            "full_page) for a part of the page.",
        )
    log.info("raw CDP %s from %s: allowed", a.method, who)
    if a.method == SCREENSHOT:
        return await _masked_screenshot(link, shots, a)
    out = await link.request(
        "cdp",
        {
            "method": a.method,
            "params": a.params,
            "allow": True,
            "tab_id": a.tab_id,
            "timeout_ms": a.timeout_ms,
        },
        timeout=a.timeout_ms / 1000 + 2,
    )
    return CdpResult.model_validate(out)  # Chrome's reply, with exactly the keys it was given


async def _masked_screenshot(link: Link, shots: ShotRegistry | None, a: RawCdpArgs) -> CdpResult:
    """Page.captureScreenshot as the host takes every screenshot: masked, shrunk, kept, copied."""
    session = shots.session if shots is not None else None
    shot = await screenshot.take(
        link, {"tab_id": a.tab_id, "method": "cdp", "timeout_ms": a.timeout_ms}, session
    )
    image = CdpImage(
        jpeg=shot.jpeg,
        width=shot.width,
        height=shot.height,
        bytes=shot.bytes,
        source_width=shot.source_width,
        source_height=shot.source_height,
        screenshot_id=shot.screenshot_id,
        masked=shot.masked,
        url=shot.url,
    )
    return CdpResult(method=a.method, tab_id=shot.tab_id, result={}, image=image)
