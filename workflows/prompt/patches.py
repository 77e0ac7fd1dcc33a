"""The prompt workflow's patch ids: every change to its command sequence, oldest first.

docs/architecture.md, "Versioning". A prompt started before a change replays through the
old path, because ``workflow.patched(ID)`` answers as its history recorded it; an id is
never reused or renamed (``scripts/stable_names.py`` keeps the manifest, ``tests/replay``
the histories recorded before and after each). Each comment says what a prompt started
after the patch does differently, and where it is asked.

Where each is asked matters as much as what it guards (docs/architecture.md, "Versioning",
has the rules and the table):

- The start patches are asked before any other command (:class:`StartPatches`): a profile,
  the clock or the retry window decide the whole prompt, so old and new diverge from the
  start, and a prompt must never change its behaviour halfway through a replay. Each patch
  costs a marker and the SDK's ``TemporalChangeVersion`` upsert, hence the newest asked first
  taking the older as given: a new prompt records one of each.
- A patch first asked after a local activity *of the same workflow task* cannot be replayed
  by a worker that rebuilds the prompt mid-way (core meets the marker before the replayed
  local activity resolved, and fails the task as nondeterministic): ``-v1`` of the tools patch
  was asked there, never left the development branch, and its id is retired;
  ``tests/workflows/prompt/test_durable_steps.py`` runs a prompt on a worker without a cache
  (every task replays) to keep the mistake from coming back.
- ``CANCEL_BEFORE_LOOP_PATCH`` is asked in the ``ActivityError`` handler of ``run``, after the
  settings' and tools' local activities but not in their workflow task: a cancel already in
  the prompt's first task reaches the ``asyncio.CancelledError`` handler (the path prompts
  always took) and the patch is not asked. ``tests/workflows/prompt/
  test_cancel_before_loop.py`` runs both cases on a worker without a cache.
- ``REFUSAL_FORGETS_AFTER_CHANGE_PATCH`` is asked only when a state-changing call succeeded
  (handed to the pure ``BatchProtections.settle`` as its ``may_forget`` check), so prompts that
  never reach the new branch carry no marker.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict

from temporalio import workflow

from workflows.contracts.scenario import FixtureTool

# Prompts started before search attributes existed replay without the upserts.
SEARCH_ATTRIBUTES_PATCH = "seawall-search-attributes-v1"
# Prompts started before a successful state-changing call cleared the failed-call log
# replay with the log kept.
REFUSAL_FORGETS_AFTER_CHANGE_PATCH = "seawall-refusal-forgets-after-change-v1"
# Prompts started before loop profiles existed replay with the seed profile (the seeds'
# rules verbatim) and resolve the operator's settings exactly as they did.
LOOP_PROFILE_PATCH = "seawall-loop-profile-v1"
# Prompts started before the context policy replay with the 1,000,000-character stop and send
# the model the whole conversation; newer ones never stop on size and send the view
# ``fit_context`` makes within the prompt's context budget (workflows/contracts/conversation.py).
# Sessions hand their prompts history under the same patch.
CONTEXT_POLICY_PATCH = "seawall-context-policy-v1"
# The leaner command sequence (docs/capacity.md, "Durable steps per prompt"), one patch
# for all of it because each patch costs its own marker and search-attribute upsert: a
# prompt started after it takes the four changes above as given without recording their
# markers, resolves operator settings its input lacks (the context budget among them) in a
# local activity instead of an activity hop, and upserts a search attribute only when its
# value changes. Prompts started before it replay through the patches above as they ran.
DURABLE_STEPS_PATCH = "seawall-durable-steps-v1"
# A prompt started after it asks for its tools in a local activity and takes the
# ``seawall.list_tools`` activity hop only when MCP servers must be asked
# (docs/capacity.md, "Durable steps per prompt"); prompts started before it replay with the hop.
# Asked at the start, beside DURABLE_STEPS_PATCH: a patch first asked after a local activity
# of the same workflow task fails when a worker replays the prompt mid-way (the marker of
# ``-v1``, asked there, was met before the local activity resolved; that id is retired).
TOOLS_WITHOUT_HOP_PATCH = "seawall-tools-without-hop-v2"
# A prompt cancelled while it resolved its settings or listed its tools (before the loop)
# settles like any cancelled prompt: its result says ``cancelled``. Prompts that took that
# path before it replay as they ended, cancelled by the SDK without a result
# (docs/architecture.md, "Cancellation"). Asked only on that path, inside the handler.
CANCEL_BEFORE_LOOP_PATCH = "seawall-cancel-before-loop-v1"
# A prompt started after it runs the recommended profile's progress rules (the rows of
# ``workflows.rules.registry`` marked ``progress``) and reads the prompt's clock as evidence
# (docs/protections.md, "Loop profiles"); prompts started before it replay with those rules
# off and no clock, exactly as they ran. Asked at the start, beside the patches above.
PROGRESS_RULES_PATCH = "seawall-progress-rules-v1"
# A prompt started after it retries a failing model request for its retry window (the
# operator's ``model_retry_window_seconds``, resolved with its other settings) instead of
# five attempts: MODEL_RETRY_WINDOW, and the window in each request's input. Prompts
# started before it replay with MODEL_RETRY. Asked at the start, beside the patches above.
MODEL_RETRY_WINDOW_PATCH = "seawall-model-retry-window-v1"
# One marker again, as DURABLE_STEPS_PATCH did before four more patches each added its own
# (and the SDK's ``TemporalChangeVersion`` upsert): a prompt started after it takes the four
# patches asked at the start (durable steps, tools without the hop, progress rules, the model
# retry window) and the cancel-before-loop patch as given without recording them, and upserts
# the guard's search attributes only from the guard's first warning or stop decision on (what
# an operator lists prompts by), not for a streak it merely tracked (docs/capacity.md, "Durable
# steps per prompt"). Prompts started before it replay through those patches and upsert every
# change, exactly as they ran. Asked first of all.
ONE_MARKER_PATCH = "seawall-one-marker-v1"
# A prompt started after it reads calls and results through the normalizer (``workflows.
# rules.normalize``: volatile tokens masked, similarity by sketches, bounded per batch) and
# runs the rule-table rows marked ``normalized`` (near repeats, rewrites, no new state;
# docs/protections.md, "Loop profiles"), and may ask the progress judge. Prompts started
# before it replay with the fingerprint they had, those rows off and no judge, exactly as
# they ran. Asked first of all, before ONE_MARKER_PATCH, whose changes it takes as given, so
# a prompt still records one marker (and one version upsert); a history without it asks
# ONE_MARKER_PATCH next, as it did.
LOOP_QUALITY_V4_PATCH = "seawall-loop-quality-v4"
# A prompt whose session routes file tools to its ACP editor (``editor_tools``) runs a
# ``read_file`` or ``write_file`` there: the ``seawall.prepare_editor_call`` activity, then a
# wait for the editor's answer, instead of ``seawall.run_tool`` (workflows/prompt/
# editor_calls.py). Prompts started before it never had ``editor_tools`` and so never reach
# that path; it is asked there, on a routed call only, so no other prompt records a marker.
EDITOR_TOOLS_PATCH = "seawall-editor-tools-v1"
# A prompt started after it carries each model request's conversation by reference to the request
# before and what is new since, and its tools and script only when they changed
# (workflows/prompt/conversation_chain.py; docs/durability.md, "Conversations stored once"):
# the same commands, leaner activity inputs. Prompts started before it replay sending every
# request whole, as they ran. Asked first of all, before LOOP_QUALITY_V4_PATCH, whose changes
# it takes as given, so a prompt still records one marker; a history without it asks
# LOOP_QUALITY_V4_PATCH next, as it did.
CONVERSATION_REFS_PATCH = "seawall-conversation-refs-v1"
# A prompt started after it records what its start, its tool listing and its model replies already
# hold only there: its first model request names the listed tools and the scenario's script and
# keeps the start's messages by reference, each later request keeps the reply to the one before,
# and a scenario's tool call names its fixture (by the call's name) instead of carrying it;
# the activities read them from the prompt's history once per worker (activities/
# prompt_preamble.py; docs/durability.md, "Conversations stored once"). The same commands, leaner
# inputs. Prompts started before it replay carrying them, as they ran. Asked first of all, before
# CONVERSATION_REFS_PATCH, whose changes it takes as given, so a prompt still records one marker.
INPUTS_BY_REFERENCE_PATCH = "seawall-inputs-by-reference-v1"
# A prompt started after it keeps a tool message that is exactly its call's ``seawall.run_tool``
# result by the call's id in the next model request instead of carrying the output again (the
# model activity reads it from its worker's cache of results or the prompt's history;
# docs/durability.md, "Conversations stored once"). The same commands, leaner inputs. Prompts
# started before it replay carrying the outputs, as they ran. Asked first of all, before
# INPUTS_BY_REFERENCE_PATCH, whose changes it takes as given, so a prompt still records one marker.
RESULTS_BY_REFERENCE_PATCH = "seawall-results-by-reference-v1"
# A prompt started after it runs the stale-wait rule (R12, ``workflows.rules.stale_waits``: a long
# wait in which nothing changed reminds, then stops), which can add a reminder or a stop where a
# prompt before it ran on. Prompts started before it replay with the rule off, as they ran. Asked
# first of all, before RESULTS_BY_REFERENCE_PATCH, whose changes it takes as given, so a prompt
# still records one marker.
STALE_WAITS_PATCH = "seawall-stale-waits-v1"
# A prompt started after it judges "nothing new" by what came back (R11 and R12,
# ``workflows.rules.stagnation`` and ``stale_waits``): the same answer to a reworded call that
# changed nothing is stale, and a wait's stretch is its own checks', so it can remind or stop
# where a prompt before it ran on. Prompts started before it replay keying calls as they did.
# Asked first of all, before STALE_WAITS_PATCH, whose changes it takes as given, so a prompt
# still records one marker.
NOTHING_NEW_PATCH = "seawall-nothing-new-v1"
# A prompt started after it takes two answers that differ only in a count or two for one answer
# in the no-new-state rule (R11, ``workflows.rules.stagnation``: a listing whose every answer
# ends with the agent's growing context size is stale), so it can remind or stop where a prompt
# before it ran on. Prompts started before it replay with every count new, as they did. Asked
# first of all, before NOTHING_NEW_PATCH, whose changes it takes as given, so a prompt still
# records one marker.
MOVED_COUNTS_PATCH = "seawall-moved-counts-v1"
# A prompt started after it reads any tool given a command (``Bash``, ``execute_command``) as a
# shell, and ``curl`` that sends nothing as a command that only reads
# (``workflows.rules.inspection``): such a call changes nothing, so the loop rules can remind or
# stop where a prompt before it ran on. Prompts started before it replay reading only
# ``run_shell_command``, as they did. Asked first of all, before MOVED_COUNTS_PATCH, whose
# changes it takes as given, so a prompt still records one marker.
SHELL_READS_PATCH = "seawall-shell-reads-v1"
# A prompt started after it reads what a call looked at (``workflows.rules.inspection``): a wait
# is news to the no-new-state rule (R11) only if something looked at the world since the last
# one (``sleep 5; echo ok`` between ``echo idle`` calls looks at nothing), PowerShell's readers
# (``Get-Content``) change nothing, and each line of a command is read as a command; and its
# normalizer reads a word a label names as an identity as one ``<id>`` whatever its characters
# (``run 28ab84``) and a time taken labelled with hyphens (``openai-processing-ms``) as one, in
# the workflow and in its tool activities (``RunToolInput.labelled_ids``).
# So the loop rules can remind or stop where a prompt before it ran on. Prompts started before
# it replay reading as they did. Asked first of all, before SHELL_READS_PATCH, whose changes it
# takes as given, so a prompt still records one marker.
LOOKS_AND_IDS_PATCH = "seawall-looks-and-ids-v1"
# A prompt started after it reads an id a call's arguments hold as what the call acts on when an
# earlier answer listed it beside another id the same tool acted on
# (``workflows.rules.world_ids``, ``CallEvidence.acts_on``): twelve mutations on twelve issues of
# one listing are twelve pieces of work to the near-repeat (R9) and rewrite (R10) rules, however
# alike their words and answers. Its tool activities return the ids each text holds with their
# readings (``RunToolInput.world_ids``). And to the no-new-state rule (R11) an answer about what
# its call names is keyed by the values it names, not by the whole call (the same log lines of the
# same pod, fetched with a limit one higher each time, are nothing new), and an answer in the
# model's own words (``echo``: a command that looks at nothing) is never news. So a prompt can run
# on where one before it was reminded or stopped, and be reminded or stopped where one before it
# ran on. Prompts started before it replay reading as they did. Asked first of all, before
# LOOKS_AND_IDS_PATCH, whose changes it takes as given, so a prompt still records one marker.
WORLD_IDS_PATCH = "seawall-world-ids-v1"
# A prompt started after it reads the runner's refusal to start a call (a tool that does not
# exist, a tool-call limit: ``evidence.refused_unrun``) as an answer to the no-new-state rule
# (R11), as the identical-result (R3) and near-repeat (R9) rules already did: the same refusal
# again is nothing new, however the call was reworded. Before it a batch holding a refusal
# neither counted nor reset R11, as a failure does, though no failure rule counts a refusal:
# a model calling a missing ``task_complete`` with three summaries in turn ran to its request
# cap. Prompts started before it replay as they did. Asked first of all, before
# WORLD_IDS_PATCH, whose changes it takes as given, so a prompt still records one marker.
REFUSALS_PATCH = "seawall-refusals-v1"
# The one marker a prompt started today records: the newest start patch, which takes every start
# patch before it as given (StartPatches.ask).
NEWEST_START_PATCH = REFUSALS_PATCH


@dataclass(frozen=True)
class StartPatches:
    """Which changes asked at a prompt's start apply to it, asked before any other command
    (histories recorded before a patch have no marker for it), the newest first: it takes
    every start patch before it as given, so a new prompt records one marker."""

    refusals: bool = False  # REFUSALS_PATCH: R11 reads a refusal to start a call as an answer
    world_ids: bool = False  # WORLD_IDS_PATCH: an id the world listed names what a call acts on
    # LOOKS_AND_IDS_PATCH: what a call looked at, and a labelled id whatever its characters
    looks_and_ids: bool = False
    shell_reads: bool = False  # SHELL_READS_PATCH: any tool given a command is a shell
    moved_counts: bool = False  # MOVED_COUNTS_PATCH: R11 reads a moved count as no news
    nothing_new: bool = False  # NOTHING_NEW_PATCH: R11 and R12 key calls by their answers
    stale_waits: bool = False  # STALE_WAITS_PATCH: the stale-wait rule (R12)
    # RESULTS_BY_REFERENCE_PATCH: tool outputs kept by their call's id in model requests
    results_by_reference: bool = False
    # INPUTS_BY_REFERENCE_PATCH: tools, script and fixtures named, not carried
    by_reference: bool = False
    conversation_refs: bool = False  # CONVERSATION_REFS_PATCH: requests as a chain
    normalized: bool = False  # LOOP_QUALITY_V4_PATCH: the normalizer and its rules
    one_marker: bool = False  # ONE_MARKER_PATCH: the start patches below without markers
    durable_steps: bool = False  # DURABLE_STEPS_PATCH
    tools_without_hop: bool = False  # TOOLS_WITHOUT_HOP_PATCH
    # PROGRESS_RULES_PATCH: the progress rules and the prompt's clock (workflow time since
    # the start plus the time a scenario scripts, which nothing really waits).
    progress_rules: bool = False
    model_retry_window: bool = False  # MODEL_RETRY_WINDOW_PATCH

    @classmethod
    def ask(cls) -> StartPatches:
        refusals = workflow.patched(REFUSALS_PATCH)
        world_ids = refusals or workflow.patched(WORLD_IDS_PATCH)
        looks_and_ids = world_ids or workflow.patched(LOOKS_AND_IDS_PATCH)
        shell_reads = looks_and_ids or workflow.patched(SHELL_READS_PATCH)
        moved_counts = shell_reads or workflow.patched(MOVED_COUNTS_PATCH)
        nothing_new = moved_counts or workflow.patched(NOTHING_NEW_PATCH)
        stale_waits = nothing_new or workflow.patched(STALE_WAITS_PATCH)
        results = stale_waits or workflow.patched(RESULTS_BY_REFERENCE_PATCH)
        by_reference = results or workflow.patched(INPUTS_BY_REFERENCE_PATCH)
        chained = by_reference or workflow.patched(CONVERSATION_REFS_PATCH)
        one_marker = {
            "one_marker": True,
            "durable_steps": True,
            "tools_without_hop": True,
            "progress_rules": True,
            "model_retry_window": True,
        }
        if chained or workflow.patched(LOOP_QUALITY_V4_PATCH):
            return cls(
                refusals=refusals,
                world_ids=world_ids,
                looks_and_ids=looks_and_ids,
                shell_reads=shell_reads,
                moved_counts=moved_counts,
                nothing_new=nothing_new,
                stale_waits=stale_waits,
                results_by_reference=results,
                by_reference=by_reference,
                conversation_refs=chained,
                normalized=True,
                **one_marker,
            )
        if workflow.patched(ONE_MARKER_PATCH):
            return cls(**one_marker)
        # Asked in this order, as every history before ONE_MARKER_PATCH recorded them.
        return cls(
            durable_steps=workflow.patched(DURABLE_STEPS_PATCH),
            tools_without_hop=workflow.patched(TOOLS_WITHOUT_HOP_PATCH),
            progress_rules=workflow.patched(PROGRESS_RULES_PATCH),
            model_retry_window=workflow.patched(MODEL_RETRY_WINDOW_PATCH),
        )


class FixtureFields(TypedDict):
    """What a tool activity's input (``RunToolInput``, ``CheckToolCallInput``) carries of a
    scenario's fixture."""

    scenario_fixture: FixtureTool | None
    fixture_in_start: bool


def fixture_carried(fixture: FixtureTool | None, patches: StartPatches) -> FixtureFields:
    """The fixture whole, or since ``INPUTS_BY_REFERENCE_PATCH`` only that the prompt's start
    input holds it (under the call's name): the tool runner reads it from there."""
    if patches.by_reference and fixture is not None:
        return FixtureFields(scenario_fixture=None, fixture_in_start=True)
    return FixtureFields(scenario_fixture=fixture, fixture_in_start=False)
