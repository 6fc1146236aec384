"""A browser started with --user-data-dir: doctor finds it, names the fix, and the fix works
(such a profile used to never connect while doctor passed)."""

from __future__ import annotations

from tests.e2e.headed import Desktop, HeadedChromium


def test_unregistered_profile_fails_doctor_until_installed(
    desktop: Desktop, pages_url: str
) -> None:
    profile = desktop.root / "custom-profile"
    browser = HeadedChromium(desktop, profile, start_url=f"{pages_url}/buttons.html").start()
    try:
        fix = f"shotctl install --user-data-dir {profile}"
        out = desktop.doctor_until(fix)
        assert f"[FAIL] profile {profile / 'Default'}: has the extension" in out, out
        assert "some required checks fail" in out
        done = desktop.run(*fix.split())
        assert done.returncode == 0, done.stderr
        assert (profile / "NativeMessagingHosts" / "dev.shotbridge.host.json").is_file()
        # The user restarts the browser, as doctor says; it connects with no other action.
        browser.close()
        browser.start()
        [host] = desktop.wait_hosts(1)
        out = desktop.run("shotctl", "doctor").stdout
        assert f"[ ok ] profile {profile / 'Default'}: has the extension" in out, out
        assert f"profile {host['profile_id']}" in out
        assert "all required checks pass" in out, out
    finally:
        browser.close()
