"""select, upload, drag and wait through the real ``shotctl mcp`` stdio, in real headless Chromium
with the real extension and host, and their replay by the generated script and spec.

tests/pages/actions/index.html has a native single and multiple <select>, an ARIA combobox, two
file inputs, an HTML5 drag-and-drop board, a pointer-driven sortable list, a range slider, and
things to wait for (a spinner that goes, a save that says so and changes the URL, a slow request).
It shows "All set" only when every one of them holds what this session gives it, so the session's
last step (a wait for "All set") makes each replay check that every replayed action took effect.
One browser session drives every action and bad argument; the reproduction script (ESM and
CommonJS) and the spec (ESM TypeScript and CommonJS JavaScript) it generates then run unmodified.
"""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from mcp.types import CallToolResult

from tests.e2e.test_replay_app import _project as project
from tests.e2e.test_session import _npx as npx
from tests.e2e.test_session import run_node
from tests.mcp_stdio import McpSession

pytestmark = pytest.mark.browser

FENCE = re.compile(r"^(`{3,})\w*\n(.*?)\n\1$", re.S | re.M)


def text(r: CallToolResult) -> str:
    return "\n".join(b.text for b in r.content if b.type == "text")


def code(r: CallToolResult) -> str:
    found = FENCE.search(text(r))
    assert found, text(r)
    return found.group(2)


class Agent:
    def __init__(self, s: McpSession) -> None:
        self.s = s

    def ok(self, **args: Any) -> str:
        r = self.s.call("interact", args)
        assert not r.is_error, (args, text(r))
        return text(r)

    def refused(self, **args: Any) -> str:
        r = self.s.call("interact", args)
        assert r.is_error, (args, text(r))
        return text(r)

    def labels(self, selector: str) -> dict[str, int]:
        """selector → label of an annotated screenshot of the elements ``selector`` matches."""
        r = self.s.call(
            "observe",
            {
                "what": "page",
                "annotate_screenshot": True,
                "annotation_target": "custom",
                "annotation_selector": selector,
                "map": "full",
            },
        )
        assert not r.is_error, text(r)
        mapping = next(json.loads(b.text) for b in r.content if b.type == "text" and "{" in b.text)
        return {a["selector"]: a["label"] for a in mapping["annotations"]}


def _drive(a: Agent, base: str, files: Path) -> None:
    a.ok(action="navigate", url=f"{base}/actions/index.html")
    assert "#spinner disappeared" in a.ok(action="wait", selector="#spinner", gone=True)

    # select: a native <select> by label text, a multiple one by its screenshot label, an ARIA
    # combobox by the option's name; what is chosen now is said.
    said = a.ok(action="select", selector="#fruit", values=["Kiwi"])
    assert 'now "Kiwi" (value "kiwi")' in said, said
    said = a.refused(action="select", selector="#fruit", values=["Mango"])
    assert 'no option has the value or label "Mango"' in said and '"kiwi" ("Kiwi")' in said
    assert "is disabled" in a.refused(action="select", selector="#fruit", values=["plum"])
    assert "takes one option" in a.refused(action="select", selector="#fruit", values=[1, 2])
    assert "select needs values" in a.refused(action="select", selector="#fruit")
    labels = a.labels("#toppings, #file, #card, #done")
    said = a.ok(action="select", label=labels["#toppings"], values=["ham", "Olives"])
    assert 'now "Ham" (value "ham"), "Olives" (value "olives")' in said, said
    said = a.ok(action="select", selector="#color", values=["Blue"])
    assert 'it shows "Blue"' in said and '"Blue"' in said, said

    # upload: by label, sizes and names said; a single-file input refuses two; a missing file.
    (files / "a.txt").write_text("hello")
    (files / "b.bin").write_bytes(bytes(range(256)) * 5000)  # 1.28 MB: three parts to the extension
    both = [str(files / "a.txt"), str(files / "b.bin")]
    said = a.ok(action="upload", label=labels["#file"], files=both)
    assert "Set 2 file(s)" in said and "a.txt (5 bytes), b.bin (1,280,000 bytes)" in said, said
    assert "takes one file, not 2" in a.refused(action="upload", selector="#avatar", files=both)
    missing = str(files / "nope.txt")
    said = a.refused(action="upload", selector="#file", files=[missing])
    assert f"{missing} does not exist" in said, said
    assert "upload needs files" in a.refused(action="upload", selector="#file")

    # drag: HTML5 (label to label), a pointer-driven sortable list (pixels of a screenshot: its
    # last item at CSS (800, 120) to above its first at (800, 25)), a slider (selector to selector).
    said = a.ok(action="drag", label=labels["#card"], to={"label": labels["#done"]})
    assert "an HTML5 drag" in said, said
    width = int(re.search(r"\n(\d+)×\d+ px JPEG", text(a.s.call("capture_screenshot", {})))[1])
    page = json.loads(text(a.s.call("observe", {"what": "page"})))
    scale = width / page["viewport"]["width"]
    to = {"x": 800 * scale, "y": 25 * scale}
    said = a.ok(action="drag", x=800 * scale, y=120 * scale, to=to)
    assert "HTML5" not in said
    # Pixels of a screenshot that saw another viewport could land anywhere now: refused.
    emulate = {"action": "emulate", "settings": {"width": 1000, "height": 600}}
    assert not a.s.call("configure", emulate).is_error
    said = a.refused(action="drag", x=800 * scale, y=25 * scale, to=to)
    assert "The viewport changed since the screenshot was taken" in said, said
    reset = {"action": "emulate", "settings": {"reset": True}}
    assert not a.s.call("configure", reset).is_error
    a.ok(action="drag", selector="#volume", to={"selector": "#vol-mark"})
    assert "drag needs to" in a.refused(action="drag", selector="#card")
    assert "give one of selector, label or x/y" in a.refused(
        action="drag", selector="#card", to={"selector": "#done", "x": 1, "y": 2}
    )

    # wait: a text, a URL, the network going quiet; a timeout says what it still sees.
    a.ok(action="click", selector="#save")
    assert 'the text "Saved!" appeared' in a.ok(action="wait", text="Saved!")
    assert 'matched "#saved"' in a.ok(action="wait", url="#saved")
    a.ok(action="click", selector="#load")
    assert "the network went quiet" in a.ok(action="wait", timeout=10)
    said = a.refused(action="wait", text="Never there", timeout=1)
    assert "Timed out after 1." in said and "no match on" in said, said
    assert "timeout" in a.refused(action="wait", text="x", timeout=61)
    assert "wait takes one of" in a.refused(action="wait", text="x", url="y")
    # The live page holds everything the session gave it: the replays wait for the same.
    a.ok(action="wait", text="All set", timeout=5)


