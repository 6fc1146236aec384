"""MCP screenshot latency, side by side through real stdio: shotbridge vs Playwright MCP vs
Chrome DevTools MCP.

    python bench/bench_mcp.py [--runs 30] [--warmup 2] [--out bench/results-mcp.md]

All servers run at once, each with its own headless Debian Chromium at a 1920×1080 viewport, on
the same page served from 127.0.0.1; calls are interleaved and the order rotates every round, so
the shared machine's noise falls on all alike. Time is measured at the MCP client, around
``tools/call``: JSON-RPC, base64 and stdio included.

Our per-stage breakdown comes from wall-clock stamps (``SHOTBRIDGE_BENCH_STAGES``): the extension
notes when it started, when it asked Chrome for the pixels and when Chrome handed them over, the
host when the reply arrived and when its result was ready, the MCP server when it got the result
and returned its blocks, and this client when the response arrived.

* ours: ``shotctl mcp --browser headless`` → ``capture_screenshot`` and ``observe`` with
  ``annotate_screenshot``. ``--cooldown 0`` (hidden flag) lifts the 5 s screenshot cooldown,
  a policy rather than a cost, so that the calls can follow each other.
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
import io
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mcp
from mcp import StdioServerParameters
from mcp.types import CallToolResult, ImageContent
from PIL import Image

REPO = Path(__file__).resolve().parents[1]
PEER_DIR = REPO / "bench" / "playwright-mcp"
PEER_CLI = PEER_DIR / "node_modules" / "@playwright" / "mcp" / "cli.js"
CDT_DIR = REPO / "bench" / "chrome-devtools-mcp"
CDT_PKG = CDT_DIR / "node_modules" / "chrome-devtools-mcp"
CDT_CLI = CDT_PKG / "build" / "src" / "bin" / "chrome-devtools-mcp.js"
CHROMIUM = "/usr/bin/chromium"
VIEWPORT = (1920, 1080)
TIMEOUT = 60.0


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

    def record(
        self, elapsed_ms: float, result: CallToolResult, stamps: tuple[float, float]
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


def pct(sorted_values: list[float], q: float) -> float:
    return sorted_values[min(len(sorted_values) - 1, round(q * (len(sorted_values) - 1)))]


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
        sys.exit(f"Playwright MCP missing: run `npm install` in {PEER_DIR}")
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


def check(result: CallToolResult, what: str) -> CallToolResult:
    if result.is_error:
        raise SystemExit(f"{what} failed: {result.content}")
    return result


async def our_window(url: str) -> tuple[int, int]:
    """The --window-size that gives our headless Chromium a VIEWPORT-sized viewport.

    Headless Chromium keeps part of the window for itself; the peer sets the viewport directly
    (--viewport-size), so ours is matched to it from one probing run.
    """
    async with mcp.Client(ours_params(), read_timeout_seconds=TIMEOUT) as ours:
        check(await ours.call_tool("interact", {"action": "navigate", "url": url}), "navigate")
        page = json.loads(check(await ours.call_tool("observe", {}), "observe").content[0].text)
    width, height = page["viewport"]["width"], page["viewport"]["height"]
    return VIEWPORT[0] + VIEWPORT[0] - round(width), VIEWPORT[1] + VIEWPORT[1] - round(height)


async def run(url: str, runs: int, warmup: int) -> tuple[list[Series], dict[str, Any]]:
    ours_shot, ours_obs = (
        Series("shotbridge capture_screenshot"),
        Series("shotbridge observe, annotated"),
    )
    peer_shot = Series("Playwright MCP browser_take_screenshot (jpeg)")
    cdt_shot = Series("Chrome DevTools MCP take_screenshot (jpeg)")
    info: dict[str, Any] = {"window": await our_window(url)}
    with tempfile.TemporaryDirectory() as tmp:
        stages_log = Path(tmp) / "stages.jsonl"
        async with (
            mcp.Client(
                ours_params(info["window"], stages_log), read_timeout_seconds=TIMEOUT
            ) as ours,
            mcp.Client(peer_params(), read_timeout_seconds=TIMEOUT) as peer,
            mcp.Client(cdt_params(), read_timeout_seconds=TIMEOUT) as cdt,
        ):
            t0 = time.perf_counter()
            check(await ours.call_tool("interact", {"action": "navigate", "url": url}), "navigate")
            info["ours_first_call_s"] = time.perf_counter() - t0  # includes launching Chromium
            t0 = time.perf_counter()
            check(await peer.call_tool("browser_navigate", {"url": url}), "peer navigate")
            info["peer_first_call_s"] = time.perf_counter() - t0
            t0 = time.perf_counter()
            check(await cdt.call_tool("navigate_page", {"type": "url", "url": url}), "cdt navigate")
            info["cdt_first_call_s"] = time.perf_counter() - t0
            page = json.loads(check(await ours.call_tool("observe", {}), "observe").content[0].text)
            info["viewport"] = page["viewport"]
            # The page does not change: by default a second capture would answer "Unchanged since
            # screenshot #N" without an image. The peers always send one, so ours must too.
            settings = {"skip_unchanged": False}
            check(
                await ours.call_tool("configure", {"action": "capture", "settings": settings}),
                "configure",
            )

            calls: list[tuple[Series, Callable[[], Any]]] = [
                (ours_shot, lambda: timed(ours, "capture_screenshot", {})),
                (
                    peer_shot,
                    lambda: timed(
                        peer, "browser_take_screenshot", {"type": "jpeg", "scale": "css"}
                    ),
                ),
                (cdt_shot, lambda: timed(cdt, "take_screenshot", {"format": "jpeg"})),
                (ours_obs, lambda: timed(ours, "observe", {"annotate_screenshot": True})),
            ]
            load_before = os.getloadavg()
            stamps: list[dict[str, Any]] = []
            for i in range(warmup + runs):
                k = i % len(calls)
                for series, call in calls[k:] + calls[:k]:  # rotated: nobody always goes first
                    elapsed, result, sent_got = await call()
                    if i >= warmup:
                        series.record(elapsed, result, sent_got)
                if i == warmup - 1 and stages_log.exists():
                    stages_log.unlink()  # stamps of the measured captures only
            info["load"] = (load_before, os.getloadavg())
            full = {"annotate_screenshot": True, "map": "full"}
            obs = check(await ours.call_tool("observe", full), "observe")
            info["labels"] = json.loads(obs.content[1].text)["total_found"]
            if stages_log.exists():
                stamps = [json.loads(line) for line in stages_log.read_text().splitlines()]
        info["stages"] = stage_rows(stamps, ours_shot)
    return [ours_shot, peer_shot, cdt_shot, ours_obs], info


STAGES: list[tuple[str, str]] = [
    ("MCP client → extension starts (stdio, MCP server, bus, host, native messaging)", "request"),
    ("extension: debugger attach (reused: ~0)", "ext_attach"),
    ("extension: before the capture (probe, layout metrics, loader id)", "pre"),
    ("Chrome's own capture (Page.captureScreenshot / captureVisibleTab)", "capture"),
    ("extension: after the capture (probe, identity checks)", "post"),
    ("native messaging + host parse (extension → host `screenshot`)", "native"),
    ("host: validate, core, registry, buffer", "host"),
    ("  of which the Rust core (decode, mask, resize, encode, thumbnail)", "core"),
    ("host after `take` (issue 16's diff memory: discover + diff) + bus → MCP server", "bus"),
    ("MCP server → client (blocks, base64, JSON-RPC, stdio, client parse)", "mcp"),
    (
        "overhead above Chrome's capture (image in the extension → response at the client)",
        "overhead",
    ),
    ("  same, to the moment our tool returned its blocks to the MCP SDK", "overhead_tool"),
]


def stage_rows(stamps: list[dict[str, Any]], series: Series) -> dict[str, Any]:
    """p50 of each stage over the measured captures (stamps matched to calls in order)."""
    per: dict[str, list[float]] = {key: [] for _, key in STAGES}
    methods: list[str] = []
    for st, sent, got in zip(stamps, series.sent_at, series.got_at, strict=False):
        if "ext_image_at" not in st:
            continue
        per["request"].append(st["ext_start_at"] - sent)
        per["ext_attach"].append(st.get("ext_attach", 0.0))
        per["pre"].append(st["ext_shoot_at"] - st["ext_start_at"])
        per["capture"].append(st["ext_image_at"] - st["ext_shoot_at"])
        per["post"].append(st["ext_return_at"] - st["ext_image_at"])
        per["native"].append(st["host_got_at"] - st["ext_return_at"])
        per["host"].append(st["host_done_at"] - st["host_got_at"])
        per["core"].append(st["core_ms"])
        per["bus"].append(st["mcp_got_at"] - st["host_done_at"])
        per["mcp"].append(got - st["mcp_got_at"])
        per["overhead"].append(got - st["ext_image_at"])
        per["overhead_tool"].append(st["mcp_return_at"] - st["ext_image_at"])
        methods.append(str(st.get("method", "?")))
    counts = ", ".join(f"{k} ×{n}" for k, n in sorted(Counter(methods).items()))
    return {key: statistics.median(v) if v else float("nan") for key, v in per.items()} | {
        "n": len(per["request"]),
        "methods": counts,
    }


def _version(pkg: Path) -> str:
    return json.loads(pkg.read_text())["version"] if pkg.exists() else "?"


def markdown(rows: list[dict[str, Any]], info: dict[str, Any], args: argparse.Namespace) -> str:
    chromium = subprocess.run(
        [CHROMIUM, "--version"], capture_output=True, text=True
    ).stdout.strip()
    (l1, l5, _), (a1, _, _) = info["load"]
    lines = [
        "# MCP screenshot latency: shotbridge vs Playwright MCP vs Chrome DevTools MCP",
        "",
        f"`python bench/bench_mcp.py --runs {args.runs} --warmup {args.warmup}` on "
        f"{time.strftime('%Y-%m-%d %H:%M')}, {platform.machine()} × {os.cpu_count()} CPUs "
        f"(shared; load average {l1:.1f} / {l5:.1f} (1 / 5 min) at the start, {a1:.1f} at the "
        f"end), {chromium}, @playwright/mcp {_version(PEER_CLI.parent / 'package.json')}, "
        f"chrome-devtools-mcp {_version(CDT_PKG / 'package.json')}, `mcp` {mcp_version()}.",
        "",
        f"Same page (`{args.page.relative_to(REPO)}`, served from 127.0.0.1) in three headless "
        f"Chromiums at a {VIEWPORT[0]}×{VIEWPORT[1]} viewport (Playwright: `--viewport-size`; "
        f"DevTools: `--viewport`; ours: `--window-size {info['window'][0]}x{info['window'][1]}`, "
        f"which gave {info['viewport']['width']:g}×{info['viewport']['height']:g}); calls "
        f"interleaved in an order that rotates every round, timed at the MCP client around "
        f"`tools/call` over stdio. {args.runs} calls each after {args.warmup} warm-up rounds. "
        "Bytes: median JPEG size (decoded from base64). Ratios matter more than absolute "
        "figures on this noisy machine.",
        "",
        "| tool call | n | p50 ms | p95 ms | mean ms | bytes | image | errors |",
        "|---|---:|---:|---:|---:|---:|---|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['name']} | {r['n']} | {r['p50']:.1f} | {r['p95']:.1f} | {r['mean']:.1f} | "
            f"{r['bytes']:,} | {r['dims']} | {r['errors']} |"
        )
    ours, pw, cdt, obs = rows
    fast = min((pw, cdt), key=lambda r: r["p50"])
    st = info["stages"]
    lines += [
        "",
        f"Our time per stage (p50 of each stage over the {st['n']} measured "
        "`capture_screenshot` calls, from wall-clock stamps; stages do not add up exactly to "
        f"the p50 of the whole). Capture paths taken: {st['methods']}.",
        "",
        "| stage | p50 ms |",
        "|---|---:|",
    ]
    for label, key in STAGES:
        lines.append(f"| {label} | {st[key]:.1f} |")
    ok = lambda cond: "met" if cond else "NOT met"  # noqa: E731
    lines += [
        "",
        "Targets (issue 15), against the faster peer in this run "
        f"({fast['name'].split(' ')[0]} {fast['name'].split(' ')[1]}):",
        "",
        f"- capture p50 {ours['p50']:.1f} ms vs {fast['p50']:.1f} ms: "
        f"{ours['p50'] / fast['p50']:.2f}× ({ok(ours['p50'] <= 0.9 * fast['p50'])}: ≤ 0.9×)",
        f"- capture p95 {ours['p95']:.1f} ms vs {fast['p95']:.1f} ms "
        f"({ok(ours['p95'] <= fast['p95'])}: ≤ the faster peer's p95)",
        f"- overhead above Chrome's own capture p50 {st['overhead']:.1f} ms "
        f"({ok(st['overhead'] <= 15)}: ≤ 15 ms), to our tool's return "
        f"{st['overhead_tool']:.1f} ms",
        f"- annotated observe p50 {obs['p50']:.1f} ms = {obs['p50'] / ours['p50']:.2f}× "
        f"capture p50 ({ok(obs['p50'] <= 1.1 * ours['p50'])}: ≤ 1.1×); "
        f"{info['labels']} elements labelled",
        f"- bytes {ours['bytes']:,} ({ours['dims']}) vs {pw['bytes']:,} and {cdt['bytes']:,} "
        f"({pw['dims']}); ours is shrunk to ≤ 1280 px wide for the model, theirs are full size",
        f"- first call (includes launching each server's Chromium): ours "
        f"{info['ours_first_call_s']:.2f} s, Playwright {info['peer_first_call_s']:.2f} s, "
        f"DevTools {info['cdt_first_call_s']:.2f} s",
        "",
    ]
    return "\n".join(lines)


def mcp_version() -> str:
    from importlib.metadata import version

    return version("mcp")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--page", type=Path, default=REPO / "tests" / "pages" / "mcp" / "big.html")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results-mcp.md")
    args = parser.parse_args()
    args.page = args.page.resolve()

    sys.path.insert(0, str(REPO / "python"))
    from shotbridge.localserve import LocalServer

    with LocalServer(args.page) as url:
        series, info = asyncio.run(run(url, args.runs, args.warmup))
    rows = [s.row() for s in series]
    for s in series:
        for err in s.errors[:3]:
            print(f"{s.name}: {err}", file=sys.stderr)
    report = markdown(rows, info, args)
    print(report)
    args.out.write_text(report)
    print(f"written to {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
