"""MCP screenshot latency and context cost over a corpus of pages, side by side through real
stdio: shotbridge vs Playwright MCP vs Chrome DevTools MCP.

    python bench/bench_mcp.py [--pages dashboard,grid] [--runs 30] [--warmup 2]
                              [--out bench/results-mcp.md] [--raw DIR]

The corpus is bench/pages/ (its README.md says what each page is; `npm ci` there first), served
from 127.0.0.1 by this script on two ports, the second being the other origin of the frames page.
All servers run at once, each with its own headless Debian Chromium at a 1920×1080 viewport; each
page is opened in all three, then the calls are interleaved in an order shuffled every round
(seeded), so the shared machine's noise falls on all alike and no call always follows another. Time
is measured at the MCP client, around ``tools/call``: JSON-RPC, base64 and stdio included.

Our per-stage breakdown comes from wall-clock stamps (``SHOTBRIDGE_BENCH_STAGES``): the extension
notes when it started, when it asked Chrome for the pixels and when Chrome handed them over, the
host when the reply arrived and when its result was ready, the MCP server when it got the result
and returned its blocks, and this client when the response arrived.

Context cost, per page, is what the model reads: our annotated ``observe`` with its default map
(image tokens width × height / 750, as ``content.estimated_tokens`` counts them, plus text
characters / 4) against Playwright MCP's ``browser_snapshot`` text plus its
``browser_take_screenshot`` (its image by the same formula, plus its text). Chrome DevTools MCP's
``take_snapshot`` + ``take_screenshot`` are shown beside them. The size of each server's
``tools/list`` is what every session pays before its first call.

* ours: ``shotctl mcp --browser headless --cooldown 0`` → ``capture_screenshot`` and ``observe``
  with ``annotate_screenshot``.
* peer: ``@playwright/mcp`` (npm, in bench/playwright-mcp; `npm ci` there first; no browser
  download: it runs /usr/bin/chromium) → ``browser_take_screenshot {type: jpeg}``.
* peer: ``chrome-devtools-mcp`` (npm, pinned in bench/chrome-devtools-mcp; `npm ci` there first;
  ``--executablePath /usr/bin/chromium --headless --isolated``) → ``take_screenshot
  {format: jpeg}``.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import functools
import io
import json
import os
import platform
import random
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import mcp
from mcp import StdioServerParameters
from mcp.types import CallToolResult, ImageContent, TextContent
from PIL import Image

REPO = Path(__file__).resolve().parents[1]
PEER_DIR = REPO / "bench" / "playwright-mcp"
PEER_CLI = PEER_DIR / "node_modules" / "@playwright" / "mcp" / "cli.js"
CDT_DIR = REPO / "bench" / "chrome-devtools-mcp"
CDT_PKG = CDT_DIR / "node_modules" / "chrome-devtools-mcp"
CDT_CLI = CDT_PKG / "build" / "src" / "bin" / "chrome-devtools-mcp.js"
PAGES_DIR = REPO / "bench" / "pages"
LIGHT_DIR = REPO / "tests" / "pages" / "mcp"
CHROMIUM = "/usr/bin/chromium"
VIEWPORT = (1920, 1080)
TIMEOUT = 60.0
# Scripts on the corpus pages (the grid, the web components) render after load.
SETTLE_S = 1.5
# A model's turn between an action and its next look, at its shortest (real ones take seconds).
TURN_S = 0.5
TOKENS_PER_PIXEL = 1 / 750  # the model's estimate of image tokens, as content.estimated_tokens

# The corpus, in the order it runs. "light" (the one page of earlier runs) only when asked for.
CORPUS: dict[str, str] = {
    "dashboard": "dashboard.html",
    "article": "article.html",
    "grid": "grid.html",
    "components": "components.html",
    "frames": "frames.html",
    "motion": "motion.html",
}
EXTRA: dict[str, str] = {"light": "light/big.html"}
# Pages whose secret moves: the stage-before-capture target does not apply to them.
MOVING = {"motion"}


@dataclass
class Series:
    name: str
    times_ms: list[float] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)
    dims: set[tuple[int, int]] = field(default_factory=set)
    errors: list[str] = field(default_factory=list)
    # Wall-clock ms when each recorded call was sent and its response arrived.
    sent_at: list[float] = field(default_factory=list)
    got_at: list[float] = field(default_factory=list)
    # The series of the call made just before each recorded one.
    after: list[str] = field(default_factory=list)

    def record(
        self,
        elapsed_ms: float,
        result: CallToolResult,
        stamps: tuple[float, float],
        after: str = "",
    ) -> None:
        if result.is_error:
            self.errors.append(str(result.content[0])[:300])
            return
        images = [b for b in result.content if isinstance(b, ImageContent)]
        if not images:
            self.errors.append("no image block")
            return
        data = base64.b64decode(images[0].data)
        with Image.open(io.BytesIO(data)) as img:
            self.dims.add(img.size)
            fmt = img.format
        if fmt != "JPEG":
            self.errors.append(f"{fmt} image")
        self.times_ms.append(elapsed_ms)
        self.sizes.append(len(data))
        self.sent_at.append(stamps[0])
        self.got_at.append(stamps[1])
        self.after.append(after)

    def row(self) -> dict[str, Any]:
        t = sorted(self.times_ms)
        return {
            "name": self.name,
            "n": len(t),
            "p50": pct(t, 0.50) if t else float("nan"),
            "p95": pct(t, 0.95) if t else float("nan"),
            "mean": statistics.fmean(t) if t else float("nan"),
            "bytes": round(statistics.median(self.sizes)) if self.sizes else 0,
            "dims": ", ".join(f"{w}×{h}" for w, h in sorted(self.dims)) or "—",
            "errors": len(self.errors),
        }


@dataclass
class PageResult:
    name: str
    rows: dict[str, dict[str, Any]]  # ours, pw, cdt, obs, acted, shot_acted, turn, shot_turn
    stages: dict[str, Any]
    observe_stages: dict[str, Any]
    acted_stages: dict[str, Any]
    turn_stages: dict[str, Any]
    context: dict[str, Any]
    errors: dict[str, list[str]]


def pct(sorted_values: list[float], q: float) -> float:
    return sorted_values[min(len(sorted_values) - 1, round(q * (len(sorted_values) - 1)))]


# --- the corpus, served ---------------------------------------------------------------------


class PagesHandler(SimpleHTTPRequestHandler):
    """bench/pages/ (with its node_modules), and tests/pages/mcp/ under /light/."""

    def translate_path(self, path: str) -> str:
        if path.startswith("/light/"):
            return str(LIGHT_DIR / Path(path.split("?")[0]).name)
        return super().translate_path(path)

    def do_GET(self) -> None:
        if self.path == "/favicon.ico":  # no 404 in the pages' consoles
            self.send_response(204)
            self.end_headers()
            return
        super().do_GET()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextlib.contextmanager
def serve_pages() -> Iterator[tuple[str, str]]:
    """Two origins for the corpus: the pages' own, and another port for the cross-origin frame."""
    if not (PAGES_DIR / "node_modules").exists():
        sys.exit(f"corpus packages missing: run `npm ci` in {PAGES_DIR}")
    handler = functools.partial(PagesHandler, directory=str(PAGES_DIR))
    servers = [ThreadingHTTPServer(("127.0.0.1", 0), handler) for _ in range(2)]
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield tuple(f"http://127.0.0.1:{s.server_address[1]}" for s in servers)  # type: ignore[misc]
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()


