"""The assistant on another machine, the browser here: through a real ``ssh -R`` made by
``shotctl remote ssh``, to a real sshd and a second account (tests/e2e/remote_sshd.py).

The laptop is this process's user with the real host and extension in headless Chromium. On the
remote account, with HOME and PATH only and no flag: ``shotctl mcp`` finds the forwarded browser
and captures, annotates, clicks and generates a test; ``shotctl capture FILE`` of a file there is
served by the laptop's host; a URL naming the remote's localhost is refused with what to do; the
laptop's doctor lists the remote client as forwarded; a broken forward gets the remote doctor's
fix. The same client in a new mount namespace that sees only the mounted bus folder (a container)
reaches the browser through ``SHOTBRIDGE_BUS``.
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from shotbridge import __version__
from shotbridge.client.browser import HeadlessBrowser
from shotbridge.client.bus_client import BusClient

from tests.e2e.conftest import start_browser
from tests.e2e.headed import VENV_BIN, images_of, text_of
from tests.e2e.remote_sshd import Forward, Remote, Sshd, free_port, mcp_params, remote_machine

DEBUG_PORT = free_port()  # the popup is read over DevTools, as tests/e2e/test_popup.py does


@pytest.fixture(scope="module")
def laptop() -> Iterator[HeadlessBrowser]:
    browser = start_browser(
        window_size=(1280, 800), extra_args=(f"--remote-debugging-port={DEBUG_PORT}",)
    )
    yield browser
    browser.close()


@pytest.fixture(scope="module")
def machine() -> Iterator[tuple[Remote, Sshd]]:
    with remote_machine() as found:
        yield found


POPUP = "chrome-extension://lgpadcfmcnglbejkodbbdfcnfnaffoae/popup/popup.html"


def laptop_env(laptop: HeadlessBrowser) -> dict[str, str]:
    """The laptop user's terminal: the browser's host is found in its runtime dir."""
    return {**os.environ, "SHOTBRIDGE_RUNTIME_DIR": str(laptop.runtime_dir)}


@pytest.fixture(scope="module")
def forward(laptop: HeadlessBrowser, machine: tuple[Remote, Sshd]) -> Iterator[Forward]:
    fwd = Forward(machine[1], laptop_env(laptop)).start()
    yield fwd
    fwd.close()


def on_laptop(laptop: HeadlessBrowser, cmd: str, args: dict[str, Any]) -> dict[str, Any]:
    """What the laptop's user does in their browser (here: through its own bus)."""

    async def once() -> dict[str, Any]:
        async with await BusClient.connect(runtime_dir=laptop.runtime_dir) as client:
            return await client.request(cmd, args, timeout=30)

    return asyncio.run(once())


