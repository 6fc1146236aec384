"""Generated replays end to end: five sessions recorded in real headless Chromium replay unmodified.

tests/pages/replay is a small app served with a backend that logs every write (POST /api/<name>,
keyed by path and body): a live clock on each page, lists loaded by fetch, a filter applied with
Enter, a form submitted with Enter or its button, a canvas on each page (clicks land where they are
made), a button that throws while ``BUG`` is on, a Like button far down the page. The real
extension records each session (its own browser) driven by the host's ``interact`` as an agent
would; the live page is sampled for what moves. Every session is a different path (``SESSIONS``).

From each timeline we generate and run, with Debian's Chromium:

* the visual spec, in an ESM project (``"type": "module"``, TypeScript) and a CommonJS project
  (JavaScript, require; compared against the ESM run's baselines): baselines, then
  ``--repeat-each=10`` on the unchanged app: 10 of 10 pass,
  each run sending each of the session's writes exactly once (fixtures serve the reads); a CSS
  change fails it. Sessions without errors also assert no errors in that spec;
* for sessions with an error, the ``assert_no_errors`` spec: fails while the bug is there, passes
  once it is fixed;
* the reproduction script: runs to the end, each write sent once;
* the bug report: markdown-it renders every step's text and the step images.

The five sessions' specs share each Playwright invocation (one per project and purpose) to keep the
wall time down; every check is still made per session.
"""

from __future__ import annotations

import asyncio
import functools
import json
import shutil
import subprocess
import threading
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt
from shotbridge.client.bus_client import BusClient
from shotbridge.generate import masks, playwright, report
from shotbridge.generate.steps import Session, build_steps, dynamic_selectors, watched_pages

from tests.e2e.conftest import start_browser
from tests.e2e.http_json import send_json
from tests.e2e.test_session import CONFIG, NODE_MODULES, run_node
from tests.e2e.test_session import _npx as npx

# The shared fixtures run every session's specs (5 sessions x 2 projects x 10 runs) at once.
pytestmark = [pytest.mark.browser, pytest.mark.timeout(1200)]

APP = Path(__file__).resolve().parents[1] / "pages" / "replay"
RUNS = 10  # passing runs per project on the unchanged app (one `--repeat-each` invocation)
WORKERS = 2  # the machine's cores: Playwright runs two specs at once
ESM_CONFIG = CONFIG.replace("module.exports = {", "export default {").replace(
    "testDir: __dirname", "testDir: '.'"
)
ITEMS = [{"id": 1, "title": "Alpha"}, {"id": 2, "title": "Beta"}, {"id": 3, "title": "Gamma"}]
BOARD_CLICK = (60, 40)  # CSS px inside #board (its border box), far from its centre (150, 75)

# ---- the app ---------------------------------------------------------------------------------


