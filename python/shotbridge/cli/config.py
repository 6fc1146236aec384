"""``shotctl config``: the settings only the user changes (see shotbridge.install.user_config)."""

from __future__ import annotations

import click

from shotbridge.install import user_config as host_config


@click.group()
def config() -> None:
    """Show or change what the host allows (read by the host on every request)."""


@config.command()
def show() -> None:
    """Print the settings in force and where they are stored."""
    path = host_config.config_path()
    current = host_config.load(path)
    click.echo(f"config file: {path}{'' if path.exists() else ' (not written yet: defaults)'}")
    click.echo(f"allow-cdp: {'on' if current.allow_cdp else 'off'}")


@config.command("allow-cdp")
@click.argument("state", type=click.Choice(["on", "off"]))
def allow_cdp(state: str) -> None:
    """Let bus clients run raw Chrome DevTools Protocol commands (on), or not (off, the default).

    \b
    Raw CDP can read cookies and run script in the page. With it on, the MCP server still needs
    `shotctl mcp --allow-cdp`, and every raw call is logged to host.log. Screenshots taken through
    it are masked like any other; snapshots, screencasts and PDFs are always refused.
    """
    path = host_config.config_path()
    current = host_config.load(path)
    current.allow_cdp = state == "on"
    host_config.save(current, path)
    click.echo(f"allow-cdp: {state} (written to {path}; takes effect on the next request)")
