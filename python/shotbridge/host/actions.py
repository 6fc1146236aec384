"""``interact``'s select, upload, drag and wait: aimed here like the input actions, done by the
extension's commands of the same purpose (``select``, ``upload``, ``drag``, ``wait_for``).

An upload's files arrive as bytes, read by the client on its own machine
(shotbridge.client.upload_files): the host reads no path a client names, since over a forwarded bus
that path would be the laptop's. It sends the bytes to the extension in parts, and the page sets
them on the input (why not CDP's DOM.setFileInputFiles: extension/lib/upload.js).
"""

from __future__ import annotations

import base64
import secrets
from typing import Any

from shotbridge.host.screenshot import Link
from shotbridge.host.shots import Shot, ShotRegistry, image_to_viewport, label_target
from shotbridge.wire.errors import CommandError, ErrorCode
from shotbridge.wire.extension import (
    DragArgs,
    SelectArgs,
    UploadArgs,
    UploadFile,
    UploadPartArgs,
    WaitForArgs,
)
from shotbridge.wire.interact import (
    MAX_UPLOAD_BYTES,
    DragTarget,
    InteractArgs,
    InteractResult,
)

PART_BYTES = 600_000  # a multiple of 3: the parts' base64 joins as one text (800 kB < 1 MB each)


def _bad(msg: str) -> CommandError:
    return CommandError(ErrorCode.BAD_REQUEST, msg)


def aim(
    shots: ShotRegistry,
    *,
    selector: str | None,
    label: int | None,
    x: float | None,
    y: float | None,
    screenshot_id: int | None,
) -> tuple[dict[str, Any], Shot | None]:
    """The extension's target fields for one end of an action, and its screenshot (if any)."""
    if selector:
        return {"selector": selector}, None
    if label is not None:
        shot = shots.for_label(screenshot_id)
        point, ann = label_target(shot, label)
        return {"x": point.x, "y": point.y, "expect_selector": ann.target}, shot
    if x is not None and y is not None:
        shot = shots.for_point(screenshot_id)
        point = image_to_viewport(shot, x, y)
        return {"x": point.x, "y": point.y}, shot
    return {}, None


def _aimed(shots: ShotRegistry, a: InteractArgs) -> dict[str, Any]:
    where, shot = aim(
        shots, selector=a.selector, label=a.label, x=a.x, y=a.y, screenshot_id=a.screenshot_id
    )
    out = {"tab_id": a.tab_id, "timeout_ms": a.timeout_ms, **where}
    if shot is not None:
        out["from_scroll"] = shot.scroll.model_dump()
        out["expect_url"] = shot.url
        out["expect_viewport"] = shot.viewport_key()
    return out


async def _ask(link: Link, cmd: str, args: dict[str, Any], timeout: float) -> InteractResult:
    return InteractResult.model_validate(await link.request(cmd, args, timeout=timeout))


def check(a: InteractArgs) -> None:
    """Refuse what select, upload, drag or wait cannot use, naming the fix."""
    if a.action in ("select", "upload", "drag") and not a.has_target:
        raise _bad(f"{a.action} needs a selector, a label or x/y of the element to act on.")
    if a.action == "select" and not a.values:
        raise _bad(
            'select needs values: option values or labels (an ARIA option\'s name), e.g. ["Kiwi"]; '
            "an integer is an option's index."
        )
    if a.action == "upload" and not a.uploads:
        raise _bad(
            "upload needs files: the client reads them on its machine and sends their bytes "
            '(MCP: files=["/tmp/a.png"]); the host reads no path.'
        )
    if a.action == "drag" and not isinstance(a.to, DragTarget):
        raise _bad(
            'drag needs to: where it ends, {"selector": …}, {"label": n} or {"x": …, "y": …} '
            "(pixels of the same screenshot)."
        )
    if a.action == "wait":
        if (a.text is not None and not a.text.strip()) or (a.url is not None and not a.url.strip()):
            raise _bad("wait: text and url must hold more than whitespace.")
        conditions = [a.text is not None, bool(a.selector), bool(a.url), a.network]
        if sum(conditions) > 1:
            raise _bad("wait takes one of text, selector or url (none: the network going quiet).")
        if a.label is not None or a.x is not None:
            raise _bad("wait looks for text, a selector or a url, not a label or x/y.")


async def select(
    link: Link, shots: ShotRegistry, a: InteractArgs, timeout: float
) -> InteractResult:
    values = a.values or []
    args = SelectArgs.model_validate(
        {
            **_aimed(shots, a),
            "values": [v for v in values if isinstance(v, str)],
            "indexes": [v for v in values if isinstance(v, int)],
        }
    )
    return await _ask(link, "select", args.model_dump(exclude_unset=True), timeout)


def _joined(a: InteractArgs) -> tuple[list[UploadFile], bytes]:
    """The upload's files as the extension is told of them, and their bytes one after the other."""
    uploads = a.uploads or []
    data = b"".join(u.data for u in uploads)
    if len(data) > MAX_UPLOAD_BYTES:
        raise _bad(f"files: more than {MAX_UPLOAD_BYTES:,} bytes in all; upload fewer.")
    files = [UploadFile(name=u.name, mime=u.mime, size=len(u.data), path=u.path) for u in uploads]
    return files, data


async def upload(
    link: Link, shots: ShotRegistry, a: InteractArgs, timeout: float
) -> InteractResult:
    files, data = _joined(a)
    upload_id = secrets.token_hex(8)
    parts = range(0, len(data), PART_BYTES)
    for index, at in enumerate(parts):
        part = UploadPartArgs(
            upload_id=upload_id,
            index=index,
            data=base64.b64encode(data[at : at + PART_BYTES]).decode("ascii"),
        )
        await link.request("upload_part", part.model_dump(), timeout=timeout)
    args = UploadArgs.model_validate(
        {**_aimed(shots, a), "upload_id": upload_id, "parts": len(parts), "files": files}
    )
    return await _ask(link, "upload", args.model_dump(exclude_unset=True), timeout)


async def drag(link: Link, shots: ShotRegistry, a: InteractArgs, timeout: float) -> InteractResult:
    to = a.to
    assert isinstance(to, DragTarget)  # check() refused anything else
    end, _ = aim(
        shots,
        selector=to.selector,
        label=to.label,
        x=to.x,
        y=to.y,
        screenshot_id=a.screenshot_id,
    )
    args = DragArgs.model_validate({**_aimed(shots, a), "to": end})
    return await _ask(link, "drag", args.model_dump(exclude_unset=True), timeout)


async def wait(link: Link, shots: ShotRegistry, a: InteractArgs, timeout: float) -> InteractResult:
    network = a.network or (a.text is None and not a.selector and not a.url)
    args = WaitForArgs(
        tab_id=a.tab_id,
        timeout_ms=a.wait_ms + 5000,
        text=a.text,
        selector=a.selector,
        url=a.url,
        network=network,
        gone=a.gone,
        wait_ms=a.wait_ms,
    )
    if network and a.gone:
        raise _bad("gone applies to text, selector or url, not to waiting for the network.")
    return await _ask(link, "wait_for", args.model_dump(exclude_none=True), a.wait_ms / 1000 + 8)
