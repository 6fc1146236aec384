"""Discovery that does not depend on the caller's environment: a host registered under
$XDG_RUNTIME_DIR is found by a client that has only HOME."""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from shotbridge.transport import paths


@pytest.fixture
def session(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A short temp root with home/ and xdg/ (0700); no discovery variable set."""
    root = Path(tempfile.mkdtemp(prefix="sbp", dir="/tmp"))
    (root / "home").mkdir()
    (root / "xdg").mkdir(mode=0o700)
    for var in ("SHOTBRIDGE_RUNTIME_DIR", "XDG_RUNTIME_DIR", "SHOTBRIDGE_HOST", "TMPDIR"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(root / "home"))
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _register(directory: Path) -> tuple[paths.HostInfo, socket.socket]:
    """A record and a listening socket for this process, as a host writes them."""
    paths.ensure_private_dir(directory)
    sock_path = paths.socket_path(os.getpid(), directory)
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(sock_path))
    now = time.time()
    info = paths.HostInfo(
        pid=os.getpid(), profile_id="p-1234567890", started=now, last_active=now,
        connected=True, socket=str(sock_path),
    )  # fmt: skip
    paths.write_host_info(info, directory)
    return info, server


def test_host_with_xdg_is_found_by_a_client_with_only_home(
    session: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(session / "xdg"))
    host_dir = paths.runtime_dir()
    assert host_dir == session / "xdg" / "shotbridge"
    info, server = _register(host_dir)
    try:
        assert (paths.registry_dir() / f"host-{info.pid}.json").is_file()
        monkeypatch.delenv("XDG_RUNTIME_DIR")  # the IDE's environment
        assert paths.runtime_dir(create=False) != host_dir
        assert [h.pid for h in paths.list_hosts()] == [info.pid]
        assert paths.select_host("p-123456") is not None  # a prefix of 8+ characters
        assert paths.select_host("p-1") is None
        monkeypatch.setenv("XDG_RUNTIME_DIR", str(session / "xdg"))  # the host's environment
        paths.remove_host_files(info.pid, host_dir)
        assert not (paths.registry_dir() / f"host-{info.pid}.json").exists()
        assert paths.list_hosts() == []
    finally:
        server.close()


def test_private_runtime_dir_registers_nowhere_else(
    session: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    private = session / "private"
    monkeypatch.setenv("SHOTBRIDGE_RUNTIME_DIR", str(private))
    info, server = _register(private)
    try:
        assert not paths.registry_dir().exists()
        assert paths.search_dirs() == [private]
        monkeypatch.delenv("SHOTBRIDGE_RUNTIME_DIR")
        assert all(h.pid != info.pid for h in paths.list_hosts())
    finally:
        server.close()


def test_search_dirs_skip_what_is_not_ours(session: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(session / "xdg"))
    link = session / "xdg" / "shotbridge"
    link.symlink_to(session / "home")
    assert link not in paths.search_dirs()
    if os.getuid() == 0:
        link.unlink()
        link.mkdir(mode=0o700)
        os.chown(link, 65534, 65534)
        assert link not in paths.search_dirs()
