"""The pieces of the remote path one at a time: where a forwarded bus is looked for and which
sockets count, the hello a client says and what the host lists of it, the version check, the
URLs of another machine's localhost, the page bundle both ends check, and what
``shotctl remote`` prints. The whole path, through a real sshd, is tests/e2e/test_remote_ssh.py.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from shotbridge import __version__
from shotbridge.cli import main
from shotbridge.client.bus_client import BusClient, VersionMismatchError, loopback_port
from shotbridge.client.page_bundle import bundle
from shotbridge.host import served_pages
from shotbridge.transport import paths
from shotbridge.transport.framing import BUS
from shotbridge.wire.errors import CommandError
from shotbridge.wire.messages import PAGE_BUNDLE_MAX_BYTES, PageBundle

from tests.test_host import in_process_host


@pytest.fixture
def short_dir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="sbu", dir="/tmp"))  # short: AF_UNIX path limit
    yield path
    shutil.rmtree(path, ignore_errors=True)


def listening(path: Path) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(path))
    sock.listen(1)
    return sock


# ---- where clients look -------------------------------------------------------------------------


def test_shotbridge_bus_names_a_socket_or_a_folder_of_them(
    short_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old, new = listening(short_dir / "host-1.sock"), listening(short_dir / "host-2.sock")
    os.utime(short_dir / "host-1.sock", (1, 1))
    (short_dir / "host-3.json").write_text("{}")  # records are not trusted from a mount
    monkeypatch.setenv("SHOTBRIDGE_BUS", str(short_dir))
    assert paths.forward_candidates() == [short_dir / "host-2.sock", short_dir / "host-1.sock"]
    monkeypatch.setenv("SHOTBRIDGE_BUS", str(short_dir / "host-1.sock"))
    assert paths.forward_candidates() == [short_dir / "host-1.sock"]
    monkeypatch.setenv("SHOTBRIDGE_BUS", str(short_dir / "missing.sock"))
    assert paths.forward_candidates() == []
    old.close(), new.close()


def test_the_forward_counts_only_in_a_private_folder_of_ours(
    short_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SHOTBRIDGE_BUS", raising=False)
    monkeypatch.setenv("HOME", str(short_dir))
    assert paths.forward_candidates() == []
    folder = paths.forward_dir()
    folder.parent.mkdir(parents=True)
    real = short_dir / "elsewhere"
    real.mkdir()
    folder.symlink_to(real)  # a symlinked folder could lead to anyone's socket
    listening(real / "bus.sock")
    assert paths.forward_candidates() == []
    folder.unlink()
    folder.mkdir(mode=0o700)
    sock = listening(folder / "bus.sock")
    assert paths.forward_candidates() == [folder / "bus.sock"]
    sock.close()


def test_hosts_keep_bus_sock_leading_to_a_live_host(short_dir: Path) -> None:
    def record(pid: int) -> paths.HostInfo:
        return paths.HostInfo(
            pid=pid, started=0, last_active=0, socket=str(short_dir / f"host-{pid}.sock")
        )

    first = listening(short_dir / "host-11.sock")
    paths.write_host_info(record(11), short_dir)
    assert os.readlink(short_dir / "bus.sock") == "host-11.sock"  # relative: works in a mount
    second = listening(short_dir / "host-12.sock")
    paths.write_host_info(record(12), short_dir)
    assert os.readlink(short_dir / "bus.sock") == "host-11.sock"  # a live host keeps it
    first.close()
    paths.remove_host_files(11, short_dir)
    assert not (short_dir / "bus.sock").exists()
    paths.write_host_info(record(12), short_dir)
    assert os.readlink(short_dir / "bus.sock") == "host-12.sock"
    second.close()


def test_urls_of_this_machines_loopback() -> None:
    assert loopback_port("http://localhost:3000/app") == 3000
    assert loopback_port("https://app.localhost/") == 443
    assert loopback_port("http://127.0.0.2:8080") == 8080
    assert loopback_port("http://[::1]:5173/") == 5173
    assert loopback_port("http://0.0.0.0:8000/") == 8000
    assert loopback_port("https://example.com/") is None
    assert loopback_port("http://10.0.0.5:3000/") is None
    assert loopback_port("data:text/html,hi") is None
    assert loopback_port("http://localhost:99999/") is None  # not a port: not ours to judge


# ---- hello, the version check, the clients listed -----------------------------------------------


@pytest.fixture
def rundir(short_dir: Path) -> Path:
    return paths.ensure_private_dir(short_dir / "rt")


def test_hello_is_listed_with_forwarded_as_said(rundir: Path) -> None:
    async def scenario() -> None:
        async with in_process_host(rundir) as (host, _fake):
            local = await BusClient.connect_path(host.server.path)
            via = paths.HostInfo(pid=0, started=0, last_active=0, socket="x", via="/mnt/bus.sock")
            remote = await BusClient.connect_path(host.server.path, info=via)
            anonymous = await BusClient.connect_path(host.server.path)
            await local.hello("shotctl capture")
            status = await remote.hello("shotctl mcp")
            assert remote.host_version == __version__
            assert remote.info is not None and remote.info.pid == os.getpid()  # the host's own
            await anonymous.request("status")
            listed = [(c.name, c.forwarded, c.machine) for c in status.clients]
            assert listed == [
                ("shotctl capture", False, socket.gethostname()),
                ("shotctl mcp", True, socket.gethostname()),
            ]
            for client in (local, remote, anonymous):
                await client.close()

    asyncio.run(asyncio.wait_for(scenario(), 15))


async def _answering(path: Path, answer: dict[str, object]) -> asyncio.Server:
    """A host of another version: answers every request with ``answer``."""

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while (msg := await BUS.aread(reader)) is not None:
            writer.write(BUS.encode({"id": msg["id"], **answer}))

    return await asyncio.start_unix_server(serve, str(path))


def test_a_version_mismatch_is_one_sentence(short_dir: Path) -> None:
    status = {"pid": 7, "connected": True, "profile_id": "p", "started": 0, "last_active": 0}
    reply = {"ok": True, "result": {"version": "9.9.9", "status": status}}

    async def scenario() -> str:
        server = await _answering(short_dir / "h.sock", reply)
        via = paths.HostInfo(pid=0, started=0, last_active=0, socket="s", via="/remote/bus.sock")
        async with server, await BusClient.connect_path(short_dir / "h.sock", info=via) as client:
            with pytest.raises(VersionMismatchError) as caught:
                await client.hello("shotctl mcp")
        return str(caught.value)

    said = asyncio.run(scenario())
    assert said == (
        f"shotbridge {__version__} here cannot drive the host behind /remote/bus.sock, which runs "
        "shotbridge 9.9.9: install the same version on both sides"
    )


def test_an_older_host_without_hello_is_asked_status(short_dir: Path) -> None:
    status = {"pid": 7, "connected": True, "profile_id": "p", "started": 0, "last_active": 0}

    async def scenario() -> None:
        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            while (msg := await BUS.aread(reader)) is not None:
                if msg["cmd"] == "status":
                    frame = {"id": msg["id"], "ok": True, "result": status}
                else:
                    error = {"code": "bad_request", "message": "unknown command"}
                    frame = {"id": msg["id"], "ok": False, "error": error}
                writer.write(BUS.encode(frame))

        server = await asyncio.start_unix_server(serve, str(short_dir / "old.sock"))
        async with server, await BusClient.connect_path(short_dir / "old.sock") as client:
            assert (await client.hello("shotctl mcp")).pid == 7

    asyncio.run(asyncio.wait_for(scenario(), 10))


def test_a_forwarded_client_refuses_its_own_localhost(
    short_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(short_dir))
    reply = {"ok": True, "result": {}}

    async def scenario() -> None:
        server = await _answering(short_dir / "f.sock", reply)
        via = paths.HostInfo(pid=0, started=0, last_active=0, socket="s", via="/x/bus.sock")
        async with server, await BusClient.connect_path(short_dir / "f.sock", info=via) as client:
            with pytest.raises(CommandError, match="--forward-port 3000"):
                await client.request("screenshot", {"url": "http://localhost:3000/"})
            paths.forward_dir().mkdir(parents=True)
            (paths.forward_dir() / "ports").write_text("3000\n")  # shotctl remote ssh said so
            await client.request("screenshot", {"url": "http://localhost:3000/"})
            await client.request("screenshot", {"url": "https://example.com/"})

    asyncio.run(asyncio.wait_for(scenario(), 10))


# ---- a remote file: what the client packs, what the host accepts --------------------------------


def test_the_bundle_holds_what_the_local_server_would_serve(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text("<title>x</title>")
    (tmp_path / "css").mkdir()
    (tmp_path / "css" / "site.css").write_text("h1{}")
    (tmp_path / ".env").write_text("SECRET=1")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("[core]")
    outside = tmp_path.parent / f"{tmp_path.name}-outside.txt"
    outside.write_text("elsewhere")
    (tmp_path / "link.txt").symlink_to(outside)
    (tmp_path / "hard.txt").write_text("two names")
    os.link(tmp_path / "hard.txt", tmp_path / "hard2.txt")
    packed = bundle(tmp_path / "index.html")
    assert packed.page == "index.html"
    assert sorted(packed.files) == ["css/site.css", "index.html"]
    outside.unlink()


@pytest.mark.parametrize("name", ["../x", "/etc/passwd", ".env", "a/.git/config", "a\\b", ""])
def test_the_host_refuses_paths_that_leave_the_bundle(name: str) -> None:
    with pytest.raises(CommandError, match="relative path without dot segments"):
        served_pages.checked_path(name)


def test_the_host_refuses_an_oversized_bundle(tmp_path: Path) -> None:
    big = PageBundle(page="a.html", files={"a.html": b"x" * (PAGE_BUNDLE_MAX_BYTES + 1)})
    with pytest.raises(CommandError, match="at most"):
        served_pages.write_bundle(big, tmp_path / "page")
    missing = PageBundle(page="b.html", files={"a.html": b"x"})
    with pytest.raises(CommandError, match="page must be one of the files"):
        served_pages.write_bundle(missing, tmp_path / "page2")


# ---- what shotctl remote prints -----------------------------------------------------------------


def test_remote_ssh_print(monkeypatch: pytest.MonkeyPatch, short_dir: Path) -> None:
    monkeypatch.setenv("SHOTBRIDGE_RUNTIME_DIR", str(short_dir))
    argv = ["remote", "ssh", "--print", "--forward-port", "3000", "dev@box", "-p", "2222"]
    out = CliRunner().invoke(main, argv).output
    remote = "/home/dev/.local/state/shotbridge/forward/bus.sock"
    assert f"-R {remote}:{short_dir}/bus.sock -L 3000:localhost:3000 -p 2222 dev@box" in out
    assert f"RemoteForward {remote} {short_dir}/bus.sock" in out
    assert "LocalForward 3000 localhost:3000" in out
    assert "StreamLocalBindUnlink yes" in out


def test_remote_devcontainer_prints_a_mount_and_the_variable(
    monkeypatch: pytest.MonkeyPatch, short_dir: Path
) -> None:
    monkeypatch.setenv("SHOTBRIDGE_RUNTIME_DIR", str(short_dir))
    out = CliRunner().invoke(main, ["remote", "devcontainer"]).output
    body = out.split("\n", 1)[1].split("\n\n# docker run")[0]
    entries = json.loads(body)
    assert entries["mounts"] == [f"source={short_dir},target=/run/shotbridge-host,type=bind"]
    assert entries["containerEnv"] == {"SHOTBRIDGE_BUS": "/run/shotbridge-host"}
    assert f"-v {short_dir}:/run/shotbridge-host -e SHOTBRIDGE_BUS=/run/shotbridge-host" in out


def test_remote_doctor_without_a_forward_prints_the_fix(
    monkeypatch: pytest.MonkeyPatch, short_dir: Path
) -> None:
    monkeypatch.setenv("HOME", str(short_dir))
    monkeypatch.delenv("SHOTBRIDGE_BUS", raising=False)
    done = CliRunner().invoke(main, ["remote", "doctor"])
    assert done.exit_code == 1
    assert "nothing was forwarded here" in done.output
    assert (
        f"fix: on the laptop with the browser, run `shotctl remote ssh {socket.gethostname()}`"
        in done.output
    )


def test_capture_bus_names_the_only_bus_to_use(
    short_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--bus with nothing behind it: no local host and no headless browser instead, the fix."""
    monkeypatch.setenv("SHOTBRIDGE_BUS", "")  # --bus sets it for the process: undone after
    done = CliRunner().invoke(main, ["capture", "--bus", str(short_dir), "-o", "x.jpg"])
    assert done.exit_code == 3
    assert "no browser reachable through a forward" in done.output
    assert "shotctl remote ssh" in done.output
