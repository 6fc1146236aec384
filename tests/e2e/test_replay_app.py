"""Issue 13 end to end: a session recorded in real headless Chromium replays unmodified.

tests/pages/replay is served with a backend that counts writes (GET/POST /api/items). The real
extension records a session driven by the host's ``interact`` (as an agent would): open the page
(a tool navigation), type a title and press Enter (one submit: a POST), click the canvas, press a
button that throws, and navigate elsewhere 200 ms later (the tool again). The live page is
sampled for what moves. From that one timeline we generate and run, with Debian's Chromium:

* the visual spec in an ESM project (``"type": "module"``, TypeScript) and a CommonJS project
  (JavaScript, require): baselines, then repeated passing runs on the unchanged app, each run
  sending the write exactly once (fixtures serve the reads); a CSS change fails it;
* the ``assert_no_errors`` spec: fails while the bug is there, passes once it is fixed;
* the reproduction script: runs to the end, the write sent once;
* the bug report: markdown-it renders every step's text and the step images.
"""

from __future__ import annotations

import asyncio
import functools
import json
import shutil
import subprocess
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt
from shotbridge.client import BusClient
from shotbridge.generate import masks, playwright, report
from shotbridge.generate.steps import Session, build_steps

from tests.e2e.conftest import start_browser
from tests.e2e.test_session import CONFIG, NODE_MODULES, _npx, _outcomes, run_node

pytestmark = pytest.mark.browser

APP = Path(__file__).resolve().parents[1] / "pages" / "replay"
RUNS = 3  # passing runs per project after the baseline run (one `--repeat-each` invocation)
ESM_CONFIG = CONFIG.replace("module.exports = {", "export default {").replace(
    "testDir: __dirname", "testDir: '.'"
)


class Backend:
    def __init__(self) -> None:
        self.items = [{"id": 1, "title": "Alpha"}, {"id": 2, "title": "Beta"}]
        self.writes = 0
        self.lock = threading.Lock()


def _handler(backend: Backend) -> type[SimpleHTTPRequestHandler]:
    class App(SimpleHTTPRequestHandler):
        def _json(self, status: int, value: Any) -> None:
            out = json.dumps(value).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        def do_GET(self) -> None:
            if self.path == "/api/items":
                with backend.lock:
                    self._json(200, list(backend.items))
                return
            super().do_GET()

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            with backend.lock:
                backend.writes += 1
                item = {"id": len(backend.items) + 1, "title": str(body.get("title", ""))}
                backend.items.append(item)
            self._json(201, item)

        def log_message(self, format: str, *args: object) -> None:
            pass

    return App


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, Backend]]:
    root = tmp_path_factory.mktemp("replay-app")
    shutil.copytree(APP, root, dirs_exist_ok=True)
    backend = Backend()
    handler = functools.partial(_handler(backend), directory=str(root))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", root, backend
    server.shutdown()
    server.server_close()


async def _record(runtime_dir: Path, base: str) -> dict[str, Any]:
    async with await BusClient.connect(runtime_dir=runtime_dir) as c:

        async def act(**args: Any) -> dict[str, Any]:
            return await c.request("interact", args, timeout=30)

        await c.request(
            "record_config",
            {
                "network": True,
                "auto_screenshot": {"on_navigation": True, "on_action": True, "on_error": True},
                "min_interval_s": 0,
            },
            timeout=10,
        )
        await act(action="navigate", url=f"{base}/index.html")
        sampled = await masks.sample(lambda cmd, args: c.request(cmd, args, timeout=10))
        await act(action="type", selector="#title", text="Widget")
        await act(action="keypress", key="Enter")
        await asyncio.sleep(0.8)
        await act(action="click", selector="#pad")
        await act(action="click", selector="#break")
        await asyncio.sleep(0.2)  # the agent's next call comes quickly
        await act(action="navigate", url=f"{base}/other.html")
        await asyncio.sleep(1.0)
        timeline = await c.request("timeline", {}, timeout=10)
        full = await c.request("screenshots", {"images": "full"}, timeout=10)
        info = await c.request("page_info", {}, timeout=10)
    return {
        "timeline": timeline,
        "sampled": sampled,
        "images": {s["id"]: s["jpeg"] for s in full["screenshots"] if s.get("jpeg")},
        "environment": {"viewport": info.get("viewport")},
    }


