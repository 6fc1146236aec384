"""The only way page text enters generated code and Markdown: one encoder per target.

Everything a page controls — URLs, titles, element names and selectors, typed values, error
messages and their sources, request bodies — is data. It reaches a generated artefact only
through one of these functions, each of which yields a token that cannot end early:

* :func:`js_string` — a JavaScript/TypeScript string literal (also safe inside ``<script>``);
* :func:`js_data` — JSON-like data (fixture bodies) as a JavaScript expression;
* :func:`line_comment` — a ``//`` comment with no line terminator in it, length-capped;
* :func:`md_text` — a Markdown text span: no HTML, links, images, autolinks or block syntax;
* :func:`md_code` — a Markdown code span on one line;
* :func:`md_fence` — a fenced code block whose fence is longer than any backtick run inside;
* :func:`url_matcher` — a ``waitForURL``/``toHaveURL`` argument that is never a glob.

Playwright reads a *string* given to ``waitForURL`` as a glob (``*``, ``**``, ``?``, ``{}``), so a
URL is matched by a predicate comparing ``url.href`` with a literal instead.
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

COMMENT_LIMIT = 200  # code points of page text in one comment
CODE_SPAN_LIMIT = 300

# Bidirectional controls (Trojan Source): shown, never obeyed, in code and reports.
BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
# Everything any of our targets treats as a line break.
LINE_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
_JS_SHORT = {
    "\\": "\\\\",
    "'": "\\'",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\b": "\\b",
    "\f": "\\f",
    "\v": "\\v",
    "<": "\\x3C",  # no </script> or <!-- when the code is pasted into HTML
}
_MD_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_MD_ALWAYS = frozenset("\\`*_[](){}!|~$^#")
_MD_IN_WORD = frozenset(".:@")
_MD_LEADING = frozenset("-+=.)")
_MD_ORDERED = re.compile(r"\d{1,9}")


def valid(text: str) -> str:
    """Well-formed Unicode: surrogate pairs joined, lone surrogates → U+FFFD."""
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def _invisible(ch: str) -> bool:
    """Characters that are not visible text: controls, format, separators, unassigned."""
    return ch in BIDI or unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn")


# ---- JavaScript ------------------------------------------------------------------------------


def js_string(value: str) -> str:
    """A single-quoted JavaScript/TypeScript string literal of ``value``, as Playwright's codegen
    writes them. Every control, format, separator or non-character is a ``\\u`` escape, so the
    literal is one line, shows what it holds, and survives any editor or HTML embedding."""
    out = ["'"]
    for ch in valid(value):
        short = _JS_SHORT.get(ch)
        if short is not None:
            out.append(short)
        elif _invisible(ch):
            out.append(f"\\x{ord(ch):02X}" if ord(ch) < 0x100 else _u(ch))
        else:
            out.append(ch)
    out.append("'")
    return "".join(out)


def _u(ch: str) -> str:
    cp = ord(ch)
    return f"\\u{cp:04X}" if cp < 0x10000 else f"\\u{{{cp:X}}}"


def js_data(value: Any, indent: str = "") -> str:
    """JSON-like data (dicts, lists, strings, numbers, booleans, null) as a JavaScript
    expression, every string and key a :func:`js_string`; multi-line, two-space indented."""
    inner = indent + "  "
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [f"{inner}{js_string(str(k))}: {js_data(v, inner)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + f"\n{indent}}}"
    if isinstance(value, list | tuple):
        if not value:
            return "[]"
        items = [inner + js_data(v, inner) for v in value]
        return "[\n" + ",\n".join(items) + f"\n{indent}]"
    if isinstance(value, str):
        return js_string(value)
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return json.dumps(value) if value == value and abs(value) != float("inf") else "null"
    return js_string(str(value))


def line_comment(text: str, limit: int = COMMENT_LIMIT) -> str:
    """``// text`` on one line: every line terminator (LF, CR, U+2028/2029, NEL, VT, FF…) and
    every invisible character becomes a space, whitespace runs collapse, and the page's part is
    cut to ``limit`` code points."""
    return "// " + one_line(text, limit)


def one_line(text: str, limit: int) -> str:
    """``text`` as one visible line of at most ``limit`` code points (plus "…")."""
    chars = [" " if ch in LINE_BREAKS or _invisible(ch) else ch for ch in valid(text)]
    flat = " ".join("".join(chars).split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def url_matcher(url: str) -> str:
    """A ``waitForURL``/``toHaveURL`` argument matching exactly ``url`` (never a glob)."""
    return f"(url) => url.href === {js_string(url)}"


# ---- Markdown --------------------------------------------------------------------------------


def md_text(text: str, limit: int | None = None) -> str:
    """A Markdown text span showing ``text`` literally, on one line. ``& < >`` become entities
    (no HTML); emphasis, code, link, image, table, math and reference characters are
    backslash-escaped (no links or images); ``. : @`` inside a word are escaped too, which
    splits every autolink (``http://``, ``www.``, ``evil.com``, ``a@b.co``) and mention; and a
    leading list, heading or quote marker is escaped, so the span starts no block."""
    flat = one_line(text, limit if limit is not None else 1 << 30)
    out = []
    for i, ch in enumerate(flat):
        nxt = flat[i + 1 : i + 2]
        if ch in _MD_ENTITIES:
            out.append(_MD_ENTITIES[ch])
        elif _md_escaped(ch, flat[:i], nxt):
            out.append("\\" + ch)
        else:
            out.append(ch)
    return "".join(out)


def _md_escaped(ch: str, before: str, nxt: str) -> bool:
    return (
        ch in _MD_ALWAYS
        or (ch in _MD_IN_WORD and bool(nxt.strip()))
        or (ch in _MD_LEADING and (not before or bool(_MD_ORDERED.fullmatch(before))))
    )


def md_code(text: str, limit: int = CODE_SPAN_LIMIT) -> str:
    """A Markdown code span of ``text`` on one line: delimited by one more backtick than the
    longest run inside, padded when the text begins or ends with a backtick or space."""
    body = one_line(text, limit) or " "
    ticks = "`" * (_longest_run(body, "`") + 1)
    if body[0] in "` " or body[-1] in "` ":
        body = f" {body} "
    return f"{ticks}{body}{ticks}"


def md_fence(text: str, lang: str = "") -> str:
    """A fenced code block of ``text``: line endings normalised to LF, invisible characters
    (but tabs and line feeds) dropped, and a fence of at least three backticks that is longer
    than any backtick run inside, so nothing in ``text`` can close it."""
    body = valid(text).replace("\r\n", "\n")
    body = "".join(
        "\n" if ch in LINE_BREAKS else ch
        for ch in body
        if ch in LINE_BREAKS or ch == "\t" or not _invisible(ch)
    )
    fence = "`" * max(3, _longest_run(body, "`") + 1)
    info = "".join(ch for ch in lang if ch.isalnum() or ch in "+-_")
    return f"{fence}{info}\n{body.rstrip()}\n{fence}"


def _longest_run(text: str, ch: str) -> int:
    best = run = 0
    for c in text:
        run = run + 1 if c == ch else 0
        best = max(best, run)
    return best
