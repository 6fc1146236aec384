"""Hostile page text through every field of every generator: no page text escapes into code.

Hypothesis builds sessions whose URLs, titles, element names, labels, test ids, selectors, typed
values, keys, error messages and sources, request URLs and bodies, observed texts and environment
carry newlines, quotes, backticks, ``${}``, ``*/``, ``</script>``, U+2028/2029, lone surrogates,
NULs, bidi marks, Markdown links and HTML. Every generated script and spec must compile in Node
(all examples in one process) and, run against a fake ``playwright`` module, call nothing but
Playwright and hand the page exactly the recorded literals; every bug report must render with
markdown-it to no HTML, no link, no foreign image, and fences that hold exactly what they should.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from shotbridge.generate import encode, redact
from shotbridge.generate.playwright import generate_test_spec, reproduction_script
from shotbridge.generate.report import bug_report
from shotbridge.generate.steps import Session, build_steps
from shotbridge.wire.timeline import ErrorEntry

from tests.session_builder import Rec, target
from tests.test_encode import HOSTILE_PARTS, hostile, node

BASE = "http://127.0.0.1:8000/"
MD = MarkdownIt("commonmark", {"html": True}).enable("table")

# Runs a generated script with a fake `playwright` / `@playwright/test`: every call is logged
# (path and arguments), test bodies and callbacks run with fakes, and any other `require` or a
# new global is reported. Awaiting a fake gives the fake back (it is not thenable).
HARNESS = r"""
const vm = require('vm');
function run(src) {
  const log = [];
  const bad = [];
  const pending = [];
  const fakes = new WeakSet();
  function fake(path) {
    const proxy = new Proxy(function () {}, {
      get(_t, prop) {
        if (prop === 'then') return undefined;
        if (prop === Symbol.toPrimitive) return () => path;
        if (typeof prop === 'symbol') return undefined;
        return fake(path + '.' + prop);
      },
      apply(_t, _this, args) {
        const name = path.split('.').pop();
        const shown = args.map((a) => (typeof a === 'function' ? '<fn>' : a));
        if (fakes.has(args[0])) shown[0] = '<fake>';
        if (name === 'waitForURL') shown.push(input.urls.filter((u) => args[0]({ href: u })));
        log.push([name, shown]);
        for (const a of args) {
          if (typeof a === 'function' && !fakes.has(a) && name !== 'waitForURL') {
            const r = a(fake(path + '.cb'));
            if (r && typeof r.then === 'function') pending.push(r);
          }
        }
        return fake(path + '()');
      },
    });
    fakes.add(proxy);
    return proxy;
  }
  const sandbox = {
    require: (m) => {
      if (m === 'playwright' || m === '@playwright/test') return fake(m);
      bad.push('require ' + m);
      return {};
    },
    process: { env: {}, exit: (c) => bad.push('exit ' + c) },
    console: {
      log: (...a) => log.push(['console.log', a]),
      error: (...a) => bad.push('error ' + a),
    },
  };
  const ctx = vm.createContext(sandbox);
  const before = new Set(Object.keys(ctx));
  try {
    new vm.Script(src).runInContext(ctx);
  } catch (e) {
    return { error: String(e) };
  }
  return new Promise((resolve) => setImmediate(async () => {
    await Promise.all(pending);
    await new Promise((r) => setImmediate(r));
    await Promise.all(pending);
    const leaked = Object.keys(ctx).filter((k) => !before.has(k));
    resolve({ log, bad, leaked });
  }));
}
(async () => {
  const out = [];
  for (const src of input.sources) out.push(await run(src));
  console.log(JSON.stringify(out));
})();
"""

FIELDS = ["path", "title", "name", "label", "testid", "selector", "text", "value"]
FIELDS += ["key", "message", "source", "next", "body", "agent"]
fields = st.fixed_dictionaries(dict.fromkeys(FIELDS, hostile))


def hostile_session(f: dict[str, str]) -> Session:
    url = BASE + f["path"]
    r = Rec().nav(url, f["title"])
    r.observe({f["selector"]: "1", "#clock": "1"}).observe({f["selector"]: "2", "#clock": "2"})
    for unique in ({"testid": True}, {"role": True}, {"label": True}, {}):
        r.click(
            role="button",
            tag="button",
            name=f["name"],
            label=f["label"],
            testid=f["testid"],
            selector=f["selector"],
            text=f["text"],
            unique=unique,
        )
    r.fill(
        f["value"], selector=f["selector"], tag="input", label=f["label"], unique={"label": True}
    )
    r.act("select", target=target(selector=f["selector"], tag="select"), value=f["value"])
    r.act("press", target=target(selector=f["selector"], tag="input"), key=f["key"])
    r.nav(BASE + f["next"])  # caused by the press: waitForURL
    r.request("POST", url + "?q=" + f["path"], json.dumps({f["key"]: f["body"], "n": [f["value"]]}))
    r.request("PUT", url, f"a={f['body']}&b=2")
    r.request("POST", url, "<x>" + f["body"])
    r.request("POST", url, json.dumps({"query": f["body"], "variables": {"v": f["value"]}}))
    r.click(selector="#b", tag="button", role="button", name=f["name"], unique={"role": True})
    r._add(ErrorEntry(kind="exception", message=f["message"], url=url, source=f["source"]))
    r.request("GET", BASE + f["path"], None, status=500)
    r.shot(1, "explicit")
    return r.session(
        environment={"user_agent": f["agent"], "viewport": {"width": 800, "height": 600}},
        images={1: b"\xff\xd8\xff"},
    )


ESM_IMPORT = "import { test, expect } from '@playwright/test';"
CJS_REQUIRE = "const { test, expect } = require('@playwright/test');"


def scripts(s: Session) -> list[str]:
    """Every generated script, run by the harness (a CommonJS sandbox): the ESM spec's one
    import line (a constant, no page text) is swapped for its require."""
    esm = generate_test_spec(s, module="esm", language="js", include_fixtures=True)
    assert esm.count(ESM_IMPORT) == 1
    return [
        reproduction_script(s),
        reproduction_script(s, include_screenshots=True, include_fixtures=True),
        generate_test_spec(s, module="cjs", language="js"),
        generate_test_spec(
            s, include_fixtures=True, assert_no_errors=False, module="cjs", language="js"
        ),
        esm.replace(ESM_IMPORT, CJS_REQUIRE),
    ]


def page_url_of(path: str) -> str:
    """The URL the generators must hand the page: repaired (lone surrogates → U+FFFD), then
    redacted, since redaction percent-encodes what it replaces and UTF-8 has no surrogates."""
    return redact.url(encode.valid(BASE + path))


def page_text(value: str) -> str:
    """What the generators must hand the page for a recorded value: it, repaired, minus
    secrets."""
    return redact.text(encode.valid(value))


def test_generated_code_compiles_and_hands_the_page_only_the_literals() -> None:
    examples: list[dict[str, str]] = [dict.fromkeys(FIELDS, part) for part in HOSTILE_PARTS]
    # Once flaky: redaction replaced the card and percent-encoded the lone surrogate beside it.
    examples.append(dict.fromkeys(FIELDS, "?q=4111111111111111\udfff&e=a@b.co\ud800"))
    examples.append(dict.fromkeys(FIELDS, "//[\udfff](javascript:alert(1))"))

    @settings(max_examples=60, database=None, deadline=None)
    @given(fields)
    def collect(f: dict[str, str]) -> None:
        examples.append(f)

    collect()
    sources: list[str] = []
    urls: list[str] = []
    for f in examples:
        s = hostile_session(f)
        sources += scripts(s)
        urls.append(page_url := page_url_of(f["next"]))
        urls.append(page_url + "#not-it")
    out = node(HARNESS, {"sources": sources, "urls": urls})
    assert isinstance(out, list)
    for i, got in enumerate(out):
        f = examples[i // len(scripts(hostile_session(examples[0])))]
        context = (f, sources[i])
        assert "error" not in got, context
        assert got["bad"] == [] and got["leaked"] == [], (got, context)
        calls: dict[str, list[Any]] = {}
        for name, args in got["log"]:
            calls.setdefault(name, []).append(args)
        assert [a[0] for a in calls["fill"]] == [page_text(f["value"])], context
        assert [a[0] for a in calls["selectOption"]] == [page_text(f["value"])], context
        assert [a[0] for a in calls["press"]] == [encode.valid(f["key"]) or "Enter"], context
        assert calls["goto"][0][0] == page_url_of(f["path"]), context
        # The URL predicate accepts the recorded URL and nothing else offered.
        matched = set(calls["waitForURL"][0][-1])
        assert matched == {page_url_of(f["next"])}, context
        testid = redact.text(encode.valid(f["testid"]), pairs=False)
        assert all(args == [testid] for args in calls.get("getByTestId", [])), context


@settings(max_examples=80, database=None, deadline=None)
@given(fields)
@example(dict.fromkeys(FIELDS, "?q=4111111111111111\udfff&e=a@b.co\ud800"))
def test_bug_report_renders_no_html_links_or_foreign_images(f: dict[str, str]) -> None:
    s = hostile_session(f)
    md = bug_report(s, title=f["title"] or None)
    tokens = MD.parse(md)
    flat = [t for tok in tokens for t in [tok, *(tok.children or [])]]
    kinds = {t.type for t in flat}
    assert not kinds & {"html_inline", "html_block", "link_open"}, kinds
    images = [t for t in flat if t.type == "image"]
    assert [t.attrGet("src") for t in images] == ["data:image/jpeg;base64,/9j/"]
    html = MD.render(md)
    assert "<script" not in html and 'href="javascript:' not in html
    assert html.count("<img") == 1
    # Fences: the error message, then the whole reproduction script — none closed early.
    fences = [t for t in tokens if t.type == "fence"]
    assert len(fences) == 2, [t.content[:80] for t in fences]
    assert fences[-1].info == "js"
    assert fences[-1].content.rstrip("\n") == reproduction_script(s).rstrip()
    # Headings are ours alone.
    headings = [t for t in tokens if t.type == "heading_open"]
    assert len(headings) == 7


def test_the_issue_payload_stays_a_comment() -> None:
    """The reviewer's payload: a synthetic ErrorEvent whose source closes the comment line."""
    r = Rec().nav(BASE)
    r.click(selector="#b", tag="button")
    payload = "x.js\nrequire('fs').writeFileSync('/tmp/shotbridge-pwned', 'owned')//"
    r._add(
        ErrorEntry(kind="exception", message="boom\u2028require('fs')", url=BASE, source=payload)
    )
    s = r.session()
    out = node(HARNESS, {"sources": scripts(s), "urls": []})
    assert isinstance(out, list)
    for got in out:
        assert got.get("bad") == [] and got.get("leaked") == [], got
    for code in scripts(s):
        lines = [ln for ln in code.splitlines() if "writeFileSync" in ln or "require('fs')" in ln]
        # A comment, or the recorded error's source as one string literal (js_data).
        assert lines and all(ln.lstrip().startswith(("// ", "'source': '")) for ln in lines), lines
    assert len(build_steps(s)) == 2
