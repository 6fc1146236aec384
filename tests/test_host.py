"""The native-messaging host, unit level: a *fake extension* speaks Chrome's frames over pipes.

No browser here. Two harnesses:
* in-process: the real ``Host`` in this event loop, its stdin/stdout replaced by two os.pipe()s
  (lets tests monkeypatch, e.g. the screenshot module);
* subprocess: the real ``python -m shotbridge host`` process, for lifecycle (EOF, SIGTERM, origin
  check, being killed mid-request).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import os
import shutil
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import time
import types
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import shotbridge.host
from shotbridge.client.bus_client import BusClient, wait_for_host
from shotbridge.host.extension_link import ExtensionLink
from shotbridge.host.main import Host, NativePort, find_origin
from shotbridge.install import user_config as config
from shotbridge.transport import paths
from shotbridge.transport.framing import BUS, NATIVE, NATIVE_MAX_IN
from shotbridge.wire.errors import BusError, CommandError
from shotbridge.wire.messages import EXTENSION_ORIGIN

PYTHON_DIR = Path(__file__).resolve().parents[1] / "python"
# What the browser may send: Chrome's 64 MiB limit browser -> host, not the host's 1 MB.
BROWSER_SIDE = dataclasses.replace(NATIVE, max_out=NATIVE_MAX_IN)
HELLO = {
    "event": "hello",
    "data": {
        "protocol": 1,
        "extension_version": "0.1.0",
        "profile_id": "prof-A",
        "user_agent": "FakeChrome/1",
        "tracked_tab": 7,
    },
}


@pytest.fixture
def rundir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="sb", dir="/tmp"))  # short: AF_UNIX path limit
    try:
        yield paths.ensure_private_dir(path / "rt")
    finally:
        shutil.rmtree(path, ignore_errors=True)


def run(coro: Any, timeout: float = 15) -> Any:
    return asyncio.run(asyncio.wait_for(coro, timeout))


class FakeExtension:
    """The extension's end of the port, scripted by the test."""

    def __init__(self, reader: asyncio.StreamReader, writer: Any) -> None:
        self.reader = reader
        self.writer = writer  # StreamWriter, or a NativePort

    async def send(self, msg: dict[str, Any]) -> None:
        await self.send_raw(BROWSER_SIDE.encode(msg))

    async def send_raw(self, data: bytes) -> None:
        if isinstance(self.writer, NativePort):
            await self.writer.send(data)
        else:
            self.writer.write(data)
            await self.writer.drain()

    async def next_request(self, timeout: float = 3) -> dict[str, Any]:
        msg = await asyncio.wait_for(NATIVE.aread(self.reader), timeout)
        assert msg is not None, "host closed its stdout"
        return msg

    async def reply(self, request: dict[str, Any], result: dict[str, Any]) -> None:
        await self.send({"id": request["id"], "ok": True, "result": result})

    def disconnect(self) -> None:
        """Close our side of the port: the host sees EOF on stdin."""
        if isinstance(self.writer, NativePort):
            self.writer.close_output()
        else:
            self.writer.close()


# ---- in-process harness ---------------------------------------------------------------------


@contextlib.asynccontextmanager
async def in_process_host(
    rundir: Path, hello: bool = True
) -> AsyncIterator[tuple[Host, FakeExtension]]:
    to_host_r, to_host_w = os.pipe()
    from_host_r, from_host_w = os.pipe()
    host_port = await NativePort.open(to_host_r, from_host_w)
    ext_port = await NativePort.open(from_host_r, to_host_w)
    fake = FakeExtension(ext_port.reader, ext_port)
    host = Host(ExtensionLink(), runtime_dir=rundir, pid=os.getpid())
    serving = asyncio.create_task(host.serve(host_port.reader, host_port.send))
    while not paths.info_path(host.pid, rundir).exists():
        await asyncio.sleep(0.01)
    if hello:
        await fake.send(HELLO)
    try:
        yield host, fake
    finally:
        fake.disconnect()
        await asyncio.wait_for(serving, 5)
        host_port.close()
        ext_port.close()


async def connect(host: Host) -> BusClient:
    return await BusClient.connect_path(host.server.path)


