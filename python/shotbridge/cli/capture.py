"""``shotctl capture``: a screenshot of a browser tab, small and optionally labelled."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from shotbridge.cli import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_NO_BROWSER
from shotbridge.cli.bus_option import bus_option
from shotbridge.cli.options import FiniteFloatRange, browser_option, parse_window
from shotbridge.wire import budgets
from shotbridge.wire.screenshot import MAX_HEIGHT_CSS, ScreenshotArgs, ScreenshotResult, Tile

if TYPE_CHECKING:
    from shotbridge.client.bus_client import BusClient


class _Status:
    """Says on stderr what is going on, but only once a step has taken longer than a second."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self._step = ""
        self._since = time.monotonic()
        self._done = threading.Event()
        self._shown = ""
        if not quiet:
            threading.Thread(target=self._watch, daemon=True).start()

    def step(self, text: str) -> None:
        self._step, self._since = text, time.monotonic()

    def _watch(self) -> None:
        while not self._done.wait(0.25):
            if self._step and self._step != self._shown and time.monotonic() - self._since > 1.0:
                self._shown = self._step
                click.echo(f"shotctl: {self._step}…", err=True)

    def stop(self) -> None:
        self._done.set()


# Names that end like a file are files, never host names: `page.html` that does not exist is a
# missing file, not https://page.html/.
FILE_SUFFIXES = {"html", "htm", "xhtml", "svg", "xml", "txt", "md", "json", "png", "jpg", "pdf"}
HOST_RE = re.compile(
    r"^(?:(?P<local>localhost|\d{1,3}(?:\.\d{1,3}){3})(?::\d{1,5})?"
    r"|(?:[a-z0-9-]+\.)+(?P<tld>[a-z]{2,63})(?::\d{1,5})?)(?:[/?#].*)?$",
    re.IGNORECASE,
)


def _target_url(url: str | None) -> tuple[str | None, Path | None]:
    """A URL, or a local file to serve (extensions cannot script file:// pages).

    Accepted: an absolute URL with its scheme; an existing file; a bare host that looks like one
    (``example.com/x`` → https, ``localhost:8000`` or an IPv4 address → http). Anything else is
    a usage error, raised before any browser is touched: ``typo`` is never https://typo/.
    """
    if url is None:
        return None, None
    if url.startswith("file://"):
        url = url.removeprefix("file://")
    elif "://" in url or url.startswith(("about:", "data:", "chrome:")):
        return url, None
    path = Path(url).expanduser()
    if path.is_file():
        return None, path
    if path.exists():
        raise click.UsageError(f"{url} is a directory; pass an HTML file or a URL")
    host = HOST_RE.match(url)
    looks_like_file = "/" in url.split("?")[0].split("#")[0].split(":")[0] and not host
    if host and not looks_like_file:
        if host.group("local"):
            return f"http://{url}", None
        if host.group("tld").lower() not in FILE_SUFFIXES:
            return f"https://{url}", None
    if looks_like_file or url.rsplit(".", 1)[-1].lower() in FILE_SUFFIXES or url.startswith("."):
        raise click.UsageError(f"no such file: {url}")
    raise click.UsageError(
        f"{url!r} is neither a URL nor an existing file (give the scheme, e.g. https://{url}/)"
    )


@contextlib.contextmanager
def _served(path: Path | None) -> Iterator[str | None]:
    if path is None:
        yield None
        return
    from shotbridge.client.localserve import LocalServer

    with LocalServer(path) as served:
        yield served


async def _run(
    mode: str,
    args: ScreenshotArgs,
    window: tuple[int, int],
    dpr: float | None,
    status: _Status,
    local: Path | None = None,
) -> ScreenshotResult:
    from shotbridge.client.connect import connect

    status.step(
        "connecting to the browser" if mode == "connected" else "starting headless Chromium"
    )
    conn = await connect(mode, window_size=window, device_scale_factor=dpr)  # type: ignore[arg-type]
    timeout = args.timeout_ms / 1000 + 5
    try:
        if local is not None and conn.client.forwarded:
            # The browser is on another machine: it cannot load our file, its host serves a copy.
            from shotbridge.client.page_bundle import serve_remotely

            args = args.model_copy(update={"url": await serve_remotely(conn.client, local)})
        if args.url and getattr(conn, "browser", None) is None:
            # The user's own browser: never navigate their tab. Open a window of our own.
            return await _in_own_tab(conn.client, args, window, timeout, status)
        status.step("capturing")
        return await conn.client.ask("screenshot", args, ScreenshotResult, timeout=timeout)
    finally:
        status.step("closing")
        await conn.close()


