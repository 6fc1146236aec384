"""The toolbar popup says whether shotbridge reaches its host, and what to run when it does not.

Real Chromium with the real extension; the popup page is opened in a tab and read through the
DevTools protocol with Playwright's connectOverCDP (tests/e2e/node_modules). One browser has the
host registered (connected), one has no host manifest at all (host not found → the install
command). The connected popup is also saved as a PNG for the README.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest
from shotbridge.client.browser import BASE_FLAGS, HeadlessBrowser, find_chrome
from shotbridge.install import register as install

pytestmark = pytest.mark.browser

E2E = Path(__file__).resolve().parent
POPUP = "chrome-extension://lgpadcfmcnglbejkodbbdfcnfnaffoae/popup/popup.html"
README_SHOT = Path(os.environ.get("SHOTBRIDGE_POPUP_PNG", "/work/notes/popup.png"))
READ = r"""
const { chromium } = require('playwright');
(async () => {
  // A browser still starting up can leave the first attach hanging: a bounded try, then again.
  let browser;
  for (let i = 0; !browser; i++) {
    try {
      const url = `http://127.0.0.1:${process.argv[2]}`;
      browser = await chromium.connectOverCDP(url, { timeout: 10000 });
    } catch (e) {
      if (i >= 2) throw e;
    }
  }
  const page = await browser.contexts()[0].newPage();
  for (let i = 0; ; i++) {  // the extension may still be loading
    try {
      await page.goto(process.argv[4]);
      break;
    } catch (e) {
      if (i > 50) throw e;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  await page.waitForSelector('body[data-ready]:not([data-ready="connecting"])', { timeout: 20000 });
  const text = await page.evaluate(() => document.body.innerText);
  const state = await page.evaluate(() => document.body.dataset.ready);
  if (process.argv[3]) {
    await page.setViewportSize({ width: 364, height: 260 });
    await page.locator('body').screenshot({ path: process.argv[3] });
  }
  console.log(JSON.stringify({ state, text }));
  await browser.close().catch(() => {});
  process.exit(0);
})().catch((e) => { console.error(e); process.exit(1); });
"""


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _read_popup(port: int, tmp: Path, png: Path | None = None) -> dict[str, str]:
    script = tmp / "read.cjs"
    script.write_text(READ)
    env = {**os.environ, "NODE_PATH": str(E2E / "node_modules")}
    done = subprocess.run(
        ["node", str(script), str(port), str(png or ""), POPUP],
        capture_output=True,
        text=True,
        timeout=90,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_popup_says_connected_and_is_pictured(tmp_path: Path) -> None:
    port = _port()
    browser = HeadlessBrowser(extra_args=(f"--remote-debugging-port={port}",))
    browser.start()
    try:
        png = tmp_path / "popup.png"
        got = _read_popup(port, tmp_path, png)
    finally:
        browser.close()
    assert got["state"] == "connected", got
    assert "Connected to the shotbridge host." in got["text"]
    assert png.stat().st_size > 1000
    if README_SHOT.parent.is_dir():
        shutil.copyfile(png, README_SHOT)


def test_popup_without_a_registered_host_says_what_to_run(tmp_path: Path) -> None:
    port = _port()
    profile = Path(tempfile.mkdtemp(prefix="sb-nohost-"))
    args = [
        str(find_chrome()),
        "--headless=new",
        *BASE_FLAGS,
        f"--user-data-dir={profile}",
        f"--load-extension={install.extension_dir()}",
        f"--remote-debugging-port={port}",
    ]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        got = _read_popup(port, tmp_path)
    finally:
        proc.kill()
        proc.wait()
        shutil.rmtree(profile, ignore_errors=True)
    assert got["state"] == "not_connected", got
    assert "Host not found" in got["text"]
    assert "shotctl install --browser chromium" in got["text"]
    assert "shotctl install --user-data-dir DIR" in got["text"]
