"""``shotctl diff BEFORE AFTER``: what changed between two screenshot files (PNG/JPEG).

Exit status: 0 when the two are equal within the tolerance (no pixel over ``--threshold`` that is
not anti-aliasing), 1 when they differ, 2 on a usage error (one line on stderr). ``-o OUT`` writes
the outlined diff picture (a JPEG); ``--json`` prints the result as JSON instead of a sentence.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from shotbridge.cli import EXIT_BAD_INPUT
from shotbridge.diff import DiffOptions, DiffResult, compare
from shotbridge.wire.errors import ImageError

EXIT_EQUAL = 0
EXIT_DIFFERENT = 1


def _fail(message: str) -> None:
    click.echo(f"shotctl diff: error: {message}", err=True)
    sys.exit(EXIT_BAD_INPUT)


def _read(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        _fail(f"cannot read {path}: {exc.strerror or exc}")
        raise  # unreachable


def _sentence(result: DiffResult) -> str:
    if result.equal:
        return f"equal: 0 pixels changed of {result.compared_pixels:,}"
    n = len(result.regions)
    head = (
        f"different: {result.changed_pixels:,} pixels changed "
        f"({result.changed_fraction * 100:.2f} %), {n} region{'s' if n != 1 else ''}"
    )
    boxes = "; ".join(
        f"{r.number}. {r.width:.0f}×{r.height:.0f} at ({r.x:.0f}, {r.y:.0f})"
        for r in result.regions
    )
    return f"{head}: {boxes}"


@click.command(name="diff")
@click.argument("before", type=click.Path(dir_okay=False))
@click.argument("after", type=click.Path(dir_okay=False))
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the diff image here.")
@click.option(
    "--threshold",
    type=click.FloatRange(0, 1),
    default=0.1,
    show_default=True,
    help="pixelmatch's colour threshold: 0 exact, 1 anything goes.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def diff(before: str, after: str, output: str | None, threshold: float, as_json: bool) -> None:
    """Compare two screenshots of the same size; exit 0 if equal, 1 if different."""
    a, b = _read(before), _read(after)
    try:
        result = compare(a, b, options=DiffOptions(threshold=threshold), image=output is not None)
    except ImageError as exc:
        _fail(str(exc))
        return
    if output is not None and result.image is not None:
        try:
            Path(output).write_bytes(result.image)
        except OSError as exc:
            _fail(f"cannot write {output}: {exc.strerror or exc}")
    if as_json:
        click.echo(json.dumps(result.model_dump(mode="json") | {"equal": result.equal}))
    else:
        click.echo(_sentence(result))
    sys.exit(EXIT_EQUAL if result.equal else EXIT_DIFFERENT)
