"""Labels on real web apps built from pinned npm packages, against Chromium's accessibility tree.

The pages under tests/pages/real-apps/ load a component kit (Shoelace, shadow DOM), a virtualised
data grid (ag-grid, 10,000 rows), a rich-text editor (Quill), a terminal (xterm.js), a Vue
TodoMVC, an API-docs app (Swagger UI), an admin dashboard (Tabler), form widgets (flatpickr, Tom
Select) and a slide deck (reveal.js), all served from tests/e2e/node_modules: no CDN. Page
states include opened dialogs and opened dropdowns.

The ground truth is the browser's own: CDP ``Accessibility.getFullAXTree`` in the same tab (raw
CDP through the real host, which the user enabled for this test's config dir), keeping nodes of
an interactive role that are not ignored, inside the viewport and reachable by a hit test at one
of five points (themselves, something inside them, or their label). Our discovery code plays no
part in it. Each ground-truth control is matched to the label on its element (or on an element
inside it, or its host, or its label).
"""

from __future__ import annotations

import asyncio
import functools
import io
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from shotbridge import image
from shotbridge.client.browser import HeadlessBrowser
from shotbridge.client.bus_client import BusClient

from tests.e2e.conftest import PAGES, _Handler, start_browser

pytestmark = pytest.mark.browser

NODE_MODULES = Path(__file__).resolve().parent / "node_modules"
VENDOR = "/node_modules/"

# Roles a person operates (ARIA widget roles as Chromium's tree names them). Grid cells and rows
# are content a grid lets you move through, not controls of their own; a column header is one
# when the grid sorts by it.
INTERACTIVE = {
    "button", "checkbox", "combobox", "link", "listbox", "menuitem", "menuitemcheckbox",
    "menuitemradio", "option", "radio", "searchbox", "slider", "spinbutton", "switch", "tab",
    "textbox", "treeitem", "MenuListOption", "ListBoxOption", "PopUpButton", "ToggleButton",
    "columnheader", "DisclosureTriangle",
}  # fmt: skip

# page, query, title that says it is ready
STATES = [
    ("kit", "", "Kit ready"),
    ("kit", "?state=dialog", "Kit ready"),
    ("kit", "?state=dropdown", "Kit ready"),
    ("kit", "?state=menu", "Kit ready"),
    ("grid", "", "Grid ready"),
    ("editor", "", "Editor ready"),
    ("editor", "?state=dropdown", "Editor ready"),
    ("terminal", "", "Terminal ready"),
    ("todomvc", "", "TodoMVC ready"),
    ("apidocs", "", "API docs ready"),
    ("apidocs", "?state=open", "API docs ready"),
    ("admin", "", "Admin ready"),
    ("admin", "?state=dropdown", "Admin ready"),
    ("admin", "?state=dialog", "Admin ready"),
    ("widgets", "", "Widgets ready"),
    ("widgets", "?state=dropdown", "Widgets ready"),
    ("widgets", "?state=menu", "Widgets ready"),
    ("slides", "", "Slides ready"),
]
READY = {page: ready for page, _, ready in STATES}

