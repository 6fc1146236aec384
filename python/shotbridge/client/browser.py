"""A headless Chromium of our own, with the bundled extension and a host wired through its manifest.

Used when no desktop browser is connected (``--browser headless`` or ``auto``): the browser gets a
throwaway profile whose ``NativeMessagingHosts`` folder points at a launcher for ``shotctl host``,
and a private runtime directory so its host cannot be confused with any other on the machine.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from shotbridge.wire.budgets import MAX_WIDTH
from shotbridge.wire.errors import BrowserError

_PR_SET_PDEATHSIG = 1

_CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")

# Flags every run of ours needs, headed or not: no sandbox (we may run as root in CI), no network
# chatter that a closed network refuses, no first-run UI.
BASE_FLAGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-features=Translate,MediaRouter",
    "--hide-scrollbars",
    "--mute-audio",
)
# Headless only (a user's own browser keeps its own flags): a CDP screenshot asks the page for a
# frame on a new surface and copies that one, instead of forcing a redraw and waiting for it to be
# presented (Chromium's CDPScreenshotNewSurface, on in Playwright). Interleaved A/B, 24-30 rounds:
# captures 0.82-0.89x on the dashboard and the form, 0.94-1.06x on the rest; annotated observes
# 0.82-0.91x on all five still pages. The frame still follows the capture's request, so it
# follows the probe before the pixels (the motion and secret tests pass through it).
_FLAGS = ("--headless=new", *BASE_FLAGS, "--enable-features=CDPScreenshotNewSurface")
# More flags for our headless Chromium, as a shell would split them (bench/bench_ab.py tries one).
EXTRA_FLAGS_ENV = "SHOTBRIDGE_EXTRA_BROWSER_FLAGS"


def _flags_from_env() -> list[str]:
    """The extra flags; one that opens a debugging port is refused: we listen on no TCP port."""
    flags = shlex.split(os.environ.get(EXTRA_FLAGS_ENV, ""))
    for flag in flags:
        if flag.startswith("--remote-debugging-") and flag != "--remote-debugging-pipe":
            raise BrowserError(
                f"{EXTRA_FLAGS_ENV} asks for {flag.split('=')[0]}: a debugging port would let any "
                "local program drive this browser; shotbridge opens none"
            )
    return flags


# Chrome rounds a scaled window's size up by a pixel or two: aim this far under the width.
_ROUNDING_PX = 4


def render_dpr(window_width: int, image_width: int = MAX_WIDTH) -> float | None:
    """The device pixel ratio that renders a headless window wider than the images at their width.

    Screenshots are then taken as they are sent: Chrome scales a capture under a temporary device
    emulation and renders the page again afterwards (bench/results-chrome-capture.md), and every
    frame rasters fewer pixels. The page still lays out at the window's CSS width. None: the window
    is not wider, so it renders at 1.
    """
    if window_width <= image_width:
        return None
    return round((image_width - _ROUNDING_PX) / window_width, 4)


def _die_with_parent() -> None:
    """In the child before exec: end the browser when the thread that launched it dies.

    A crashed or killed client must not leave a headless browser (and its host) behind. Linux
    only; the launching thread must live as long as the browser (the event loop's thread does).
    """
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def find_chrome() -> Path:
    """The browser to launch: ``$CHROME_PATH``, else the first Chromium/Chrome on PATH."""
    env = os.environ.get("CHROME_PATH")
    if env:
        if Path(env).is_file() and os.access(env, os.X_OK):
            return Path(env)
        raise BrowserError(f"CHROME_PATH={env} is not an executable file")
    for name in _CANDIDATES:
        found = shutil.which(name)
        if found:
            return Path(found)
    raise BrowserError(
        "no Chromium or Chrome found: install one (Debian/Ubuntu: `sudo apt-get install chromium`)"
        " or set CHROME_PATH"
    )


class HeadlessBrowser:
    """One headless Chromium process with the extension loaded; a context manager.

    >>> with HeadlessBrowser() as browser:
    ...     client = await BusClient.connect(runtime_dir=browser.runtime_dir)
    """

    def __init__(
        self,
        *,
        window_size: tuple[int, int] = (1280, 800),
        device_scale_factor: float | None = None,
        start_url: str = "about:blank",
        chrome: Path | None = None,
        extra_args: tuple[str, ...] = (),
    ) -> None:
        self.window_size = window_size
        self.device_scale_factor = device_scale_factor
        self.start_url = start_url
        self.chrome = chrome
        self.extra_args = extra_args
        self.process: subprocess.Popen[bytes] | None = None
        self._tmp: Path | None = None

    @property
    def root(self) -> Path:
        if self._tmp is None:
            raise BrowserError("browser not started")
        return self._tmp

    @property
    def runtime_dir(self) -> Path:
        """Where this browser's host puts its bus socket."""
        return self.root / "run"

    @property
    def log_path(self) -> Path:
        return self.root / "chromium.log"

    def start(self) -> HeadlessBrowser:
        # imported here: keeps `import shotbridge.client.browser` light
        from shotbridge.install import register as install

        chrome = self.chrome or find_chrome()
        # Short path: the bus socket lives below it and AF_UNIX paths are limited to 108 bytes.
        self._tmp = Path(tempfile.mkdtemp(prefix="sb-"))
        profile = self.root / "profile"
        state = self.root / "state"
        for d in (profile, state, self.runtime_dir):
            d.mkdir(mode=0o700, parents=True, exist_ok=True)
        launcher = install.write_launcher(
            self.root / "host-launcher.sh",
            env={
                "SHOTBRIDGE_RUNTIME_DIR": str(self.runtime_dir),
                "SHOTBRIDGE_STATE_DIR": str(state),
            },
        )
        install.write_manifest(profile / "NativeMessagingHosts", launcher)

        args = [
            str(chrome),
            *_FLAGS,
            f"--user-data-dir={profile}",
            f"--load-extension={install.extension_dir()}",
            f"--window-size={self.window_size[0]},{self.window_size[1]}",
        ]
        if self.device_scale_factor:
            args.append(f"--force-device-scale-factor={self.device_scale_factor}")
        args += [*self.extra_args, *_flags_from_env(), self.start_url]
        log = self.log_path.open("wb")
        try:
            self.process = subprocess.Popen(
                args,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group, so close() ends helpers too
                preexec_fn=_die_with_parent,
            )
        except OSError as exc:
            self.close()
            raise BrowserError(f"could not start {chrome}: {exc}") from exc
        finally:
            log.close()
        return self

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def close(self) -> None:
        """End the browser (and its process group, which includes the host) and remove its files."""
        proc, self.process = self.process, None
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=5)
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    def tail_log(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def __enter__(self) -> HeadlessBrowser:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["BASE_FLAGS", "HeadlessBrowser", "find_chrome"]
