"""The user's own settings for the host, which only the user changes (``shotctl config``).

Things a bus client must not be able to grant itself live here, not in request arguments: today
that is raw CDP (``allow_cdp``). The host re-reads the file on every request that needs it, so
``shotctl config allow-cdp off`` takes effect at once, without restarting the browser.

Where: ``$SHOTBRIDGE_CONFIG_DIR/config.json``, else ``$XDG_CONFIG_HOME/shotbridge/config.json``,
else ``~/.config/shotbridge/config.json``; the folder is 0700 and the file 0600. A file someone
else owns or can write, or one that does not parse, counts as the defaults (everything off): a
setting that widens access must never come from a file the user did not write.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import stat
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

log = logging.getLogger(__name__)

DIR_ENV = "SHOTBRIDGE_CONFIG_DIR"
FILE_NAME = "config.json"
ENABLE_CDP_COMMAND = "shotctl config allow-cdp on"


class HostConfig(BaseModel):
    """What the user allowed. Every field defaults to the safe choice."""

    model_config = ConfigDict(extra="ignore")

    # Raw Chrome DevTools Protocol commands from bus clients (MCP `interact action=cdp`, which
    # also needs `shotctl mcp --allow-cdp`). CDP can read cookies and run script in the page.
    allow_cdp: bool = False


def config_dir() -> Path:
    if explicit := os.environ.get(DIR_ENV):
        return Path(explicit)
    if xdg := os.environ.get("XDG_CONFIG_HOME"):
        return Path(xdg) / "shotbridge"
    return Path.home() / ".config" / "shotbridge"


def config_path() -> Path:
    return config_dir() / FILE_NAME


def load(path: Path | None = None) -> HostConfig:
    """The settings in force now; the defaults when the file is missing, foreign or broken."""
    path = path or config_path()
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return HostConfig()
    except OSError as exc:
        log.warning("config %s unreadable (%s): using the defaults", path, exc)
        return HostConfig()
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if st.st_uid != os.getuid() or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            log.warning(
                "config %s is not yours alone (uid %d, mode %o): ignoring it; "
                "rewrite it with `shotctl config`",
                path,
                st.st_uid,
                stat.S_IMODE(st.st_mode),
            )
            return HostConfig()
        try:
            return HostConfig.model_validate(json.loads(fh.read()))
        except (ValueError, ValidationError) as exc:
            log.warning("config %s is invalid (%s): using the defaults", path, exc)
            return HostConfig()


def save(config: HostConfig, path: Path | None = None) -> Path:
    """Write ``config`` atomically: folder 0700, file 0600."""
    path = path or config_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)  # the mode applies if we make it
    tmp = path.with_name(f".{path.name}.tmp")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(config.model_dump_json(indent=2) + "\n")
    os.replace(tmp, path)
    return path