def page_url(base: str, cross: str, name: str) -> str:
    path = CORPUS.get(name) or EXTRA[name]
    return f"{base}/{path}?cross={cross}" if name == "frames" else f"{base}/{path}"


# --- the servers ----------------------------------------------------------------------------


def ours_params(
    window: tuple[int, int] = VIEWPORT, stages: Path | None = None
) -> StdioServerParameters:
    paths = (str(REPO / "python"), os.environ.get("PYTHONPATH"))
    env = {"PYTHONPATH": os.pathsep.join(p for p in paths if p)}
    if stages is not None:
        env["SHOTBRIDGE_BENCH_STAGES"] = str(stages)
    return StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "shotbridge",
            "mcp",
            "--browser",
            "headless",
            "--window-size",
            f"{window[0]}x{window[1]}",
            "--cooldown",
            "0",
        ],
        env=env,
        cwd=str(REPO),
    )


def peer_params() -> StdioServerParameters:
    if not PEER_CLI.exists():
        sys.exit(f"Playwright MCP missing: run `npm ci` in {PEER_DIR}")
    return StdioServerParameters(
        command="node",
        args=[
            str(PEER_CLI),
            "--executable-path",
            CHROMIUM,
            "--headless",
            "--isolated",
            "--no-sandbox",
            "--viewport-size",
            f"{VIEWPORT[0]}x{VIEWPORT[1]}",
            "--output-dir",
            str(PEER_DIR / "out"),
        ],
        env={"PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1"},
        cwd=str(PEER_DIR),
    )


def cdt_params() -> StdioServerParameters:
    if not CDT_CLI.exists():
        sys.exit(f"Chrome DevTools MCP missing: run `npm ci` in {CDT_DIR}")
    return StdioServerParameters(
        command="node",
        args=[
            str(CDT_CLI),
            "--executablePath",
            CHROMIUM,
            "--headless",
            "--isolated",
            "--viewport",
            f"{VIEWPORT[0]}x{VIEWPORT[1]}",
            "--chromeArg=--no-sandbox",
            "--no-usage-statistics",
            "--no-performance-crux",
            # One page: no pageId on every call (the default routes by page id).
            "--no-page-id-routing",
        ],
        env={"CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS": "1", "PATH": os.environ["PATH"]},
        cwd=str(CDT_DIR),
    )


def epoch_ms() -> float:
    return time.time() * 1000


async def timed(
    client: mcp.Client, tool: str, args: dict[str, Any]
) -> tuple[float, Any, tuple[float, float]]:
    sent = epoch_ms()
    t0 = time.perf_counter()
    result = await client.call_tool(tool, args, read_timeout_seconds=TIMEOUT)
    elapsed = (time.perf_counter() - t0) * 1000
    return elapsed, result, (sent, epoch_ms())


async def after_keypress(
    ours: mcp.Client, tool: str, pause_s: float = 0.0
) -> tuple[float, Any, tuple[float, float]]:
    """Our `tool` after an action (untimed), right away or after `pause_s`.

    A keypress of Shift changes nothing a user sees, but it is input: the page may have restyled
    (page/unchanged.js), so the labels read before it are not reused as they were. The page
    reads them again while the action waits for a navigation to start (lib/input.js, page/
    discover.js readAhead), so right away an annotated observe reuses that read unless the page
    changed after it; after a pause, the page has read them again while idle if it changed.
    """
    check(await ours.call_tool("interact", {"action": "keypress", "key": "Shift"}), "keypress")
    await asyncio.sleep(pause_s)
    return await timed(ours, tool, {"annotate_screenshot": True} if tool == "observe" else {})


def of_series(stamps: list[dict[str, Any]], series: Series) -> list[dict[str, Any]]:
    """The stamps of `series`' calls: each reached the host between its call's send and reply."""
    spans = list(zip(series.sent_at, series.got_at, strict=True))
    return [st for st in stamps if any(s <= st.get("host_req_at", -1.0) <= g for s, g in spans)]


class BenchError(RuntimeError):
    """A call the bench needs failed: that page is reported as failed, the others go on."""


def check(result: CallToolResult, what: str) -> CallToolResult:
    if result.is_error:
        raise BenchError(f"{what} failed: {str(result.content)[:500]}")
    return result


