"""Record new replay fixtures in tests/replay/histories/ from the example scenarios.

Run it only for a reason you write in the commit (a deliberate, patched change to workflow
commands, or a new representative scenario): replay tests exist to catch the changes that
would break workflows already running. It records only the fixtures it is given by name and
never overwrites one: an old fixture is the evidence that histories written by older code
still replay (docs/architecture.md, "Versioning"). Re-recording an old one with today's code
would make it prove only that today's code agrees with itself.

    .venv/bin/python -m scripts.record_histories NAME ...

Recording a new one: add an entry to ``FIXTURES`` (the fixture name → the scenario in
``scenarios/`` and an optional guard-mode override) with a comment saying why it exists
("recorded after ``…_PATCH``"); run the script **by name** (without names it only lists them;
it refuses, exit 2, a name whose fixture exists — or whose partner recorded in the same run
does: ``tests/replay/test_record_histories.py``); check that ``git status`` shows only the
new file, run ``pytest tests/replay``, and commit the fixture with the reason in the message,
adding it to ``test_the_representative_scenarios_are_all_recorded`` when it covers a new
path. A fixture of the old branch is recorded by running this with the code before the patch
(as ``cancel-before-loop-unpatched`` was).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import tempfile
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from temporalio.client import (
    Client,
    WorkflowExecutionStatus,
    WorkflowFailureError,
    WorkflowHandle,
)
from temporalio.converter import ExternalStorage

from seawall.runtime.devserver import start_dev_server
from seawall.runtime.storage import FilesystemStorageDriver
from seawall.scenario.driver import run_scenario
from seawall.scenario.format import load_scenario
from seawall.worker.build import WorkerTrust, build_activities, build_worker, trusted_local_run
from workflows.contracts.activity import LIST_TOOLS, ModelSpec
from workflows.contracts.editor_calls import (
    EditorAnswer,
    EditorOperation,
    EditorRequestsQuery,
    EditorTools,
)
from workflows.contracts.owner_admission import (
    AdmissionState,
    AdmitRequest,
    InputCharge,
    OwnerQuotas,
    Refund,
    SessionAdmitRequest,
    SessionObservation,
    SlotRelease,
)
from workflows.contracts.prompt import ApprovalModeChange, PermissionAnswer, PromptInput
from workflows.contracts.prompt_options import ApprovalMode
from workflows.contracts.scenario import ModelScript, ScenarioHooks
from workflows.contracts.session import (
    PromptSubmission,
    PromptWithdrawal,
    SessionInput,
    SessionSettings,
)
from workflows.prompt.workflow import PromptWorkflow
from workflows.seed import GuardMode
from workflows.session import OwnerAdmissionWorkflow, SessionWorkflow, session_workflow_id

ROOT = Path(__file__).resolve().parent.parent
HISTORIES = ROOT / "tests" / "replay" / "histories"
# Payloads the recordings stored outside history (content-addressed, so re-recording only
# adds files); the replay tests read them through the same filesystem driver.
PAYLOADS = ROOT / "tests" / "replay" / "payloads"
# Small, so the long-prompt fixture's tool results, model requests and result are stored.
RECORDING_THRESHOLD_BYTES = 4096
# fixture name -> (scenario, guard mode override)
FIXTURES: dict[str, tuple[str, GuardMode | None]] = {
    "warn-then-stop": ("read-missing-file-loop", None),
    "shadow": ("read-missing-file-loop", GuardMode.SHADOW),
    "warn-mode": ("read-missing-file-loop", GuardMode.WARN),
    "mid-turn-input-reset": ("mid-turn-input-reset", None),
    "queued-prompt": ("queued-prompt", None),
    "cancellation": ("cancel-mid-batch", None),
    "permission-rejection": ("permission-rejected", None),
    "refusal": ("repeated-failed-call", None),
    "invalid-parameter-stop": ("invalid-params-stop", None),
    "cap-stop": ("tool-call-cap", None),
    "reminder-heeded": ("reminder-heeded", None),
    # Recorded after SEARCH_ATTRIBUTES_PATCH: upserts and their patch marker are in history.
    "search-attributes-warn-then-stop": ("read-missing-file-loop", None),
    # Recorded after REFUSAL_FORGETS_AFTER_CHANGE_PATCH.
    "refusal-forgets-after-edit": ("fix-then-recheck", None),
    # Recorded after LOOP_PROFILE_PATCH: the recommended profile's rules. The first carries
    # its loop settings in the prompt input; the second resolves them through the
    # operator-settings activity (the recording worker's default, recommended).
    "loop-profile-failure-cycle": ("failure-cycle", None),
    "loop-profile-denied-call": ("denied-call-repeat", None),
    # Recorded after CONTEXT_POLICY_PATCH with payloads in External Storage: the oldest
    # pages elided from later model requests; references in history, payloads in PAYLOADS.
    "context-policy-long-prompt": ("long-prompt", None),
    # Recorded after DURABLE_STEPS_PATCH (docs/capacity.md, "Durable steps per prompt"):
    # one patch marker, operator settings from a local activity, guard search attributes
    # upserted only when they change.
    "durable-steps-warn-then-stop": ("read-missing-file-loop", None),
    "durable-steps-denied-call": ("denied-call-repeat", None),
    # Recorded after TOOLS_WITHOUT_HOP_PATCH (-v2): the tools from a local activity (no MCP
    # server configured), beside the settings' local activity; no seawall.list_tools hop.
    "tools-without-hop-v2-warn-then-stop": ("read-missing-file-loop", None),
    # Recorded after PROGRESS_RULES_PATCH: the prompt's clock. Ten polls that each take a
    # scripted 30 s end the turn (a replay that ignored them would stop at the ninth), and a
    # built-in call timed on workflow time.
    "progress-rules-long-poll": ("long-poll-status", None),
    # Also after PROGRESS_RULES_PATCH: evidence beyond the call itself. A scroll whose
    # snapshot moves on ends its turn (a replay without that evidence would stop it), the
    # runner's refusals ignored are stopped, and the denial rule reminds at its fourth round.
    "progress-rules-scroll-feed": ("scroll-feed", None),
    "progress-rules-tool-call-limit": ("tool-call-limit-ignored", None),
    "progress-rules-denied-call": ("denied-call-repeat", None),
    # Recorded after MODEL_RETRY_WINDOW_PATCH: its marker beside the three above, and every
    # model request scheduled with MODEL_RETRY_WINDOW and the prompt's retry window.
    "model-retry-window-warn-then-stop": ("read-missing-file-loop", None),
    # Recorded after ONE_MARKER_PATCH: its one marker for the five patches before it, and
    # the guard's search attributes from its warning on (the second tracks a denied call's
    # failures before its reminders).
    "one-marker-warn-then-stop": ("read-missing-file-loop", None),
    "one-marker-denied-call": ("denied-call-repeat", None),
    # Recorded after LOOP_QUALITY_V4_PATCH: its marker; calls and results read through the
    # normalizer. A question asked again in other words is stopped by the near-repeat rule,
    # a sweep that wraps round by the no-new-state rule (a replay without them would run on),
    # and a wait on oneself is judged (the judge's activity and its reminder).
    "loop-quality-v4-reasked-question": ("reasked-question", None),
    "loop-quality-v4-wrapped-sweep": ("wrapped-sweep", None),
    "loop-quality-v4-self-wait-judged": ("self-wait-judged", None),
    # Recorded after grants named their run (docs/security-trust.md, "Session grants"): the
    # root prompt starts with grant_follows and receives its run's grant by the grant
    # signal before its tool listing checks it.
    "run-grant-warn-then-stop": ("read-missing-file-loop", None),
    # Recorded after CONVERSATION_REFS_PATCH: its marker; every model request after the first
    # carries its conversation by reference to the one before (what is new since, the tools
    # and script kept). The long prompt's requests keep ranges around the outputs the context
    # policy elides, and its bigger links are in External Storage (PAYLOADS).
    "conversation-refs-warn-then-stop": ("read-missing-file-loop", None),
    "conversation-refs-long-prompt": ("long-prompt", None),
    # Recorded after INPUTS_BY_REFERENCE_PATCH: its marker; the first model request names the
    # listed tools and the start input's script instead of carrying them, and each fixture
    # call names its fixture (the second: a scenario's fixture tools).
    "inputs-by-reference-warn-then-stop": ("read-missing-file-loop", None),
    "inputs-by-reference-failure-cycle": ("failure-cycle", None),
    # Recorded after RESULTS_BY_REFERENCE_PATCH and with the converter that writes payloads
    # without their defaults (seawall/runtime/converter.py): its marker; each request after a
    # batch keeps the batch's outputs by their calls' ids (KeptResult), and every payload is
    # in the wire format (the long prompt's: elided outputs carried, bigger links stored).
    "results-by-reference-warn-then-stop": ("read-missing-file-loop", None),
    "results-by-reference-failure-cycle": ("failure-cycle", None),
    "results-by-reference-long-prompt": ("long-prompt", None),
    # Recorded after STALE_WAITS_PATCH: its marker; a wait on oneself reminded after half an hour
    # of unchanged answers and stopped by the stale-wait rule (R12) after an hour; and the
    # self-wait the judge reminds of in warn, where R12 runs beside it (its polls are short).
    "stale-waits-stop": ("stale-wait", None),
    "stale-waits-self-wait-judged": ("self-wait-judged", None),
    # Recorded after tool activities read long texts where they ran (normalize.with_readings):
    # each query's result carries its reading, and the rules stop the loop on them.
    "readings-where-run": ("repeated-log-query", None),
    # Recorded after NOTHING_NEW_PATCH: its marker; a search reworded for the same answer stopped
    # by R11 keying calls by their answers, and a wait with looks elsewhere stopped by R12.
    "nothing-new-reworded-search": ("reworded-log-search", None),
    "nothing-new-wait-with-looks": ("wait-with-look-elsewhere", None),
    # Recorded after MOVED_COUNTS_PATCH: its marker; a listing whose answers differ only in the
    # agent's growing context usage, each read where it ran with its shape, stopped by R11.
    "moved-counts-context-footer": ("context-footer-listing", None),
    # Recorded after SHELL_READS_PATCH: its marker; a curl poll through a tool named Bash reads
    # as an inspection, so R11 stops it.
    "shell-reads-bash-curl-poll": ("bash-curl-poll-finished-run", None),
    # Recorded after LOOKS_AND_IDS_PATCH: its marker; heartbeats whose waits look at nothing,
    # stopped by R11; and PowerShell re-reads whose long answers differ in a labelled chunk id,
    # read where they ran with the tool input's labelled_ids, stopped by R9.
    "looks-and-ids-heartbeat": ("heartbeat-waits-on-nothing", None),
    "looks-and-ids-powershell-rereads": ("powershell-chunk-rereads", None),
    # Recorded after WORLD_IDS_PATCH: its marker; eight mutations on the issues one query
    # listed, its long listing read where it ran with the ids as digests, end their turn.
    "world-ids-listed-issues": ("listed-issues-linked", None),
    # Recorded after REFUSALS_PATCH: its marker; a tool the session does not have, asked for
    # with three summaries in turn, refused alike each time, stopped by R11.
    "refusals-missing-tool": ("missing-tool-reworded", None),
    # Recorded after WORLD_IDS_PATCH: heartbeats whose echoes are never news, stopped by R11
    # a batch sooner than looks-and-ids-heartbeat.
    "world-ids-heartbeat": ("heartbeat-waits-on-nothing", None),
}
# Session fixtures: the first recorded before CONTEXT_POLICY_PATCH, the second after it, the
# third after SESSION_START_CHECK_PATCH (a session started with its guard mode runs the
# operator-settings activity that checks its grant; docs/security-trust.md), the fourth after
# grants named their run (the session waits for its grant signal, then is checked).
SESSION_FIXTURES = (
    "session-two-prompts",
    "session-context-policy",
    "session-start-check",
    "session-run-grant",
    # Recorded with the converter that writes payloads without their defaults: the session's
    # input, its children's inputs and results, its updates and its carry in the wire format.
    "session-wire-format",
)
# Recorded after model text streamed: the demo model's publish_model_delta signals arrive
# while its requests run (workflows/prompt/events.py).
STREAMED_FIXTURE = "streamed-demo-reply"
# The handlers `seawall acp` added: the session's set_approval_mode (forwarded to its running
# prompt as a signal) and withdraw_prompt. Two fixtures: the session and that prompt.
EDITOR_SESSION_FIXTURE = "session-editor-handlers"
EDITOR_PROMPT_FIXTURE = "prompt-approval-mode-switch"
# Recorded after rollout cohorts (docs/rollout.md, "Rollout cohorts"): a session with an
# owner resolves its cohort through the operator-settings activity and starts its prompt
# with the cohort's search attributes.
ROLLOUT_FIXTURE = "session-rollout-cohort"
# Recorded after DURABLE_STEPS_PATCH: a session that resolves the operator's settings (its
# context budget among them) once and hands them to its two prompts, which resolve nothing;
# the session and its second prompt.
BUDGET_SESSION_FIXTURE = "durable-steps-session"
BUDGET_PROMPT_FIXTURE = "durable-steps-session-prompt"
BUDGET_ENVIRON = {"SEAWALL_CONTEXT_BUDGET_CHARS": "10000"}
ROLLOUT_ENVIRON = {
    "SEAWALL_GUARD_ROLLOUT": "enforce:5%,warn:rest",
    "SEAWALL_GUARD_ROLLOUT_SALT": "recorded",
    "SEAWALL_DEPLOYMENT_ENVIRONMENT": "internal",
    "SEAWALL_SERVICE_VERSION": "1.0.0",
}

# An owner's admission workflow (workflows/session/owner_admission.py): slots
# admitted, a refusal, slots freed by an observation, a release, and continue-as-new. The
# -start-check one after ADMISSION_START_CHECK_PATCH: the worker checks the signed start
# (seawall.check_start) before the first update is answered.
ADMISSION_FIXTURE = "owner-admission"
ADMISSION_START_CHECK_FIXTURE = "owner-admission-start-check"
# The same run recorded with the converter that writes payloads without their defaults (its
# updates, their answers and its continue-as-new carry in the wire format).
ADMISSION_WIRE_FIXTURE = "owner-admission-wire-format"
# Recorded after per-owner quotas (docs/security-gateway.md, "Per-owner quotas"): sessions
# admitted and refused, a closed one freed by an observation, a prompt and an input charged,
# a refund, and continue-as-new carrying the open sessions.
ADMISSION_QUOTAS_FIXTURE = "owner-admission-quotas"
# Recorded after PROMPT_ID_REUSE_POLICY and remembered submits (workflows/session/workflow.py): a
# session whose first prompt id is taken by another run's prompt (that prompt fails to start and is
# recorded as an error, the finished one is left alone), then a keyed prompt that runs; its repeat
# is answered by Temporal in the run.
SESSION_SUBMITS_FIXTURE = "session-remembered-submits"
# A prompt cancelled while its seawall.list_tools activity waits on an MCP server that never
# answers (docs/architecture.md, "Cancellation"). Recorded after CANCEL_BEFORE_LOOP_PATCH:
# the marker, then the result with stop_reason cancelled. The -unpatched fixture was recorded
# by the code before the patch (the prompt ended CANCELED, without a result); it proves that
# such a prompt still replays as it ended.
CANCEL_BEFORE_LOOP_FIXTURES = ("cancel-before-loop", "cancel-before-loop-unpatched")
# Recorded after EDITOR_TOOLS_PATCH (workflows/prompt/editor_calls.py): a prompt whose
# read_file and write_file run in the ACP editor (answered here as the bridge answers), and
# a read outside the workspace the worker refuses before any request opens.
EDITOR_TOOLS_FIXTURE = "editor-tools-read-write"


async def save(histories: Path, handle: WorkflowHandle[Any, Any], name: str) -> None:
    """Write the history of ``handle``'s workflow as the new fixture ``name`` in
    ``histories`` (``FileExistsError`` if it is there already: fixtures are never replaced)."""
    history = await handle.fetch_history()
    target = histories / f"{name}.json"
    with target.open("x", encoding="utf-8") as file:
        file.write(json.dumps(json.loads(history.to_json()), indent=1) + "\n")
    print(f"{target}: {len(history.events)} events")


async def start_session(
    client: Client,
    queue: str,
    session_id: str,
    workspace: str,
    turns: list[Any],
    **session: Any,
) -> WorkflowHandle[Any, Any]:
    """Start a scripted session in yolo (its model answers ``turns``); ``session`` adds
    fields of ``SessionInput`` (guard mode, owner)."""
    return await client.start_workflow(
        SessionWorkflow.run,
        SessionInput(
            session_id=session_id,
            settings=SessionSettings(
                workspace_root=workspace,
                scenario=ScenarioHooks(model_script=ModelScript.model_validate({"turns": turns})),
                approval_mode=ApprovalMode.YOLO,
            ),
            **session,
        ),
        id=session_workflow_id(session_id),
        task_queue=queue,
    )


async def record_session(histories: Path, client: Client, queue: str, fixture: str) -> None:
    """A session with two prompts: the second queued while the first runs."""
    with tempfile.TemporaryDirectory(prefix="seawall-record-") as workspace:
        failing = {
            "tool_calls": [{"name": "read_file", "arguments": {"path": f"m{n}"}} for n in range(4)]
        }
        session_id = "recorded" if fixture == SESSION_FIXTURES[0] else fixture
        handle = await start_session(
            client,
            queue,
            session_id,
            workspace,
            [failing, {"text": "first"}, {"text": "second"}],
            guard_mode=GuardMode.ENFORCE,
        )
        for text in ("first prompt", "second prompt"):
            await handle.execute_update(SessionWorkflow.submit_prompt, PromptSubmission(text=text))
        await handle.signal(SessionWorkflow.close)
        await handle.result()
        await save(histories, handle, fixture)


async def record_streamed(histories: Path, client: Client, queue: str) -> None:
    """A prompt answered by the demo model, whose text streams as delta signals."""
    with tempfile.TemporaryDirectory(prefix="seawall-record-") as workspace:
        handle = await client.start_workflow(
            PromptWorkflow.run,
            PromptInput(
                prompt="hello",
                workspace_root=workspace,
                model=ModelSpec(provider="demo"),
                guard_mode=GuardMode.ENFORCE,
            ),
            id=f"replay-{STREAMED_FIXTURE}",
            task_queue=queue,
        )
        await handle.result()
        await save(histories, handle, STREAMED_FIXTURE)


async def _until(check: object, what: str) -> None:
    for _ in range(1200):
        if await check():  # type: ignore[operator]
            return
        await asyncio.sleep(0.05)
    raise TimeoutError(what)


async def record_editor_session(histories: Path, client: Client, queue: str) -> None:
    """A session in yolo whose running prompt is switched to default mid-batch (its next
    write asks and is approved), with a queued prompt withdrawn meanwhile."""
    with tempfile.TemporaryDirectory(prefix="seawall-record-") as workspace:
        blocking = "touch started; while [ ! -f go ]; do sleep 0.05; done; echo released"
        turns = [
            {"tool_calls": [{"name": "run_shell_command", "arguments": {"command": blocking}}]},
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "out.txt", "content": "x"}}
                ]
            },
            {"text": "written"},
        ]
        handle = await start_session(
            client, queue, "recorded-editor", workspace, turns, guard_mode=GuardMode.SHADOW
        )
        first = await handle.execute_update(
            SessionWorkflow.submit_prompt, PromptSubmission(text="build")
        )

        async def started() -> bool:
            return (Path(workspace) / "started").exists()

        await _until(started, "the blocking call")
        second = await handle.execute_update(
            SessionWorkflow.submit_prompt, PromptSubmission(text="withdrawn")
        )
        await handle.execute_update(
            SessionWorkflow.withdraw_prompt, PromptWithdrawal(prompt_id=second.prompt_id)
        )
        await handle.execute_update(
            SessionWorkflow.set_approval_mode,
            ApprovalModeChange(approval_mode=ApprovalMode.DEFAULT),
        )
        (Path(workspace) / "go").touch()
        prompt = client.get_workflow_handle_for(PromptWorkflow.run, first.prompt_id)

        async def asked() -> bool:
            return bool((await prompt.query(PromptWorkflow.status)).pending_permissions)

        await _until(asked, "the permission request")
        [request] = (await prompt.query(PromptWorkflow.status)).pending_permissions
        await prompt.execute_update(
            PromptWorkflow.answer_permission,
            PermissionAnswer(request_id=request.request_id, approve=True),
        )
        await prompt.result()
        await handle.signal(SessionWorkflow.close)
        await handle.result()
        for name, recorded in ((EDITOR_SESSION_FIXTURE, handle), (EDITOR_PROMPT_FIXTURE, prompt)):
            await save(histories, recorded, name)


async def record_rollout_session(histories: Path, client: Client, trust: WorkerTrust) -> None:
    """A session of owner ``recorded-owner`` under a rollout policy: one prompt."""
    queue = f"record-rollout-{uuid.uuid4().hex[:8]}"
    with tempfile.TemporaryDirectory(prefix="seawall-record-") as home:
        environ = {"HOME": home, "XDG_CONFIG_HOME": f"{home}/xdg", **ROLLOUT_ENVIRON}
        async with build_worker(client, queue, build_activities(environ, trust=trust)):
            handle = await start_session(
                client,
                queue,
                "recorded-rollout",
                home,
                [{"text": "done"}],
                owner_id="recorded-owner",
            )
            await handle.execute_update(SessionWorkflow.submit_prompt, PromptSubmission(text="hi"))
            await handle.signal(SessionWorkflow.close)
            await handle.result()
            await save(histories, handle, ROLLOUT_FIXTURE)


async def record_owner_admission(
    histories: Path, client: Client, queue: str, fixture: str = ADMISSION_FIXTURE
) -> None:
    """One run of an admission workflow, ended by continue-as-new after five messages."""
    handle = await client.start_workflow(
        OwnerAdmissionWorkflow.run,
        AdmissionState(messages_per_run=5),
        id=f"recorded-admission-{uuid.uuid4().hex[:8]}",
        task_queue=queue,
    )
    for session in ("s1", "s2", "s3"):
        await handle.execute_update(
            OwnerAdmissionWorkflow.admit,
            AdmitRequest(session_id=session, update_id=f"prompt:{session}", limit=2),
        )  # the third is refused
    refused = await handle.query(OwnerAdmissionWorkflow.state)
    seen = SessionObservation(
        session_id="s1", live_prompt_ids=[], submits={"prompt:s1": "s1-prompt-1"}
    )
    await handle.execute_update(
        OwnerAdmissionWorkflow.admit,
        AdmitRequest(
            session_id="s3",
            update_id="prompt:s3",
            limit=2,
            observations=[seen],
            as_of=max(slot.admitted_at for slot in refused.slots),
        ),
    )
    await handle.signal(
        OwnerAdmissionWorkflow.release, SlotRelease(session_id="s3", update_id="prompt:s3")
    )
    first_run = client.get_workflow_handle(handle.id, run_id=handle.result_run_id)
    await _until(lambda: _has_continued(first_run), "the admission workflow to continue as new")
    await save(histories, first_run, fixture)


async def record_owner_admission_quotas(histories: Path, client: Client, queue: str) -> None:
    """One run of an admission workflow under quotas, ended by continue-as-new."""
    handle = await client.start_workflow(
        OwnerAdmissionWorkflow.run,
        AdmissionState(messages_per_run=6),
        id=f"recorded-admission-quotas-{uuid.uuid4().hex[:8]}",
        task_queue=queue,
    )
    quotas = OwnerQuotas(max_open_sessions=1, max_stored_bytes=1000)
    for session in ("s1", "s2"):  # the second is refused
        await handle.execute_update(
            OwnerAdmissionWorkflow.admit_session,
            SessionAdmitRequest(session_id=session, metadata_bytes=100, quotas=quotas),
        )
    refused = await handle.query(OwnerAdmissionWorkflow.state)
    closed = SessionObservation(session_id="s1", live_prompt_ids=[], state="closed")
    await handle.execute_update(
        OwnerAdmissionWorkflow.admit_session,
        SessionAdmitRequest(
            session_id="s2",
            metadata_bytes=100,
            quotas=quotas,
            observations=[closed],
            as_of=max(session.admitted_at for session in refused.sessions),
        ),
    )
    await handle.execute_update(
        OwnerAdmissionWorkflow.admit,
        AdmitRequest(
            session_id="s2",
            update_id="prompt:s2",
            limit=2,
            recount=True,
            text_bytes=50,
            quotas=quotas,
        ),
    )
    await handle.execute_update(
        OwnerAdmissionWorkflow.charge_input,
        InputCharge(session_id="s2", text_bytes=20, quotas=quotas),
    )
    await handle.signal(OwnerAdmissionWorkflow.refund, Refund(session_id="s2", bytes=20))
    first_run = client.get_workflow_handle(handle.id, run_id=handle.result_run_id)
    await _until(lambda: _has_continued(first_run), "the admission workflow to continue as new")
    await save(histories, first_run, ADMISSION_QUOTAS_FIXTURE)


async def record_session_submits(histories: Path, client: Client, queue: str) -> None:
    """A session whose first prompt id another run's prompt holds, then a keyed prompt."""
    with tempfile.TemporaryDirectory(prefix="seawall-record-") as workspace:
        session_id = f"recorded-submits-{uuid.uuid4().hex[:8]}"
        taken = await client.start_workflow(
            PromptWorkflow.run,
            PromptInput(
                prompt="an earlier run's prompt",
                workspace_root=workspace,
                guard_mode=GuardMode.ENFORCE,
                scenario=ScenarioHooks(
                    model_script=ModelScript.model_validate({"turns": [{"text": "earlier"}]})
                ),
            ),
            id=f"{session_id}-prompt-1",
            task_queue=queue,
        )
        await taken.result()
        handle = await start_session(
            client, queue, session_id, workspace, [{"text": "second"}], guard_mode=GuardMode.ENFORCE
        )
        for update_id in ("prompt:first", "prompt:second", "prompt:second"):
            await handle.execute_update(
                SessionWorkflow.submit_prompt, PromptSubmission(text=update_id), id=update_id
            )
        await handle.signal(SessionWorkflow.close)
        await handle.result()
        await save(histories, handle, SESSION_SUBMITS_FIXTURE)


