"""The stable names (docs/architecture.md, "Stable names") are checked, not remembered.

``tests/replay/stable_names.json`` lists every workflow, signal, update, query and activity
name, patch id, search attribute and workflow metric name the code holds, as
``scripts.stable_names`` collects them by discovery. A rename, a removal or an addition fails
here until it is acknowledged with ``python -m scripts.stable_names --accept`` and the
manifest's diff is committed with the change. The manifest must also cover every name the
recorded histories use, so a name the collector stopped seeing cannot slip out of it.
"""

from __future__ import annotations

import base64
import json
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from temporalio import workflow
from temporalio.client import WorkflowHistory

from scripts import stable_names
from scripts.stable_names import CollectionError, Name, compare
from seawall.runtime.plugin import WORKFLOWS

HISTORIES = sorted((Path(__file__).parent / "histories").glob("*.json"))


def test_the_manifest_holds_exactly_the_names_the_code_has() -> None:
    difference = compare(stable_names.load(), stable_names.collect())
    assert not difference, difference.explain()


def test_the_manifest_names_what_the_hand_kept_list_missed() -> None:
    names = stable_names.load()
    assert ("activity", "seawall.list_tools_without_mcp") in names
    assert ("signal", "PromptWorkflow.client_disconnected") in names
    assert len({name for kind, name in names if kind == "search attribute"}) == 8
    assert {
        "seawall-search-attributes-v1",
        "seawall-refusal-forgets-after-change-v1",
        "seawall-loop-profile-v1",
        "seawall-context-policy-v1",
        "seawall-durable-steps-v1",
        "seawall-session-start-check-v1",
        "seawall-tools-without-hop-v2",
        "seawall-cancel-before-loop-v1",
    } <= {name for kind, name in names if kind == "patch"}


def test_discovery_finds_every_workflow_the_plugin_registers() -> None:
    registered = {workflow._Definition.must_from_class(cls).name for cls in WORKFLOWS}
    assert registered == {name for kind, name in stable_names.collect() if kind == "workflow"}


def _stored_references(node: object) -> Iterator[dict[str, Any]]:
    """Every External Storage reference in a history's JSON: a payload with
    ``externalPayloads``, whose data is the reference (its claims and its driver's name)."""
    if isinstance(node, dict):
        if "externalPayloads" in node:
            yield json.loads(base64.b64decode(node["data"]))
        for value in node.values():
            yield from _stored_references(value)
    elif isinstance(node, list):
        for value in node:
            yield from _stored_references(value)


def _history_names(path: Path) -> set[Name]:
    """The stable names one recorded history uses (queries leave no trace in a history)."""
    history = WorkflowHistory.from_json(path.stem, path.read_text(encoding="utf-8"))
    started = history.events[0].workflow_execution_started_event_attributes
    own = started.workflow_type.name
    names: set[Name] = {("workflow", own)}
    indexed = [started.search_attributes.indexed_fields]
    references = _stored_references(json.loads(path.read_text(encoding="utf-8")))
    names |= {("storage driver", reference["driverName"]) for reference in references}
    for event in history.events:
        if event.HasField("activity_task_scheduled_event_attributes"):
            scheduled = event.activity_task_scheduled_event_attributes
            names.add(("activity", scheduled.activity_type.name))
        elif event.HasField("marker_recorded_event_attributes"):
            marker = event.marker_recorded_event_attributes
            if marker.marker_name == "core_patch":
                data = json.loads(marker.details["patch-data"].payloads[0].data)
                names.add(("patch", data["id"]))
            elif marker.marker_name == "core_local_activity":
                data = json.loads(marker.details["data"].payloads[0].data)
                names.add(("activity", data["activity_type"]))
        elif event.HasField("workflow_execution_signaled_event_attributes"):
            signal = event.workflow_execution_signaled_event_attributes.signal_name
            names.add(("signal", f"{own}.{signal}"))
        elif event.HasField("workflow_execution_update_accepted_event_attributes"):
            accepted = event.workflow_execution_update_accepted_event_attributes
            names.add(("update", f"{own}.{accepted.accepted_request.input.name}"))
        elif event.HasField("start_child_workflow_execution_initiated_event_attributes"):
            child = event.start_child_workflow_execution_initiated_event_attributes
            names.add(("workflow", child.workflow_type.name))
            indexed.append(child.search_attributes.indexed_fields)
        elif event.HasField("signal_external_workflow_execution_initiated_event_attributes"):
            external = event.signal_external_workflow_execution_initiated_event_attributes
            names.add(("signal", f"PromptWorkflow.{external.signal_name}"))  # a session's prompt
        elif event.HasField("upsert_workflow_search_attributes_event_attributes"):
            upsert = event.upsert_workflow_search_attributes_event_attributes
            indexed.append(upsert.search_attributes.indexed_fields)
    for fields in indexed:
        names |= {("search attribute", key) for key in fields if key != "TemporalChangeVersion"}
    return names


