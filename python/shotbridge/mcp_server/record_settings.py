"""Validation of the recording settings of ``configure(action="capture")``: ``auto_screenshot``
(which events make the host take a screenshot) and ``network`` (record fetch/XHR traffic)."""

from __future__ import annotations

from typing import Any

from shotbridge.wire.recording import AutoScreenshot

# The host's recorder owns these settings; the server checks against the same fields.
AUTO_FIELDS = tuple(AutoScreenshot.model_fields)
RECORDING_NAMES = ("auto_screenshot", "network")


def check_auto_screenshot(value: Any) -> dict[str, bool]:
    """Validate ``auto_screenshot``; raises ValueError with the valid fields."""
    if not isinstance(value, dict) or not value:
        raise ValueError(
            "auto_screenshot must be an object of booleans, e.g. "
            '{"on_navigation": true, "on_error": true, "on_action": false}.'
        )
    unknown = sorted(set(value) - set(AUTO_FIELDS))
    if unknown:
        raise ValueError(
            f"Unknown auto_screenshot field(s): {', '.join(unknown)}. "
            f"Valid fields: {', '.join(AUTO_FIELDS)}."
        )
    bad = [k for k, v in value.items() if not isinstance(v, bool)]
    if bad:
        raise ValueError(f"auto_screenshot.{bad[0]} must be true or false.")
    return dict(value)


def check_network(value: Any) -> bool:
    """Validate ``network``; raises ValueError."""
    if not isinstance(value, bool):
        raise ValueError("network must be true or false.")
    return value
