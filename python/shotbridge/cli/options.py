"""Options shared by the subcommands that reach a browser (capture, mcp)."""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


class FiniteFloatRange(click.FloatRange):
    """click.FloatRange that also refuses nan (which compares false with both bounds)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


_browser = click.option(
    "--browser",
    type=click.Choice(["auto", "connected", "headless"]),
    default="auto",
    show_default=True,
    help="Your connected browser, a headless Chromium of our own, or auto: yours when one is "
    "connected at that moment.",
)


def _set_host(_ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    # Through the environment, so every way of reaching a browser (connect, the MCP server's
    # re-decisions) sees the same choice.
    if value:
        os.environ["SHOTBRIDGE_HOST"] = value


_host = click.option(
    "--host",
    metavar="ID",
    expose_value=False,
    callback=_set_host,
    help="Which of your connected browsers: a profile id (or its first 8+ characters) or a "
    "host pid, as `shotctl doctor` lists them. Default: $SHOTBRIDGE_HOST, else the most "
    "recently active.",
)


def browser_option(func: F) -> F:
    """``--browser`` and ``--host``: which browser a command reaches."""
    return _browser(_host(func))


def parse_window(value: str) -> tuple[int, int]:
    """``WIDTHxHEIGHT`` (or ``W,H``) for the headless window, each side 200-8192."""
    try:
        w, h = (int(v) for v in value.lower().replace(",", "x").split("x"))
    except ValueError:
        raise click.BadParameter("expected WIDTHxHEIGHT", param_hint="--window-size") from None
    if not (200 <= w <= 8192 and 200 <= h <= 8192):
        raise click.BadParameter("each side must be 200-8192", param_hint="--window-size")
    return w, h