async def our_window(url: str) -> tuple[int, int]:
    """The --window-size that gives our headless Chromium a VIEWPORT-sized viewport.

    Headless Chromium keeps part of the window for itself; the peers set the viewport directly,
    so ours is matched to it from one probing run (innerWidth/innerHeight: any page will do).
    """
    async with mcp.Client(ours_params(), read_timeout_seconds=TIMEOUT) as ours:
        check(await ours.call_tool("interact", {"action": "navigate", "url": url}), "navigate")
        page = json.loads(check(await ours.call_tool("observe", {}), "observe").content[0].text)
    width, height = page["viewport"]["width"], page["viewport"]["height"]
    return VIEWPORT[0] + VIEWPORT[0] - round(width), VIEWPORT[1] + VIEWPORT[1] - round(height)


# --- context cost ---------------------------------------------------------------------------


def image_tokens(block: ImageContent) -> int:
    with Image.open(io.BytesIO(base64.b64decode(block.data))) as img:
        width, height = img.size
    return round(width * height * TOKENS_PER_PIXEL)


def read_cost(result: CallToolResult) -> dict[str, Any]:
    """What a model reads of one tool result: text characters, image tokens and image sizes."""
    text = "\n".join(b.text for b in result.content if isinstance(b, TextContent))
    images = [b for b in result.content if isinstance(b, ImageContent)]
    dims = []
    for b in images:
        with Image.open(io.BytesIO(base64.b64decode(b.data))) as img:
            dims.append(img.size)
    return {
        "text": text,
        "chars": len(text),
        "image_tokens": sum(image_tokens(b) for b in images),
        "dims": dims,
    }


def tokens(cost: dict[str, Any]) -> float:
    return cost["image_tokens"] + cost["chars"] / 4


LABEL_LINE = re.compile(r"^\d+ ")


async def context_cost(
    ours: mcp.Client, pw: mcp.Client, cdt: mcp.Client, save: Path | None
) -> dict[str, Any]:
    compact_result = check(
        await ours.call_tool("observe", {"annotate_screenshot": True}), "observe"
    )
    compact = read_cost(compact_result)
    if save is not None:  # to look at what the model got (labels, masks)
        image = next(b for b in compact_result.content if isinstance(b, ImageContent))
        save.with_suffix(".jpg").write_bytes(base64.b64decode(image.data))
        save.with_suffix(".txt").write_text(compact["text"])
    full_result = check(
        await ours.call_tool("observe", {"annotate_screenshot": True, "map": "full"}), "observe"
    )
    full = read_cost(full_result)
    mapping = json.loads(next(b.text for b in full_result.content if isinstance(b, TextContent)))
    label_lines = [line for line in compact["text"].splitlines() if LABEL_LINE.match(line)]
    pw_snap = read_cost(check(await pw.call_tool("browser_snapshot", {}), "browser_snapshot"))
    pw_shot = read_cost(
        check(
            await pw.call_tool("browser_take_screenshot", {"type": "jpeg", "scale": "css"}),
            "browser_take_screenshot",
        )
    )
    cdt_snap = read_cost(check(await cdt.call_tool("take_snapshot", {}), "take_snapshot"))
    cdt_shot = read_cost(
        check(await cdt.call_tool("take_screenshot", {"format": "jpeg"}), "take_screenshot")
    )
    return {
        "masked": mapping.get("image", {}).get("masked_regions", 0),
        "labels": len(mapping.get("annotations", [])),
        "label_lines": len(label_lines),
        "found": mapping.get("total_found", 0),
        "ours": compact,
        "ours_full": full,
        "line_chars": sum(len(line) for line in label_lines),
        "pw_snap": pw_snap,
        "pw_shot": pw_shot,
        "cdt_snap": cdt_snap,
        "cdt_shot": cdt_shot,
    }


async def tools_sizes(clients: dict[str, mcp.Client]) -> dict[str, tuple[int, int]]:
    """Characters of each server's tools/list (tools as JSON, as the model is handed them)."""
    sizes = {}
    for name, client in clients.items():
        tools = (await client.list_tools()).tools
        wire = "".join(t.model_dump_json(exclude_none=True, by_alias=True) for t in tools)
        sizes[name] = (len(tools), len(wire))
    return sizes


# --- one page -------------------------------------------------------------------------------


async def open_page(
    ours: mcp.Client, pw: mcp.Client, cdt: mcp.Client, url: str, info: dict[str, Any]
) -> None:
    first = "ours_first_call_s" not in info
    for key, coro in (
        ("ours", lambda: ours.call_tool("interact", {"action": "navigate", "url": url})),
        ("pw", lambda: pw.call_tool("browser_navigate", {"url": url})),
        ("cdt", lambda: cdt.call_tool("navigate_page", {"type": "url", "url": url})),
    ):
        t0 = time.perf_counter()
        check(await coro(), f"{key} navigate to {url}")
        if first:  # includes launching each server's Chromium
            info[f"{key}_first_call_s"] = time.perf_counter() - t0
    await asyncio.sleep(SETTLE_S)


