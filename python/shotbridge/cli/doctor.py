"""``shotctl doctor``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from shotbridge.cli import EXIT_FAILED, EXIT_OK


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the checks as JSON.")
@click.option(
    "--user-data-dir",
    "user_data_dirs",
    multiple=True,
    type=click.Path(file_okay=False, path_type=Path),
    metavar="DIR",
    help="Also check the browser profile folder DIR (a browser started with "
    "--user-data-dir=DIR); repeatable. Registered and running profiles are found anyway.",
)
def doctor(as_json: bool, user_data_dirs: tuple[Path, ...]) -> None:
    """Check every link from the browser to shotbridge, and say how to mend what is broken.

    Lists every browser profile found with the shotbridge extension and whether that browser
    can start the host, and every running host with its profile id and extension version.
    """
    from shotbridge.install.doctor import healthy, render, run_checks

    checks = run_checks(user_data_dirs=list(user_data_dirs))
    if as_json:
        payload = {"ok": healthy(checks), "checks": [c.model_dump(mode="json") for c in checks]}
        click.echo(json.dumps(payload, indent=2))
    else:
        click.echo(render(checks))
    sys.exit(EXIT_OK if healthy(checks) else EXIT_FAILED)
