#!/usr/bin/env python3
"""The shape check `make test` runs before pytest. It fails, naming each violation, on:

- an import circle among the Python package's modules (imports inside functions count; imports
  under `if TYPE_CHECKING:` do not, since they never run);
- an import between folders that the layering table below does not allow;
- an import circle among the extension's JavaScript modules (static and literal dynamic imports);
- a function longer than MAX_LINES in a hot-path module (the capture and click path).

The Python import graph comes from grimp (pinned in pyproject's dev extra): it resolves relative
and `from x import module` imports the way Python does and knows TYPE_CHECKING blocks. The
extension's modules are read by acorn through scripts/js_modules.mjs. The rules are plain data
here; the rest is graph walking.

    .venv/bin/python scripts/check_layers.py [--root DIR] [--package NAME] [--hot-path FILE ...]
"""

from __future__ import annotations

import argparse
import ast
import json
import posixpath
import subprocess
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MAX_LINES = 60

# Layers: a name and the package-relative modules or folders it covers ("" is the package's own
# __init__: the version, and the compiled Rust core, which grimp sees as the package itself).
LAYERS: dict[str, tuple[str, ...]] = {
    "root": ("",),
    "wire": ("wire",),
    "transport": ("transport",),
    "core": ("image", "diff", "_core"),
    "host": ("host",),
    "client": ("client",),
    "install": ("install",),
    "generate": ("generate",),
    "mcp_server": ("mcp_server",),
    "cli": ("cli", "__main__"),
}
ANYTHING = "*"
# What each layer may import besides itself and the package root: layer names, or one module by
# its package-relative dotted path. Shapes (wire) sit at the bottom; the host and its clients
# meet only there and in transport, so a client never runs host code.
MAY_IMPORT: dict[str, frozenset[str]] = {
    "root": frozenset(),
    "wire": frozenset(),
    "transport": frozenset({"wire"}),
    "core": frozenset({"wire"}),
    "host": frozenset({"wire", "transport", "core", "install.user_config"}),
    "client": frozenset({"wire", "transport", "install"}),
    "install": frozenset({"wire", "transport", "client"}),
    "generate": frozenset({"wire", "client"}),
    "mcp_server": frozenset({"wire", "client", "generate", "core"}),
    "cli": frozenset({ANYTHING}),
}

# The capture and click path, where no function may pass MAX_LINES: Python files relative to the
# package folder, JavaScript files relative to extension/.
HOT_PATH_PY: tuple[str, ...] = (
    # the MCP tools and the CLI command that ask for pixels or a click
    "mcp_server/tools/capture.py",
    "mcp_server/tools/observe.py",
    "mcp_server/tools/interact.py",
    "mcp_server/shots.py",
    "mcp_server/content.py",
    "mcp_server/connection.py",
    "cli/capture.py",
    # both ends of the bus, and the frames
    "client/bus_client.py",
    "client/connect.py",
    "transport/framing.py",
    "host/bus.py",
    # the host's commands, the session that keeps their images, the link to the extension
    "host/main.py",
    "host/screenshot.py",
    "host/interact.py",
    "host/shots.py",
    "host/after_capture.py",
    "host/sessions.py",
    "host/diff_memory.py",
    "host/extension_link.py",
    # the Rust core's typed front
    "image.py",
    "diff.py",
)
HOT_PATH_JS: tuple[str, ...] = (
    # the service worker: the port, dispatch and arguments, capture, input
    "background.js",
    "lib/native.js",
    "lib/commands.js",
    "lib/args.js",
    "lib/capture.js",
    "lib/debugger.js",
    "lib/page.js",
    "lib/frames.js",
    "lib/inspect.js",
    "lib/input.js",
    # in the page: the secrets' probe, the labels' discovery, where a click lands
    "page/probe.js",
    "page/discover.js",
    "page/interact.js",
)


@dataclass(frozen=True)
class Edge:
    importer: str
    imported: str
    where: str  # file:line of the import statement


# ---- Python ----------------------------------------------------------------------------------


