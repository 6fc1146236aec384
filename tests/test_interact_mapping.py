"""Screenshot pixels → CSS viewport px, labels, the registry, and interact's argument checks."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError
from shotbridge.host.interact import check_action, input_args
from shotbridge.host.shots import (
    ShotRegistry,
    image_to_viewport,
    label_target,
    viewport_to_image,
)
from shotbridge.wire.errors import CommandError
from shotbridge.wire.geometry import Point
from shotbridge.wire.interact import InteractArgs

URL = "http://127.0.0.1:8000/page.html"


def _shot(reg: ShotRegistry, **over: Any) -> Any:
    fields: dict[str, Any] = {
        "url": URL,
        "tab_id": 7,
        "width": 1280,
        "height": 720,
        "css_to_output_scale": 1280 / 1920,
        "device_pixel_ratio": 1.0,
        "origin": {"x": 0, "y": 0},
        "css_size": {"width": 1920, "height": 1080},
        "scroll": {"x": 0, "y": 300},
        "viewport": {"width": 1920, "height": 1080},
    }
    fields.update(over)
    return reg.add(**fields)


def test_downscaled_viewport_maps_back_exactly() -> None:
    shot = _shot(ShotRegistry())
    p = image_to_viewport(shot, 640, 360)
    assert (p.x, p.y) == pytest.approx((960, 540))
    assert viewport_to_image(shot, p) == pytest.approx((640, 360))


def test_dpr2_image_at_output_size() -> None:
    # DPR 2, 1280×800 CSS rendered at 1280 px wide: one image px per CSS px, whatever the DPR.
    shot = _shot(
        ShotRegistry(),
        width=1280,
        height=800,
        css_to_output_scale=1.0,
        device_pixel_ratio=2.0,
        css_size={"width": 1280, "height": 800},
    )
    assert image_to_viewport(shot, 140, 70) == Point(x=140, y=70)


def test_element_capture_origin_is_added() -> None:
    # A 200×60 element at (40, 300) captured at DPR 2 → a 400×120 image.
    shot = _shot(
        ShotRegistry(),
        width=400,
        height=120,
        css_to_output_scale=2.0,
        origin={"x": 40, "y": 300},
        css_size={"width": 200, "height": 60},
    )
    assert image_to_viewport(shot, 200, 60) == Point(x=140, y=330)


def test_full_page_tile_origin_can_lie_below_the_viewport() -> None:
    # Third tile of a page scrolled to 300: its top is at document y 3136 → viewport y 2836.
    shot = _shot(
        ShotRegistry(),
        width=1280,
        height=1568,
        css_to_output_scale=1.0,
        origin={"x": 0, "y": 3136 - 300},
        css_size={"width": 1280, "height": 1568},
        tile=2,
    )
    p = image_to_viewport(shot, 10, 100)
    assert (p.x, p.y) == (10, 2936)


@pytest.mark.parametrize("xy", [(-1, 5), (5, -0.5), (1281, 5), (5, 721)])
def test_points_outside_the_image_are_refused(xy: tuple[float, float]) -> None:
    shot = _shot(ShotRegistry())
    with pytest.raises(CommandError) as err:
        image_to_viewport(shot, *xy)
    assert err.value.code == "bad_request"
    assert "1280×720" in err.value.message


def test_label_centre_and_unknown_label() -> None:
    shot = _shot(
        ShotRegistry(),
        annotated=True,
        annotations=[
            {
                "label": 1,
                "selector": "#a",
                "bounds": {"x": 40, "y": 40, "width": 160, "height": 50},
            },
            {
                "label": 2,
                "selector": "#b",
                "bounds": {"x": 400, "y": 40, "width": 10, "height": 10},
            },
        ],
    )
    point, ann = label_target(shot, 1)
    assert (point.x, point.y) == (120, 65) and ann.selector == "#a"
    with pytest.raises(CommandError) as err:
        label_target(shot, 9)
    assert "no label 9" in err.value.message and "1, 2" in err.value.message


def test_registry_is_bounded_and_ids_monotonic() -> None:
    reg = ShotRegistry(keep=3)
    ids = [_shot(reg).id for _ in range(5)]
    assert ids == [1, 2, 3, 4, 5]
    assert len(reg) == 3
    assert reg.get(2) is None and reg.get(5) is not None
    assert reg.latest is not None and reg.latest.id == 5
    with pytest.raises(CommandError) as err:
        reg.for_point(1)
    assert err.value.code == "stale_screenshot" and "newest is 5" in err.value.message


def test_no_screenshot_yet() -> None:
    reg = ShotRegistry()
    with pytest.raises(CommandError) as err:
        reg.for_point(None)
    assert err.value.code == "stale_screenshot"
    with pytest.raises(CommandError):
        reg.for_label(None)


def test_labels_come_from_the_latest_annotated_screenshot() -> None:
    reg = ShotRegistry()
    annotated = _shot(
        reg,
        annotated=True,
        annotations=[
            {"label": 1, "selector": "#a", "bounds": {"x": 0, "y": 0, "width": 2, "height": 2}}
        ],
    )
    _shot(reg)  # a later plain screenshot does not replace the labels
    assert reg.for_label(None).id == annotated.id
    assert reg.for_point(None).id == annotated.id + 1
    with pytest.raises(CommandError) as err:
        reg.for_label(annotated.id + 1)
    assert "no labels" in err.value.message


def test_input_args_for_coordinates() -> None:
    reg = ShotRegistry()
    shot = _shot(reg)
    out, used = input_args(reg, InteractArgs(action="click", x=640, y=360))
    assert used is shot
    assert (out["x"], out["y"]) == pytest.approx((960, 540))
    assert out["from_scroll"] == {"x": 0, "y": 300}
    assert out["expect_url"] == URL
    assert "expect_selector" not in out


def test_input_args_for_a_label_carry_its_selector() -> None:
    reg = ShotRegistry()
    _shot(
        reg,
        annotated=True,
        annotations=[
            {"label": 3, "selector": "#go", "bounds": {"x": 10, "y": 20, "width": 30, "height": 40}}
        ],
    )
    out, _ = input_args(reg, InteractArgs(action="click", label=3, click_count=2))
    assert (out["x"], out["y"]) == (25, 40)
    assert out["expect_selector"] == "#go" and out["click_count"] == 2


def test_selector_needs_no_screenshot() -> None:
    out, used = input_args(ShotRegistry(), InteractArgs(action="click", selector="#go"))
    assert used is None and out["selector"] == "#go" and "expect_url" not in out


def test_scroll_to_is_passed_in_the_extension_shape() -> None:
    out, _ = input_args(ShotRegistry(), InteractArgs(action="scroll", to=1200))
    assert out["to"] == {"y": 1200}
    out, _ = input_args(ShotRegistry(), InteractArgs(action="scroll", to="bottom"))
    assert out["to"] == "bottom"


@pytest.mark.parametrize(
    "args",
    [
        {"action": "click", "x": 1},
        {"action": "click", "x": 1, "y": 2, "label": 3},
        {"action": "click", "label": 1, "selector": "#a"},
        {"action": "wiggle"},
        {"action": "click", "label": 0},
        {"action": "click", "selector": "#a", "click_count": 4},
    ],
)
def test_invalid_argument_shapes(args: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        InteractArgs.model_validate(args)


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        ({"action": "click"}, "needs x/y"),
        ({"action": "type", "selector": "#q"}, "needs text"),
        ({"action": "keypress"}, "needs key"),
        ({"action": "scroll"}, "delta_x/delta_y"),
        ({"action": "navigate"}, "needs url"),
        ({"action": "cdp"}, "needs method"),
    ],
)
def test_missing_parts_are_named(args: dict[str, Any], needle: str) -> None:
    with pytest.raises(CommandError) as err:
        check_action(InteractArgs.model_validate(args))
    assert needle in err.value.message


def test_type_without_target_is_allowed() -> None:
    check_action(InteractArgs(action="type", text="hi"))
    check_action(InteractArgs(action="navigate", navigation="back"))
