"""Hostile page text, end to end (page text must never run as code): the real extension records a
session in real Chromium where the typed value and the page's error message carry code (quotes,
backticks, ``${}``, ``</script>``, U+2028, and a newline followed by
``require('fs').writeFileSync``). The generated reproduction script then runs with ``node`` and the
real Playwright against the same page, which echoes what it received to the test server: the page
gets exactly the literal the user typed, and the payload never runs (no file written). The page also
dispatches the security review's synthetic ``ErrorEvent`` whose ``filename`` holds the payload:
before the fix, that source was pasted raw into a comment and the replay wrote the file."""

from __future__ import annotations

import asyncio
import json
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from shotbridge.client.bus_client import BusClient
from shotbridge.generate import playwright
from shotbridge.generate.steps import Session

from tests.e2e.conftest import start_browser
from tests.e2e.test_session import run_node

pytestmark = pytest.mark.browser

E2E = Path(__file__).resolve().parent
NODE_MODULES = E2E / "node_modules"


def payload(marker: Path) -> str:
    """Code that writes ``marker`` if it ever runs as a statement of the script or spec."""
    return f"\nrequire('fs').writeFileSync({json.dumps(str(marker))}, 'owned')//"


def typed(marker: Path) -> str:
    return 'it\'s "q" `${process.exit(3)}` */ </script>\u2028 x' + payload(marker)


PAGE = """<!doctype html><meta charset="utf-8"><title>echo</title>
<textarea id="t" aria-label="Message"></textarea>
<button id="send">Send</button> <button id="break">Break</button>
<script>
document.getElementById('send').onclick = () => fetch('/echo', {
  method: 'POST', body: JSON.stringify({ value: document.getElementById('t').value }) });
document.getElementById('break').onclick = () => {
  // The reviewer's vector: a synthetic ErrorEvent whose source closes a comment line.
  window.dispatchEvent(new ErrorEvent('error', { message: 'forged', filename: MESSAGE }));
  throw new Error(MESSAGE);
};
</script>"""


class _Echo(BaseHTTPRequestHandler):
    received: list[str]
    page: bytes

    def do_GET(self) -> None:
        self._answer(self.page, "text/html; charset=utf-8")

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.received.append(json.loads(body)["value"])
        self._answer(b"{}", "application/json")

    def _answer(self, body: bytes, kind: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def echo(tmp_path: Path) -> Iterator[tuple[str, list[str], Path]]:
    marker = tmp_path / "pwned"
    message = "boom" + payload(marker)
    handler = type(
        "Echo",
        (_Echo,),
        {"received": [], "page": PAGE.replace("MESSAGE", json.dumps(message)).encode()},
    )
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/", handler.received, marker
    server.shutdown()
    server.server_close()


async def _record(runtime_dir: Path, url: str, text: str, received: list[str]) -> dict[str, Any]:
    async with await BusClient.connect(runtime_dir=runtime_dir) as c:

        async def act(**args: Any) -> dict[str, Any]:
            return await c.request("interact", args, timeout=30)

        await c.request("record_config", {"network": False}, timeout=10)
        await act(action="navigate", url=url)
        await act(action="type", selector="#t", text=text)
        await act(action="click", selector="#send")
        deadline = time.monotonic() + 20
        while not received and time.monotonic() < deadline:  # poll: the echo has arrived
            await asyncio.sleep(0.1)
        await act(action="click", selector="#break")
        timeline: dict[str, Any] = {}
        while time.monotonic() < deadline:  # poll: the error is in the timeline
            timeline = await c.request("timeline", {}, timeout=10)
            if any(e["type"] == "error" for e in timeline["entries"]):
                break
            await asyncio.sleep(0.1)
        return timeline


def test_replayed_hostile_text_reaches_the_page_as_the_literal_and_runs_nothing(
    echo: tuple[str, list[str], Path], tmp_path: Path
) -> None:
    if not (NODE_MODULES / "playwright").exists():
        pytest.fail("tests/e2e/node_modules missing: scripts/setup.sh runs npm install")
    url, received, marker = echo
    text = typed(marker)
    browser = start_browser(window_size=(1024, 768))
    try:
        timeline = asyncio.run(_record(browser.runtime_dir, url, text, received))
    finally:
        browser.close()
    assert len(received) == 1, received
    intended = received[0]  # what the page held after the user typed (a textarea keeps it all)
    assert "writeFileSync" in intended and "\u2028" in intended
    entries = timeline["entries"]
    assert any(e["type"] == "error" and "writeFileSync" in e["message"] for e in entries)
    fills = [e for e in entries if e["type"] == "action" and e["kind"] == "fill"]
    assert fills and fills[-1]["value"] == intended

    session = Session.from_export(timeline)
    project = tmp_path / "repro"
    project.mkdir()
    (project / "node_modules").symlink_to(NODE_MODULES)
    script = playwright.reproduction_script(session)
    (project / "repro.js").write_text(script, encoding="utf-8")
    spec = playwright.generate_test_spec(session, assert_visual=False)
    (project / "session.spec.js").write_text(spec, encoding="utf-8")
    check = subprocess.run(["node", "--check", "session.spec.js"], cwd=project, timeout=60)
    assert check.returncode == 0

    run = run_node(project, "repro.js", timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "replayed" in run.stdout and "boom" in run.stdout  # the bug still reproduces
    assert received[1:] == [intended]  # the replay typed exactly the literal
    assert not marker.exists()  # and the payload in the value or the error never ran
