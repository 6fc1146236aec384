"""May this Python serve every user of the machine? The check behind ``shotctl install --system``.

A system-wide launcher runs this interpreter and this shotbridge for every user whose browser
loads the extension. If either lives in someone's home or belongs to a non-root user, that user
can change the code every other user's browser runs. So ``--system`` needs an interpreter and a
package that only root can write.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import stat
import sys
from collections.abc import Iterable
from pathlib import Path

import shotbridge

# People's accounts: root, and uids from 500 up (Linux UID_MIN is 1000; macOS users start at 501).
PEOPLE_UID_MIN = 500
HOME_ROOTS = (Path("/home"), Path("/Users"))


def home_dirs() -> set[Path]:
    """Home folders of people (root, regular users, the caller, whoever ran sudo)."""
    homes = {Path.home()}
    for entry in pwd.getpwall():
        if entry.pw_uid == 0 or entry.pw_uid >= PEOPLE_UID_MIN:
            homes.add(Path(entry.pw_dir))
    if sudo_user := os.environ.get("SUDO_USER"):
        with contextlib.suppress(KeyError):
            homes.add(Path(pwd.getpwnam(sudo_user).pw_dir))
    return {h.resolve() for h in homes if str(h) not in ("", "/")} | set(HOME_ROOTS)


def _problem(what: str, path: Path, homes: Iterable[Path]) -> str | None:
    path = path.resolve()
    for home in homes:
        if path.is_relative_to(home):
            return f"{what} {path} is inside the home folder {home}"
    for part in (path, *path.parents):
        try:
            st = os.stat(part)
        except OSError:
            continue
        if st.st_uid != 0:
            return f"{what} {part} belongs to uid {st.st_uid}, not root"
        if stat.S_IMODE(st.st_mode) & stat.S_IWOTH and not st.st_mode & stat.S_ISVTX:
            return f"{what} {part} is writable by every user"
    return None


def per_user_reason(
    prefix: Path | None = None,
    package: Path | None = None,
    homes: Iterable[Path] | None = None,
) -> str | None:
    """Why this interpreter (``sys.prefix``) or package is one user's, or None if root's alone."""
    homes = list(home_dirs() if homes is None else homes)
    prefix = prefix if prefix is not None else Path(sys.prefix)
    package = package if package is not None else Path(shotbridge.__file__).parent
    return _problem("the interpreter's prefix", prefix, homes) or _problem(
        "the shotbridge package", package, homes
    )


def refusal(reason: str) -> str:
    return (
        f"refusing a --system install: {reason}. A system-wide launcher would run code that one "
        "user can change in every user's browser. Install shotbridge into a root-owned Python "
        "outside any home folder (e.g. `sudo python3 -m venv /opt/shotbridge && sudo "
        "/opt/shotbridge/bin/pip install shotbridge`) and run `sudo /opt/shotbridge/bin/shotctl "
        "install --system`, or register for your user only with `shotctl install`."
    )