@pytest.mark.parametrize("path", HISTORIES, ids=[p.stem for p in HISTORIES])
def test_every_name_a_recorded_history_uses_is_in_the_manifest(path: Path) -> None:
    # Search attributes are listed with their type: "SeawallGuardPhase (keyword)".
    listed = {
        (kind, name.split(" (")[0] if kind == "search attribute" else name)
        for kind, name in stable_names.load()
    }
    assert _history_names(path) - listed == set()


def test_the_histories_are_read_for_every_kind_of_name() -> None:
    used = set().union(*(_history_names(path) for path in HISTORIES))
    assert {
        ("workflow", "OwnerAdmissionWorkflow"),
        ("activity", "seawall.list_tools_without_mcp"),  # a local activity's marker
        ("patch", "seawall-durable-steps-v1"),
        ("signal", "PromptWorkflow.set_queued_prompt"),  # from its session
        ("signal", "SessionWorkflow.close"),
        ("update", "SessionWorkflow.submit_prompt"),
        ("search attribute", "SeawallServiceVersion"),  # set by the session at the start
        ("storage driver", "seawall.fs"),  # the long prompt's stored payloads
    } <= used


def _package(root: Path, name: str, signal: str, patch_id: str) -> None:
    """A package holding a workflow one sub-package down, as ``workflows/`` may."""
    (root / name / "nested").mkdir(parents=True)
    (root / name / "__init__.py").write_text("")
    (root / name / "nested" / "__init__.py").write_text("")
    source = f"""
        from temporalio import workflow
        from temporalio.common import SearchAttributeKey

        FLOW_PATCH = {patch_id!r}
        PHASE = SearchAttributeKey.for_keyword("ExamplePhase")


        @workflow.defn(name="ExampleWorkflow")
        class Example:
            def _patched(self, patch_id: str) -> bool:
                return workflow.patched(patch_id)

            @workflow.run
            async def run(self) -> None:
                if self._patched(FLOW_PATCH):
                    workflow.metric_meter().create_counter("example_total").add(1)

            @workflow.signal(name={signal!r})
            def poke(self) -> None:
                pass
        """
    (root / name / "nested" / "flow.py").write_text(textwrap.dedent(source))


def _collected(package: str) -> set[Name]:
    return (
        stable_names.workflow_names(package)
        | stable_names.search_attribute_names(package)
        | stable_names.source_names(package)
    )


def test_a_renamed_signal_fails_the_check_until_it_is_accepted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    _package(tmp_path, "before_rename", "poke", "example-flow-v1")
    _package(tmp_path, "after_rename", "nudge", "example-flow-v1")

    before = _collected("before_rename")
    assert before == {
        ("workflow", "ExampleWorkflow"),
        ("signal", "ExampleWorkflow.poke"),
        ("patch", "example-flow-v1"),
        ("search attribute", "ExamplePhase (keyword)"),
        ("metric", "example_total"),
    }
    difference = compare(before, _collected("after_rename"))
    assert difference.removed == {("signal", "ExampleWorkflow.poke")}
    assert difference.added == {("signal", "ExampleWorkflow.nudge")}
    assert "--accept" in difference.explain()
    assert "signal ExampleWorkflow.poke" in difference.explain()


def test_the_command_line_fails_on_a_difference_and_accept_records_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = tmp_path / "stable_names.json"
    assert stable_names.main(["--manifest", str(manifest), "--accept"]) == 0
    assert stable_names.main(["--manifest", str(manifest)]) == 0

    recorded = json.loads(manifest.read_text())
    recorded["signal"].remove("PromptWorkflow.client_disconnected")
    recorded["activity"].append("seawall.renamed_away")
    manifest.write_text(json.dumps(recorded))
    capsys.readouterr()
    assert stable_names.main(["--manifest", str(manifest)]) == 1
    message = capsys.readouterr().err
    assert "- activity seawall.renamed_away" in message
    assert "+ signal PromptWorkflow.client_disconnected" in message
    assert stable_names.ACCEPT_COMMAND in message


def test_a_patch_id_the_collector_cannot_read_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "computed_patch").mkdir()
    (tmp_path / "computed_patch" / "__init__.py").write_text(
        "from temporalio import workflow\n\n\n"
        "def decide(version: int) -> bool:\n"
        '    return workflow.patched(f"example-v{version}")\n'
    )
    with pytest.raises(CollectionError, match="cannot read"):
        stable_names.source_names("computed_patch")