async def _in_own_tab(
    client: BusClient,
    args: ScreenshotArgs,
    window: tuple[int, int],
    timeout: float,
    status: _Status,
) -> ScreenshotResult:
    """Open the URL in an unfocused window of its own, capture it, close it."""
    status.step("opening the page in a window of its own")
    opened = await client.request(
        "open_tab",
        {"url": args.url, "width": window[0], "height": window[1], "timeout_ms": args.timeout_ms},
        timeout=timeout,
    )
    tab_id = opened["tab"]["id"]
    try:
        status.step("capturing")
        in_tab = args.model_copy(update={"url": None, "tab_id": tab_id})
        return await client.ask("screenshot", in_tab, ScreenshotResult, timeout=timeout)
    finally:
        with contextlib.suppress(Exception):
            await client.request("close_tab", {"tab_id": tab_id}, timeout=10)


def _outputs(out: Path | None) -> tuple[Path, Path, Path]:
    main = out or Path(f"shot-{time.strftime('%Y%m%d-%H%M%S')}.jpg")
    stem = main.with_suffix("")
    return main, stem.with_name(stem.name + ".thumb.jpg"), stem.with_name(stem.name + ".json")


_OPTIONS = [
    click.argument("url", required=False),
    click.option(
        "--annotate", is_flag=True, help="Number the interactive elements and write their map."
    ),
    click.option(
        "--full-page",
        is_flag=True,
        help=f"Capture the whole page (up to {MAX_HEIGHT_CSS:,} CSS px".replace(",", " ")
        + ") as tiles within the size caps: OUT.jpg, OUT-2.jpg, …",
    ),
    click.option(
        "--selector", metavar="CSS", help="Capture only the element this selector matches."
    ),
    click.option(
        "--scroll",
        "scroll_to",
        metavar="WHERE",
        help="Scroll first: top, bottom, a y offset in CSS px, or a CSS selector.",
    ),
    click.option(
        "-o",
        "--output",
        type=click.Path(dir_okay=False, path_type=Path),
        help="Where to write the JPEG (default: shot-<time>.jpg).",
    ),
    click.option("--json", "as_json", is_flag=True, help="Print the result's metadata as JSON."),
    browser_option,
    bus_option,
    click.option(
        "--target",
        type=click.Choice(["interactive", "all_visible", "custom"]),
        default="interactive",
        show_default=True,
        help="What --annotate labels.",
    ),
    click.option(
        "--annotation-selector", metavar="CSS", help="With --target custom: what to label."
    ),
    click.option("--max-annotations", type=click.IntRange(1, 500), default=50, show_default=True),
    click.option(
        "--max-width",
        type=click.IntRange(budgets.MIN_EDGE, budgets.MAX_EDGE),
        default=budgets.MAX_WIDTH,
        show_default=True,
    ),
    click.option(
        "--max-bytes",
        type=click.IntRange(budgets.MIN_MAX_BYTES, budgets.MAX_MAX_BYTES),
        default=budgets.MAX_BYTES,
        show_default=True,
    ),
    click.option(
        "--window-size",
        default="1280x800",
        show_default=True,
        help="Headless window size, WIDTHxHEIGHT.",
    ),
    click.option(
        "--dpr",
        type=FiniteFloatRange(0.5, 4),
        help="Headless device pixel ratio. Default: 1, or under 1 when the window is wider than "
        "--max-width, so the page renders at the image's width.",
    ),
    click.option(
        "--timeout",
        type=FiniteFloatRange(1, 120),
        default=20,
        show_default=True,
        help="Seconds to allow the capture (navigation included).",
    ),
    click.option("-q", "--quiet", is_flag=True, help="No status lines on stderr."),
]


def _with_options(func: Callable[..., None]) -> Callable[..., None]:
    for option in reversed(_OPTIONS):
        func = option(func)
    return func


@click.command()
@_with_options
def capture(
    url: str | None,
    annotate: bool,
    full_page: bool,
    selector: str | None,
    scroll_to: str | None,
    output: Path | None,
    as_json: bool,
    browser: str,
    target: str,
    annotation_selector: str | None,
    max_annotations: int,
    max_width: int,
    max_bytes: int,
    window_size: str,
    dpr: float | None,
    timeout: float,
    quiet: bool,
) -> None:
    """Capture URL (or a local HTML file, or the tracked tab) as an AI-ready JPEG.

    Writes the JPEG, a 320 px thumbnail beside it, and with --annotate the label map as JSON.
    Exit codes: 0 done, 1 capture failed, 2 bad input, 3 no browser.
    """
    from shotbridge.client.browser import render_dpr
    from shotbridge.wire.extension import scroll_target

    w, h = parse_window(window_size)
    if target == "custom" and not annotation_selector:
        raise click.BadParameter("--target custom needs --annotation-selector")
    try:
        remote, local = _target_url(url)
    except click.UsageError as exc:  # before any browser is touched; one line, exit 2
        _fail(exc.message, EXIT_BAD_INPUT)
    paths = _outputs(output)
    status = _Status(quiet or as_json)
    with _failures(status), _served(local) as served:
        args = ScreenshotArgs(
            url=remote or served,
            annotate=annotate,
            full_page=full_page,
            selector=selector,
            scroll=None if scroll_to is None else scroll_target(scroll_to),
            target=target,  # type: ignore[arg-type]
            annotation_selector=annotation_selector,
            max_annotations=max_annotations,
            max_width=max_width,
            max_bytes=max_bytes,
            timeout_ms=int(timeout * 1000),
        )
        scale = dpr if dpr is not None else render_dpr(w, max_width)
        result = asyncio.run(_run(browser, args, (w, h), scale, status, local))
    _write(result, paths, annotate=annotate, as_json=as_json)


