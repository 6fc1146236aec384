"""``serve_page``: a page from another machine's disk, served to this host's browser.

A client on a remote machine or in a container captures a local file there; the browser runs
here and cannot read that disk. The client sends the page and the files beside it (chosen by the
same rules the local file server applies); the host writes them to a private folder and serves
them with that very server (``shotctl remote serve-page``, :mod:`shotbridge.client.localserve`):
the same sealing (sandbox CSP, Sec-Fetch-Dest, an unguessable prefix, loopback only), in a
process of its own because the host may not import client code. The page is served until the
client that sent it disconnects.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import sys
import tempfile
from pathlib import Path, PurePosixPath

from shotbridge.wire.errors import CommandError, ErrorCode
from shotbridge.wire.messages import PAGE_BUNDLE_MAX_BYTES, PageBundle, ServedPage

log = logging.getLogger(__name__)

SERVER_START_TIMEOUT = 20.0  # s: a cold Python start on a loaded machine
_watchers: set[asyncio.Task[None]] = set()  # one per served page: ends it with its client


def checked_path(name: str) -> PurePosixPath:
    """A relative path inside the bundle's folder; CommandError for anything else."""
    path = PurePosixPath(name)
    parts = path.parts
    bad = (
        not parts
        or path.is_absolute()
        or any(p.startswith(".") or "\0" in p or "\\" in p for p in parts)
    )
    if bad:
        raise CommandError(
            ErrorCode.BAD_REQUEST,
            f"serve_page: files key {name!r} must be a relative path without dot segments",
        )
    return path


def write_bundle(bundle: PageBundle, root: Path) -> Path:
    """Write the files below ``root`` (0600 files, 0700 folders); the page's path."""
    if sum(len(data) for data in bundle.files.values()) > PAGE_BUNDLE_MAX_BYTES:
        raise CommandError(
            ErrorCode.BAD_REQUEST,
            f"serve_page: files must total at most {PAGE_BUNDLE_MAX_BYTES} bytes",
        )
    if bundle.page not in bundle.files:
        raise CommandError(ErrorCode.BAD_REQUEST, "serve_page: page must be one of the files")
    for name, data in bundle.files.items():
        target = root.joinpath(*checked_path(name).parts)
        target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
    return root.joinpath(*checked_path(bundle.page).parts)


async def serve(bundle: PageBundle, gone: asyncio.Future[None] | asyncio.Task[None]) -> ServedPage:
    """Serve ``bundle`` until ``gone`` completes (the client's connection closed)."""
    folder = Path(tempfile.mkdtemp(prefix="shotbridge-page-"))  # mkdtemp makes it 0700
    try:
        page = write_bundle(bundle, folder / "page")
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "shotbridge",
            "remote",
            "serve-page",
            str(page),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
        )
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    try:
        assert process.stdout is not None
        line = await asyncio.wait_for(process.stdout.readline(), SERVER_START_TIMEOUT)
    except TimeoutError:
        line = b""
    url = line.decode(errors="replace").strip()
    watcher = asyncio.create_task(_stop_when(gone, process, folder))
    _watchers.add(watcher)
    watcher.add_done_callback(_watchers.discard)
    if not url.startswith("http://127.0.0.1:"):
        watcher.cancel()  # stops the server, removes the folder
        raise CommandError(ErrorCode.INTERNAL, "serve_page: the page server did not start")
    log.info("serving a client's page at %s", url.split("/", 3)[2])
    return ServedPage(url=url)


async def _stop_when(
    gone: asyncio.Future[None] | asyncio.Task[None],
    process: asyncio.subprocess.Process,
    folder: Path,
) -> None:
    try:
        with contextlib.suppress(Exception):
            await asyncio.shield(gone)
    finally:
        if process.stdin is not None:
            process.stdin.close()  # the server's cue to stop
        with contextlib.suppress(ProcessLookupError):
            process.terminate()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(process.wait(), 2.0)
        shutil.rmtree(folder, ignore_errors=True)
