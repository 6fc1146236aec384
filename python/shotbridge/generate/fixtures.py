"""Test data fixtures from the recorded network traffic.

The data a page showed was usually created by requests the session made: the POST/PUT requests
seen before the failing step are replayed (through Playwright's API request context) before the
test, so the test finds the same data. Rules:

* GraphQL (a JSON body with a ``query`` string) keeps its query as recorded but for secrets
  written inline as arguments (``login(password: "…")``); ``variables`` are sanitised and
  trimmed.
* When the session's first write was an auth request (a login URL or a body with a password),
  it becomes a login step that runs first, with test credentials, and the fixtures use its
  cookies.
* Arrays are trimmed to the items the steps need (items containing a value the steps typed,
  selected or clicked); with none needed, one item is kept as an example.
* Emails, passwords, tokens and every other secret are replaced with test-safe values, by key
  (the shared rule list, matched loosely) and by value (cards, SSNs, bearer tokens, JWTs, cloud
  keys: :mod:`shotbridge.redact`), in JSON, form, XML and text bodies and in URLs. Request headers
  are never recorded, so no Authorization header can leak.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from pydantic import Field

from shotbridge import redact
from shotbridge.generate.steps import Step
from shotbridge.protocol import Model
from shotbridge.timeline import NetworkEntry

TEST_EMAIL = "user@example.test"
TEST_PASSWORD = "test-password"
TEST_TOKEN = "test-token"
TEST_CARD = "4242424242424242"  # a well-known test card: Luhn-valid, charges nothing
WRITE_METHODS = ("POST", "PUT")

AUTH_URL = re.compile(r"(log-?in|sign-?in|auth|session|token|oauth)", re.I)
PASSWORD_KEY = re.compile(r"pass(word|wd|phrase)?$|^pwd$|secret|^pin$|otp|one.?time", re.I)
EMAIL_KEY = re.compile(r"e-?mail", re.I)
CREDENTIAL_KEY = re.compile(r"user|login|e-?mail|remember|code|otp|captcha|tenant|grant", re.I)
EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$")
JWT = re.compile(r"^eyJ[\w-]+\.[\w-]+\.[\w-]*$")
EMAIL_IN_TEXT = re.compile(r"[^@\s\"'<>&=]+@[^@\s\"'<>&]+\.[A-Za-z]{2,}")
OPAQUE_TOKEN = re.compile(r"^(?=.*\d)(?=.*[A-Za-z])[\w\-.~+/=]{32,}$")


class FixtureRequest(Model):
    method: str
    url: str
    json_body: Any = None  # parsed and sanitised JSON (GraphQL included)
    form: dict[str, str] | None = None  # form-urlencoded bodies
    text: str | None = None  # anything else, sanitised as a whole
    graphql: bool = False
    status: int = 0  # what the app answered during the session


class Fixtures(Model):
    login: FixtureRequest | None = None
    requests: list[FixtureRequest] = Field(default_factory=list)

    @property
    def empty(self) -> bool:
        return self.login is None and not self.requests


# ---- sanitising -----------------------------------------------------------------------------


class Sanitizer:
    """Replaces secrets and personal data; the same email always maps to the same test email."""

    def __init__(self) -> None:
        self.emails: dict[str, str] = {}

    def email(self, value: str) -> str:
        if value not in self.emails:
            n = len(self.emails)
            self.emails[value] = TEST_EMAIL if n == 0 else f"user{n + 1}@example.test"
        return self.emails[value]

    def value(self, key: str, value: Any) -> Any:
        if isinstance(value, dict):
            card = redact.card_context(value)
            return {
                redact.text(k): TEST_TOKEN if redact.is_cvv(k, v, card) else self.value(k, v)
                for k, v in value.items()
            }
        if isinstance(value, list):
            return [self.value(key, v) for v in value]
        if isinstance(value, bool) or value is None:
            return value
        if key and (PASSWORD_KEY.search(key) or redact.is_secret_key(key)):
            return TEST_PASSWORD if PASSWORD_KEY.search(key) else TEST_TOKEN
        if not isinstance(value, str):
            return TEST_CARD if isinstance(value, int) and redact.is_card(str(value)) else value
        if EMAIL_KEY.search(key) or EMAIL.match(value):
            return self.email(value) if EMAIL.match(value) else TEST_EMAIL
        if JWT.match(value) or OPAQUE_TOKEN.match(value):
            return TEST_TOKEN
        return self.text(value)

    def text(self, value: str) -> str:
        """Free text: secrets by shape and beside secret keys; emails mapped."""
        return EMAIL_IN_TEXT.sub(lambda m: self.email(m[0]), redact.text(value, card=TEST_CARD))

    def url(self, url: str) -> str:
        return redact.url(url, lambda k, v: str(self.value(k, v)))


# ---- trimming -------------------------------------------------------------------------------


def needed_values(steps: list[Step]) -> set[str]:
    """Strings the steps use: typed and selected values, names of what was clicked."""
    out: set[str] = set()
    for step in steps:
        a = step.action
        if a is None:
            continue
        for v in (a.value, a.option, a.target.name, a.target.text, a.target.label):
            if v and not a.secret and len(v) >= 2:
                out.add(v.strip())
    return out


def _mentions(value: Any, needed: set[str]) -> bool:
    if isinstance(value, dict):
        return any(_mentions(v, needed) for v in value.values())
    if isinstance(value, list):
        return any(_mentions(v, needed) for v in value)
    text = str(value).strip()
    return bool(text) and any(text == n or (len(text) >= 3 and text in n) for n in needed)


def trim(value: Any, needed: set[str]) -> Any:
    """Arrays keep only items that mention a needed value; at least one as an example."""
    if isinstance(value, dict):
        return {k: trim(v, needed) for k, v in value.items()}
    if isinstance(value, list):
        items = [trim(v, needed) for v in value]
        if len(items) <= 1:
            return items
        kept = [v for v in items if _mentions(v, needed)]
        return kept or items[:1]
    return value


# ---- planning -------------------------------------------------------------------------------


def is_graphql(entry: NetworkEntry, body: Any) -> bool:
    return isinstance(body, dict) and isinstance(body.get("query"), str)


def is_auth(entry: NetworkEntry, body: Any) -> bool:
    """A login: an auth-looking URL, or a body of credentials only (a password beside other
    data is a form that happens to hold one, not a login)."""
    if AUTH_URL.search(urlsplit(entry.url).path):
        return True
    keys = _keys(body) if isinstance(body, dict | list) else set()
    return any(PASSWORD_KEY.search(k) for k in keys) and all(
        PASSWORD_KEY.search(k) or CREDENTIAL_KEY.search(k) for k in keys
    )


def _keys(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in _keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in _keys(v)}
    return set()


def _parse(entry: NetworkEntry) -> tuple[Any, str]:
    """The body as JSON (kind ``json``), a form (``form``) or text (``text``)."""
    raw = entry.request_body
    if raw is None:
        return None, "none"
    try:
        return json.loads(raw), "json"
    except ValueError:
        pass
    flat = raw.strip()
    # Form-urlencoded bodies hold no raw whitespace: text with an "=" in it is still text.
    if "=" in flat and not flat.startswith(("<", "{", "[")) and not re.search(r"\s", flat):
        return dict(parse_qsl(flat, keep_blank_values=True)), "form"
    return raw, "text"


def to_request(entry: NetworkEntry, san: Sanitizer, needed: set[str]) -> FixtureRequest:
    body, kind = _parse(entry)
    req = FixtureRequest(method=entry.method, url=san.url(entry.url), status=entry.status)
    if kind == "json":
        if is_graphql(entry, body):
            req.graphql = True
            # The operation is the contract: kept, but for secrets written inline in it.
            out = {"query": redact.text(body["query"], card=TEST_CARD)}
            if "operationName" in body:
                out["operationName"] = san.value("operationName", body["operationName"])
            if "variables" in body:
                out["variables"] = trim(san.value("variables", body["variables"]), needed)
            req.json_body = out
        else:
            req.json_body = trim(san.value("", body), needed)
    elif kind == "form":
        form = san.value("", body)
        req.form = {k: str(v) for k, v in form.items()}
    elif kind == "text":
        req.text = san.text(body)
    return req


def plan(steps: list[Step], failing: Step | None) -> Fixtures:
    """Fixtures for a test of ``steps``: the writes before ``failing`` (and a login)."""
    san = Sanitizer()
    needed = needed_values(steps)
    writes = [r for s in steps for r in s.requests if r.method.upper() in WRITE_METHODS]
    out = Fixtures()
    if writes:
        first = writes[0]
        if is_auth(first, _parse(first)[0]):
            out.login = to_request(first, san, set())
            writes = writes[1:]
    # "Before the failing step": requests its own action triggered are what the test is about.
    limit = failing.seq if failing is not None else 1 << 62
    for entry in writes:
        if entry.seq < limit and (200 <= entry.status < 400 or entry.status == 0):
            out.requests.append(to_request(entry, san, needed))
    return out