# Per page, in order: the label to click (role, name, which of that name) and what the page
# must then say (main-world JS). The terminal has two controls: a click, typing, a click.
CLICKS: dict[str, list[tuple[str, str, int, str]]] = {
    "kit": [
        ("checkbox", "Accept the terms", 0, "document.querySelector('sl-checkbox').checked"),
        ("switch", "Weekly digest", 0, "document.querySelector('sl-switch').checked"),
        ("radio", "Dark", 0, "document.querySelector('sl-radio-group').value === 'dark'"),
        ("tab", "Billing", 0, "document.querySelector('sl-tab[panel=billing]').active"),
        ("button", "Delete account", 0, "document.getElementById('confirm').open"),
    ],
    "grid": [
        ("columnheader", "Make", 0, "document.querySelector('[role=columnheader][col-id=make]')"
         ".getAttribute('aria-sort') === 'ascending'"),
        ("checkbox", "Press Space to toggle row selection (unchecked)", 0,
         "document.querySelectorAll('.ag-row-selected').length === 1"),
        ("checkbox", "Press Space to toggle row selection (unchecked)", 1,
         "document.querySelectorAll('.ag-row-selected').length === 2"),
        ("columnheader", "Price", 0, "document.querySelector('[role=columnheader][col-id=price]')"
         ".getAttribute('aria-sort') === 'ascending'"),
        ("searchbox", "Quick filter", 0, "document.activeElement.id === 'quick'"),
    ],
    "editor": [
        ("button", "bold", 0, "document.querySelector('.ql-bold').classList.contains('ql-active')"),
        ("textbox", "", 0, "document.activeElement.classList.contains('ql-editor')"),
        ("button", "Normal", 0, "!!document.querySelector('.ql-header.ql-expanded')"),
        ("button", "Heading 1", 0, "!!document.querySelector('.ql-editor h1')"),
        ("button", "Publish", 0, "document.body.dataset.published === '1'"),
    ],
    "terminal": [
        ("textbox", "Terminal input", 0,
         "document.activeElement.classList.contains('xterm-helper-textarea')"),
        ("type", "Terminal input", 0, "window.typed === 'ls'"),
        ("button", "Clear", 0, "document.body.dataset.cleared === '1'"),
    ],
    "todomvc": [
        ("checkbox", "", 0, "document.querySelectorAll('.todo-list li.completed').length === 2"),
        ("link", "Active", 0, "location.hash === '#/active'"),
        ("link", "All", 0, "location.hash === '#/'"),
        ("checkbox", "\u276f Mark all as complete", 0,
         "!document.querySelector('.todo-list li:not(.completed)')"),
        ("button", "Clear completed", 0, "!document.querySelector('.todo-list li')"),
    ],
    "apidocs": [
        ("button", "GET /pets List pets", 0,
         "!!document.querySelector('#operations-pets-listPets [aria-expanded=true]')"),
        ("button", "Try it out", 0, "!!document.querySelector('.try-out__btn.cancel')"),
        ("textbox", "limit", 0, "document.activeElement.placeholder === 'limit'"),
        ("button", "Cancel", 0, "!document.querySelector('.try-out__btn.cancel')"),
        ("button", "Collapse operation", 0,
         "document.getElementById('operations-tag-pets').dataset.isOpen === 'false'"),
    ],
    "admin": [
        ("checkbox", "Email me on new sign-ups", 0, "document.querySelector('[name=mail]')"
         ".checked"),
        ("checkbox", "Weekly digest", 0, "document.querySelector('[name=digest]').checked"),
        ("radio", "30 days", 0, "document.getElementById('r30').checked"),
        ("tab", "Pending", 0, "document.getElementById('pending').classList.contains('active')"),
        ("link", "Open user menu", 0, "!!document.querySelector('.dropdown-menu.show')"),
    ],
    "widgets": [
        ("textbox", "Departure date", 0, "!!document.querySelector('.flatpickr-calendar.open')"),
        ("", "June 20, 2026", 0, "document.getElementById('when').value === '2026-06-20'"),
        ("button", "Book", 0, "document.body.dataset.booked === '1'"),
        ("combobox", "Interests", 0, "!!document.querySelector('.ts-dropdown:not([style*=none])')"),
        ("option", "Hiking", 0, "[...document.getElementById('tags').selectedOptions]"
         ".some((o) => o.value === 'hiking')"),
    ],
    "slides": [
        ("button", "next slide", 0, "Reveal.getIndices().h === 1"),
        ("button", "next slide", 0, "Reveal.getIndices().h === 2"),
        ("button", "Vote", 0, "document.activeElement.id === 'vote'"),
        ("button", "previous slide", 0, "Reveal.getIndices().h === 1"),
    ],
}  # fmt: skip

