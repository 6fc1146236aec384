"""The encoders page text goes through (generate/encode.py): hostile strings in, tokens that
cannot end early out — checked by Node itself (one process for all examples) and markdown-it."""

from __future__ import annotations

import json
import re
import subprocess

from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from shotbridge.generate import encode

HOSTILE_PARTS = [
    "\n",
    "\r",
    "\r\n",
    "\u2028",
    "\u2029",
    "\x85",
    "\x0b",
    "\x0c",
    "\x00",
    "'",
    '"',
    "`",
    "```",
    "````",
    "${process.exit(1)}",
    "*/",
    "/*",
    "//",
    "\\",
    "\\'",
    "</script>",
    "<!--",
    "-->",
    "\ud800",
    "\udfff",
    "\ud83d\ude00",
    "\U0001f600",
    "\u202e",
    "\u2066",
    "\u200f",
    "](javascript:alert(1))",
    "[x](javascript:alert(1))",
    "![t](http://evil.test/beacon.png)",
    "<img src=x onerror=alert(1)>",
    "<script>alert(1)</script>",
    "http://evil.test/x",
    "www.evil.test",
    "a@evil.test",
    "# heading",
    "1. item",
    "- item",
    "| a | b |",
    "\nrequire('fs').writeFileSync('/tmp/pwned', 'x')//",
    "&lt;",
    "**bold**",
]

hostile = st.lists(st.one_of(st.sampled_from(HOSTILE_PARTS), st.text(max_size=8)), max_size=8).map(
    "".join
)
MD = MarkdownIt("commonmark", {"html": True}).enable("table")


def node(program: str, data: object) -> object:
    """Run ``program`` (reads JSON ``input``, prints JSON) in one Node process."""
    run = subprocess.run(
        [
            "node",
            "-e",
            f"const input = JSON.parse(require('fs').readFileSync(0, 'utf8'));\n{program}",
        ],
        input=json.dumps(data, ensure_ascii=True),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout)


def expected_js_value(text: str) -> str:
    """What a JS string literal of ``text`` must hold: the text, lone surrogates replaced."""
    return encode.valid(text)


# ---- JavaScript: every literal and comment is checked by Node in one batch ---------------------


def test_js_strings_comments_and_url_matchers_parse_and_round_trip() -> None:
    cases: list[str] = []

    @settings(max_examples=300, database=None)
    @given(hostile)
    def collect(text: str) -> None:
        cases.append(text)

    collect()
    cases += HOSTILE_PARTS
    sources = []
    for text in cases:
        lit = encode.js_string(text)
        assert "\n" not in lit and "\r" not in lit and "\u2028" not in lit and "\u2029" not in lit
        assert "</script" not in lit.lower()
        # One statement assigning the literal, a comment that must swallow the rest of its line,
        # and a URL predicate that must accept exactly the recorded URL.
        sources.append(
            f"{encode.line_comment(text)}\nresult.push({lit});\n"
            f"result.push(({encode.url_matcher(text)})({{ href: {lit} }}));\n"
            f"result.push(({encode.url_matcher(text)})({{ href: {lit} + 'x' }}));\n"
        )
    out = node(
        """
const vm = require('vm');
const results = input.map((src) => {
  const result = [];
  try { new vm.Script(src).runInNewContext({ result }); } catch (e) { return 'ERROR ' + e; }
  return result;
});
console.log(JSON.stringify(results));
""",
        sources,
    )
    assert isinstance(out, list)
    for text, got in zip(cases, out, strict=True):
        assert got == [expected_js_value(text), True, False], (text, got)