async def _has_continued(handle: WorkflowHandle[Any, Any]) -> bool:
    return (await handle.describe()).status == WorkflowExecutionStatus.CONTINUED_AS_NEW


async def record_budget_session(histories: Path, client: Client, trust: WorkerTrust) -> None:
    """A session under the operator's 10,000-character budget: a long first prompt, then a
    second one whose history the budget fits."""
    queue = f"record-budget-{uuid.uuid4().hex[:8]}"
    with tempfile.TemporaryDirectory(prefix="seawall-record-") as home:
        environ = {"HOME": home, "XDG_CONFIG_HOME": f"{home}/xdg", **BUDGET_ENVIRON}
        async with build_worker(client, queue, build_activities(environ, trust=trust)):
            turns = [{"text": "first " + "x" * 12_000}, {"text": "second"}]
            handle = await start_session(client, queue, "recorded-budget", home, turns)
            submitted = [
                await handle.execute_update(
                    SessionWorkflow.submit_prompt, PromptSubmission(text=text)
                )
                for text in ("first prompt", "second prompt")
            ]
            await handle.signal(SessionWorkflow.close)
            await handle.result()
            prompt = client.get_workflow_handle(submitted[-1].prompt_id)
            for name, recorded in (
                (BUDGET_SESSION_FIXTURE, handle),
                (BUDGET_PROMPT_FIXTURE, prompt),
            ):
                await save(histories, recorded, name)