def test_status_reflects_hello_and_tab_changes(rundir: Path) -> None:
    async def scenario() -> None:
        async with in_process_host(rundir) as (host, fake), await connect(host) as client:
            status = await client.request("status")
            for _ in range(50):  # hello is processed asynchronously
                if status["profile_id"]:
                    break
                await asyncio.sleep(0.01)
                status = await client.request("status")
            assert status["pid"] == os.getpid()
            assert status["profile_id"] == "prof-A"
            assert status["extension_version"] == "0.1.0"
            assert status["user_agent"] == "FakeChrome/1"
            assert status["connected"] is True
            assert status["tracked_tab"] == 7
            assert status["protocol"] == 1
            record = json.loads(paths.info_path(os.getpid(), rundir).read_text())
            assert record["profile_id"] == "prof-A" and record["connected"] is True
            await fake.send({"event": "tab_changed", "data": {"tab_id": 9}})
            await asyncio.sleep(0.05)
            assert (await client.request("status"))["tracked_tab"] == 9
            events = (await client.request("events"))["events"]
            assert [e["event"] for e in events] == ["hello", "tab_changed"]

    run(scenario())


def test_forwarding_routes_replies_to_the_right_client(rundir: Path) -> None:
    async def scenario() -> None:
        async with in_process_host(rundir) as (host, fake):
            a, b = await connect(host), await connect(host)
            ask_a = asyncio.create_task(a.request("discover", {"who": "a"}))
            first = await fake.next_request()
            ask_b = asyncio.create_task(b.request("discover", {"who": "b"}))
            second = await fake.next_request()
            # The extension sees fresh host-side ids, not the clients' own.
            assert first["id"] != second["id"] and first["id"].startswith("h")
            assert first["cmd"] == "discover" and first["args"] == {"who": "a"}
            await fake.reply(second, {"for": second["args"]["who"]})  # out of order
            await fake.reply(first, {"for": first["args"]["who"]})
            assert await ask_a == {"for": "a"}
            assert await ask_b == {"for": "b"}
            # An error reply keeps the extension's code.
            ask = asyncio.create_task(a.request("page_info"))
            req = await fake.next_request()
            await fake.send(
                {"id": req["id"], "ok": False, "error": {"code": "no_tab", "message": "none"}}
            )
            with pytest.raises(CommandError) as err:
                await ask
            assert err.value.code == "no_tab"
            await a.close()
            await b.close()

    run(scenario())


def test_big_replies_flow_from_the_extension(rundir: Path) -> None:
    """Browser -> host frames may be far over 1 MB (as captures are, as data URLs)."""

    async def scenario() -> None:
        async with in_process_host(rundir) as (host, fake), await connect(host) as client:
            ask = asyncio.create_task(client.request("page_info"))
            req = await fake.next_request()
            data_url = "data:image/png;base64," + "A" * (6 * 1024 * 1024)
            await fake.reply(req, {"data_url": data_url})
            assert (await ask)["data_url"] == data_url

    run(scenario())


def test_client_leaving_mid_request(rundir: Path) -> None:
    async def scenario() -> None:
        async with in_process_host(rundir) as (host, fake):
            leaver = await connect(host)
            ask = asyncio.create_task(leaver.request("page_info"))
            req = await fake.next_request()
            await leaver.close()
            with pytest.raises(BusError):
                await ask
            await fake.reply(req, {"late": True})  # dropped: its asker is gone
            async with await connect(host) as other:
                ask = asyncio.create_task(other.request("page_info"))
                req = await fake.next_request()
                await fake.reply(req, {"ok": 1})
                assert await ask == {"ok": 1}

    run(scenario())


