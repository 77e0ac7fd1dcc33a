"""What the Temporal UI shows of a prompt: its search attributes, current details and
activity summaries (docs/observability.md, "The Temporal UI"; docs/observability.md, "Privacy").

Search attributes are commands (each upsert is a history event and a visibility write), so
which upserts a prompt makes is versioned: every transition before ``DURABLE_STEPS_PATCH``,
only changed values since; the guard's two from its first warning or stop on since
``ONE_MARKER_PATCH``. Current details and summaries are not commands: the details are read
live by the UI, the summaries are user metadata on the activities (payloads, encoded by the
codec like the input). Neither ever names an argument beyond what a permission request
shows (``workflows.prompt.approvals``), nor an MCP tool beyond ``mcp``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from temporalio import workflow
from temporalio.common import SearchAttributeUpdate

from workflows.contracts import search_attributes
from workflows.contracts.activity import ToolSpec
from workflows.contracts.outcome import ToolCall
from workflows.contracts.prompt import PermissionRequest, ToolCallCounts
from workflows.prompt import telemetry
from workflows.prompt.approvals import call_summary, shown_arguments
from workflows.prompt.patches import SEARCH_ATTRIBUTES_PATCH
from workflows.seed.guard import GuardDecision, GuardMode, GuardState


class SearchAttributes:
    """The prompt's search attributes as upserted so far, and the rule for the next."""

    def __init__(self) -> None:
        self._values: dict[str, object] = {}
        # Decided at the start (the patches): only changed values, and the guard's only
        # from its first warning or stop on.
        self.changed_only = False
        self.guard_from_warning = False

    def upsert(self, *updates: SearchAttributeUpdate[str]) -> None:
        """Upsert ``updates``; since DURABLE_STEPS_PATCH only those whose value changed."""
        if self.changed_only:
            updates = tuple(u for u in updates if self._values.get(u.key.name) != u.value)
            self._values.update({u.key.name: u.value for u in updates})
            if updates:
                workflow.upsert_search_attributes(list(updates))
        elif updates and workflow.patched(SEARCH_ATTRIBUTES_PATCH):
            workflow.upsert_search_attributes(list(updates))

    def guard_due(self, decision: GuardDecision) -> bool:
        """Whether a guard transition upserts the guard's attributes: always before
        ONE_MARKER_PATCH; since, from the guard's first warning or stop on (or what it would
        have been, in shadow), never for a streak it only tracked or reset before that: an
        operator lists prompts by warnings and stops."""
        already = search_attributes.GUARD_PHASE.name in self._values
        return not self.guard_from_warning or already or decision.warns_or_stops

    def record_guard(self, decision: GuardDecision) -> None:
        """A guard transition: its phase and decision, when due."""
        if self.guard_due(decision):
            self.upsert(
                search_attributes.GUARD_PHASE.value_set(decision.state.phase.value),
                search_attributes.LAST_DECISION.value_set(decision.kind.value),
            )


def current_details(
    mode: GuardMode | None,
    state: GuardState,
    *,
    batch: int,
    model_requests: int,
    counts: ToolCallCounts,
    waiting: Iterable[PermissionRequest],
    tools: Mapping[str, ToolSpec],
) -> str:
    """The prompt's current details: the guard's state and counts, and which calls wait for
    the user's approval (by safe label: the arguments are for the session's own clients)."""
    details = (
        f"**Guard** ({(mode or GuardMode.OFF).value}): {state.phase.value}, "
        f"{state.failure_count} failures over {state.batch_count} batches "
        f"(candidate {state.candidate_ordinal}) after batch {batch}; "
        f"{model_requests} model requests, {counts.executed} calls run, "
        f"{counts.refused} refused."
    )
    labels = [
        f"`{telemetry.tool_label(r.tool_name, _tool_type(tools, r.tool_name))}` ({r.request_id}"
        + (f", asked by the rule {r.rule!r})" if r.rule else ")")
        for r in waiting
    ]
    if labels:
        details += "\n\n**Waiting for the user's approval**: " + ", ".join(labels) + "."
    return details


def _tool_type(tools: Mapping[str, ToolSpec], name: str) -> str | None:
    spec = tools.get(name)
    return spec.tool_type if spec else None


def tool_summary(
    call: ToolCall,
    policy: str | None,
    tool_type: str | None,
    batch: int,
    redacted: tuple[str, ...],
) -> str:
    """A tool activity's summary: the call on one line as a permission request shows it
    (values shortened, secrets redacted) and its batch; MCP tools only as ``mcp`` (their
    names carry the server's)."""
    label = telemetry.tool_label(policy, tool_type)
    if label == "mcp":
        return f"mcp (batch {batch})"
    shown = shown_arguments(call.arguments or {}, redacted)
    return f"{call_summary(label, shown)} (batch {batch})"
