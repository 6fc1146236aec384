"""The bus on its own (unit level): BusServer + BusClient in-process, and paths' host discovery.

The server here gets a stand-in request handler instead of the host, so routing, isolation and
access control are tested without any extension.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from shotbridge.client.bus_client import BusClient
from shotbridge.host.bus import BusConnection, BusServer, peer_uid
from shotbridge.transport import paths
from shotbridge.transport.framing import BUS
from shotbridge.wire.errors import BusError, CommandError, NotConnectedError

NOBODY = 65534


@pytest.fixture
def rundir() -> Iterator[Path]:
    # Short path under /tmp: AF_UNIX paths are limited to ~104 bytes, tmp_path can be longer.
    path = Path(tempfile.mkdtemp(prefix="sb", dir="/tmp"))
    try:
        yield paths.ensure_private_dir(path / "rt")
    finally:
        shutil.rmtree(path, ignore_errors=True)


async def echo_handler(conn: BusConnection, msg: dict[str, Any]) -> None:
    """Replies after args.delay seconds with what it was asked; `fail` gives an error reply."""
    args = msg.get("args") or {}
    await asyncio.sleep(args.get("delay", 0))
    if msg.get("cmd") == "fail":
        await conn.send({"id": msg["id"], "ok": False, "error": {"code": "no_tab", "message": "x"}})
    else:
        await conn.send({"id": msg["id"], "ok": True, "result": {"echo": args, "conn": conn.id}})


async def start_server(rundir: Path, handler: Any = echo_handler) -> BusServer:
    server = BusServer(rundir / "test.sock", handler)
    await server.start()
    return server


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 10))


# ---- permissions ----------------------------------------------------------------------------


def test_socket_is_0600_and_dir_0700(rundir: Path) -> None:
    async def scenario() -> None:
        server = await start_server(rundir)
        try:
            assert stat.S_IMODE(os.stat(server.path).st_mode) == 0o600
            assert stat.S_ISSOCK(os.stat(server.path).st_mode)
            assert stat.S_IMODE(os.stat(rundir).st_mode) == 0o700
        finally:
            await server.close()
        assert not server.path.exists()  # close removes the socket file

    run(scenario())


def test_peer_uid_reads_our_own_uid(rundir: Path) -> None:
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with a, b:
        assert peer_uid(a) == os.getuid()


def test_connection_from_another_uid_is_refused(rundir: Path) -> None:
    """The server believes the peer is someone else (seam: expected_uid): it must hang up
    without reading or answering anything, and the client must learn it at once."""

    async def scenario() -> None:
        server = await start_server(rundir)
        server.expected_uid = os.getuid() + 1
        try:
            client = await BusClient.connect_path(server.path)
            started = time.monotonic()
            with pytest.raises(BusError):
                await client.request("status", timeout=5)
            assert time.monotonic() - started < 1
            await client.close()
            assert not server.connections
        finally:
            await server.close()

    run(scenario())


_CHILD = r"""
import socket, struct, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect(sys.argv[1])
except PermissionError:
    print("EACCES"); sys.exit(0)
s.settimeout(5)
try:
    s.sendall(struct.pack(">I", 1) + b"\x80")  # a valid empty msgpack map
    print("EOF" if s.recv(100) == b"" else "ANSWERED")
except (ConnectionResetError, BrokenPipeError):  # hung up on us, our frame unread
    print("EOF")
