"""Unit tests of the image core through its Python API: corpus, inputs, errors, masks, labels."""

from __future__ import annotations

import base64
import csv
import io
import struct
import threading
import time
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest
from PIL import Image
from pydantic import ValidationError
from shotbridge import _core
from shotbridge.image import (
    MAX_BADGES,
    Box,
    ShrinkOptions,
    ShrinkResult,
    finish,
    prepare,
    shrink,
    thumbnail_of,
)
from shotbridge.wire import errors
from shotbridge.wire.geometry import Rect, Size

ImageBytes = Callable[..., bytes]


def pixels(img: Image.Image) -> list[tuple[int, ...]]:
    """RGB pixels as tuples (Pillow 13 deprecates getdata)."""
    raw = img.convert("RGB").tobytes()
    return [tuple(raw[i : i + 3]) for i in range(0, len(raw), 3)]


def decode(data: bytes) -> Image.Image:
    img = Image.open(io.BytesIO(data))
    img.load()
    return img.convert("RGB")


def check_outputs(r: ShrinkResult, opts: ShrinkOptions | None = None) -> None:
    opts = opts or ShrinkOptions()
    assert len(r.jpeg) <= opts.max_bytes
    assert len(r.thumbnail) <= opts.thumb_max_bytes
    assert decode(r.jpeg).size == (r.width, r.height)
    assert decode(r.thumbnail).size == (r.thumb_width, r.thumb_height)
    assert r.jpeg[:3] == b"\xff\xd8\xff" and r.thumbnail[:3] == b"\xff\xd8\xff"


# ---- corpus ---------------------------------------------------------------------------------


def manifest(corpus_dir: Path) -> list[dict[str, str]]:
    with (corpus_dir / "MANIFEST.tsv").open() as f:
        return list(csv.DictReader(f, delimiter="\t"))


