"""``shotctl install`` / ``uninstall`` / ``extension-path``."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from shotbridge.cli import EXIT_BAD_INPUT, EXIT_FAILED
from shotbridge.install.register import (
    BROWSERS,
    REMOVE_EXTENSION_HINT,
    Layout,
    extension_dir,
    stop_hosts,
)
from shotbridge.install.register import install as do_install
from shotbridge.install.register import uninstall as do_uninstall
from shotbridge.wire.errors import ShotbridgeError
from shotbridge.wire.messages import EXTENSION_ID

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
_profile_option = click.option(
    "--user-data-dir",
    "user_data_dirs",
    multiple=True,
    type=click.Path(file_okay=False, path_type=Path),
    metavar="DIR",
    help="A browser started with --user-data-dir=DIR: register the host in that profile "
    "(repeatable). Without --browser, only these profiles are touched.",
)


@click.command()
@_browser_option
@_system_option
@_profile_option
@click.option(
    "--env",
    "env_pairs",
    multiple=True,
    metavar="KEY=VALUE",
    help="Environment for the host, baked into its launcher (repeatable).",
)
def install(
    browser: str, system: bool, user_data_dirs: tuple[Path, ...], env_pairs: tuple[str, ...]
) -> None:
    """Register the native-messaging host so the extension can reach shotbridge."""
    if system:  # the launcher would run this interpreter for every user of the machine
        from shotbridge.install import system_python

        if reason := system_python.per_user_reason():
            click.echo(f"shotctl install: {system_python.refusal(reason)}", err=True)
            sys.exit(EXIT_BAD_INPUT)
    env: dict[str, str] = {}
    for pair in env_pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.isidentifier():
            raise click.BadParameter(f"{pair!r} is not KEY=VALUE", param_hint="--env")
        env[key] = value
    try:
        result = do_install(
            _browsers(browser, user_data_dirs),
            layout=Layout(system=system),
            env=env,
            user_data_dirs=user_data_dirs,
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
        folder = extension_dir()
        click.echo(f"and choose {folder}")
        click.echo(f"(Chromium can also load it at start: chromium --load-extension={folder})")
    except ShotbridgeError as exc:
        click.echo(f"and choose the extension folder — but: {exc}")
    doctor = "shotctl doctor" + "".join(f" --user-data-dir {d}" for d in user_data_dirs)
    click.echo(f"Then run `{doctor}` to check every link.")


def _browsers(browser: str, user_data_dirs: tuple[Path, ...]) -> list[str] | None:
    """``all`` means every browser found, unless only --user-data-dir profiles were named."""
    if browser != "all":
        return [browser]
    return [] if user_data_dirs else None


@click.command()
@_browser_option
@_system_option
@_profile_option
def uninstall(browser: str, system: bool, user_data_dirs: tuple[Path, ...]) -> None:
    """Stop running hosts and remove what `shotctl install` wrote."""
    whole = browser == "all" and not user_data_dirs
    stopped = stop_hosts() if whole and not system else []
    for pid in stopped:
        click.echo(f"stopped host {pid}")
    try:
        removed = do_uninstall(
            None if browser == "all" else [browser],
            layout=Layout(system=system),
            user_data_dirs=user_data_dirs or None,
        )
    except PermissionError as exc:
        raise click.ClickException(f"{exc} (a --system uninstall needs root: try sudo)") from exc
    for path in removed:
        click.echo(f"removed {path}")
    if not removed:
        click.echo("nothing to remove")
    click.echo(REMOVE_EXTENSION_HINT.format(id=EXTENSION_ID))


@click.command("extension-path")
def extension_path() -> None:
    """Print the unpacked extension's folder (for “Load unpacked” in chrome://extensions)."""
    try:
        click.echo(str(extension_dir()))
    except ShotbridgeError as exc:
        click.echo(f"Error: {exc}", err=True)
        sys.exit(EXIT_FAILED)
