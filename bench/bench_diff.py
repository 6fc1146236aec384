"""Benchmark: shotbridge's visual diff vs pixelmatch and odiff, on screenshots with known edits.

Pairs: two corpus screenshots (1280×720 and 2560×1440), each with six generated edits made with
Pillow — a moved block, a colour change, a text change (one line replaced by another), a removed
icon-sized square, a scroll (the page shifted by 120 CSS px, with the scroll known) and nothing.

* shotbridge: ``shotbridge.diff.compare`` on the PNG bytes (decode included), in this process.
* pixelmatch 7.2.0 (npm, pinned in bench/diff-peers): a node process decodes both PNGs with pngjs
  and runs pixelmatch; we time pixelmatch alone and decode + pixelmatch, in node.
* odiff 4.5.0 (npm ``odiff-bin``, its native binary): the CLI on the two files with ``--aa``
  (ignore anti-aliasing, as pixelmatch does) and the same threshold; wall time of the process
  (it decodes both PNGs and writes no diff image).

Counts: ours must be within 1 % of pixelmatch's at threshold 0.1 on every pair whose content is
aligned. For the scroll pair pixelmatch and odiff compare the two images as they are (they do not
know the scroll), ours aligns them first: 0 is the right answer there, theirs count the shift.

    .venv/bin/python bench/bench_diff.py [--reps 5]      (npm ci in bench/diff-peers first)
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from PIL import Image, ImageDraw, ImageStat
from shotbridge.diff import DiffOptions, Geometry, compare

HERE = Path(__file__).resolve().parent
PEERS = HERE / "diff-peers"
CORPUS = Path(os.environ.get("SHOTBRIDGE_CORPUS", HERE.parent.parent / "shared/corpus/screens"))
SOURCES = {"1280×720": "std-index-720p.png", "2560×1440": "book-ownership-1440p-dpr2.png"}
SCROLL_CSS = 120
THRESHOLD = 0.1

PM_SCRIPT = r"""
import fs from 'node:fs';
import { PNG } from 'pngjs';
import pixelmatch from 'pixelmatch';
const [a, b] = [process.argv[2], process.argv[3]];
const [reps, threshold] = [+process.argv[4], +process.argv[5]];
const out = { count: 0, match_ms: [], total_ms: [] };
for (let i = 0; i < reps; i++) {
  const t0 = performance.now();
  const A = PNG.sync.read(fs.readFileSync(a)), B = PNG.sync.read(fs.readFileSync(b));
  const t1 = performance.now();
  out.count = pixelmatch(A.data, B.data, null, A.width, A.height, { threshold });
  const t2 = performance.now();
  out.match_ms.push(t2 - t1); out.total_ms.push(t2 - t0);
}
console.log(JSON.stringify(out));
"""


def png(img: Image.Image) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format="PNG", compress_level=1)
    return buf.getvalue()


def busiest(img: Image.Image, bw: int, bh: int) -> tuple[int, int]:
    """Top-left of the bw×bh box (on a coarse grid) whose pixels vary most: an edit there shows."""
    grey = img.convert("L")
    best, spot = -1.0, (0, 0)
    for y in range(0, grey.height - bh, max(1, bh // 2)):
        for x in range(0, grey.width - bw, max(1, bw // 2)):
            var = ImageStat.Stat(grey.crop((x, y, x + bw, y + bh))).var[0]
            if var > best:
                best, spot = var, (x, y)
    return spot


def edits(src: Image.Image, scale: int) -> dict[str, tuple[Image.Image, Image.Image, int]]:
    """name → (before, after, after's scroll in image px)."""
    w, h = src.size
    s = scale
    base = src.crop((0, 0, w, h - SCROLL_CSS * s))
    out: dict[str, tuple[Image.Image, Image.Image, int]] = {"nothing": (base, base.copy(), 0)}

    moved = base.copy()
    block = base.crop((40 * s, 120 * s, 360 * s, 200 * s))
    moved.paste(block, (64 * s, 124 * s))
    out["moved element"] = (base, moved, 0)

    colour = base.copy()
    x, y = busiest(base, 220 * s, 50 * s)
    box = (x, y, x + 220 * s, y + 50 * s)
    region = colour.crop(box).convert("RGB")
    r, g, b = region.split()
    # A tint (red kept, green and blue dimmed): background and text both change colour.
    tinted = Image.merge("RGB", (r, g.point(lambda v: v * 3 // 4), b.point(lambda v: v * 3 // 4)))
    colour.paste(tinted, box[:2])
    out["colour change"] = (base, colour, 0)

    text = base.copy()
    line = base.crop((20 * s, 300 * s, 620 * s, 322 * s))
    text.paste(line, (20 * s, 240 * s))
    out["text change"] = (base, text, 0)

    icon = base.copy()
    x, y = busiest(base, 24 * s, 24 * s)  # the busiest icon-sized square: it surely holds ink
    ImageDraw.Draw(icon).rectangle((x, y, x + 24 * s - 1, y + 24 * s - 1), fill=(255, 255, 255))
    out["removed icon"] = (base, icon, 0)

    after = src.crop((0, SCROLL_CSS * s, w, h))
    out["scroll"] = (base, after, SCROLL_CSS)
    return out


def ours(a: bytes, b: bytes, scroll_css: int, scale: int, reps: int) -> tuple[int, list[float]]:
    geo_b = Geometry(scale=scale)
    geo_a = Geometry(scale=scale, scroll_y=scroll_css)
    opts = DiffOptions(threshold=THRESHOLD)
    times, count = [], 0
    compare(a, b, options=opts)  # warm-up
    for _ in range(reps):
        t0 = time.perf_counter()
        r = compare(a, b, before_geometry=geo_b, after_geometry=geo_a, options=opts)
        times.append((time.perf_counter() - t0) * 1000)
        count = r.changed_pixels
    return count, times


def pixelmatch(fa: Path, fb: Path, reps: int) -> dict[str, object]:
    script = PEERS / "_bench_pm.mjs"
    script.write_text(PM_SCRIPT)
    try:
        out = subprocess.run(
            ["node", str(script), str(fa), str(fb), str(reps), str(THRESHOLD)],
            capture_output=True,
            text=True,
            check=True,
            cwd=PEERS,
        ).stdout
    finally:
        script.unlink()
    return json.loads(out)


def odiff(fa: Path, fb: Path, reps: int) -> tuple[int | None, list[float], str]:
    exe = PEERS / "node_modules/.bin/odiff"
    cmd = [str(exe), str(fa), str(fb), "--aa", "-t", str(THRESHOLD), "--parsable-stdout"]
    times, out = [], ""
    for _ in range(reps):
        t0 = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True)
        times.append((time.perf_counter() - t0) * 1000)
        out = (p.stdout + p.stderr).strip()
    if out == "" or "identical" in out.lower():
        return 0, times, out
    # --parsable-stdout: "<diff pixels>;<percentage>" for a layout-equal difference
    try:
        return int(out.split(";")[0]), times, out
    except ValueError:
        return None, times, out


def med(xs: list[float]) -> float:
    return statistics.median(xs)


def _node_version() -> str:
    return subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--out", type=Path, default=HERE / "results-diff.md")
    args = parser.parse_args()
    if not (PEERS / "node_modules/pixelmatch").is_dir():
        print("run `npm ci` (or npm install) in bench/diff-peers first", file=sys.stderr)
        return 2
    rows = []
    misses = []
    with tempfile.TemporaryDirectory() as tmp:
        for size, name in SOURCES.items():
            src = Image.open(CORPUS / name).convert("RGB")
            scale = 2 if "dpr2" in name else 1
            for edit, (before, after, scroll) in edits(src, scale).items():
                a, b = png(before), png(after)
                fa, fb = Path(tmp, "a.png"), Path(tmp, "b.png")
                fa.write_bytes(a)
                fb.write_bytes(b)
                count, t_ours = ours(a, b, scroll, scale, args.reps)
                pm = pixelmatch(fa, fb, args.reps)
                od_count, t_od, od_raw = odiff(fa, fb, args.reps)
                pm_count = int(pm["count"])  # type: ignore[arg-type]
                aligned = edit != "scroll"
                ok = abs(count - pm_count) <= 0.01 * max(pm_count, 1) if aligned else count == 0
                if not ok:
                    misses.append(edit)
                rows.append(
                    (
                        size,
                        edit,
                        count,
                        pm_count,
                        od_count if od_count is not None else od_raw[:30],
                        "yes" if ok else "NO",
                        med(t_ours),
                        med(pm["match_ms"]),  # type: ignore[arg-type]
                        med(pm["total_ms"]),  # type: ignore[arg-type]
                        med(t_od),
                    )
                )
                print(rows[-1], flush=True)
    lines = [
        "# Visual diff: shotbridge vs pixelmatch 7.2.0 and odiff 4.5.0",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores (shared), Python "
        f"{platform.python_version()}, node {_node_version()}. "
        f"Threshold {THRESHOLD}, anti-aliasing ignored (odiff `--aa`), median of {args.reps} runs. "
        "Made by `bench/bench_diff.py` in one run.",
        "",
        "Changed pixels: shotbridge within 1 % of pixelmatch on every aligned pair; on the scroll "
        "pair shotbridge aligns the known scroll (0 is right), the peers count the shift.",
        "Times in ms. shotbridge: PNG decode of both + diff, in process. pixelmatch: in node, "
        "compare alone / pngjs decode + compare. odiff: wall time of its CLI process (decode + "
        "compare + process start).",
        "",
        "| size | edit | shotbridge px | pixelmatch px | odiff px | within 1 % | shotbridge ms "
        "| pixelmatch ms | pixelmatch+decode ms | odiff ms |",
        "|---|---|---:|---:|---:|:-:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r[0]} | {r[1]} | {r[2]:,} | {r[3]:,} | "
            + (f"{r[4]:,}" if isinstance(r[4], int) else str(r[4]))
            + f" | {r[5]} | {r[6]:.1f} | {r[7]:.1f} | {r[8]:.1f} | {r[9]:.1f} |"
        )
    args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
