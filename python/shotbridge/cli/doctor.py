"""``shotctl doctor``."""

from __future__ import annotations

import json
import sys

import click

from shotbridge.cli import EXIT_FAILED, EXIT_OK


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the checks as JSON.")
def doctor(as_json: bool) -> None:
    """Check every link from the browser to shotbridge, and say how to mend what is broken."""
    from shotbridge.doctor import healthy, render, run_checks

    checks = run_checks()
    if as_json:
        payload = {"ok": healthy(checks), "checks": [c.model_dump(mode="json") for c in checks]}
        click.echo(json.dumps(payload, indent=2))
    else:
        click.echo(render(checks))
    sys.exit(EXIT_OK if healthy(checks) else EXIT_FAILED)
