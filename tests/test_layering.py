"""The package's layering, read from its source: the modules' import graph has no cycle and points one way (the
engine contract and the schema at the bottom, the front-ends above them), no module imports another's private
names, front-ends never ask which engine runs, the bench's core imports none of its cases, and every module
imports on its own."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from pyproc import run_python

import parallel_pool as pp

PKG = Path(pp.__file__).parent


def _is_module(name: str) -> bool:
    """Whether `name` (dotted, parallel_pool...) is a module or package of the package (the compiled _core too)."""
    path = PKG.parent.joinpath(*name.split("."))
    so = any(path.parent.glob(path.name + ".*.so"))
    return so or path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def _package_imports(path: Path) -> set[str]:
    """parallel_pool modules (or packages) a file imports, anywhere in it (lazy imports inside functions count);
    `from parallel_pool.x import y` counts as parallel_pool.x.y when y is a module, else as parallel_pool.x."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("parallel_pool"):
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                out.add(sub if _is_module(sub) else node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("parallel_pool") and _is_module(a.name))
    return out


def _module_graph() -> dict[str, set[str]]:
    """Every module of the package, subpackages included -> the package modules it imports."""
    graph = {}
    for path in PKG.rglob("*.py"):
        parts = path.relative_to(PKG.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        graph[name] = _package_imports(path) - {name}
    return graph


def test_module_imports_have_no_cycle():
    graph = _module_graph()
    assert "parallel_pool.bench.report" in graph and "parallel_pool.envpool.python.protocol" in graph  # subpackages
    state: dict[str, int] = {}

    def visit(m, stack):
        if state.get(m) == 1:
            raise AssertionError(f"import cycle: {' -> '.join(stack + [m])}")
        if state.get(m) == 2:
            return
        state[m] = 1
        for dep in sorted(graph.get(m, ())):
            visit(dep, stack + [m])
        state[m] = 2

    for m in sorted(graph):
        visit(m, [])
    # the layers: schema/spec/registry/pool never reach up to the front-ends or their users
    for low in (
        "parallel_pool.schema",
        "parallel_pool.engine",
        "parallel_pool.spec",
        "parallel_pool.registry",
        "parallel_pool.pool",
        "parallel_pool.python_env",
        "parallel_pool.process_engine",
        "parallel_pool.process_worker",
        "parallel_pool.process_protocol",
    ):
        assert not graph[low] & {"parallel_pool.frontends", "parallel_pool.translate", "parallel_pool"}, (
            low,
            graph[low],
        )
    assert "parallel_pool.frontends" not in graph["parallel_pool.xla"]
    # the Engine contract sits at the bottom beside the schema; the process engine knows no front-end or spec: its
    # parent side imports the contract, the worker side and their shared protocol; the worker side (what the
    # forkserver loads) only the protocol and env_state (how an env's snapshot is taken and put back, importing
    # nothing of the package); snapshots are signed by parallel_pool.signing on both sides; the parent records its
    # segments with parallel_pool.orphans
    assert graph["parallel_pool.engine"] <= {"parallel_pool._core"}
    assert graph["parallel_pool.signing"] == set()
    assert graph["parallel_pool.orphans"] == set()
    assert graph["parallel_pool.process_protocol"] <= {"parallel_pool.signing"}
    assert graph["parallel_pool.env_state"] == set()
    assert graph["parallel_pool.process_worker"] <= {
        "parallel_pool.env_state",
        "parallel_pool.process_protocol",
        "parallel_pool.signing",
    }
    assert graph["parallel_pool.process_engine"] <= {
        "parallel_pool.engine",
        "parallel_pool.orphans",
        "parallel_pool.process_protocol",
        "parallel_pool.process_worker",
        "parallel_pool.signing",
    }


def test_no_module_imports_another_modules_private_names():
    """A name another module needs is public in the module that owns it (modules such as _core may be imported)."""
    found = []
    for path in PKG.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("parallel_pool"):
                for alias in node.names:
                    dunder = alias.name.startswith("__")  # __version__ and the like are public
                    if alias.name.startswith("_") and not dunder and not _is_module(f"{node.module}.{alias.name}"):
                        found.append(f"{path.relative_to(PKG)}: {node.module}.{alias.name}")
    assert not found, found


def test_the_front_ends_never_ask_which_engine_runs():
    """Above the engines, code asks for an optional capability (engine.fast_calls, engine.ffi_handle), never for an
    engine's type: no isinstance against an engine class in the modules that hold an engine."""
    engines = {"Engine", "ProcessEngine", "RayEngine"}
    found = []
    for name in ("pool", "frontends", "xla", "render", "translate"):
        for node in ast.walk(ast.parse((PKG / f"{name}.py").read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "isinstance" and len(node.args) == 2:
                kinds = node.args[1].elts if isinstance(node.args[1], ast.Tuple) else [node.args[1]]
                named = {getattr(k, "attr", getattr(k, "id", None)) for k in kinds}
                if named & engines:
                    found.append(f"{name}.py:{node.lineno}")
    assert not found, found


def test_the_bench_core_imports_none_of_its_cases():
    """The bench's core (plans, measuring, summary, report) knows no case: the cases (bench/suites/) import the core,
    and the runner (bench/__init__.py) calls the cases it runs."""
    graph = _module_graph()
    core = [m for m in graph if m.startswith("parallel_pool.bench.") and not m.startswith("parallel_pool.bench.suites")]
    assert "parallel_pool.bench.report" in core and "parallel_pool.bench.summary" in core
    for m in core:
        assert not {d for d in graph[m] if d.startswith("parallel_pool.bench.suites")}, (m, graph[m])


@pytest.mark.parametrize(
    "module",
    [
        "schema",
        "engine",
        "registry",
        "spec",
        "pool",
        "python_env",
        "process_protocol",
        "process_worker",
        "process_engine",
        "frontends",
        "xla",
        "translate",
        "multi_agent",
    ],
)
def test_each_module_imports_alone(module):
    r = run_python(f"import parallel_pool.{module}", timeout=120)
    assert r.returncode == 0, r.stderr
