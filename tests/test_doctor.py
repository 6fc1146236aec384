"""shotctl doctor on a broken setup and on a good one (all in temporary folders)."""

from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import types
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from shotbridge.cli import main
from shotbridge.client.bus_client import wait_for_host_sync
from shotbridge.install import doctor
from shotbridge.install import register as install
from shotbridge.install.doctor import Check, Status
from shotbridge.install.register import Layout
from shotbridge.transport import paths
from shotbridge.transport.framing import NATIVE
from shotbridge.wire.messages import EXTENSION_ORIGIN

PYTHON_DIR = Path(__file__).resolve().parents[1] / "python"
KEY = base64.b64encode(b"a public key, as far as the ID is concerned").decode()


@pytest.fixture
def short_dir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="sb", dir="/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR", "SHOTBRIDGE_HOST"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SHOTBRIDGE_EXTENSION_DIR", str(tmp_path / "ext"))


def by_name(checks: list[Check]) -> dict[str, Check]:
    return {c.name: c for c in checks}


def make_extension(folder: Path, key: str = KEY) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "manifest.json").write_text(json.dumps({"manifest_version": 3, "key": key}))
    return doctor.extension_id_from_key(key)


def test_extension_id_matches_chromium_rule() -> None:
    repo_manifest = PYTHON_DIR.parent / "extension" / "manifest.json"
    if not repo_manifest.exists():
        pytest.fail("the repository's extension/manifest.json is missing")
    key = json.loads(repo_manifest.read_text())["key"]
    assert doctor.extension_id_from_key(key) == "lgpadcfmcnglbejkodbbdfcnfnaffoae"


def test_broken_setup(tmp_path: Path) -> None:
    home = tmp_path / "home"
    checks = doctor.run_checks(layouts=[Layout(home=home)], runtime_dir=tmp_path / "rt")
    named = by_name(checks)
    assert not doctor.healthy(checks)
    assert named["extension folder"].status is Status.FAIL
    assert "SHOTBRIDGE_EXTENSION_DIR" in (named["extension folder"].fix or "")
    assert named["host manifest"].status is Status.FAIL
    assert "shotctl install" in (named["host manifest"].fix or "")
    assert named["host running"].status is Status.WARN
    assert named["runtime dir"].status is Status.OK  # absent is fine: the host creates it
    # Every failure says how to mend it.
    assert all(c.fix for c in checks if c.status is not Status.OK)


def test_bad_manifest_launcher_and_extension(tmp_path: Path) -> None:
    home = tmp_path / "home"
    layout = Layout(home=home)
    make_extension(tmp_path / "ext")
    result = install.install(["chrome", "chromium"], layout=layout)
    # chrome: a foreign origin and a relative path; chromium: a launcher whose python is gone.
    bad = json.loads(result.manifests["chrome"].read_text())
    bad.update(allowed_origins=["chrome-extension://other/"], path="relative/launcher")
    result.manifests["chrome"].write_text(json.dumps(bad))
    text = result.launcher.read_text().replace(sys.executable, "/nonexistent/python3")
    result.launcher.write_text(text)
    (home / ".config/microsoft-edge").mkdir(parents=True)  # edge present, not registered

    named = by_name(doctor.run_checks(layouts=[layout], runtime_dir=tmp_path / "rt"))
    chrome = named["host manifest (chrome, user)"]
    assert chrome.status is Status.FAIL
    assert "allowed_origins lacks" in chrome.detail and "not absolute" in chrome.detail
    assert named["host manifest (chromium, user)"].status is Status.OK
    launcher = named[f"launcher {result.launcher}"]
    assert launcher.status is Status.FAIL and "/nonexistent/python3" in launcher.detail
    assert named["host manifest (edge, user)"].status is Status.WARN
    ext = named["extension folder"]  # our key, but not the ID the host expects
    assert (
        ext.status is Status.FAIL and "only accepts lgpadcfmcnglbejkodbbdfcnfnaffoae" in ext.detail
    )


def test_runtime_dir_checks(short_dir: Path) -> None:
    loose = short_dir / "loose"
    loose.mkdir()
    os.chmod(loose, 0o755)
    assert doctor.check_runtime_dir(loose).status is Status.WARN
    os.chmod(loose, 0o700)
    assert doctor.check_runtime_dir(loose).status is Status.OK
    (short_dir / "file").write_text("")
    assert doctor.check_runtime_dir(short_dir / "file").status is Status.FAIL
    if os.getuid() == 0:
        os.chown(loose, 65534, 65534)
        check = doctor.check_runtime_dir(loose)
        assert check.status is Status.FAIL and "belongs to uid 65534" in check.detail