# Page JS (main world, CDP Runtime.callFunctionOn on the ground-truth elements): where each one
# is and whether a hit test reaches it; and which ground-truth element each label stands on.
TRUTH_JS = r"""
function (anns, gtRoles, ...els) {
  const up = (n) =>
    n.parentElement || (n.parentNode instanceof ShadowRoot ? n.parentNode.host : null);
  const contains = (a, n) => { for (; n; n = up(n)) if (n === a) return true; return false; };
  const deepHit = (x, y) => {
    let h = document.elementFromPoint(x, y);
    for (let i = 0; h && h.shadowRoot && i < 32; i++) {
      const inner = h.shadowRoot.elementFromPoint(x, y);
      if (!inner || inner === h) break;
      h = inner;
    }
    return h;
  };
  const vw = innerWidth, vh = innerHeight;
  const truth = els.map((el, i) => {
    const r = el.getBoundingClientRect();
    const x0 = Math.max(r.left, 0), x1 = Math.min(r.right, vw);
    const y0 = Math.max(r.top, 0), y1 = Math.min(r.bottom, vh);
    const inView = x1 - x0 >= 1 && y1 - y0 >= 1;
    const mine = [el, ...(el.labels || [])];
    let reached = false;
    if (inView) {
      for (const [fx, fy] of [[0.5, 0.5], [0.2, 0.2], [0.8, 0.2], [0.2, 0.8], [0.8, 0.8]]) {
        const hit = deepHit(x0 + (x1 - x0) * fx, y0 + (y1 - y0) * fy);
        if (hit && mine.some((m) => contains(m, hit))) { reached = true; break; }
      }
    }
    // A column header is a control when the grid sorts by it (it declares aria-sort).
    const control = gtRoles[i] !== 'columnheader' || el.hasAttribute('aria-sort');
    const rect = [r.x, r.y, r.width, r.height];
    return { inView: inView && control, reached, rect, tag: el.localName };
  });
  const resolve = (path) => {
    if (!path) return null;
    let root = document, el = null;
    try {
      for (const part of path.split(' >>> ')) {
        el = root.querySelector(part);
        if (!el) return null;
        root = el.shadowRoot || el;
      }
    } catch { return null; }
    return el;
  };
  const area = (a, b) => {
    const w = Math.min(a[0] + a[2], b.x + b.width) - Math.max(a[0], b.x);
    const h = Math.min(a[1] + a[3], b.y + b.height) - Math.max(a[1], b.y);
    return w > 0 && h > 0 ? w * h : 0;
  };
  // A selector (each step of a shadow path, in its own root) matches exactly one element.
  const unique = (path) => {
    if (!path) return false;
    let root = document;
    try {
      for (const part of path.split(' >>> ')) {
        const found = root.querySelectorAll(part);
        if (found.length !== 1) return false;
        root = found[0].shadowRoot || found[0];
      }
    } catch { return false; }
    return true;
  };
  const ambiguous = anns.filter((a) => !unique(a.selector || a.shadow_selector)).length;
  const match = anns.map((a) => {
    const el = resolve(a.selector || a.shadow_selector);
    if (!el) return -1;
    const proxy = resolve(a.proxy);
    let best = -1, bestScore = 0;
    els.forEach((g, i) => {
      if (!truth[i].inView || !truth[i].reached) return;
      let score = 0;
      if (g === el) score = 1e9;
      // Around or inside the control: only an element of no other role (a kit's host, a
      // drawn part) stands for it; a row around a checkbox does not.
      else if ((!a.role || a.role === gtRoles[i]) && (contains(g, el) || contains(el, g))) {
        score = 1 + area(truth[i].rect, a.bounds);
      } else if (proxy && contains(proxy, g)) score = 1 + area(truth[i].rect, a.bounds);
      if (score > bestScore) { best = i; bestScore = score; }
    });
    return best;
  });
  return { truth, match, ambiguous };
}
"""


class _Site(_Handler):
    """tests/pages, plus tests/e2e/node_modules under /node_modules/."""

    def translate_path(self, path: str) -> str:
        if path.startswith(VENDOR):
            rel = path[len(VENDOR) :].split("?", 1)[0]
            target = (NODE_MODULES / rel).resolve()
            return str(target) if target.is_relative_to(NODE_MODULES.resolve()) else ""
        return super().translate_path(path)


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    assert (NODE_MODULES / "ag-grid-community").is_dir(), "run npm install in tests/e2e"
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Site, directory=str(PAGES)))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/real-apps"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def appbrowser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HeadlessBrowser]:
    """A 1280x800 headless Chromium whose host allows raw CDP (the test reads the AX tree)."""
    config = tmp_path_factory.mktemp("config")
    env = {**os.environ, "SHOTBRIDGE_CONFIG_DIR": str(config)}
    cmd = [sys.executable, "-m", "shotbridge", "config", "allow-cdp", "on"]
    subprocess.run(cmd, env=env, check=True, capture_output=True, timeout=30)
    old = os.environ.get("SHOTBRIDGE_CONFIG_DIR")
    os.environ["SHOTBRIDGE_CONFIG_DIR"] = str(config)  # the host inherits it from Chromium
    try:
        b = start_browser(window_size=(1280, 800))
    finally:
        if old is None:
            os.environ.pop("SHOTBRIDGE_CONFIG_DIR")
        else:
            os.environ["SHOTBRIDGE_CONFIG_DIR"] = old
    yield b
    b.close()