def test_bad_requests_get_bad_request(rundir: Path) -> None:
    async def scenario() -> None:
        async with in_process_host(rundir) as (host, _fake):
            reader, writer = await asyncio.open_unix_connection(str(host.server.path))
            bad = [
                ({"id": "q1"}, "q1"),  # no cmd
                ({"id": "q2", "cmd": "x", "args": [1]}, "q2"),  # args not a map
                ({"id": 3, "cmd": "status"}, ""),  # id not a string
                ({"id": "q4", "cmd": ""}, "q4"),  # empty cmd
            ]
            for msg, expected_id in bad:
                writer.write(BUS.encode(msg))
                await writer.drain()
                reply = await asyncio.wait_for(BUS.aread(reader), 2)
                assert reply == {"id": expected_id, "ok": False, "error": reply["error"]}
                assert reply["error"]["code"] == "bad_request"
            writer.write(BUS.encode({"id": "ok", "cmd": "status"}))  # still served
            reply = await asyncio.wait_for(BUS.aread(reader), 2)
            assert reply is not None and reply["ok"] and reply["id"] == "ok"
            writer.close()

    run(scenario())


def test_oversized_request_to_the_extension_is_refused(rundir: Path) -> None:
    async def scenario() -> None:
        async with in_process_host(rundir) as (host, fake), await connect(host) as client:
            with pytest.raises(CommandError) as err:
                await client.request("navigate", {"blob": "x" * (1024 * 1024 + 1)})
            assert err.value.code == "bad_request" and "limit" in err.value.message
            with pytest.raises(TimeoutError):  # nothing reached the extension
                await fake.next_request(timeout=0.2)

    run(scenario())


def test_screenshot_is_delegated(rundir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}

    async def take(link: ExtensionLink, args: dict[str, Any], shots: Any = None) -> dict[str, Any]:
        seen["args"] = args
        capture = await link.request("capture", {"format": "png"}, timeout=2)
        return {"image": b"\x89PNG-bytes", "from": capture["data_url"]}

    fake_module = types.ModuleType("shotbridge.host.screenshot")
    fake_module.take = take  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "shotbridge.host.screenshot", fake_module)
    # `from shotbridge.host import screenshot` reads the package attribute once the real module
    # loaded.
    monkeypatch.setattr(shotbridge.host, "screenshot", fake_module, raising=False)

    async def scenario() -> None:
        async with in_process_host(rundir) as (host, fake), await connect(host) as client:
            ask = asyncio.create_task(client.request("screenshot", {"max_width": 800}))
            req = await fake.next_request()
            assert req["cmd"] == "capture"
            await fake.reply(req, {"data_url": "data:x"})
            assert await ask == {"image": b"\x89PNG-bytes", "from": "data:x"}
            assert seen["args"] == {"max_width": 800}
            # An error reply from the extension surfaces through link.request.
            ask = asyncio.create_task(client.request("screenshot"))
            req = await fake.next_request()
            await fake.send(
                {
                    "id": req["id"],
                    "ok": False,
                    "error": {"code": "restricted_page", "message": "no"},
                }
            )
            with pytest.raises(CommandError) as err:
                await ask
            assert err.value.code == "restricted_page"

    run(scenario())


def test_subscribers_get_events_pushed(rundir: Path) -> None:
    async def scenario() -> None:
        async with (
            in_process_host(rundir) as (host, fake),
            await connect(host) as sub,
            await connect(host) as other,
        ):
            await sub.subscribe()
            await fake.send({"event": "tab_changed", "data": {"tab_id": 3}})
            event = await sub.next_event(timeout=2)
            assert event == {"event": "tab_changed", "data": {"tab_id": 3}}
            with pytest.raises(CommandError):  # not subscribed: nothing pushed
                await other.next_event(timeout=0.1)

    run(scenario())


def test_extension_disconnect_fails_pending_requests_promptly(rundir: Path) -> None:
    async def scenario() -> None:
        async with in_process_host(rundir, hello=False) as (host, fake):
            client = await connect(host)
            ask = asyncio.create_task(client.request("page_info", timeout=30))
            await fake.next_request()
            started = time.monotonic()
            fake.disconnect()
            with pytest.raises(CommandError) as err:
                await ask
            assert err.value.code == "not_connected"
            assert time.monotonic() - started < 1
            await client.close()
        assert not paths.info_path(os.getpid(), rundir).exists()
        assert not paths.socket_path(os.getpid(), rundir).exists()

    run(scenario())


