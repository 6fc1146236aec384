"""Benchmark: the Rust image core vs the same pipeline in Pillow, on the screenshot corpus.

One process, one run: for every corpus screenshot, as PNG and as JPEG q92 (converted in memory at
startup), time decode -> resize to 1280 -> 50 labels -> q60 JPEG + 320 px thumbnail

* with the core (``shotbridge.image.shrink``, the public API, so pydantic overhead included);
* with Pillow (``draft()`` DCT scaling for JPEG, Lanczos, ImageDraw rectangles + text, libjpeg-turbo
  ``save(quality=60, optimize=True, subsampling=4:2:0)``);
* and, for JPEG inputs, the floor: libjpeg-turbo alone decoding DCT-scaled exactly as the core
  does and encoding an output-sized and a thumbnail-sized image (``_core.turbo_floor``, timed in
  Rust; no resampling, no labels).

Memory: each (image, implementation) runs once in a fresh subprocess that reads the input and
warms up on a tiny image, then resets the kernel's RSS high-water mark (``/proc/self/clear_refs``)
and reports peak RSS (``VmHWM``) minus the RSS before the call. That counts every allocator (Rust,
libjpeg-turbo's malloc, Python) and is compared to the decoded source (width x height x 3 bytes).
(``ru_maxrss`` is not used: a forked child inherits the parent's RSS as its starting peak.)

Prints a Markdown table and saves it to bench/results-core.md.

    python bench/bench_core.py [--reps 9] [--corpus DIR] [--no-memory]
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import PIL
from PIL import Image, ImageDraw, ImageFont, features
from shotbridge import _core
from shotbridge.image import Box, shrink

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus" / "screens"
RESULTS = REPO / "bench" / "results-core.md"
N_LABELS = 50
PALETTE = [(198, 40, 40), (21, 101, 192), (46, 125, 50), (106, 27, 154)]


@dataclass(frozen=True)
class Shot:
    name: str
    width: int
    height: int
    css_width: float
    css_height: float
    dpr: float


def load_manifest(corpus: Path) -> list[Shot]:
    with (corpus / "MANIFEST.tsv").open() as f:
        return [
            Shot(
                r["file"],
                int(r["width"]),
                int(r["height"]),
                float(r["css_width"]),
                float(r["css_height"]),
                float(r["device_pixel_ratio"]),
            )
            for r in csv.DictReader(f, delimiter="\t")
        ]


def label_boxes(shot: Shot) -> list[tuple[float, float, float, float]]:
    """50 element-like boxes spread over the CSS viewport (10 columns x 5 rows)."""
    cw, ch = shot.css_width / 10, shot.css_height / 5
    return [(c * cw + 12, r * ch + 30, cw * 0.6, 24) for r in range(5) for c in range(10)]


def fit(w: int, h: int, max_w: int = 1280, max_long: int = 1568) -> tuple[int, int]:
    s = min(1.0, max_w / w, max_long / max(w, h))
    return max(1, round(w * s)), max(1, round(h * s))


# ---- the two implementations -------------------------------------------------------------------


def core_pipeline(data: bytes, shot: Shot) -> int:
    boxes = [Box(x=x, y=y, width=w, height=h) for x, y, w, h in label_boxes(shot)]
    r = shrink(
        data, boxes=boxes, device_pixel_ratio=shot.dpr, css_size=(shot.css_width, shot.css_height)
    )
    return len(r.jpeg)


_FONT: ImageFont.FreeTypeFont | ImageFont.ImageFont | None = None


def pillow_pipeline(data: bytes, shot: Shot) -> int:
    global _FONT
    if _FONT is None:
        _FONT = ImageFont.load_default(size=12)
    im = Image.open(io.BytesIO(data))
    ow, oh = fit(*im.size)
    if im.format == "JPEG":
        im.draft("RGB", (ow, oh))  # libjpeg-turbo DCT scaling, like the core
    im = im.convert("RGB")
    if im.size != (ow, oh):
        im = im.resize((ow, oh), Image.Resampling.LANCZOS)
    draw = ImageDraw.Draw(im)
    k = ow / shot.css_width
    for i, (x, y, w, h) in enumerate(label_boxes(shot), start=1):
        colour = PALETTE[i % len(PALETTE)]
        x0, y0, x1, y1 = x * k, y * k, (x + w) * k, (y + h) * k
        draw.rectangle((x0, y0, x1, y1), outline=colour, width=2)
        tw = draw.textlength(str(i), font=_FONT)
        draw.rectangle((x0, y0 - 16, x0 + tw + 8, y0), fill=colour, outline=(255, 255, 255))
        draw.text((x0 + 4, y0 - 15), str(i), fill=(255, 255, 255), font=_FONT)
    out = io.BytesIO()
    im.save(out, "JPEG", quality=60, optimize=True, subsampling=2)
    tw_, th_ = 320, max(1, round(oh * 320 / ow))
    thumb = im.resize((tw_, th_), Image.Resampling.LANCZOS)
    thumb.save(io.BytesIO(), "JPEG", quality=60, optimize=True, subsampling=2)
    return out.tell()


IMPLS: dict[str, Callable[[bytes, Shot], int]] = {"core": core_pipeline, "pillow": pillow_pipeline}


# ---- memory (fresh subprocess per image and implementation) -------------------------------------


def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


def memory_child(impl: str, path: str, shot_fields: list[str]) -> None:
    shot = Shot(shot_fields[0], *map(int, shot_fields[1:3]), *map(float, shot_fields[3:6]))
    data = Path(path).read_bytes()
    warm = io.BytesIO()
    Image.new("RGB", (64, 48), (200, 200, 200)).save(warm, "PNG")
    tiny = Shot("warm", 64, 48, 64, 48, 1.0)
    IMPLS[impl](warm.getvalue(), tiny)  # loads fonts, libraries, lazy tables
    # Peak RSS of this process only: ru_maxrss would include the parent's RSS at fork time, so
    # reset the kernel's high-water mark (clear_refs "5") and read VmHWM afterwards.
    Path("/proc/self/clear_refs").write_text("5")
    before = _status_kib("VmRSS")
    IMPLS[impl](data, shot)
    print(_status_kib("VmHWM") - before)  # KiB


def peak_extra_mib(impl: str, data: bytes, shot: Shot) -> float:
    with tempfile.NamedTemporaryFile(suffix=".img") as f:
        f.write(data)
        f.flush()
        fields = [shot.name, str(shot.width), str(shot.height)]
        fields += [str(shot.css_width), str(shot.css_height), str(shot.dpr)]
        out = subprocess.run(
            [sys.executable, __file__, "--memory-child", impl, f.name, *fields],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    return int(out.strip()) / 1024


# ---- timing --------------------------------------------------------------------------------------


def interleaved_ms(fns: list[Callable[[], float | None]], reps: int) -> list[float]:
    """Median ms of each of ``fns``, run in turn within every repetition (after one warm-up
    round), so load drift on a shared machine hits all of them alike. A function returning a
    number reports its own time in ms; otherwise it is wall-timed.
    """
    for fn in fns:
        fn()  # warm-up
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(reps):
        for fn, ts in zip(fns, times, strict=True):
            t = time.perf_counter()
            own = fn()
            ts.append(own if own is not None else (time.perf_counter() - t) * 1000)
    return [statistics.median(ts) for ts in times]


@dataclass
class Row:
    shot: Shot
    fmt: str
    core_ms: float
    pillow_ms: float
    floor_ms: float | None
    core_mib: float | None
    pillow_mib: float | None

    @property
    def speedup(self) -> float:
        return self.pillow_ms / self.core_ms

    @property
    def decoded_mib(self) -> float:
        return self.shot.width * self.shot.height * 3 / 2**20


def measure(shots: list[Shot], corpus: Path, reps: int, memory: bool) -> list[Row]:
    rows = []
    for shot in shots:
        png = (corpus / shot.name).read_bytes()
        buf = io.BytesIO()
        Image.open(io.BytesIO(png)).convert("RGB").save(buf, "JPEG", quality=92)
        for fmt, data in (("PNG", png), ("JPEG q92", buf.getvalue())):
            core, pil = interleaved_ms(
                [
                    lambda d=data, s=shot: (core_pipeline(d, s), None)[1],
                    lambda d=data, s=shot: (pillow_pipeline(d, s), None)[1],
                ],
                reps,
            )
            floor = None
            if fmt.startswith("JPEG"):
                # Back to back, not interleaved: right after a Pillow call the floor measures
                # slower (cold caches / heap), which would flatter the core / floor ratio.
                floor = statistics.median(_core.turbo_floor(data) for _ in range(reps + 1)) / 1000
            mem_core = peak_extra_mib("core", data, shot) if memory else None
            mem_pil = peak_extra_mib("pillow", data, shot) if memory else None
            rows.append(Row(shot, fmt, core, pil, floor, mem_core, mem_pil))
            print(f"  {shot.name} {fmt}: core {core:.1f} ms, Pillow {pil:.1f} ms", file=sys.stderr)
    return rows


def table(rows: list[Row]) -> str:
    lines = [
        "| image | input | source | core ms | Pillow ms | speedup | floor ms | core / floor "
        "| core extra peak MiB (x decoded) | Pillow extra peak MiB |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        floor = f"{r.floor_ms:.1f}" if r.floor_ms else "-"
        ratio = f"{r.core_ms / r.floor_ms:.2f}x" if r.floor_ms else "-"
        mem = "-"
        if r.core_mib is not None:
            mem = f"{r.core_mib:.1f} ({r.core_mib / r.decoded_mib:.2f}x)"
        pmem = f"{r.pillow_mib:.1f}" if r.pillow_mib is not None else "-"
        lines.append(
            f"| {r.shot.name} | {r.fmt} | {r.shot.width}x{r.shot.height} | {r.core_ms:.1f} "
            f"| {r.pillow_ms:.1f} | {r.speedup:.1f}x | {floor} | {ratio} | {mem} | {pmem} |"
        )
    return "\n".join(lines)


def summary(rows: list[Row]) -> str:
    def med(values: list[float]) -> str:
        return f"{statistics.median(values):.2f}x" if values else "-"

    png = [r.speedup for r in rows if r.fmt == "PNG"]
    jpg = [r.speedup for r in rows if r.fmt != "PNG"]
    floors = [r.core_ms / r.floor_ms for r in rows if r.floor_ms]
    mem = [r.core_mib / r.decoded_mib for r in rows if r.core_mib is not None]
    lines = [
        f"- median speedup over Pillow: **{med(png + jpg)}** (PNG {med(png)}, JPEG {med(jpg)});"
        " target >= 5x",
        f"- JPEG inputs, core / libjpeg-turbo floor: median **{med(floors)}**, "
        f"max {max(floors):.2f}x; target <= 1.3x"
        if floors
        else "- floor: not measured",
    ]
    if mem:
        lines.append(
            f"- extra peak memory per call / decoded source: max **{max(mem):.2f}x**, "
            f"median {statistics.median(mem):.2f}x; target <= 3x"
        )
    return "\n".join(lines)


# ---- the browser path: what the extension sends now ---------------------------------------------
# A CDP capture renders at the output size and at q60 (`fit`, `fit_quality`), so the core gets a
# JPEG it need not resize: masked in its DCT coefficients when there are no labels, decoded,
# labelled and encoded again when there are.


def secret_box(shot: Shot) -> tuple[float, float, float, float]:
    """A password field's box in CSS px (as the probe reports it)."""
    return (shot.css_width * 0.4, shot.css_height * 0.5, 300.0, 40.0)