async def bench_page(
    clients: tuple[mcp.Client, mcp.Client, mcp.Client],
    name: str,
    url: str,
    args: argparse.Namespace,
    stages_log: Path,
    info: dict[str, Any],
) -> PageResult:
    ours, pw, cdt = clients
    await open_page(ours, pw, cdt, url, info)
    ours_shot = Series("shotbridge capture_screenshot")
    pw_shot = Series("Playwright MCP browser_take_screenshot (jpeg)")
    cdt_shot = Series("Chrome DevTools MCP take_screenshot (jpeg)")
    ours_obs = Series("shotbridge observe, annotated")
    ours_acted = Series("shotbridge observe, annotated, right after a keypress")
    ours_shot_acted = Series("shotbridge capture_screenshot, right after a keypress")
    ours_turn = Series("shotbridge observe, annotated, a model's turn after a keypress")
    ours_shot_turn = Series("shotbridge capture_screenshot, a model's turn after a keypress")
    calls: list[tuple[Series, Callable[[], Any]]] = [
        (ours_shot, lambda: timed(ours, "capture_screenshot", {})),
        (pw_shot, lambda: timed(pw, "browser_take_screenshot", {"type": "jpeg", "scale": "css"})),
        (cdt_shot, lambda: timed(cdt, "take_screenshot", {"format": "jpeg"})),
        (ours_obs, lambda: timed(ours, "observe", {"annotate_screenshot": True})),
        (ours_acted, lambda: after_keypress(ours, "observe")),
        (ours_shot_acted, lambda: after_keypress(ours, "capture_screenshot")),
        (ours_turn, lambda: after_keypress(ours, "observe", TURN_S)),
        (ours_shot_turn, lambda: after_keypress(ours, "capture_screenshot", TURN_S)),
    ]
    stages_log.unlink(missing_ok=True)
    previous = ""
    order = random.Random(name)  # the same orders in every run of this page
    for i in range(args.warmup + args.runs):
        for series, call in order.sample(calls, len(calls)):
            try:
                elapsed, result, sent_got = await call()
            except Exception as exc:  # a timeout or a dropped server: counted, not fatal
                if i >= args.warmup:
                    series.errors.append(f"{type(exc).__name__}: {exc}"[:300])
                continue
            finally:
                before, previous = previous, series.name
            if i >= args.warmup:
                series.record(elapsed, result, sent_got, before)
        if i == args.warmup - 1:
            stages_log.unlink(missing_ok=True)  # stamps of the measured captures only
    stamps = []
    if stages_log.exists():
        stamps = [json.loads(line) for line in stages_log.read_text().splitlines()]
    if args.raw:  # every call's stamps and every series' spans, for a closer look
        spans = {
            s.name: list(zip(s.sent_at, s.got_at, s.times_ms, s.after, strict=True))
            for s, _ in calls
        }
        (args.raw / f"{name}.json").write_text(json.dumps({"stamps": stamps, "spans": spans}))
    observed = [st for st in stamps if st.get("tool") == "observe"]
    stamps = of_series([st for st in stamps if st.get("tool") != "observe"], ours_shot)
    acted = of_series(observed, ours_acted)
    turned = of_series(observed, ours_turn)
    observed = of_series(observed, ours_obs)
    save = args.save_images / name if args.save_images else None
    context = await context_cost(ours, pw, cdt, save)
    series = {"ours": ours_shot, "pw": pw_shot, "cdt": cdt_shot, "obs": ours_obs}
    series |= {"acted": ours_acted, "shot_acted": ours_shot_acted}
    series |= {"turn": ours_turn, "shot_turn": ours_shot_turn}
    return PageResult(
        name=name,
        rows={k: s.row() for k, s in series.items()},
        stages=stage_rows(stamps, ours_shot) | {"by_previous": by_previous(ours_shot)},
        observe_stages=stage_rows(observed, ours_obs),
        acted_stages=stage_rows(acted, ours_acted),
        turn_stages=stage_rows(turned, ours_turn),
        context=context,
        errors={s.name: s.errors for s in series.values() if s.errors},
    )


async def run(
    base: str, cross: str, names: list[str], args: argparse.Namespace
) -> tuple[list[PageResult], dict[str, Any]]:
    info: dict[str, Any] = {"window": await our_window(page_url(base, cross, names[0]))}
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        stages_log = Path(tmp) / "stages.jsonl"
        async with (
            mcp.Client(
                ours_params(info["window"], stages_log), read_timeout_seconds=TIMEOUT
            ) as ours,
            mcp.Client(peer_params(), read_timeout_seconds=TIMEOUT) as pw,
            mcp.Client(cdt_params(), read_timeout_seconds=TIMEOUT) as cdt,
        ):
            info["tools"] = await tools_sizes({"ours": ours, "pw": pw, "cdt": cdt})
            # The page does not change between calls: by default a second capture would answer
            # "Unchanged since screenshot #N" without an image. The peers always send one.
            settings = {"skip_unchanged": False}
            check(
                await ours.call_tool("configure", {"action": "capture", "settings": settings}),
                "configure",
            )
            info["load"] = os.getloadavg()
            info["load_after"] = {}
            t0 = time.perf_counter()
            for name in names:
                print(f"{name} …", file=sys.stderr, flush=True)
                url = page_url(base, cross, name)
                try:
                    result = await bench_page((ours, pw, cdt), name, url, args, stages_log, info)
                except Exception as exc:
                    info.setdefault("failed", {})[name] = f"{type(exc).__name__}: {exc}"[:500]
                    print(f"{name} failed: {exc}", file=sys.stderr)
                    continue
                results.append(result)
                info["load_after"][name] = os.getloadavg()
                if "viewport" not in info:
                    page = json.loads(
                        check(await ours.call_tool("observe", {}), "observe").content[0].text
                    )
                    info["viewport"] = page["viewport"]
                    shot = check(await ours.call_tool("capture_screenshot", {}), "capture")
                    image = next(b for b in shot.content if isinstance(b, ImageContent))
                    with Image.open(io.BytesIO(base64.b64decode(image.data))) as img:
                        info["image_width"] = img.width
            info["elapsed_s"] = time.perf_counter() - t0
    return results, info


def by_previous(shot: Series) -> dict[str, tuple[int, float]]:
    """Our capture's p50 when it came right after one of our annotated observes, and otherwise.

    Work an observe of ours left running (its labels, the diff memory's read of the page) may
    still be in the way of the capture that follows it.
    """
    split: dict[str, list[float]] = {"own": [], "peer": []}
    for elapsed, after in zip(shot.times_ms, shot.after, strict=True):
        split["own" if after.startswith("shotbridge observe") else "peer"].append(elapsed)
    return {k: (len(v), statistics.median(v) if v else float("nan")) for k, v in split.items()}