async def _has_scheduled(handle: WorkflowHandle[Any, Any], activity_type: str) -> bool:
    history = await handle.fetch_history()
    return any(
        event.activity_task_scheduled_event_attributes.activity_type.name == activity_type
        for event in history.events
        if event.HasField("activity_task_scheduled_event_attributes")
    )


async def record_cancel_before_loop(
    histories: Path, client: Client, trust: WorkerTrust, fixture: str
) -> None:
    """A prompt cancelled once its tool listing waits on a silent MCP server."""
    from tests.activities.mcp_helpers import servers_env, silent_server

    queue = f"record-cancel-{uuid.uuid4().hex[:8]}"
    with (
        tempfile.TemporaryDirectory(prefix="seawall-record-") as home,
        tempfile.TemporaryDirectory(prefix="seawall-record-") as workspace,
    ):
        environ = {
            "HOME": home,
            "XDG_CONFIG_HOME": f"{home}/xdg",
            "SEAWALL_MCP_SERVERS": servers_env({"silent": silent_server()}),
        }
        async with build_worker(client, queue, build_activities(environ, trust=trust)):
            handle = await client.start_workflow(
                PromptWorkflow.run,
                PromptInput(
                    prompt="list your tools",
                    workspace_root=workspace,
                    guard_mode=GuardMode.ENFORCE,
                    scenario=ScenarioHooks(
                        model_script=ModelScript.model_validate({"turns": [{"text": "never"}]})
                    ),
                ),
                id=f"replay-{fixture}",
                task_queue=queue,
            )
            await _until(lambda: _has_scheduled(handle, LIST_TOOLS), "the tool listing")
            await handle.cancel()
            # Before the patch the prompt ended CANCELED: its result raises.
            with contextlib.suppress(WorkflowFailureError):
                await handle.result()
            await save(histories, handle, fixture)


