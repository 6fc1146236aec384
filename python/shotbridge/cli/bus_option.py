"""``--bus``: reach the browser through one given socket (a forward, a container's mount)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TypeVar

import click

from shotbridge.transport.paths import BUS_ENV

F = TypeVar("F", bound=Callable[..., Any])


def _set_bus(_ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    # Through the environment, like --host: every later connection (the MCP server reconnects)
    # sees the same choice.
    if value:
        os.environ[BUS_ENV] = value


def bus_option(func: F) -> F:
    return click.option(
        "--bus",
        metavar="PATH",
        expose_value=False,
        callback=_set_bus,
        help="The bus socket to use, and no other: a forwarded or mounted socket, or a folder "
        "of them (a mounted runtime dir). Default: $SHOTBRIDGE_BUS, else this machine's "
        "hosts, then `shotctl remote ssh`'s forward.",
    )(func)
