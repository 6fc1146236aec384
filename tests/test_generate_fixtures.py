"""Fixtures from recorded requests: sanitising, trimming, GraphQL and auth (no browser)."""

from __future__ import annotations

import json

from shotbridge.generate import fixtures as fx
from shotbridge.generate.encode import js_string
from shotbridge.generate.playwright import generate_test_spec, reproduction_script
from shotbridge.generate.steps import build_steps, failing_step
from shotbridge.wire.timeline import NetworkEntry

from tests.session_builder import Rec

API = "http://127.0.0.1:8000/api"


def plan_of(r: Rec) -> fx.Fixtures:
    steps = build_steps(r.session())
    return fx.plan(steps, failing_step(steps))


def test_sanitiser_replaces_emails_passwords_and_tokens() -> None:
    san = fx.Sanitizer()
    data = {
        "email": "alice@corp.example",
        "contact": {"mail": "bob@corp.example", "backup": "alice@corp.example"},
        "password": "hunter2",
        "pwd": "x",
        "api_key": "sk_live_123",
        "session": {"token": "abc"},
        "jwt_field": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig",
        "opaque": "a8f5f167f44f4964e6c998dee827110c1234abcd",
        "name": "Widget",
        "count": 3,
    }
    out = san.value("", data)
    assert out["email"] == fx.TEST_EMAIL
    assert out["contact"] == {"mail": "user2@example.test", "backup": fx.TEST_EMAIL}
    assert out["password"] == out["pwd"] == fx.TEST_PASSWORD
    assert out["api_key"] == fx.TEST_TOKEN and out["session"] == {"token": fx.TEST_TOKEN}
    assert out["jwt_field"] == fx.TEST_TOKEN and out["opaque"] == fx.TEST_TOKEN
    assert (out["name"], out["count"]) == ("Widget", 3)
    assert "hunter2" not in json.dumps(out) and "corp.example" not in json.dumps(out)


def test_query_strings_are_sanitised() -> None:
    san = fx.Sanitizer()
    assert san.url(f"{API}/x?token=s3cr3t&page=2") == f"{API}/x?token=test-token&page=2"
    assert san.url(f"{API}/x") == f"{API}/x"


def test_arrays_are_trimmed_to_what_the_steps_need() -> None:
    needed = {"Blue shirt"}
    body = {
        "items": [{"name": "Red hat"}, {"name": "Blue shirt"}, {"name": "Green sock"}],
        "tags": ["a", "b", "c"],
        "one": [1],
    }
    assert fx.trim(body, needed) == {
        "items": [{"name": "Blue shirt"}],
        "tags": ["a"],  # nothing needed: one example item
        "one": [1],
    }


def test_posts_before_the_failing_step_become_fixtures() -> None:
    r = Rec().nav("http://127.0.0.1:8000/")
    r.request("GET", f"{API}/items", None)
    r.request("POST", f"{API}/items", json.dumps({"name": "Blue shirt", "owner": "a@b.co"}), 201)
    r.request("PUT", f"{API}/items/1", "qty=2&email=a%40b.co")
    r.request("POST", f"{API}/broken", json.dumps({"x": 1}), 500)  # failed writes are no fixture
    r.click(selector="#blue", tag="button", role="button", name="Blue shirt")
    r.click(selector="#buy", tag="button").error("TypeError: boom")
    r.request("POST", f"{API}/orders", json.dumps({"id": 9}), 201)  # after the failure: not data
    plan = plan_of(r)
    assert plan.login is None
    assert [(q.method, q.url) for q in plan.requests] == [
        ("POST", f"{API}/items"),
        ("PUT", f"{API}/items/1"),
    ]
    assert plan.requests[0].json_body == {"name": "Blue shirt", "owner": fx.TEST_EMAIL}
    assert plan.requests[1].form == {"qty": "2", "email": fx.TEST_EMAIL}


def test_graphql_keeps_its_query_and_sanitises_variables() -> None:
    query = "mutation Add($input: ItemInput!) {\n  addItem(input: $input) { id }\n}"
    body = {
        "query": query,
        "operationName": "Add",
        "variables": {"input": {"email": "x@y.org", "tags": ["a", "b"]}},
    }
    r = Rec().nav("http://127.0.0.1:8000/")
    r.request("POST", f"{API}/graphql", json.dumps(body))
    r.click(selector="#go", tag="button").error("boom")
    (req,) = plan_of(r).requests
    assert req.graphql
    assert req.json_body == {
        "query": query,  # verbatim, line breaks included
        "operationName": "Add",
        "variables": {"input": {"email": fx.TEST_EMAIL, "tags": ["a"]}},
    }
    code = generate_test_spec(r.session(), fixtures="writes")
    assert "// GraphQL: the query is kept as recorded." in code
    assert js_string(query) in code


def test_a_session_that_began_with_login_gets_a_login_step_first() -> None:
    r = Rec().nav("http://127.0.0.1:8000/login")
    r.request("POST", f"{API}/session", json.dumps({"email": "me@corp.example", "password": "pw"}))
    r.request("POST", f"{API}/notes", json.dumps({"title": "N", "password_hint": "x"}), 201)
    r.click(selector="#b", tag="button").error("boom")
    plan = plan_of(r)
    assert plan.login is not None
    assert plan.login.json_body == {"email": fx.TEST_EMAIL, "password": fx.TEST_PASSWORD}
    assert [q.url for q in plan.requests] == [f"{API}/notes"]
    code = generate_test_spec(r.session(), fixtures="writes")
    before_all = code.split("test.beforeAll(async ({ playwright }) => {")[1].split("\n});")[0]
    assert before_all.index("log in with test credentials") < before_all.index("/api/notes")
    assert "const api = await playwright.request.newContext();" in before_all
    assert "me@corp.example" not in code and '"pw"' not in code
    script = reproduction_script(r.session(), include_fixtures=True)
    assert "/api/notes" not in script  # writes are the replayed steps' to send, once


def test_credentials_beside_other_data_are_not_a_login() -> None:
    entry = NetworkEntry(method="POST", url=f"{API}/notes", request_body="{}")
    assert not fx.is_auth(entry, {"title": "x", "password": "y", "tags": []})
    assert fx.is_auth(entry, {"username": "x", "password": "y", "remember": True})
    login = NetworkEntry(method="POST", url=f"{API}/auth/login")
    assert fx.is_auth(login, None)


def test_no_writes_no_fixtures() -> None:
    r = Rec().nav("http://127.0.0.1:8000/")
    r.request("GET", f"{API}/items", None)
    r.click(selector="#b", tag="button")
    assert plan_of(r).empty
    assert "beforeAll" not in generate_test_spec(r.session(), include_fixtures=True)