async def record_editor_tools(histories: Path, client: Client, queue: str) -> None:
    """A prompt with ``editor_tools: fs`` in yolo: a read and a write answered as the
    editor would, and a refused read of a path outside the workspace."""
    calls = [
        {"name": "read_file", "arguments": {"path": "notes.txt"}},
        {"name": "write_file", "arguments": {"path": "out.txt", "content": "hello\n"}},
        {"name": "read_file", "arguments": {"path": "../outside.txt"}},
    ]
    script = {"turns": [{"tool_calls": calls}, {"text": "done"}]}
    with tempfile.TemporaryDirectory(prefix="seawall-record-") as workspace:
        handle = await client.start_workflow(
            PromptWorkflow.run,
            PromptInput(
                prompt="read and write in the editor",
                workspace_root=workspace,
                guard_mode=GuardMode.SHADOW,
                approval_mode=ApprovalMode.YOLO,
                editor_tools=EditorTools.FS,
                scenario=ScenarioHooks(model_script=ModelScript.model_validate(script)),
            ),
            id=f"replay-{EDITOR_TOOLS_FIXTURE}",
            task_queue=queue,
        )

        async def both_open() -> bool:
            requests = await handle.query(PromptWorkflow.editor_calls, EditorRequestsQuery())
            return len(requests) == 2

        await _until(both_open, "the editor requests")
        for request in await handle.query(PromptWorkflow.editor_calls, EditorRequestsQuery()):
            reads = request.plan.operation is EditorOperation.READ
            answer = EditorAnswer(
                request_id=request.request_id, content="remember the milk\n" if reads else None
            )
            await handle.execute_update(PromptWorkflow.answer_editor_call, answer)
        await handle.result()
        await save(histories, handle, EDITOR_TOOLS_FIXTURE)


