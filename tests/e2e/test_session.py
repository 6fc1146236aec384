"""Session memory and generation end to end, in real headless Chromium.

A copy of tests/pages/app is served on 127.0.0.1 with a JSON endpoint (POST /api/notes). The real
extension records a session driven by the host's ``interact`` command (trusted CDP input): open
the home page, follow a link, fill the form (with a password), submit it (a fetch POST), and press
a button that logs a console error and throws. From the recorded timeline we generate a
``@playwright/test`` spec with visual assertions and run it with ``npx playwright test`` and
Debian's Chromium: the first run writes the baselines, the second passes, a CSS change fails it.
The reproduction script runs to the end with ``node``. The MCP side (resources, observe, the
generation tools) is checked through a real ``shotctl mcp`` subprocess.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import io
import json
import os
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from shotbridge.client.bus_client import BusClient
from shotbridge.generate import playwright, report
from shotbridge.generate.steps import Session

from tests.e2e.conftest import start_browser
from tests.e2e.http_json import send_json
from tests.mcp_stdio import McpSession

pytestmark = pytest.mark.browser

E2E = Path(__file__).resolve().parent
APP = E2E.parent / "pages" / "app"
NODE_MODULES = E2E / "node_modules"
CHROME = os.environ.get("CHROME_PATH") or shutil.which("chromium") or "/usr/bin/chromium"
CONFIG = """\
module.exports = {
  testDir: __dirname,
  timeout: 30000,
  workers: 1,
  retries: 0,
  use: { headless: true, launchOptions: { executablePath: process.env.CHROME_PATH } },
};
"""


class _App(SimpleHTTPRequestHandler):
    """Static app files plus POST /api/notes, which answers a deterministic note."""

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        title = str(body.get("title", ""))
        send_json(self, 201, {"id": f"note-{title.lower()}", "title": title})

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """(base URL, served directory): a private copy, so the CSS change touches no repo file."""
    root = tmp_path_factory.mktemp("app")
    shutil.copytree(APP, root, dirs_exist_ok=True)
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_App, directory=str(root)))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", root
    server.shutdown()
    server.server_close()


async def _record(runtime_dir: Path, base: str) -> dict[str, Any]:
    async with await BusClient.connect(runtime_dir=runtime_dir) as c:

        async def act(**args: Any) -> dict[str, Any]:
            return await c.request("interact", args, timeout=30)

        config = await c.request(
            "record_config",
            {
                "network": True,
                "auto_screenshot": {"on_navigation": True, "on_action": True, "on_error": True},
                "min_interval_s": 0,
            },
            timeout=10,
        )
        await act(action="navigate", url=f"{base}/index.html")
        await act(action="click", selector="a[href='form.html']")
        await asyncio.sleep(1.5)  # two quiet observations of the form: the clock ticks between
        await act(action="type", selector="#title", text="Widget")
        await act(action="type", selector="#email", text="alice@corp.example")
        await act(action="type", selector="#password", text="hunter2")
        await act(action="click", selector="[data-testid=add-note]")
        await asyncio.sleep(0.8)
        await act(action="click", selector="#break")
        await asyncio.sleep(1.5)  # the error's automatic screenshot
        timeline = await c.request("timeline", {}, timeout=10)
        full = await c.request("screenshots", {"images": "full"}, timeout=10)
        thumbs = await c.request("screenshots", {"images": "thumbnail"}, timeout=10)
        first = timeline["screenshots"][0]["id"]
        got = await c.request("screenshot_get", {"id": first, "thumbnail": True}, timeout=10)
        status = await c.request("status", {}, timeout=10)
        info = await c.request("page_info", {}, timeout=10)
    return {
        "config": config,
        "timeline": timeline,
        "images": {s["id"]: s["jpeg"] for s in full["screenshots"] if s.get("jpeg")},
        "thumbnails": {s["id"]: s["jpeg"] for s in thumbs["screenshots"] if s.get("jpeg")},
        "got": got,
        "environment": {
            "user_agent": status.get("user_agent"),
            "extension_version": status.get("extension_version"),
            "viewport": info.get("viewport"),
            "device_pixel_ratio": info.get("device_pixel_ratio"),
        },
    }


@pytest.fixture(scope="module")
def recorded(
    app: tuple[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Any]]:
    shot_dir = tmp_path_factory.mktemp("shots")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SHOTBRIDGE_SCREENSHOT_DIR", str(shot_dir))  # inherited by the host
        browser = start_browser(window_size=(1280, 800))
    try:
        data = asyncio.run(_record(browser.runtime_dir, app[0]))
    finally:
        browser.close()
    data["shot_dir"] = shot_dir
    yield data


def _session(recorded: dict[str, Any]) -> Session:
    return Session.from_export(
        recorded["timeline"],
        images=recorded["images"],
        thumbnails=recorded["thumbnails"],
        environment=recorded["environment"],
    )


def _jpeg(data: bytes) -> Image.Image:
    img = Image.open(io.BytesIO(data))
    img.load()
    assert img.format == "JPEG"
    return img


# ---- recording ------------------------------------------------------------------------------


def test_session_is_recorded_with_locators_errors_network_and_screenshots(
    recorded: dict[str, Any], app: tuple[str, Path]
) -> None:
    base = app[0]
    entries = recorded["timeline"]["entries"]
    navs = [e["url"] for e in entries if e["type"] == "nav"]
    assert navs == [f"{base}/index.html", f"{base}/form.html"]

    actions = [e for e in entries if e["type"] == "action"]
    fills = {a["target"]["selector"]: a for a in actions if a["kind"] == "fill"}
    assert fills["#title"]["value"] == "Widget"
    assert fills["#email"]["value"] == "alice@corp.example"
    assert fills["#password"]["value"] == "<redacted>" and fills["#password"]["secret"]
    assert "hunter2" not in json.dumps(actions)  # never recorded, anywhere in the actions
    add = next(a for a in actions if a["target"].get("testid") == "add-note")
    assert add["kind"] == "click" and add["target"]["unique"]["testid"]
    link = actions[0]
    assert (link["kind"], link["target"]["role"], link["target"]["name"]) == (
        "click",
        "link",
        "Open the form",
    )
    assert any(a["kind"] == "submit" for a in actions)

    errors = [e for e in entries if e["type"] == "error"]
    assert [e["kind"] for e in errors] == ["console", "exception"]
    assert "quota exceeded" in errors[0]["message"]
    assert "boom" in errors[1]["message"]

    (post,) = [e for e in entries if e["type"] == "network" and e["method"] == "POST"]
    assert post["url"] == f"{base}/api/notes" and post["status"] == 201
    assert json.loads(post["request_body"])["title"] == "Widget"
    assert json.loads(post["response_body"]) == {"id": "note-widget", "title": "Widget"}

    shots = recorded["timeline"]["screenshots"]
    triggers = {t["trigger"] for s in shots for t in s["triggers"] or [s]}  # merged ones too
    assert {"navigation", "action", "error"} <= triggers, shots
    error_shot = next(s for s in shots if s["trigger"] == "error")
    assert error_shot["action_id"] == next(
        a["id"] for a in actions if a["target"]["selector"] == "#break"
    )
    assert all(s["kept"] for s in shots)
    for sid, data in recorded["images"].items():
        meta = next(s for s in shots if s["id"] == sid)
        assert len(data) == meta["bytes"] and _jpeg(data).width == meta["width"]
    assert _jpeg(recorded["got"]["jpeg"]).width == 320
    # The clock ticked between two quiet observations of the form: it is dynamic content.
    assert any("#clock" in sels for sels in _dynamic(_session(recorded)).values()), (
        "the clock was not seen changing"
    )


def _dynamic(s: Session) -> dict[str, set[str]]:
    from shotbridge.generate.steps import dynamic_selectors

    return dynamic_selectors(s)


def test_screenshot_dir_gets_every_screenshot(recorded: dict[str, Any]) -> None:
    files = sorted(p.name for p in recorded["shot_dir"].iterdir())
    session = recorded["timeline"]["session"]
    assert len(files) == len(recorded["timeline"]["screenshots"])
    assert all(f.startswith(session + "-") and f.endswith(".jpg") for f in files)
    _jpeg((recorded["shot_dir"] / files[0]).read_bytes())


# ---- generated code in Playwright --------------------------------------------------------------


def _project(tmp: Path) -> Path:
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "node_modules").symlink_to(NODE_MODULES)
    (tmp / "playwright.config.js").write_text(CONFIG)
    return tmp


def run_node(project: Path, script: str, timeout: float) -> subprocess.CompletedProcess[str]:
    """``node SCRIPT`` in ``project`` with Debian's Chromium for the generated script to launch."""
    return subprocess.run(
        ["node", script],
        cwd=project,
        env={**os.environ, "CHROME_PATH": CHROME},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _npx(project: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CHROME_PATH": CHROME, "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1"}
    return subprocess.run(
        [str(NODE_MODULES / ".bin" / "playwright"), "test", "--reporter=json", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _outcomes(run: subprocess.CompletedProcess[str]) -> dict[str, str]:
    report_json = json.loads(run.stdout)
    out: dict[str, str] = {}

    def walk(suite: dict[str, Any]) -> None:
        for spec in suite.get("specs", []):
            for test in spec["tests"]:
                out[spec["file"]] = test["results"][-1]["status"]
        for child in suite.get("suites", []):
            walk(child)

    for suite in report_json["suites"]:
        walk(suite)
    return out


@pytest.fixture
def needs_node() -> None:
    """The generated specs run under the real @playwright/test; a missing install is a failure."""
    if not (NODE_MODULES / ".bin" / "playwright").exists():
        pytest.fail("tests/e2e/node_modules missing: scripts/setup.sh runs npm install")


@pytest.mark.usefixtures("needs_node")
def test_generated_spec_baselines_passes_then_catches_css_change(
    recorded: dict[str, Any], app: tuple[str, Path], tmp_path: Path
) -> None:
    s = _session(recorded)
    project = _project(tmp_path / "pw")
    visual = playwright.generate_test_spec(
        s, assert_visual=True, include_fixtures=True, assert_no_errors=False
    )
    # Step 1's page was left at once (not watched: no assertion); step 2's form was.
    assert "toHaveScreenshot('step-2.png', { maxDiffPixels: 100" in visual
    assert "mask: [page.locator('#clock')]" in visual
    assert "getByTestId('add-note')" in visual and "getByRole('link'" in visual
    # Fixtures serve the GETs that filled the page; this session made none, and the
    # replayed click sends the POST itself, once: no setup writes, and the spec says why.
    assert "test.beforeAll" not in visual and "no GET response was recorded" in visual
    assert "alice@corp.example" not in visual.split("test(")[0]  # fixtures are sanitised
    (project / "visual.spec.ts").write_text(visual)
    # The default spec also asserts the page reports no errors: it fails while the bug exists.
    errors = playwright.generate_test_spec(s, assert_visual=False)
    (project / "errors.spec.ts").write_text(errors)

    first = _npx(project, "--update-snapshots")
    outcomes = _outcomes(first)
    assert outcomes == {"visual.spec.ts": "passed", "errors.spec.ts": "failed"}, first.stdout[
        -3000:
    ]
    assert "quota exceeded" in first.stdout
    baselines = sorted(p.name for p in (project / "visual.spec.ts-snapshots").iterdir())
    assert baselines and all(b.startswith("step-") for b in baselines)

    second = _npx(project, "visual.spec.ts")
    assert _outcomes(second) == {"visual.spec.ts": "passed"}, second.stdout[-3000:]

    css = app[1] / "app.css"
    original = css.read_text()
    css.write_text(original.replace("background: #2d6cdf", "background: #c0392b"))
    try:
        third = _npx(project, "visual.spec.ts")
    finally:
        css.write_text(original)
    assert _outcomes(third) == {"visual.spec.ts": "failed"}, third.stdout[-3000:]
    assert "toHaveScreenshot" in third.stdout and "step-2" in third.stdout


@pytest.mark.usefixtures("needs_node")
def test_reproduction_script_runs_to_the_end(recorded: dict[str, Any], tmp_path: Path) -> None:
    s = _session(recorded)
    project = _project(tmp_path / "repro")
    script = playwright.reproduction_script(s, include_screenshots=True, include_fixtures=True)
    (project / "repro.js").write_text(script)
    run = run_node(project, "repro.js", timeout=60)
    assert run.returncode == 0, run.stderr[-2000:]
    steps = len([ln for ln in script.splitlines() if ln.strip().startswith("// Step ")])
    assert f"replayed {steps} steps" in run.stdout
    assert "quota exceeded" in run.stdout and "boom" in run.stdout  # the bug reproduces
    assert len(list(project.glob("step-*.png"))) == steps


def test_bug_report_embeds_step_screenshots(recorded: dict[str, Any]) -> None:
    md = report.bug_report(_session(recorded))
    assert md.startswith("# Bug: Saving failed: quota exceeded")
    for heading in ("## Steps to reproduce", "## Error", "## Expected", "## Actual"):
        assert heading in md
    assert "**Severity:** high" in md
    uris = [ln for ln in md.splitlines() if "](data:image/jpeg;base64," in ln]
    assert uris
    data = uris[0].split("base64,", 1)[1].rstrip(")")
    _jpeg(base64.b64decode(data))


# ---- the MCP server ----------------------------------------------------------------------------


def test_mcp_resources_observe_and_generation(app: tuple[str, Path]) -> None:
    base = app[0]
    with McpSession("--browser", "headless", "--window-size", "1280x800", "--cooldown", "0") as s:

        def call(name: str, args: dict[str, Any]) -> Any:
            r = s.call(name, args)
            assert not r.is_error, r.content
            return r

        r = call(
            "configure",
            {"action": "capture", "settings": {"auto_screenshot": {"on_navigation": True}}},
        )
        assert "on_navigation: true" in r.content[0].text
        call("interact", {"action": "navigate", "url": f"{base}/index.html"})
        call("interact", {"action": "navigate", "url": f"{base}/form.html"})
        # Both loads trigger an automatic capture; close together they coalesce into one (of
        # the latest page), and the host's 5 s rate limit holds any further one back.
        observed: dict[str, Any] = {}
        for _ in range(40):
            r = call("observe", {"what": "screenshots", "include_thumbnails": True})
            observed = json.loads(r.content[0].text)
            if observed["screenshots"]:
                break
            time.sleep(0.25)
        shots = observed["screenshots"]
        assert shots and shots[-1]["trigger"] == "navigation", observed
        assert shots[-1]["url"] == f"{base}/form.html"
        assert any(e["type"] == "navigation" for e in observed["recent_events"])
        images = [b for b in r.content if b.type == "image"]
        assert len(images) == len(shots)
        assert _jpeg(base64.b64decode(images[0].data)).width == 320

        future = asyncio.run_coroutine_threadsafe(
            s._client.read_resource(shots[-1]["resource"]), s.loop
        )
        (blob,) = future.result(30).contents
        assert blob.mime_type == "image/jpeg"
        assert _jpeg(base64.b64decode(blob.blob)).width == shots[-1]["width"]

        # The server's own looks make no thumbnail beside the image: reading it makes it.
        r = call("observe", {"annotate_screenshot": True})
        found = re.search(r"screenshot_id (\d+)", r.content[1].text)
        assert found, r.content[1].text
        future = asyncio.run_coroutine_threadsafe(
            s._client.read_resource(f"screenshot://{found[1]}/thumbnail"), s.loop
        )
        (thumb,) = future.result(30).contents
        assert _jpeg(base64.b64decode(thumb.blob)).width == 320

        r = call("get_reproduction_script", {"include_screenshots": True})
        assert f"await page.goto('{base}/index.html');" in r.content[0].text
        assert any(b.type == "image" for b in r.content)
        r = call("generate_test", {})
        spec = r.content[0].text
        assert "toHaveScreenshot('step-2.png'" in spec  # the sampled page (step 1's was left)
        assert "import { test, expect } from '@playwright/test';" in spec  # ESM + TS by default
        # form.html (the page open now) has a live clock: the live sampling masks just it.
        assert "mask: [page.locator('#clock')]" in spec and "tests/session.spec.ts" in spec
        # The generators' options through the real stdio: CommonJS JavaScript, and fixtures that
        # cannot be produced (network capture was off) say why instead of vanishing.
        r = call(
            "generate_test",
            {"module": "cjs", "language": "js", "include_fixtures": True, "mask_dynamic": True},
        )
        cjs = r.content[0].text
        assert "const { test, expect } = require('@playwright/test');" in cjs
        assert "import " not in cjs and ": string[]" not in cjs and "session.spec.cjs" in cjs
        assert "no GET response was recorded (turn on configure network=true first)" in cjs
        r = call("generate_test", {"fixtures": "seed", "assert_visual": False})
        assert "Seed fixtures: no list response recorded to seed from." in r.content[0].text
        assert "toHaveScreenshot" not in r.content[0].text
        r = s.call("generate_test", {"module": "amd"})
        assert r.is_error  # refused by the schema, not silently defaulted
        r = call("get_reproduction_script", {"module": "esm", "include_fixtures": True})
        assert "import { chromium } from 'playwright';" in r.content[0].text
        r = call("generate_bug_report", {})
        assert "## Steps to reproduce" in r.content[0].text
