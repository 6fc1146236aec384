"""Redaction by key and by value (redact.py), and the corpus: requests carrying known secrets of
every kind → reproduction script, Playwright test with fixtures, bug report and
observe(screenshots) hold none of them (what the page carried must not leak into artefacts)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from shotbridge.generate import redact
from shotbridge.generate.playwright import generate_test_spec, reproduction_script
from shotbridge.generate.report import bug_report
from shotbridge.mcp_server.tools.screenshots import _event

from tests.session_builder import Rec

API = "http://127.0.0.1:8000/api"


@pytest.mark.parametrize(
    "key",
    ["password", "pass_word", "PASSWORD", "pwd", "userPwd", "apiKey", "api_key", "x-api-key",
     "X-Api-Key", "client.secret", "access_token", "refreshToken", "Authorization", "x-auth",
     "sessionId", "cvv", "cvv2", "CVC", "userPIN", "pin_code", "ssn", "cardNumber", "otp",
     "jwt", "csrf_token", "iban"],
)  # fmt: skip
def test_secret_keys_match_loosely(key: str) -> None:
    assert redact.is_secret_key(key)


@pytest.mark.parametrize(
    "key",
    ["shipping", "passenger", "spinner", "opinion", "author", "authorName", "sidebar",
     "considered", "name", "email", "title", "description", "compass", "bypass_cache"],
)  # fmt: skip
def test_short_words_do_not_match_inside_other_words(key: str) -> None:
    assert not redact.is_secret_key(key)


def test_key_words_come_from_the_shared_rule_list() -> None:
    short, long_ = redact.key_words()
    assert {"pin", "pwd", "otp", "ssn"} <= short and {"password", "apikey"} <= long_


# ---- the corpus ------------------------------------------------------------------------------

# (kind, request body or URL, the secret's distinctive substring)
CARD = "4111 1111 1111 1111"
SECRETS: list[tuple[str, str]] = [
    ("password", "hunter2-Pa55"),
    ("pass_word", "Zebra-9-Quill"),
    ("card", "4111111111111111"),
    ("card spaced", "1111 1111 1111"),  # the distinctive middle of CARD
    ("cvv", "737"),
    ("ssn", "078-05-1120"),
    ("bearer", "sk_live_4eC39HqLyjWDarjtT1zdp7dc"),
    ("jwt", "eyJzdWIiOiIxMjM0NTY3ODkwIn0"),
    ("aws", "AKIAIOSFODNN7EXAMPLE"),
    ("stripe test", "rk_live_51Habcdefghij"),
    ("github", "ghp_16C7e42F292c6912E7710c838347Ae178B4a"),
    ("github pat", "github_pat_11ABCDEFG0123456789_abcdefghij"),
    ("google", "AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI"),
    ("slack", "xoxb-263594206564-FGqddMF8t08v8N7Oq4i57vs1"),
    ("private key", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC"),
    ("graphql inline", "GqlInlineS3cret"),
    ("graphql variable", "GqlVarS3cret"),
    ("xml", "XmlS3cretValue"),
    ("form", "FormS3cretValue"),
    ("text", "TextS3cretValue"),
    ("query token", "QueryTok3nValue"),
    ("query apikey", "ApiK3yInQuery"),
    ("userinfo", "UserInfoPa55"),
    ("fragment", "FragmentTok3n"),
    ("basic", "YWxpY2U6c2VjcmV0cGFzcw"),  # alice:secretpass
    ("error message token", "ErrTok3nValue"),
]


def corpus() -> Rec:
    r = Rec().nav("http://alice:UserInfoPa55@127.0.0.1:8000/start?token=QueryTok3nValue")
    r.request("POST", f"{API}/login", json.dumps({"user": "a", "pass_word": "Zebra-9-Quill"}))
    r.request(
        "POST",
        f"{API}/graphql",
        json.dumps(
            {
                "query": 'mutation { login(user: "a", password: "GqlInlineS3cret") { ok } }',
                "variables": {"input": {"secret": "GqlVarS3cret", "name": "Blue"}},
            }
        ),
    )
    r.request(
        "POST",
        f"{API}/pay",
        json.dumps(
            {
                "card": {"number": CARD, "code": "737", "exp": "12/30"},
                "backup_card": "4111111111111111",
                "ssn": "078-05-1120",
                "note": "Authorization: Bearer sk_live_4eC39HqLyjWDarjtT1zdp7dc",
                "password": "hunter2-Pa55",
                "id_token": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.sgn4tur3",
            }
        ),
    )
    r.request(
        "PUT",
        f"{API}/keys?api_key=ApiK3yInQuery",
        "aws=AKIAIOSFODNN7EXAMPLE&gh=ghp_16C7e42F292c6912E7710c838347Ae178B4a"
        "&client_secret=FormS3cretValue&slack=xoxb-263594206564-FGqddMF8t08v8N7Oq4i57vs1",
    )
    r.request(
        "POST",
        f"{API}/xml",
        "<login><user>a</user><password>XmlS3cretValue</password>"
        "<pat>github_pat_11ABCDEFG0123456789_abcdefghij</pat></login>",
    )
    r.request(
        "POST",
        f"{API}/text",
        "token: TextS3cretValue\nkey AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI\n"
        "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n"
        "Basic YWxpY2U6c2VjcmV0cGFzcw== rk_live_51Habcdefghij",
    )
    r.click(selector="#pay", tag="button", role="button", name="Pay", unique={"role": True})
    r.nav(f"{API}/done#access_token=FragmentTok3n")
    r.fill("078-05-1120", selector="#ssn", tag="input", label="Tax id", unique={"label": True})
    r.click(selector="#b", tag="button", role="button", name="Break", unique={"role": True})
    r.error(f"Request failed: {API}/x?token=ErrTok3nValue card {CARD}")
    r.request("GET", f"{API}/fail?session=ErrTok3nValue", None, status=500)
    r.shot(1, "error")
    return r


def artefacts(r: Rec) -> dict[str, str]:
    s = r.session(images={1: b"\xff\xd8\xff"})
    events = [_event(e) for e in s.entries]
    return {
        "reproduction script": reproduction_script(s, include_fixtures=True),
        "reproduction script (plain)": reproduction_script(s, include_screenshots=True),
        "test with fixtures": generate_test_spec(s, include_fixtures=True),
        "bug report": bug_report(s),
        "observe(screenshots) events": json.dumps(events, ensure_ascii=False),
    }


def test_corpus_secrets_appear_in_no_artefact() -> None:
    found = {
        (kind, name)
        for name, text in artefacts(corpus()).items()
        for kind, secret in SECRETS
        if secret in text
    }
    assert found == set()


def test_corpus_fixtures_keep_their_shape() -> None:
    code = generate_test_spec(corpus().session(), fixtures="writes")
    assert 'login(user: "a", password: "REDACTED")' in code.replace("\\'", "'")
    assert "'number': '4242424242424242'" in code and "'exp': '12/30'" in code
    assert "'name': 'Blue'" in code
    assert "client_secret" in code and "'test-token'" in code


def test_the_corpus_leaked_before() -> None:
    """The same corpus through the recorded text alone (no redaction) holds every secret: the
    corpus is a real test of the generators, not of an empty session."""
    raw = json.dumps([e.model_dump() for e in corpus().session().entries], ensure_ascii=False)
    assert all(secret in raw.replace("\\n", "\n") for _, secret in SECRETS)


# ---- shapes ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("Order 1700000000123 shipped", True),  # a timestamp is not a card
        ("Call 555-123-4567", True),
        ("Basic information", True),
        ("Bearer tokens are described below", True),
        ("TypeError: x is undefined", True),
        ("mutation($p: String!) { login(password: $p) }", True),  # a variable, not a value
    ],
)
def test_no_false_positives_on_ordinary_text(text: str, kept: bool) -> None:
    assert (redact.text(text) == text) is kept


def test_urls_keep_harmless_parameters_exactly() -> None:
    url = "https://x.test/p?a=b%20c&token=abc&q=1#frag"
    assert redact.url(url) == "https://x.test/p?a=b%20c&token=REDACTED&q=1#frag"
    assert redact.url("https://u:p@x.test/") == "https://REDACTED@x.test/"


def test_cvv_is_redacted_only_beside_a_card() -> None:
    card: dict[str, Any] = {"number": "4111111111111111", "code": "123"}
    assert redact.data(card) == {"number": "REDACTED", "code": "REDACTED"}
    assert redact.data({"code": "123", "zip": "12345"}) == {"code": "123", "zip": "12345"}


def test_bodies_of_every_kind() -> None:
    assert json.loads(redact.body('{"a": {"apiKey": "k"}}') or "") == {"a": {"apiKey": "REDACTED"}}
    assert redact.body("user=a&pwd=x") == "user=a&pwd=REDACTED"
    assert redact.body("<r><secret>s</secret></r>") == "<r><secret>REDACTED</secret></r>"
    assert redact.body("pin: 1234") == "pin: REDACTED"
