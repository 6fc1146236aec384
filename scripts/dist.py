"""Build the release artefacts into dist/: abi3 manylinux wheel(s) and the sdist.

    python scripts/dist.py [--out dist] [--arch x86_64 --arch aarch64] [--no-sdist]

Wheels are built with maturin's zig linker so they need only glibc 2.28, whatever the build
machine has; maturin's own auditwheel check refuses a wheel that needs more than its tag says.
An architecture whose Rust target cannot be installed is reported and skipped, not fatal, unless
it is the host's own.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MANYLINUX = "manylinux_2_28"
# What a wheel is built from: newer than the newest wheel means the wheel is stale.
SOURCES = (
    "pyproject.toml",
    "Cargo.toml",
    "Cargo.lock",
    "README.md",
    "LICENSE",
    "LICENSES",
    "rust/Cargo.toml",
    "rust/src",
    "python/shotbridge",
)


def rust_target(arch: str) -> str:
    return f"{arch}-unknown-linux-gnu"


def host_arch() -> str:
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(
        platform.machine().lower(), platform.machine().lower()
    )


def newest_source_mtime() -> float:
    newest = 0.0
    for name in SOURCES:
        path = REPO / name
        files = path.rglob("*") if path.is_dir() else [path]
        for f in files:
            if f.is_file() and "__pycache__" not in f.parts and f.suffix not in (".so", ".pyd"):
                newest = max(newest, f.stat().st_mtime)
    return newest


def fresh_wheel(out: Path, arch: str) -> Path | None:
    """The wheel for `arch` in `out` if it is newer than every source it is built from."""
    wheels = sorted(
        out.glob(f"shotbridge-*-abi3-{MANYLINUX}_{arch}.whl"), key=lambda p: p.stat().st_mtime
    )
    if wheels and wheels[-1].stat().st_mtime > newest_source_mtime():
        return wheels[-1]
    return None


def maturin(*args: str) -> None:
    cmd = [sys.executable, "-m", "maturin", *args]
    print("+", " ".join(cmd[2:]), file=sys.stderr, flush=True)
    # maturin runs zig as `python3 -m ziglang`: the python3 found first must be ours.
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    subprocess.run(cmd, cwd=REPO, check=True, env={**os.environ, "PATH": path})


def ensure_target(arch: str) -> bool:
    """Install the Rust standard library for `arch` through rustup, if it is not there yet."""
    target = rust_target(arch)
    rustup = shutil.which("rustup")
    if rustup is None:
        return arch == host_arch()
    installed = subprocess.run(
        [rustup, "target", "list", "--installed"], capture_output=True, text=True
    ).stdout.split()
    if target in installed:
        return True
    added = subprocess.run([rustup, "target", "add", target], capture_output=True, text=True)
    if added.returncode != 0:
        print(
            f"skipping {arch}: rustup target add {target} failed:\n{added.stderr}", file=sys.stderr
        )
    return added.returncode == 0


def build_wheel(out: Path, arch: str) -> Path:
    for old in out.glob(f"shotbridge-*_{arch}.whl"):
        old.unlink()
    maturin(
        "build",
        "--release",
        "--zig",
        "--compatibility",
        MANYLINUX,
        "--target",
        rust_target(arch),
        "--out",
        str(out),
    )
    return fresh_wheel(out, arch) or sys.exit(f"maturin built no {arch} wheel in {out}")


def build_sdist(out: Path) -> Path:
    for old in out.glob("shotbridge-*.tar.gz"):
        old.unlink()
    maturin("sdist", "--out", str(out))
    return next(out.glob("shotbridge-*.tar.gz"))


def wheel_for_tests(out: Path) -> Path:
    """The host's wheel, built only when dist/ has none newer than the sources."""
    out.mkdir(parents=True, exist_ok=True)
    return fresh_wheel(out, host_arch()) or build_wheel(out, host_arch())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "dist")
    parser.add_argument("--arch", action="append", help="x86_64, aarch64 (default: both)")
    parser.add_argument("--no-sdist", action="store_true")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    skipped = []
    for arch in args.arch or ["x86_64", "aarch64"]:
        if arch != host_arch() and not ensure_target(arch):
            skipped.append(arch)
            continue
        start = time.monotonic()
        try:
            wheel = build_wheel(args.out, arch)
        except subprocess.CalledProcessError:
            if arch == host_arch():
                raise
            print(f"skipping {arch}: the cross build failed (output above)", file=sys.stderr)
            skipped.append(arch)
            continue
        print(f"built {wheel.name} in {time.monotonic() - start:.0f} s", file=sys.stderr)
    if not args.no_sdist:
        print(f"built {build_sdist(args.out).name}", file=sys.stderr)
    if skipped:
        print(f"not built: {', '.join(skipped)}", file=sys.stderr)


if __name__ == "__main__":
    main()