def test_good_setup(tmp_path: Path, short_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Installed, extension present, core importable, a host running with its extension."""
    home = tmp_path / "home"
    layout = Layout(home=home)
    ext_id = make_extension(tmp_path / "ext")
    install.install(["chromium"], layout=layout)
    # The core may not be built where these tests run: stand in for it.
    monkeypatch.setitem(sys.modules, "shotbridge._core", types.ModuleType("shotbridge._core"))
    rundir = paths.ensure_private_dir(short_dir / "rt")
    env = {
        **os.environ,
        "PYTHONPATH": str(PYTHON_DIR),
        "SHOTBRIDGE_RUNTIME_DIR": str(rundir),
        "SHOTBRIDGE_STATE_DIR": str(short_dir / "state"),
    }
    host = subprocess.Popen(
        [sys.executable, "-m", "shotbridge", "host", EXTENSION_ORIGIN],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
    )  # fmt: skip
    try:
        assert host.stdin is not None
        hello = {"extension_version": "0.1.0", "profile_id": "p1", "user_agent": "UA"}
        host.stdin.write(NATIVE.encode({"event": "hello", "data": hello}))
        host.stdin.flush()
        wait_for_host_sync(rundir, timeout=10)
        checks = doctor.run_checks(
            layouts=[layout], runtime_dir=rundir, expected_id=ext_id, scan_processes=False
        )
        assert doctor.healthy(checks), doctor.render(checks)
        named = by_name(checks)
        assert named["rust core"].status is Status.OK
        assert named["host manifest (chromium, user)"].status is Status.OK
        assert named[f"host {host.pid}"].status is Status.OK
        assert named[f"extension via host {host.pid}"].status is Status.OK
        assert "profile p1" in named[f"extension via host {host.pid}"].detail
        launcher = next(c for c in checks if c.name.startswith("launcher "))
        assert launcher.status is Status.OK
        non_ok = [c for c in checks if c.status is not Status.OK]
        assert {c.name for c in non_ok} <= {"chromium for headless mode", "profiles"}
        assert "all required checks pass" in doctor.render(checks)
    finally:
        host.stdin.close()  # type: ignore[union-attr]
        try:
            host.wait(5)
        finally:
            if host.poll() is None:
                host.kill()
                host.wait()


def test_cli_json_on_a_broken_setup(tmp_path: Path) -> None:
    out = CliRunner().invoke(
        main,
        ["doctor", "--json"],
        env={"SHOTBRIDGE_RUNTIME_DIR": str(tmp_path / "rt"), "HOME": str(tmp_path / "home")},
    )
    assert out.exit_code == 1
    payload = json.loads(out.output)
    assert payload["ok"] is False
    statuses = {c["name"]: c["status"] for c in payload["checks"]}
    assert statuses["extension folder"] == "fail"
    assert {"name", "status", "detail", "fix", "required"} <= set(payload["checks"][0])
    text = CliRunner().invoke(main, ["doctor"], env={"HOME": str(tmp_path / "home")})
    assert text.exit_code == 1 and "[FAIL] extension folder" in text.output


def chromium_profile(root: Path, ext_id: str, location: int = 8) -> Path:
    """A profile folder as Chromium 156 writes it for an extension (seen in a real profile)."""
    folder = root / "Default"
    folder.mkdir(parents=True)
    entry = {"location": location, "path": "/somewhere/extension", "disable_reasons": []}
    prefs = {"extensions": {"settings": {ext_id: entry}}}
    (folder / "Preferences").write_text(json.dumps(prefs))
    return folder


def test_a_profile_with_the_extension_but_no_manifest_fails(tmp_path: Path) -> None:
    """A --user-data-dir profile once silently never connected while doctor passed."""
    home = tmp_path / "home"
    layout = Layout(home=home)
    ext_id = make_extension(tmp_path / "ext")
    install.install(["chromium"], layout=layout)  # the default folders are fine
    custom = tmp_path / "custom profile"
    chromium_profile(custom, ext_id)
    checks = doctor.run_checks(
        layouts=[layout], runtime_dir=tmp_path / "rt", expected_id=ext_id,
        user_data_dirs=[custom], scan_processes=False,
    )  # fmt: skip
    check = by_name(checks)[f"profile {custom / 'Default'}"]
    assert check.status is Status.FAIL and not doctor.healthy(checks)
    assert "loaded with --load-extension from /somewhere/extension" in check.detail
    assert check.fix and f"shotctl install --user-data-dir {custom}" in check.fix

    install.install(layout=layout, user_data_dirs=[custom])
    assert (custom / "NativeMessagingHosts" / "dev.shotbridge.host.json").is_file()
    # Remembered by install: found without --user-data-dir from now on.
    checks = doctor.run_checks(
        layouts=[layout], runtime_dir=tmp_path / "rt", expected_id=ext_id, scan_processes=False
    )
    check = by_name(checks)[f"profile {custom / 'Default'}"]
    assert check.status is Status.OK, doctor.render(checks)
    assert by_name(checks)[f"host manifest (--user-data-dir {custom})"].status is Status.OK


def test_default_browser_profile_is_found_and_checked(tmp_path: Path) -> None:
    home = tmp_path / "home"
    layout = Layout(home=home)
    ext_id = make_extension(tmp_path / "ext")
    chromium_profile(home / ".config" / "chromium", ext_id, location=4)
    checks = doctor.run_checks(
        layouts=[layout], runtime_dir=tmp_path / "rt", expected_id=ext_id, scan_processes=False
    )
    check = by_name(checks)[f"profile {home / '.config/chromium/Default'}"]
    assert check.status is Status.FAIL and "loaded unpacked in chrome://extensions" in check.detail
    assert check.fix and "shotctl install --browser chromium" in check.fix


def test_forward_checks_and_the_clients_a_host_lists(
    short_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Over SHOTBRIDGE_BUS (a mounted folder): the forward answers with a connected extension;
    and the laptop's side lists a client that said hello, marked as forwarded."""
    import asyncio
    import threading

    from shotbridge import __version__
    from shotbridge.client.bus_client import BusClient

    rundir = paths.ensure_private_dir(short_dir / "rt")
    env = {
        **os.environ,
        "PYTHONPATH": str(PYTHON_DIR),
        "SHOTBRIDGE_RUNTIME_DIR": str(rundir),
        "SHOTBRIDGE_STATE_DIR": str(short_dir / "state"),
    }
    host = subprocess.Popen(
        [sys.executable, "-m", "shotbridge", "host", EXTENSION_ORIGIN],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
    )  # fmt: skip
    assert host.stdin is not None
    hello = {"extension_version": "0.1.0", "profile_id": "p1", "user_agent": "UA"}
    host.stdin.write(NATIVE.encode({"event": "hello", "data": hello}))
    host.stdin.flush()
    said, leave = threading.Event(), threading.Event()

    async def hold() -> None:  # a client on the forward, connected while doctor looks
        async with await BusClient.connect_forward() as client:
            await client.hello("shotctl mcp")
            said.set()
            await asyncio.to_thread(leave.wait, 10)

    try:
        wait_for_host_sync(rundir, timeout=10)
        assert doctor.check_forward()[0].status is Status.FAIL  # SHOTBRIDGE_BUS unset, no forward
        monkeypatch.setenv("SHOTBRIDGE_BUS", str(rundir))
        forward = by_name(doctor.check_forward())
        assert forward["forwarded bus"].status is Status.OK
        assert f"host {host.pid}, shotbridge {__version__}" in forward["forwarded bus"].detail
        assert forward["browser over the forward"].detail == "connected: profile p1"
        holder = threading.Thread(target=asyncio.run, args=(hold(),))
        holder.start()
        assert said.wait(10)
        monkeypatch.delenv("SHOTBRIDGE_BUS")
        listed = [c for c in doctor.check_hosts(rundir) if c.name == f"client of host {host.pid}"]
        assert [c.detail for c in listed] == [
            f"shotctl mcp {__version__} on {socket.gethostname()} over a forward (SSH or a "
            "mounted socket)"
        ]
        leave.set()
        holder.join(10)
    finally:
        leave.set()
        host.stdin.close()
        try:
            host.wait(5)
        finally:
            if host.poll() is None:
                host.kill()
                host.wait()
