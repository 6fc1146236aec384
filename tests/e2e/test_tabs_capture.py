"""`shotctl capture URL|FILE` with a connected browser leaves the user's tab alone (issue 11).

The capture opens an unfocused window of its own, captures it and closes it: the user's tracked
tab keeps its page, and the browser ends with the tabs it had. A missing file or a bare word is a
one-line usage error (exit 2) before any browser is touched.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from shotbridge.browser import HeadlessBrowser
from shotbridge.client import BusClient

from tests.e2e.conftest import start_browser

pytestmark = pytest.mark.browser

PAGES = Path(__file__).resolve().parents[1] / "pages"


@pytest.fixture(scope="module")
def user_browser(pages_url: str) -> Iterator[HeadlessBrowser]:
    b = start_browser(window_size=(1280, 800))
    _bus(b, "navigate", {"url": f"{pages_url}/buttons.html"})
    yield b
    b.close()


def _bus(browser: HeadlessBrowser, cmd: str, args: dict[str, Any]) -> dict[str, Any]:
    async def go() -> dict[str, Any]:
        async with await BusClient.connect(runtime_dir=browser.runtime_dir) as c:
            return await c.request(cmd, args, timeout=30)

    return asyncio.run(go())


def _shotctl(runtime_dir: Path, tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SHOTBRIDGE_RUNTIME_DIR": str(runtime_dir)}
    return subprocess.run(
        [sys.executable, "-m", "shotbridge", "capture", "--browser", "connected", "-q", *args],
        env=env,
        cwd=tmp,
        capture_output=True,
        text=True,
        timeout=90,
    )


def _tabs(browser: HeadlessBrowser) -> list[dict[str, Any]]:
    return _bus(browser, "list_tabs", {})["tabs"]


@pytest.mark.parametrize("what", ["url", "file"])
def test_capture_of_a_url_or_file_never_touches_the_users_tab(
    user_browser: HeadlessBrowser, pages_url: str, tmp_path: Path, what: str
) -> None:
    before = _tabs(user_browser)
    tracked = next(t for t in before if t["tracked"])
    target = f"{pages_url}/interact.html" if what == "url" else str(PAGES / "interact.html")
    done = _shotctl(user_browser.runtime_dir, tmp_path, target, "--json", "-o", "out.jpg")
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
    done = _shotctl(nobody, tmp_path, arg)
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert done.stderr.strip().count("\n") == 0 and says in done.stderr, done.stderr
