"""Soak: 4 MCP clients x N mixed calls against one host in one headless Chromium, while a fifth
bus client misbehaves. Shows that no reply goes astray, no call hangs and the host's memory stays
bounded: one greedy or stuck client must not cost the others their answers.

    python bench/bench_soak.py [--calls 250] [--clients 4] [--out bench/results-soak.md]

* one headless Debian Chromium with the real extension; its host is started by Chromium through
  the native-messaging manifest (shotbridge.client.browser.HeadlessBrowser), on tests/pages served
  from
  127.0.0.1;
* each MCP client is a real ``shotctl mcp --browser connected`` stdio subprocess (``--cooldown 0``
  and a high ``--session-limit``: the screenshot rate limit is a policy, not a cost);
* calls cycle through capture_screenshot, observe with annotate_screenshot, interact scroll,
  interact click by label on the client's own annotated screenshot (``screenshot_id``), and
  get_reproduction_script; each has a 60 s timeout (a hang);
* misrouted = a reply of the wrong kind for the call (no image for a capture, no page record and
  image for an annotated observe, ...) or a screenshot_id handed to two clients;
* the fifth client, in a loop: subscribes and stops reading, sends junk, leaves mid-frame;
* host RSS (VmRSS) is sampled every 0.5 s.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import platform
import socket
import statistics
import struct
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import mcp
from mcp import StdioServerParameters
from mcp.types import CallToolResult, ImageContent, TextContent

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python"))

from shotbridge.client.browser import HeadlessBrowser  # noqa: E402
from shotbridge.client.bus_client import wait_for_host  # noqa: E402
from shotbridge.transport import paths  # noqa: E402
from shotbridge.transport.framing import BUS  # noqa: E402

CALL_TIMEOUT = 60.0
PAGE = "/interact.html"


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def serve_pages() -> tuple[ThreadingHTTPServer, str]:
    handler = functools.partial(_Quiet, directory=str(REPO / "tests" / "pages"))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


@dataclass
class Stats:
    client: int
    calls: Counter[str] = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)  # tool errors (isError): answered, not lost
    misrouted: list[str] = field(default_factory=list)
    hangs: int = 0
    times_ms: list[float] = field(default_factory=list)
    screenshot_ids: set[int] = field(default_factory=set)


def texts(result: CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, TextContent))


def images(result: CallToolResult) -> int:
    return sum(isinstance(b, ImageContent) for b in result.content)


def shot_ids(text: str) -> list[int]:
    """screenshot ids a result names ("screenshot_id 12" or JSON "screenshot_id": 12)."""
    import re

    return [int(m) for m in re.findall(r'screenshot_id"?:?\s*(\d+)', text)]


def client_params(runtime_dir: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "shotbridge", "mcp", "--browser", "connected", "--cooldown", "0",
              "--session-limit", "10000"],
        env={
            "PYTHONPATH": str(REPO / "python"),
            "SHOTBRIDGE_RUNTIME_DIR": str(runtime_dir),
            "SHOTBRIDGE_STATE_DIR": str(runtime_dir.parent / "state"),
        },
        cwd=str(REPO),
    )  # fmt: skip


async def drive(n: int, calls: int, runtime_dir: Path, url: str) -> Stats:
    stats = Stats(n)
    async with mcp.Client(client_params(runtime_dir), read_timeout_seconds=CALL_TIMEOUT) as c:
        if n == 0:
            await c.call_tool("interact", {"action": "navigate", "url": url})
        last_annotated: int | None = None
        for i in range(calls):
            kind = ["capture", "observe", "scroll", "click", "generate"][i % 5]
            if kind == "click" and last_annotated is None:
                kind = "observe"
            tool, args = {
                "capture": ("capture_screenshot", {}),
                "observe": ("observe", {"annotate_screenshot": True}),
                "scroll": ("interact", {"action": "scroll", "delta_y": 200 if i % 2 else -200}),
                "click": ("interact", {"action": "click", "label": 1,
                                       "screenshot_id": last_annotated}),
                "generate": ("get_reproduction_script", {}),
            }[kind]  # fmt: skip
            started = time.perf_counter()
            try:
                result = await asyncio.wait_for(c.call_tool(tool, args), CALL_TIMEOUT)
            except TimeoutError:
                stats.hangs += 1
                continue
            stats.times_ms.append((time.perf_counter() - started) * 1000)
            stats.calls[kind] += 1
            text = texts(result)
            if result.is_error:
                stats.errors.append(f"{kind}: {text[:160]}")
                continue
            ids = shot_ids(text)
            stats.screenshot_ids.update(ids)
            wrong = (
                (kind in ("capture", "observe") and images(result) == 0)
                or (kind == "observe" and '"page"' not in text)
                or (kind in ("scroll", "click") and not text)
                or (kind == "generate" and "page." not in text and "playwright" not in text)
            )
            if wrong:
                stats.misrouted.append(f"{kind}: {text[:160]!r} ({images(result)} images)")
            if kind == "observe" and ids:
                last_annotated = ids[-1]
    return stats


class Misbehaver:
    """The fifth bus client: stalls as a subscriber, sends junk, leaves mid-frame, in a loop."""

    def __init__(self, runtime_dir: Path) -> None:
        self.runtime_dir = runtime_dir
        self.rounds = 0
        self.stop = threading.Event()
        self.held: list[socket.socket] = []

    def _connect(self) -> socket.socket:
        (info,) = paths.list_hosts(self.runtime_dir)[:1]
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(info.socket)
        return sock

    def run(self) -> None:
        while not self.stop.wait(1.0):
            try:
                stuck = self._connect()  # subscribes, then never reads again
                stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                stuck.sendall(BUS.encode({"id": "s", "cmd": "subscribe", "args": {}}))
                self.held.append(stuck)
                if len(self.held) > 3:
                    self.held.pop(0).close()
                junk = self._connect()
                junk.sendall(struct.pack(">I", 7) + b"\xc1junk!!")
                junk.close()
                half = self._connect()  # announces 8 MiB, sends 1 MiB, leaves
                half.sendall(struct.pack(">I", 8 << 20) + b"\x00" * (1 << 20))
                half.close()
                self.rounds += 1
            except OSError:
                pass
        for sock in self.held:
            sock.close()


async def soak(calls: int, clients: int) -> dict[str, Any]:
    server, base = serve_pages()
    browser = HeadlessBrowser(window_size=(1280, 800)).start()
    try:
        await wait_for_host(runtime_dir=browser.runtime_dir, timeout=30, connected=True)
        host_pid = paths.list_hosts(browser.runtime_dir)[0].pid
        samples: list[float] = []
        done = asyncio.Event()

        async def sample() -> None:
            while not done.is_set():
                samples.append(rss_mb(host_pid))
                await asyncio.sleep(0.5)

        sampler = asyncio.create_task(sample())
        bad = Misbehaver(browser.runtime_dir)
        bad_thread = threading.Thread(target=bad.run, daemon=True)
        bad_thread.start()
        started = time.perf_counter()
        first = await drive(0, 1, browser.runtime_dir, base + PAGE)  # navigates the shared tab
        results = await asyncio.gather(
            *(drive(n + 1, calls, browser.runtime_dir, base + PAGE) for n in range(clients))
        )
        elapsed = time.perf_counter() - started
        bad.stop.set()
        bad_thread.join(5)
        done.set()
        await sampler
        host_alive = Path(f"/proc/{host_pid}").exists()
    finally:
        browser.close()
        server.shutdown()
    owners: Counter[int] = Counter()
    for stats in results:
        owners.update(stats.screenshot_ids)
    return {
        "results": results,
        "first": first,
        "elapsed_s": elapsed,
        "rss": samples,
        "misbehaver_rounds": bad.rounds,
        "host_alive": host_alive,
        "shared_ids": sorted(i for i, k in owners.items() if k > 1),
    }


def markdown(out: dict[str, Any], args: argparse.Namespace) -> str:
    results: list[Stats] = out["results"]
    rss = out["rss"]
    all_ms = sorted(t for s in results for t in s.times_ms)
    rows = [
        "| client | calls answered | tool errors | misrouted | hangs | p50 ms | max ms |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for s in results:
        t = sorted(s.times_ms)
        rows.append(
            f"| {s.client} | {sum(s.calls.values())} | {len(s.errors)} | {len(s.misrouted)} "
            f"| {s.hangs} | {statistics.median(t):.0f} | {max(t):.0f} |"
        )
    errors = Counter(e[:100] for s in results for e in s.errors)
    kinds: Counter[str] = Counter()
    for s in results:
        kinds.update(s.calls)
    n_ids = sum(len(s.screenshot_ids) for s in results)
    lines = [
        "# Soak: 4 MCP clients against one host, with a misbehaving bus client",
        "",
        f"`python bench/bench_soak.py --calls {args.calls} --clients {args.clients}` on "
        f"{platform.machine()} Linux, {os.cpu_count()} cores (shared), Python "
        f"{platform.python_version()}, Debian Chromium headless, mcp {mcp_version()}.",
        "",
        f"{args.clients} real `shotctl mcp` stdio subprocesses x {args.calls} calls each "
        "(capture_screenshot, annotated observe, interact scroll, interact click by label on the "
        "client's own screenshot, get_reproduction_script), all at once against one host in one "
        f"headless Chromium, in {out['elapsed_s']:.0f} s. Meanwhile a fifth bus client ran "
        f"{out['misbehaver_rounds']} rounds of: subscribe and stop reading, send junk, leave "
        "mid-frame (8 MiB announced, 1 MiB sent).",
        "",
        *rows,
        "",
        f"* **Misrouted replies: {sum(len(s.misrouted) for s in results)}** "
        f"(wrong kind of reply for the call); screenshot ids seen by two clients: "
        f"{len(out['shared_ids'])}.",
        f"* **Hangs (no answer in {CALL_TIMEOUT:.0f} s): {sum(s.hangs for s in results)}.**",
        "* Calls answered by kind: "
        + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items()))
        + f"; {n_ids} distinct screenshot ids handed out.",
        f"* Host RSS over the run: min {min(rss):.0f} MB, max {max(rss):.0f} MB, last "
        f"{rss[-1]:.0f} MB ({len(rss)} samples, every 0.5 s); host alive at the end: "
        f"{out['host_alive']}.",
        f"* Call latency over all clients: p50 {statistics.median(all_ms):.0f} ms, "
        f"p95 {all_ms[round(0.95 * (len(all_ms) - 1))]:.0f} ms, max {all_ms[-1]:.0f} ms.",
    ]
    if errors:
        lines += ["", "Tool errors (answered with isError, e.g. a label the shared tab no longer "
                  "shows after another client scrolled):", ""]  # fmt: skip
        lines += [f"* {n} x {e}" for e, n in errors.most_common(8)]
    misrouted = [m for s in results for m in s.misrouted]
    if misrouted:
        lines += ["", "Misrouted:", "", *[f"* {m}" for m in misrouted[:10]]]
    return "\n".join(lines) + "\n"


def mcp_version() -> str:
    from importlib.metadata import version

    return version("mcp")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=250)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    out = asyncio.run(soak(args.calls, args.clients))
    text = markdown(out, args)
    print(text)
    if args.out:
        args.out.write_text(text)
    failed = any(s.misrouted or s.hangs for s in out["results"])
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