def test_link_errors() -> None:
    async def scenario() -> None:
        link = ExtensionLink()
        with pytest.raises(CommandError) as err:
            await link.request("capture")
        assert err.value.code == "not_connected" and not link.connected

        async def swallow(frame: bytes) -> None:
            pass

        link.attach(swallow)
        with pytest.raises(CommandError) as err:
            await link.request("capture", timeout=0.05)
        assert err.value.code == "timeout"
        link.feed({"id": "h999", "ok": True, "result": {}})  # unknown id: ignored
        link.feed({"event": "hello", "data": {"bogus": 1}})  # malformed hello: logged, kept out
        assert link.hello is None and len(link.events) == 1

    run(scenario())


def test_find_origin() -> None:
    assert find_origin([EXTENSION_ORIGIN]) == EXTENSION_ORIGIN
    assert find_origin(["--parent-window=0", EXTENSION_ORIGIN]) == EXTENSION_ORIGIN
    assert find_origin([EXTENSION_ORIGIN, "--parent-window=12"]) == EXTENSION_ORIGIN
    assert find_origin(["other"]) == "other"
    assert find_origin([]) is None


# ---- subprocess harness ---------------------------------------------------------------------


def host_env(rundir: Path, **extra: str) -> dict[str, str]:
    pythonpath = os.pathsep.join(filter(None, [str(PYTHON_DIR), os.environ.get("PYTHONPATH")]))
    return {
        **os.environ,
        "PYTHONPATH": pythonpath,
        "SHOTBRIDGE_RUNTIME_DIR": str(rundir),
        "SHOTBRIDGE_STATE_DIR": str(rundir.parent / "state"),
        **extra,
    }


@contextlib.asynccontextmanager
async def host_process(
    rundir: Path, *args: str, **env: str
) -> AsyncIterator[tuple[asyncio.subprocess.Process, FakeExtension]]:
    stderr = open(rundir.parent / "host.stderr", "ab")  # noqa: SIM115 - closed below
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "shotbridge", "host", *args,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=stderr,
        env=host_env(rundir, **env),
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    try:
        yield proc, FakeExtension(proc.stdout, proc.stdin)
    finally:
        stderr.close()
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


def test_host_process_serves_and_exits_cleanly_on_eof(rundir: Path) -> None:
    async def scenario() -> None:
        async with host_process(rundir, EXTENSION_ORIGIN, "--parent-window=0") as (proc, fake):
            await fake.send(HELLO)
            status = await wait_for_host(rundir, timeout=10)
            assert status.pid == proc.pid and status.profile_id == "prof-A"
            sock = paths.socket_path(proc.pid, rundir)
            assert stat.S_IMODE(os.stat(sock).st_mode) == 0o600
            assert stat.S_IMODE(os.stat(rundir).st_mode) == 0o700
            async with await BusClient.connect(runtime_dir=rundir) as client:
                ask = asyncio.create_task(client.request("ping", {"n": 1}))
                req = await fake.next_request()
                await fake.reply(req, {"pong": 1})
                assert await ask == {"pong": 1}
            fake.disconnect()
            assert await asyncio.wait_for(proc.wait(), 5) == 0
            # stdout carried frames only, and now it is at a clean end.
            assert await NATIVE.aread(fake.reader) is None
            assert not sock.exists()
            assert not paths.info_path(proc.pid, rundir).exists()
        log = (rundir.parent / "state" / "host.log").read_text()
        assert "serving on" in log and "stdin EOF" in log

    run(scenario())


def test_host_process_exits_cleanly_on_sigterm(rundir: Path) -> None:
    async def scenario() -> None:
        async with host_process(rundir, EXTENSION_ORIGIN) as (proc, fake):
            await fake.send(HELLO)
            await wait_for_host(rundir, timeout=10)
            proc.send_signal(signal.SIGTERM)
            assert await asyncio.wait_for(proc.wait(), 5) == 0
            assert list(rundir.iterdir()) == []

    run(scenario())