def test_corpus_png_and_jpeg(corpus_dirs: list[Path]) -> None:
    rows = [(d, row) for d in corpus_dirs for row in manifest(d)]
    assert len(rows) >= 4
    for folder, row in rows:
        png = (folder / row["file"]).read_bytes()
        css = (float(row["css_width"]), float(row["css_height"]))
        boxes = [
            Box(x=20 + 60 * (i % 10), y=40 + 30 * (i // 10), width=50, height=20) for i in range(50)
        ]
        buf = io.BytesIO()
        Image.open(io.BytesIO(png)).save(buf, "JPEG", quality=92)
        for data in (png, buf.getvalue()):
            r = shrink(
                data, boxes=boxes, device_pixel_ratio=float(row["device_pixel_ratio"]), css_size=css
            )
            check_outputs(r)
            assert (r.source_width, r.source_height) == (int(row["width"]), int(row["height"]))
            assert r.width == min(1280, r.source_width)
            assert r.quality == 60 and not r.downgraded
            assert r.badges_drawn == 50 and r.boxes_offscreen == 0
            assert r.css_to_output_scale == pytest.approx(r.width / css[0])
            assert r.thumb_width == 320
            assert set(r.timings_us) == {"decode", "resize", "draw", "encode", "thumbnail", "total"}


def test_hidpi_jpeg_is_dct_scaled(corpus_dir: Path) -> None:
    img = Image.open(corpus_dir / "demo-1440p-dpr2.png")
    buf = io.BytesIO()
    img.save(buf, "JPEG", quality=92)
    r = shrink(buf.getvalue(), device_pixel_ratio=2)
    assert r.dct_scale_denom == 2
    assert (r.width, r.height) == (1280, 720)
    assert r.css_to_output_scale == pytest.approx(1.0)


# ---- inputs ---------------------------------------------------------------------------------


def test_data_url_str_bytes_and_bare_base64(image_bytes: ImageBytes) -> None:
    png = image_bytes(64, 48)
    b64 = base64.b64encode(png).decode()
    for data in (f"data:image/png;base64,{b64}", f"data:image/png;base64,{b64}".encode(), b64):
        r = shrink(data)
        assert (r.width, r.height) == (64, 48)
    assert shrink(bytearray(png)).width == 64
    assert shrink(memoryview(png)).width == 64


def test_never_upscales(image_bytes: ImageBytes) -> None:
    r = shrink(image_bytes(10, 7))
    assert (r.width, r.height, r.thumb_width, r.thumb_height) == (10, 7, 10, 7)


def test_tall_page_long_edge_cap(image_bytes: ImageBytes) -> None:
    r = shrink(image_bytes(1280, 16384, "flat"))
    assert r.height == 1568 and abs(r.width - 1280 * 1568 / 16384) <= 1


# ---- errors ---------------------------------------------------------------------------------


def png_chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def png_header_only(width: int, height: int) -> bytes:
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr) + png_chunk(b"IEND", b"")


def jpeg_header_only(width: int, height: int) -> bytes:
    sof = struct.pack(">HBHHB", 17, 8, height, width, 3) + bytes(
        [1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]
    )
    return (
        b"\xff\xd8"
        + b"\xff\xe0"
        + struct.pack(">H", 16)
        + b"JFIF\x00"
        + bytes(9)
        + b"\xff\xc0"
        + sof
    )


@pytest.mark.parametrize(
    ("data", "error"),
    [
        (b"", errors.EmptyInputError),
        ("", errors.EmptyInputError),
        ("data:image/png;base64,", errors.EmptyInputError),
        ("data:image/png;base64,@@not base64@@", errors.Base64Error),
        ("data:image/png,rawpixels", errors.Base64Error),
        ("%%%", errors.Base64Error),
        (b"GIF89a\x01\x00\x01\x00", errors.UnknownFormatError),
        (b"RIFF\x00\x00\x00\x00WEBPVP8 ", errors.UnknownFormatError),
        (b"hello, world", errors.UnknownFormatError),
        (b"\x89PNG\r\n\x1a\n", errors.CorruptImageError),
        (b"\xff\xd8\xff", errors.CorruptImageError),
    ],
)
def test_bad_input_raises_named_error(data: bytes | str, error: type[Exception]) -> None:
    with pytest.raises(error) as exc:
        shrink(data)
    assert isinstance(exc.value, errors.ImageError) and isinstance(exc.value, ValueError)
    assert str(exc.value)


@pytest.mark.parametrize("fmt", ["PNG", "JPEG"])
def test_truncated_image(image_bytes: ImageBytes, fmt: str) -> None:
    data = image_bytes(300, 200, "noise", fmt)
    for cut in (len(data) // 2, len(data) - 20, 40):
        with pytest.raises(errors.CorruptImageError, match="truncated"):
            shrink(data[:cut])


def test_corrupt_png_data(image_bytes: ImageBytes) -> None:
    data = bytearray(image_bytes(300, 200, "noise"))
    mid = len(data) // 2
    data[mid : mid + 64] = bytes(64)  # clobber IDAT bytes: CRC / zlib checks must catch it
    with pytest.raises(errors.CorruptImageError):
        shrink(bytes(data))


def test_corrupt_jpeg_data(image_bytes: ImageBytes) -> None:
    data = image_bytes(300, 200, "noise", "JPEG")
    start = data.index(b"\xff\xda")  # start of scan
    corrupt = data[: start + 20] + b"\xff\xd9"  # scan cut short by an EOI marker
    with pytest.raises(errors.CorruptImageError):
        shrink(corrupt)


@pytest.mark.parametrize(
    "data",
    [
        png_header_only(40_000, 40_000),
        png_header_only(20_000, 20_000),
        png_header_only(40_000, 10),
        jpeg_header_only(20_000, 20_000),
        jpeg_header_only(40_000, 100),
    ],
)
def test_decompression_bomb_refused_fast(data: bytes) -> None:
    start = time.perf_counter()
    with pytest.raises(errors.ImageTooLargeError, match="limit"):
        shrink(data)
    assert time.perf_counter() - start < 0.5  # refused from the header, nothing allocated


def test_panic_becomes_core_internal_error() -> None:
    with pytest.raises(errors.CoreInternalError, match="deliberate test panic"):
        _core._panic_for_tests()


def test_invalid_options() -> None:
    with pytest.raises(ValidationError):
        ShrinkOptions(max_bytes=1_999)
    with pytest.raises(ValidationError):
        ShrinkOptions(quality=50, min_quality=60)
    with pytest.raises(ValidationError):
        ShrinkOptions(max_width=0)
    assert ShrinkOptions(quality=20).min_quality == 20
    with pytest.raises(ValueError, match="max_bytes"):
        _core.shrink(b"x", options={"max_bytes": 10})
    with pytest.raises(errors.InvalidInputError, match="unknown option"):
        _core.shrink(b"x", options={"max_bites": 10_000})  # type: ignore[typeddict-unknown-key]
    with pytest.raises(ValueError, match="device_pixel_ratio"):
        shrink(b"x", device_pixel_ratio=0)
    with pytest.raises(ValueError, match="finite"):
        shrink(b"x", masks=[Rect(x=float("nan"), y=0, width=1, height=1)])
    # Every bad input to the image API raises ImageError (a TypeError would escape callers).
    with pytest.raises(errors.InvalidInputError, match="data must be bytes or str"):
        _core.shrink(12345)  # type: ignore[arg-type]


def test_no_thumbnail_beside_a_re_encoded_image_and_one_made_later() -> None:
    page = secret_page(1600, 900, (100, 100, 200, 40))
    none = ShrinkOptions(thumbnail=False)
    boxes = [Box(x=10, y=10, width=80, height=30)]
    r = shrink(page, none, boxes=boxes)
    assert (r.thumbnail, r.thumb_width, r.thumb_height) == (b"", 0, 0)
    assert decode(r.jpeg).size == (1280, 720) and r.badges_drawn == 1
    late = finish(prepare(page, none), boxes=boxes)
    assert late.thumbnail == b"" and late.jpeg == r.jpeg
    # Made later from the image itself: thumb_width wide, within its budget, labels and all.
    made = thumbnail_of(r.jpeg)
    assert decode(made).size == (320, 180) and len(made) <= ShrinkOptions().thumb_max_bytes
    assert decode(thumbnail_of(r.jpeg, ShrinkOptions(thumb_width=100))).size == (100, 56)
    # An input kept as it came still gets one (made meanwhile; it proves the input decodes).
    kept_in = shrink(page, ShrinkOptions(max_width=1600, quality=60)).jpeg
    kept = shrink(kept_in, ShrinkOptions(max_width=1600, thumbnail=False), source_quality=60)
    assert kept.jpeg == kept_in and decode(kept.thumbnail).width == 320


# ---- masks and labels -----------------------------------------------------------------------


def secret_page(width: int, height: int, secret: tuple[int, int, int, int]) -> bytes:
    """A light page with a bright red 'password' block at `secret` (x, y, w, h) image px."""
    img = Image.new("RGB", (width, height), (245, 245, 245))
    x, y, w, h = secret
    img.paste((230, 20, 20), (x, y, x + w, y + h))
    buf = io.BytesIO()
    img.save(buf, "PNG")
    return buf.getvalue()


@pytest.mark.parametrize(("dpr", "scale"), [(1.0, 1), (2.0, 2), (1.5, 1.5)])
def test_mask_blacks_out_region(dpr: float, scale: float) -> None:
    # Secret at CSS (300, 200, 160, 40); the image is (css size x dpr).
    css_w, css_h = 1600, 900
    sx = lambda v: round(v * scale)  # noqa: E731
    data = secret_page(sx(css_w), sx(css_h), (sx(300), sx(200), sx(160), sx(40)))
    r = shrink(data, masks=[Rect(x=300, y=200, width=160, height=40)], device_pixel_ratio=dpr)
    out = decode(r.jpeg)
    k = r.css_to_output_scale
    box = (round(300 * k), round(200 * k), round(460 * k), round(240 * k))
    region = out.crop(box)
    assert max(max(px) for px in pixels(region)) < 24, "masked pixels must be ~black"
    # Nothing red survives anywhere (the secret's colour never reaches the output).
    assert not any(p[0] > 150 and p[1] < 100 for p in pixels(out))


def test_mask_and_box_on_same_spot_label_drawn_over_mask() -> None:
    data = secret_page(800, 600, (100, 100, 200, 50))
    r = shrink(
        data,
        masks=[Rect(x=100, y=100, width=200, height=50)],
        boxes=[Box(x=100, y=100, width=200, height=50, label=3)],
    )
    assert r.badges_drawn == 1
    assert not any(p[0] > 150 and p[1] < 100 and p[2] < 100 for p in pixels(decode(r.jpeg)))


@pytest.mark.parametrize("size", [(800, 600), (1600, 1200)])  # at output size, and shrunk
def test_prepare_then_finish_is_shrink(size: tuple[int, int]) -> None:
    """The host decodes early pixels before their labels arrive: the same bytes as one call."""
    data = secret_page(*size, (100, 100, 200, 50))
    masks = [Rect(x=100, y=100, width=200, height=50)]
    boxes = [
        Box(x=10, y=20, width=300, height=40, label=2),
        Box(x=500, y=300, width=80, height=30, label=3),
    ]
    text = [Rect(x=0, y=0, width=400, height=16)]
    css = (size[0], size[1])
    whole = shrink(data, boxes=boxes, masks=masks, text=text, css_size=css)
    split = finish(prepare(data, masks=masks, css_size=css), boxes=boxes, text=text)
    assert split.jpeg == whole.jpeg and split.thumbnail == whole.thumbnail
    assert (split.badges_drawn, split.text_covered) == (whole.badges_drawn, whole.text_covered)
    # The mask is in the prepared pixels: nothing of the secret's red reaches the output
    # (badges 2 and 3 are blue and green; 1 would be red).
    assert not any(p[0] > 150 and p[1] < 100 and p[2] < 100 for p in pixels(decode(split.jpeg)))


def test_a_prepared_image_is_finished_once() -> None:
    prepared = prepare(secret_page(400, 300, (10, 10, 50, 20)))
    finish(prepared, boxes=[Box(x=10, y=10, width=50, height=20)])
    with pytest.raises(errors.InvalidInputError, match="finished already"):
        finish(prepared)


def test_prepare_refuses_what_shrink_refuses() -> None:
    with pytest.raises(errors.ImageError):
        prepare(b"not an image")
    with pytest.raises(ValidationError):
        prepare(secret_page(40, 30, (0, 0, 1, 1)), masks=[{"x": float("nan"), "y": 0}])


def test_labelled_box_changes_pixels_at_badge(image_bytes: ImageBytes) -> None:
    data = image_bytes(800, 600, "flat")
    plain = decode(shrink(data).jpeg)
    labelled_r = shrink(data, boxes=[Box(x=200, y=200, width=120, height=40, label=42)])
    labelled = decode(labelled_r.jpeg)
    assert labelled_r.badges_drawn == 1

    def diff(box: tuple[int, int, int, int]) -> int:
        a, b = pixels(plain.crop(box)), pixels(labelled.crop(box))
        return sum(
            sum(abs(x - y) for x, y in zip(p, q, strict=True)) for p, q in zip(a, b, strict=True)
        )

    assert diff((200, 184, 230, 200)) > 1000  # badge sits just above the box's top-left
    assert diff((200, 200, 320, 202)) > 100  # 2 px outline along the top edge
    assert diff((600, 400, 700, 500)) == 0  # far away: untouched
    # The badge has white digits on a dark fill.
    badge = pixels(labelled.crop((200, 184, 230, 200)))
    assert any(min(p) > 200 for p in badge) and any(max(p) < 160 for p in badge)


def test_label_none_uses_index_and_cap_at_max_badges(image_bytes: ImageBytes) -> None:
    data = image_bytes(1280, 720, "flat")
    n = MAX_BADGES + 50
    boxes = [Box(x=(i * 37) % 1200, y=(i * 53) % 700, width=30, height=20) for i in range(n)]
    r = shrink(data, boxes=boxes)
    assert r.badges_drawn == MAX_BADGES and r.boxes_offscreen == 0


def test_offscreen_boxes_are_counted_not_errors(image_bytes: ImageBytes) -> None:
    data = image_bytes(400, 300)
    boxes = [
        {"x": -100, "y": -100, "width": 50, "height": 50},  # wholly outside
        {"x": 5000, "y": 10, "width": 10, "height": 10},  # wholly outside
        {"x": -20, "y": -20, "width": 50, "height": 50},  # partly inside
        {"x": 100, "y": 100, "width": 0, "height": 0},  # zero size, inside
        {"x": 100, "y": 100, "width": -40, "height": -30},  # negative size, inside
        Rect(x=390, y=290, width=100, height=100),  # partly inside
    ]
    r = shrink(data, boxes=boxes)
    assert (r.badges_drawn, r.boxes_offscreen) == (4, 2)


def test_css_size_beats_dpr(image_bytes: ImageBytes) -> None:
    r = shrink(image_bytes(2000, 1000), device_pixel_ratio=3, css_size=Size(width=1000, height=500))
    assert r.width == 1280 and r.css_to_output_scale == pytest.approx(1.28)
    r = shrink(image_bytes(2000, 1000), device_pixel_ratio=2)
    assert r.css_to_output_scale == pytest.approx(2 * 1280 / 2000)


# ---- budget ---------------------------------------------------------------------------------


def test_noise_over_budget_lowers_quality_then_scale(image_bytes: ImageBytes) -> None:
    data = image_bytes(1280, 720, "noise")
    opts = ShrinkOptions(max_bytes=60_000, thumb_max_bytes=5_000)
    r = shrink(data, opts)
    check_outputs(r, opts)
    assert r.downgraded and r.quality == 30 and r.scale_applied < 1.0
    assert r.width == round(1280 * r.scale_applied)
    assert abs(r.height - 720 * r.width / 1280) <= 1


def test_quality_search_without_scaling(image_bytes: ImageBytes) -> None:
    data = image_bytes(1280, 720, "noise")
    at_60 = len(shrink(data).jpeg)
    opts = ShrinkOptions(max_bytes=int(at_60 * 0.8))
    r = shrink(data, opts)
    check_outputs(r, opts)
    assert r.downgraded and 30 <= r.quality < 60 and r.scale_applied == 1.0


def test_minimum_budget_holds_for_big_noise(image_bytes: ImageBytes) -> None:
    data = image_bytes(2000, 1500, "noise", "JPEG")
    opts = ShrinkOptions(max_bytes=2_000, thumb_max_bytes=2_000)
    r = shrink(data, opts)
    check_outputs(r, opts)


# ---- concurrency ----------------------------------------------------------------------------


def test_threads_run_concurrently_without_corruption(image_bytes: ImageBytes) -> None:
    data = image_bytes(1920, 1080)
    expected = shrink(data).jpeg
    results: list[bytes] = []

    def work() -> None:
        results.append(shrink(data).jpeg)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [expected] * 4


def test_prepare_then_finish_under_a_tight_budget_is_shrink() -> None:
    """A budget below the prepared planes' size re-decodes the input: finish still has it."""
    buf = io.BytesIO()
    noisy = Image.effect_noise((800, 600), 90).convert("RGB")
    noisy.save(buf, "JPEG", quality=90, subsampling=2)  # 4:2:0 at output size: the planes path
    data = buf.getvalue()
    options = ShrinkOptions(max_bytes=20_000, thumbnail=False)
    boxes = [Box(x=10, y=20, width=300, height=40, label=2)]
    whole = shrink(data, options, boxes=boxes)
    split = finish(prepare(data, options), boxes=boxes)
    assert split.jpeg == whole.jpeg and len(split.jpeg) <= 20_000
    assert split.width < 800 and split.badges_drawn == 1