async def _remote_mcp(remote: Remote, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    results = []
    async with stdio_client(mcp_params(remote)) as (r, w), ClientSession(r, w) as session:
        await session.initialize()
        for name, args in calls:
            result = await session.call_tool(name, args)
            assert not result.is_error, text_of(result)
            results.append(result)
    return results


def test_mcp_on_the_remote_drives_the_laptops_browser(
    laptop: HeadlessBrowser, machine: tuple[Remote, Sshd], forward: Forward, pages_url: str
) -> None:
    remote, _ = machine
    # The user opened their page on the laptop; the assistant on the remote works on that tab.
    on_laptop(laptop, "navigate", {"url": f"{pages_url}/interact.html"})
    looked, _clicked, after, spec = asyncio.run(
        _remote_mcp(
            remote,
            [
                ("observe", {"what": "page", "annotate_screenshot": True, "map": "full"}),
                ("interact", {"action": "click", "selector": "#count-btn"}),
                ("observe", {"what": "page"}),
                ("generate_test", {"assert_visual": False}),
            ],
        )
    )
    assert len(images_of(looked)) == 1
    labels = json.loads(next(b.text for b in looked.content if b.type == "text"))
    names = {a.get("name") for a in labels["annotations"]}
    assert {"Increment", "Search"} <= names
    assert "headless" not in text_of(looked)  # the laptop's browser, not one of the remote's
    assert "Interact fixture" in text_of(after)
    found = on_laptop(laptop, "discover", {"target": "all_visible"})
    assert "clicks=1 dbl=0 ctx=0 trusted=true" in json.dumps(
        found
    )  # a real click, in the laptop's tab
    assert "Increment" in text_of(spec) and "click()" in text_of(spec)


def test_laptop_doctor_lists_the_remote_client_as_forwarded(
    laptop: HeadlessBrowser, machine: tuple[Remote, Sshd], forward: Forward
) -> None:
    remote, _ = machine

    def doctor() -> list[str]:
        done = subprocess.run(
            [str(VENV_BIN / "shotctl"), "doctor", "--json"],
            env=laptop_env(laptop),
            capture_output=True,
            text=True,
        )
        checks = json.loads(done.stdout)["checks"]
        return [c["detail"] for c in checks if c["name"].startswith("client of host")]

    async def while_connected() -> tuple[list[str], str]:
        from mcp import ClientSession
        from mcp.client.stdio import stdio_client

        async with stdio_client(mcp_params(remote)) as (r, w), ClientSession(r, w) as session:
            await session.initialize()
            await session.call_tool("observe", {"what": "tabs"})  # connects: says hello
            return await asyncio.to_thread(doctor), await asyncio.to_thread(read_popup, tmp)

    tmp = forward.sshd.root
    assert doctor() == []  # no client yet
    clients, popup = asyncio.run(while_connected())
    assert len(clients) == 1 and clients[0].startswith(f"shotctl mcp {__version__} "), clients
    assert clients[0].endswith("over a forward (SSH or a mounted socket)")
    # The popup of the laptop's browser lists the same client, marked, with what it means.
    listed = popup.split("Using this browser now:", 1)[1].split()
    assert listed[:3] == ["shotctl", "mcp", __version__], popup
    assert "— over a forward (SSH or a mounted socket)" in popup
    assert "can drive this browser while the forward is open" in popup


READ_POPUP = r"""
const { chromium } = require('playwright');
(async () => {
  const browser = await chromium.connectOverCDP(`http://127.0.0.1:${process.argv[2]}`);
  const page = await browser.contexts()[0].newPage();
  await page.goto(process.argv[3]);
  await page.waitForSelector('#clients[data-loaded]:not([data-loaded="0"])', { timeout: 20000 });
  console.log(JSON.stringify(await page.evaluate(() => document.body.innerText)));
  await page.close();
  process.exit(0);
})().catch((e) => { console.error(e); process.exit(1); });
"""


def read_popup(tmp: Path) -> str:
    script = tmp / "read_popup.cjs"
    script.write_text(READ_POPUP)
    env = {**os.environ, "NODE_PATH": str(Path(__file__).parent / "node_modules")}
    argv = ["node", str(script), str(DEBUG_PORT), POPUP]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout.strip().splitlines()[-1]))


def test_a_file_on_the_remote_is_captured_by_the_laptops_browser(
    machine: tuple[Remote, Sshd], forward: Forward
) -> None:
    remote, _ = machine
    page = remote.write(
        "proj/index.html",
        "<!doctype html><title>Remote page</title><link rel=stylesheet href=site.css>"
        "<h1>Built on the remote</h1><button>Ship it</button>",
    )
    remote.write("proj/site.css", "h1 { color: rgb(200, 0, 0) }")
    remote.write("proj/.env", "SECRET=do-not-send")
    out = remote.home / "shot.jpg"
    done = remote.run("shotctl", "capture", str(page), "--annotate", "--json", "-o", str(out))
    assert done.returncode == 0, done.stderr
    meta = json.loads(done.stdout)
    assert meta["title"] == "Remote page"
    assert meta["url"].startswith("http://127.0.0.1:") and meta["url"].endswith("/index.html")
    assert [a["name"] for a in meta["annotations"]] == ["Ship it"]
    assert out.stat().st_size > 1000  # written where the command ran: on the remote


def test_the_remote_socket_is_private(machine: tuple[Remote, Sshd], forward: Forward) -> None:
    """0600 (sshd's StreamLocalBindMask) in a 0700 folder, both the remote account's."""
    remote, _ = machine
    folder = remote.home / ".local/state/shotbridge/forward"
    sock = folder / "bus.sock"
    assert stat.S_ISSOCK(sock.lstat().st_mode)
    assert (stat.S_IMODE(folder.lstat().st_mode), stat.S_IMODE(sock.lstat().st_mode)) == (
        0o700,
        0o600,
    )
    assert folder.lstat().st_uid == sock.lstat().st_uid == remote.uid


