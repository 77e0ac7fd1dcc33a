"""The worker's own checks of an activity's input (activities/trust.py) and the operator's
signing key (seawall/runtime/grants.py): docs/security-trust.md."""

from __future__ import annotations

import stat
from datetime import UTC, datetime
from pathlib import Path

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.mcp.pool import McpPool
from activities.model import ModelActivities
from activities.tool_runner import ToolActivities
from activities.tools import BUILTIN_TOOLS
from activities.trust import DENY_ALL, WorkerTrust
from seawall.runtime.grants import GrantSigner, key_file, load_or_create_key_file, signing_key
from seawall.runtime.owners import ANY_OWNER, owner_list, owner_listed
from seawall.runtime.settings import load_settings
from tests.trust_helpers import harness_trust
from workflows.contracts import ExecutionStatus, Message, Role, ToolCall, ToolErrorType
from workflows.contracts.activity import CallModelInput, CheckToolCallInput, ModelSpec, RunToolInput
from workflows.contracts.grant import (
    GRANT_INVALID,
    GRANT_MISSING,
    SCRIPTED_MODELS_DISABLED,
    WORKSPACE_OUTSIDE_ROOT,
    input_digest,
)
from workflows.contracts.owner_admission import AdmissionState, Slot
from workflows.contracts.scenario import FixtureTool, ModelScript
from workflows.contracts.session import SessionInput, SessionSettings
from workflows.contracts.start_claims import admission_claim


def trust_in(root: Path, *, scripted: bool = False) -> WorkerTrust:
    return WorkerTrust(allow_scripted_models=scripted, workspace_roots=(root,))


def test_a_workspace_must_lie_strictly_inside_a_root_once_resolved(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "inside").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    (root / "out").symlink_to(tmp_path / "outside")
    (root / "loop").symlink_to(root / "loop")
    trust = trust_in(root)
    assert trust.workspace(str(root / "inside")) == (root / "inside").resolve()
    assert trust.workspace(str(root / "not-yet")) == (root / "not-yet").resolve()
    for refused in [
        "/",
        str(root),
        str(tmp_path / "outside"),
        str(root / "out"),
        str(root / "inside" / ".." / ".." / "outside"),
        str(root / "loop"),
        "inside",
        str(root / "a\x00b"),
    ]:
        with pytest.raises(ApplicationError) as caught:
            trust.workspace(refused)
        assert caught.value.type == WORKSPACE_OUTSIDE_ROOT
        assert caught.value.non_retryable


def call(name: str = "write_file", **arguments: object) -> ToolCall:
    return ToolCall(call_id="c1", name=name, arguments=arguments or {"path": "f", "content": "x"})


async def test_run_tool_refuses_a_workspace_outside_the_root_without_running(
    tmp_path: Path,
) -> None:
    outside = tmp_path / "outside"
    tools = ToolActivities(BUILTIN_TOOLS, McpPool(), trust=trust_in(tmp_path / "root"))
    outcome = await ActivityEnvironment().run(
        tools.run_tool, RunToolInput(call=call(), workspace_root=str(outside))
    )
    assert outcome.error_type == ToolErrorType.PATH_NOT_IN_WORKSPACE
    assert outcome.execution_status == ExecutionStatus.NOT_STARTED
    assert "workspaces" in (outcome.error_message or "")
    assert not outside.exists()  # not even created


async def test_a_fixture_runs_only_with_the_workers_allowance(tmp_path: Path) -> None:
    fixture = FixtureTool.model_validate({"outcomes": [{"content": "scripted"}]})
    workspace = tmp_path / "root" / "ws"
    inp = RunToolInput(call=call("probe"), workspace_root=str(workspace), scenario_fixture=fixture)
    strict = ToolActivities(BUILTIN_TOOLS, McpPool(), trust=trust_in(tmp_path / "root"))
    refused = await ActivityEnvironment().run(strict.run_tool, inp)
    assert refused.execution_status == ExecutionStatus.NOT_STARTED
    assert "allow_scripted_models" in (refused.error_message or "")
    checked = await ActivityEnvironment().run(
        strict.check_tool_call, CheckToolCallInput(call=call("probe"), scenario_fixture=fixture)
    )
    assert checked is not None and checked.execution_status == ExecutionStatus.NOT_STARTED
    assert not workspace.exists()  # no fixture ledger written
    allowed = ToolActivities(
        BUILTIN_TOOLS, McpPool(), trust=trust_in(tmp_path / "root", scripted=True)
    )
    ran = await ActivityEnvironment().run(allowed.run_tool, inp)
    assert ran.content == "scripted"


