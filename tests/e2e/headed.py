"""A headed Chromium under Xvfb, set up the way README tells a user: the real desktop case.

Nothing here writes a host manifest: each test registers the host with ``shotctl install`` (or
``--user-data-dir``) exactly as README says, and loads the extension with ``--load-extension``
from ``shotctl extension-path`` (Debian's Chromium honours the flag; branded Chrome users load it
unpacked from chrome://extensions instead).

A :class:`Desktop` is one fake user session: its own HOME and XDG_RUNTIME_DIR (so the machine's
real configuration and other test runs are never touched) and an Xvfb display. Every command a
test runs as "the user" gets :meth:`Desktop.env`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from unittest import mock

from shotbridge.client.browser import BASE_FLAGS, find_chrome

VENV_BIN = Path(sys.executable).parent
# Variables a test's own environment may carry that would steer discovery away from the desktop.
_DROPPED = ("SHOTBRIDGE_", "XDG_", "DISPLAY", "WAYLAND_DISPLAY", "CHROME_PATH")


class Xvfb:
    """An X server on a free display number (``-displayfd`` lets Xvfb pick one)."""

    def __init__(self, size: str = "1600x1000x24") -> None:
        self.size = size
        self.process: subprocess.Popen[bytes] | None = None
        self.display = ""

    def start(self) -> Xvfb:
        read_fd, write_fd = os.pipe()
        self.process = subprocess.Popen(
            ["Xvfb", "-displayfd", str(write_fd), "-screen", "0", self.size, "-nolisten", "tcp"],
            pass_fds=(write_fd,),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        os.close(write_fd)
        with os.fdopen(read_fd) as pipe:
            number = pipe.readline().strip()  # written once the server accepts clients
        if not number:
            self.close()
            raise RuntimeError("Xvfb did not report a display number")
        self.display = f":{number}"
        return self

    def close(self) -> None:
        proc, self.process = self.process, None
        if proc is not None and proc.poll() is None:
            _end_group(proc)


class Desktop:
    """One user's session: HOME, XDG_RUNTIME_DIR (0700) and DISPLAY, all private to the test."""

    def __init__(self, xvfb: Xvfb) -> None:
        self.xvfb = xvfb
        self.root = Path(tempfile.mkdtemp(prefix="sbd-"))  # short: sockets live below it
        self.home = self.root / "home"
        self.runtime = self.root / "xdg"
        self.home.mkdir()
        self.runtime.mkdir(mode=0o700)

    def env(self, **extra: str) -> dict[str, str]:
        """The full environment of a terminal in this session (what README's commands get)."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(_DROPPED)}
        env.update(
            HOME=str(self.home),
            XDG_RUNTIME_DIR=str(self.runtime),
            DISPLAY=self.xvfb.display,
            PATH=f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}",
        )
        env.update(extra)
        return env

    def minimal_env(self) -> dict[str, str]:
        """What an IDE passes an MCP server: the MCP SDK's default environment, this HOME."""
        from mcp.client.stdio import get_default_environment

        env = get_default_environment()
        env["HOME"] = str(self.home)
        env["PATH"] = f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}"
        return env

    def run(
        self, *args: str, env: Mapping[str, str] | None = None, timeout: float = 60
    ) -> subprocess.CompletedProcess[str]:
        """Run a command as the user (``shotctl …`` resolves to this checkout's venv)."""
        return subprocess.run(
            list(args),
            env=dict(env) if env is not None else self.env(),
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    @contextlib.contextmanager
    def as_user(self) -> Iterator[None]:
        """In-process clients (BusClient) see this session's HOME and XDG_RUNTIME_DIR."""
        with mock.patch.dict(os.environ, self.env(), clear=True):
            yield

    def wait_hosts(self, count: int, timeout: float = 60) -> list[dict[str, Any]]:
        """Poll until ``count`` hosts with a connected extension are registered; their records."""
        from shotbridge.transport import paths

        deadline = time.monotonic() + timeout
        with self.as_user():
            while True:
                hosts = [h for h in paths.list_hosts() if h.connected and h.profile_id]
                if len(hosts) >= count:
                    return [h.model_dump() for h in hosts]
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{len(hosts)} of {count} hosts connected")
                time.sleep(0.1)

    def doctor_until(self, text: str, *args: str, timeout: float = 60) -> str:
        """Run `shotctl doctor ARGS` until its output contains ``text``; the last output.

        Chromium writes a profile's Preferences (where doctor sees the extension) some seconds
        after start, so a check right after launch may not list the profile yet.
        """
        deadline = time.monotonic() + timeout
        while True:
            out = self.run("shotctl", "doctor", *args).stdout
            if text in out or time.monotonic() > deadline:
                return out
            time.sleep(0.5)

    def status(self, host: str | None = None) -> dict[str, Any]:
        from shotbridge.client.bus_client import request_sync

        with self.as_user():
            return request_sync("status", host=host, timeout=5)

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


class HeadedChromium:
    """Chromium with a window on the desktop's display and a normal, persistent profile.

    ``profile=None`` uses Chromium's default profile folder (``~/.config/chromium``), like a user
    who just runs ``chromium``; otherwise ``--user-data-dir=profile``.
    """

    def __init__(
        self,
        desktop: Desktop,
        profile: Path | None = None,
        *,
        extension: Path | None = None,
        start_url: str = "about:blank",
        window_size: tuple[int, int] = (1280, 800),
    ) -> None:
        self.desktop = desktop
        self.profile = profile
        self.extension = extension
        self.start_url = start_url
        self.window_size = window_size
        self.process: subprocess.Popen[bytes] | None = None
        self.log_path = desktop.root / f"chromium-{id(self)}.log"

    def args(self) -> list[str]:
        extension = self.extension or Path(
            self.desktop.run("shotctl", "extension-path").stdout.strip()
        )
        args = [str(find_chrome()), *BASE_FLAGS]
        if self.profile is not None:
            args.append(f"--user-data-dir={self.profile}")
        return [
            *args,
            f"--load-extension={extension}",
            f"--window-size={self.window_size[0]},{self.window_size[1]}",
            self.start_url,
        ]

    def start(self) -> HeadedChromium:
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                self.args(),
                env=self.desktop.env(),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: close() ends host and helpers
            )
        return self

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def close(self) -> None:
        proc, self.process = self.process, None
        if proc is not None:
            _end_group(proc)

    def tail_log(self, lines: int = 30) -> str:
        with contextlib.suppress(OSError):
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        return ""

    def profile_dir(self) -> Path:
        return self.profile or self.desktop.home / ".config" / "chromium"