"""


@pytest.mark.skipif(os.name != "posix" or sys.platform != "linux", reason="Linux SO_PEERCRED test")
def test_real_other_user_is_refused(rundir: Path) -> None:
    """As root: a real process running as `nobody` connects and is refused.

    Layer 1 (dir 0700 + socket 0600) stops it at connect(). To reach layer 2 (SO_PEERCRED)
    the test then deliberately opens the dir and socket to everyone: the host must still hang
    up on the stranger. Without root, only the monkeypatched refusal above can run, so this
    test checks what it can: that a non-root user cannot switch uid (and says so).
    """
    if os.getuid() != 0:
        with pytest.raises(PermissionError):
            subprocess.run(["true"], user=NOBODY, check=True)
        return
    python = shutil.which("python3", path="/usr/bin:/bin")
    assert python, "a system python3 readable by nobody is needed"

    async def child(path: Path) -> str:
        proc = await asyncio.create_subprocess_exec(
            python, "-c", _CHILD, str(path), user=NOBODY, group=NOBODY,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        out, err = await asyncio.wait_for(proc.communicate(), 8)
        assert proc.returncode == 0, err.decode()
        return out.decode().strip()

    async def scenario() -> None:
        server = await start_server(rundir)
        try:
            os.chmod(rundir.parent, 0o711)
            assert await child(server.path) == "EACCES"  # 0700 dir: cannot even reach it
            os.chmod(rundir, 0o711)
            os.chmod(server.path, 0o666)
            assert await child(server.path) == "EOF"  # reached it: SO_PEERCRED refuses
            # ...while our own user is still served.
            async with await BusClient.connect_path(server.path) as client:
                assert (await client.request("ping"))["echo"] == {}
        finally:
            await server.close()

    run(scenario())


# ---- routing and isolation ------------------------------------------------------------------


def test_concurrent_clients_get_their_own_replies(rundir: Path) -> None:
    async def scenario() -> None:
        server = await start_server(rundir)
        try:
            a = await BusClient.connect_path(server.path)
            b = await BusClient.connect_path(server.path)
            # Replies come back out of order (slowest asked first), on both connections.
            results = await asyncio.gather(
                a.request("x", {"n": 1, "delay": 0.2}),
                b.request("x", {"n": 2, "delay": 0.1}),
                a.request("x", {"n": 3, "delay": 0.0}),
                b.request("x", {"n": 4, "delay": 0.05}),
            )
            assert [r["echo"]["n"] for r in results] == [1, 2, 3, 4]
            assert results[0]["conn"] == results[2]["conn"] != results[1]["conn"]
            with pytest.raises(CommandError) as err:
                await a.request("fail")
            assert err.value.code == "no_tab"
            await a.close()
            await b.close()
        finally:
            await server.close()

    run(scenario())


def test_bytes_travel_raw(rundir: Path) -> None:
    async def scenario() -> None:
        server = await start_server(rundir)
        try:
            async with await BusClient.connect_path(server.path) as client:
                blob = bytes(range(256)) * 1000
                assert (await client.request("x", {"blob": blob}))["echo"]["blob"] == blob
        finally:
            await server.close()

    run(scenario())


def test_malformed_frame_closes_only_that_connection(rundir: Path) -> None:
    async def scenario() -> None:
        server = await start_server(rundir)
        try:
            good = await BusClient.connect_path(server.path)
            reader, writer = await asyncio.open_unix_connection(str(server.path))
            writer.write(struct.pack(">I", 3) + b"\xc1\xc1\xc1")  # not msgpack
            await writer.drain()
            reply = await BUS.aread(reader)
            assert reply is not None
            assert reply["ok"] is False and reply["error"]["code"] == "bad_frame"
            assert await BUS.aread(reader) is None  # then the host hung up
            writer.close()
            assert (await good.request("x", {"n": 1}))["echo"] == {"n": 1}
            await good.close()
        finally:
            await server.close()

    run(scenario())


def test_oversized_frame_is_refused_without_reading_it(rundir: Path) -> None:
    async def scenario() -> None:
        server = await start_server(rundir)
        try:
            reader, writer = await asyncio.open_unix_connection(str(server.path))
            writer.write(struct.pack(">I", 2**31))  # 2 GiB announced, nothing sent
            await writer.drain()
            reply = await asyncio.wait_for(BUS.aread(reader), 2)
            assert reply is not None and reply["error"]["code"] == "bad_frame"
            writer.close()
        finally:
            await server.close()

    run(scenario())


def test_client_leaving_mid_request_breaks_nothing(rundir: Path) -> None:
    async def scenario() -> None:
        server = await start_server(rundir)
        try:
            leaver = await BusClient.connect_path(server.path)
            pending = asyncio.create_task(leaver.request("x", {"delay": 0.3}))
            await asyncio.sleep(0.05)
            await leaver.close()
            with pytest.raises(BusError):
                await pending
            await asyncio.sleep(0.4)  # the late reply is written to nobody
            async with await BusClient.connect_path(server.path) as other:
                assert (await other.request("x", {"n": 5}))["echo"] == {"n": 5}
        finally:
            await server.close()

    run(scenario())


def test_server_going_away_fails_requests_at_once(rundir: Path) -> None:
    async def scenario() -> None:
        server = await start_server(rundir)
        client = await BusClient.connect_path(server.path)
        pending = asyncio.create_task(client.request("x", {"delay": 30}, timeout=30))
        await asyncio.sleep(0.1)
        started = time.monotonic()
        await server.close()
        with pytest.raises(BusError):
            await pending
        assert time.monotonic() - started < 2
        with pytest.raises(BusError):  # later requests fail straight away too
            await client.request("x")
        await client.close()

    run(scenario())


def test_client_timeout_is_a_command_error(rundir: Path) -> None:
    async def scenario() -> None:
        server = await start_server(rundir)
        try:
            async with await BusClient.connect_path(server.path) as client:
                with pytest.raises(CommandError) as err:
                    await client.request("x", {"delay": 1}, timeout=0.1)
                assert err.value.code == "timeout"
        finally:
            await server.close()

    run(scenario())


# ---- paths: directories and host discovery --------------------------------------------------


def test_runtime_dir_precedence(monkeypatch: pytest.MonkeyPatch, rundir: Path) -> None:
    monkeypatch.setenv("SHOTBRIDGE_RUNTIME_DIR", str(rundir / "explicit"))
    assert paths.runtime_dir() == rundir / "explicit"
    assert stat.S_IMODE(os.stat(rundir / "explicit").st_mode) == 0o700
    monkeypatch.delenv("SHOTBRIDGE_RUNTIME_DIR")
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(rundir))
    assert paths.runtime_dir() == rundir / "shotbridge"
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    monkeypatch.setattr(tempfile, "gettempdir", lambda: str(rundir))
    assert paths.runtime_dir() == rundir / f"shotbridge-{os.getuid()}"


def test_state_dir_precedence(monkeypatch: pytest.MonkeyPatch, rundir: Path) -> None:
    monkeypatch.setenv("SHOTBRIDGE_STATE_DIR", str(rundir / "s"))
    assert paths.state_dir() == rundir / "s"
    monkeypatch.delenv("SHOTBRIDGE_STATE_DIR")
    monkeypatch.setenv("XDG_STATE_HOME", str(rundir / "x"))
    assert paths.state_dir() == rundir / "x" / "shotbridge"
    monkeypatch.delenv("XDG_STATE_HOME")
    monkeypatch.setenv("HOME", str(rundir / "home"))
    assert paths.state_dir(create=False) == rundir / "home" / ".local" / "state" / "shotbridge"


def test_private_dir_fixes_our_mode_and_refuses_strangers(rundir: Path) -> None:
    loose = rundir / "loose"
    loose.mkdir(mode=0o755)
    os.chmod(loose, 0o755)
    paths.ensure_private_dir(loose)
    assert stat.S_IMODE(os.stat(loose).st_mode) == 0o700
    link = rundir / "link"
    link.symlink_to(loose)
    with pytest.raises(BusError, match="not a directory"):
        paths.ensure_private_dir(link)
    foreign = rundir / "foreign"
    foreign.mkdir()
    if os.getuid() == 0:
        os.chown(foreign, NOBODY, NOBODY)  # a real directory owned by someone else
        with pytest.raises(BusError, match="belongs to uid"):
            paths.ensure_private_dir(foreign)
    else:  # cannot give a directory away without root: make ourselves look like someone else
        real = os.getuid()
        try:
            os.getuid = lambda: real + 1  # type: ignore[assignment]
            with pytest.raises(BusError, match="belongs to uid"):
                paths.ensure_private_dir(foreign)
        finally:
            os.getuid = lambda: real  # type: ignore[assignment]


def test_socket_path_length_is_checked(rundir: Path) -> None:
    with pytest.raises(BusError, match="too long"):
        paths.socket_path(1, rundir / ("x" * 120))


def _publish(rundir: Path, pid: int, **fields: Any) -> Path:
    sock_path = paths.socket_path(pid, rundir)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(sock_path))
    sock.close()  # the file stays: enough for discovery
    info = paths.HostInfo(
        pid=pid, started=1.0, last_active=fields.pop("last_active", 1.0), socket=str(sock_path),
        **fields,
    )  # fmt: skip
    paths.write_host_info(info, rundir)
    return sock_path


def test_list_and_select_hosts(rundir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    me = os.getpid()
    parent = os.getppid()
    _publish(rundir, dead.pid, profile_id="gone", connected=True, last_active=99.0)
    _publish(rundir, me, profile_id="p-me", connected=True, last_active=5.0)
    _publish(rundir, parent, profile_id="p-parent", connected=True, last_active=9.0)
    (rundir / "host-7.json").write_text("{half")  # junk is ignored
    hosts = paths.list_hosts(rundir)
    assert [h.pid for h in hosts] == [parent, me]  # most recently active first
    assert not (rundir / f"host-{dead.pid}.json").exists()  # stale record cleaned up
    assert not (rundir / f"host-{dead.pid}.sock").exists()
    assert paths.select_host(None, rundir).pid == parent  # type: ignore[union-attr]
    assert paths.select_host("p-me", rundir).pid == me  # type: ignore[union-attr]
    assert paths.select_host(str(parent), rundir).profile_id == "p-parent"  # type: ignore[union-attr]
    assert paths.select_host("nope", rundir) is None
    monkeypatch.setenv("SHOTBRIDGE_HOST", "p-me")
    assert paths.select_host(None, rundir).pid == me  # type: ignore[union-attr]
    data = json.loads((rundir / f"host-{me}.json").read_text())
    assert set(data) >= {"pid", "profile_id", "extension_version", "started", "last_active"}
    assert stat.S_IMODE(os.stat(rundir / f"host-{me}.json").st_mode) == 0o600


def test_client_without_host_says_what_to_do(rundir: Path) -> None:
    async def scenario() -> None:
        with pytest.raises(NotConnectedError, match="shotctl doctor"):
            await BusClient.connect(runtime_dir=rundir)
        with pytest.raises(NotConnectedError, match="matches 'x'"):
            await BusClient.connect("x", runtime_dir=rundir)

    run(scenario())


# ---- liveness: slow, stuck and greedy clients ------------------------------------


def _peer_hung_up(sock: socket.socket) -> bool:
    import select

    poller = select.poll()
    poller.register(sock, select.POLLRDHUP | select.POLLHUP)
    return any(mask & (select.POLLRDHUP | select.POLLHUP) for _, mask in poller.poll(0))


async def _poll(condition: Any, limit: float = 5.0) -> None:
    deadline = time.monotonic() + limit
    while not condition():
        assert time.monotonic() < deadline, "condition never became true"
        await asyncio.sleep(0.02)


def test_client_that_stops_reading_is_disconnected(rundir: Path) -> None:
    async def blob_handler(conn: BusConnection, msg: dict[str, Any]) -> None:
        await conn.send({"id": msg["id"], "ok": True, "result": {"blob": b"\0" * 1_000_000}})

    async def scenario() -> None:
        server = BusServer(rundir / "t.sock", blob_handler, stall_timeout=0.5)
        await server.start()
        try:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.connect(str(server.path))
            for n in range(20):  # 20 MB of replies it will never read
                sock.sendall(BUS.encode({"id": str(n), "cmd": "x", "args": {}}))
            await _poll(lambda: not server.connections)
            await _poll(lambda: _peer_hung_up(sock))
            async with await BusClient.connect_path(server.path) as other:  # others unaffected
                assert len((await other.request("x"))["blob"]) == 1_000_000
            sock.close()
        finally:
            await server.close()

    run(scenario())


def test_reply_queue_is_bounded(rundir: Path) -> None:
    async def scenario() -> None:
        server = await start_server(rundir)
        try:
            async with await BusClient.connect_path(server.path) as client:
                await client.request("x")
                (conn,) = server.connections
                conn.reply_queue_bytes = 10_000
                conn.writer.transport.pause_reading()  # irrelevant to writing; keep it quiet
                conn._writer_task.cancel()  # nothing leaves: replies can only pile up
                ok = [await conn.send({"id": "r", "ok": True, "result": {"pad": "x" * 4000}})]
                ok += [await conn.send({"id": "r", "ok": True, "result": {"pad": "x" * 4000}})]
                ok += [await conn.send({"id": "r", "ok": True, "result": {"pad": "x" * 4000}})]
                assert ok == [True, True, False] and conn.closed
                assert conn.queued == (0, 0)  # the queue went with it
        finally:
            await server.close()

    run(scenario())


def test_slow_subscriber_loses_oldest_events_and_is_told_how_many(rundir: Path) -> None:
    async def scenario() -> None:
        server = await start_server(rundir)
        try:
            async with await BusClient.connect_path(server.path) as client:
                await client.request("x")
                (conn,) = server.connections
                conn.subscribed = True
                for n in range(5000):  # all in one go: the writer cannot run in between
                    server.publish({"event": "probe", "data": {"n": n}})
                assert conn.queued[1] <= 256
                got: list[dict[str, Any]] = []
                while not got or got[-1]["data"]["n"] != 4999:
                    got.append(await client.next_event(timeout=2))
                delivered = len(got)
                dropped = sum(e.get("dropped", 0) for e in got)
                assert dropped > 0 and delivered + dropped == 5000
                assert conn.dropped_total == dropped
        finally:
            await server.close()

    run(scenario())


def test_half_sent_frames_share_one_budget(rundir: Path) -> None:
    async def scenario() -> None:
        server = BusServer(rundir / "t.sock", echo_handler, incoming_budget=1_000_000)
        await server.start()
        try:
            first = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            first.connect(str(server.path))
            await asyncio.to_thread(first.sendall, struct.pack(">I", 700_000) + b"\x81" * 300_000)
            await _poll(lambda: server.budget.used == 700_000)
            reader, writer = await asyncio.open_unix_connection(str(server.path))
            writer.write(struct.pack(">I", 700_000))  # does not fit next to the first one
            reply = await asyncio.wait_for(BUS.aread(reader), 2)
            assert reply is not None and reply["error"]["code"] == "bad_frame"
            assert "700000 bytes refused" in reply["error"]["message"]
            assert await BUS.aread(reader) is None
            writer.close()
            first.close()  # leaves mid-frame: its reservation is handed back at once
            await _poll(lambda: server.budget.used == 0)
            async with await BusClient.connect_path(server.path) as client:
                blob = b"\x01" * 700_000  # now it fits
                assert (await client.request("x", {"blob": blob}))["echo"]["blob"] == blob
        finally:
            await server.close()

    run(scenario())


def test_close_is_bounded_whatever_the_clients_do(rundir: Path) -> None:
    async def scenario() -> None:
        server = BusServer(rundir / "t.sock", echo_handler)
        await server.start()
        stuck = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stuck.connect(str(server.path))
        request = BUS.encode({"id": "1", "cmd": "x", "args": {"pad": "x" * 2_000_000}})
        await asyncio.to_thread(stuck.sendall, request)
        await _poll(lambda: bool(server.connections))
        (conn,) = server.connections
        await _poll(lambda: conn.writer.transport.get_write_buffer_size() > 0)
        started = time.monotonic()
        await server.close({"event": "host_closing", "data": {"reason": "test"}}, flush=0.3)
        assert time.monotonic() - started < 1.5
        assert conn.writer.transport.is_closing()
        stuck.close()

    run(scenario())
