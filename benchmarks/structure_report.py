"""Measures the structure of the project's own Python packages: import circles, imports hidden in
functions, uses of other modules' private names, the HTTP API's imports of views, the largest
functions and modules.

Standalone: the standard library's ``ast`` only; it imports nothing of the project, so it runs with
any Python 3.9+ from the checkout's root (or with ``--root``)::

    python benchmarks/structure_report.py            # compact report
    python benchmarks/structure_report.py --json     # the same figures as JSON
    python benchmarks/structure_report.py --list functions   # every function-level import
    python benchmarks/structure_report.py --list private     # every cross-module private-name use

What it counts (over anonymizer_app, hierarchy_editor, accounts and policies; tests/ and
migrations/ are not read):

1. The import graph of project modules, with every import statement wherever it stands (module
   level, in a function, in a class, under ``if TYPE_CHECKING:``). ``import a.b.c`` is an edge to
   ``a.b.c``; ``from a.b import x`` is an edge to ``a.b.x`` when that is a module, else to ``a.b``;
   relative imports are resolved against the importing file's package. A circle is a strongly
   connected component of more than one module.
2. Function-level imports: import statements inside a ``def`` or ``class`` body that import at
   least one project module (a statement is counted once, however many names it imports).
   Imports under a module-level ``if TYPE_CHECKING:`` are not function-level and are not counted.
3. Cross-module private-name uses: ``from m import _x`` where ``m`` is another project module and
   ``_x`` is not a module of its own; ``m._x`` (also ``a.b._x``) where ``m`` is a name bound in the
   file to another project module; an import of a private module (``_kernel``) from outside the
   package that holds it. Dunder names (``__version__``) are not private. Each occurrence counts.
4. Import statements in ``anonymizer_app/api/`` that reach a views module (``anonymizer_app.views``
   or any module named ``views`` of the project).
5. The five largest functions (lines from ``def`` to the last line of its body, decorators
   excluded; a method is named ``Class.method``) and the five largest modules (lines in the file).
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

PACKAGES = ("anonymizer_app", "hierarchy_editor", "accounts", "policies")
SKIP_DIRS = {"tests", "migrations", "__pycache__", "node_modules", "static", "templates"}


@dataclass
class Module:
    name: str
    path: Path
    is_package: bool
    tree: ast.Module
    lines: int
    imports: set[str] = field(default_factory=set)


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def discover(root: Path) -> dict[str, Module]:
    modules: dict[str, Module] = {}
    for package in PACKAGES:
        base = root / package
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*.py")):
            rel = path.relative_to(root)
            if any(part in SKIP_DIRS for part in rel.parts[:-1]):
                continue
            parts = list(rel.with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts = parts[:-1]
            # a folder without __init__.py below a package is still a namespace package
            source = path.read_text(encoding="utf-8")
            try:
                tree = ast.parse(source, filename=str(path))
            except SyntaxError as exc:  # pragma: no cover - a broken file is reported, not fatal
                print(f"cannot parse {rel}: {exc}", file=sys.stderr)
                continue
            modules[".".join(parts)] = Module(
                ".".join(parts),
                rel,
                is_package,
                tree,
                source.count("\n") + (0 if source.endswith("\n") else 1),
            )
    return modules


def _package_of(module: Module) -> str:
    return module.name if module.is_package else module.name.rpartition(".")[0]


def _resolve_from(module: Module, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = _package_of(module).split(".")
    if node.level > 1:
        base = base[: len(base) - (node.level - 1)]
    parts = base + ([node.module] if node.module else [])
    return ".".join(p for p in parts if p)


def _nearest_project_module(name: str, modules: dict[str, Module]) -> str | None:
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


@dataclass
class ImportUse:
    module: str  # importing module
    line: int
    targets: list[str]  # project modules reached
    function_level: bool
    type_checking: bool
    statement: str


@dataclass
class PrivateUse:
    module: str
    line: int
    target: str
    name: str
    how: str


def _walk_imports(module: Module, modules: dict[str, Module]):
    """Yield (node, function_level, type_checking) for every import statement of the file."""

    def visit(node: ast.AST, in_function: bool, type_checking: bool):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                yield child, in_function, type_checking
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                yield from visit(child, True, type_checking)
            elif isinstance(child, ast.If) and _is_type_checking(child.test):
                for stmt in child.body:
                    yield from visit(ast.Module(body=[stmt], type_ignores=[]), in_function, True)
                for stmt in child.orelse:
                    yield from visit(ast.Module(body=[stmt], type_ignores=[]), in_function, type_checking)
            else:
                yield from visit(child, in_function, type_checking)

    yield from visit(module.tree, False, False)


def analyse(root: Path) -> dict:
    modules = discover(root)
    uses: list[ImportUse] = []
    private: list[PrivateUse] = []

    for mod in modules.values():
        bound: dict[str, str] = {}  # local name -> project module it names
        for node, function_level, type_checking in _walk_imports(mod, modules):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                for alias in node.names:
                    target = _nearest_project_module(alias.name, modules)
                    if target is None:
                        continue
                    targets.append(target)
                    if alias.asname:
                        if target == alias.name:
                            bound[alias.asname] = target
                    else:
                        # `import a.b.c` binds `a`; attribute chains are resolved later
                        top = alias.name.split(".")[0]
                        if top in modules:
                            bound[top] = top
                    if _private_module_outside(target, mod.name):
                        private.append(
                            PrivateUse(
                                mod.name,
                                node.lineno,
                                target,
                                target.rpartition(".")[2],
                                "import of a private module",
                            )
                        )
            else:
                base = _resolve_from(mod, node)
                base_target = _nearest_project_module(base, modules)
                if base_target is None:
                    continue
                for alias in node.names:
                    full = f"{base}.{alias.name}"
                    if full in modules:
                        targets.append(full)
                        bound[alias.asname or alias.name] = full
                        if _private_module_outside(full, mod.name):
                            private.append(
                                PrivateUse(
                                    mod.name, node.lineno, full, alias.name, "import of a private module"
                                )
                            )
                    else:
                        targets.append(base_target)
                        if _is_private(alias.name) and base_target != mod.name:
                            private.append(
                                PrivateUse(mod.name, node.lineno, base_target, alias.name, "from-import")
                            )
            targets = [t for t in dict.fromkeys(targets) if t != mod.name]
            if not targets:
                continue
            mod.imports.update(targets)
            uses.append(
                ImportUse(
                    mod.name,
                    node.lineno,
                    targets,
                    function_level,
                    type_checking,
                    ast.unparse(node) if hasattr(ast, "unparse") else "",
                )
            )

        # m._x attribute uses through names bound to project modules
        for node in ast.walk(mod.tree):
            if not isinstance(node, ast.Attribute) or not _is_private(node.attr):
                continue
            dotted = _dotted(node.value)
            if dotted is None:
                continue
            head, _, rest = dotted.partition(".")
            if head not in bound:
                continue
            target_name = bound[head] + ("." + rest if rest else "")
            if target_name not in modules:
                continue
            if target_name == mod.name:
                continue
            private.append(PrivateUse(mod.name, node.lineno, target_name, node.attr, "attribute"))

    graph = {name: sorted(m.imports) for name, m in modules.items()}
    circles = [sorted(c) for c in _sccs(graph) if len(c) > 1]
    circles.sort(key=lambda c: (-len(c), c))

    function_level = [u for u in uses if u.function_level]
    type_checking = [u for u in uses if u.type_checking]
    api_views = [
        u
        for u in uses
        if u.module.startswith("anonymizer_app.api")
        and any(
            t == "anonymizer_app.views"
            or t.startswith("anonymizer_app.views.")
            or t.rpartition(".")[2] == "views"
            for t in u.targets
        )
    ]

    functions = []
    for mod in modules.values():
        for qualname, node in _functions(mod.tree):
            functions.append((node.end_lineno - node.lineno + 1, f"{mod.path}:{node.lineno} {qualname}"))
    functions.sort(key=lambda f: (-f[0], f[1]))
    largest_modules = sorted(((m.lines, str(m.path)) for m in modules.values()), key=lambda f: (-f[0], f[1]))

    return {
        "modules": len(modules),
        "import_edges": sum(len(v) for v in graph.values()),
        "circles": circles,
        "circle_count": len(circles),
        "function_level_imports": len(function_level),
        "function_level_by_module": _counts(u.module for u in function_level),
        "type_checking_imports": len(type_checking),
        "private_uses": len(private),
        "private_by_module": _counts(p.module for p in private),
        "api_view_imports": len(api_views),
        "api_view_import_list": [f"{u.module}:{u.line} {u.statement}" for u in api_views],
        "largest_functions": [{"lines": n, "where": w} for n, w in functions[:5]],
        "largest_modules": [{"lines": n, "path": p} for n, p in largest_modules[:5]],
        "_function_level_list": [f"{u.module}:{u.line} {u.statement}" for u in function_level],
        "_private_list": [f"{p.module}:{p.line} {p.how} {p.target} {p.name}" for p in private],
    }


def _private_module_outside(target: str, importer: str) -> bool:
    parent, _, leaf = target.rpartition(".")
    if not _is_private(leaf):
        return False
    return not (importer == parent or importer.startswith(parent + "."))


def _dotted(node: ast.expr) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def _functions(tree: ast.AST, prefix: str = ""):
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            name = prefix + node.name
            yield name, node
            yield from _functions(node, name + ".")
        elif isinstance(node, ast.ClassDef):
            yield from _functions(node, prefix + node.name + ".")
        else:
            yield from _functions(node, prefix)


def _counts(items) -> dict[str, int]:
    out: dict[str, int] = {}
    for item in items:
        out[item] = out.get(item, 0) + 1
    return dict(sorted(out.items(), key=lambda kv: (-kv[1], kv[0])))


def _sccs(graph: dict[str, list[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative (the graph can be deep)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    result: list[list[str]] = []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(graph.get(start, ())))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(graph.get(child, ()))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    item = stack.pop()
                    on_stack.discard(item)
                    component.append(item)
                    if item == node:
                        break
                result.append(component)
    return result


def render(report: dict) -> str:
    out = [
        f"modules: {report['modules']}  import edges: {report['import_edges']}",
        f"import circles: {report['circle_count']}",
    ]
    for circle in report["circles"]:
        out.append(f"  ({len(circle)}) " + ", ".join(circle))
    out.append(f"function-level imports of project modules: {report['function_level_imports']}")
    top = list(report["function_level_by_module"].items())[:8]
    if top:
        out.append("  most in: " + ", ".join(f"{m} {n}" for m, n in top))
    out.append(
        f"imports under `if TYPE_CHECKING:`: {report['type_checking_imports']} (in the graph, not function-level)"
    )
    out.append(f"cross-module private-name uses: {report['private_uses']}")
    top = list(report["private_by_module"].items())[:8]
    if top:
        out.append("  most in: " + ", ".join(f"{m} {n}" for m, n in top))
    out.append(f"imports of views in anonymizer_app/api: {report['api_view_imports']}")
    for line in report["api_view_import_list"]:
        out.append(f"  {line}")
    out.append("largest functions (lines):")
    for f in report["largest_functions"]:
        out.append(f"  {f['lines']:5d}  {f['where']}")
    out.append("largest modules (lines):")
    for f in report["largest_modules"]:
        out.append(f"  {f['lines']:5d}  {f['path']}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--root", default=str(Path(__file__).resolve().parent.parent), help="the checkout's root"
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--list", choices=["functions", "private"], help="list every occurrence of one kind")
    args = parser.parse_args(argv)
    report = analyse(Path(args.root))
    if args.list == "functions":
        print("\n".join(report["_function_level_list"]))
    elif args.list == "private":
        print("\n".join(report["_private_list"]))
    elif args.json:
        print(json.dumps({k: v for k, v in report.items() if not k.startswith("_")}, indent=2))
    else:
        print(render(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