@pytest.fixture(scope="module")
def recorded(app: tuple[str, Path, Backend]) -> dict[str, Any]:
    browser = start_browser(window_size=(1280, 800))
    try:
        data = asyncio.run(_record(browser.runtime_dir, app[0]))
    finally:
        browser.close()
    data["writes_while_recording"] = app[2].writes
    return data


def _session(recorded: dict[str, Any]) -> Session:
    return Session.from_export(
        recorded["timeline"], images=recorded["images"], environment=recorded["environment"]
    )


def _project(tmp: Path, module: str) -> Path:
    tmp.mkdir(parents=True)
    (tmp / "node_modules").symlink_to(NODE_MODULES)
    pkg = {"name": "replay-" + module, "private": True}
    if module == "esm":
        pkg["type"] = "module"
    (tmp / "package.json").write_text(json.dumps(pkg))
    (tmp / "playwright.config.js").write_text(ESM_CONFIG if module == "esm" else CONFIG)
    return tmp


def _statuses(run: subprocess.CompletedProcess[str]) -> list[str]:
    """The status of every test run in one invocation (``--repeat-each`` runs each N times)."""
    out: list[str] = []

    def walk(suite: dict[str, Any]) -> None:
        for spec in suite.get("specs", []):
            out.extend(r["status"] for t in spec["tests"] for r in t["results"])
        for child in suite.get("suites", []):
            walk(child)

    for suite in json.loads(run.stdout)["suites"]:
        walk(suite)
    return out


def test_steps_are_what_happened(recorded: dict[str, Any], app: tuple[str, Path, Backend]) -> None:
    base = app[0]
    steps = build_steps(_session(recorded))
    described = [(s.kind, s.origin, s.action.kind if s.action else s.url) for s in steps]
    assert described == [
        ("goto", "tool", f"{base}/index.html"),
        ("action", "tool", "fill"),
        ("action", "tool", "press"),  # Enter; the browser's submit click is part of it
        ("action", "tool", "click"),
        ("action", "tool", "click"),
        ("goto", "tool", f"{base}/other.html"),  # 200 ms after a click: still the tool's own
    ], described
    assert steps[2].effect == "write"
    assert steps[3].position is not None and steps[3].action.target.tag == "canvas"
    assert steps[4].errors and "widget missing" in steps[4].errors[0].message
    assert "#clock" in recorded["sampled"].get(f"{base}/index.html", set()), recorded["sampled"]
    assert recorded["writes_while_recording"] == 1
    # The list the page fetched at start-up (before the bridge knew network capture was on) is
    # recorded as well as the one after the POST: the replay's first screen shows Alpha and Beta.
    calls = [
        (e["method"], e["status"])
        for e in recorded["timeline"]["entries"]
        if e.get("type") == "network" and e.get("url") == f"{base}/api/items"
    ]
    assert calls == [("GET", 200), ("POST", 201), ("GET", 200)], calls


