"""`shotctl capture URL|FILE` with a connected browser leaves the user's tab alone, in a
headless browser and in the user's own headed one.

The capture opens an unfocused window of its own, captures it and closes it: the user's tracked
tab keeps its page, and the browser ends with the tabs it had. A missing file or a bare word is a
one-line usage error (exit 2) before any browser is touched.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from shotbridge.client.bus_client import BusClient

from tests.e2e.conftest import start_browser

pytestmark = pytest.mark.browser

PAGES = Path(__file__).resolve().parents[1] / "pages"


class UserBrowser:
    """The browser a user's `shotctl capture` reaches: how to ask its host, and the environment."""

    def __init__(self, env: dict[str, str], connect: Any, as_user: Any = None) -> None:
        self.env = env
        self._connect = connect
        self._as_user = as_user or contextlib.nullcontext

    def bus(self, cmd: str, args: dict[str, Any]) -> dict[str, Any]:
        async def go() -> dict[str, Any]:
            async with await self._connect() as c:
                return await c.request(cmd, args, timeout=30)

        with self._as_user():
            return asyncio.run(go())


@pytest.fixture(scope="module", params=["headless", "headed"])
def user_browser(request: pytest.FixtureRequest, pages_url: str) -> Iterator[UserBrowser]:
    """A headless Chromium of the test's own, or the user's headed one (Xvfb, a normal profile,
    `shotctl install`; its tab starts on buttons.html)."""
    if request.param == "headed":
        request.getfixturevalue("headed")
        desktop = request.getfixturevalue("desktop")
        yield UserBrowser(desktop.env(), BusClient.connect, desktop.as_user)
        return
    b = start_browser(window_size=(1280, 800))
    env = {**os.environ, "SHOTBRIDGE_RUNTIME_DIR": str(b.runtime_dir)}
    user = UserBrowser(env, lambda: BusClient.connect(runtime_dir=b.runtime_dir))
    user.bus("navigate", {"url": f"{pages_url}/buttons.html"})
    yield user
    b.close()


def _shotctl(env: dict[str, str], tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "shotbridge", "capture", "--browser", "connected", "-q", *args],
        env=env,
        cwd=tmp,
        capture_output=True,
        text=True,
        timeout=90,
    )


def _tabs(browser: UserBrowser) -> list[dict[str, Any]]:
    return browser.bus("list_tabs", {})["tabs"]


@pytest.mark.parametrize("what", ["url", "file"])
def test_capture_of_a_url_or_file_never_touches_the_users_tab(
    user_browser: UserBrowser, pages_url: str, tmp_path: Path, what: str
) -> None:
    before = _tabs(user_browser)
    tracked = next(t for t in before if t["tracked"])
    target = f"{pages_url}/interact.html" if what == "url" else str(PAGES / "interact.html")
    done = _shotctl(user_browser.env, tmp_path, target, "--json", "-o", "out.jpg")
    assert done.returncode == 0, done.stderr
    meta = json.loads(done.stdout)
    assert meta["url"].endswith("/interact.html") and meta["tab_id"] != tracked["id"]
    assert (tmp_path / "out.jpg").stat().st_size > 1000
    after = _tabs(user_browser)
    # Same tabs, same pages, the same one tracked: the capture's own window is gone.
    assert [(t["id"], t["url"], t["tracked"]) for t in after] == [
        (t["id"], t["url"], t["tracked"]) for t in before
    ]
    assert tracked["url"].endswith("/buttons.html")


@pytest.mark.parametrize(
    ("arg", "says"),
    [
        ("missing.html", "no such file: missing.html"),
        ("typo", "neither a URL nor an existing file"),
    ],
)
def test_bad_targets_are_usage_errors_before_any_browser(
    tmp_path: Path, arg: str, says: str
) -> None:
    nobody = tmp_path / "no-hosts"  # no browser registered here: rc 3 if one were looked for
    nobody.mkdir(mode=0o700)
    done = _shotctl({**os.environ, "SHOTBRIDGE_RUNTIME_DIR": str(nobody)}, tmp_path, arg)
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert done.stderr.strip().count("\n") == 0 and says in done.stderr, done.stderr