STAGES: list[tuple[str, str]] = [
    ("MCP client → extension starts (stdio, MCP server, bus, host, native messaging)", "request"),
    ("  of which MCP client → host (stdio, MCP SDK, our tool, bus)", "request_host"),
    ("  of which host → extension starts (validate, native messaging, tab lookup)", "request_ext"),
    ("extension: debugger attach (reused: ~0)", "ext_attach"),
    ("extension: before the capture (probe, layout metrics, loader id)", "pre"),
    ("  same, calls that took the cdp path", "pre_cdp"),
    ("  same, calls that took the visible path (captureVisibleTab)", "pre_visible"),
    ("  same, calls right after our own annotated observe", "pre_after_own"),
    ("  same, calls right after a peer's call", "pre_after_peer"),
    ("  of which until the probe began in the page (tab lookup, hops)", "probe_wait"),
    ("  of which the probe ran in the page (cdp path)", "probe_ran"),
    ("Chrome's own capture (Page.captureScreenshot / captureVisibleTab)", "capture"),
    ("  same, calls that took the cdp path", "capture_cdp"),
    ("  same, calls that took the visible path", "capture_visible"),
    ("extension: after the capture (probe, identity checks)", "post"),
    ("  of which until the probe began (pixels to the host, hops)", "post_wait"),
    ("  of which the probe ran in the page", "post_ran"),
    ("native messaging + host parse (extension → host `screenshot`)", "native"),
    ("host: validate, core, registry, buffer", "host"),
    ("  of which the Rust core (decode, mask, resize, encode, thumbnail)", "core"),
    ("host after `take` (diff memory: discover + diff) + bus → MCP server", "bus"),
    ("MCP server → client (blocks, base64, JSON-RPC, stdio, client parse)", "mcp"),
    (
        "overhead above Chrome's capture (image in the extension → response at the client)",
        "overhead",
    ),
    ("  same, to the moment our tool returned its blocks to the MCP SDK", "overhead_tool"),
]
# The annotated observe's own rows: when its labels reached the host, against its pixels.
OBSERVE_KEYS = {
    "request",
    "request_host",
    "request_ext",
    "pre",
    "capture",
    "post",
    "post_wait",
    "native",
    "host",
    "core",
    "bus",
    "mcp",
    "overhead",
}
LABEL_STAGES: list[tuple[str, str]] = [
    ("labels at the host after the pixels (discover reply − capture reply; < 0: before)", "labels"),
    ("the pixels at the host, ahead of the reply (after Chrome handed them over)", "early"),
    ("  decoded and masked (same origin)", "decoded"),
    ("  labelled and encoded (same origin)", "labelled"),
    ("  the capture's reply at the host (same origin)", "reply"),
]


def stage_rows(stamps: list[dict[str, Any]], series: Series) -> dict[str, Any]:
    """p50 of each stage over the measured captures (stamps matched to calls in order)."""
    per: dict[str, list[float]] = {key: [] for _, key in STAGES + LABEL_STAGES}
    methods: list[str] = []
    reused = same = 0

    def add(key: str, *values: Any) -> None:
        if all(isinstance(v, int | float) for v in values):
            per[key].append(values[0] - values[1] if len(values) == 2 else values[0])

    for st, sent, got, after in zip(
        stamps, series.sent_at, series.got_at, series.after, strict=False
    ):
        if "ext_image_at" not in st:
            continue
        g = st.get
        own = "own" if after.startswith("shotbridge") else "peer"
        add(f"pre_after_{own}", g("ext_shoot_at"), g("ext_start_at"))
        add("request", g("ext_start_at"), sent)
        add("request_host", g("host_req_at"), sent)
        add("request_ext", g("ext_start_at"), g("host_req_at"))
        add("ext_attach", g("ext_attach", 0.0))
        add("pre", g("ext_shoot_at"), g("ext_start_at"))
        add("probe_wait", g("ext_probe_ran_at"), g("ext_start_at"))
        add("probe_ran", g("ext_probe_ran_ms"))
        method = str(st.get("method", "?"))
        if method in ("cdp", "visible"):
            add(f"pre_{method}", g("ext_shoot_at"), g("ext_start_at"))
            add(f"capture_{method}", g("ext_image_at"), g("ext_shoot_at"))
        add("capture", g("ext_image_at"), g("ext_shoot_at"))
        add("post", g("ext_return_at"), g("ext_image_at"))
        add("post_wait", g("ext_post_ran_at"), g("ext_image_at"))
        add("post_ran", g("ext_post_ran_ms"))
        add("native", g("host_got_at"), g("ext_return_at"))
        add("host", g("host_done_at"), g("host_got_at"))
        add("labels", g("labels_got_at"), g("host_got_at"))
        for key in ("early", "decoded", "labelled"):
            add(key, g(f"{key}_at"), g("ext_image_at"))
        add("reply", g("host_got_at"), g("ext_image_at"))
        add("core", g("core_ms"))
        add("bus", g("mcp_got_at"), g("host_done_at"))
        add("mcp", got, g("mcp_got_at"))
        add("overhead", got, g("ext_image_at"))
        add("overhead_tool", g("mcp_return_at"), g("ext_image_at"))
        methods.append(method)
        reused += int(st.get("labels_reused", 0))
        same += int(st.get("labels_same", 0))
    counts = ", ".join(f"{k} ×{n}" for k, n in sorted(Counter(methods).items()))
    return {key: statistics.median(v) if v else float("nan") for key, v in per.items()} | {
        "n": len(methods),
        "methods": counts or "—",
        "reused": reused,
        "same": same,
    }


# --- the report -----------------------------------------------------------------------------


def _version(pkg: Path) -> str:
    return json.loads(pkg.read_text())["version"] if pkg.exists() else "?"


def faster_peer(r: PageResult) -> tuple[str, dict[str, Any]]:
    pw, cdt = r.rows["pw"], r.rows["cdt"]
    return ("Playwright", pw) if pw["p50"] <= cdt["p50"] else ("DevTools", cdt)


def ms(value: float) -> str:
    return "—" if value != value else f"{value:.1f}"  # NaN: no call took that path