def test_select_upload_drag_wait_through_mcp_and_their_replays(
    pages_url: str, tmp_path: Path
) -> None:
    files = tmp_path / "files"
    files.mkdir()
    with McpSession("--browser", "headless", "--window-size", "1280x800", "--cooldown", "0") as s:
        a = Agent(s)
        _drive(a, pages_url, files)
        scripts = {
            m: code(s.call("get_reproduction_script", {"module": m})) for m in ("esm", "cjs")
        }
        specs = {
            ("esm", "ts"): code(s.call("generate_test", {"assert_visual": False})),
            ("cjs", "js"): code(
                s.call("generate_test", {"module": "cjs", "language": "js", "assert_visual": False})
            ),
        }
    spec = specs[("esm", "ts")]
    for want in (
        ".selectOption('kiwi');",
        ".selectOption(['ham', 'olives']);",
        f".setInputFiles(['{files}/a.txt', '{files}/b.bin']);",
        ".dragTo(page.locator('#done'));",
        "await page.mouse.move(800, 25, { steps: 10 });",  # CSS px again
        "getByText('All set').first().waitFor({ state: 'visible'",
        "page.locator('#spinner').first().waitFor({ state: 'hidden'",
        "waitForURL((url) => url.href.includes('#saved')",
        "waitForLoadState('networkidle'",
        "getByRole('option', { name: 'Blue', exact: true }).click();",
    ):
        assert want in spec, (want, spec[spec.find("test(") :])
    assert "Never there" not in spec  # a wait that timed out is no step
    # The two modules' replays run side by side (one per core): each launches its own Chromium.
    runs = {}
    with ThreadPoolExecutor(2) as pool:
        for module, script in scripts.items():
            root = project(tmp_path / f"script-{module}", module)
            (root / "repro.js").write_text(script)
            runs[("script", module)] = pool.submit(run_node, root, "repro.js", 90)
        for (module, language), body in specs.items():
            root = project(tmp_path / f"spec-{module}", module)
            (root / f"actions.spec.{language}").write_text(body)
            runs[("spec", module)] = pool.submit(npx, root)
    for (kind, module), future in runs.items():
        run = future.result()
        assert run.returncode == 0, (kind, module, run.stdout[-3000:], run.stderr[-2000:])
        if kind == "spec":
            assert '"expected": 1' in run.stdout and '"unexpected": 0' in run.stdout, run.stdout