# Fixtures one recording writes together: naming either records both.
RECORDED_TOGETHER: tuple[tuple[str, ...], ...] = (
    (EDITOR_SESSION_FIXTURE, EDITOR_PROMPT_FIXTURE),
    (BUDGET_SESSION_FIXTURE, BUDGET_PROMPT_FIXTURE),
)
EVERY_FIXTURE: tuple[str, ...] = (
    *FIXTURES,
    *SESSION_FIXTURES,
    STREAMED_FIXTURE,
    EDITOR_SESSION_FIXTURE,
    EDITOR_PROMPT_FIXTURE,
    ADMISSION_FIXTURE,
    ADMISSION_START_CHECK_FIXTURE,
    ADMISSION_WIRE_FIXTURE,
    ADMISSION_QUOTAS_FIXTURE,
    SESSION_SUBMITS_FIXTURE,
    ROLLOUT_FIXTURE,
    BUDGET_SESSION_FIXTURE,
    BUDGET_PROMPT_FIXTURE,
    *CANCEL_BEFORE_LOOP_FIXTURES,
    EDITOR_TOOLS_FIXTURE,
)


async def record(names: set[str], histories: Path = HISTORIES, payloads: Path = PAYLOADS) -> None:
    """Record the fixtures ``names`` into ``histories``, their stored payloads into
    ``payloads``."""
    histories.mkdir(parents=True, exist_ok=True)
    storage = ExternalStorage(
        drivers=[FilesystemStorageDriver(payloads)],
        payload_size_threshold=RECORDING_THRESHOLD_BYTES,
    )
    async with await start_dev_server(storage=storage) as env:
        queue = f"record-{uuid.uuid4().hex[:8]}"
        # The recordings are the operator's own starts: signed, checked by the worker.
        client, trust = trusted_local_run(env.client)
        async with build_worker(client, queue, trust=trust):
            for fixture, (scenario_name, mode) in FIXTURES.items():
                if fixture not in names:
                    continue
                scenario = load_scenario(ROOT / "scenarios" / f"{scenario_name}.yaml")
                with tempfile.TemporaryDirectory(prefix="seawall-record-") as workspace:
                    result = await run_scenario(
                        client,
                        scenario,
                        task_queue=queue,
                        workspace=Path(workspace),
                        mode_override=mode,
                        workflow_id=f"replay-{fixture}",
                    )
                handle = client.get_workflow_handle(result.workflow_id)
                await save(histories, handle, fixture)
            for session_fixture in SESSION_FIXTURES:
                if session_fixture in names:
                    await record_session(histories, client, queue, session_fixture)
            if STREAMED_FIXTURE in names:
                await record_streamed(histories, client, queue)
            if EDITOR_SESSION_FIXTURE in names:
                await record_editor_session(histories, client, queue)
            for admission in (
                ADMISSION_FIXTURE,
                ADMISSION_START_CHECK_FIXTURE,
                ADMISSION_WIRE_FIXTURE,
            ):
                if admission in names:
                    await record_owner_admission(histories, client, queue, admission)
            if ADMISSION_QUOTAS_FIXTURE in names:
                await record_owner_admission_quotas(histories, client, queue)
            if SESSION_SUBMITS_FIXTURE in names:
                await record_session_submits(histories, client, queue)
            if EDITOR_TOOLS_FIXTURE in names:
                await record_editor_tools(histories, client, queue)
        if ROLLOUT_FIXTURE in names:
            await record_rollout_session(histories, client, trust)
        if BUDGET_SESSION_FIXTURE in names:
            await record_budget_session(histories, client, trust)
        # Each needs its code: the -unpatched one only by the code before the patch.
        for fixture in CANCEL_BEFORE_LOOP_FIXTURES:
            if fixture in names:
                await record_cancel_before_loop(histories, client, trust, fixture)