def ok(cond: bool) -> str:
    return "met" if cond else "**NOT met**"


def header(results: list[PageResult], info: dict[str, Any], args: argparse.Namespace) -> list[str]:
    chromium = subprocess.run(
        [CHROMIUM, "--version"], capture_output=True, text=True
    ).stdout.strip()
    start = info["load"]
    during = ", ".join(f"{name} {lo[0]:.1f}" for name, lo in info["load_after"].items())
    vp = info.get("viewport", {"width": float("nan"), "height": float("nan")})
    names = ",".join(r.name for r in results)
    return [
        "# MCP screenshots over a corpus of pages: shotbridge vs Playwright MCP vs Chrome "
        "DevTools MCP",
        "",
        f"`python bench/bench_mcp.py --pages {names} --runs {args.runs} --warmup {args.warmup}` "
        f"on {time.strftime('%Y-%m-%d %H:%M %Z')}, {platform.machine()} × {os.cpu_count()} CPUs, "
        f"shared with other work: load average {start[0]:.1f} / {start[1]:.1f} (1 / 5 min) "
        f"at the start; 1-min load after each page: {during}. The whole run took "
        f"{info['elapsed_s'] / 60:.1f} min. {chromium}, @playwright/mcp "
        f"{_version(PEER_CLI.parent / 'package.json')}, chrome-devtools-mcp "
        f"{_version(CDT_PKG / 'package.json')}, `mcp` {mcp_version()}.",
        "",
        "Each page of bench/pages/ (see its README.md), served from 127.0.0.1, open in three "
        f"headless Chromiums at a {VIEWPORT[0]}×{VIEWPORT[1]} viewport (Playwright: "
        "`--viewport-size`; DevTools: `--viewport`; ours: `--window-size "
        f"{info['window'][0]}x{info['window'][1]}`, which gave {vp['width']:g}×{vp['height']:g}, "
        f"rendered {info['image_width']} device px wide: `shotctl mcp` renders a window wider "
        "than its 1280 px images at their width, see docs/tools.md; the peers render every CSS "
        "px and send it); "
        f"{SETTLE_S:g} s after navigating, {args.warmup} warm-up rounds, then {args.runs} rounds "
        "of the eight calls, interleaved in an order shuffled every round, timed at the MCP "
        "client around `tools/call` over stdio. Our annotated observe is timed three ways: at a "
        "page unchanged since our last look (its geometry is reused, extension/page/"
        "unchanged.js); right after an untimed `interact` keypress (Shift: input, so the labels "
        "read before it are not reused; the page reads them again while the action waits for a "
        "navigation to start, as after any action, and the observe reuses that read unless the "
        "page changed after it: see the row 'labels reused'); and "
        f"{TURN_S:g} s after one, the shortest turn of a model between acting and looking; "
        "both after a keypress are compared with our capture taken the same way (the page's "
        "own work after the input slows Chrome's capture too). Back to back, a call may still "
        "share the machine with work the one before left (its browser's, or our read of the page "
        "after a capture); after a turn, it does not. Ratios from one run matter more than "
        "absolute figures on this noisy machine.",
        "",
    ]


def latency_table(results: list[PageResult]) -> list[str]:
    lines = [
        "## Capture latency per page (ms)",
        "",
        "| page | ours p50 / p95 | Playwright p50 / p95 | DevTools p50 / p95 | ours ÷ faster "
        "peer, p50 | ours ÷ its p95 | observe annotated p50 | observe ÷ our capture | "
        "capture / observe right after a keypress p50 | observe ÷ capture, both then | "
        f"capture / observe {TURN_S:g} s after a keypress p50 | observe ÷ capture, both then | "
        "labels | ours p50 right after our observe / after a peer's call (n) |",
        "|---|" + "---:|" * 13,
    ]
    for r in results:
        o, pw, cdt, obs, acted = (r.rows[k] for k in ("ours", "pw", "cdt", "obs", "acted"))
        turn, shot_turn = r.rows["turn"], r.rows["shot_turn"]
        shot_acted = r.rows["shot_acted"]
        peer, fast = faster_peer(r)
        lines.append(
            f"| {r.name} | {o['p50']:.1f} / {o['p95']:.1f} | {pw['p50']:.1f} / {pw['p95']:.1f} | "
            f"{cdt['p50']:.1f} / {cdt['p95']:.1f} | {o['p50'] / fast['p50']:.2f}× ({peer}) | "
            f"{o['p95'] / fast['p95']:.2f}× | {obs['p50']:.1f} | {obs['p50'] / o['p50']:.2f}× | "
            f"{shot_acted['p50']:.1f} / {acted['p50']:.1f} | "
            f"{acted['p50'] / shot_acted['p50']:.2f}× | "
            f"{shot_turn['p50']:.1f} / {turn['p50']:.1f} | "
            f"{turn['p50'] / shot_turn['p50']:.2f}× | "
            f"{r.context['labels']} of {r.context['found']} | {split_text(r)} |"
        )
    return [*lines, ""]


def split_text(r: PageResult) -> str:
    (n_own, own), (n_peer, peer) = (r.stages["by_previous"][k] for k in ("own", "peer"))
    return f"{ms(own)} ({n_own}) / {ms(peer)} ({n_peer})"


