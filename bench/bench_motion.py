"""What following secrets in motion costs a CDP capture, in real headless Chromium.

One browser with the working tree's extension, and (with --baseline REV) one whose capture.js and
probe.js come from REV, each taking the same captures of the same pages in turn: a page without
secrets, one with a still password field (alone, and on a large page whose DOM changes every
4 ms), and the five pages whose field script moves
(tests/pages/security/motion). Figures are the bus round trip of `screenshot {method: cdp}`.

    python bench/bench_motion.py [--runs 40] [--baseline REV] [--out bench/results-motion.md]
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import io
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from PIL import Image

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from shotbridge.client.browser import HeadlessBrowser  # noqa: E402
from shotbridge.client.bus_client import BusClient, wait_for_host  # noqa: E402
from shotbridge.install.register import extension_dir  # noqa: E402

PAGES = {
    "no secret": "blank.html",
    "still password field": "security/motion/still.html",
    "still field, 4 000 elements, DOM change every 4 ms": "security/motion/busy.html",
    **{
        f"moved by {k}": f"security/motion/{k}.html"
        for k in ("interval", "scroll", "left", "transform", "transition")
    },
}
CHANGED = ("lib/capture.js", "page/probe.js")


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def serve() -> tuple[ThreadingHTTPServer, str]:
    handler = functools.partial(_Quiet, directory=str(REPO / "tests" / "pages"))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def baseline_extension(rev: str, into: Path) -> Path:
    """A copy of the extension with the capture files of `rev`."""
    ext = into / "extension"
    shutil.copytree(extension_dir(), ext)
    for name in CHANGED:
        path = f"python/shotbridge/extension/{name}"
        text = subprocess.run(
            ["git", "-C", str(REPO), "show", f"{rev}:{path}"], check=True, capture_output=True
        ).stdout
        (ext / name).write_bytes(text)
    return ext


def green(jpeg: bytes) -> bool:
    """Any pixel of the secret's colour (the fields are #00ff00)."""
    img = Image.open(io.BytesIO(jpeg)).convert("RGB")
    r, g, b = img.split()
    hit = Image.merge(
        "RGB",
        (
            r.point(lambda v: 255 if v < 110 else 0),
            g.point(lambda v: 255 if v > 160 else 0),
            b.point(lambda v: 255 if v < 110 else 0),
        ),
    ).convert("L")
    return hit.point(lambda v: 255 if v == 255 else 0).getbbox() is not None


async def measure(ext: Path, base: str, runs: int) -> dict[str, tuple[list[float], int]]:
    os.environ["SHOTBRIDGE_EXTENSION_DIR"] = str(ext)
    out: dict[str, tuple[list[float], int]] = {}
    with HeadlessBrowser(window_size=(1920, 1080)) as browser:
        await wait_for_host(runtime_dir=browser.runtime_dir, timeout=30, connected=True)
        async with await BusClient.connect(runtime_dir=browser.runtime_dir) as c:
            for name, page in PAGES.items():
                await c.request(
                    "interact", {"action": "navigate", "url": f"{base}/{page}"}, timeout=30
                )
                times: list[float] = []
                leaks = 0
                for i in range(runs + 3):
                    t0 = time.perf_counter()
                    shot = await c.request("screenshot", {"method": "cdp"}, timeout=30)
                    if i >= 3:  # warm-up
                        times.append((time.perf_counter() - t0) * 1000)
                        leaks += green(shot["jpeg"])
                out[name] = (times, leaks)
    return out


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--baseline", help="git revision whose capture.js and probe.js to compare with")
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "results-motion.md")
    args = ap.parse_args()
    server, base = serve()
    try:
        results = {"working tree": asyncio.run(measure(extension_dir(), base, args.runs))}
        if args.baseline:
            with tempfile.TemporaryDirectory() as tmp:
                ext = baseline_extension(args.baseline, Path(tmp))
                results[f"baseline {args.baseline}"] = asyncio.run(measure(ext, base, args.runs))
    finally:
        server.shutdown()
    lines = [
        "# Following secrets in motion: cost per CDP capture",
        "",
        f"`python bench/bench_motion.py --runs {args.runs}"
        + (f" --baseline {args.baseline}`" if args.baseline else "`")
        + f", {time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores shared with other work.",
        "Bus round trip of `screenshot {method: cdp}` in ms; leaks: images with a pixel of the "
        "field's colour.",
        "",
        "| page | extension | p50 ms | p95 ms | leaks |",
        "|---|---|---|---|---|",
    ]
    for name in PAGES:
        for label, res in results.items():
            ts, leaks = res[name]
            p50, p95 = statistics.median(ts), pct(ts, 0.95)
            lines.append(f"| {name} | {label} | {p50:.0f} | {p95:.0f} | {leaks}/{len(ts)} |")
    text = "\n".join(lines) + "\n"
    args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