@contextlib.contextmanager
def _failures(status: _Status) -> Iterator[None]:
    """Each failure as one line on stderr, with the exit code that says what failed."""
    from shotbridge.wire.errors import BrowserError, BusError, CommandError, ShotbridgeError

    try:
        yield
    except BrowserError as exc:
        _fail(str(exc), EXIT_NO_BROWSER)
    except BusError as exc:
        _fail(f"{exc}\nhint: run `shotctl doctor`, or use --browser headless", EXIT_NO_BROWSER)
    except CommandError as exc:
        code = EXIT_BAD_INPUT if exc.code in {"bad_request", "invalid_selector"} else EXIT_FAILED
        if exc.code == "not_connected":
            code = EXIT_NO_BROWSER
        _fail(str(exc), code)
    except ShotbridgeError as exc:
        _fail(str(exc), EXIT_FAILED)
    finally:
        status.stop()


def _write(
    result: ScreenshotResult, paths: tuple[Path, Path, Path], *, annotate: bool, as_json: bool
) -> None:
    """The JPEG, its thumbnail, the tiles and the label map; then the summary on stdout."""
    main_path, thumb_path, map_path = paths
    main_path.parent.mkdir(parents=True, exist_ok=True)
    main_path.write_bytes(result.jpeg)
    thumb_path.write_bytes(result.thumbnail)
    tiles = _write_tiles(main_path, result.tiles or [])
    meta: dict[str, Any] = {
        "image": str(main_path),
        "thumbnail": str(thumb_path),
        **result.model_dump(mode="python", exclude={"jpeg", "thumbnail", "tiles"}),
    }
    if tiles:
        meta["tiles"] = tiles
    if annotate:
        map_path.write_text(json.dumps(_label_map(result), indent=2))
        meta["annotation_map"] = str(map_path)
    if as_json:
        click.echo(json.dumps(meta, indent=2))
        return
    click.echo(
        f"{main_path}  {result.width}×{result.height}  {result.bytes:,} bytes  "
        f"q{result.quality}  {result.url}"
    )
    extras = [f"thumbnail {thumb_path}"]
    if annotate:
        labels = len(result.annotations)
        extras.append(f"{labels} labels (of {result.total_found}) → {map_path}")
    if len(tiles) > 1:
        extras.append(f"{len(tiles)} tiles: " + ", ".join(Path(t["image"]).name for t in tiles))
    extras.extend(result.notes)
    if result.masked:
        extras.append(f"{result.masked} secret region(s) masked")
    if result.unavailable:
        extras.append("unavailable: " + "; ".join(result.unavailable))
    click.echo("  " + " · ".join(extras))


def _write_tiles(main_path: Path, tiles: list[Tile]) -> list[dict[str, Any]]:
    """The tiles beyond the first beside the main image (OUT-2.jpg, …); their metadata."""
    out = []
    for i, tile in enumerate(tiles):
        # The first tile is the main image; the others go beside it, numbered from 2.
        path = main_path if i == 0 else _tile_path(main_path, i + 1)
        if i:
            path.write_bytes(tile.jpeg)
        out.append({**tile.model_dump(exclude={"jpeg", "thumbnail"}), "image": str(path)})
    return out


def _label_map(result: ScreenshotResult) -> dict[str, Any]:
    return {
        "page": {
            "url": result.url,
            "title": result.title,
            "viewport": result.viewport.model_dump(),
        },
        "annotations": [a.model_dump() for a in result.annotations],
        "total_found": result.total_found,
    }


def _tile_path(main: Path, n: int) -> Path:
    return main.with_name(f"{main.stem}-{n}{main.suffix}")


def _fail(message: str, code: int) -> NoReturn:
    click.echo(f"shotctl capture: {message}", err=True)
    sys.exit(code)