def stage_table(results: list[PageResult], observe: str = "") -> list[str]:
    """Our stages per page: of the plain captures, or of one series of annotated observes."""
    what = {
        "": "`capture_screenshot`",
        "still": "annotated `observe`",
        "acted": "annotated `observe` right after a keypress",
        "turn": f"annotated `observe` {TURN_S:g} s after a keypress",
    }[observe]
    rows = [r for r in STAGES if not observe or r[1] in OBSERVE_KEYS] + (
        LABEL_STAGES if observe else []
    )
    lines = [
        f"## Our stages per page (p50 ms over the measured {what} calls)",
        "",
        "From wall-clock stamps; stages do not add up exactly to the p50 of the whole.",
        "",
        "| stage | " + " | ".join(r.name for r in results) + " |",
        "|---|" + "---:|" * len(results),
    ]
    tables = [
        {"": r.stages, "still": r.observe_stages, "acted": r.acted_stages, "turn": r.turn_stages}[
            observe
        ]
        for r in results
    ]
    for label, key in rows:
        lines.append(f"| {label} | " + " | ".join(ms(t[key]) for t in tables) + " |")
    lines.append("| capture paths taken | " + " | ".join(t["methods"] for t in tables) + " |")
    if observe:
        lines.append(
            "| labels reused from the page's last read (calls) | "
            + " | ".join(f"{t['reused']} of {t['n']}" for t in tables)
            + " |"
        )
        lines.append(
            "| labels the host already held (the page answered `same`) (calls) | "
            + " | ".join(f"{t['same']} of {t['n']}" for t in tables)
            + " |"
        )
    return [*lines, ""]


def details_table(results: list[PageResult]) -> list[str]:
    lines = [
        "## Every series",
        "",
        "Bytes: median JPEG size (decoded from base64); ours is shrunk to ≤ 1280 px wide for the "
        "model, the peers' are full size.",
        "",
        "| page | tool call | n | p50 ms | p95 ms | mean ms | bytes | image | errors |",
        "|---|---|---:|---:|---:|---:|---:|---|---:|",
    ]
    for r in results:
        for row in r.rows.values():
            lines.append(
                f"| {r.name} | {row['name']} | {row['n']} | {row['p50']:.1f} | {row['p95']:.1f} | "
                f"{row['mean']:.1f} | {row['bytes']:,} | {row['dims']} | {row['errors']} |"
            )
    return [*lines, ""]


def dims_text(cost: dict[str, Any]) -> str:
    return ", ".join(f"{w}×{h}" for w, h in cost["dims"]) or "—"


