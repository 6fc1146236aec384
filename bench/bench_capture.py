"""End-to-end capture latency: bus request → processed JPEG ready, in real headless Chromium.

Runs every capture variant side by side in one browser, one run, interleaved round-robin so the
shared machine's noise falls on all of them alike:

    python bench/bench_capture.py [--runs 30] [--out bench/results-capture.md]

Variants: CDP vs captureVisibleTab, JPEG vs PNG from the browser, CDP rendering at the output size
(`clip.scale`) vs full size shrunk by the core, and an annotated capture.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import math
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from PIL import Image, ImageChops

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from shotbridge.client.browser import HeadlessBrowser  # noqa: E402
from shotbridge.client.bus_client import BusClient, wait_for_host  # noqa: E402
from shotbridge.client.localserve import LocalServer  # noqa: E402

VARIANTS: dict[str, dict[str, Any]] = {
    "auto (default): captureVisibleTab jpeg when free, else CDP": {},
    "cdp jpeg, rendered at output size": {"method": "cdp"},
    "cdp jpeg q60 (not the default: see below), rendered at output size": {
        "method": "cdp",
        "browser_quality": 60,
    },
    "cdp png, rendered at output size (quality reference)": {
        "method": "cdp",
        "browser_format": "png",
    },
    "cdp jpeg, full size → core": {"method": "cdp", "render_at_output_size": False},
    "cdp png, full size → core": {
        "method": "cdp",
        "render_at_output_size": False,
        "browser_format": "png",
    },
    "captureVisibleTab jpeg → core": {"method": "visible"},
    "captureVisibleTab png → core": {"method": "visible", "browser_format": "png"},
    "annotated (auto + 50 labels)": {"annotate": True},
    # What MCP capture_screenshot sends by default: each image is kept for diffs, and an unchanged
    # view is told as such (so this row pays for both).
    "auto + remember + unchanged_check (MCP default)": {"remember": True, "unchanged_check": True},
}

# Per-stage p50s from the wall-clock stamps the extension and host put in `timings`.
STAGES = {
    "pre": ("ext_shoot_at", "ext_start_at"),
    "chrome": ("ext_image_at", "ext_shoot_at"),
    "post": ("ext_return_at", "ext_image_at"),
    "native": ("host_got_at", "ext_return_at"),
    "host": ("host_done_at", "host_got_at"),
}


def stages_of(res: dict[str, Any], got_at: float) -> dict[str, float]:
    t = res.get("timings", {})
    out = {k: t[a] - t[b] for k, (a, b) in STAGES.items() if a in t and b in t}
    if "host_done_at" in t:
        out["after host"] = got_at - t["host_done_at"]  # diff memory, bus
    return out


def psnr(jpeg: bytes, reference: bytes) -> float:
    """PSNR (dB) of one output image against another of the same size (inf: identical)."""
    a = Image.open(io.BytesIO(jpeg)).convert("RGB")
    b = Image.open(io.BytesIO(reference)).convert("RGB")
    if a.size != b.size:
        return float("nan")
    diff = ImageChops.difference(a, b)
    mse = sum(count * (i % 256) ** 2 for i, count in enumerate(diff.histogram())) / (
        3 * a.size[0] * a.size[1]
    )
    return float("inf") if mse == 0 else 10 * math.log10(255**2 / mse)


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


async def run(runs: int, warmup: int) -> list[dict[str, Any]]:
    with (
        LocalServer(REPO / "demo" / "index.html") as url,
        HeadlessBrowser(
            # Headless Chromium keeps 143 px of the window for its UI: this is a 1920×1080 viewport.
            window_size=(1920, 1223)
        ) as browser,
    ):
        await wait_for_host(runtime_dir=browser.runtime_dir, timeout=30, connected=True)
        async with await BusClient.connect(runtime_dir=browser.runtime_dir) as client:
            await client.request("navigate", {"url": url}, timeout=20)
            times: dict[str, list[float]] = {k: [] for k in VARIANTS}
            stages: dict[str, list[dict[str, float]]] = {k: [] for k in VARIANTS}
            last: dict[str, dict[str, Any]] = {}
            for i in range(warmup + runs):
                for name, extra in VARIANTS.items():
                    t0 = time.perf_counter()
                    res = await client.request("screenshot", extra, timeout=30)
                    dt = (time.perf_counter() - t0) * 1000
                    if i >= warmup:
                        times[name].append(dt)
                        stages[name].append(stages_of(res, time.time() * 1000))
                    last[name] = res
                    # captureVisibleTab is rate-limited by Chrome (2 calls/s): pace every variant
                    # alike so none is measured against a throttled neighbour.
                    await asyncio.sleep(0.55)
    reference = last.get("cdp png, rendered at output size (quality reference)")
    rows = []
    for name, ts in times.items():
        res = last[name]
        Image.open(io.BytesIO(res["jpeg"])).load()  # every variant produced a valid JPEG
        rows.append(
            {
                "variant": name,
                "p50": statistics.median(ts),
                "p95": pct(ts, 0.95),
                "bytes": res["bytes"],
                "size": f"{res['width']}×{res['height']}",
                "browser_ms": res["timings"].get("browser_ms", 0.0),
                "core_ms": res["timings"].get("core_ms", 0.0),
                "psnr": psnr(res["jpeg"], reference["jpeg"]) if reference else float("nan"),
                "stages": {
                    k: statistics.median(v)
                    for k in (*STAGES, "after host")
                    if (v := [st[k] for st in stages[name] if k in st])
                },
            }
        )
    return rows


def table(rows: list[dict[str, Any]], runs: int) -> str:
    lines = [
        f"End-to-end capture of a 1920×1080 page (demo/index.html), headless Chromium, {runs} runs "
        "each, interleaved. Bus request → processed JPEG ready.",
        "",
        "| variant | p50 ms | p95 ms | output | bytes | browser ms (last) | core ms (last) "
        "| PSNR vs png ref, dB (last) |",
        "|---|---:|---:|---|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['variant']} | {r['p50']:.1f} | {r['p95']:.1f} | {r['size']} | {r['bytes']:,} "
            f"| {r['browser_ms']:.1f} | {r['core_ms']:.1f} | {r['psnr']:.1f} |"
        )
    names = [*STAGES, "after host"]
    lines += [
        "",
        "Per stage, p50 ms (pre: extension before asking Chrome; chrome: Chrome's own capture; "
        "post: extension after it; native: native messaging into the host; host: validate + "
        "core + registry; after host: anything the host does after `take` + bus to the client):",
        "",
        "| variant | " + " | ".join(names) + " |",
        "|---|" + "---:|" * len(names),
    ]
    for r in rows:
        cells = " | ".join(f"{r['stages'].get(k, float('nan')):.1f}" for k in names)
        lines.append(f"| {r['variant']} | {cells} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "results-capture.md")
    ap.add_argument("--only", action="append", help="run the variants whose name has this text")
    a = ap.parse_args()
    if a.only:
        for name in [n for n in VARIANTS if not any(o in n for o in a.only)]:
            del VARIANTS[name]
    rows = asyncio.run(run(a.runs, a.warmup))
    text = table(rows, a.runs)
    print(text)
    a.out.write_text(text)


if __name__ == "__main__":
    main()
