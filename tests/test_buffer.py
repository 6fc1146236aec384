"""The host's screenshot buffer and its copies in SHOTBRIDGE_SCREENSHOT_DIR."""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

import pytest
from shotbridge.host.buffer import (
    KEEP,
    MAX_BYTES,
    ScreenshotBuffer,
    file_name,
    write_copy,
)
from shotbridge.wire.recording import ShotMeta


def add(buf: ScreenshotBuffer, shot_id: int, size: int = 1000, thumb: int = 100) -> None:
    buf.add(ShotMeta(id=shot_id, url=f"http://a/{shot_id}"), b"j" * size, b"t" * thumb)


def test_keeps_the_last_20_and_evicts_the_oldest_first() -> None:
    buf = ScreenshotBuffer()
    for i in range(1, 26):
        add(buf, i)
    assert KEEP == 20 and len(buf) == 20
    assert [s.meta.id for s in buf.kept()] == list(range(6, 26))
    assert buf.get(5) is None and buf.get(6) is not None
    assert buf.held_bytes == 20 * 1100


def test_evicted_screenshots_keep_their_metadata() -> None:
    buf = ScreenshotBuffer()
    for i in range(1, 23):
        add(buf, i, size=500 + i)
    meta = buf.meta()
    assert [m.id for m in meta] == list(range(1, 23))  # oldest first, evicted ones included
    assert [m.kept for m in meta[:2]] == [False, False] and all(m.kept for m in meta[2:])
    gone = buf.evicted(1)
    assert gone is not None and gone.bytes == 501 and gone.url == "http://a/1"
    assert buf.evicted(3) is None  # still held


def test_memory_cap_evicts_more_than_the_count_requires() -> None:
    assert MAX_BYTES == 10 * 1024 * 1024
    buf = ScreenshotBuffer()
    for i in range(1, 6):
        add(buf, i, size=4 * 1024 * 1024, thumb=10_000)  # 5 × ~4 MB > 10 MB
    assert buf.held_bytes <= MAX_BYTES
    assert [s.meta.id for s in buf.kept()] == [4, 5]
    assert [m.id for m in buf.meta() if not m.kept] == [1, 2, 3]


def test_a_single_oversized_screenshot_is_still_kept() -> None:
    buf = ScreenshotBuffer(max_bytes=1000)
    add(buf, 1, size=5000)
    assert len(buf) == 1  # the newest is never evicted by its own size
    add(buf, 2, size=10)
    assert [s.meta.id for s in buf.kept()] == [2]


def test_same_id_replaces_without_double_counting() -> None:
    buf = ScreenshotBuffer()
    add(buf, 1, size=100, thumb=0)
    add(buf, 1, size=300, thumb=0)
    assert len(buf) == 1 and buf.held_bytes == 300


def test_copies_go_to_the_screenshot_dir(tmp_path: Path) -> None:
    meta = ShotMeta(id=7, time=1_700_000_000.25)
    path = write_copy("sess", meta, b"\xff\xd8jpeg", str(tmp_path))
    assert path is not None and Path(path).read_bytes() == b"\xff\xd8jpeg"
    name = file_name("sess", meta)
    assert name.startswith("sess-") and name.endswith("-00007.jpg") and ".250-" in name
    assert [p.name for p in tmp_path.iterdir()] == [name]  # no partial file left behind


def test_no_dir_no_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SHOTBRIDGE_SCREENSHOT_DIR", raising=False)
    assert write_copy("s", ShotMeta(id=1), b"x") is None


def test_write_failure_is_logged_not_raised(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with caplog.at_level(logging.WARNING, logger="shotbridge.host.buffer"):
        assert write_copy("s", ShotMeta(id=1), b"x", str(blocker / "sub")) is None
    assert "cannot write screenshot 1" in caplog.text


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_screenshot_dir_is_made_0700_and_files_0600(tmp_path: Path) -> None:
    """Screenshots show the user's pages: under umask 022 the folder would be 0755, files 0644."""
    target = tmp_path / "a" / "shots"
    old = os.umask(0o022)
    try:
        path = write_copy("s", ShotMeta(id=1), b"x", str(target))
    finally:
        os.umask(old)
    assert path is not None
    assert _mode(target) == 0o700
    assert _mode(Path(path)) == 0o600


def test_an_open_screenshot_dir_of_ours_is_tightened(tmp_path: Path) -> None:
    target = tmp_path / "shots"
    target.mkdir()
    os.chmod(target, 0o777)
    assert write_copy("s", ShotMeta(id=2), b"x", str(target)) is not None
    assert _mode(target) == 0o700


def test_a_screenshot_dir_of_another_user_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    target = tmp_path / "shots"
    target.mkdir(mode=0o777)
    real_uid = os.getuid()
    monkeypatch.setattr(os, "getuid", lambda: real_uid + 1)  # as if someone else made it
    with caplog.at_level(logging.WARNING, logger="shotbridge.host.buffer"):
        assert write_copy("s", ShotMeta(id=3), b"x", str(target)) is None
    assert "not to you" in caplog.text and list(target.iterdir()) == []


def test_a_planted_symlink_is_not_followed(tmp_path: Path) -> None:
    """Someone's symlink at the temp name must not redirect our write."""
    target = tmp_path / "shots"
    target.mkdir(mode=0o700)
    meta = ShotMeta(id=4, time=1_700_000_000.0)
    victim = tmp_path / "victim"
    victim.write_text("keep")
    (target / file_name("s", meta)).with_suffix(".part").symlink_to(victim)
    path = write_copy("s", meta, b"jpeg", str(target))
    assert path is not None and Path(path).read_bytes() == b"jpeg"
    assert victim.read_text() == "keep"
