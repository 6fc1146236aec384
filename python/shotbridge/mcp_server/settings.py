"""Capture settings the model changes with ``configure``; they last as long as the process."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from shotbridge.mcp_server.record_settings import check_auto_screenshot, check_network
from shotbridge.wire.recording import AutoScreenshot

ScreenshotMode = Literal["off", "on", "errors_only"]
SCREENSHOT_MODES: tuple[str, ...] = get_args(ScreenshotMode)
SETTING_NAMES = (
    "screenshot_mode",
    "mask_selectors",
    "auto_screenshot",
    "network",
    "skip_unchanged",
)

SENSITIVE_WARNING = (
    "Screenshots may contain sensitive page content (passwords, PII). "
    "Ensure your MCP client handles image data appropriately."
)

# Bounds on mask_selectors: they travel with every capture, so keep them small.
MAX_MASK_SELECTORS = 50
MAX_SELECTOR_LENGTH = 500


class SettingsError(ValueError):
    """An unknown setting name or value; the message lists the valid ones."""


@dataclass
class CaptureSettings:
    """``screenshot_mode`` (default off) and the extra selectors to mask in every image."""

    screenshot_mode: ScreenshotMode = "off"
    mask_selectors: list[str] = field(default_factory=list)
    # Recording (kept by the host; see mcp_server/session.py): which events make the host take a
    # screenshot, and whether fetch/XHR traffic is recorded.
    auto_screenshot: AutoScreenshot = field(default_factory=AutoScreenshot)
    network: bool = False
    # A capture whose pixels match the latest image the model was given comes back as text only
    # ("Unchanged since screenshot #N"): the same image again costs the model's context for nothing.
    skip_unchanged: bool = True
    # The privacy warning is shown once per server process, the first time screenshots are enabled.
    warned: bool = False

    def apply(self, settings: dict[str, Any]) -> str:
        """Validate everything first, then apply; returns the confirmation the model reads."""
        unknown = sorted(set(settings) - set(SETTING_NAMES))
        if unknown:
            raise SettingsError(
                f"Unknown capture setting(s): {', '.join(unknown)}. "
                f"Valid settings: {', '.join(SETTING_NAMES)}."
            )
        if not settings:
            raise SettingsError(
                f"settings is empty. Valid settings: {', '.join(SETTING_NAMES)} "
                f"(screenshot_mode: {' | '.join(SCREENSHOT_MODES)}; mask_selectors: list of CSS; "
                "auto_screenshot: {on_navigation, on_error, on_action}; network: bool; "
                "skip_unchanged: bool)."
            )
        mode = settings.get("screenshot_mode", self.screenshot_mode)
        if mode not in SCREENSHOT_MODES:
            raise SettingsError(
                f"Invalid screenshot_mode {mode!r}. Valid values: {', '.join(SCREENSHOT_MODES)}."
            )
        selectors = self.mask_selectors
        if "mask_selectors" in settings:
            selectors = _check_selectors(settings["mask_selectors"])
        try:
            auto = (
                self.auto_screenshot.model_copy(
                    update=check_auto_screenshot(settings["auto_screenshot"])
                )
                if "auto_screenshot" in settings
                else self.auto_screenshot
            )
            network = check_network(settings.get("network", self.network))
            skip_unchanged = _check_bool("skip_unchanged", settings, self.skip_unchanged)
        except ValueError as exc:
            raise SettingsError(str(exc)) from None

        changed: list[str] = []
        if "screenshot_mode" in settings:
            self.screenshot_mode = mode
            changed.append(f"screenshot_mode={mode}")
        if "mask_selectors" in settings:
            self.mask_selectors = selectors
            changed.append(f"mask_selectors={selectors!r}")
        if "auto_screenshot" in settings:
            self.auto_screenshot = auto
            changed.append(f"auto_screenshot={_flags(auto)}")
        if "network" in settings:
            self.network = network
            changed.append(f"network={'on' if network else 'off'}")
        if "skip_unchanged" in settings:
            self.skip_unchanged = skip_unchanged
            changed.append(f"skip_unchanged={'true' if skip_unchanged else 'false'}")
        message = "Capture settings updated: " + ", ".join(changed)
        if mode != "off" and "screenshot_mode" in settings and not self.warned:
            self.warned = True
            message += "\n" + SENSITIVE_WARNING
        return message

    def describe(self) -> str:
        return (
            f"Capture settings: screenshot_mode={self.screenshot_mode}, "
            f"mask_selectors={self.mask_selectors!r} (password fields are always masked), "
            f"auto_screenshot={_flags(self.auto_screenshot)}, "
            f"network={'on' if self.network else 'off'}"
            # Shown once turned off (the default, on, keeps the established sentence).
            + ("" if self.skip_unchanged else ", skip_unchanged=false")
        )

    def auto_screenshot_for(self, what: str) -> bool:
        """Whether an ``observe(what)`` response gets a screenshot appended."""
        if self.screenshot_mode == "on":
            return True
        return self.screenshot_mode == "errors_only" and what == "errors"


def _check_bool(name: str, settings: dict[str, Any], current: bool) -> bool:
    value = settings.get(name, current)
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be true or false.")
    return value


def _flags(auto: AutoScreenshot) -> str:
    flags = auto.model_dump().items()
    return "{" + ", ".join(f"{k}: {'true' if v else 'false'}" for k, v in flags) + "}"


def _check_selectors(value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(s, str) and s.strip() for s in value):
        raise SettingsError(
            'mask_selectors must be a list of CSS selectors, e.g. [".ssn", "#card"].'
        )
    if len(value) > MAX_MASK_SELECTORS:
        raise SettingsError(f"mask_selectors takes at most {MAX_MASK_SELECTORS} selectors.")
    too_long = [s for s in value if len(s) > MAX_SELECTOR_LENGTH]
    if too_long:
        raise SettingsError(
            f"mask_selectors: a selector is longer than {MAX_SELECTOR_LENGTH} chars."
        )
    return [s.strip() for s in value]