def _end_group(proc: subprocess.Popen[bytes] | subprocess.Popen[str]) -> None:
    """SIGTERM the process group, SIGKILL what is left after 5 s; never anything by name.

    Waits until the whole group is gone (the browser's helpers and the host included): a
    browser still writing its profile would race the removal of the test's folders.
    """
    end_group(proc.pid)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)


def end_group(pgid: int, grace: float = 5.0) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, sig)
        deadline = time.monotonic() + grace
        while _group_alive(pgid) and time.monotonic() < deadline:
            time.sleep(0.05)
        if not _group_alive(pgid):
            return


def _group_alive(pgid: int) -> bool:
    """Any live (non-zombie) process left in the group?"""
    for stat_file in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            fields = stat_file.read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) == pgid and fields[0] != "Z":
                return True
    return False


def mcp_call(
    env: Mapping[str, str], calls: list[tuple[str, dict[str, Any]]], *args: str
) -> list[Any]:
    """Start a real ``shotctl mcp`` over stdio with exactly ``env``; make ``calls`` in order."""
    return asyncio.run(_mcp_calls(dict(env), calls, list(args)))


async def _mcp_calls(
    env: dict[str, str], calls: list[tuple[str, dict[str, Any]]], args: list[str]
) -> list[Any]:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=str(VENV_BIN / "shotctl"), args=["mcp", "--cooldown", "0", *args], env=env
    )
    results = []
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        for name, arguments in calls:
            results.append(await session.call_tool(name, arguments))
    return results


def text_of(result: Any) -> str:
    """All text blocks of a tool result, joined."""
    return "\n".join(b.text for b in result.content if getattr(b, "type", "") == "text")


def images_of(result: Any) -> list[Any]:
    return [b for b in result.content if getattr(b, "type", "") == "image"]


def read_json(path: Path) -> Any:
    return json.loads(path.read_text())


# ---- the user's keyboard: xdotool on the desktop's display (Debian package xdotool) ----------


def xdotool(desktop: Desktop, *args: str) -> str:
    """Run ``xdotool ARGS`` on the desktop's display; its stdout."""
    done = desktop.run("xdotool", *args, timeout=30)
    assert done.returncode == 0, f"xdotool {' '.join(args)}: {done.stderr}"
    return done.stdout


def browser_windows(desktop: Desktop) -> list[str]:
    """X window ids of the visible Chromium browser windows ("<title> - Chromium"), oldest first."""
    out = desktop.run("xdotool", "search", "--onlyvisible", "--name", " - Chromium$").stdout
    return sorted(out.split(), key=int)


