"""The ``shotctl`` command. Each subcommand lives in a module of its own beside this one."""

from __future__ import annotations

import importlib

import click

from shotbridge import __version__

# name -> "module:attribute"; imported lazily so `shotctl host` starts fast and a broken
# optional piece cannot stop the others from working.
_COMMANDS: dict[str, str] = {
    "shrink": "shotbridge.cli.shrink:shrink",
    "capture": "shotbridge.cli.capture:capture",
    "host": "shotbridge.cli.host:host",
    "install": "shotbridge.cli.install:install",
    "uninstall": "shotbridge.cli.install:uninstall",
    "extension-path": "shotbridge.cli.install:extension_path",
    "doctor": "shotbridge.cli.doctor:doctor",
    "mcp": "shotbridge.cli.mcp:mcp",
    "config": "shotbridge.cli.config:config",
    "diff": "shotbridge.cli.diff:diff",
    "remote": "shotbridge.cli.remote:remote",
}


class _OneLineUsageError(click.UsageError):
    """A usage error as one line on stderr (exit 2): no usage banner, never a traceback."""

    def show(self, file: object = None) -> None:
        prog = self.ctx.command_path if self.ctx else "shotctl"
        click.echo(f"{prog}: error: {self.format_message()}", err=True)


def _surrogate_free(args: list[str]) -> None:
    # Bytes that are not UTF-8 reach argv as lone surrogates; nothing downstream can encode them.
    for arg in args:
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            shown = arg.encode("utf-8", "backslashreplace").decode()
            raise _OneLineUsageError(f"argument {shown!r} is not valid UTF-8") from None


class _LazyGroup(click.Group):
    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        _surrogate_free(args)
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except _OneLineUsageError:
            raise
        except click.UsageError as exc:  # includes BadParameter from any subcommand
            raise _OneLineUsageError(exc.format_message(), exc.ctx) from None

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(_COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = _COMMANDS.get(cmd_name)
        if target is None:
            return None
        module, attr = target.split(":")
        return getattr(importlib.import_module(module), attr)


@click.group(cls=_LazyGroup)
@click.version_option(__version__, prog_name="shotctl")
def main() -> None:
    """shotbridge: screenshots of your browser, small and labelled, for AI assistants."""


# Exit codes shared by the subcommands.
EXIT_OK = 0
EXIT_FAILED = 1  # the capture or operation failed
EXIT_BAD_INPUT = 2  # click's own code for usage errors, reused for bad input
EXIT_NO_BROWSER = 3  # no browser/extension connected and none could be started
