"""The release artefacts carry the extension, core, font and licenses, and nothing of the tests.

scripts/check_dist.py is what `make dist` runs; here it runs on this machine's wheel and a fresh
sdist, and on doctored copies to show it notices what it is there to notice.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from scripts import check_dist

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.timeout(900)  # the first use may build the wheel


@pytest.fixture(scope="module")
def sdist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sdist")
    subprocess.run(
        [sys.executable, "-m", "maturin", "sdist", "--out", str(out)],
        cwd=REPO,
        check=True,
        capture_output=True,
    )
    (path,) = out.glob("shotbridge-*.tar.gz")
    return path


def test_wheel_and_sdist_pass_the_check(built_wheel: Path, sdist: Path) -> None:
    assert check_dist.check([built_wheel, sdist]) == []
    assert "-abi3-manylinux_2_28_" in built_wheel.name


def doctored(wheel: Path, dest: Path, drop: str = "", add: dict[str, bytes] | None = None) -> Path:
    """A copy of `wheel` without `drop` and with `add` (same name, so the same tag)."""
    copy = dest / wheel.name
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(copy, "w") as out:
        for item in src.infolist():
            if item.filename != drop:
                out.writestr(item, src.read(item))
        for name, data in (add or {}).items():
            out.writestr(name, data)
    return copy


@pytest.mark.parametrize(
    ("drop", "add", "expected"),
    [
        ("shotbridge/extension/lib/capture.js", None, "extension file lib/capture.js missing"),
        ("shotbridge/extension/secret-rules.json", None, "secret-rules.json missing"),
        ("shotbridge/_core.abi3.so", None, "compiled core"),
        ("", {"tests/test_x.py": b""}, "should not ship tests/test_x.py"),
    ],
)
def test_check_notices_what_is_missing_or_extra(
    built_wheel: Path, tmp_path: Path, drop: str, add: dict[str, bytes] | None, expected: str
) -> None:
    problems = check_dist.check([doctored(built_wheel, tmp_path, drop, add)])
    assert any(expected in p for p in problems), problems


def test_check_notices_a_version_mismatch(built_wheel: Path, tmp_path: Path) -> None:
    renamed = tmp_path / built_wheel.name.replace(built_wheel.name.split("-")[1], "9.9.9")
    shutil.copy(built_wheel, renamed)
    assert any("9.9.9" in p for p in check_dist.check([renamed]))