def test_a_url_of_the_remotes_localhost_says_to_forward_the_port(
    machine: tuple[Remote, Sshd], forward: Forward
) -> None:
    remote, _ = machine
    done = remote.run(
        "shotctl", "capture", "http://localhost:5173/", "-o", str(remote.home / "x.jpg")
    )
    assert done.returncode == 2
    assert "names localhost of" in done.stderr and "--forward-port 5173" in done.stderr


def hidden_dirs() -> list[str]:
    """Where sockets and host records could be, emptied in the container. A folder that holds the
    interpreter, the venv or the package (a pyenv under /root, a checkout under /tmp) stays; only
    the records kept in it are hidden then."""
    import shotbridge

    needed = [Path(sys.executable), Path(sys.executable).resolve(), Path(shotbridge.__file__)]
    dirs = []
    for d in ("/tmp", "/run", "/home", "/root"):
        if any(p.is_relative_to(d) for p in needed):
            kept = [Path(d) / ".local", Path(d) / f"shotbridge-{os.getuid()}"]
            dirs += [str(p) for p in kept if p.is_dir()]
        else:
            dirs.append(d)
    return dirs


def test_a_container_sees_only_the_mounted_bus(laptop: HeadlessBrowser, forward: Forward) -> None:
    """A new mount namespace in which those places are empty: the only way to a browser is the
    laptop's bus folder, mounted at /mnt, named by SHOTBRIDGE_BUS (as a container is set up)."""
    home = Path(tempfile.mkdtemp(prefix="sb-container-home-"))  # a tmpfs inside: stays empty here
    script = (
        'set -e; mount --bind "$1" /mnt; '
        f"for d in {' '.join(hidden_dirs())}; do mount -t tmpfs tmpfs $d; done; "
        'mkdir -p "$2"; mount -t tmpfs tmpfs "$2"; shift 2; '
        f"exec env -i HOME={home} PATH={VENV_BIN}:/usr/bin:/bin SHOTBRIDGE_BUS=/mnt "
        f'{sys.executable} -m shotbridge "$@"'
    )
    unshare = ["unshare", "--mount", "--propagation", "private"]
    if os.geteuid() != 0:
        unshare.insert(1, "--map-root-user")
    argv = [*unshare, "sh", "-c", script, "sh", str(laptop.runtime_dir), str(home)]
    doctor = subprocess.run([*argv, "remote", "doctor"], capture_output=True, text=True, timeout=60)
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert "forwarded bus: /mnt/" in doctor.stdout
    out = f"{home}/shot.jpg"
    shot = subprocess.run(
        [*argv, "capture", "--json", "-o", out], capture_output=True, text=True, timeout=90
    )
    assert shot.returncode == 0, shot.stderr
    assert json.loads(shot.stdout)["title"] == "Interact fixture"  # the laptop's tab
    assert not Path(out).exists()  # written inside the container only


def children(pid: int) -> list[int]:
    found = []
    for stat_file in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat_file.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat_file.parent.name))
    return found


def test_a_dropped_connection_comes_back(forward: Forward) -> None:
    """The SSH connection dies (its ssh ends): shotctl remote ssh connects again by itself."""
    assert forward.process is not None
    (ssh,) = children(forward.process.pid)
    os.kill(ssh, 15)
    for _ in range(120):
        if ssh not in children(forward.process.pid) and forward.remote_answers():
            break
        time.sleep(0.25)
    assert forward.remote_answers()
    assert "connection ended (ssh exit" in forward.log.read_text()


def test_a_broken_forward_gets_the_doctors_fix(
    machine: tuple[Remote, Sshd], forward: Forward
) -> None:
    remote, _ = machine
    forward.close()  # the laptop's side ends: the remote socket is left behind, dead
    done = remote.run("shotctl", "remote", "doctor")
    assert done.returncode == 1
    assert "no host answers it" in done.stdout
    assert "fix: on the laptop" in done.stdout and "shotctl remote ssh" in done.stdout
    # And the MCP server there says what to do, rather than starting a browser of its own.
    mcp = remote.run(
        "shotctl", "capture", "--browser", "connected", "-o", str(remote.home / "y.jpg")
    )
    assert mcp.returncode == 3 and "shotctl remote ssh" in mcp.stderr
