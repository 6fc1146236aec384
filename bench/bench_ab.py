"""Two of our MCP servers side by side, one changed: an interleaved A/B on the corpus pages.

    python bench/bench_ab.py --pages dashboard,grid [--runs 24] [--tool observe]
                             (--flags "--enable-features=X" | --extension-a DIR | --python-a DIR)

Server B runs with extra Chromium flags (``--flags``), or server A with another copy of the
extension (``--extension-a``, e.g. ``git archive REV python/shotbridge/extension | tar -x -C DIR``)
or of the whole Python package, host included (``--python-a``: a folder holding ``shotbridge/``
with its built core, e.g. a copy of ``python/`` from another revision) while B runs this
checkout's. Both open each page, then take turns, the order swapping every
round, so the machine's noise falls on both alike; each prints its p50 and B ÷ A. Between
benchmark runs a page's ratio to the peers moves by ±0.1×; a change this small is read here.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

import mcp

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_mcp  # the corpus server and our server's parameters

FLAGS_ENV = "SHOTBRIDGE_EXTRA_BROWSER_FLAGS"
EXTENSION_ENV = "SHOTBRIDGE_EXTENSION_DIR"


async def one_page(
    a: mcp.Client, b: mcp.Client, url: str, runs: int, tool: str
) -> tuple[float, float]:
    for client in (a, b):
        result = await client.call_tool("interact", {"action": "navigate", "url": url})
        bench_mcp.check(result, f"navigate to {url}")
    await asyncio.sleep(bench_mcp.SETTLE_S)
    args = {"annotate_screenshot": True} if tool == "observe" else {}
    times: dict[str, list[float]] = {"A": [], "B": []}
    for i in range(runs + 2):  # 2 warm-up rounds
        for name, client in [("A", a), ("B", b)] if i % 2 else [("B", b), ("A", a)]:
            t0 = time.perf_counter()
            bench_mcp.check(await client.call_tool(tool, args), tool)
            if i >= 2:
                times[name].append((time.perf_counter() - t0) * 1000)
            await asyncio.sleep(0.03)
    return statistics.median(times["A"]), statistics.median(times["B"])


async def run(args: argparse.Namespace) -> None:
    with bench_mcp.serve_pages() as (base, cross):
        window = await bench_mcp.our_window(bench_mcp.page_url(base, cross, args.pages[0]))
        server_a, server_b = bench_mcp.ours_params(window), bench_mcp.ours_params(window)
        assert server_a.env is not None and server_b.env is not None
        if args.extension_a:
            server_a.env[EXTENSION_ENV] = str(Path(args.extension_a).resolve())
        elif args.python_a:  # the host's launcher takes the package's folder from the server
            server_a.env["PYTHONPATH"] = str(Path(args.python_a).resolve())
        else:
            server_b.env[FLAGS_ENV] = args.flags
        async with mcp.Client(server_a) as a, mcp.Client(server_b) as b:
            print(f"| page | {args.tool} A p50 ms | B p50 ms | B ÷ A |\n|---|---:|---:|---:|")
            for name in args.pages:
                url = bench_mcp.page_url(base, cross, name)
                p50_a, p50_b = await one_page(a, b, url, args.runs, args.tool)
                print(f"| {name} | {p50_a:.1f} | {p50_b:.1f} | {p50_b / p50_a:.2f}× |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=lambda s: s.split(","), default=["dashboard", "grid"])
    parser.add_argument("--runs", type=int, default=24)
    parser.add_argument("--tool", choices=["capture_screenshot", "observe"], default="observe")
    change = parser.add_mutually_exclusive_group(required=True)
    change.add_argument("--flags", help="extra Chromium flags for server B")
    change.add_argument("--extension-a", help="another unpacked extension for server A")
    change.add_argument("--python-a", help="another python/ folder (package and core) for server A")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
