"""Errors stay typed: any argument to the image API gives a result, an ImageError or a
pydantic ValidationError, never OverflowError, IndexError, UnicodeEncodeError or TypeError."""

from __future__ import annotations

import contextlib
import io
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image
from pydantic import ValidationError
from shotbridge.image import MAX_MAX_BYTES, Box, ShrinkOptions, shrink
from shotbridge.wire.errors import Base64Error, ImageError, InvalidInputError


def _png(width: int = 40, height: int = 30) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (width, height), "white").save(buf, "PNG")
    return buf.getvalue()


PNG = _png()
TYPED = (ImageError, ValidationError)

odd_numbers = st.one_of(
    st.integers(),
    st.integers(min_value=2**31, max_value=2**70),
    st.integers(max_value=-1, min_value=-(2**70)),
    st.floats(),  # nan, inf, -0.0, subnormals
    st.sampled_from([10**400, -(10**400), 2**64, 2**64 - 1, 2**32, -1, 0, True]),
)
odd_text = st.one_of(
    st.text(max_size=30),  # lone surrogates included
    st.sampled_from(["\ud800", "data:image/png;base64,\udfff", "abc", "", "１２", "nan", "1e400"]),
)
odd_values = st.one_of(odd_numbers, odd_text, st.none(), st.binary(max_size=20), st.just([1, 2]))
option_names = st.sampled_from(list(ShrinkOptions.model_fields))
box_dicts = st.dictionaries(
    st.sampled_from(["x", "y", "width", "height", "label"]), odd_values, max_size=5
)


def shrink_typed(*args: Any, **kwargs: Any) -> None:
    """Call shrink; anything but a result or a typed error fails the test."""
    with contextlib.suppress(TYPED):
        shrink(*args, **kwargs)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(options=st.dictionaries(option_names, odd_values, max_size=4))
def test_options_of_any_value_are_typed(options: dict[str, Any]) -> None:
    shrink_typed(PNG, options)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(boxes=st.lists(box_dicts, max_size=3), masks=st.lists(box_dicts, max_size=3))
def test_boxes_and_masks_of_any_value_are_typed(
    boxes: list[dict[str, Any]], masks: list[dict[str, Any]]
) -> None:
    shrink_typed(PNG, boxes=boxes, masks=masks)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    dpr=odd_values,
    css=st.one_of(st.none(), st.tuples(odd_values), st.tuples(odd_values, odd_values), odd_values),
)
def test_geometry_of_any_value_is_typed(dpr: Any, css: Any) -> None:
    shrink_typed(PNG, device_pixel_ratio=dpr, css_size=css)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.one_of(odd_values, st.binary(max_size=200)))
def test_data_of_any_value_is_typed(data: Any) -> None:
    shrink_typed(data)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(boxes=odd_values, masks=odd_values, options=odd_values)
def test_containers_of_the_wrong_kind_are_typed(boxes: Any, masks: Any, options: Any) -> None:
    shrink_typed(PNG, options, boxes=boxes, masks=masks)


# ---- the cases from the review, by name ------------------------------------------------------


@pytest.mark.parametrize("field", ["max_bytes", "thumb_max_bytes"])
def test_byte_budgets_past_64_bits_are_validation_errors(field: str) -> None:
    with pytest.raises(ValidationError):
        shrink(PNG, {field: 2**64})
    with pytest.raises(ValidationError):
        ShrinkOptions(**{field: MAX_MAX_BYTES + 1})
    assert shrink(PNG, {field: MAX_MAX_BYTES}).jpeg  # the largest budget still works


def test_lone_surrogate_in_text_data_is_a_base64_error() -> None:
    with pytest.raises(Base64Error):
        shrink("data:image/png;base64,\ud800AAAA")


def test_one_number_css_size_is_a_validation_error() -> None:
    with pytest.raises(ValidationError):
        shrink(PNG, css_size=(100.0,))  # type: ignore[arg-type]


def test_non_finite_masks_are_validation_errors() -> None:
    with pytest.raises(ValidationError):
        shrink(PNG, masks=[{"x": math.inf, "y": 0, "width": 5, "height": 5}])


def test_data_of_another_type_is_an_image_error() -> None:
    with pytest.raises(InvalidInputError):
        shrink(12345)  # type: ignore[arg-type]


def test_huge_label_is_a_validation_error() -> None:
    with pytest.raises(ValidationError):
        Box(x=0, y=0, width=1, height=1, label=2**64)