@pytest.mark.parametrize(("module", "language"), [("esm", "ts"), ("cjs", "js")])
def test_visual_spec_passes_repeatedly_sends_each_write_once_and_catches_css(
    recorded: dict[str, Any],
    app: tuple[str, Path, Backend],
    tmp_path: Path,
    module: str,
    language: str,
) -> None:
    _base, root, backend = app
    spec = playwright.generate_test_spec(
        _session(recorded),
        include_fixtures=True,
        assert_no_errors=False,
        module=module,  # type: ignore[arg-type]
        language=language,  # type: ignore[arg-type]
        sampled_dynamic=recorded["sampled"],
    )
    assert ("import { test, expect }" in spec) == (module == "esm" or language == "ts")
    assert "route.fulfill" in spec and "mask: [page.locator('#clock')]" in spec
    assert "click({ position: {" in spec
    name = f"replay.spec.{language}"
    project = _project(tmp_path / module, module)
    (project / name).write_text(spec)
    before = backend.writes
    first = _npx(project, "--update-snapshots")
    assert _outcomes(first) == {name: "passed"}, first.stdout[-3000:] + first.stderr[-2000:]
    again = _npx(project, f"--repeat-each={RUNS}")
    assert _statuses(again) == ["passed"] * RUNS, again.stdout[-3000:]
    assert backend.writes - before == 1 + RUNS  # the Enter's POST, once per run
    # A visible change of similar brightness (blue header → green): Playwright's default
    # per-pixel threshold (0.2) let exactly this pass; the spec's 0.1 does not.
    css = root / "app.css"
    original = css.read_text()
    css.write_text(original.replace("background: #2d6cdf", "background: #1e8449"))
    try:
        changed = _npx(project)
    finally:
        css.write_text(original)
    assert _outcomes(changed) == {name: "failed"}, (_outcomes(changed), changed.stderr[-2000:])
    assert "toHaveScreenshot" in changed.stdout and "pixels" in changed.stdout


def test_error_spec_fails_with_the_bug_and_passes_once_fixed(
    recorded: dict[str, Any], app: tuple[str, Path, Backend], tmp_path: Path
) -> None:
    _base, root, backend = app
    spec = playwright.generate_test_spec(_session(recorded), assert_visual=False)
    project = _project(tmp_path / "errors", "esm")
    (project / "errors.spec.ts").write_text(spec)
    before = backend.writes
    buggy = _npx(project)
    assert _outcomes(buggy) == {"errors.spec.ts": "failed"}, buggy.stdout[-3000:]
    assert "widget missing" in buggy.stdout
    assert backend.writes - before == 1  # every step ran; the assertion at the end failed
    js = root / "app.js"
    original = js.read_text()
    js.write_text(original.replace("const BUG = true;", "const BUG = false;"))
    try:
        fixed = _npx(project)
    finally:
        js.write_text(original)
    assert _outcomes(fixed) == {"errors.spec.ts": "passed"}, fixed.stdout[-3000:]
    assert backend.writes - before == 2


def test_reproduction_script_runs_to_the_end_sending_the_write_once(
    recorded: dict[str, Any], app: tuple[str, Path, Backend], tmp_path: Path
) -> None:
    backend = app[2]
    script = playwright.reproduction_script(_session(recorded), include_fixtures=True)
    project = _project(tmp_path / "repro", "cjs")
    (project / "repro.js").write_text(script)
    before = backend.writes
    run = run_node(project, "repro.js", timeout=60)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "replayed 6 steps" in run.stdout and "widget missing" in run.stdout
    assert backend.writes - before == 1


def test_bug_report_renders_every_step_with_its_image(recorded: dict[str, Any]) -> None:
    s = _session(recorded)
    md = report.bug_report(s)
    tokens = MarkdownIt("commonmark").parse(md)
    flat = [t for tok in tokens for t in [tok, *(tok.children or [])]]
    text = " ".join(t.content for t in flat if t.type == "text")
    steps = build_steps(s)
    for step in steps:
        assert f"Step {step.index}" in md or f"{step.index}." in md
    images = [t for t in flat if t.type == "image"]
    with_images = [st for st in steps if st.screenshot_ids and st.screenshot_ids[0] in s.images]
    assert with_images and len(images) >= len(with_images), (len(images), len(with_images))
    assert all(t.attrGet("src").startswith("data:image/jpeg;base64,") for t in images)
    assert "widget missing" in text
