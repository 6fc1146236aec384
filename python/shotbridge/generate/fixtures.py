"""Test data fixtures from the recorded network traffic.

Default (``routes``): the GET responses that populated the page during the session are served
again with ``page.route``, in the order they came (per URL; the last one repeats), so the test
sees the same data whatever the backend holds. Writes are never sent by the fixtures: the
replayed steps send them, once. Large arrays are summarised as valid JSON (a few items, the count
noted), a body the recorder cut at its size limit is closed after its last complete item, and
volatile fields (ids, timestamps, metadata) and personal data (emails, phones, national ids,
secrets) become stable fakes. What cannot be served is listed with the reason.

Writes as setup (``plan``, the older way, kept for ``include_fixtures`` on the reproduction
script): the data a page showed was usually created by requests the session made: the POST/PUT
requests seen before the failing step are replayed (through Playwright's API request
context) before the test, so the test finds the same data. Rules:

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
  keys: :mod:`shotbridge.generate.redact`), in JSON, form, XML and text bodies and in URLs. Request
  headers
  are never recorded, so no Authorization header can leak.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from pydantic import Field

from shotbridge.generate import redact
from shotbridge.generate.encode import valid
from shotbridge.generate.steps import Step
from shotbridge.wire.model import Model
from shotbridge.wire.timeline import NetworkEntry

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


ID_KEY = re.compile(r"^(id|uuid|guid|_id)$|[a-z](_id|Id|_uuid|Uuid)$|^(request|trace|etag)", re.I)
TIME_KEY = re.compile(
    r"(^|_)(at|on|time|date|timestamp|ts)$|[a-z](At|On|Time|Date)$|^(created|updated|modified|"
    r"expires|timestamp|date|time|now|last_?seen)",
    re.I,
)
META_KEY = re.compile(r"^_?(meta|metadata|_links|debug|server_?time|version)$", re.I)
PHONE_KEY = re.compile(r"phone|mobile|tel(ephone)?$|fax|msisdn", re.I)
NATIONAL_ID_KEY = re.compile(r"ssn|national_?id|passport|tax_?id|nino|sin$|dni|aadhaar", re.I)
PHONE = re.compile(r"^\+?\(?\d[\d\s().-]{6,18}\d$")
ISO_TIME = re.compile(
    r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$"
)
FAKE_TIME = "2024-01-01T00:00:00Z"
FAKE_EPOCH_S = 1_704_067_200
FAKE_PHONE = "+1 555 0100"
FAKE_NATIONAL_ID = "000-00-0000"


class Sanitizer:
    """Replaces secrets, personal data and volatile fields with stable fakes: the same email (or
    id) always maps to the same fake, so relations between records survive."""

    def __init__(self, volatile: bool = False) -> None:
        self.emails: dict[str, str] = {}
        self.ids: dict[Any, Any] = {}
        self.volatile = volatile  # ids, timestamps and metadata too (served responses)

    def fake_id(self, value: Any) -> Any:
        if value not in self.ids:
            n = len(self.ids) + 1
            self.ids[value] = 1000 + n if isinstance(value, int) else f"id-{n}"
        return self.ids[value]

    def _volatile(self, key: str, value: Any) -> tuple[bool, Any]:
        if META_KEY.search(key):
            return True, {} if isinstance(value, dict) else None
        if isinstance(value, dict | list | bool) or value is None:
            return False, value
        if ID_KEY.search(key) and isinstance(value, int | str):
            return True, self.fake_id(value)
        if TIME_KEY.search(key) or (isinstance(value, str) and ISO_TIME.match(value)):
            if isinstance(value, int | float):
                return True, FAKE_EPOCH_S * 1000 if value > 1e11 else FAKE_EPOCH_S
            return True, FAKE_TIME
        return False, value

    def _personal(self, key: str, value: Any) -> tuple[bool, Any]:
        if isinstance(value, dict | list | bool) or value is None:
            return False, value
        text = str(value)
        if redact.is_card(text):
            return False, value  # a card, handled with the secrets
        if NATIONAL_ID_KEY.search(key):
            return True, FAKE_NATIONAL_ID
        if PHONE_KEY.search(key) or (
            isinstance(value, str)
            and PHONE.match(text)
            and sum(c.isdigit() for c in text) >= 7
            and any(c in text for c in " +-().")
        ):
            return True, FAKE_PHONE
        return False, value

    def email(self, value: str) -> str:
        if value not in self.emails:
            n = len(self.emails)
            self.emails[value] = TEST_EMAIL if n == 0 else f"user{n + 1}@example.test"
        return self.emails[value]

    def value(self, key: str, value: Any) -> Any:
        if self.volatile and key and META_KEY.search(key):
            return {} if isinstance(value, dict) else None  # server metadata: varies, unused
        if isinstance(value, dict):
            card = redact.card_context(value)
            return {
                redact.text(valid(k)): TEST_TOKEN if redact.is_cvv(k, v, card) else self.value(k, v)
                for k, v in value.items()
            }
        if isinstance(value, list):
            return [self.value(key, v) for v in value]
        if isinstance(value, bool) or value is None:
            return value
        if self.volatile:
            done, fake = self._volatile(key, value)
            if done:
                return fake
        done, fake = self._personal(key, value)
        if done:
            return fake
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
        clean = redact.text(valid(value), card=TEST_CARD)
        return EMAIL_IN_TEXT.sub(lambda m: self.email(m[0]), clean)

    def url(self, url: str) -> str:
        # Repaired first: redaction percent-encodes what it replaces, and UTF-8 has no surrogates.
        return redact.url(valid(url), lambda k, v: str(self.value(k, valid(v))))


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
    if AUTH_URL.search(_url_path(entry.url)):
        return True
    keys = _keys(body) if isinstance(body, dict | list) else set()
    return any(PASSWORD_KEY.search(k) for k in keys) and all(
        PASSWORD_KEY.search(k) or CREDENTIAL_KEY.search(k) for k in keys
    )


def _url_path(url: str) -> str:
    """The path of ``url``; a page-made URL urlsplit refuses (``http://[x``) counts as text."""
    try:
        return urlsplit(url).path
    except ValueError:
        return url


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


# ---- served responses (the default) ---------------------------------------------------------

READ_METHODS = ("GET",)
MAX_ITEMS = 10  # items kept of a long array; the spec notes how many there were
RECORDER_BODY_LIMIT = 10_000  # the extension keeps this many characters of a body


class RouteResponse(Model):
    url: str
    status: int = 200
    content_type: str = "application/json"
    json_body: Any = None
    text: str | None = None
    notes: list[str] = Field(default_factory=list)  # summaries: "120 items, 10 kept"


class Routes(Model):
    """GET responses to serve with ``page.route``, per URL in the order they came."""

    responses: list[RouteResponse] = Field(default_factory=list)
    skipped: list[str] = Field(default_factory=list)  # what could not be served, and why

    @property
    def by_url(self) -> dict[str, list[RouteResponse]]:
        out: dict[str, list[RouteResponse]] = {}
        for r in self.responses:
            out.setdefault(r.url, []).append(r)
        return out


def summarise(value: Any, notes: list[str], path: str = "$") -> Any:
    """``value`` with every array longer than ``MAX_ITEMS`` cut to its first items (noted)."""
    if isinstance(value, dict):
        return {k: summarise(v, notes, f"{path}.{k}") for k, v in value.items()}
    if isinstance(value, list):
        if len(value) > MAX_ITEMS:
            notes.append(f"{path}: {len(value)} items, {MAX_ITEMS} kept like these")
            value = value[:MAX_ITEMS]
        return [summarise(v, notes, f"{path}[]") for v in value]
    return value


def salvage(text: str) -> Any:
    """The JSON value of ``text`` cut short (the recorder's size limit): closed right after its
    last complete array item or object member, so it never ends mid-token. None if nothing is."""
    stack: list[str] = []
    safe: tuple[int, list[str]] | None = None
    i, n = 0, len(text)
    in_string = False
    while i < n:
        c = text[i]
        if in_string:
            if c == "\\":
                i += 2
                continue
            if c == '"':
                in_string = False
                if stack and stack[-1] == "[":
                    safe = (i + 1, stack.copy())
        elif c == '"':
            in_string = True
        elif c in "[{":
            stack.append(c)
        elif c in "]}":
            if not stack:
                return None
            stack.pop()
            if stack:
                safe = (i + 1, stack.copy())
        elif c == "," and stack:
            safe = (i, stack.copy())
        i += 1
    if safe is None:
        return None
    end, open_ = safe
    closers = "".join("]" if b == "[" else "}" for b in reversed(open_))
    try:
        return json.loads(text[:end] + closers)
    except ValueError:
        return None


def _route_response(entry: NetworkEntry, san: Sanitizer) -> tuple[RouteResponse | None, str]:
    raw = entry.response_body
    what = f"{entry.method} {san.url(entry.url)}"
    if raw is None:
        return None, f"{what}: no body was recorded (not JSON, or network capture was off)"
    notes: list[str] = []
    try:
        body = json.loads(raw)
    except ValueError:
        if len(raw) < RECORDER_BODY_LIMIT - 1:
            return None, f"{what}: the recorded body is not valid JSON"
        body = salvage(raw)
        if body is None:
            return None, f"{what}: the body was cut by the recorder's 10 KB limit"
        notes.append("cut by the recorder at 10 KB: closed after its last complete item")
    out = RouteResponse(
        url=san.url(entry.url),
        status=entry.status or 200,
        content_type=entry.content_type or "application/json",
        json_body=summarise(san.value("", body), notes),
    )
    out.notes = notes
    return out, ""


def routes(steps: list[Step]) -> Routes:
    """The recorded GET responses to serve in the test (writes are left to the replayed steps)."""
    san = Sanitizer(volatile=True)
    out = Routes()
    for entry in (r for s in steps for r in s.requests):
        if entry.method.upper() not in READ_METHODS:
            continue
        if not 200 <= entry.status < 300:
            out.skipped.append(f"GET {san.url(entry.url)}: answered {entry.status}, not served")
            continue
        resp, why = _route_response(entry, san)
        if resp is None:
            out.skipped.append(why)
        else:
            out.responses.append(resp)
    return out


def seed(steps: list[Step], failing: Step | None) -> Fixtures:
    """Seed mode: setup requests for the data that existed before the session.

    Each item of a recorded GET list response that no write of the session created is posted to
    that list's URL before the test; the session's own writes are never sent (the steps send
    them). Needs a REST-shaped backend (POST to the list URL creates an item).
    """
    san = Sanitizer()
    needed = needed_values(steps)
    written: list[Any] = []
    for r in (r for s in steps for r in s.requests if r.method.upper() in WRITE_METHODS):
        try:
            written.append(json.loads(r.request_body or ""))
        except ValueError:
            continue
    out = Fixtures()
    seen_urls: set[str] = set()
    for entry in (r for s in steps for r in s.requests if r.method.upper() in READ_METHODS):
        if entry.url in seen_urls or not 200 <= entry.status < 300:
            continue
        seen_urls.add(entry.url)
        try:
            body = json.loads(entry.response_body or "")
        except ValueError:
            continue
        if not isinstance(body, list):
            continue
        for item in body:
            if any(_created_by(item, w) for w in written):
                continue
            data = (
                {k: v for k, v in item.items() if not ID_KEY.search(k)}
                if isinstance(item, dict)
                else item
            )
            out.requests.append(
                FixtureRequest(
                    method="POST",
                    url=san.url(entry.url),
                    json_body=trim(san.value("", data), needed),
                )
            )
    return out


def _created_by(item: Any, write: Any) -> bool:
    """Whether a listed item is the one a write created (every written field matches)."""
    if not isinstance(item, dict) or not isinstance(write, dict) or not write:
        return False
    return all(item.get(k) == v for k, v in write.items())
