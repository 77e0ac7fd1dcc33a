"""The layers point one way (docs/architecture.md, "Layers"), and no module imports itself
back through others.

``workflows`` (deterministic contracts and workflow code) ← ``activities`` (side effects) ←
``seawall.worker`` (the composition root; ``worker.py`` only runs it, and nothing imports
that script). The gateway, the CLI apps and the scenario driver are clients: contracts and
the shared runtime (``seawall.runtime``, whose Temporal plugin is their way in) only, never
the composition root, an activity module, or the MCP or OpenAI SDKs.

Three checks: what importing an entry point really loads, in a fresh interpreter; every
import statement in the source files, so a rule broken only inside a function is caught too;
and the import graph of the product code, which must have no circle.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

PACKAGES = ("workflows", "activities", "gateway", "seawall", "bench", "tests", "scripts")
OURS = (*PACKAGES, "worker")
SDKS = ("mcp", "openai")


def loaded_by(*modules: str) -> set[str]:
    """Every module a fresh interpreter has loaded after importing ``modules``."""
    code = (
        "import importlib, json, sys\n"
        f"for name in {list(modules)!r}:\n"
        "    importlib.import_module(name)\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout))


def packages(modules: set[str], *roots: str) -> set[str]:
    """The modules in ``modules`` that are ``roots`` or below them."""
    return {m for m in modules if any(m == r or m.startswith(r + ".") for r in roots)}


CLIENTS = [
    "gateway.app",
    "gateway.__main__",
    "seawall.client.events",
    "seawall.client.temporal_ops",
    "seawall.cli.main",
    "seawall.cli.prompt",
    "seawall.cli.stack",
    "seawall.cli.acp",
    "seawall.acp.agent",
    "seawall.acp.mapping",
    "seawall.acp.modes",
    "seawall.acp.prompt_text",
    "seawall.acp.replay",
    "seawall.acp.server",
    "seawall.acp.stdio",
    "seawall.acp.turn",
    "seawall.acp.errors",
    "seawall.acp.editor_fs",
    "seawall.rollout.cli",
    "seawall.scenario.driver",
    "seawall.scenario.format",
]


@pytest.mark.parametrize("module", CLIENTS)
def test_a_client_loads_no_worker_activity_or_model_sdk(module: str) -> None:
    loaded = loaded_by(module)
    assert packages(loaded, "worker", "seawall.worker", "activities", *SDKS) == set()


def test_the_runtime_and_its_plugin_load_no_activity_code() -> None:
    runtime = sorted(
        _module_of(path)
        for path in (ROOT / "seawall" / "runtime").rglob("*.py")
        if path.stem != "__init__"
    )
    assert "seawall.runtime.plugin" in runtime
    loaded = loaded_by(*runtime)
    forbidden = ("worker", "seawall.worker", "activities", "gateway", "seawall.cli")
    assert packages(loaded, *forbidden, *SDKS) == set()


def test_workflows_load_nothing_of_ours_but_workflows() -> None:
    workflows = sorted(_module_of(path) for path in (ROOT / "workflows").rglob("*.py"))
    loaded = loaded_by(*workflows)
    assert packages(loaded, *OURS) == packages(loaded, "workflows")


def test_every_workflows_module_imports_first() -> None:
    # A package's __init__ re-exports its public names, and a re-export that closes an import
    # cycle breaks only a module imported before its package: so each is imported first once.
    modules = sorted(_module_of(path) for path in (ROOT / "workflows").rglob("*.py"))
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    for loaded in [m for m in sys.modules if m.partition('.')[0] == 'workflows']:\n"
        "        del sys.modules[loaded]\n"
        "    importlib.import_module(name)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr


def test_the_worker_loads_the_model_and_mcp_sdks_only_when_a_prompt_needs_them() -> None:
    loaded = loaded_by("seawall.worker.main")  # what `python worker.py` runs
    assert "activities.tool_runner" in loaded
    assert packages(loaded, *SDKS) == set()


# --- the import statements -----------------------------------------------------------------


@dataclass(frozen=True)
class Import:
    path: str  # relative to the repository root
    module: str  # absolute, relative imports resolved
    line: int
    in_function: bool
    names: tuple[str, ...] = ()  # what `from module import ...` takes (modules or not)


def _module_of(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_in(path: Path) -> list[Import]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = _module_of(path)
    if path.name != "__init__.py":
        package = package.rpartition(".")[0]
    found: list[Import] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inside = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
            names: list[str] = []
            taken: tuple[str, ...] = ()
            if isinstance(child, ast.Import):
                names = [alias.name for alias in child.names]
            elif isinstance(child, ast.ImportFrom):
                taken = tuple(alias.name for alias in child.names)
                if child.level:
                    base = package.split(".")
                    base = base[: len(base) - (child.level - 1)]
                    names = [".".join([*base, *([child.module] if child.module else [])])]
                else:
                    names = [child.module or ""]
            for name in names:
                relative = path.relative_to(ROOT).as_posix()
                found.append(Import(relative, name, getattr(child, "lineno", 0), inside, taken))
            visit(child, inside)

    visit(tree, False)
    return found


def sources(*folders: str) -> list[Path]:
    return sorted(p for folder in folders for p in (ROOT / folder).rglob("*.py"))


def under(module: str, *roots: str) -> bool:
    return any(module == r or module.startswith(r + ".") for r in roots)


def ours(module: str) -> bool:
    return under(module, *OURS)


def violations(
    folders: tuple[str, ...], allowed: tuple[str, ...], forbidden_sdks: bool
) -> list[str]:
    """Imports in ``folders`` of our own modules outside ``allowed`` (and of the SDKs)."""
    found = []
    for path in sources(*folders):
        for imp in imports_in(path):
            if (ours(imp.module) and not under(imp.module, *allowed)) or (
                forbidden_sdks and under(imp.module, *SDKS)
            ):
                found.append(f"{imp.path}:{imp.line} imports {imp.module}")
    return found


def test_workflows_import_only_workflows_temporalio_pydantic_and_the_standard_library() -> None:
    third_party_allowed = ("temporalio", "pydantic", "pydantic_core", "annotated_types")
    found = []
    for path in sources("workflows"):
        for imp in imports_in(path):
            top = imp.module.split(".")[0]
            if under(imp.module, "workflows", *third_party_allowed):
                continue
            if top in sys.stdlib_module_names or top == "__future__":
                continue
            found.append(f"{imp.path}:{imp.line} imports {imp.module}")
    assert found == []


def test_the_composition_root_imports_activities_contracts_and_the_runtime_only() -> None:
    allowed = ("seawall.worker", "activities", "workflows", "seawall.runtime")
    assert violations(("seawall/worker",), allowed, forbidden_sdks=True) == []


def test_nothing_imports_the_worker_script() -> None:
    # worker.py is the program `python worker.py` runs; code that builds a worker imports
    # seawall.worker.build, so no script sits under the layers.
    found = [
        f"{imp.path}:{imp.line} imports worker (import seawall.worker.build instead)"
        for path in [*sources(*PACKAGES), *ROOT.glob("*.py")]
        for imp in imports_in(path)
        if under(imp.module, "worker")
    ]
    assert found == []


def test_activities_import_contracts_and_the_runtime_only() -> None:
    allowed = ("activities", "workflows", "seawall.runtime")
    assert violations(("activities",), allowed, forbidden_sdks=False) == []


def test_the_runtime_imports_only_contracts() -> None:
    allowed = ("seawall.runtime", "workflows")
    assert violations(("seawall/runtime",), allowed, forbidden_sdks=True) == []


def test_the_gateway_and_the_scenario_driver_import_contracts_and_the_runtime_only() -> None:
    allowed = ("gateway", "seawall.client", "workflows", "seawall.runtime")
    assert violations(("gateway",), allowed, True) == []
    assert (
        violations(
            ("seawall/scenario",), ("seawall.scenario", "workflows", "seawall.runtime"), True
        )
        == []
    )


def test_the_shared_client_code_imports_contracts_and_the_runtime_only() -> None:
    allowed = ("seawall.client", "workflows", "seawall.runtime")
    assert violations(("seawall/client",), allowed, forbidden_sdks=True) == []


def test_the_editor_bridge_imports_the_shared_client_code_contracts_and_the_runtime_only() -> None:
    allowed = ("seawall.acp", "seawall.client", "workflows", "seawall.runtime")
    assert violations(("seawall/acp",), allowed, forbidden_sdks=True) == []


def test_the_rollout_report_imports_contracts_and_the_runtime_only() -> None:
    allowed = ("seawall.rollout", "workflows", "seawall.runtime")
    assert violations(("seawall/rollout",), allowed, forbidden_sdks=True) == []


def test_the_cli_imports_the_composition_root_only_inside_the_function_that_starts_one() -> None:
    allowed = (
        "seawall.cli",
        "seawall.acp",
        "seawall.scenario",
        "seawall.rollout",
        "seawall.runtime",
        "workflows",
    )
    found = []
    for path in sources("seawall/cli"):
        for imp in imports_in(path):
            if under(imp.module, "seawall.worker") and imp.in_function:
                continue  # `seawall run`'s and `seawall acp --embedded`'s in-process worker
            if (ours(imp.module) and not under(imp.module, *allowed)) or under(imp.module, *SDKS):
                found.append(f"{imp.path}:{imp.line} imports {imp.module}")
    assert found == []


def test_benchmarks_measure_the_worker_but_never_import_the_clients() -> None:
    # bench times the worker's own code (its activities and seawall.worker), so it may import
    # them, and the event follower every client shares (bench/streaming.py), never a client
    # itself.
    allowed = (
        "bench",
        "workflows",
        "seawall.runtime",
        "seawall.scenario",
        "seawall.client",
        "activities",
        "seawall.worker",
    )
    # The OpenAI Agents SDK peer of bench/peers.py is that SDK's own agent: its
    # scripted model answers in the SDK's response types, so it imports them.
    peer = "bench/peer_openai_agents.py:"
    found = violations(("bench",), allowed, forbidden_sdks=True)
    assert [v for v in found if not (v.startswith(peer) and " imports openai." in v)] == []


def test_the_import_scanner_sees_relative_and_function_level_imports() -> None:
    runner = {imp.module for imp in imports_in(ROOT / "activities" / "tool_runner.py")}
    assert "activities.mcp.tools" in runner  # `from .mcp.tools import ...` inside a method
    cli = [
        imp
        for imp in imports_in(ROOT / "seawall" / "cli" / "main.py")
        if under(imp.module, "seawall.worker")
    ]
    assert cli and all(imp.in_function for imp in cli)


# --- import circles ------------------------------------------------------------------------

# What the circle check reads: the product code (bench, scripts and tests import it, never
# the other way round).
PRODUCT = ("workflows", "activities", "gateway", "seawall")

# Known circles on their way out, each named, with the modules it may span; a circle found
# outside every entry fails, and so does an entry whose circle is gone.
ALLOWED_CIRCLES: dict[str, frozenset[str]] = {}


def product_modules() -> dict[str, Path]:
    return {_module_of(path): path for path in [*sources(*PRODUCT), ROOT / "worker.py"]}


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Each module of ``modules`` → the modules of ``modules`` it imports anywhere (at module
    level, in a function, under ``TYPE_CHECKING``: a circle broken only by importing late is
    still a circle). ``from a import b`` is an edge to the module ``a.b`` if there is one,
    else to ``a``; importing ``a.b`` is an edge to ``a.b`` alone, not to the package ``a``
    that Python also runs (every package that re-exports its modules would be a circle)."""

    def nearest(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {module: set() for module in modules}
    for module, path in modules.items():
        for imp in imports_in(path):
            named = [f"{imp.module}.{name}" for name in imp.names]
            for target in [n if n in modules else imp.module for n in named] or [imp.module]:
                found = nearest(target)
                if found is not None and found != module:
                    graph[module].add(found)
    return graph


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    """The modules ``start`` reaches through one import or more."""
    seen: set[str] = set()
    todo = list(graph[start])
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(graph[module])
    return seen


def circles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """Every set of two or more modules that all import each other, directly or not."""
    reach = {module: reachable(graph, module) for module in graph}
    found: list[frozenset[str]] = []
    placed: set[str] = set()
    for module in sorted(graph):
        if module in placed or module not in reach[module]:
            continue
        component = frozenset({module} | {m for m in reach[module] if module in reach[m]})
        placed |= component
        found.append(component)
    return found


def circle_through(graph: dict[str, set[str]], component: Iterable[str]) -> list[str]:
    """One shortest circle of ``component``, from its first module back to it."""
    members = set(component)
    first = min(members)
    came_from: dict[str, str] = {}
    queue = deque([first])
    while queue:
        module = queue.popleft()
        for target in sorted(graph[module] & members):
            if target == first:
                path = [module]
                while path[-1] != first:
                    path.append(came_from[path[-1]])
                return [first, *reversed(path[:-1]), first]
            if target not in came_from:
                came_from[target] = module
                queue.append(target)
    raise AssertionError(f"{sorted(members)} is not a circle")


def test_the_product_code_has_no_import_circle() -> None:
    graph = import_graph(product_modules())
    found = circles(graph)
    unexpected = [
        f"import circle: {' → '.join(circle_through(graph, component))} "
        f"({len(component)} modules: {', '.join(sorted(component))})"
        for component in found
        if not any(component <= modules for modules in ALLOWED_CIRCLES.values())
    ]
    assert unexpected == []
    gone = [
        f"{name}: no longer a circle; remove its entry from ALLOWED_CIRCLES"
        for name, modules in ALLOWED_CIRCLES.items()
        if not any(len(component & modules) > 1 for component in found)
    ]
    assert gone == []


def test_the_circle_check_finds_and_names_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c", "d"}, "c": {"a"}, "d": {"e"}, "e": {"d"}, "f": {"a"}}
    assert circles(graph) == [frozenset({"a", "b", "c"}), frozenset({"d", "e"})]
    assert circle_through(graph, {"a", "b", "c"}) == ["a", "b", "c", "a"]
    # `from package import module` is an edge to the module; an import inside a function
    # (the CLI's in-process worker) is an edge too.
    graph = import_graph(product_modules())
    assert {"gateway.routers.sessions", "gateway.routers.health"} <= graph["gateway.app"]
    assert "seawall.worker.build" in graph["seawall.cli.main"]
