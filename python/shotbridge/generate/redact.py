"""Secrets out of everything the host shows or generates: by key and by value.

*By key*: a value whose key (JSON/form/query key, XML element or attribute, GraphQL argument,
``key: value`` in text) names a secret. Key words come from the shared rule list
(``extension/secret-rules.json``, ``key_words``) and are matched loosely, see
:func:`is_secret_key`.

*By value*: wherever it stands, text shaped like a secret — a Luhn-valid card number, an SSN,
``Bearer``/``Basic`` credentials, a JWT, a cloud or API key (AWS, Stripe, GitHub, Google,
Slack), a private-key block, the user-info part of a URL.

Redaction replaces, it never drops: the shape of the data (keys, separators, quotes) survives so
a request or a URL stays usable with the placeholder.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable
from functools import cache
from importlib import resources
from typing import Any
from urllib.parse import quote_plus, unquote_plus, urlsplit, urlunsplit

PLACEHOLDER = "REDACTED"
SHORT_WORD = 4  # key words this short must be a whole word of the key ("pin", not "shipping")


@cache
def key_words() -> tuple[frozenset[str], frozenset[str]]:
    """(short words, long words) of the shared rule list, normalised."""
    path = resources.files("shotbridge") / "extension" / "secret-rules.json"
    words = {_norm(w) for w in json.loads(path.read_text(encoding="utf-8"))["key_words"]}
    return (
        frozenset(w for w in words if len(w) <= SHORT_WORD),
        frozenset(w for w in words if len(w) > SHORT_WORD),
    )


def _norm(key: str) -> str:
    return re.sub(r"[\W_]+", "", key.lower())


_WORDS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def is_secret_key(key: str) -> bool:
    """Whether ``key`` names a secret. Keys are compared lowercased without ``_ - .``, so
    ``pass_word``, ``apiKey`` and ``X-Api-Key`` match ``password`` and ``apikey``; a long word
    may stand anywhere in the key (``newPassword``), a short one only as a whole word of it
    (``pin_code`` and ``userPIN`` match ``pin``; ``shipping`` and ``spinner`` do not)."""
    short, long_ = key_words()
    flat = _norm(key)
    if any(w in flat for w in long_):
        return True
    return any(w.lower() in short for w in _WORDS.findall(key))


# ---- by value --------------------------------------------------------------------------------

_PRIVATE_KEY = re.compile(
    r"-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)", re.S
)
_BEARER = re.compile(r"\b(Bearer|Token)(\s+|%20|\+)(?=[\w.~+/=-]*\d)[\w.~+/-]{8,}=*", re.I)
_BASIC = re.compile(r"\b(Basic)(\s+|%20|\+)([A-Za-z0-9+/]{6,}={0,2})")
_TOKENS = re.compile(
    r"""
      \beyJ[\w-]{4,}\.[\w-]{4,}\.[\w-]*             # JWT
    | \b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b  # AWS access key id
    | \b(?:sk|rk|pk)_(?:live|test)_[0-9A-Za-z]{6,}  # Stripe
    | \bwhsec_[0-9A-Za-z]{10,}
    | \bgh[pousr]_[A-Za-z0-9]{20,}                  # GitHub
    | \bgithub_pat_[A-Za-z0-9_]{20,}
    | \bAIza[0-9A-Za-z_-]{30,}                      # Google API key
    | \bya29\.[0-9A-Za-z_-]{20,}                    # Google OAuth access token
    | \bxox[abposr]-[0-9A-Za-z-]{10,}               # Slack
    | \bglpat-[0-9A-Za-z_-]{20,}                    # GitLab
    """,
    re.X,
)
_CARD = re.compile(r"(?<![\d.])[2-6](?:[ -]?\d){12,18}(?![\d])")
_SSN = re.compile(r"(?<![\d-])\d{3}-\d{2}-\d{4}(?![\d-])")
_URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s\"'<>`]+")
# key: value / key=value / "key": "value", in any text (GraphQL arguments, JSON that did not
# parse, logs). Only the key and separator are matched first, so a harmless pair ("https:")
# never swallows a secret one after it. A GraphQL variable reference ($x) is not a value.
_KEY = re.compile(r"""(?P<q>["']?)(?P<key>[A-Za-z_][\w.-]*)(?P=q)\s*[:=]\s*""")
_VAL = re.compile(r""""(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|(?!\$)[^\s&,;)}\]"'<>]+""")
_XML = re.compile(r"<(?P<tag>[A-Za-z_][\w.:-]*)(?P<attrs>[^<>]*)>(?P<val>[^<]*)</(?P=tag)\s*>")


def luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch) * (2 if i % 2 else 1)
        total += d - 9 if d > 9 else d
    return total % 10 == 0


