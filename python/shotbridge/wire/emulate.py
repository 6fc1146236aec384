"""Device emulation of a tab: what a client asks for, what the extension applies and answers.

A client names a preset and/or single settings (``EmulateRequest``); the host expands the preset
(``PRESETS``) into the concrete settings the extension applies through CDP
(``wire.extension.EmulateArgs``), and the extension answers with the tab's whole emulation now and
what the page reports (``wire.extension.EmulateReply``). Settings left out keep their value;
``reset`` drops them all.
"""

from __future__ import annotations

from typing import Literal

from shotbridge.wire.model import Model

ColorScheme = Literal["light", "dark", "no-preference"]
ReducedMotion = Literal["reduce", "no-preference"]


class Device(Model):
    """A named device: Playwright's descriptor of it, minus the browser it defaults to."""

    width: int
    height: int
    device_scale_factor: float
    mobile: bool
    touch: bool
    user_agent: str


# Copied from Playwright 1.65.1's device descriptors (playwright-core's
# deviceDescriptorsSource.json, as `devices[...]` exposes them), so a replay with
# `devices[name]` sees the page as the session did.
PRESETS: dict[str, Device] = {
    "iPhone 15": Device(
        width=393,
        height=659,
        device_scale_factor=3,
        mobile=True,
        touch=True,
        user_agent="Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 "
        "(KHTML, like Gecko) Version/27.2 Mobile/15E148 Safari/604.1",
    ),
    "iPhone SE": Device(
        width=320,
        height=568,
        device_scale_factor=2,
        mobile=True,
        touch=True,
        user_agent="Mozilla/5.0 (iPhone; CPU iPhone OS 10_3_1 like Mac OS X) AppleWebKit/603.1.30 "
        "(KHTML, like Gecko) Version/27.2 Mobile/14E304 Safari/602.1",
    ),
    "Pixel 7": Device(
        width=412,
        height=839,
        device_scale_factor=2.625,
        mobile=True,
        touch=True,
        user_agent="Mozilla/5.0 (Linux; Android 14; Pixel 7) AppleWebKit/537.36 "
        "(KHTML, like Gecko) Chrome/159.0.8154.6 Mobile Safari/537.36",
    ),
    "Galaxy S9+": Device(
        width=320,
        height=658,
        device_scale_factor=4.5,
        mobile=True,
        touch=True,
        user_agent="Mozilla/5.0 (Linux; Android 8.0.0; SM-G965U Build/R16NW) AppleWebKit/537.36 "
        "(KHTML, like Gecko) Chrome/159.0.8154.6 Mobile Safari/537.36",
    ),
    "iPad Mini": Device(
        width=768,
        height=1024,
        device_scale_factor=2,
        mobile=True,
        touch=True,
        user_agent="Mozilla/5.0 (iPad; CPU OS 12_2 like Mac OS X) AppleWebKit/605.1.15 "
        "(KHTML, like Gecko) Version/27.2 Mobile/15E148 Safari/604.1",
    ),
    "iPad Pro 11": Device(
        width=834,
        height=1194,
        device_scale_factor=2,
        mobile=True,
        touch=True,
        user_agent="Mozilla/5.0 (iPad; CPU OS 12_2 like Mac OS X) AppleWebKit/605.1.15 "
        "(KHTML, like Gecko) Version/27.2 Mobile/15E148 Safari/604.1",
    ),
    "Galaxy Tab S4": Device(
        width=712,
        height=1138,
        device_scale_factor=2.25,
        mobile=True,
        touch=True,
        user_agent="Mozilla/5.0 (Linux; Android 8.1.0; SM-T837A) AppleWebKit/537.36 "
        "(KHTML, like Gecko) Chrome/159.0.8154.6 Safari/537.36",
    ),
}

MIN_SIZE, MAX_SIZE = 100, 4000
MAX_SCALE = 5.0


class Emulation(Model):
    """A tab's emulation: only the settings in force (None: the browser's own)."""

    preset: str | None = None
    width: int | None = None
    height: int | None = None
    device_scale_factor: float | None = None
    mobile: bool | None = None
    touch: bool | None = None
    user_agent: str | None = None
    color_scheme: ColorScheme | None = None
    reduced_motion: ReducedMotion | None = None

    @property
    def empty(self) -> bool:
        return not self.model_dump(exclude_none=True)


class PageMedia(Model):
    """What the page itself reports under the emulation (its own window and media queries)."""

    width: float
    height: float
    device_pixel_ratio: float
    dark: bool
    reduced_motion: bool
    touch_points: int


class EmulateRequest(Model):
    """The bus command ``emulate``: a preset and/or single settings, or ``reset``."""

    tab_id: int | None = None
    preset: str | None = None
    width: int | None = None
    height: int | None = None
    device_scale_factor: float | None = None
    mobile: bool | None = None
    touch: bool | None = None
    color_scheme: str | None = None
    reduced_motion: str | None = None
    reset: bool = False


def preset_named(name: str) -> tuple[str, Device] | None:
    """The preset called ``name`` (case and spaces do not matter), or None."""
    key = "".join(name.lower().split())
    return next(((n, d) for n, d in PRESETS.items() if "".join(n.lower().split()) == key), None)
