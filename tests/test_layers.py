"""scripts/check_layers.py catches each kind of violation it exists for, in small planted trees,
and passes a clean one. The real tree is checked by scripts/test.sh before pytest."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "check_layers.py"
PKG = "planted"  # not "shotbridge": the real package is already imported in this process


def load_checker():
    spec = importlib.util.spec_from_file_location("check_layers", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)  # dataclasses look their module up while defining
    spec.loader.exec_module(module)
    return module


def plant(root: Path, files: dict[str, str]) -> Path:
    """A tree like the repository's: python/planted/... and extension/..."""
    base = {
        f"python/{PKG}/__init__.py": "",
        f"python/{PKG}/wire/__init__.py": "",
        f"python/{PKG}/wire/shapes.py": "class Shape: ...\n",
        f"python/{PKG}/host/__init__.py": "",
        f"python/{PKG}/host/main.py": f"from {PKG}.wire.shapes import Shape\n",
        f"python/{PKG}/client/__init__.py": "",
        f"python/{PKG}/client/bus.py": f"from {PKG}.wire import shapes\n",
        f"python/{PKG}/install/__init__.py": "",
        f"python/{PKG}/install/user_config.py": "",
        f"python/{PKG}/install/register.py": "",
        f"python/{PKG}/generate/__init__.py": "",
        f"python/{PKG}/generate/steps.py": f"from {PKG}.client.bus import shapes\n",
        "extension/background.js": "import { a } from './lib/a.js';\na();\n",
        "extension/lib/a.js": "import { b } from './b.js';\nexport function a() { b(); }\n",
        "extension/lib/b.js": "export function b() {}\n",
    }
    for rel, text in {**base, **files}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def check(root: Path, *hot: str) -> tuple[int, str]:
    args = [sys.executable, str(SCRIPT), "--root", str(root), "--package", PKG]
    for h in hot:
        args += ["--hot-path", h]
    if not hot:
        args += ["--hot-path", "none"]  # an empty hot path: neither .py nor .js
    run = subprocess.run(args, capture_output=True, text=True, timeout=120, check=False)
    return run.returncode, run.stdout + run.stderr


def function(name: str, body_lines: int, indent: str = "") -> str:
    """A Python function `body_lines + 1` lines long."""
    body = "".join(f"{indent}    x{i} = {i}\n" for i in range(body_lines))
    return f"{indent}def {name}():\n{body}"


def js_function(name: str, body_lines: int) -> str:
    """A JavaScript function `body_lines + 2` lines long."""
    body = "".join(f"  const x{i} = {i};\n" for i in range(body_lines))
    return f"export function {name}() {{\n{body}}}\n"


def test_a_clean_tree_passes(tmp_path):
    root = plant(tmp_path, {})
    code, out = check(root, "host/main.py", "lib/a.js")
    assert code == 0, out
    assert "no import circle, no forbidden import" in out


def test_a_python_circle_through_a_lazy_import_is_caught(tmp_path):
    root = plant(
        tmp_path,
        {
            f"python/{PKG}/host/a.py": f"from {PKG}.host import b\n",
            f"python/{PKG}/host/b.py": f"def later():\n    from {PKG}.host import a\n    return a",
        },
    )
    code, out = check(root)
    assert code == 1
    assert f"python import circle: {PKG}.host.a -> {PKG}.host.b -> {PKG}.host.a" in out
    assert f"python/{PKG}/host/b.py:2" in out  # where the lazy import sits


def test_a_type_checking_import_is_no_circle(tmp_path):
    root = plant(
        tmp_path,
        {
            f"python/{PKG}/host/a.py": f"from {PKG}.host import b\n",
            f"python/{PKG}/host/b.py": (
                "from typing import TYPE_CHECKING\n"
                f"if TYPE_CHECKING:\n    from {PKG}.host import a\n"
            ),
        },
    )
    code, out = check(root)
    assert code == 0, out


def test_a_forbidden_import_between_folders_is_caught(tmp_path):
    root = plant(tmp_path, {f"python/{PKG}/generate/steps.py": f"from {PKG}.host import main\n"})
    code, out = check(root)
    assert code == 1
    assert f"layering: {PKG}.generate.steps imports {PKG}.host.main" in out
    assert "generate may import only client, wire" in out


def test_a_module_exception_allows_that_module_only(tmp_path):
    allowed = plant(
        tmp_path / "ok", {f"python/{PKG}/host/cfg.py": f"import {PKG}.install.user_config\n"}
    )
    assert check(allowed)[0] == 0
    barred = plant(
        tmp_path / "no", {f"python/{PKG}/host/cfg.py": f"import {PKG}.install.register\n"}
    )
    code, out = check(barred)
    assert code == 1
    assert f"{PKG}.host.cfg imports {PKG}.install.register" in out