def test_js_data_is_an_expression_of_the_same_data() -> None:
    values: list[object] = []
    scalars = st.one_of(hostile, st.integers(-(2**40), 2**40), st.booleans(), st.none())

    @settings(max_examples=100, database=None)
    @given(
        st.recursive(
            scalars,
            lambda inner: st.lists(inner, max_size=3) | st.dictionaries(hostile, inner, max_size=3),
            max_leaves=8,
        )
    )
    def collect(value: object) -> None:
        values.append(value)

    collect()

    def fix(v: object) -> object:
        if isinstance(v, str):
            return encode.valid(v)
        if isinstance(v, list):
            return [fix(x) for x in v]
        if isinstance(v, dict):
            return {encode.valid(k): fix(x) for k, x in v.items()}
        return v

    sources = [f"result.push({encode.js_data(v)});" for v in values]
    out = node(
        """
const vm = require('vm');
console.log(JSON.stringify(input.map((src) => {
  const result = [];
  try { new vm.Script(src).runInNewContext({ result }); } catch (e) { return 'ERROR ' + e; }
  return result[0];
})));
""",
        sources,
    )
    assert isinstance(out, list)
    for v, got in zip(values, out, strict=True):
        assert got == fix(v), (v, got)


def test_comments_are_one_line_and_capped() -> None:
    c = encode.line_comment("a\nb\rc\u2028d\u2029e\x85f\x0bg\x0ch" + "x" * 500)
    assert c.startswith("// a b c d e f g h")
    assert len(c) <= 3 + encode.COMMENT_LIMIT
    assert encode.line_comment("\u202eevil\u2066") == "// evil"


def test_url_matcher_is_never_a_glob() -> None:
    m = encode.url_matcher("http://x.test/**/a?b=*{c,d}")
    assert m == "(url) => url.href === 'http://x.test/**/a?b=*{c,d}'"


# ---- Markdown ----------------------------------------------------------------------------------


def _inline_tokens(md: str) -> list:
    out = []
    for tok in MD.parse(md):
        out.append(tok)
        out += tok.children or []
    return out


@settings(max_examples=300, database=None)
@given(hostile)
def test_md_text_makes_no_html_link_image_or_block(text: str) -> None:
    span = md_line = encode.md_text(text)
    assert "\n" not in span
    tokens = _inline_tokens(f"Prefix {md_line}\n\n{md_line}")
    kinds = {t.type for t in tokens}
    assert not kinds & {
        "html_inline",
        "html_block",
        "link_open",
        "image",
        "fence",
        "code_block",
        "heading_open",
        "bullet_list_open",
        "ordered_list_open",
        "blockquote_open",
        "table_open",
        "hr",
        "em_open",
        "strong_open",
        "code_inline",
    }, kinds
    html = MD.render(span)
    assert "<script" not in html and "<img" not in html and 'href="javascript:' not in html
    # No autolink can start: every scheme separator, www. and @ inside a word is escaped.
    assert not re.search(r"(?<!\\)(://|www\.|\w@\w)", span), span
    # What shows is the text itself (one line, invisible characters as spaces).
    alone = _inline_tokens(span)
    shown = "".join(t.content for t in alone if t.type == "text")
    assert " ".join(shown.split()) == encode.one_line(text, 1 << 30)


@settings(max_examples=300, database=None)
@given(hostile)
def test_md_code_is_one_code_span_of_the_text(text: str) -> None:
    span = encode.md_code(text)
    tokens = [t for t in _inline_tokens(f"Prefix {span} suffix") if t.children is None]
    codes = [t for t in tokens if t.type == "code_inline"]
    assert len(codes) == 1, tokens
    assert codes[0].content.strip() == encode.one_line(text, encode.CODE_SPAN_LIMIT).strip() or (
        not text.strip()
    )
    assert not {t.type for t in tokens} & {"html_inline", "link_open", "image"}


@settings(max_examples=300, database=None)
@given(hostile, st.sampled_from(["", "js", "text"]))
def test_md_fence_is_never_closed_early(text: str, lang: str) -> None:
    block = encode.md_fence(text, lang)
    md = f"Before\n\n{block}\n\nAfter <b>x</b>"
    tokens = MD.parse(md)
    fences = [t for t in tokens if t.type == "fence"]
    assert len(fences) == 1
    assert fences[0].info == lang
    body = block.split("\n", 1)[1].rsplit("\n", 1)[0]
    assert fences[0].content == body + "\n"
    # Everything after the fence is still ours: the paragraph "After …" follows it.
    assert tokens[-2].content.startswith("After")
