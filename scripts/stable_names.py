"""The names recorded histories and running workflows depend on, collected from the code.

A recorded history names its workflow type, the signals, updates and queries sent to it, the
activities it scheduled, its patch markers and its search attributes; a running workflow is
found again by those names after a deploy, and dashboards read its metric names. Renaming or
removing one breaks them (docs/architecture.md, "Stable names"). This module collects them
all by discovery — every module of the ``workflows`` and ``activities`` packages is imported
and read, so a module that moves or a name that is added cannot be missed — and compares them
with the checked-in manifest, :data:`MANIFEST`, which ``tests/replay/test_stable_names.py``
holds the code to.

    .venv/bin/python -m scripts.stable_names            # compare; exit 1 on any difference
    .venv/bin/python -m scripts.stable_names --accept   # rewrite the manifest from the code

``--accept`` is the deliberate step: the manifest's diff is then part of the change, for its
reviewer to see (and a removed name needs the reason in docs/architecture.md, "Versioning").

What is collected:

- workflows and their signal, update and query names: Temporal's own definition of every
  ``@workflow.defn`` class in ``workflows`` (``temporalio.workflow._Definition``);
- activity names: every ``@activity.defn`` function or method in ``activities``;
- patch ids: the arguments of every ``workflow.patched``/``workflow.deprecate_patch`` call
  in ``workflows`` (and of the helpers that forward to them, named ``…patched``), string
  literals or constants resolved through the module's namespace;
- search attributes: every module-level ``SearchAttributeKey`` in ``workflows``, with its type;
- metric names: the first argument of every ``create_counter``/``create_histogram…``/
  ``create_gauge…`` call in ``workflows``;
- storage driver names: the name each External Storage driver (filesystem, s3) writes into
  the references it leaves in histories;
- payload defaults: the default of every optional field of every pydantic model in
  ``workflows``. Seawall's converter writes payloads without their defaults
  (``seawall/runtime/converter.py``), so a recorded payload that lacks a field means the
  default the reading code declares: a changed default changes what old histories say.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import json
import pkgutil
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from pydantic import BaseModel
from pydantic_core import to_json
from temporalio import activity, workflow
from temporalio.common import SearchAttributeKey

MANIFEST = Path(__file__).resolve().parent.parent / "tests" / "replay" / "stable_names.json"
ACCEPT_COMMAND = ".venv/bin/python -m scripts.stable_names --accept"

WORKFLOW_PACKAGE = "workflows"
ACTIVITY_PACKAGE = "activities"
PATCH_CALLS = ("patched", "deprecate_patch")
METRIC_CALLS = ("create_counter", "create_histogram", "create_gauge")

# One stable name: its kind and the name (handlers as "Workflow.handler").
Name = tuple[str, str]
KINDS = (
    "workflow",
    "signal",
    "update",
    "query",
    "activity",
    "patch",
    "search attribute",
    "metric",
    "storage driver",
    "payload default",
)


class CollectionError(Exception):
    """The code uses a stable name in a way the collector cannot read (say, a patch id
    computed at runtime): make it a literal or a module constant."""


def modules(package: str) -> Iterator[ModuleType]:
    """``package`` and every module below it, imported, in name order."""
    root = importlib.import_module(package)
    yield root
    found = pkgutil.walk_packages(root.__path__, prefix=f"{package}.")
    for info in sorted(found, key=lambda info: info.name):
        yield importlib.import_module(info.name)


def _own_members(module: ModuleType) -> Iterator[Any]:
    """The module's members defined in it (not imported into it)."""
    for value in vars(module).values():
        if getattr(value, "__module__", None) == module.__name__:
            yield value


def workflow_names(package: str = WORKFLOW_PACKAGE) -> set[Name]:
    names: set[Name] = set()
    for module in modules(package):
        for member in _own_members(module):
            if not inspect.isclass(member):
                continue
            definition = workflow._Definition.from_class(member)
            if definition is None:
                continue
            workflow_name = definition.name or "<dynamic>"
            names.add(("workflow", workflow_name))
            for kind, handlers in (
                ("signal", definition.signals),
                ("update", definition.updates),
                ("query", definition.queries),
            ):
                for handler in handlers:
                    names.add((kind, f"{workflow_name}.{handler or '<dynamic>'}"))
    return names


