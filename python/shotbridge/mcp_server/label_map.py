"""The annotated screenshot's map as a model reads it: one short line per label.

The full JSON (bounds to two decimals, selector, locator, tag, hint, text) costs ~85 tokens a
label; a model needs the number, what the control is, its name and state, and a selector only
where role and name do not say which element it is. ``map="full"`` still returns the JSON, and
the generators read the host's own records, so nothing they use is lost here.

Every string the page chose (title, names) is JSON-quoted: a name cannot start a line of its own.
"""

from __future__ import annotations

import json
from collections import Counter
from json.encoder import encode_basestring  # json.dumps(str, ensure_ascii=False), minus its setup
from typing import Any

NAME_MAX = 60
SELECTOR_MAX = 60
# Playwright locators that find an element by what a person sees: role and name are enough.
NAMED_LOCATORS = ("getByRole(", "getByLabel(", "getByTestId(", "getByText(", "getByPlaceholder(")


def quoted(text: str, limit: int = NAME_MAX) -> str:
    """Page text as a JSON string literal, cut to ``limit`` characters."""
    text = " ".join(str(text).split())
    return encode_basestring(text if len(text) <= limit else text[: limit - 1] + "…")


def compact_map(mapping: dict[str, Any]) -> str:
    """The header (page, image, counts) and a line per label of an annotated ``observe``."""
    labels = mapping.get("annotations", [])
    lines = [_header(mapping, len(labels)), *_label_lines(labels, mapping["image"])]
    if hidden := mapping.get("hidden"):
        lines.append(
            f'{len(hidden)} covered or hidden control(s) not labelled (map="full" lists them).'
        )
    lines += [str(n) for n in mapping.get("notes", [])]
    return "\n".join(lines)


def _header(mapping: dict[str, Any], shown: int) -> str:
    page, image = mapping["page"], mapping["image"]
    title = f" {quoted(page['title'])}" if page.get("title") else ""
    ready = "" if page.get("readyState") in (None, "complete") else f" ({page['readyState']})"
    masked = image.get("masked_regions", 0)
    shot = f"screenshot_id {image['screenshot_id']}, " if "screenshot_id" in image else ""
    total = mapping.get("total_found", shown)
    cut = f" of {total} found (raise max_annotations for more)" if total > shown else ""
    return (
        f"{page.get('url')}{title}{ready}\n"
        f"{image['width']}×{image['height']} JPEG, {shot}≈{image['estimated_tokens']} tokens, "
        f'{masked} masked region(s). {shown} labels{cut}: number role "name" state @x,y (image '
        'px); map="full" for bounds, selectors and locators.'
    )


def _label_lines(labels: list[dict[str, Any]], image: dict[str, Any]) -> list[str]:
    """A line per label; same-named controls (role and shown name) say which of them it is."""
    scale = image.get("css_to_image_scale") or 1.0
    keys = [(_role(a), _name(a)) for a in labels]
    same = Counter(k for k in keys if k[1])
    seen: Counter[tuple[str, str]] = Counter()
    lines = []
    for a, key in zip(labels, keys, strict=True):
        seen[key] += 1
        nth = f" #{seen[key]} of {same[key]}" if same[key] > 1 else ""
        lines.append(_line(a, scale, nth))
    return lines


def _role(a: dict[str, Any]) -> str:
    return str(a.get("role") or a.get("type") or a.get("tag") or "element")


def _name(a: dict[str, Any]) -> str:
    return str(a.get("name") or a.get("text") or "")


def _line(a: dict[str, Any], scale: float, nth: str) -> str:
    role, name = _role(a), _name(a)
    parts = [str(a["label"]), role]
    if name:
        parts.append(quoted(name))
    parts += _state_words(a.get("state") or {})
    b = a["bounds"]
    where = f"@{round(b['x'] * scale)},{round(b['y'] * scale)}"
    if not a.get("in_viewport", True):
        where += " off-screen"
    if a.get("frame"):
        where += " in a frame"
    parts.append(where + nth)
    if not name or not str(a.get("locator", "")).startswith(NAMED_LOCATORS):
        selector = str(a.get("selector", ""))
        if selector and len(selector) <= SELECTOR_MAX:
            parts.append(f"css={encode_basestring(selector)}")
    return " ".join(parts)


def _json_scalar(value: str | int | float) -> str:
    """A state's value as JSON: strings quoted as names are, numbers as JSON writes them."""
    return encode_basestring(value) if isinstance(value, str) else json.dumps(value)


def _state_words(state: dict[str, Any]) -> list[str]:
    """{"checked": true, "expanded": false, "disabled": true} -> checked, collapsed, disabled."""
    opposite = {"checked": "unchecked", "expanded": "collapsed", "selected": "", "pressed": ""}
    words = []
    for key, value in state.items():
        if value is True:
            words.append(key)
        elif value is False and opposite.get(key):
            words.append(opposite[key])
        elif isinstance(value, str | int | float) and not isinstance(value, bool):
            words.append(f"{key}={_json_scalar(value)}")
    return words