def test_host_process_exits_on_a_garbage_frame_from_the_browser(rundir: Path) -> None:
    async def scenario() -> None:
        async with host_process(rundir, EXTENSION_ORIGIN) as (proc, fake):
            await fake.send(HELLO)
            await wait_for_host(rundir, timeout=10)
            await fake.send_raw(struct.pack("=I", 5) + b"{oops")
            assert await asyncio.wait_for(proc.wait(), 5) == 1
            assert list(rundir.iterdir()) == []
        assert "bad frame from the extension" in (rundir.parent / "host.stderr").read_text()

    run(scenario())


def test_host_refuses_a_foreign_origin(rundir: Path) -> None:
    async def scenario() -> None:
        async with host_process(rundir, "chrome-extension://evil/") as (proc, fake):
            assert await asyncio.wait_for(proc.wait(), 5) != 0
            assert list(rundir.iterdir()) == []  # never served
        err = (rundir.parent / "host.stderr").read_text()
        assert "refusing to serve caller 'chrome-extension://evil/'" in err
        # A development origin can be allowed explicitly.
        dev = "chrome-extension://devdevdev/"
        async with host_process(rundir, dev, SHOTBRIDGE_ALLOWED_ORIGINS=dev) as (proc, fake):
            await fake.send(HELLO)
            assert (await wait_for_host(rundir, timeout=10)).pid == proc.pid
            fake.disconnect()
            assert await asyncio.wait_for(proc.wait(), 5) == 0

    run(scenario())


def test_killing_the_host_mid_request_fails_the_client_within_2s(rundir: Path) -> None:
    async def scenario() -> None:
        async with host_process(rundir, EXTENSION_ORIGIN) as (proc, fake):
            await fake.send(HELLO)
            await wait_for_host(rundir, timeout=10)
            client = await BusClient.connect(runtime_dir=rundir)
            ask = asyncio.create_task(client.request("page_info", timeout=60))
            await fake.next_request()  # the capture is in flight in the extension
            proc.kill()
            started = time.monotonic()
            with pytest.raises(BusError):
                await ask
            assert time.monotonic() - started < 2
            await client.close()
            await proc.wait()
        assert paths.list_hosts(rundir) == []  # the dead host's leftovers are swept

    run(scenario())


def test_claim_stdout_keeps_fd1_for_frames_only() -> None:
    code = (
        "import os; from shotbridge.host.main import claim_stdout\n"
        "fd = claim_stdout(); print('stray print'); os.system('echo from a child')\n"
        "os.write(fd, b'FRAME')\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, timeout=10,
        env={**os.environ, "PYTHONPATH": str(PYTHON_DIR)},
    )  # fmt: skip
    assert out.stdout == b"FRAME"
    assert b"stray print" in out.stderr and b"from a child" in out.stderr


# ---- raw CDP: the user's decision -----------------------------------------------------------