def activity_names(package: str = ACTIVITY_PACKAGE) -> set[Name]:
    names: set[Name] = set()
    for module in modules(package):
        for member in _own_members(module):
            candidates = vars(member).values() if inspect.isclass(member) else [member]
            for candidate in candidates:
                definition = getattr(candidate, "__temporal_activity_definition", None)
                if isinstance(definition, activity._Definition):
                    names.add(("activity", definition.name or "<dynamic>"))
    return names


def search_attribute_names(package: str = WORKFLOW_PACKAGE) -> set[Name]:
    names: set[Name] = set()
    for module in modules(package):
        for value in vars(module).values():
            if isinstance(value, SearchAttributeKey):
                kind = value.indexed_value_type.name.removeprefix("INDEXED_VALUE_TYPE_").lower()
                names.add(("search attribute", f"{value.name} ({kind})"))
    return names


def storage_driver_names() -> set[Name]:
    """The names of the External Storage drivers a worker may use: every stored payload's
    reference in a history names its driver, and only a driver of that name reads it back."""
    from seawall.runtime.storage import FilesystemStorageDriver
    from seawall.runtime.storage_s3 import s3_driver

    drivers = (FilesystemStorageDriver(Path()), s3_driver("bucket", None, None))
    return {("storage driver", driver.name()) for driver in drivers}


def _callee(call: ast.Call) -> str:
    function = call.func
    if isinstance(function, ast.Attribute):
        return function.attr
    if isinstance(function, ast.Name):
        return function.id
    return ""


def _resolve(node: ast.expr, module: ModuleType) -> object:
    """The value of a literal, a module-level name or a dotted name reached from one."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        try:
            return vars(module)[node.id]
        except KeyError:
            raise CollectionError(f"{module.__name__}: {node.id!r} is not a module name") from None
    if isinstance(node, ast.Attribute):
        return getattr(_resolve(node.value, module), node.attr)
    raise CollectionError(f"{module.__name__}: cannot read {ast.unparse(node)!r}")


def _parameters(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    arguments = function.args
    every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
    return {argument.arg for argument in every}


@dataclass(frozen=True)
class _Call:
    call: ast.Call
    enclosing: ast.FunctionDef | ast.AsyncFunctionDef | None


def _calls(tree: ast.AST) -> Iterator[_Call]:
    def walk(
        node: ast.AST, enclosing: ast.FunctionDef | ast.AsyncFunctionDef | None
    ) -> Iterator[_Call]:
        for child in ast.iter_child_nodes(node):
            inner = child if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) else None
            if isinstance(child, ast.Call):
                yield _Call(child, enclosing)
            yield from walk(child, inner or enclosing)

    yield from walk(tree, None)


def _first_string(call: _Call, module: ModuleType, what: str) -> str | None:
    """The call's first argument as a string; ``None`` for a forwarding helper's parameter
    (``def _patched(self, patch_id): ... workflow.patched(patch_id)``: its callers are read)."""
    if not call.call.args:
        raise CollectionError(f"{module.__name__}: a {what} call without a positional argument")
    argument = call.call.args[0]
    enclosing = call.enclosing
    if (
        isinstance(argument, ast.Name)
        and enclosing is not None
        and argument.id in _parameters(enclosing)
    ):
        if what == "patch" and enclosing.name.endswith(PATCH_CALLS):
            return None
        raise CollectionError(
            f"{module.__name__}.{enclosing.name} passes its parameter {argument.id!r} to a "
            f"{what} call: name the helper '…patched' (so its callers are read) or pass a "
            "module constant"
        )
    value = _resolve(argument, module)
    if not isinstance(value, str):
        raise CollectionError(f"{module.__name__}: {ast.unparse(argument)!r} is not a string")
    return value


def source_names(package: str = WORKFLOW_PACKAGE) -> set[Name]:
    """Patch ids and metric names, read from the calls in the package's source."""
    names: set[Name] = set()
    for module in modules(package):
        if module.__file__ is None:
            continue
        tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
        for call in _calls(tree):
            callee = _callee(call.call)
            if callee.endswith(PATCH_CALLS):
                value = _first_string(call, module, "patch")
                if value is not None:
                    names.add(("patch", value))
            elif callee.startswith(METRIC_CALLS):
                value = _first_string(call, module, "metric")
                if value is not None:
                    names.add(("metric", value))
    return names