def browser_jpeg(png: bytes) -> bytes:
    im = Image.open(io.BytesIO(png)).convert("RGB")
    im = im.resize(fit(*im.size), Image.Resampling.LANCZOS)
    out = io.BytesIO()
    im.save(out, "JPEG", quality=60, subsampling=2)
    return out.getvalue()


def core_browser(data: bytes, shot: Shot, labels: bool) -> int:
    x, y, w, h = secret_box(shot)
    boxes = [Box(x=bx, y=by, width=bw, height=bh) for bx, by, bw, bh in label_boxes(shot)]
    r = shrink(
        data,
        masks=[{"x": x, "y": y, "width": w, "height": h}],
        boxes=boxes if labels else (),
        css_size=(shot.css_width, shot.css_height),
        source_quality=60,
    )
    return len(r.jpeg)


def pillow_browser(data: bytes, shot: Shot, labels: bool) -> int:
    if labels:
        return pillow_pipeline(data, shot)  # the same work: decode, mask-free labels, encode
    im = Image.open(io.BytesIO(data)).convert("RGB")
    k = im.width / shot.css_width
    x, y, w, h = secret_box(shot)
    ImageDraw.Draw(im).rectangle((x * k, y * k, (x + w) * k, (y + h) * k), fill=(0, 0, 0))
    out = io.BytesIO()
    im.save(out, "JPEG", quality=60, optimize=True, subsampling=2)
    thumb = im.resize((320, max(1, round(im.height * 320 / im.width))), Image.Resampling.LANCZOS)
    thumb.save(io.BytesIO(), "JPEG", quality=60, optimize=True, subsampling=2)
    return out.tell()