def focus_window(desktop: Desktop, window: str) -> None:
    """Give ``window`` the keyboard, as a window manager does when the user clicks it (Xvfb has
    no window manager, so this is XSetInputFocus; Chromium sees a focus change either way)."""
    xdotool(desktop, "windowfocus", "--sync", window)


def keys(desktop: Desktop, window: str, *names: str) -> None:
    """Press keys in ``window`` (focused first), e.g. ``keys(d, w, "ctrl+t")``."""
    focus_window(desktop, window)
    xdotool(desktop, "key", "--delay", "50", *names)


def open_url(desktop: Desktop, window: str, url: str) -> None:
    """What a user does in the current tab: Ctrl+L, type the address, Enter.

    Delete drops what the address bar's inline autocomplete appended (a longer address from
    history), so exactly ``url`` loads. After Ctrl+T or Ctrl+N, wait for the new tab page to
    load first: it takes the focus when it does, and keys typed before go nowhere.
    """
    focus_window(desktop, window)
    xdotool(desktop, "key", "ctrl+l")
    xdotool(desktop, "type", "--delay", "5", url)
    xdotool(desktop, "key", "Delete", "Return")


def press_infobar_button(desktop: Desktop, window: str) -> None:
    """Press the first button of the infobar shown in ``window``, by keyboard.

    Chromium's F6 cycles the window's panes: from the address bar (Ctrl+L) the next pane is the
    tab strip, then the infobar, whose first focusable control takes the focus (Cancel on the
    "started debugging this browser" bar, the close button on the "unsupported command-line
    flag" bar); Return presses it. Measured on Debian's Chromium 156 under Xvfb.
    """
    keys(desktop, window, "ctrl+l", "F6", "F6", "Return")


class BusUser:
    """One bus connection as the desktop's user, with the keyboard of their browser windows.

    Use inside :func:`as_user_run`. Every wait polls a condition (``until``)."""

    def __init__(self, desktop: Desktop, client: Any) -> None:
        self.desktop = desktop
        self.client = client

    async def call(self, cmd: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        return await self.client.request(cmd, args or {}, timeout=40)

    async def tabs(self) -> list[dict[str, Any]]:
        return (await self.call("list_tabs"))["tabs"]

    async def tracked(self) -> dict[str, Any] | None:
        return next((t for t in await self.tabs() if t["tracked"]), None)

    async def until(self, what: str, check: Any, timeout: float = 20) -> Any:
        """Poll the coroutine function ``check`` until it returns something truthy; that value."""
        deadline = time.monotonic() + timeout
        while True:
            got = await check()
            if got:
                return got
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}; tabs: {await self.tabs()}")
            await asyncio.sleep(0.1)

    async def showing(self, url: str, timeout: float = 20) -> dict[str, Any]:
        """Wait until the tracked tab shows ``url`` (a web page: loaded); that tab."""
        from shotbridge.wire.errors import CommandError

        async def check() -> dict[str, Any] | None:
            tab = await self.tracked()
            if tab is None or tab["url"] != url:
                return None
            if not url.startswith("http"):
                return tab
            try:  # the tab's URL changes before its document is there
                info = await self.call("page_info")
            except CommandError:  # the previous document went away under the probe
                return None
            return tab if info["url"] == url and info["ready_state"] == "complete" else None

        return await self.until(f"the tracked tab to show {url}", check, timeout)

    async def new_tab(self, window: str, key: str = "ctrl+t") -> dict[str, Any]:
        """Ctrl+T (or Ctrl+N): the new tab, once it is the tracked one."""
        before = {t["id"] for t in await self.tabs()}
        keys(self.desktop, window, key)

        async def fresh() -> dict[str, Any] | None:
            tab = await self.tracked()
            return tab if tab is not None and tab["id"] not in before else None

        return await self.until("a new tab", fresh)

    async def go(self, window: str, url: str) -> dict[str, Any]:
        """Type ``url`` into the address bar; the tracked tab once it shows it. Keys typed while
        a new tab page is still taking the focus are lost, so a second try types it again."""
        for attempt in (1, 2, 3):
            open_url(self.desktop, window, url)
            try:
                return await self.showing(url, timeout=8 if attempt < 3 else 20)
            except AssertionError:
                if attempt == 3:
                    raise
        raise AssertionError("unreachable")


def as_user_run(desktop: Desktop, scenario: Any) -> None:
    """Run ``scenario(BusUser)`` on one bus connection made as the desktop's user."""
    from shotbridge.client.bus_client import BusClient

    async def main() -> None:
        async with await BusClient.connect() as client:
            await scenario(BusUser(desktop, client))

    with desktop.as_user():
        asyncio.run(main())
