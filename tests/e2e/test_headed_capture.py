"""Headed Chromium with a normal profile: capture of the visible tab, and discovery that works
from an IDE's minimal environment."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.headed import Desktop, HeadedChromium, images_of, mcp_call, text_of


def test_capture_of_the_visible_tab(desktop: Desktop, headed: HeadedChromium) -> None:
    out = desktop.root / "shot.jpg"
    done = desktop.run("shotctl", "capture", "--browser", "connected", "--json", "-o", str(out))
    assert done.returncode == 0, done.stderr
    meta = json.loads(done.stdout)
    assert meta["url"].endswith("/buttons.html")
    assert out.read_bytes()[:2] == b"\xff\xd8"
    assert "headless" not in done.stdout


def test_mcp_with_the_sdk_default_environment_finds_the_host(
    desktop: Desktop, headed: HeadedChromium
) -> None:
    """The host registered under $XDG_RUNTIME_DIR; the MCP server gets only HOME, LOGNAME, PATH,
    SHELL, TERM and USER, as the MCP SDK passes by default, and must still find it."""
    env = desktop.minimal_env()
    assert "XDG_RUNTIME_DIR" not in env and "DISPLAY" not in env
    hosts = desktop.wait_hosts(1)
    assert Path(hosts[0]["socket"]).parent == desktop.runtime / "shotbridge"
    [page, shot] = mcp_call(
        env,
        [("observe", {"what": "page"}), ("capture_screenshot", {})],
        "--browser",
        "connected",
    )
    assert not page.is_error, text_of(page)
    assert "/buttons.html" in text_of(page)
    assert not shot.is_error, text_of(shot)
    assert images_of(shot)
    assert "headless" not in text_of(shot)


def test_doctor_with_the_headed_profile(desktop: Desktop, headed: HeadedChromium) -> None:
    profile = headed.profile_dir()
    line = f"[ ok ] profile {profile / 'Default'}: has the extension (loaded with --load-extension"
    out = desktop.doctor_until(line, "--user-data-dir", str(profile))
    assert line in out and "all required checks pass" in out, out
    assert str(profile / "NativeMessagingHosts" / "dev.shotbridge.host.json") in out
    [host] = desktop.wait_hosts(1)
    assert f"connected: extension 0.1.0, profile {host['profile_id']}" in out
    # An IDE's environment sees the same hosts.
    minimal = desktop.run("shotctl", "doctor", env=desktop.minimal_env())
    assert f"host {host['pid']}: answers" in minimal.stdout, minimal.stdout


def test_capture_auto_decides_at_each_run(
    desktop: Desktop, headed: HeadedChromium, pages_url: str
) -> None:
    """`shotctl capture --browser auto` takes the user's browser when one is connected, and
    says so when it had to start a headless one of ours."""
    from shotbridge.client.connect import HEADLESS_NOTE

    out = desktop.root / "auto.jpg"
    done = desktop.run("shotctl", "capture", "--browser", "auto", "--json", "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["url"].endswith("/buttons.html")
    assert HEADLESS_NOTE not in done.stderr

    empty = desktop.root / "nobody"  # a session where no browser of the user's runs
    (empty / "xdg").mkdir(parents=True, mode=0o700)
    env = desktop.env(HOME=str(empty), XDG_RUNTIME_DIR=str(empty / "xdg"))
    page = f"{pages_url}/interact.html"
    args = ("shotctl", "capture", page, "--browser", "auto", "--json", "-o", str(out))
    done = desktop.run(*args, env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["url"] == page
    assert HEADLESS_NOTE in done.stderr
