"""``shotctl host``: run by the browser through the native-messaging manifest, not by hand."""

from __future__ import annotations

import sys

import click


@click.command(context_settings={"ignore_unknown_options": True})
@click.argument("argv", nargs=-1, type=click.UNPROCESSED)
def host(argv: tuple[str, ...]) -> None:
    """Native-messaging host for the shotbridge extension (started by the browser).

    The browser passes the caller origin (chrome-extension://<id>/) and, on some platforms,
    --parent-window=...; extra arguments are ignored. stdin/stdout carry Chrome's frames only.
    """
    from shotbridge.host.main import main  # lazy: keeps `shotctl --help` fast

    sys.exit(main(argv))
