"""Two of the user's browsers connected at once, each with its own host: doctor and observe(tabs)
show both, and --host picks one for `shotctl capture` and `shotctl mcp`."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.e2e.headed import Desktop, HeadedChromium, text_of
from tests.mcp_stdio import McpSession


@pytest.fixture(scope="module")
def two(desktop: Desktop, pages_url: str) -> Iterator[dict[str, dict]]:
    """Profiles "a" (on buttons.html) and "b" (on interact.html), both registered and connected."""
    browsers = {}
    try:
        for name, page in (("a", "buttons.html"), ("b", "interact.html")):
            profile = desktop.root / f"profile-{name}"
            done = desktop.run("shotctl", "install", "--user-data-dir", str(profile))
            assert done.returncode == 0, done.stderr
            browsers[name] = HeadedChromium(desktop, profile, start_url=f"{pages_url}/{page}")
            browsers[name].start()
        desktop.wait_hosts(2)
        hosts = {}
        for name, page in (("a", "buttons.html"), ("b", "interact.html")):
            for host in desktop.wait_hosts(2):
                tabs = _tab_urls(desktop, str(host["pid"]))
                if any(u.endswith(page) for u in tabs):
                    hosts[name] = host
        assert set(hosts) == {"a", "b"}
        yield hosts
    finally:
        for browser in browsers.values():
            browser.close()


def _tab_urls(desktop: Desktop, host: str) -> list[str]:
    from shotbridge.client.bus_client import request_sync

    with desktop.as_user():
        found = request_sync("list_tabs", host=host, timeout=5)
    return [t.get("url", "") for t in found.get("tabs", [])]


def test_doctor_lists_both(desktop: Desktop, two: dict[str, dict]) -> None:
    out = desktop.run("shotctl", "doctor").stdout
    for host in two.values():
        assert f"[ ok ] host {host['pid']}: answers" in out, out
        assert f"profile {host['profile_id']} (`--host {host['profile_id']}`" in out
    assert "all required checks pass" in out, out


def test_capture_picks_the_named_browser(desktop: Desktop, two: dict[str, dict]) -> None:
    for name, page in (("a", "buttons.html"), ("b", "interact.html")):
        for pick in (two[name]["profile_id"][:8], str(two[name]["pid"])):
            out = desktop.root / f"{name}.jpg"
            done = desktop.run(
                "shotctl", "capture", "--browser", "connected", "--host", pick, "--json",
                "-o", str(out),
            )  # fmt: skip
            assert done.returncode == 0, done.stderr
            assert json.loads(done.stdout)["url"].endswith(page)
    done = desktop.run("shotctl", "capture", "--browser", "connected", "--host", "nosuchprofile")
    assert done.returncode == 3 and "no running shotbridge host matches 'nosuchprofile'" in (
        done.stderr
    )


def test_mcp_host_and_observe_tabs(desktop: Desktop, two: dict[str, dict]) -> None:
    b = two["b"]
    with McpSession("--host", b["profile_id"], "--cooldown", "0", env=desktop.env()) as mcp:
        page = mcp.call("observe", {"what": "page"})
        assert not page.is_error, text_of(page)
        assert json.loads(page.content[0].text)["url"].endswith("/interact.html")
        tabs = mcp.call("observe", {"what": "tabs"})
        listed = json.loads(tabs.content[0].text)["tabs"]
        by_host = {(t["host"], t["profile_id"], t["in_use"]) for t in listed}
        assert (b["pid"], b["profile_id"], True) in by_host
        a = two["a"]
        assert (a["pid"], a["profile_id"], False) in by_host
        assert any(t["url"].endswith("/buttons.html") and not t["in_use"] for t in listed)
