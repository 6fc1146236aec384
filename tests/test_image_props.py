"""Property-based tests of the image core's size, budget and labelling guarantees.

Sizes from 1x1 to 7680x4320 and tall pages up to 1280x16384 (incl. 1xN and Nx1), flat, gradient
and full-entropy noise content, random boxes (negative, zero-size, out of frame), DPRs 1-3.
Large sizes are sampled sparingly so the file runs in well under two minutes on two cores.
"""

from __future__ import annotations

import io
from collections.abc import Callable

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image
from shotbridge.image import MAX_BADGES, Box, ShrinkOptions, ShrinkResult, shrink
from shotbridge.wire import errors

ImageBytes = Callable[..., bytes]

DPRS = [1.0, 1.25, 1.5, 2.0, 3.0]
KINDS = ["flat", "gradient", "noise"]
# Shapes worth hitting on purpose; noise is only generated for the smaller ones (cost).
EXTREME_SIZES = [
    (1, 1),
    (1, 2),
    (2, 1),
    (1, 4000),
    (4000, 1),
    (1, 16384),
    (16384, 1),
    (1281, 1),
    (1280, 16384),
    (1279, 1569),
    (3840, 2160),
    (7680, 4320),
]
LARGE = 12_000_000  # px: above this, no noise (generating it would dominate the run time)


def ideal_size(w: int, h: int, opts: ShrinkOptions) -> tuple[float, float]:
    s = min(1.0, opts.max_width / w, opts.max_long_edge / max(w, h))
    return w * s, h * s


def check_properties(r: ShrinkResult, w: int, h: int, opts: ShrinkOptions, n_boxes: int) -> None:
    assert (r.source_width, r.source_height) == (w, h)
    # Size caps, never upscaled.
    assert 1 <= r.width <= min(opts.max_width, w)
    assert 1 <= r.height <= h
    assert max(r.width, r.height) <= opts.max_long_edge
    # Aspect ratio within 1 px (of the budget-scaled size when the budget shrank the image).
    iw, ih = ideal_size(w, h, opts)
    if r.scale_applied == 1.0:
        assert abs(r.width - iw) <= 1 and abs(r.height - ih) <= 1
    elif iw >= ih:
        assert abs(r.height - ih * r.width / round(iw)) <= 1
    else:
        assert abs(r.width - iw * r.height / round(ih)) <= 1
    # Byte budgets, every time.
    assert len(r.jpeg) <= opts.max_bytes
    assert len(r.thumbnail) <= opts.thumb_max_bytes
    # Thumbnail width (smaller only when its own budget forced it).
    if r.thumb_downgraded:
        assert r.thumb_width <= min(opts.thumb_width, r.width)
    else:
        assert r.thumb_width == min(opts.thumb_width, r.width)
    # Independent decoder agrees.
    for data, size in (
        (r.jpeg, (r.width, r.height)),
        (r.thumbnail, (r.thumb_width, r.thumb_height)),
    ):
        img = Image.open(io.BytesIO(data))
        img.load()
        assert img.size == size and img.format == "JPEG"
    # Every box is accounted for (first 100 only).
    assert r.badges_drawn + r.boxes_offscreen == min(n_boxes, MAX_BADGES)
    assert 30 <= r.quality <= 60 or not r.downgraded


coord = st.floats(min_value=-2000, max_value=9000, allow_nan=False)
extent = st.one_of(st.just(0.0), st.floats(min_value=-300, max_value=2000, allow_nan=False))
boxes_strategy = st.lists(
    st.builds(
        Box,
        x=coord,
        y=coord,
        width=extent,
        height=extent,
        label=st.one_of(st.none(), st.integers(1, 999)),
    ),
    max_size=120,
)
options_strategy = st.builds(
    ShrinkOptions,
    max_width=st.sampled_from([1280, 1280, 800, 64]),
    max_long_edge=st.sampled_from([1568, 1568, 1000]),
    max_bytes=st.sampled_from([500_000, 500_000, 80_000, 2_000]),
    thumb_max_bytes=st.sampled_from([30_000, 30_000, 2_000]),
)


