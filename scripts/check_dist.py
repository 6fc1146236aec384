"""Open the wheel(s) and the sdist in dist/ and check they carry everything shotbridge needs.

    python scripts/check_dist.py [dist]     # exit 1 with a list of problems, else one line per file

Checked in each artefact: the extension's manifest.json, every file it names and every module
those import (so Chromium can load the unpacked extension from the installed package),
secret-rules.json, the license files, the version (manifest == package == rust/Cargo.toml) and
that nothing from tests/ or bench/ came along. Wheels also: the abi3 + manylinux tag, a compiled
core for the tagged architecture that needs no newer glibc than the tag, with the font inside.
The sdist also: the Rust sources, Cargo.lock and the font dependency that builds the core.
"""

from __future__ import annotations

import json
import posixpath
import re
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXT = "shotbridge/extension"
LICENSES = ("LICENSE", "LICENSES/DejaVu-fonts.txt", "LICENSES/libjpeg-turbo.md")
# ELF e_machine for each wheel architecture.
ELF_MACHINE = {"x86_64": 0x3E, "aarch64": 0xB7}
# Static `import … from "./x.js"`, `export … from "…"`, `import "…"` and dynamic `import("…")`,
# plus files handed to chrome.scripting.executeScript({files: [...]}) as string literals.
IMPORT_RE = re.compile(r"""(?:\bfrom|\bimport)\s*\(?\s*["']([^"']+\.js)["']""")
SCRIPT_FILE_RE = re.compile(r"""["']((?:content|page|lib)/[\w.-]+\.js)["']""")


class Artefact:
    """A wheel or sdist seen as {path inside the package: bytes}, paths relative to the package."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.raw: dict[str, bytes] = {}
        if path.suffix == ".whl":
            with zipfile.ZipFile(path) as z:
                self.raw = {n: z.read(n) for n in z.namelist() if not n.endswith("/")}
            self.pkg_root = ""
        else:
            with tarfile.open(path) as t:
                for m in t.getmembers():
                    if m.isfile() and (f := t.extractfile(m)) is not None:
                        self.raw[m.name.split("/", 1)[1]] = f.read()
            self.pkg_root = "python/"

    def pkg(self, name: str) -> bytes | None:
        return self.raw.get(self.pkg_root + name)


def manifest_files(manifest: dict) -> set[str]:
    """Every file the extension manifest names, relative to the extension folder."""
    named: set[str] = set()
    bg = manifest.get("background", {})
    named.update(filter(None, [bg.get("service_worker"), bg.get("page")]))
    for cs in manifest.get("content_scripts", []):
        named.update(cs.get("js", []) + cs.get("css", []))
    for holder in (manifest, manifest.get("action", {})):
        icons = holder.get("icons") or holder.get("default_icon") or {}
        named.update(icons.values() if isinstance(icons, dict) else [icons])
    named.update(
        filter(
            None,
            [
                manifest.get("action", {}).get("default_popup"),
                manifest.get("options_page"),
                manifest.get("options_ui", {}).get("page"),
            ],
        )
    )
    for war in manifest.get("web_accessible_resources", []):
        named.update(r for r in war.get("resources", []) if "*" not in r)
    return named


def extension_closure(art: Artefact, manifest: dict, problems: list[str]) -> set[str]:
    """The manifest's files plus, transitively, every module and injected script they name."""
    todo, seen = sorted(manifest_files(manifest)), set()
    while todo:
        rel = posixpath.normpath(todo.pop())
        if rel in seen:
            continue
        seen.add(rel)
        data = art.pkg(f"{EXT}/{rel}")
        if data is None:
            problems.append(f"{art.path.name}: extension file {rel} missing")
            continue
        if rel.endswith(".js"):
            text = data.decode()
            here = posixpath.dirname(rel)
            todo += [posixpath.join(here, m) for m in IMPORT_RE.findall(text) if m.startswith(".")]
            todo += SCRIPT_FILE_RE.findall(text)  # extension-root-relative, as Chrome takes them
    return seen


def check_common(art: Artefact, version: str, problems: list[str]) -> None:
    name = art.path.name
    raw_manifest = art.pkg(f"{EXT}/manifest.json")
    if raw_manifest is None:
        problems.append(f"{name}: {EXT}/manifest.json missing")
        return
    manifest = json.loads(raw_manifest)
    if manifest.get("version") != version:
        problems.append(f"{name}: extension version {manifest.get('version')} != {version}")
    closure = extension_closure(art, manifest, problems)
    if art.pkg(f"{EXT}/secret-rules.json") is None:
        problems.append(f"{name}: {EXT}/secret-rules.json missing")
    # Everything in the checkout's extension folder ships too (nothing left behind by accident).
    tracked = sorted(
        p.relative_to(REPO / "python" / EXT).as_posix()
        for p in (REPO / "python" / EXT).rglob("*")
        if p.is_file()
    )
    for rel in tracked:
        if art.pkg(f"{EXT}/{rel}") is None:
            problems.append(f"{name}: {EXT}/{rel} (in the checkout) missing")
    for path in art.raw:
        parts = path.split("/")
        if parts[0] in ("tests", "bench") or "node_modules" in parts or "__pycache__" in parts:
            problems.append(f"{name}: should not ship {path}")
    print(
        f"{name}: extension {len(closure)} files reached from manifest.json, "
        f"{len(art.raw)} files in all"
    )