def payload_defaults(package: str = WORKFLOW_PACKAGE) -> set[Name]:
    """``Model.field = default`` (the default as JSON) for every optional field of every
    pydantic model defined in ``package``: what a payload written without the field means."""
    names: set[Name] = set()
    for module in modules(package):
        for member in _own_members(module):
            if not (inspect.isclass(member) and issubclass(member, BaseModel)):
                continue
            for field, info in member.model_fields.items():
                if info.is_required():
                    continue
                default = to_json(info.get_default(call_default_factory=True)).decode()
                names.add(("payload default", f"{member.__qualname__}.{field} = {default}"))
    return names


def collect() -> set[Name]:
    """Every stable name the code holds today."""
    return (
        workflow_names()
        | activity_names()
        | search_attribute_names()
        | source_names()
        | storage_driver_names()
        | payload_defaults()
    )


def to_manifest(names: set[Name]) -> dict[str, list[str]]:
    """The manifest's JSON shape: one sorted list per kind."""
    return {kind: sorted(name for k, name in names if k == kind) for kind in KINDS}


def from_manifest(manifest: dict[str, Any]) -> set[Name]:
    return {(kind, name) for kind in KINDS for name in manifest.get(kind, [])}


def load(path: Path = MANIFEST) -> set[Name]:
    return from_manifest(json.loads(path.read_text(encoding="utf-8")))


def write(names: set[Name], path: Path = MANIFEST) -> None:
    path.write_text(json.dumps(to_manifest(names), indent=2) + "\n", encoding="utf-8")


@dataclass(frozen=True)
class Difference:
    """What the code holds that the manifest does not, and the reverse."""

    removed: frozenset[Name]
    added: frozenset[Name]

    def __bool__(self) -> bool:
        return bool(self.removed or self.added)

    def explain(self) -> str:
        lines = []
        if self.removed:
            lines.append(
                "In the manifest but no longer in the code (a removed or renamed name breaks "
                "every recorded history and running workflow that uses it):"
            )
            lines += [f"  - {kind} {name}" for kind, name in sorted(self.removed)]
        if self.added:
            lines.append("In the code but not in the manifest:")
            lines += [f"  + {kind} {name}" for kind, name in sorted(self.added)]
        lines.append(
            "If a removal is a mistake, restore the name (or put the change behind "
            "workflow.patched). If the change is intended, acknowledge it: run "
            f"`{ACCEPT_COMMAND}`, commit the manifest's diff with the change, and for a "
            'removed name say in docs/architecture.md ("Versioning") why no running or '
            "retained workflow still needs it."
        )
        return "\n".join(lines)


def compare(recorded: set[Name], collected: set[Name]) -> Difference:
    return Difference(
        removed=frozenset(recorded - collected), added=frozenset(collected - recorded)
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m scripts.stable_names", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--accept",
        action="store_true",
        help="rewrite the manifest from the code (then review and commit its diff)",
    )
    parser.add_argument("--manifest", type=Path, default=MANIFEST, help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    collected = collect()
    if options.accept:
        write(collected, options.manifest)
        print(f"wrote {options.manifest} ({len(collected)} names)")
        return 0
    difference = compare(load(options.manifest), collected)
    if difference:
        print(difference.explain(), file=sys.stderr)
        return 1
    print(f"{options.manifest} matches the code ({len(collected)} names)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
