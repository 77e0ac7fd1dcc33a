"""``scripts.record_histories`` records new fixtures by name and never replaces one.

A recorded fixture is evidence that histories written by older code still replay
(docs/architecture.md, "Recorded histories"); re-recording it with today's code would make
it prove only that today's code agrees with itself.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from temporalio.client import WorkflowHistory
from temporalio.converter import ExternalStorage

from scripts import record_histories
from scripts.record_histories import EDITOR_PROMPT_FIXTURE, EDITOR_SESSION_FIXTURE, HISTORIES
from seawall.runtime.plugin import WORKFLOWS
from seawall.runtime.storage import FilesystemStorageDriver
from tests.replay.test_replay import replayer


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str], histories: Path) -> str:
    """Run the recorder's command line; it must stop with a usage error (exit 2)."""
    with pytest.raises(SystemExit) as stop:
        record_histories.main(argv, histories=histories, payloads=histories / "payloads")
    assert stop.value.code == 2
    return capsys.readouterr().err


def test_without_names_it_records_nothing_and_lists_the_fixtures(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    message = _refused([], capsys, tmp_path)
    assert "name the new fixtures to record" in message
    assert "warn-then-stop" in message
    assert "cancel-before-loop-unpatched" in message
    assert list(tmp_path.iterdir()) == []


def test_an_existing_fixture_is_never_overwritten(capsys: pytest.CaptureFixture[str]) -> None:
    fixture = HISTORIES / "warn-then-stop.json"
    before = fixture.read_bytes()
    message = _refused(["warn-then-stop"], capsys, HISTORIES)
    assert f"refusing to overwrite {fixture}" in message
    assert fixture.read_bytes() == before


def test_a_fixture_recorded_with_an_existing_partner_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # One recording writes the editor session and its prompt: naming the prompt would
    # overwrite the session's fixture.
    partner = tmp_path / f"{EDITOR_SESSION_FIXTURE}.json"
    partner.write_text("{}")
    message = _refused([EDITOR_PROMPT_FIXTURE], capsys, tmp_path)
    assert f"refusing to overwrite {partner}" in message
    assert partner.read_text() == "{}"


def test_an_unknown_name_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert "unknown fixture no-such-fixture" in _refused(["no-such-fixture"], capsys, tmp_path)


def test_a_new_fixture_is_recorded_and_replays_then_is_kept(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    histories = tmp_path / "histories"
    payloads = histories / "payloads"
    assert record_histories.main(["warn-then-stop"], histories=histories, payloads=payloads) == 0
    recorded = histories / "warn-then-stop.json"
    history = WorkflowHistory.from_json("warn-then-stop", recorded.read_text(encoding="utf-8"))
    storage = ExternalStorage(drivers=[FilesystemStorageDriver(payloads)])
    replay = asyncio.run(replayer(*WORKFLOWS, storage=storage).replay_workflow(history))
    assert replay.replay_failure is None

    kept = recorded.read_bytes()
    assert "refusing to overwrite" in _refused(["warn-then-stop"], capsys, histories)
    assert recorded.read_bytes() == kept
