"""Options shared by the subcommands that reach a browser (capture, mcp)."""

from __future__ import annotations

import click

browser_option = click.option(
    "--browser",
    type=click.Choice(["auto", "connected", "headless"]),
    default="auto",
    show_default=True,
    help="Your connected browser, a headless Chromium of our own, or auto: yours when connected.",
)


def parse_window(value: str) -> tuple[int, int]:
    """``WIDTHxHEIGHT`` (or ``W,H``) for the headless window, each side 200-8192."""
    try:
        w, h = (int(v) for v in value.lower().replace(",", "x").split("x"))
    except ValueError:
        raise click.BadParameter("expected WIDTHxHEIGHT", param_hint="--window-size") from None
    if not (200 <= w <= 8192 and 200 <= h <= 8192):
        raise click.BadParameter("each side must be 200-8192", param_hint="--window-size")
    return w, h