async def cdp(c: BusClient, method: str, **params: Any) -> dict[str, Any]:
    out = await c.request("cdp", {"method": method, "params": params, "allow": True}, timeout=30)
    return out["result"]


async def load(c: BusClient, url: str, ready: str) -> None:
    await c.request("interact", {"action": "navigate", "url": url}, timeout=30)
    deadline = time.monotonic() + 20
    while True:
        tabs = (await c.request("list_tabs", {}, timeout=10))["tabs"]
        if next((t.get("title") for t in tabs if t.get("active")), "") == ready:
            break
        assert time.monotonic() < deadline, f"{url} never said {ready!r}"
        await asyncio.sleep(0.1)
    await settle(c)


# No transition running (keyframe animations may loop or bounce for long: reveal.js bounces its
# next-slide arrow 50 times). A page that says it is ready may still be fading its controls in
# (reveal.js: 0.2 s of opacity from 0), and a read in mid-fade sees such a control or not: two
# loads would differ by when they were read.
SETTLED = (
    "document.getAnimations()"
    ".every((a) => !(a instanceof CSSTransition) || a.playState !== 'running')"
)


async def settle(c: BusClient) -> None:
    if not await becomes_true(c, SETTLED):
        raise AssertionError("a transition ran for 5 s")


async def becomes_true(c: BusClient, expression: str) -> bool:
    """Whether the page's `expression` is true within 5 s (polled every 0.1 s)."""
    for _ in range(50):
        got = await cdp(c, "Runtime.evaluate", expression=expression, returnByValue=True)
        if got.get("result", {}).get("value") is True:
            return True
        await asyncio.sleep(0.1)
    return False


async def shoot(c: BusClient) -> dict[str, Any]:
    return await c.request("screenshot", {"annotate": True, "max_annotations": 100}, timeout=40)


