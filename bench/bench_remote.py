"""Latency an SSH forward adds to a capture: the same screenshot through the laptop's bus
directly and through ``shotctl remote ssh``'s forward, in one run.

    python bench/bench_remote.py [--runs 30] [--out bench/results-remote.md]

One headless Chromium with the extension (the laptop); a real sshd on 127.0.0.1 and a second
account as the remote machine (tests/e2e/remote_sshd.py, as the tests use it); a real
``shotctl remote ssh`` between them. The same client code runs in both places, each in a process
of its own: as the laptop user on the host's socket (``SHOTBRIDGE_BUS``), and as the remote
account on the forwarded socket. Each sends ``screenshot`` of the same tab and times it around
the bus request (frames, the host, the extension, Chrome and the core included). Blocks of 10
alternate between the two sides, so the shared machine's noise falls on both alike.

Both ends are one machine here: the forward's cost is ssh's (encryption, its channel, two more
socket hops), not a network's. Over a real link add its round trip per capture and the JPEG's
bytes over its bandwidth (the ``bytes`` column).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.e2e.conftest import start_browser  # noqa: E402
from tests.e2e.remote_sshd import Forward, Remote, remote_machine  # noqa: E402

PAGE = REPO / "tests" / "pages" / "interact.html"
BLOCK = 10

# Runs where the bus is: times `screenshot` of the tracked tab n times; prints ms and bytes.
MEASURE = """
import asyncio, json, sys, time
from shotbridge.client.bus_client import BusClient

async def main(n):
    async with await BusClient.connect_forward() as client:
        await client.hello("bench_remote")
        await client.request("screenshot", {})  # warm-up
        out = []
        for _ in range(n):
            t = time.perf_counter()
            result = await client.request("screenshot", {})
            out.append(((time.perf_counter() - t) * 1000, len(result["jpeg"])))
    print(json.dumps(out))

asyncio.run(main(int(sys.argv[1])))
"""


def measure(argv: list[str], env: dict[str, str] | None, n: int) -> list[tuple[float, int]]:
    done = subprocess.run(
        [*argv, "-c", MEASURE, str(n)], capture_output=True, text=True, env=env, timeout=300
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr)
    return [tuple(x) for x in json.loads(done.stdout.strip().splitlines()[-1])]  # type: ignore[misc]


def pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results-remote.md")
    args = parser.parse_args()
    started, load0 = time.time(), os.getloadavg()
    laptop = start_browser(window_size=(1280, 800))
    try:
        asyncio.run(_open(laptop.runtime_dir))
        with remote_machine() as (remote, sshd):
            env = {**os.environ, "SHOTBRIDGE_RUNTIME_DIR": str(laptop.runtime_dir)}
            forward = Forward(sshd, env).start()
            try:
                local_env = {**env, "SHOTBRIDGE_BUS": str(laptop.runtime_dir / "bus.sock")}
                local: list[tuple[float, int]] = []
                remote_side: list[tuple[float, int]] = []
                for _ in range(0, args.runs, BLOCK):
                    local += measure([sys.executable], local_env, BLOCK)
                    remote_side += measure(_remote_python(remote), None, BLOCK)
            finally:
                forward.close()
    finally:
        laptop.close()
    report(args, local, remote_side, started, load0)


def _remote_python(remote: Remote) -> list[str]:
    """The remote account's interpreter with shotbridge (the venv's, or the test launcher's)."""
    launcher = Path(remote.env()["PATH"].split(":")[0]) / "shotctl"
    text = launcher.read_text()
    if text.startswith("#!/bin/sh"):  # tests/e2e/remote_sshd.py's launcher: PYTHONPATH=… exec py
        words = text.splitlines()[1].split()
        return remote.argv("env", words[0], words[2])
    return remote.argv(text.splitlines()[0][2:].strip())


async def _open(runtime_dir: Path) -> None:
    from shotbridge.client.bus_client import BusClient
    from shotbridge.client.localserve import LocalServer

    server = LocalServer(PAGE)
    url = server.__enter__()
    _SERVERS.append(server)
    async with await BusClient.connect(runtime_dir=runtime_dir) as client:
        await client.request("navigate", {"url": url}, timeout=30)


_SERVERS: list[object] = []


def report(
    args: argparse.Namespace,
    local: list[tuple[float, int]],
    remote_side: list[tuple[float, int]],
    started: float,
    load0: tuple[float, float, float],
) -> None:
    lo, re_ = [m for m, _ in local], [m for m, _ in remote_side]
    size = statistics.median(b for _, b in local)
    p50l, p50r = statistics.median(lo), statistics.median(re_)
    took = time.time() - started
    load1 = os.getloadavg()
    chromium = subprocess.run(["chromium", "--version"], capture_output=True, text=True).stdout
    ssh = subprocess.run(["ssh", "-V"], capture_output=True, text=True).stderr.strip()
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(started))
    rows = [
        ("local bus", lo),
        ("SSH forward (same machine)", re_),
    ]
    table = "\n".join(
        f"| {name} | {len(v)} | {statistics.median(v):.1f} | {pct(v, 95):.1f} | {min(v):.1f} "
        f"| {size:,.0f} |"
        for name, v in rows
    )
    text = (
        "# Captures through an SSH forward vs the local bus\n\n"
        f"`python bench/bench_remote.py --runs {args.runs}` on {when}, {platform.machine()} × "
        f"{os.cpu_count()} CPUs, shared with other work: load average {load0[0]:.1f} at the "
        f"start, {load1[0]:.1f} at the end; the run took {took:.0f} s. {chromium.strip()}, "
        f"{ssh}.\n\n"
        "One headless Chromium with the extension (1280×800, tests/pages/interact.html); the "
        f"same client code sends `screenshot` of its tab over the bus, in blocks of {BLOCK} that "
        "alternate: as the laptop user on the host's socket, and as a second account through "
        "`shotctl remote ssh`'s forward to a real sshd on 127.0.0.1. Timed around the bus "
        "request; one warm-up call per block not counted.\n\n"
        "| path | n | p50 ms | p95 ms | min ms | JPEG bytes (p50) |\n"
        "|---|---:|---:|---:|---:|---:|\n"
        f"{table}\n\n"
        f"Added by the forward, p50: **{p50r - p50l:+.1f} ms** ({p50r / p50l:.2f}×). Both ends "
        "are one machine: this is ssh's own cost (encryption, its channel, two more socket "
        "hops). Over a real link add one round trip per capture plus the JPEG over the link's "
        f"bandwidth (at 10 Mbit/s, {size * 8 / 10e6 * 1000:.0f} ms for {size:,.0f} bytes).\n"
    )
    args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