def fixtures_to_record(
    parser: argparse.ArgumentParser, requested: Sequence[str], histories: Path
) -> set[str]:
    """The fixtures a run for ``requested`` writes (with their partners in
    :data:`RECORDED_TOGETHER`); a usage error (exit 2) for no names, an unknown name or a
    fixture that exists in ``histories``."""
    available = ", ".join(EVERY_FIXTURE)
    if not requested:
        parser.error(
            "name the new fixtures to record (existing ones are never re-recorded); "
            f"available: {available}"
        )
    unknown = [name for name in requested if name not in EVERY_FIXTURE]
    if unknown:
        parser.error(f"unknown fixture {', '.join(unknown)}; available: {available}")
    names = set(requested)
    for group in RECORDED_TOGETHER:
        if names & set(group):
            names |= set(group)
    existing = sorted(str(histories / f"{name}.json") for name in names)
    existing = [path for path in existing if Path(path).exists()]
    if existing:
        parser.error(
            f"refusing to overwrite {', '.join(existing)}: a recorded fixture is evidence "
            "that older histories replay and is never re-recorded; add a new fixture name "
            'to FIXTURES instead (docs/architecture.md, "Recorded histories")'
        )
    return names


def main(
    argv: Sequence[str] | None = None, histories: Path = HISTORIES, payloads: Path = PAYLOADS
) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m scripts.record_histories",
        description="Record new replay fixtures, by name; an existing one is never replaced.",
    )
    parser.add_argument("names", nargs="*", metavar="NAME", help="a fixture to record")
    requested = parser.parse_args(argv).names
    asyncio.run(record(fixtures_to_record(parser, requested, histories), histories, payloads))
    return 0


if __name__ == "__main__":
    from seawall.runtime.process_exit import run_then_exit

    run_then_exit(lambda: main(sys.argv[1:]))
