"""README's "Use it with your own Chrome", followed word for word in a headed Chromium.

Every ```sh block of that section runs, line by line, in one shell of a fresh user session (its
own HOME and XDG_RUNTIME_DIR, an Xvfb display). Only README's variables are set to this
machine's: ``CHROMIUM=`` becomes a wrapper that adds the flags CI needs (--no-sandbox as root, no
background networking), ``PAGE=`` a page the test serves.
Like a person, the test waits for the browser window to connect after starting it. Then it
captures through `shotctl capture --browser connected` (README's command) and `shotctl mcp` with
an IDE's minimal environment.
"""

from __future__ import annotations

import contextlib
import re
import shlex
import stat
import subprocess
import uuid
from pathlib import Path

from shotbridge.client.browser import BASE_FLAGS, find_chrome

from tests.e2e.headed import Desktop, end_group, images_of, mcp_call, text_of

README = Path(__file__).resolve().parents[2] / "README.md"
HEADING = "## Use it with your own Chrome"


def readme_commands(text: str) -> list[str]:
    """The command lines of the section's ```sh blocks, in order."""
    found = re.search(rf"^{re.escape(HEADING)}[ \t]*$", text, re.M)
    assert found, f"README.md has no {HEADING!r} section"
    end = text.find("\n## ", found.end())
    section = text[found.end() : end if end != -1 else None]
    lines: list[str] = []
    for block in re.findall(r"^[ \t]*```sh\n(.*?)^[ \t]*```", section, re.S | re.M):
        for line in block.splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                lines.append(line)
    return lines


class Shell:
    """One bash, fed one line at a time; each line's output and exit status come back."""

    def __init__(self, env: dict[str, str], cwd: Path) -> None:
        self.proc = subprocess.Popen(
            ["bash", "--norc", "--noprofile"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
            cwd=cwd,
            start_new_session=True,  # the browser it starts shares this group: killed at close()
        )

    def run(self, line: str) -> tuple[int, str]:
        assert self.proc.stdin and self.proc.stdout
        marker = f"__done_{uuid.uuid4().hex}__"
        self.proc.stdin.write(f"{line}\necho {marker}$?\n")
        self.proc.stdin.flush()
        out: list[str] = []
        for got in self.proc.stdout:
            if got.startswith(marker):
                return int(got[len(marker) :]), "".join(out)
            out.append(got)
        raise RuntimeError(f"the shell ended during {line!r}: {''.join(out)}")

    def close(self) -> None:
        end_group(self.proc.pid)  # bash and the browser it started share this group
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)


def chromium_wrapper(folder: Path) -> Path:
    """What `CHROMIUM=` names in the test: this machine's Chromium plus the flags CI needs."""
    path = folder / "chromium-ci"
    flags = " ".join(shlex.quote(f) for f in (*BASE_FLAGS, "--window-size=1280,800"))
    log = shlex.quote(str(folder / "chromium.log"))
    path.write_text(
        f'#!/bin/sh\nexec {shlex.quote(str(find_chrome()))} {flags} "$@" >>{log} 2>&1\n'
    )
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_readme_own_chrome_word_for_word(desktop: Desktop, pages_url: str) -> None:
    commands = readme_commands(README.read_text())
    ours = {"CHROMIUM": None, "PAGE": f"{pages_url}/buttons.html"}
    assert {c.partition("=")[0] for c in commands} >= set(ours), commands
    wrapper = chromium_wrapper(desktop.root)
    work = desktop.root / "work"
    work.mkdir()
    shell = Shell(desktop.env(), work)
    try:
        for line in commands:
            if line.startswith("CHROMIUM="):
                line = f"CHROMIUM={shlex.quote(str(wrapper))}"
            elif line.startswith("PAGE="):
                line = f"PAGE={shlex.quote(ours['PAGE'] or '')}"
            rc, out = shell.run(line)
            assert rc == 0, f"{line!r} exited {rc}:\n{out}"
            if line.endswith("&"):
                desktop.wait_hosts(1)  # a person waits for the window to connect
        assert (work / "shot.jpg").read_bytes()[:2] == b"\xff\xd8"
        assert "/buttons.html" in out  # capture prints the URL it captured
        [result] = mcp_call(
            desktop.minimal_env(), [("capture_screenshot", {})], "--browser", "connected"
        )
        assert not result.is_error, text_of(result)
        assert images_of(result)
        assert "headless" not in text_of(result)
    finally:
        shell.close()