def context_table(results: list[PageResult]) -> list[str]:
    lines = [
        "## Context cost per page (tokens: image width × height / 750 + text characters / 4)",
        "",
        "Ours: one annotated `observe` with its default (compact) map. Playwright MCP: "
        "`browser_snapshot` + `browser_take_screenshot`. Chrome DevTools MCP: `take_snapshot` + "
        "`take_screenshot`. Text is every text block of the results. Masked: the regions our "
        "image blacks out (password fields and other secrets).",
        "",
        "| page | labels | masked | our image tok | our map chars | ours total tok | tok / label | "
        '`map="full"` chars | PW snapshot chars | PW screenshot tok (image + text) | '
        "PW total tok | ours ÷ PW | DevTools total tok |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        c = r.context
        ours, pw, cdt = c["ours_total"], c["pw_total"], c["cdt_total"]
        lines.append(
            f"| {r.name} | {c['labels']} | {c['masked']} | {c['ours']['image_tokens']:,} "
            f"({dims_text(c['ours'])}) | {c['ours']['chars']:,} | {ours:,.0f} | "
            f"{c['per_label']:.1f} | {c['ours_full']['chars']:,} | {c['pw_snap']['chars']:,} | "
            f"{tokens(c['pw_shot']):,.0f} ({dims_text(c['pw_shot'])}) | {pw:,.0f} | "
            f"{ours / pw:.2f}× | {cdt:,.0f} |"
        )
    return [*lines, ""]


def summarise_context(results: list[PageResult]) -> dict[str, float]:
    for r in results:
        c = r.context
        c["ours_total"] = tokens(c["ours"])
        c["pw_total"] = tokens(c["pw_snap"]) + tokens(c["pw_shot"])
        c["cdt_total"] = tokens(c["cdt_snap"]) + tokens(c["cdt_shot"])
        c["per_label"] = c["ours"]["chars"] / 4 / max(1, c["labels"])
    labels = sum(r.context["labels"] for r in results)
    return {
        # The whole map text (header included) over every label in the corpus.
        "per_label": sum(r.context["ours"]["chars"] for r in results) / 4 / max(1, labels),
        # The label lines alone.
        "per_line": sum(r.context["line_chars"] for r in results) / 4 / max(1, labels),
        "median_ratio": statistics.median(
            r.context["ours_total"] / r.context["pw_total"] for r in results
        ),
    }


def tools_lines(info: dict[str, Any]) -> list[str]:
    t = info["tools"]
    return [
        "## Tool schemas (`tools/list`, characters of the tools as JSON)",
        "",
        "| server | tools | characters | ≈ tokens |",
        "|---|---:|---:|---:|",
        *(
            f"| {label} | {t[k][0]} | {t[k][1]:,} | {t[k][1] / 4:,.0f} |"
            for k, label in (
                ("ours", "shotbridge"),
                ("pw", "Playwright MCP"),
                ("cdt", "Chrome DevTools MCP"),
            )
        ),
        "",
    ]


def at_line(value: float, limit: float, digits: int = 2) -> str:
    """``value`` to ``digits`` decimals, or one more where that would print the limit itself: a
    value just over it must not read as on it."""
    text = f"{value:.{digits}f}"
    return f"{value:.{digits + 1}f}" if text == f"{limit:.{digits}f}" and value != limit else text


def targets(results: list[PageResult], info: dict[str, Any], ctx: dict[str, float]) -> list[str]:
    lines = ["## Speed targets, from this run", ""]
    ratios = []
    for r in results:
        peer, fast = faster_peer(r)
        o, obs, acted, turn = (r.rows[k] for k in ("ours", "obs", "acted", "turn"))
        shot_acted, shot_turn = r.rows["shot_acted"], r.rows["shot_turn"]
        ratio = o["p50"] / fast["p50"]
        ratios.append(ratio)
        lines.append(
            f"- {r.name}: capture p50 {o['p50']:.1f} vs {fast['p50']:.1f} ms ({peer}) = "
            f"{at_line(ratio, 1.0)}× ({ok(ratio <= 1.0)}: ≤ 1.0×); p95 {o['p95']:.1f} vs "
            f"{fast['p95']:.1f} ms = {at_line(o['p95'] / fast['p95'], 1.25)}× "
            f"({ok(o['p95'] <= 1.25 * fast['p95'])}: ≤ 1.25×); observe {obs['p50']:.1f} ms = "
            f"{at_line(obs['p50'] / o['p50'], 1.15)}× capture "
            f"({ok(obs['p50'] <= 1.15 * o['p50'])}: ≤ 1.15×); "
            f"right after a keypress, observe {acted['p50']:.1f} ms = "
            f"{at_line(acted['p50'] / shot_acted['p50'], 1.15)}× capture "
            f"{shot_acted['p50']:.1f} ms then "
            f"({ok(acted['p50'] <= 1.15 * shot_acted['p50'])}: ≤ 1.15×); "
            f"{TURN_S:g} s after a keypress, "
            f"observe {turn['p50']:.1f} ms = "
            f"{at_line(turn['p50'] / shot_turn['p50'], 1.15)}× capture "
            f"{shot_turn['p50']:.1f} ms then ({ok(turn['p50'] <= 1.15 * shot_turn['p50'])}: "
            "≤ 1.15×)"
        )
    median = statistics.median(ratios)
    lines.append(
        f"- median page: capture p50 {at_line(median, 0.9)}× the faster peer "
        f"({ok(median <= 0.9)}: ≤ 0.9×)"
    )
    still = [r for r in results if r.name not in MOVING]
    if still:
        pre = {r.name: r.stages["pre"] for r in still}
        worst = max(pre, key=lambda k: pre[k])
        spread = max(pre.values()) - min(pre.values())
        lines.append(
            "- stage before Chrome's capture, pages where no secret moves: highest "
            f"{at_line(pre[worst], 5, 1)} ms ({worst}) ({ok(pre[worst] <= 5)}: ≤ 5 ms); "
            f"spread {at_line(spread, 2, 1)} ms ({ok(spread <= 2)}: ≤ 2 ms); "
            + ", ".join(f"{k} {v:.1f}" for k, v in pre.items())
        )
    for r in results:
        if r.name in MOVING:
            lines.append(
                f"- {r.name} (a secret moves): stage before the capture {r.stages['pre']:.1f} ms"
            )
    lines.append(
        f"- default map: {ctx['per_label']:.1f} tokens per label, header included, corpus "
        f"average ({ok(ctx['per_label'] <= 20)}: ≤ 20); label lines alone {ctx['per_line']:.1f}"
    )
    over = [r for r in results if r.context["ours_total"] > r.context["pw_total"]]
    lines.append(
        "- context, ours ÷ Playwright MCP's snapshot + screenshot: "
        + ", ".join(
            f"{r.name} {r.context['ours_total'] / r.context['pw_total']:.2f}×" for r in results
        )
        + f" ({ok(not over)}: ≤ 1.0× on every page); median {ctx['median_ratio']:.2f}× "
        f"({ok(ctx['median_ratio'] <= 0.85)}: ≤ 0.85×)"
    )
    chars = info["tools"]["ours"][1]
    lines.append(f"- our tool schemas {chars:,} characters ({ok(chars <= 10_000)}: ≤ 10,000)")
    first = ", ".join(
        f"{label} {info[f'{k}_first_call_s']:.2f} s"
        for k, label in (("ours", "ours"), ("pw", "Playwright"), ("cdt", "DevTools"))
    )
    lines += ["", f"First navigation (includes launching each server's Chromium): {first}.", ""]
    return lines


def markdown(results: list[PageResult], info: dict[str, Any], args: argparse.Namespace) -> str:
    ctx = summarise_context(results)
    lines = header(results, info, args)
    lines += latency_table(results)
    lines += stage_table(results)
    lines += stage_table(results, observe="still")
    lines += stage_table(results, observe="acted")
    lines += stage_table(results, observe="turn")
    lines += context_table(results)
    lines += tools_lines(info)
    lines += targets(results, info, ctx)
    lines += details_table(results)
    if failed := info.get("failed"):
        lines += ["## Pages that could not be measured", ""]
        lines += [f"- {page}: `{why}`" for page, why in failed.items()]
        lines.append("")
    errors = [(r.name, s, e) for r in results for s, errs in r.errors.items() for e in errs[:3]]
    if errors:
        lines += ["## Errors (first three per series)", ""]
        lines += [f"- {page}, {series}: `{err}`" for page, series, err in errors]
        lines.append("")
    return "\n".join(lines)


def mcp_version() -> str:
    from importlib.metadata import version

    return version("mcp")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--pages",
        default=",".join(CORPUS),
        help=f"comma-separated, from {', '.join([*CORPUS, *EXTRA])} (default: the corpus)",
    )
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results-mcp.md")
    parser.add_argument(
        "--save-images", type=Path, help="folder for each page's annotated observe (JPEG + map)"
    )
    parser.add_argument("--raw", type=Path, help="folder for each page's stamps and calls (JSON)")
    args = parser.parse_args()
    if args.raw:
        args.raw.mkdir(parents=True, exist_ok=True)
    if args.save_images:
        args.save_images.mkdir(parents=True, exist_ok=True)
    names = [n.strip() for n in args.pages.split(",") if n.strip()]
    unknown = [n for n in names if n not in CORPUS and n not in EXTRA]
    if unknown or not names:
        parser.error(f"unknown page(s) {unknown}; choose from {', '.join([*CORPUS, *EXTRA])}")

    with serve_pages() as (base, cross):
        results, info = asyncio.run(run(base, cross, names, args))
    for r in results:
        for series, errs in r.errors.items():
            for err in errs[:3]:
                print(f"{r.name}, {series}: {err}", file=sys.stderr)
    if not results:
        sys.exit(f"no page could be measured: {info.get('failed')}")
    report = markdown(results, info, args)
    print(report)
    args.out.write_text(report)
    print(f"written to {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