def python_edges(src: Path, package: str) -> list[Edge]:
    """Every import between the package's own modules, TYPE_CHECKING blocks left out."""
    import grimp

    sys.path.insert(0, str(src))
    try:
        graph = grimp.build_graph(package, cache_dir=None, exclude_type_checking_imports=True)
    finally:
        sys.path.remove(str(src))
    edges = []
    for importer in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(importer)):
            details = graph.get_import_details(importer=importer, imported=imported)
            lines = sorted({d["line_number"] for d in details})
            path = module_file(src, importer)
            where = ", ".join(f"{path}:{n}" for n in lines) or path
            edges.append(Edge(importer, imported, where))
    return edges


def module_file(src: Path, module: str) -> str:
    parts = module.split(".")
    folder = src.joinpath(*parts)
    path = folder / "__init__.py" if folder.is_dir() else folder.with_suffix(".py")
    return path.relative_to(src.parent).as_posix()  # as the repository names it: python/...


def relative_name(module: str, package: str) -> str:
    return "" if module == package else module.removeprefix(package + ".")


def layer_of(rel: str) -> str | None:
    best: tuple[int, str] | None = None
    for layer, prefixes in LAYERS.items():
        for prefix in prefixes:
            covers = rel == prefix or (prefix and rel.startswith(prefix + "."))
            if covers and (best is None or len(prefix) > best[0]):
                best = (len(prefix), layer)
    return best[1] if best else None


def may_import(layer: str, target_rel: str, target_layer: str) -> bool:
    allowed = MAY_IMPORT[layer]
    if ANYTHING in allowed or target_layer in (layer, "root") or target_layer in allowed:
        return True
    return any(target_rel == a or target_rel.startswith(a + ".") for a in allowed if "." in a)


def layering_violations(edges: Iterable[Edge], package: str) -> Iterator[str]:
    unplaced: set[str] = set()
    for e in edges:
        src_rel, dst_rel = relative_name(e.importer, package), relative_name(e.imported, package)
        src_layer, dst_layer = layer_of(src_rel), layer_of(dst_rel)
        for rel, lay in ((src_rel, src_layer), (dst_rel, dst_layer)):
            if lay is None and rel not in unplaced:
                unplaced.add(rel)
                yield f"layering: {package}.{rel} is in no layer: add its folder to LAYERS"
        if src_layer is None or dst_layer is None:
            continue
        if not may_import(src_layer, dst_rel, dst_layer):
            allowed = ", ".join(sorted(MAY_IMPORT[src_layer])) or "nothing else"
            yield (
                f"layering: {e.importer} imports {e.imported} ({e.where}): "
                f"{src_layer} may import only {allowed}"
            )


# ---- graphs (shared by both languages) -------------------------------------------------------