def test_a_folder_missing_from_the_table_is_named(tmp_path):
    root = plant(
        tmp_path,
        {
            f"python/{PKG}/extras/__init__.py": "",
            f"python/{PKG}/extras/x.py": f"from {PKG}.wire import shapes\n",
        },
    )
    code, out = check(root)
    assert code == 1
    assert f"{PKG}.extras.x is in no layer" in out


def test_a_javascript_circle_through_a_dynamic_import_is_caught(tmp_path):
    root = plant(
        tmp_path,
        {
            "extension/lib/b.js": "export async function b() { await import('./a.js'); }\n",
        },
    )
    code, out = check(root)
    assert code == 1
    assert "javascript import circle: lib/a.js -> lib/b.js -> lib/a.js" in out
    assert "extension/lib/b.js:1" in out


def test_a_jsdoc_import_type_is_no_javascript_import(tmp_path):
    # b.js imports c.js, c.js names a.js only in a type comment: no circle a -> b -> c -> a.
    root = plant(
        tmp_path,
        {
            "extension/lib/b.js": "import './c.js';\nexport function b() {}\n",
            "extension/lib/c.js": "/** @param {import('./a.js').A} x */\nexport const c = 1;\n",
        },
    )
    code, out = check(root)
    assert code == 0, out


def test_a_long_python_function_on_the_hot_path_is_caught(tmp_path):
    long_ = "class Host:\n" + function("dispatch", 61, indent="    ")  # 62 lines
    fits = function("short", 59)  # 60 lines: the limit itself passes
    root = plant(
        tmp_path,
        {f"python/{PKG}/host/main.py": long_, f"python/{PKG}/host/other.py": fits},
    )
    code, out = check(root, "host/main.py", "host/other.py")
    assert code == 1
    assert f"long function: python/{PKG}/host/main.py:2 Host.dispatch is 62 lines" in out
    assert "short" not in out
    assert check(plant(tmp_path / "off", {f"python/{PKG}/host/main.py": long_}))[0] == 0


def test_a_long_javascript_function_on_the_hot_path_is_caught(tmp_path):
    wrapped = "(() => {\n" + "".join(f"  const y{i} = {i};\n" for i in range(80)) + "})();\n"
    root = plant(
        tmp_path,
        {"extension/lib/b.js": js_function("b", 60), "extension/page/wrap.js": wrapped},
    )
    code, out = check(root, "lib/b.js", "page/wrap.js")
    assert code == 1
    assert "long function: extension/lib/b.js:1 b is 62 lines" in out
    assert "wrap.js" not in out  # a file-wide wrapper is the file's scope, not a function


def test_a_long_callback_is_named_by_the_function_it_sits_in(tmp_path):
    body = "".join(f"    const x{i} = {i};\n" for i in range(61))
    source = f"export function outer(run) {{\n  return run(() => {{\n{body}  }});\n}}\n"
    code, out = check(plant(tmp_path, {"extension/lib/b.js": source}), "lib/b.js")
    assert code == 1
    assert "extension/lib/b.js:2 outer > callback is 63 lines" in out


def test_a_hot_path_file_that_is_gone_is_named(tmp_path):
    code, out = check(plant(tmp_path, {}), "host/renamed.py", "lib/renamed.js")
    assert code == 1
    assert f"python/{PKG}/host/renamed.py is gone" in out
    assert "extension/lib/renamed.js is gone" in out


def test_the_rules_name_only_known_layers_and_real_hot_files():
    checker = load_checker()
    assert set(checker.MAY_IMPORT) == set(checker.LAYERS)
    for layer, allowed in checker.MAY_IMPORT.items():
        for target in allowed:
            if target == checker.ANYTHING:
                continue
            if "." in target:  # one module: it must exist
                assert (REPO / "python/shotbridge" / (target.replace(".", "/") + ".py")).is_file()
            else:
                assert target in checker.LAYERS, (layer, target)
    for rel in checker.HOT_PATH_PY:
        assert (REPO / "python/shotbridge" / rel).is_file(), rel
    for rel in checker.HOT_PATH_JS:
        assert (REPO / "extension" / rel).is_file(), rel


@pytest.mark.parametrize(
    ("layer", "target", "ok"),
    [
        ("mcp_server", "host", False),
        ("generate", "host", False),
        ("wire", "transport", False),
        ("client", "install", True),
        ("install", "client", True),
        ("cli", "host", True),
    ],
)
def test_the_table_says_what_common_rules_say(layer, target, ok):
    checker = load_checker()
    assert checker.may_import(layer, target + ".x", target) is ok
