"""The files of an upload, read on the machine where the client runs.

The client (``shotctl mcp``) reads them and sends their bytes over the bus; the host never reads a
path a client names. Over a forwarded bus the host sits on another machine (the laptop), where the
same path would name another file — and a remote account could otherwise pull the laptop's files
into a web page.
"""

from __future__ import annotations

import mimetypes
from pathlib import Path

from shotbridge.wire.errors import CommandError, ErrorCode
from shotbridge.wire.interact import MAX_UPLOAD_BYTES, UploadData


def _bad(msg: str) -> CommandError:
    return CommandError(ErrorCode.BAD_REQUEST, msg)


def _hidden(p: Path) -> bool:
    # A page (or text in it) may ask an assistant to upload ~/.ssh/id_ed25519 or a .env file.
    return any(part.startswith(".") and part not in (".", "..") for part in p.parts)


def read_files(paths: list[str]) -> list[UploadData]:
    """The files named, checked and read; CommandError (one sentence) for the first bad one."""
    files: list[UploadData] = []
    total = 0
    for raw in paths:
        p = Path(raw).expanduser()
        if not p.is_absolute():
            raise _bad(f"files: {raw!r} is not an absolute path.")
        if not p.is_file():
            raise _bad(f"files: {raw} does not exist or is not a file.")
        if _hidden(p) or _hidden(p.resolve()):
            raise _bad(
                f"files: {raw} is a hidden file or lies in a hidden folder, where keys and "
                "credentials live: copy it elsewhere to upload it."
            )
        try:
            body = p.read_bytes()
        except OSError as exc:
            raise _bad(f"files: {raw} cannot be read ({exc.strerror}).") from None
        total += len(body)
        if total > MAX_UPLOAD_BYTES:
            raise _bad(f"files: more than {MAX_UPLOAD_BYTES:,} bytes in all; upload fewer.")
        mime = mimetypes.guess_type(p.name)[0] or "application/octet-stream"
        files.append(UploadData(name=p.name, mime=mime, path=str(p), data=body))
    return files
