"""``shotctl shrink``: turn any screenshot file into an AI-ready JPEG plus thumbnail."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, NoReturn

import click
from pydantic import ValidationError

from shotbridge.cli import EXIT_BAD_INPUT
from shotbridge.image import Box, ShrinkOptions, ShrinkResult
from shotbridge.image import shrink as shrink_image
from shotbridge.wire import budgets
from shotbridge.wire.errors import ImageError


class _BadInput(Exception):
    """Input the user can fix: reported on stderr with exit code 2."""


def _load_boxes(path: Path) -> tuple[list[Box], dict[str, Any]]:
    """BOXES.json: a list of boxes, or {"boxes": [...], "device_pixel_ratio", "css_width", ...}."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise _BadInput(f"cannot read boxes from {path}: {e}") from e
    geometry: dict[str, Any] = {}
    if isinstance(doc, dict):
        geometry = {
            k: doc[k] for k in ("device_pixel_ratio", "css_width", "css_height") if k in doc
        }
        doc = doc.get("boxes", [])
    if not isinstance(doc, list):
        raise _BadInput(f"{path}: expected a list of boxes or an object with 'boxes'")
    try:
        return [Box.model_validate(b) for b in doc], geometry
    except ValidationError as e:
        raise _BadInput(f"{path}: invalid box: {e.errors()[0]['msg']}") from e


def _outputs(image: str, output: str | None, thumb: str | None) -> tuple[str, str | None]:
    """Main and thumbnail paths; '-' means stdout (then no thumbnail unless --thumb is given)."""
    if output == "-":
        return "-", thumb
    if output is None:
        src = Path("stdin.png") if image == "-" else Path(image)
        base = src.with_suffix("")
        return str(base.with_name(base.name + ".ai.jpg")), thumb or str(
            base.with_name(base.name + ".thumb.jpg")
        )
    out = Path(output)
    return output, thumb or str(out.with_name(out.stem + ".thumb.jpg"))


def _kb(n: int) -> str:
    return f"{n / 1000:.1f} kB"


def _summary(name: str, r: ShrinkResult, out: str, thumb: str | None) -> str:
    t = r.timings_us
    stages = " ".join(
        f"{k} {t[k] / 1000:.1f}"
        for k in ("decode", "resize", "draw", "encode", "thumbnail")
        if k in t
    )
    budget = f", budget: q{r.quality} x{r.scale_applied:.2f}" if r.downgraded else ""
    thumb_part = (
        f", thumb {r.thumb_width}x{r.thumb_height} {_kb(len(r.thumbnail))}" if thumb else ""
    )
    return (
        f"{name} {r.source_width}x{r.source_height} -> {out} {r.width}x{r.height} "
        f"{_kb(len(r.jpeg))} q{r.quality}{budget}{thumb_part}, {r.badges_drawn} badges, "
        f"{t.get('total', 0) / 1000:.1f} ms [{stages} ms]"
    )


@click.command()
@click.argument("image", type=click.Path(dir_okay=False, allow_dash=True))
@click.option(
    "-o", "--output", help="Output JPEG (default NAME.ai.jpg beside IMAGE; '-' = stdout)."
)
@click.option("--thumb", "thumb_path", help="Thumbnail path (default OUT's NAME.thumb.jpg).")
@click.option(
    "--annotate",
    "boxes_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="BOXES.json: [{x,y,width,height[,label]}] or {boxes, device_pixel_ratio, css_width, ...}.",
)
@click.option("--max-width", type=int, default=budgets.MAX_WIDTH, show_default=True)
@click.option("--max-long-edge", type=int, default=budgets.MAX_LONG_EDGE, show_default=True)
@click.option("--quality", type=int, default=budgets.QUALITY, show_default=True)
@click.option("--min-quality", type=int, default=budgets.MIN_QUALITY, show_default=True)
@click.option("--max-bytes", type=int, default=budgets.MAX_BYTES, show_default=True)
@click.option("--thumb-width", type=int, default=budgets.THUMB_WIDTH, show_default=True)
@click.option("--thumb-max-bytes", type=int, default=budgets.THUMB_MAX_BYTES, show_default=True)
@click.option("--dpr", type=float, default=None, help="Device pixel ratio (default 1, or BOXES').")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON summary instead of one line.")
def shrink(
    image: str,
    output: str | None,
    thumb_path: str | None,
    boxes_path: Path | None,
    max_width: int,
    max_long_edge: int,
    quality: int,
    min_quality: int,
    max_bytes: int,
    thumb_width: int,
    thumb_max_bytes: int,
    dpr: float | None,
    as_json: bool,
) -> None:
    """Shrink IMAGE (PNG or JPEG; '-' = stdin) into an AI-ready JPEG plus a thumbnail."""
    try:
        data = sys.stdin.buffer.read() if image == "-" else Path(image).read_bytes()
        options = ShrinkOptions(
            max_width=max_width,
            max_long_edge=max_long_edge,
            quality=quality,
            min_quality=min(min_quality, quality),
            max_bytes=max_bytes,
            thumb_width=thumb_width,
            thumb_max_bytes=thumb_max_bytes,
        )
        result = _shrunk(data, options, boxes_path, dpr)
        out, thumb = _outputs(image, output, thumb_path)
        _write(result, out, thumb)
    except ImageError as e:
        _fail(f"{e.reason}: {e}")
    except ValidationError as e:
        err = e.errors()[0]
        _fail(f"invalid option {'.'.join(map(str, err['loc']))}: {err['msg']}")
    except (_BadInput, OSError, ValueError) as e:
        _fail(str(e))

    _report("<stdin>" if image == "-" else image, result, out, thumb, as_json=as_json)


def _shrunk(
    data: bytes, options: ShrinkOptions, boxes_path: Path | None, dpr: float | None
) -> ShrinkResult:
    """The core's result for ``data``, labelled with BOXES.json when given."""
    boxes, geometry = _load_boxes(boxes_path) if boxes_path else ([], {})
    css = geometry.get("css_width"), geometry.get("css_height")
    return shrink_image(
        data,
        options,
        boxes=boxes,
        device_pixel_ratio=dpr if dpr is not None else geometry.get("device_pixel_ratio", 1.0),
        css_size=(css[0], css[1]) if css[0] and css[1] else None,
    )


def _write(result: ShrinkResult, out: str, thumb: str | None) -> None:
    if out == "-":
        sys.stdout.buffer.write(result.jpeg)
        sys.stdout.buffer.flush()
    else:
        Path(out).write_bytes(result.jpeg)
    if thumb:
        Path(thumb).write_bytes(result.thumbnail)


def _report(name: str, result: ShrinkResult, out: str, thumb: str | None, *, as_json: bool) -> None:
    """One line (or JSON) about what was written; on stderr when the JPEG went to stdout."""
    if as_json:
        summary = result.model_dump(exclude={"jpeg", "thumbnail"})
        summary.update(
            input=name,
            output=out,
            thumbnail_path=thumb,
            bytes=len(result.jpeg),
            thumb_bytes=len(result.thumbnail),
        )
        # With the JPEG on stdout, JSON goes to stderr so the two never mix.
        click.echo(json.dumps(summary), err=out == "-")
    else:
        click.echo(_summary(name, result, out, thumb), err=out == "-")


def _fail(message: str) -> NoReturn:
    click.echo(f"shotctl shrink: error: {message}", err=True)
    sys.exit(EXIT_BAD_INPUT)