def is_card(text: str) -> bool:
    """A payment card number: 13–19 digits (spaces or dashes between), Luhn-valid."""
    digits = re.sub(r"[ -]", "", text)
    return digits.isdigit() and 13 <= len(digits) <= 19 and luhn(digits) and digits[0] in "23456"


def text(value: str, *, card: str = PLACEHOLDER, pairs: bool = True) -> str:
    """``value`` with every secret found in it (by shape, or by a secret key beside it)
    replaced; ``card`` replaces card numbers (fixtures use a test card). ``pairs=False`` skips
    ``key: value`` pairs, for UI copy such as a label "PIN: 4 digits" that names no secret."""
    if not value:
        return value
    out = _PRIVATE_KEY.sub(
        rf"-----BEGIN \1PRIVATE KEY----- {PLACEHOLDER} -----END PRIVATE KEY-----", value
    )
    out = _BEARER.sub(lambda m: f"{m[1]}{m[2]}{PLACEHOLDER}", out)
    out = _BASIC.sub(_basic, out)
    out = _TOKENS.sub(PLACEHOLDER, out)
    out = _URL.sub(lambda m: url(m[0]), out)
    out = _XML.sub(_xml_element, out)
    out = _pairs(out) if pairs else out
    out = _CARD.sub(lambda m: card if is_card(m[0]) else m[0], out)
    return _SSN.sub(PLACEHOLDER, out)


def _basic(m: re.Match[str]) -> str:
    try:
        decoded = base64.b64decode(m[3] + "=" * (-len(m[3]) % 4), validate=True)
    except (binascii.Error, ValueError):
        return m[0]
    return f"{m[1]}{m[2]}{PLACEHOLDER}" if b":" in decoded else m[0]


def _pairs(value: str) -> str:
    out: list[str] = []
    pos = 0
    for m in _KEY.finditer(value):
        if m.start() < pos or not is_secret_key(m["key"]):
            continue
        v = _VAL.match(value, m.end())
        if v is None or v[0].strip("\"'") == PLACEHOLDER:
            continue
        quote = v[0][0] if v[0][0] in "\"'" else ""
        out += [value[pos : m.end()], quote, PLACEHOLDER, quote]
        pos = v.end()
    out.append(value[pos:])
    return "".join(out)


def _xml_element(m: re.Match[str]) -> str:
    if not is_secret_key(m["tag"]) or not m["val"].strip():
        return m[0]
    return f"<{m['tag']}{m['attrs']}>{PLACEHOLDER}</{m['tag']}>"


# ---- selectors -------------------------------------------------------------------------------

# A ``[value…]`` attribute condition: any operator, quoting and case flag.
_VALUE_ATTR = re.compile(
    r"""\[\s*value\s*(?:[~|^$*]?=\s*(?:"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|[^\]\s]+)\s*[is]?\s*)?\]""",
    re.I,
)
CAPTION_TYPES = frozenset({"submit", "button", "reset"})


def selector(value: str, input_type: str = "") -> str:
    """A CSS selector (or a ``host >>> inner`` path) with no ``[value=…]`` condition. A form
    field's value is data — a page may mirror what is typed, a password included, into the
    attribute — so it never names an element; only a button-like input (``submit``, ``button``,
    ``reset``, given as ``input_type``), whose value is its visible caption, keeps it."""
    if input_type.lower() in CAPTION_TYPES:
        return value
    return _VALUE_ATTR.sub("", value)