async def truth(c: BusClient, anns: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """The interactive, visible, reachable controls of the AX tree, each with the labels on it,
    and how many labels' selectors match more or less than one element."""
    tree = await cdp(c, "Accessibility.getFullAXTree")
    nodes = [
        n
        for n in tree["nodes"]
        if not n.get("ignored")
        and n.get("role", {}).get("value") in INTERACTIVE
        and n.get("backendDOMNodeId")
    ]
    ids = []
    for n in nodes:
        obj = await cdp(c, "DOM.resolveNode", backendNodeId=n["backendDOMNodeId"])
        ids.append(obj["object"]["objectId"])
    assert ids, "no interactive node in the tree"
    keys = ("selector", "shadow_selector", "proxy", "bounds", "role")
    slim = [{k: a.get(k) for k in keys} for a in anns]
    roles = [n["role"]["value"] for n in nodes]
    args = [{"value": slim}, {"value": roles}, *({"objectId": i} for i in ids)]
    got = await cdp(
        c,
        "Runtime.callFunctionOn",
        functionDeclaration=TRUTH_JS,
        objectId=ids[0],
        arguments=args,
        returnByValue=True,
    )
    assert "exceptionDetails" not in got, got["exceptionDetails"]
    value = got["result"]["value"]
    out = []
    for i, (n, t) in enumerate(zip(nodes, value["truth"], strict=True)):
        if not (t["inView"] and t["reached"]):
            continue
        labels = [a for a, m in zip(anns, value["match"], strict=True) if m == i]
        out.append(
            {
                "role": n["role"]["value"],
                "name": (n.get("name") or {}).get("value", ""),
                "tag": t["tag"],
                "labels": labels,
            }
        )
    return out, value["ambiguous"]


@dataclass
class Row:
    page: str
    truth: int = 0
    labelled: int = 0
    duplicates: int = 0
    unnamed: int = 0
    wrong_names: list[str] = field(default_factory=list)
    missed: list[str] = field(default_factory=list)
    dups: list[str] = field(default_factory=list)
    named: int = 0  # labelled controls the tree names
    ambiguous: int = 0  # selectors not matching exactly one element


def measure(page: str, gt: list[dict[str, Any]], anns: list[dict[str, Any]]) -> Row:
    row = Row(page, truth=len(gt))
    for g in gt:
        if not g["labels"]:
            row.missed.append(f"{g['role']} {g['name']!r} <{g['tag']}>")
            continue
        row.labelled += 1
        row.duplicates += len(g["labels"]) - 1
        if len(g["labels"]) > 1:
            on = ", ".join(f"{a['tag']} {a['name']!r}" for a in g["labels"])
            row.dups.append(f"{g['role']} {g['name']!r}: {on}")
        row.named += bool(g["name"])
        if g["name"] and g["labels"][0]["name"] != g["name"]:
            row.wrong_names.append(f"{g['labels'][0]['name']!r} != {g['name']!r}")
    row.unnamed = sum(1 for a in anns if not a["name"])
    return row


@pytest.fixture(scope="module")
def measured(appbrowser: HeadlessBrowser, site: str) -> list[tuple[Row, list[str], list[str]]]:
    """Per page state: the row, and the selectors of two loads."""

    async def go() -> list[tuple[Row, list[str], list[str]]]:
        out = []
        async with await BusClient.connect(runtime_dir=appbrowser.runtime_dir) as c:
            for page, query, ready in STATES:
                sels = []
                for _ in range(2):
                    await load(c, f"{site}/{page}.html{query}", ready)
                    shot = await shoot(c)
                    anns = shot["annotations"]
                    sels.append([a["selector"] or a["shadow_selector"] for a in anns])
                gt, ambiguous = await truth(c, anns)
                row = measure(f"{page}{query}", gt, anns)
                row.ambiguous = ambiguous
                out.append((row, sels[0], sels[1]))
        return out

    rows = asyncio.run(go())
    print()
    head = ["page", "ground truth", "labelled", "recall", "duplicates", "unnamed", "tree's names"]
    print("| " + " | ".join(head) + " |")
    for r, _, _ in rows:
        recall = f"{r.labelled / r.truth:.0%}" if r.truth else "-"
        names = f"{r.named - len(r.wrong_names)}/{r.named}"
        cells = [r.page, r.truth, r.labelled, recall, r.duplicates, r.unnamed, names]
        print("| " + " | ".join(map(str, cells)) + " |")
        for what, items in (("missed", r.missed), ("names", r.wrong_names), ("twice", r.dups)):
            if items:
                print(f"    {what}: {items}")
    return rows


async def holds(c: BusClient, check: str) -> bool:
    """Whether `check` becomes true within a few seconds (the page reacts asynchronously), and
    then the page stops moving (a sorted grid slides its rows: the next label is read after)."""
    settled = f"({check}) && document.getAnimations().every((a) => a.playState !== 'running')"
    return await becomes_true(c, settled)


async def click_through(c: BusClient, site: str, page: str) -> list[str]:
    """Each of the page's label clicks in turn; what went wrong."""
    await load(c, f"{site}/{page}.html", READY[page])
    bad = []
    for role, name, nth, check in CLICKS[page]:
        shot = await shoot(c)
        typing = role == "type"
        want = "textbox" if typing else role
        found = [a for a in shot["annotations"] if a["role"] == want and a["name"] == name]
        if len(found) <= nth:
            bad.append(f"{page}: no label {want} {name!r}")
            continue
        act = {"action": "type", "text": "ls"} if typing else {"action": "click"}
        act |= {"label": found[nth]["label"], "screenshot_id": shot["screenshot_id"]}
        await c.request("interact", act, timeout=30)
        if not await holds(c, check):
            bad.append(f"{page}: {role} {name!r} did not make {check}")
    return bad


def test_label_clicks_reach_their_control(appbrowser: HeadlessBrowser, site: str) -> None:
    async def go() -> list[str]:
        async with await BusClient.connect(runtime_dir=appbrowser.runtime_dir) as c:
            return [b for page in CLICKS for b in await click_through(c, site, page)]

    bad = asyncio.run(go())
    total = sum(len(v) for v in CLICKS.values())
    print(f"\nlabel actions with the expected effect: {total - len(bad)}/{total}")
    assert not bad, bad


def test_every_control_of_the_accessibility_tree_is_labelled_once(
    measured: list[tuple[Row, list[str], list[str]]],
) -> None:
    for r, _, _ in measured:
        assert r.truth > 0, r.page
        assert r.labelled / r.truth >= 0.98, (r.page, r.missed)
        assert r.duplicates == 0, r.page


def test_label_names_are_the_accessibility_tree_names(
    measured: list[tuple[Row, list[str], list[str]]],
) -> None:
    for r, _, _ in measured:
        assert not r.wrong_names, (r.page, r.wrong_names)


def test_selectors_are_unique_and_the_same_on_two_loads(
    measured: list[tuple[Row, list[str], list[str]]],
) -> None:
    for r, first, second in measured:
        assert first == second, (r.page, set(first) ^ set(second))
        assert r.ambiguous == 0, r.page


def test_a_dense_page_gets_more_than_100_labels_and_a_note_when_cut(
    appbrowser: HeadlessBrowser, site: str
) -> None:
    """The grid's visible cells and controls (target all_visible) are well over 100."""

    async def go() -> tuple[dict[str, Any], dict[str, Any]]:
        async with await BusClient.connect(runtime_dir=appbrowser.runtime_dir) as c:
            await load(c, f"{site}/grid.html", READY["grid"])
            args = {"annotate": True, "target": "all_visible"}
            full = await c.request("screenshot", {**args, "max_annotations": 500}, timeout=40)
            cut = await c.request("screenshot", {**args, "max_annotations": 40}, timeout=40)
            return full, cut

    full, cut = asyncio.run(go())
    total = full["total_found"]
    assert 100 < total <= 500 and len(full["annotations"]) == total, total
    assert not any("not labelled" in n for n in full["notes"]), full["notes"]
    # The core draws a badge for each of them (it once stopped at 100).
    blank = io.BytesIO()
    size = (round(full["css_size"]["width"]), round(full["css_size"]["height"]))
    Image.new("RGB", size, "white").save(blank, "PNG")
    boxes = [image.Box(label=a["label"], **a["bounds"]) for a in full["annotations"]]
    assert image.shrink(blank.getvalue(), boxes=boxes, css_size=size).badges_drawn == total
    assert len(cut["annotations"]) == 40
    note = f"{total - 40} more controls are not labelled (max_annotations=40, {total} found)"
    assert any(n.startswith(note) for n in cut["notes"]), cut["notes"]


async def click_a_row_box(c: BusClient, site: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The grid loaded, its first row's selection box clicked by label: the box's label as it
    was, and the click (to click it again)."""
    await load(c, f"{site}/grid.html", READY["grid"])
    shot = await shoot(c)
    box = next(a for a in shot["annotations"] if "row selection" in a["name"])
    act = {"action": "click", "label": box["label"], "screenshot_id": shot["screenshot_id"]}
    await c.request("interact", act, timeout=30)
    return box, act


def test_a_toggle_keeps_its_selector_when_its_state_changes(
    appbrowser: HeadlessBrowser, site: str
) -> None:
    # The grid names its row checkboxes "… (unchecked)" and renames them once checked: the label
    # the assistant got before its first click must still reach the box for a second one.
    async def go() -> tuple[str, str, bool, bool]:
        async with await BusClient.connect(runtime_dir=appbrowser.runtime_dir) as c:
            box, act = await click_a_row_box(c, site)
            on = await holds(c, "document.querySelectorAll('.ag-row-selected').length === 1")
            await c.request("interact", act, timeout=30)
            off = await holds(c, "document.querySelectorAll('.ag-row-selected').length === 0")
            return box["name"], box["selector"], on, off

    name, selector, on, off = asyncio.run(go())
    assert "(unchecked)" in name and "unchecked" not in selector, selector
    assert on and off


def test_the_look_right_after_a_click_reuses_a_read_that_shows_the_click(
    appbrowser: HeadlessBrowser, site: str
) -> None:
    """ag-grid selects a row at the click on its checkbox and renames the box "… (checked)". The
    page reads its labels again after the click (while the click waits for a navigation to
    start, page/discover.js readAhead, or once it is quiet), so the annotated screenshot right
    after the click reuses a read instead of reading the grid beside its capture: one made after
    the click, which names the box as checked. (tests/e2e/test_interact.py shows the read made
    while an action waits on its own.)"""

    async def go() -> tuple[dict[str, Any], dict[str, Any]]:
        async with await BusClient.connect(runtime_dir=appbrowser.runtime_dir) as c:
            box, _ = await click_a_row_box(c, site)
            return box, await shoot(c)

    box, after = asyncio.run(go())
    assert "(unchecked)" in box["name"], box["name"]
    now = next(a for a in after["annotations"] if a["selector"] == box["selector"])
    assert "(checked)" in now["name"] and "(unchecked)" not in now["name"], now["name"]
    assert after["timings"]["labels_reused"] == 1