def measure_browser(shots: list[Shot], corpus: Path, reps: int) -> list[Row]:
    rows = []
    for shot in shots:
        data = browser_jpeg((corpus / shot.name).read_bytes())
        for labels in (False, True):
            core, pil = interleaved_ms(
                [
                    lambda d=data, s=shot, lb=labels: (core_browser(d, s, lb), None)[1],
                    lambda d=data, s=shot, lb=labels: (pillow_browser(d, s, lb), None)[1],
                ],
                reps,
            )
            floor = statistics.median(_core.turbo_floor(data) for _ in range(reps + 1)) / 1000
            w, h = fit(shot.width, shot.height)
            sized = Shot(shot.name, w, h, shot.css_width, shot.css_height, shot.dpr)
            kind = "q60 + mask + 50 labels" if labels else "q60 + mask"
            rows.append(Row(sized, kind, core, pil, floor, None, None))
            print(f"  {shot.name} {kind}: core {core:.1f} ms, Pillow {pil:.1f} ms", file=sys.stderr)
    return rows


def browser_summary(rows: list[Row]) -> str:
    lines = []
    for kind in ("q60 + mask", "q60 + mask + 50 labels"):
        some = [r for r in rows if r.fmt == kind]
        ratios = [r.core_ms / r.floor_ms for r in some if r.floor_ms]
        speedups = [r.speedup for r in some]
        lines.append(
            f"- {kind}: core / floor median **{statistics.median(ratios):.2f}x** "
            f"(max {max(ratios):.2f}x), speedup over Pillow median "
            f"{statistics.median(speedups):.2f}x"
        )
    return "\n".join(lines)