@st.composite
def image_case(draw: st.DrawFn) -> tuple[int, int, str, str]:
    if draw(st.integers(0, 3)) == 0:
        w, h = draw(st.sampled_from(EXTREME_SIZES))
    else:
        w, h = draw(st.integers(1, 2600)), draw(st.integers(1, 2000))
    kinds = KINDS if w * h <= LARGE else ["flat", "gradient"]
    return w, h, draw(st.sampled_from(kinds)), draw(st.sampled_from(["PNG", "JPEG"]))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    case=image_case(),
    opts=options_strategy,
    boxes=boxes_strategy,
    dpr=st.sampled_from(DPRS),
    with_css=st.booleans(),
)
def test_budgets_and_geometry_hold(
    image_bytes: ImageBytes,
    case: tuple[int, int, str, str],
    opts: ShrinkOptions,
    boxes: list[Box],
    dpr: float,
    with_css: bool,
) -> None:
    w, h, kind, fmt = case
    data = image_bytes(w, h, kind, fmt)
    css = (w / dpr, h / dpr) if with_css else None
    try:
        r = shrink(data, opts, boxes=boxes, device_pixel_ratio=dpr, css_size=css)
    except errors.ImageError as e:  # pragma: no cover - a valid image must never be refused
        raise AssertionError(f"valid {w}x{h} {kind} {fmt} refused: {e!r}") from e
    check_properties(r, w, h, opts, len(boxes))


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    size=st.sampled_from([(7680, 4320), (3840, 2160), (1280, 16384), (1, 16384), (16384, 1)]),
    fmt=st.sampled_from(["PNG", "JPEG"]),
    max_bytes=st.sampled_from([500_000, 50_000, 2_000]),
)
def test_full_entropy_noise_at_large_sizes_fits_budget(
    image_bytes: ImageBytes, size: tuple[int, int], fmt: str, max_bytes: int
) -> None:
    w, h = size
    opts = ShrinkOptions(max_bytes=max_bytes)
    r = shrink(image_bytes(w, h, "noise", fmt), opts)
    check_properties(r, w, h, opts, 0)


@settings(max_examples=40, deadline=None)
@given(
    data=st.one_of(
        st.binary(max_size=64),
        st.binary(max_size=64).map(lambda b: b"\x89PNG\r\n\x1a\n" + b),
        st.binary(max_size=64).map(lambda b: b"\xff\xd8\xff" + b),
        st.text(max_size=40),
        st.text(max_size=40).map(lambda t: "data:image/png;base64," + t),
    )
)
def test_garbage_raises_only_documented_errors(data: bytes | str) -> None:
    try:
        shrink(data)
    except errors.ImageError as e:
        assert type(e) is not errors.CoreInternalError, e
        assert str(e)


@settings(max_examples=25, deadline=None)
@given(cut=st.floats(min_value=0.05, max_value=0.99), fmt=st.sampled_from(["PNG", "JPEG"]))
def test_truncation_anywhere_is_a_clean_error(
    image_bytes: ImageBytes, cut: float, fmt: str
) -> None:
    data = image_bytes(200, 150, "noise", fmt)
    try:
        shrink(data[: max(1, int(len(data) * cut))])
    except errors.ImageError as e:
        assert isinstance(e, errors.CorruptImageError), e
    else:  # pragma: no cover
        raise AssertionError("a truncated image was accepted")


@settings(max_examples=60, deadline=None)
@given(
    size=st.tuples(st.integers(1, 700), st.integers(1, 500)),
    subsampling=st.sampled_from([0, 1, 2]),  # Pillow: 4:4:4, 4:2:2, 4:2:0
    grey=st.booleans(),
    quality=st.integers(1, 60),
    masks=st.lists(
        st.tuples(
            st.floats(-50, 700), st.floats(-50, 500), st.floats(0.1, 300), st.floats(0.1, 300)
        ),
        min_size=1,
        max_size=5,
    ),
)
def test_a_jpeg_kept_as_it_came_is_black_under_every_mask(
    size: tuple[int, int],
    subsampling: int,
    grey: bool,
    quality: int,
    masks: list[tuple[float, float, float, float]],
) -> None:
    # The browser's JPEG at the output size leaves with its masks blacked out in its DCT
    # coefficients (no re-encode): every pixel a mask touches is black, whatever the layout.
    w, h = size
    src = Image.effect_noise((w, h), 60).point(lambda v: 90 + v % 160)
    src = src if grey else Image.merge("RGB", (src, src.rotate(90), src.transpose(0)))
    buf = io.BytesIO()
    src.save(buf, "JPEG", quality=quality, subsampling=subsampling)
    rects = [{"x": x, "y": y, "width": mw, "height": mh} for x, y, mw, mh in masks]
    r = shrink(buf.getvalue(), masks=rects, source_quality=quality)
    assert "mask" in r.timings_us and "encode" not in r.timings_us, r.timings_us
    out = Image.open(io.BytesIO(r.jpeg)).convert("RGB")
    assert out.size == (w, h)
    for x, y, mw, mh in masks:
        for py in range(max(0, int(y)), min(h, int(y + mh) + 1)):
            for px in range(max(0, int(x)), min(w, int(x + mw) + 1)):
                if px < x + mw and py < y + mh:
                    assert max(out.getpixel((px, py))) <= 48, (px, py)
