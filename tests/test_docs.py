"""The docs cannot drift silently: every file and every function docs/architecture.md names in
backticks exists, and README stays a user's short path (<= 15 KB) that links the map."""

from __future__ import annotations

import ast
import json
import re
import subprocess
from functools import cache
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PKG = REPO / "python" / "shotbridge"
ARCHITECTURE = REPO / "docs" / "architecture.md"
README = REPO / "README.md"

TICKED = re.compile(r"`([^`\n]+)`")
FILE = re.compile(r"^[\w./-]+/[\w.-]+\.(py|pyi|js|mjs|rs|md|json|toml|sh)$")
DOTTED = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)+$")
JS_CALL = re.compile(r"^([A-Za-z_$][\w$]*)\(\)$")
RUST_PATH = re.compile(r"^(\w+)::(\w+)$")


def names_in(path: Path) -> list[str]:
    return TICKED.findall(path.read_text(encoding="utf-8"))


def package_roots() -> set[str]:
    """First components a dotted name must start with to be one of ours (wire, host, image, …)."""
    roots = {p.name for p in PKG.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
    return roots | {p.stem for p in PKG.glob("*.py*") if not p.stem.startswith("__")}


def module_source(parts: list[str]) -> Path | None:
    base = PKG.joinpath(*parts)
    for candidate in (base.with_suffix(".py"), base.with_suffix(".pyi"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def defined(body: list[ast.stmt], name: str) -> ast.AST | None:
    """The def, class or assignment of ``name`` among ``body``'s statements."""
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if node.name == name:
                return node
        elif isinstance(node, ast.Assign):
            if any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
                return node
        elif (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and node.target.id == name
        ):
            return node
    return None


def python_name_exists(dotted: str) -> bool:
    """``host.main.Host._dispatch``: the longest module prefix, then classes and their members."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        source = module_source(parts[:cut])
        if source is None:
            continue
        scope: list[ast.stmt] = ast.parse(source.read_text(encoding="utf-8")).body
        for attr in parts[cut:]:
            node = defined(scope, attr)
            if node is None:
                return False
            scope = node.body if isinstance(node, ast.ClassDef) else []
        return True
    return False


@cache
def js_functions() -> frozenset[str]:
    run = subprocess.run(
        ["node", str(REPO / "scripts" / "js_modules.mjs"), str(REPO / "extension")],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    files = json.loads(run.stdout)["files"]
    return frozenset(f["name"] for facts in files.values() for f in facts["functions"])


def test_every_file_the_architecture_names_exists():
    files = [n for n in names_in(ARCHITECTURE) if FILE.match(n)]
    assert len(files) > 20  # the check reads what it should
    missing = [n for n in files if not (REPO / n).exists()]
    assert missing == []


def test_every_python_name_the_architecture_uses_exists():
    roots = package_roots()
    dotted = [
        n
        for n in names_in(ARCHITECTURE)
        if DOTTED.match(n) and not FILE.match(n) and n.split(".")[0] in roots
    ]
    dotted = [n for n in dotted if not re.search(r"\.(py|pyi)$", n)]
    assert len(dotted) > 30
    missing = [n for n in dotted if not python_name_exists(n)]
    assert missing == []


def test_every_javascript_and_rust_function_the_architecture_names_exists():
    names = names_in(ARCHITECTURE)
    js = [m.group(1) for n in names if (m := JS_CALL.match(n))]
    assert len(js) > 10
    assert [n for n in js if n not in js_functions()] == []
    rust = [m.groups() for n in names if (m := RUST_PATH.match(n))]
    assert rust
    for module, fn in rust:
        source = (REPO / "rust" / "src" / f"{module}.rs").read_text(encoding="utf-8")
        assert re.search(rf"\bfn {fn}\b", source), f"{module}::{fn}"


def test_the_name_checker_refuses_what_does_not_exist():
    assert python_name_exists("host.main.Host.handle")
    assert python_name_exists("transport.framing.BUS")
    assert not python_name_exists("host.main.Host.no_such_method")
    assert not python_name_exists("host.no_such_module.take")


def test_readme_is_the_short_user_path_and_links_the_map():
    text = README.read_text(encoding="utf-8")
    assert len(text.encode("utf-8")) <= 15_000
    assert "docs/architecture.md" in text
    headings = re.findall(r"^## (.+)$", text, flags=re.MULTILINE)
    user_path = (
        "Quick start",
        "Install",
        "Use it with your own Chrome",
        "Register the MCP server",
        "The MCP tools",
        "Troubleshooting",
    )
    for needed in user_path:
        assert any(h.startswith(needed) for h in headings), needed
