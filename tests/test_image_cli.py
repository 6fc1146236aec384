"""``shotctl shrink``: files in, AI-ready JPEG + thumbnail out, clean errors."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path

from click.testing import CliRunner
from PIL import Image
from shotbridge.cli import main

ImageBytes = Callable[..., bytes]


def run(*args: str, stdin: bytes | None = None) -> tuple[int, str, str, bytes]:
    result = CliRunner().invoke(main, ["shrink", *args], input=stdin)
    return result.exit_code, result.stdout, result.stderr, result.stdout_bytes


def test_defaults_write_next_to_input(tmp_path: Path, image_bytes: ImageBytes) -> None:
    src = tmp_path / "page.png"
    src.write_bytes(image_bytes(2560, 1440))
    code, out, _, _ = run(str(src))
    assert code == 0, out
    main_jpg, thumb = tmp_path / "page.ai.jpg", tmp_path / "page.thumb.jpg"
    assert Image.open(main_jpg).size == (1280, 720)
    assert Image.open(thumb).size == (320, 180)
    assert "2560x1440" in out and "1280x720" in out and "q60" in out and "ms" in out


def test_json_annotate_and_options(tmp_path: Path, corpus_dir: Path) -> None:
    boxes = tmp_path / "boxes.json"
    boxes.write_text(
        json.dumps(
            {
                "boxes": [
                    {"x": 10, "y": 10, "width": 100, "height": 20, "label": 9},
                    {"x": 50, "y": 90, "width": 10, "height": 10},
                ],
                "device_pixel_ratio": 2,
                "css_width": 1280,
                "css_height": 720,
            }
        )
    )
    out_path = tmp_path / "x.jpg"
    code, out, _, _ = run(
        str(corpus_dir / "demo-1440p-dpr2.png"),
        "-o",
        str(out_path),
        "--annotate",
        str(boxes),
        "--max-width",
        "800",
        "--quality",
        "50",
        "--max-bytes",
        "40000",
        "--json",
    )
    assert code == 0, out
    summary = json.loads(out)
    assert summary["width"] == 800 and summary["badges_drawn"] == 2
    assert summary["bytes"] == out_path.stat().st_size <= 40_000
    assert summary["css_to_output_scale"] == 800 / 1280
    assert Path(summary["thumbnail_path"]) == tmp_path / "x.thumb.jpg"
    assert set(summary["timings_us"]) >= {"decode", "resize", "encode", "total"}


def test_boxes_as_plain_list_and_dpr(tmp_path: Path, image_bytes: ImageBytes) -> None:
    src = tmp_path / "a.png"
    src.write_bytes(image_bytes(400, 300))
    boxes = tmp_path / "b.json"
    boxes.write_text(json.dumps([{"x": 1, "y": 1, "width": 5, "height": 5}]))
    code, out, _, _ = run(str(src), "--annotate", str(boxes), "--dpr", "2", "--json")
    assert code == 0 and json.loads(out)["badges_drawn"] == 1


def test_stdin_to_stdout(image_bytes: ImageBytes) -> None:
    code, _, err, data = run("-", "-o", "-", stdin=image_bytes(300, 200, fmt="JPEG"))
    assert code == 0
    assert Image.open(io.BytesIO(data)).size == (300, 200)
    assert "<stdin>" in err


def test_bad_inputs_exit_2_without_traceback(tmp_path: Path, image_bytes: ImageBytes) -> None:
    bad = tmp_path / "bad.png"
    bad.write_bytes(b"not an image at all")
    truncated = tmp_path / "trunc.png"
    truncated.write_bytes(image_bytes(300, 200, "noise")[:500])
    badjson = tmp_path / "boxes.json"
    badjson.write_text("{nope")
    good = tmp_path / "good.png"
    good.write_bytes(image_bytes(30, 20))
    cases = [
        ([str(bad)], "unknown_format"),
        ([str(truncated)], "corrupt_image"),
        ([str(good), "--annotate", str(badjson)], "cannot read boxes"),
        ([str(good), "--max-bytes", "100"], "max_bytes"),
        ([str(tmp_path / "missing.png")], "missing.png"),
    ]
    for args, needle in cases:
        code, _, err, _ = run(*args)
        assert code == 2, (args, err)
        assert needle in err and "Traceback" not in err, err
