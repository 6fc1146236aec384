"""Shared fixtures. Image fixtures: the screenshot corpus and a synthetic-image factory."""

from __future__ import annotations

import io
import random
from collections.abc import Callable
from pathlib import Path

import pytest
from PIL import Image

# Small screenshots rendered from this repository's pages (scripts/render-fixtures.sh): always here.
FIXTURE_SCREENS = Path(__file__).parent / "fixtures" / "screens"
# A larger corpus of real sites, beside the checkout on some machines: extra realism when present.
SHARED_SCREENS = Path(__file__).parents[1].parent / "shared" / "corpus" / "screens"


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    """The screenshots carried by the tests (MANIFEST.tsv lists size and DPR of each)."""
    assert (FIXTURE_SCREENS / "MANIFEST.tsv").is_file(), f"missing {FIXTURE_SCREENS}"
    return FIXTURE_SCREENS


@pytest.fixture(scope="session")
def corpus_dirs(corpus_dir: Path) -> list[Path]:
    """The carried screenshots, plus the shared corpus where it exists (nothing depends on it)."""
    shared = [SHARED_SCREENS] if (SHARED_SCREENS / "MANIFEST.tsv").is_file() else []
    return [corpus_dir, *shared]


def make_image(width: int, height: int, kind: str = "gradient") -> Image.Image:
    """A cheap synthetic RGB image: 'flat', 'gradient' or full-entropy 'noise'."""
    if kind == "flat":
        return Image.new("RGB", (width, height), (236, 240, 244))
    if kind == "noise":
        # Seeded by the size, so a failing Hypothesis example replays with the same pixels.
        noise = random.Random(width * 100_003 + height).randbytes(width * height * 3)
        return Image.frombytes("RGB", (width, height), noise)
    ramp = Image.linear_gradient("L")  # 256x256, top-to-bottom
    r = ramp.resize((width, height))
    g = ramp.rotate(90).resize((width, height))
    b = Image.new("L", (width, height), 128)
    return Image.merge("RGB", (r, g, b))


def encode(img: Image.Image, fmt: str = "PNG") -> bytes:
    """PNG (fast, lightly compressed) or JPEG q92 bytes of `img`."""
    buf = io.BytesIO()
    if fmt == "PNG":
        img.save(buf, "PNG", compress_level=1)
    else:
        img.save(buf, "JPEG", quality=92)
    return buf.getvalue()


@pytest.fixture(scope="session")
def image_bytes() -> Callable[..., bytes]:
    """Factory: image_bytes(width, height, kind='gradient', fmt='PNG') -> encoded bytes."""

    def factory(width: int, height: int, kind: str = "gradient", fmt: str = "PNG") -> bytes:
        return encode(make_image(width, height, kind), fmt)

    return factory


@pytest.fixture(scope="session")
def built_wheel() -> Path:
    """`make dist`'s wheel for this machine, built once (kept in dist/ while no source changes)."""
    from scripts import dist

    return dist.wheel_for_tests(Path(__file__).parents[1] / "dist")
