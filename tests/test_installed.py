"""The wheel as a user installs it: a fresh venv outside the checkout, no build tools on PATH.

The wheel is `make dist`'s (abi3, manylinux_2_28, built by scripts/dist.py; reused from dist/
when newer than every source). pip installs it with its dependencies from PyPI into a temporary
venv; every command then runs that venv's ``shotctl`` from a folder outside the checkout, with
PYTHONPATH unset and a PATH without cargo, rustc, cmake, nasm or a C compiler, so nothing can
come from the checkout or be compiled on the fly. Real headless Chromium, real extension, real
host, real bus, real MCP client over stdio.
"""

from __future__ import annotations

import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import pytest
from mcp import StdioServerParameters
from mcp.types import ImageContent, TextContent
from PIL import Image

from tests.mcp_stdio import McpSession

REPO = Path(__file__).resolve().parents[1]
# A build that needs any of these cannot have come from the wheel.
TOOLCHAIN = ("cargo", "rustc", "rustup", "cmake", "nasm", "cc", "gcc", "c++", "clang", "zig")
_TOOL_RE = re.compile(r"(cargo|rust|cmake|nasm|yasm|gcc|g\+\+|clang|zig|maturin)|^(cc|c\+\+|ld)$")
# Everything needs a real browser, hence the time allowed (the wheel build comes first).
pytestmark = [pytest.mark.browser, pytest.mark.timeout(900)]


@dataclass(frozen=True)
class Installed:
    venv: Path
    home: Path  # a HOME of its own: nothing of the developer's config is read or written
    work: Path  # cwd for every command: outside the checkout
    path: str  # PATH: the venv's bin, then system tools minus any build toolchain

    @property
    def shotctl(self) -> str:
        return str(self.venv / "bin" / "shotctl")

    def env(self) -> dict[str, str]:
        keep = ("LANG", "LC_ALL", "TERM", "USER", "LOGNAME", "SHELL", "TMPDIR")
        return {
            **{k: os.environ[k] for k in keep if k in os.environ},
            "HOME": str(self.home),
            "PATH": self.path,
        }

    def run(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [self.shotctl, *args],
            cwd=self.work,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=timeout,
        )


def toolless_bin(dest: Path) -> Path:
    """A folder of links to the system's commands, minus every compiler and build tool."""
    dest.mkdir()
    for folder in ("/usr/local/bin", "/usr/bin", "/bin"):
        if not Path(folder).is_dir():
            continue
        for tool in Path(folder).iterdir():
            link = dest / tool.name
            if not _TOOL_RE.search(tool.name) and not link.exists() and not link.is_symlink():
                link.symlink_to(tool)
    return dest


@pytest.fixture(scope="module")
def installed(built_wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Installed:
    root = tmp_path_factory.mktemp("installed")
    assert REPO not in root.resolve().parents, "the venv must live outside the checkout"
    venv = root / "venv"
    subprocess.run([sys._base_executable, "-m", "venv", str(venv)], check=True)
    start = time.monotonic()
    subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(built_wheel)],
        check=True,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    print(f"\npip install {built_wheel.name}: {time.monotonic() - start:.1f} s", file=sys.stderr)
    (root / "home").mkdir()
    (root / "work").mkdir()
    path = os.pathsep.join([str(venv / "bin"), str(toolless_bin(root / "bin"))])
    return Installed(venv=venv, home=root / "home", work=root / "work", path=path)


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def page_url() -> Iterator[str]:
    """tests/pages/mcp on 127.0.0.1, for the MCP server's browser to open."""
    handler = partial(_Quiet, directory=str(REPO / "tests/pages"))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/mcp/labels.html"
    server.shutdown()
    server.server_close()


def test_no_toolchain_and_no_checkout_in_reach(installed: Installed) -> None:
    for tool in TOOLCHAIN:
        assert shutil.which(tool, path=installed.path) is None, tool
    probe = "import shotbridge, shotbridge._core, sys; print(shotbridge.__file__); print(sys.path)"
    out = subprocess.run(
        [str(installed.venv / "bin" / "python"), "-c", probe],
        cwd=installed.work,
        env=installed.env(),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.startswith(str(installed.venv)), out
    assert str(REPO) not in out


def test_extension_path_is_inside_the_venv(installed: Installed) -> None:
    r = installed.run("extension-path")
    assert r.returncode == 0, r.stderr
    ext = Path(r.stdout.strip())
    assert installed.venv.resolve() in ext.parents
    manifest = json.loads((ext / "manifest.json").read_text())
    assert (ext / manifest["background"]["service_worker"]).is_file()


def test_doctor_runs_and_finds_the_installed_pieces(installed: Installed) -> None:
    r = installed.run("doctor")
    # Nothing is registered with a browser in this fresh HOME: warnings, but no crash.
    assert r.returncode in (0, 1), r.stdout + r.stderr
    assert "Traceback" not in r.stderr
    assert "rust core" in r.stdout and str(installed.venv.resolve()) in r.stdout


def test_annotated_headless_capture(installed: Installed) -> None:
    page = REPO / "demo" / "index.html"
    out = installed.work / "out.jpg"
    r = installed.run("capture", str(page), "--annotate", "--browser", "headless", "-o", str(out))
    assert r.returncode == 0, r.stderr
    with Image.open(out) as img:
        assert img.format == "JPEG" and img.width == 1280
    labels = json.loads(out.with_suffix(".json").read_text())["annotations"]
    assert len(labels) >= 5 and {a["label"] for a in labels} >= {1, 2, 3}


def test_mcp_stdio_capture_screenshot(installed: Installed, page_url: str) -> None:
    session = McpSession(timeout=120)
    # The SDK's own default environment (HOME, LOGNAME, PATH, SHELL, TERM, USER), as an IDE
    # would pass it, with this test's HOME and tool-less PATH.
    session.params = StdioServerParameters(
        command=installed.shotctl,
        args=["mcp", "--browser", "headless", "--cooldown", "0"],
        env={"HOME": str(installed.home), "PATH": installed.path},
        cwd=str(installed.work),
    )
    with session as s:
        nav = s.call("interact", {"action": "navigate", "url": page_url})
        assert not nav.is_error, nav.content
        r = s.call("capture_screenshot", {})
    assert not r.is_error, r.content
    kinds = [type(b) for b in r.content]
    assert ImageContent in kinds and TextContent in kinds
    text = next(b.text for b in r.content if isinstance(b, TextContent))
    assert "labels.html" in text and "JPEG" in text


def test_print_config_names_the_installed_shotctl(installed: Installed) -> None:
    r = installed.run("mcp", "--print-config", "claude-desktop")
    assert r.returncode == 0, r.stderr
    entry = json.loads(r.stdout)["mcpServers"]["shotbridge"]
    assert entry == {"command": installed.shotctl, "args": ["mcp"]}