BROWSER_NOTES = """What the extension sends now: a CDP capture rendered at the output size, q60
(made here from each corpus screenshot with Pillow: Lanczos to fit 1280 px, q60 4:2:0), with one
password field (300x40 CSS px) to mask. Without labels the core writes the mask into the JPEG's
DCT coefficients while a second thread makes the thumbnail from the input, the mask painted; with
labels it decodes, draws and encodes. Pillow
decodes, paints (or labels), encodes q60 optimized + thumbnail. The floor is the same
`_core.turbo_floor` (decode + encode of the output and a thumbnail crop)."""


NOTES = """Pipeline: decode -> fit 1280 px wide (long edge <= 1568) -> 50 labels -> q60 4:2:0 JPEG
(standard Huffman tables; optimized ones only for a retry over budget) + 320 px thumbnail. Core:
`shotbridge.image.shrink` (Catmull-Rom resize, JPEG decoded DCT-scaled when the output is at
most half the source). Pillow: `draft()` for JPEG, Lanczos, ImageDraw rectangles + text,
`save(quality=60, optimize=True, subsampling=2)`.
Threads: Pillow and the floor run on one thread; the core splits the main resize by rows over 2
threads, encodes the main JPEG as two halves on two threads joined at a restart marker (the same
pixels as one encode), and the thumbnail on another thread meanwhile. Core and Pillow calls
alternate within each repetition; the floor runs back to back.
Floor: `_core.turbo_floor` = libjpeg-turbo (the core's static build) decoding DCT-scaled exactly as
the core does + encoding an output-sized and a thumbnail-sized crop on one thread with optimized
Huffman tables (as Pillow's `optimize=True`), no resampling, no labels.
Memory: fresh subprocess per row, kernel RSS high-water mark (VmHWM, reset via clear_refs) minus RSS
before the call; "x decoded" divides by width x height x 3. Timings on a shared 2-core machine are
noisy: compare ratios within a row, and re-run for stable figures."""


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--memory-child":
        memory_child(sys.argv[2], sys.argv[3], sys.argv[4:])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--reps", type=int, default=9)
    parser.add_argument("--no-memory", action="store_true")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    if not (args.corpus / "MANIFEST.tsv").is_file():
        sys.exit(f"corpus not found: {args.corpus}")

    shots = load_manifest(args.corpus)
    rows = measure(shots, args.corpus, args.reps, not args.no_memory)
    browser = measure_browser(shots, args.corpus, args.reps)
    env = (
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"Pillow {PIL.__version__} (libjpeg-turbo {features.version('libjpeg_turbo')}), "
        f"median of {args.reps} runs (core/Pillow interleaved) after one warm-up; "
        "Pillow and the floor single-threaded, the core up to 2 threads per call"
    )
    report = "\n\n".join(
        [
            "# Image core benchmark (bench/bench_core.py)",
            env,
            table(rows),
            summary(rows),
            NOTES,
            "## The browser path",
            table(browser),
            browser_summary(browser),
            BROWSER_NOTES,
        ]
    )
    print(report)
    args.out.write_text(report + "\n")


if __name__ == "__main__":
    main()
