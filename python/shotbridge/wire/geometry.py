"""Geometry, everywhere: CSS pixels relative to the top-left of the *viewport*.

Rectangles from the page are what ``getBoundingClientRect`` gives. A capture reports ``origin``,
the viewport-relative CSS position of the image's top-left corner, and ``css_size``, the CSS size
the image covers; a rectangle's position in the image is therefore ``rect - origin`` in CSS px,
times ``image_px / css_size`` in image px.
"""

from __future__ import annotations

from shotbridge.wire.model import Model


class Rect(Model):
    x: float
    y: float
    width: float
    height: float


class Size(Model):
    width: float
    height: float


class Point(Model):
    x: float
    y: float
