"""The host's screenshot buffer: the last screenshots of the session, in memory.

At most ``keep`` (20) images and ``max_bytes`` (10 MB, JPEG + thumbnail) are held; the oldest go
first. An evicted screenshot keeps its metadata (it stays in the timeline and in
:meth:`ScreenshotBuffer.meta`, marked ``kept: false``) so reports can still say it existed.

``SHOTBRIDGE_SCREENSHOT_DIR``: every screenshot is also written there as
``<session>-<time>-<seq>.jpg`` (for evaluation harnesses); a failed write is logged, never fatal.
The folder is made (or tightened to) 0700 and each file is 0600; a folder owned by another user is
refused.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections import OrderedDict, deque
from pathlib import Path

from shotbridge.transport import paths
from shotbridge.wire.model import Model
from shotbridge.wire.recording import ShotMeta

log = logging.getLogger(__name__)

KEEP = 20
MAX_BYTES = 10 * 1024 * 1024
KEEP_METADATA = 1000  # metadata of evicted screenshots: tiny, but still bounded
DIR_ENV = "SHOTBRIDGE_SCREENSHOT_DIR"


class BufferedShot(Model):
    meta: ShotMeta
    jpeg: bytes
    thumbnail: bytes  # empty until first asked for, when the capture made none

    @property
    def size(self) -> int:
        return len(self.jpeg) + len(self.thumbnail)


class ScreenshotBuffer:
    def __init__(self, keep: int = KEEP, max_bytes: int = MAX_BYTES) -> None:
        self.keep = keep
        self.max_bytes = max_bytes
        self._shots: OrderedDict[int, BufferedShot] = OrderedDict()
        self._evicted: deque[ShotMeta] = deque(maxlen=KEEP_METADATA)
        self.held_bytes = 0

    def add(self, meta: ShotMeta, jpeg: bytes, thumbnail: bytes) -> BufferedShot:
        meta.bytes = len(jpeg)
        meta.thumb_bytes = len(thumbnail)
        shot = BufferedShot(meta=meta, jpeg=jpeg, thumbnail=thumbnail)
        self._remove(meta.id)  # the same id twice replaces, never double-counts
        self._shots[meta.id] = shot
        self.held_bytes += shot.size
        # Oldest first; never the one just added, even if alone it is over the byte cap.
        while len(self._shots) > 1 and (
            len(self._shots) > self.keep or self.held_bytes > self.max_bytes
        ):
            self._evict_oldest()
        return shot

    def add_thumbnail(self, shot: BufferedShot, thumbnail: bytes) -> None:
        """The thumbnail of a shot taken without one, made later (it counts from now on)."""
        if shot.thumbnail or self._shots.get(shot.meta.id) is not shot:
            return  # made meanwhile by another request, or evicted
        shot.thumbnail = thumbnail
        shot.meta.thumb_bytes = len(thumbnail)
        self.held_bytes += len(thumbnail)

    def _remove(self, shot_id: int) -> BufferedShot | None:
        shot = self._shots.pop(shot_id, None)
        if shot is not None:
            self.held_bytes -= shot.size
        return shot

    def _evict_oldest(self) -> None:
        oldest = next(iter(self._shots))
        shot = self._remove(oldest)
        if shot is not None:
            shot.meta.kept = False
            self._evicted.append(shot.meta)

    def get(self, shot_id: int) -> BufferedShot | None:
        return self._shots.get(shot_id)

    def evicted(self, shot_id: int) -> ShotMeta | None:
        return next((m for m in self._evicted if m.id == shot_id), None)

    def meta(self) -> list[ShotMeta]:
        """Every screenshot of the session, oldest first; evicted ones with ``kept: false``."""
        return [*self._evicted, *(s.meta for s in self._shots.values())]

    def kept(self) -> list[BufferedShot]:
        return list(self._shots.values())

    def __len__(self) -> int:
        return len(self._shots)


# ---- SHOTBRIDGE_SCREENSHOT_DIR -----------------------------------------------------------------


def file_name(session: str, meta: ShotMeta) -> str:
    stamp = time.strftime("%Y%m%dT%H%M%S", time.localtime(meta.time))
    millis = int((meta.time % 1) * 1000)
    return f"{session}-{stamp}.{millis:03d}-{meta.id:05d}.jpg"


def write_copy(
    session: str, meta: ShotMeta, jpeg: bytes, directory: str | None = None
) -> str | None:
    """Write the JPEG (0600) into ``$SHOTBRIDGE_SCREENSHOT_DIR`` if set; the path, or None."""
    target = directory if directory is not None else os.environ.get(DIR_ENV)
    if not target:
        return None
    path = Path(target) / file_name(session, meta)
    try:
        private_dir(path.parent)
        tmp = path.with_suffix(".part")
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()  # a crash's leftover; O_EXCL below refuses anything planted there
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(jpeg)
        tmp.replace(path)  # readers never see half a file
    except OSError as exc:
        log.warning("cannot write screenshot %d to %s: %s", meta.id, target, exc)
        return None
    return str(path)


def private_dir(path: Path) -> None:
    """Make ``path`` (0700), or check an existing one is ours and tighten it to 0700.

    Screenshots are masked, but they still show the user's pages: the folder is theirs alone.
    Raises OSError for a folder another user owns (they could read or swap our files).
    """
    paths.make_private_dir(path, follow_symlinks=True)