def test_raw_cdp_is_refused_when_the_user_has_not_enabled_it(
    rundir: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A client claiming permission (allow, allow_cdp) gets nothing: the host's config decides."""
    monkeypatch.setenv("SHOTBRIDGE_CONFIG_DIR", str(rundir.parent / "config"))

    async def scenario() -> None:
        async with in_process_host(rundir) as (host, fake), await connect(host) as client:
            asks = [
                ("cdp", {"method": "Network.getAllCookies", "allow": True}),
                ("interact", {"action": "cdp", "method": "Runtime.evaluate", "allow_cdp": True}),
            ]
            for cmd, args in asks:
                with pytest.raises(CommandError) as err:
                    await client.request(cmd, args)
                assert err.value.code == "bad_request"
                assert "`shotctl config allow-cdp on`" in err.value.message
            with pytest.raises(TimeoutError):  # nothing reached the extension
                await fake.next_request(timeout=0.2)

    with caplog.at_level(logging.INFO, logger="shotbridge"):
        run(scenario())
    pid = os.getpid()
    assert f"raw CDP Network.getAllCookies from client pid {pid}: refused" in caplog.text
    assert f"raw CDP Runtime.evaluate from client pid {pid}: refused" in caplog.text


def test_raw_cdp_follows_the_config_without_a_restart(
    rundir: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("SHOTBRIDGE_CONFIG_DIR", str(rundir.parent / "config"))
    config.save(config.HostConfig(allow_cdp=True))

    async def scenario() -> None:
        async with in_process_host(rundir) as (host, fake), await connect(host) as client:
            ask = asyncio.create_task(
                client.request("cdp", {"method": "Runtime.evaluate", "params": {"expression": "1"}})
            )
            req = await fake.next_request()
            assert req["cmd"] == "cdp" and req["args"]["allow"] is True
            assert req["args"]["method"] == "Runtime.evaluate"
            await fake.reply(req, {"method": "Runtime.evaluate", "result": {"value": 1}})
            assert (await ask)["result"] == {"value": 1}

            config.save(config.HostConfig(allow_cdp=False))  # `shotctl config allow-cdp off`
            with pytest.raises(CommandError) as err:
                await client.request("cdp", {"method": "Runtime.evaluate", "allow": True})
            assert "allow-cdp on" in err.value.message
            with pytest.raises(TimeoutError):
                await fake.next_request(timeout=0.2)

    with caplog.at_level(logging.INFO, logger="shotbridge"):
        run(scenario())
    assert f"raw CDP Runtime.evaluate from client pid {os.getpid()}: allowed" in caplog.text


def test_raw_cdp_never_returns_unmasked_images(
    rundir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHOTBRIDGE_CONFIG_DIR", str(rundir.parent / "config"))
    config.save(config.HostConfig(allow_cdp=True))

    async def scenario() -> None:
        async with in_process_host(rundir) as (host, fake), await connect(host) as client:
            for method, params in [
                ("Page.captureSnapshot", {}),
                ("Page.startScreencast", {}),
                ("Page.printToPDF", {}),
                ("LayerTree.replaySnapshot", {"snapshotId": "1"}),
                ("HeadlessExperimental.beginFrame", {}),
                ("Page.captureScreenshot", {"clip": {"x": 0, "y": 0, "width": 9, "height": 9}}),
            ]:
                with pytest.raises(CommandError) as err:
                    await client.request("cdp", {"method": method, "params": params})
                assert err.value.code == "bad_request", method
            # The extension's `capture` hands out pixels before the masks: host-internal.
            with pytest.raises(CommandError) as err:
                await client.request("capture", {})
            assert "screenshot" in err.value.message
            with pytest.raises(TimeoutError):
                await fake.next_request(timeout=0.2)

    run(scenario())


# ---- file modes: what the host writes is the user's alone -----------------------------------


def test_state_dir_and_host_log_are_private(rundir: Path) -> None:
    """They were 0755 and 0644 under the usual umask: anyone could read the pages' URLs."""
    state = rundir.parent / "state"
    state.mkdir(mode=0o755)
    os.chmod(state, 0o755)  # as an older version left it
    (state / "host.log").write_text("old\n")
    os.chmod(state / "host.log", 0o644)

    async def scenario() -> None:
        old = os.umask(0o022)
        try:
            async with host_process(rundir, EXTENSION_ORIGIN) as (proc, fake):
                await fake.send(HELLO)
                await wait_for_host(rundir, timeout=10)
                fake.disconnect()
                assert await asyncio.wait_for(proc.wait(), 5) == 0
        finally:
            os.umask(old)

    run(scenario())
    assert stat.S_IMODE(state.stat().st_mode) == 0o700
    assert stat.S_IMODE((state / "host.log").stat().st_mode) == 0o600
    assert "serving on" in (state / "host.log").read_text()


def test_a_new_host_log_is_0600(tmp_path: Path) -> None:
    from shotbridge.host.main import PrivateLogFile

    old = os.umask(0o022)
    try:
        handler = PrivateLogFile(tmp_path / "host.log", maxBytes=50, backupCount=1)
        for i in range(5):  # rotates: the new file after the rollover is private too
            handler.emit(logging.makeLogRecord({"msg": f"line {i} " + "x" * 30}))
        handler.close()
    finally:
        os.umask(old)
    logs = sorted(tmp_path.iterdir())
    assert [p.name for p in logs] == ["host.log", "host.log.1"]
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in logs)


def test_state_dir_is_made_0700(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHOTBRIDGE_STATE_DIR", str(tmp_path / "a" / "state"))
    old = os.umask(0o022)
    try:
        path = paths.state_dir()
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o700
