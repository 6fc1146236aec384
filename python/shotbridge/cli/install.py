"""``shotctl install`` / ``uninstall`` / ``extension-path``."""

from __future__ import annotations

import sys

import click

from shotbridge.cli import EXIT_FAILED
from shotbridge.errors import ShotbridgeError
from shotbridge.install import BROWSERS, Layout, extension_dir
from shotbridge.install import install as do_install
from shotbridge.install import uninstall as do_uninstall

_browser_option = click.option(
    "--browser",
    type=click.Choice([*BROWSERS, "all"]),
    default="all",
    show_default=True,
    help="Which browser to register with (all: every browser found for your user).",
)
_system_option = click.option(
    "--system", is_flag=True, help="For every user of this machine (needs root)."
)


@click.command()
@_browser_option
@_system_option
@click.option(
    "--env",
    "env_pairs",
    multiple=True,
    metavar="KEY=VALUE",
    help="Environment for the host, baked into its launcher (repeatable).",
)
def install(browser: str, system: bool, env_pairs: tuple[str, ...]) -> None:
    """Register the native-messaging host so the extension can reach shotbridge."""
    env: dict[str, str] = {}
    for pair in env_pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.isidentifier():
            raise click.BadParameter(f"{pair!r} is not KEY=VALUE", param_hint="--env")
        env[key] = value
    try:
        result = do_install(
            None if browser == "all" else [browser], layout=Layout(system=system), env=env
        )
    except PermissionError as exc:
        raise click.ClickException(f"{exc} (a --system install needs root: try sudo)") from exc
    click.echo(f"launcher: {result.launcher}")
    for name, path in result.manifests.items():
        click.echo(f"manifest ({name}): {path}")
    if result.guessed:
        click.echo("(no browser profile folder found: registered with every supported browser)")
    click.echo("\nNext: open chrome://extensions, turn on Developer mode, click “Load unpacked”")
    try:
        click.echo(f"and choose {extension_dir()}")
    except ShotbridgeError as exc:
        click.echo(f"and choose the extension folder — but: {exc}")
    click.echo("Then run `shotctl doctor` to check every link.")


@click.command()
@_browser_option
@_system_option
def uninstall(browser: str, system: bool) -> None:
    """Remove what `shotctl install` wrote."""
    try:
        removed = do_uninstall(
            None if browser == "all" else [browser], layout=Layout(system=system)
        )
    except PermissionError as exc:
        raise click.ClickException(f"{exc} (a --system uninstall needs root: try sudo)") from exc
    for path in removed:
        click.echo(f"removed {path}")
    if not removed:
        click.echo("nothing to remove")


@click.command("extension-path")
def extension_path() -> None:
    """Print the unpacked extension's folder (for “Load unpacked” in chrome://extensions)."""
    try:
        click.echo(str(extension_dir()))
    except ShotbridgeError as exc:
        click.echo(f"Error: {exc}", err=True)
        sys.exit(EXIT_FAILED)
