"""A local page and the files beside it, packed for a host on another machine to serve.

The browser on the laptop cannot read this machine's disk, so ``shotctl capture FILE`` over a
forward sends the page to the host (``serve_page``). What goes is what the local file server
would answer here (:func:`shotbridge.client.localserve.resolve_inside`): files at or below the
page's folder, no dotfiles or dot-directories, no symlink leading out, no file with other hard
links; within the bundle's caps, nearest first.
"""

from __future__ import annotations

import logging
from collections import deque
from pathlib import Path

from shotbridge.client.bus_client import BusClient
from shotbridge.client.localserve import resolve_inside
from shotbridge.wire.messages import (
    PAGE_BUNDLE_MAX_BYTES,
    PAGE_BUNDLE_MAX_FILES,
    PageBundle,
    ServedPage,
)

log = logging.getLogger(__name__)

MAX_VISITED = 20_000  # directory entries looked at: a page in $HOME must not walk all of it


def bundle(path: Path) -> PageBundle:
    """The page (a folder means its index.html) and its neighbours, breadth first."""
    path = path.resolve()
    page = path / "index.html" if path.is_dir() else path
    root = page.parent
    files = {page.name: page.read_bytes()}  # the page itself always: the user chose it
    total = len(files[page.name])
    queue, visited, left_out = deque([root]), 0, 0
    while queue and visited < MAX_VISITED:
        folder = queue.popleft()
        try:
            entries = sorted(folder.iterdir())
        except OSError:
            continue
        for entry in entries:
            visited += 1
            rel = entry.relative_to(root).as_posix()
            if entry.name.startswith(".") or rel in files:
                continue
            if entry.is_dir() and not entry.is_symlink():
                queue.append(entry)
                continue
            target = resolve_inside(root, rel)
            if target is None:
                continue
            size = target.stat().st_size
            if total + size > PAGE_BUNDLE_MAX_BYTES or len(files) >= PAGE_BUNDLE_MAX_FILES:
                left_out += 1
                continue
            files[rel] = target.read_bytes()
            total += size
    if left_out:
        log.warning("%d files beside %s left out: over the bundle's caps", left_out, page.name)
    return PageBundle(page=page.name, files=files)


async def serve_remotely(client: BusClient, path: Path, *, timeout: float = 60.0) -> str:
    """Have the host (another machine's) serve the page; its URL, valid while ``client`` lives."""
    served = await client.ask("serve_page", bundle(path), ServedPage, timeout=timeout)
    client.own_urls.add(served.url.rsplit("/", 1)[0] + "/")
    return served.url
