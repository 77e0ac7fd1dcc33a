"""What a call wrote, as private digests (``ToolOutcome.writes``): the built-in file tools
report every file they changed, and a scenario fixture its scripted ``writes``, digested
the same way (docs/protections.md, "Loop profiles", R7)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from activities.mcp.pool import McpPool
from activities.tool_runner import ToolActivities
from activities.tools import BUILTIN_TOOLS
from tests.trust_helpers import harness_trust
from workflows.contracts import ToolCall, ToolOutcome
from workflows.contracts.activity import RunToolInput
from workflows.contracts.outcome import DELETED_FILE, file_write
from workflows.contracts.scenario import FixtureOutcome, FixtureTool


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root.resolve()


async def run(ws: Path, name: str, arguments: dict[str, Any], **kw: Any) -> ToolOutcome:
    inp = RunToolInput(
        call=ToolCall(call_id="c1", name=name, arguments=arguments),
        workspace_root=str(ws),
        **kw,
    )
    activities = ToolActivities(BUILTIN_TOOLS, McpPool(), trust=harness_trust())
    return await activities.execute(inp)


# --- the digests ----------------------------------------------------------------------------


def test_a_write_is_two_private_digests_of_the_normalized_path_and_the_content() -> None:
    path_digest, content_digest = file_write("src/app.py", "x = 1\n")

    assert "app" not in path_digest and "x = 1" not in content_digest
    assert file_write("./src//app.py", b"x = 1\n") == (path_digest, content_digest)
    assert file_write("src/app.py", "x = 2\n")[1] != content_digest
    assert file_write("src/other.py", "x = 1\n")[0] != path_digest
    # A path and a content never share a digest (each is digested in its own domain).
    assert file_write("a", "a")[0] != file_write("a", "a")[1]
    assert file_write("src/app.py", None) == (path_digest, DELETED_FILE)


def test_an_outcome_recorded_before_writes_existed_still_decodes() -> None:
    old = {"call_id": "c1", "tool_name": "write_file", "status": "success"}

    assert ToolOutcome.model_validate(old).writes == ()
    outcome = ToolOutcome(**old, writes=(file_write("a", "b"),))
    assert ToolOutcome.model_validate_json(outcome.model_dump_json()) == outcome


# --- the built-in file tools ----------------------------------------------------------------


async def test_write_file_reports_the_file_it_wrote(ws: Path) -> None:
    outcome = await run(ws, "write_file", {"path": "./pkg/a.py", "content": "print(1)\n"})

    assert outcome.status == "success"
    assert outcome.writes == (file_write("pkg/a.py", (ws / "pkg/a.py").read_bytes()),)
    assert "print" not in outcome.model_dump_json(include={"writes"})


async def test_rewriting_the_same_content_reports_the_same_write(ws: Path) -> None:
    first = await run(ws, "write_file", {"path": "a.txt", "content": "same"})
    again = await run(ws, "write_file", {"path": "a.txt", "content": "same"})
    other = await run(ws, "write_file", {"path": "a.txt", "content": "new"})

    assert first.writes == again.writes
    assert other.writes[0][0] == first.writes[0][0] and other.writes != first.writes


async def test_edit_file_reports_the_content_after_the_edit(ws: Path) -> None:
    (ws / "m.py").write_text("a = 1\nb = 2\n")
    edited = await run(
        ws, "edit_file", {"path": "m.py", "old_string": "a = 1", "new_string": "a = 3"}
    )
    created = await run(ws, "edit_file", {"path": "n.py", "old_string": "", "new_string": "n = 0"})

    assert edited.writes == (file_write("m.py", "a = 3\nb = 2\n"),)
    assert created.writes == (file_write("n.py", "n = 0"),)


async def test_an_edit_undone_and_made_again_reports_the_states_it_returns_to(ws: Path) -> None:
    (ws / "m.py").write_text("a = 1\n")
    made = await run(ws, "edit_file", {"path": "m.py", "old_string": "a = 1", "new_string": "a=1"})
    (ws / "m.py").write_text("a = 1\n")  # a formatter outside the file tools undoes it
    again = await run(ws, "edit_file", {"path": "m.py", "old_string": "a = 1", "new_string": "a=1"})

    assert made.writes == again.writes == (file_write("m.py", "a=1\n"),)


async def test_a_failed_or_reading_call_reports_no_write(ws: Path) -> None:
    (ws / "m.py").write_text("a = 1\n")
    missed = await run(ws, "edit_file", {"path": "m.py", "old_string": "zzz", "new_string": "y"})
    read = await run(ws, "read_file", {"path": "m.py"})
    listed = await run(ws, "list_directory", {"path": "."})

    assert missed.status == "error" and missed.writes == ()
    assert read.writes == listed.writes == ()


# --- scenario fixtures ----------------------------------------------------------------------


async def test_a_fixture_reports_its_writes_digested_like_a_file_tool(ws: Path) -> None:
    fixture = FixtureTool(
        outcomes=[FixtureOutcome(content="ok", writes={"./pkg/a.py": "print(1)\n", "old.py": None})]
    )
    scripted = await run(ws, "write_file", {}, scenario_fixture=fixture)
    real = await run(ws, "write_file", {"path": "pkg/a.py", "content": "print(1)\n"})

    assert scripted.writes == (real.writes[0], file_write("old.py", None))
    assert scripted.writes[1][1] == DELETED_FILE


async def test_a_failing_fixture_reports_no_write(ws: Path) -> None:
    fixture = FixtureTool(
        outcomes=[
            FixtureOutcome(status="error", execution_status="error", writes={"a.py": "x"}),
        ]
    )
    outcome = await run(ws, "write_file", {}, scenario_fixture=fixture)

    assert outcome.status == "error" and outcome.writes == ()