# ---- URLs ------------------------------------------------------------------------------------


def url(value: str, replace: Callable[[str, str], str] | None = None) -> str:
    """``value`` with no user-info, secret query or fragment parameters replaced, and every
    part checked by :func:`text`. Untouched parameters keep their exact encoding.
    ``replace(key, value)`` picks a parameter's replacement, as for :func:`query`."""
    try:
        parts = urlsplit(value)
    except ValueError:
        return text(value)
    netloc = parts.netloc.rsplit("@", 1)[-1] if "@" in parts.netloc else parts.netloc
    if netloc != parts.netloc:
        netloc = f"{PLACEHOLDER}@{netloc}"
    return urlunsplit(
        parts._replace(
            netloc=netloc,
            path=_encoded(parts.path, text),
            query=query(parts.query, replace),
            fragment=(
                query(parts.fragment, replace)
                if "=" in parts.fragment
                else _encoded(parts.fragment, text)
            ),
        )
    )


def query(raw: str, replace: Callable[[str, str], str] | None = None) -> str:
    """A query string (``a=1&b=2``) with secret parameters replaced. ``replace(key, value)``
    picks the replacement (default: the placeholder for secret keys, :func:`text` otherwise)."""
    out = []
    for piece in raw.split("&"):
        key_raw, eq, val_raw = piece.partition("=")
        key, val = unquote_plus(key_raw), unquote_plus(val_raw)
        new = (replace or _query_value)(key, val)
        out.append(piece if new == val else f"{key_raw}{eq or '='}{quote_plus(new, safe='@:/')}")
    return "&".join(out)


def _query_value(key: str, val: str) -> str:
    return PLACEHOLDER if val and is_secret_key(key) else text(val)


def _encoded(raw: str, fix: Callable[[str], str]) -> str:
    """Apply ``fix`` to the decoded form of a percent-encoded part; re-encode only a change."""
    decoded = unquote_plus(raw) if "%" in raw else raw
    fixed = fix(decoded)
    return raw if fixed == decoded else fixed


# ---- structured data -------------------------------------------------------------------------

_CVV_KEY = re.compile(r"c[vs]v|cvc|csc|security.?code|card.?code|^code$", re.I)


def card_context(obj: dict[str, Any]) -> bool:
    """Whether a mapping describes a payment card (a card key or a card-shaped value)."""
    return any(
        _norm(k) in ("card", "cardnumber", "ccnumber", "number", "pan", "cc")
        or (isinstance(v, str | int) and is_card(str(v)))
        for k, v in obj.items()
    )


def is_cvv(key: str, value: Any, in_card: bool) -> bool:
    """A 3–4 digit code under a CVV-like key, beside a card."""
    return (
        in_card
        and bool(_CVV_KEY.search(_norm(key) or key))
        and bool(re.fullmatch(r"\d{3,4}", str(value).strip()))
    )


def data(value: Any, key: str = "", *, card: str = PLACEHOLDER) -> Any:
    """JSON-like data with secrets replaced: by key (any depth), by value, CVVs beside cards."""
    if isinstance(value, dict):
        in_card = card_context(value)
        return {
            k: PLACEHOLDER if is_cvv(k, v, in_card) else data(v, k, card=card)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [data(v, key, card=card) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if key and is_secret_key(key):
        return PLACEHOLDER
    if isinstance(value, int) and is_card(str(value)):
        return card
    if isinstance(value, str):
        return text(value, card=card)
    return value


def body(raw: str | None) -> str | None:
    """A request or response body of any kind (JSON, form, XML, text) with secrets replaced."""
    if raw is None:
        return None
    try:
        parsed = json.loads(raw)
    except ValueError:
        parsed = None
    else:
        if isinstance(parsed, dict | list):
            return json.dumps(data(parsed), ensure_ascii=False)
    stripped = raw.strip()
    if (
        "=" in stripped
        and not stripped.startswith(("<", "{", "["))
        and not re.search(r"\s", stripped)
    ):
        return query(stripped)
    return text(raw)