def check_wheel(art: Artefact, version: str, problems: list[str]) -> None:
    name = art.path.name
    m = re.fullmatch(r"shotbridge-(.+?)-cp3\d+-abi3-manylinux_(\d+)_(\d+)_(\w+)\.whl", name)
    if not m:
        problems.append(f"{name}: not an abi3 manylinux wheel name")
        return
    wheel_version, glibc, arch = m[1], (int(m[2]), int(m[3])), m[4]
    if wheel_version != version:
        problems.append(f"{name}: wheel version {wheel_version} != {version}")
    dist_info = f"shotbridge-{wheel_version}.dist-info"
    tag = (art.raw.get(f"{dist_info}/WHEEL") or b"").decode()
    if f"abi3-manylinux_{glibc[0]}_{glibc[1]}_{arch}" not in tag:
        problems.append(f"{name}: WHEEL file has no abi3 manylinux tag: {tag!r}")
    for lic in LICENSES:
        if f"{dist_info}/licenses/{lic}" not in art.raw:
            problems.append(f"{name}: license file {lic} missing")
    core = art.raw.get("shotbridge/_core.abi3.so")
    if core is None:
        problems.append(f"{name}: compiled core shotbridge/_core.abi3.so missing")
        return
    if core[:4] != b"\x7fELF" or int.from_bytes(core[18:20], "little") != ELF_MACHINE.get(arch):
        problems.append(f"{name}: core is not an ELF library for {arch}")
    needed = {tuple(map(int, v.split(b"."))) for v in re.findall(rb"GLIBC_(\d+\.\d+)", core)}
    if needed and max(needed) > glibc:
        problems.append(f"{name}: core needs glibc {max(needed)}, tag says {glibc}")
    # The label font is compiled in (dejavu crate, include_bytes!): its name table is in the core.
    if b"DejaVu Sans" not in core:
        problems.append(f"{name}: label font (DejaVu Sans) not found in the core")
    print(
        f"{name}: core {len(core):,} bytes for {arch}, needs glibc "
        f"{'.'.join(map(str, max(needed, default=(0, 0))))}"
    )


def check_sdist(art: Artefact, version: str, problems: list[str]) -> None:
    name = art.path.name
    for path in (
        "pyproject.toml",
        "Cargo.toml",
        "Cargo.lock",
        "rust/Cargo.toml",
        "rust/src/lib.rs",
        "rust/src/font.rs",
        *LICENSES,
    ):
        if path not in art.raw:
            problems.append(f"{name}: {path} missing")
    if b'name = "dejavu"' not in art.raw.get("Cargo.lock", b""):
        problems.append(f"{name}: Cargo.lock does not pin the font crate (dejavu)")
    if any(p.endswith((".so", ".pyd")) for p in art.raw):
        problems.append(f"{name}: carries a compiled library (a stale local build?)")
    pkg_info = art.raw.get("PKG-INFO", b"").decode()
    if f"\nVersion: {version}\n" not in pkg_info:
        problems.append(f"{name}: PKG-INFO version is not {version}")


def cargo_version() -> str:
    return tomllib.loads((REPO / "rust/Cargo.toml").read_text())["package"]["version"]


def check(paths: list[Path]) -> list[str]:
    version, problems = cargo_version(), []
    wheels = [p for p in paths if p.suffix == ".whl"]
    sdists = [p for p in paths if p.name.endswith(".tar.gz")]
    if not wheels:
        problems.append("no wheel found")
    for path in wheels + sdists:
        art = Artefact(path)
        check_common(art, version, problems)
        (check_wheel if path in wheels else check_sdist)(art, version, problems)
    return problems


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "dist"
    paths = sorted(out.glob("shotbridge-*.whl")) + sorted(out.glob("shotbridge-*.tar.gz"))
    problems = check(paths)
    for p in problems:
        print("PROBLEM:", p, file=sys.stderr)
    if problems:
        sys.exit(1)
    print(f"ok: {len(paths)} artefacts in {out}")


if __name__ == "__main__":
    main()