class Backend:
    """Lists by name (GET /api/<name>) and a log of writes (POST /api/<name>), keyed by body."""

    def __init__(self) -> None:
        self.lists: dict[str, list[dict[str, Any]]] = {"items": list(ITEMS), "marks": []}
        self.writes: Counter[str] = Counter()
        self.lock = threading.Lock()

    def post(self, name: str, body: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            self.writes[write_key(name, body)] += 1
            rows = self.lists.setdefault(name, [])
            row = {"id": len(rows) + 1, **body}
            rows.append(row)
            return row

    def snapshot(self) -> Counter[str]:
        with self.lock:
            return Counter(self.writes)


def write_key(name: str, body: dict[str, Any]) -> str:
    return f"POST /api/{name} " + json.dumps(body, sort_keys=True)


def _handler(backend: Backend) -> type[SimpleHTTPRequestHandler]:
    class App(SimpleHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path.startswith("/api/"):
                with backend.lock:
                    send_json(self, 200, list(backend.lists.get(self.path[5:], [])))
                return
            super().do_GET()

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            send_json(self, 201, backend.post(self.path.removeprefix("/api/"), body))

        def log_message(self, format: str, *args: object) -> None:
            pass

    return App


@dataclass
class App:
    base: str
    root: Path
    backend: Backend

    def edited(self, name: str, old: str, new: str) -> _Edit:
        return _Edit(self.root / name, old, new)


@dataclass
class _Edit:
    """A change of one served file for the duration of a ``with`` block."""

    path: Path
    old: str
    new: str
    original: str = ""

    def __enter__(self) -> None:
        self.original = self.path.read_text()
        assert self.old in self.original, (self.path, self.old)
        self.path.write_text(self.original.replace(self.old, self.new))

    def __exit__(self, *exc: object) -> None:
        self.path.write_text(self.original)


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    root = tmp_path_factory.mktemp("replay-app")
    shutil.copytree(APP, root, dirs_exist_ok=True)
    backend = Backend()
    handler = functools.partial(_handler(backend), directory=str(root))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield App(f"http://127.0.0.1:{server.server_address[1]}", root, backend)
    server.shutdown()
    server.server_close()


# ---- the sessions ----------------------------------------------------------------------------


class Agent:
    """What an agent does through the host: ``interact``, sampling, screenshots."""

    def __init__(self, client: BusClient, base: str) -> None:
        self.c, self.base = client, base
        self.sampled: dict[str, set[str]] = {}

    async def request(self, cmd: str, args: dict[str, Any], timeout: float = 10) -> Any:
        return await self.c.request(cmd, args, timeout=timeout)

    async def act(self, **args: Any) -> dict[str, Any]:
        return await self.request("interact", args, timeout=30)

    async def open(self, page: str) -> None:
        await self.act(action="navigate", url=f"{self.base}/{page}")

    async def sample(self) -> None:
        """What moves on the page now (as ``generate_test`` samples it)."""
        for url, sels in (await masks.sample(self.request)).items():
            self.sampled.setdefault(url, set()).update(sels)

    async def click_at(self, selector: str, x: float, y: float) -> None:
        """A click at (x, y) CSS px inside ``selector``, aimed in a screenshot as a model would."""
        box = (await self.request("resolve", {"selector": selector}))["bounds"]
        shot = await self.request("screenshot", {}, timeout=20)
        info = await self.request("page_info", {})
        scale = shot["width"] / info["viewport"]["width"]
        await self.act(
            action="click",
            x=(box["x"] + x) * scale,
            y=(box["y"] + y) * scale,
            screenshot_id=shot["screenshot_id"],
        )


Drive = Callable[[Agent], Awaitable[None]]


async def _mix(a: Agent) -> None:
    await a.open("index.html")
    await a.sample()
    await a.act(action="type", selector="#title", text="Widget")
    await a.act(action="keypress", key="Enter")
    await asyncio.sleep(0.8)
    await a.act(action="click", selector="#pad")
    await a.act(action="click", selector="#break")
    await asyncio.sleep(0.2)  # the agent's next call comes quickly
    await a.open("other.html")


async def _board(a: Agent) -> None:
    await a.open("index.html")
    await asyncio.sleep(0.3)
    await a.open("board.html")  # the tool's second navigation: its own step
    await a.sample()
    await a.click_at("#board", *BOARD_CLICK)
    await asyncio.sleep(0.8)


async def _add_by_click(a: Agent) -> None:
    await a.open("index.html")
    await a.sample()
    await a.act(action="click", selector="#break")  # throws while BUG is on
    await a.act(action="type", selector="#title", text="Gadget")
    await a.act(action="click", selector="#add-form button")  # a mouse submit, not Enter
    await asyncio.sleep(0.8)


async def _filter(a: Agent) -> None:
    await a.open("index.html")
    await a.sample()
    await a.act(action="type", selector="#filter", text="a")
    await a.act(action="keypress", key="Enter")  # not in a form: the page's own keydown
    await asyncio.sleep(0.8)


async def _scroll(a: Agent) -> None:
    await a.open("index.html")
    await a.sample()
    await a.act(action="scroll", to="bottom")
    await a.request("screenshot", {"full_page": True}, timeout=30)
    await a.act(action="click", selector="#like")
    await asyncio.sleep(1.0)


@dataclass(frozen=True)
class Scenario:
    name: str
    drive: Drive
    steps: list[tuple[str, str, str]]  # (kind, origin, action kind or page) per step
    writes: list[str]  # the endpoint of each write the session sent (POST /api/<name>)
    error: str | None = None  # the recorded error, when the session has one
    positional: bool = False  # a canvas click replayed at its offset
    unwatched: tuple[str, ...] = ()  # pages left before what moves on them was seen


GOTO = ("goto", "tool")
SESSIONS = [
    Scenario(
        "mix",
        _mix,
        [
            (*GOTO, "index.html"),
            ("action", "tool", "fill"),
            ("action", "tool", "press"),  # Enter; the browser's submit click is part of it
            ("action", "tool", "click"),
            ("action", "tool", "click"),
            (*GOTO, "other.html"),  # 200 ms after a click: still the tool's own
        ],
        ["items"],
        error="widget missing",
        positional=True,
    ),
    Scenario(
        "board",
        _board,
        [(*GOTO, "index.html"), (*GOTO, "board.html"), ("action", "tool", "click")],
        ["marks"],  # at the recorded offset: every replay sends the same x, y
        positional=True,
        unwatched=("index.html",),
    ),
    Scenario(
        "add_by_click",
        _add_by_click,
        [
            (*GOTO, "index.html"),
            ("action", "tool", "click"),
            ("action", "tool", "fill"),
            ("action", "tool", "click"),  # the submit it caused is part of it
        ],
        ["items"],
        error="widget missing",
    ),
    Scenario(
        "filter",
        _filter,
        [(*GOTO, "index.html"), ("action", "tool", "fill"), ("action", "tool", "press")],
        ["searches"],
    ),
    Scenario(
        "scroll",
        _scroll,
        [(*GOTO, "index.html"), ("action", "tool", "click")],
        ["likes"],
    ),
]
BY_NAME = {s.name: s for s in SESSIONS}
NAMES = [s.name for s in SESSIONS]
ERROR_NAMES = [s.name for s in SESSIONS if s.error]


async def _record(runtime_dir: Path, base: str, drive: Drive) -> dict[str, Any]:
    async with await BusClient.connect(runtime_dir=runtime_dir) as c:
        await c.request(
            "record_config",
            {
                "network": True,
                "auto_screenshot": {"on_navigation": True, "on_action": True, "on_error": True},
                "min_interval_s": 0,
            },
            timeout=10,
        )
        agent = Agent(c, base)
        await drive(agent)
        await agent.sample()  # generate_test samples the live page (and the last auto screenshot)
        timeline = await c.request("timeline", {}, timeout=10)
        full = await c.request("screenshots", {"images": "full"}, timeout=10)
        info = await c.request("page_info", {}, timeout=10)
    return {
        "timeline": timeline,
        "sampled": agent.sampled,
        "images": {s["id"]: s["jpeg"] for s in full["screenshots"] if s.get("jpeg")},
        "environment": {"viewport": info.get("viewport")},
    }


@dataclass
class Recorded:
    data: dict[str, Any]
    writes: Counter[str]  # what the backend saw while it was recorded

    @property
    def session(self) -> Session:
        d = self.data
        return Session.from_export(d["timeline"], images=d["images"], environment=d["environment"])


@pytest.fixture(scope="module")
def recorded(app: App) -> dict[str, Recorded]:
    out: dict[str, Recorded] = {}
    for s in SESSIONS:
        before = app.backend.snapshot()
        browser = start_browser(window_size=(1280, 800))
        try:
            data = asyncio.run(_record(browser.runtime_dir, app.base, s.drive))
        finally:
            browser.close()
        out[s.name] = Recorded(data, app.backend.snapshot() - before)
    return out


# ---- running what was generated --------------------------------------------------------------


def _project(tmp: Path, module: str) -> Path:
    tmp.mkdir(parents=True)
    (tmp / "node_modules").symlink_to(NODE_MODULES)
    pkg = {"name": "replay-" + module, "private": True}
    if module == "esm":
        pkg["type"] = "module"
    (tmp / "package.json").write_text(json.dumps(pkg))
    (tmp / "playwright.config.js").write_text(ESM_CONFIG if module == "esm" else CONFIG)
    return tmp


def statuses(run: subprocess.CompletedProcess[str]) -> dict[str, list[str]]:
    """Spec file → the status of each of its runs (``--repeat-each`` runs each N times)."""
    out: dict[str, list[str]] = {}

    def walk(suite: dict[str, Any]) -> None:
        for spec in suite.get("specs", []):
            runs = out.setdefault(spec["file"], [])
            runs.extend(r["status"] for t in spec["tests"] for r in t["results"])
        for child in suite.get("suites", []):
            walk(child)

    for suite in json.loads(run.stdout)["suites"]:
        walk(suite)
    return out


@dataclass
class Run:
    """One Playwright (or node) invocation: each file's statuses and the writes it sent."""

    proc: subprocess.CompletedProcess[str]
    writes: Counter[str]
    status: dict[str, list[str]] = field(default_factory=dict)

    def of(self, file: str) -> list[str]:
        return self.status.get(file, [])

    def tail(self) -> str:
        return self.proc.stdout[-3000:] + self.proc.stderr[-2000:]


def _run(app: App, call: Callable[[], subprocess.CompletedProcess[str]]) -> Run:
    before = app.backend.snapshot()
    proc = call()
    writes = app.backend.snapshot() - before
    try:
        status = statuses(proc)
    except (json.JSONDecodeError, KeyError):
        status = {}
    return Run(proc, writes, status)


def _npx(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return npx(project, *args, timeout=900)  # up to 50 runs in one invocation


def _spec(name: str, language: str) -> str:
    return f"{name}.spec.{language}"


def _visual(rec: Recorded, s: Scenario, module: str, language: str) -> str:
    return playwright.generate_test_spec(
        rec.session,
        include_fixtures=True,
        assert_no_errors=s.error is None,  # a session without errors asserts that too
        module=module,  # type: ignore[arg-type]
        language=language,  # type: ignore[arg-type]
        sampled_dynamic=rec.data["sampled"],
    )


@dataclass
class Project:
    dir: Path
    language: str
    specs: dict[str, str]  # session name → spec text
    runs: dict[str, Run] = field(default_factory=dict)


def _visual_project(
    tmp: Path, recorded: dict[str, Recorded], module: str, language: str
) -> Project:
    project = Project(_project(tmp / module, module), language, {})
    for s in SESSIONS:
        project.specs[s.name] = spec = _visual(recorded[s.name], s, module, language)
        (project.dir / _spec(s.name, language)).write_text(spec)
    return project


def _copy_baselines(src: Project, dst: Project) -> None:
    """The ESM run's baselines for the CommonJS specs: both must replay to the same pixels."""
    for name in NAMES:
        folder = src.dir / f"{_spec(name, src.language)}-snapshots"
        shutil.copytree(folder, dst.dir / f"{_spec(name, dst.language)}-snapshots")


@pytest.fixture(scope="module")
def visual(
    recorded: dict[str, Recorded], app: App, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Project]:
    """ESM/TS: baselines, 10 runs, a CSS change; CommonJS/JS: 10 runs on the same baselines."""
    tmp = tmp_path_factory.mktemp("replay-visual")
    esm = _visual_project(tmp, recorded, "esm", "ts")
    cjs = _visual_project(tmp, recorded, "cjs", "js")
    esm.runs["baseline"] = _run(app, lambda: _npx(esm.dir, "--update-snapshots"))
    _copy_baselines(esm, cjs)
    for project in (esm, cjs):
        project.runs["repeat"] = _run(
            app, lambda p=project: _npx(p.dir, f"--repeat-each={RUNS}", f"--workers={WORKERS}")
        )
    # A visible change of similar brightness (blue header → green): Playwright's default
    # per-pixel threshold (0.2) let exactly this pass; the spec's 0.1 does not.
    with app.edited("app.css", "background: #2d6cdf", "background: #1e8449"):
        esm.runs["css"] = _run(app, lambda: _npx(esm.dir, f"--workers={WORKERS}"))
    return {"esm": esm, "cjs": cjs}


@pytest.fixture(scope="module")
def error_runs(
    recorded: dict[str, Recorded], app: App, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Run]:
    """The ``assert_no_errors`` specs of the sessions that saw an error: with the bug, fixed."""
    project = _project(tmp_path_factory.mktemp("replay-errors") / "errors", "esm")
    for name in ERROR_NAMES:
        spec = playwright.generate_test_spec(recorded[name].session, assert_visual=False)
        (project / _spec(name, "ts")).write_text(spec)
    runs = {"buggy": _run(app, lambda: _npx(project, f"--workers={WORKERS}"))}
    with app.edited("app.js", "const BUG = true;", "const BUG = false;"):
        runs["fixed"] = _run(app, lambda: _npx(project, f"--workers={WORKERS}"))
    return runs


# ---- the checks, per session -----------------------------------------------------------------


def _writes(recorded: dict[str, Recorded], names: list[str], runs: int) -> Counter[str]:
    """The writes ``runs`` replays of these sessions must send: the recorded ones, each time."""
    return Counter({k: runs * n for name in names for k, n in recorded[name].writes.items()})


def _described(steps: list[Any], base: str) -> list[tuple[str, str, str]]:
    out = []
    for s in steps:
        what = s.action.kind if s.action else s.url.removeprefix(base + "/")
        out.append((s.kind, s.origin, what))
    return out


@pytest.mark.parametrize("name", NAMES)
def test_steps_are_what_happened(name: str, recorded: dict[str, Recorded], app: App) -> None:
    s, rec = BY_NAME[name], recorded[name]
    steps = build_steps(rec.session)
    assert _described(steps, app.base) == s.steps
    # The recording itself wrote once to each endpoint; a replay must send exactly these writes.
    assert sorted(k.split()[1].removeprefix("/api/") for k in rec.writes) == sorted(s.writes)
    assert set(rec.writes.values()) == {1}, rec.writes
    assert [st.effect for st in steps].count("write") == len(s.writes)
    errors = [e.message for st in steps for e in st.errors]
    assert (s.error is not None) == bool(errors), errors
    assert s.error is None or s.error in errors[0]
    clicks = [st for st in steps if st.position is not None]
    assert bool(clicks) == s.positional
    assert all(st.action.target.tag == "canvas" for st in clicks)
    # The clock was seen moving on every page a visual assertion looks at (but other.html): by
    # the live sampling, or the host's observations. A page the agent left at once was not
    # watched: the spec does not assert on it (its clock would make every run red).
    moved = dynamic_selectors(rec.session)
    for url, sels in rec.data["sampled"].items():
        moved.setdefault(url, set()).update(sels)
    watched = watched_pages(rec.session) | set(rec.data["sampled"])
    pages = {st.navigates_to or st.url for st in steps}
    assert {p.removeprefix(app.base + "/") for p in pages - watched} == set(s.unwatched)
    for url in (pages & watched) - {f"{app.base}/other.html"}:
        assert "#clock" in moved.get(url, set()), (url, moved)


def test_the_mixed_session_records_the_start_up_fetch(recorded: dict[str, Recorded]) -> None:
    # The list the page fetched at start-up (before the bridge knew network capture was on) is
    # recorded as well as the one after the POST: the replay's first screen shows the list.
    entries = recorded["mix"].data["timeline"]["entries"]
    calls = [
        (e["method"], e["status"])
        for e in entries
        if e.get("type") == "network" and e.get("url", "").endswith("/api/items")
    ]
    assert calls == [("GET", 200), ("POST", 201), ("GET", 200)], calls


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("module", ["esm", "cjs"])
def test_visual_spec_passes_10_of_10_sending_each_write_once(
    name: str, module: str, visual: dict[str, Project], recorded: dict[str, Recorded]
) -> None:
    s, project = BY_NAME[name], visual[module]
    spec, file = project.specs[name], _spec(name, project.language)
    assert ("import { test, expect }" in spec) == (module == "esm")
    assert "route.fulfill" in spec and "page.locator('#clock')" in spec
    assert ("click({ position: {" in spec) == s.positional
    if module == "esm":
        base = project.runs["baseline"]
        assert base.of(file) == ["passed"], base.tail()
    repeat = project.runs["repeat"]
    assert repeat.of(file) == ["passed"] * RUNS, repeat.tail()
    writes = recorded[name].writes
    assert {k: repeat.writes[k] for k in writes} == {k: RUNS for k in writes}, repeat.writes
    # Nothing else either: the invocation sent the five sessions' writes, RUNS times each.
    assert repeat.writes == _writes(recorded, NAMES, RUNS), repeat.writes


@pytest.mark.parametrize("name", NAMES)
def test_visual_spec_fails_after_a_css_change(name: str, visual: dict[str, Project]) -> None:
    css = visual["esm"].runs["css"]
    assert css.of(_spec(name, "ts")) == ["failed"], css.tail()
    assert "toHaveScreenshot" in css.proc.stdout and "pixels" in css.proc.stdout


@pytest.mark.parametrize("name", ERROR_NAMES)
def test_error_spec_fails_with_the_bug_and_passes_once_fixed(
    name: str, error_runs: dict[str, Run], recorded: dict[str, Recorded]
) -> None:
    s, file = BY_NAME[name], _spec(name, "ts")
    buggy, fixed = error_runs["buggy"], error_runs["fixed"]
    assert buggy.of(file) == ["failed"], buggy.tail()
    assert s.error is not None and s.error in buggy.proc.stdout
    assert fixed.of(file) == ["passed"], fixed.tail()
    for run in (buggy, fixed):  # every step ran, with the bug too: each write once
        writes = recorded[name].writes
        assert {k: run.writes[k] for k in writes} == dict(writes), run.writes
        assert run.writes == _writes(recorded, ERROR_NAMES, 1), run.writes


@pytest.mark.parametrize("name", NAMES)
def test_reproduction_script_runs_to_the_end_sending_each_write_once(
    name: str, recorded: dict[str, Recorded], app: App, tmp_path: Path
) -> None:
    s, rec = BY_NAME[name], recorded[name]
    script = playwright.reproduction_script(rec.session, include_fixtures=True)
    project = _project(tmp_path / "repro", "cjs")
    (project / "repro.js").write_text(script)
    run = _run(app, lambda: run_node(project, "repro.js", timeout=60))
    assert run.proc.returncode == 0, run.tail()
    assert f"replayed {len(s.steps)} steps" in run.proc.stdout
    assert s.error is None or s.error in run.proc.stdout
    assert run.writes == rec.writes, run.writes


@pytest.mark.parametrize("name", NAMES)
def test_bug_report_renders_every_step_with_its_image(
    name: str, recorded: dict[str, Recorded]
) -> None:
    s = recorded[name].session
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
    error = BY_NAME[name].error
    assert error is None or error in text