def strongly_connected(nodes: Iterable[str], succ: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's components, iteratively (no recursion limit on long chains)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    for root in sorted(nodes):
        if root in index:
            continue
        work = [(root, iter(sorted(succ.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(succ.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                found.append(sorted(component))
    return found


def shortest_cycle(start: str, members: set[str], succ: dict[str, set[str]]) -> list[str]:
    """start -> … -> start through `members`, by breadth-first search."""
    parent: dict[str, str] = {}
    queue = [start]
    for node in queue:
        for child in sorted(succ.get(node, ())):
            if child not in members:
                continue
            if child == start:
                path = [node]
                while path[-1] != start:
                    path.append(parent[path[-1]])
                return [*reversed(path), start]
            if child not in parent:
                parent[child] = node
                queue.append(child)
    return [start, start]


def circle_violations(kind: str, edges: Iterable[Edge]) -> Iterator[str]:
    succ: dict[str, set[str]] = {}
    where: dict[tuple[str, str], str] = {}
    nodes: set[str] = set()
    for e in edges:
        succ.setdefault(e.importer, set()).add(e.imported)
        where[(e.importer, e.imported)] = e.where
        nodes |= {e.importer, e.imported}
    for component in strongly_connected(nodes, succ):
        if len(component) < 2:
            continue
        cycle = shortest_cycle(component[0], set(component), succ)
        steps = "".join(f"\n    {a} imports {b}  ({where[(a, b)]})" for a, b in pairwise(cycle))
        others = sorted(set(component) - set(cycle))
        also = f"\n    (the same circle also takes in: {', '.join(others)})" if others else ""
        yield f"{kind} import circle: {' -> '.join(cycle)}{steps}{also}"


# ---- function length -------------------------------------------------------------------------


def long_python_functions(path: Path, shown: str) -> Iterator[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))

    def walk(node: ast.AST, prefix: str) -> Iterator[str]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = f"{prefix}{child.name}"
                lines = (child.end_lineno or child.lineno) - child.lineno + 1
                if lines > MAX_LINES:
                    yield f"long function: {shown}:{child.lineno} {name} is {lines} lines"
                yield from walk(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                yield from walk(child, f"{prefix}{child.name}.")
            else:
                yield from walk(child, prefix)

    yield from walk(tree, "")


def hot_python(src: Path, package: str, files: Iterable[str]) -> Iterator[str]:
    for rel in files:
        path = src / package / rel
        shown = module_file(src, f"{package}.{rel.removesuffix('.py').replace('/', '.')}")
        if not path.is_file():
            yield f"long function: hot-path file {shown} is gone: update HOT_PATH_PY"
            continue
        yield from long_python_functions(path, shown)


# ---- JavaScript ------------------------------------------------------------------------------


def js_modules(extension: Path) -> dict:
    script = REPO / "scripts" / "js_modules.mjs"
    run = subprocess.run(
        ["node", str(script), str(extension)], capture_output=True, text=True, check=False
    )
    if run.returncode != 0:
        hint = "(acorn comes from tests/e2e/node_modules: scripts/setup.sh installs it)"
        raise SystemExit(f"check_layers: {script.name} failed {hint}:\n{run.stderr.strip()}")
    return json.loads(run.stdout)


def js_edges(modules: dict, shown: str) -> list[Edge]:
    edges = []
    for rel, facts in modules["files"].items():
        for imp in facts["imports"]:
            spec = imp["spec"]
            if not spec.startswith("."):
                continue  # a bare specifier is no module of ours
            target = posixpath.normpath(posixpath.join(posixpath.dirname(rel), spec))
            edges.append(Edge(rel, target, f"{shown}/{rel}:{imp['line']}"))
    return edges


def js_violations(extension: Path, hot: Iterable[str]) -> Iterator[str]:
    modules = js_modules(extension)
    shown = extension.name
    for error in modules["errors"]:
        yield f"javascript: cannot parse {shown}/{error}"
    yield from circle_violations("javascript", js_edges(modules, shown))
    for rel in hot:
        facts = modules["files"].get(rel)
        if facts is None:
            yield f"long function: hot-path file {shown}/{rel} is gone: update HOT_PATH_JS"
            continue
        for fn in facts["functions"]:
            if fn["lines"] > MAX_LINES:
                yield (
                    f"long function: {shown}/{rel}:{fn['line']} {fn['name']} is {fn['lines']} lines"
                )


# ---- entry point -----------------------------------------------------------------------------


def violations(root: Path, package: str, hot_py: Iterable[str], hot_js: Iterable[str]) -> list[str]:
    src = root / "python"
    edges = python_edges(src, package)
    found = [
        *circle_violations("python", edges),
        *layering_violations(edges, package),
        *hot_python(src, package, hot_py),
    ]
    extension = root / "extension"
    if extension.is_dir():
        found += js_violations(extension, hot_js)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=REPO, help="holds python/PACKAGE, extension/")
    parser.add_argument("--package", default="shotbridge")
    parser.add_argument("--hot-path", action="append", help="override both hot-path lists")
    args = parser.parse_args(argv)
    hot_py, hot_js = HOT_PATH_PY, HOT_PATH_JS
    if args.hot_path is not None:
        hot_py = tuple(p for p in args.hot_path if p.endswith(".py"))
        hot_js = tuple(p for p in args.hot_path if p.endswith(".js"))
    found = violations(args.root.resolve(), args.package, hot_py, hot_js)
    for line in found:
        print(line)
    if found:
        print(f"check_layers: {len(found)} violation(s); the rules are the data atop this script")
        return 1
    print("check_layers: no import circle, no forbidden import, no long hot-path function")
    return 0


if __name__ == "__main__":
    sys.exit(main())