async def test_a_scripted_model_needs_the_workers_allowance() -> None:
    request = CallModelInput(
        model=ModelSpec(),
        messages=[Message(role=Role.USER, content="go")],
        request_number=1,
        scenario_script=ModelScript.model_validate({"turns": [{"text": "hi"}]}),
    )
    with pytest.raises(ApplicationError) as caught:
        await ActivityEnvironment().run(ModelActivities({}).call_model, request)
    assert caught.value.type == SCRIPTED_MODELS_DISABLED and caught.value.non_retryable
    reply = await ActivityEnvironment().run(
        ModelActivities({}, trust=harness_trust()).call_model, request
    )
    assert reply.text == "hi"


def test_activities_trust_nothing_unless_the_worker_says_so() -> None:
    assert not DENY_ALL.allow_scripted_models and DENY_ALL.workspace_roots == ()
    assert DENY_ALL.keys == ()


def test_the_key_file_is_made_once_private_and_reused(tmp_path: Path) -> None:
    path = key_file(tmp_path / "data")
    first = load_or_create_key_file(path)
    assert len(first) >= 32
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_or_create_key_file(path) == first
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary left


def test_the_setting_wins_over_the_key_file(tmp_path: Path) -> None:
    environ = {"HOME": str(tmp_path), "SEAWALL_DATA_DIR": str(tmp_path / "data")}
    from_file = signing_key(load_settings(environ).settings)
    assert (tmp_path / "data" / "session-signing.key").read_text().strip() == from_file
    configured = load_settings({**environ, "SEAWALL_SESSION_SIGNING_KEY": "s" * 40}).settings
    assert signing_key(configured) == "s" * 40
    assert "s" * 40 not in repr(configured)


def test_a_starts_digest_survives_its_trip_through_temporal() -> None:
    """The starter signs the digest of the input it sends; the worker's workflow computes it
    from the input it received (JSON in between): both must agree, whatever the client's
    metadata holds, and only the grant and its note are left out."""
    metadata = {"z": 1.5, "a": [1, "é", None, {"k": True}], "big": 10**30, "channel": False}
    settings = SessionSettings(workspace_root="/w", client_metadata=metadata)
    sent = SessionInput(session_id="s", settings=settings, owner_id="alice")
    received = SessionInput.model_validate_json(sent.model_dump_json())
    assert input_digest(received) == input_digest(sent)
    awaiting = sent.model_copy(update={"grant_follows": True})
    assert input_digest(awaiting) == input_digest(sent)
    for changed in (
        sent.model_copy(update={"owner_id": "bob"}),
        sent.model_copy(update={"prompts_submitted": 50}),
        sent.model_copy(
            update={"settings": settings.model_copy(update={"client_metadata": {"channel": True}})}
        ),
    ):
        assert input_digest(changed) != input_digest(sent)


def test_channel_owners_name_owners_or_everyone(tmp_path: Path) -> None:
    assert owner_list(" alice, bob ,alice,") == ("alice", "bob")
    assert owner_list("") == ()
    assert owner_listed(("alice",), "alice") and not owner_listed(("alice",), "bob")
    assert not owner_listed(("alice",), None)  # the single token names no owner
    assert owner_listed((ANY_OWNER,), None) and owner_listed((ANY_OWNER,), "bob")
    with pytest.raises(ValueError, match="not an owner id"):
        owner_list("alice, bad owner")
    environ = {"HOME": str(tmp_path), "SEAWALL_DATA_DIR": str(tmp_path / "data")}
    configured = load_settings({**environ, "SEAWALL_CHANNEL_OWNERS": "bridge-1,*"}).settings
    trust = WorkerTrust.from_settings(configured)
    assert trust.channel_owners == ("bridge-1", ANY_OWNER)
    assert DENY_ALL.channel_owners == ()


def test_an_admission_workflows_start_is_checked_against_its_signed_state() -> None:
    key = "k" * 40
    trust = WorkerTrust(allow_scripted_models=False, workspace_roots=(), keys=(key,))
    workflow_id = "owner-admission-0123"
    signed = GrantSigner(key).admission(AdmissionState(), workflow_id)
    trust.check_start(admission_claim(signed), workflow_id)  # the gateway's: it holds

    now = datetime.now(UTC)
    ghost = Slot(session_id="g", update_id="prompt:g", admitted_at=now)
    refusals = {
        "a state of its own": (signed.model_copy(update={"slots": [ghost]}), workflow_id),
        "another owner's id": (signed, "owner-admission-4567"),
        "no grant": (AdmissionState(), workflow_id),
    }
    for what, (state, wid) in refusals.items():
        with pytest.raises(ApplicationError) as refused:
            trust.check_start(admission_claim(state), wid)
        assert refused.value.type in {GRANT_INVALID, GRANT_MISSING}, what
        assert refused.value.non_retryable
