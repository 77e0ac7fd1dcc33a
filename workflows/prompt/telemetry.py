"""Guard telemetry emitted from workflow code, replay-safely and data-minimized.

docs/architecture.md, "Observability and privacy". Counters go through ``workflow.metric_meter()``
(nothing is recorded while
replaying) and diagnostic lines through ``workflow.logger`` (silent on replay), so a
replayed or recovered prompt never counts twice. Labels are low-cardinality only; the
prompt id, the candidate ordinal and the execution error type appear in the diagnostic log,
never as labels. Nothing here carries tool arguments, results, paths, raw error text or
MCP server names. A telemetry failure is swallowed: it must never change the loop.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from temporalio import workflow

from workflows.contracts import search_attributes
from workflows.seed.guard import GuardMode, TelemetryRecord
from workflows.seed.rollout import Cohort

GUARD_TRANSITIONS = "seawall_guard_transitions"
FAILED_CALL_REFUSALS = "seawall_failed_call_refusals"
LOOP_STOPS = "seawall_loop_stops"
LOOP_RULE_DECISIONS = "seawall_loop_rule_decisions"


@contextlib.contextmanager
def _never_fails() -> Iterator[None]:
    try:
        yield
    except Exception:
        with contextlib.suppress(Exception):
            workflow.logger.debug("telemetry emission failed")


def cohort_label() -> str:
    """The prompt's rollout cohort as a metric label (a bounded ``Cohort`` value, set when
    its session started it; docs/architecture.md, "Rollout cohorts"). Never the owner."""
    value = workflow.info().typed_search_attributes.get(search_attributes.ROLLOUT_COHORT)
    return value if value in COHORTS else Cohort.UNASSIGNED.value


COHORTS = frozenset(c.value for c in Cohort)


def tool_label(tool_name: str | None, tool_type: str | None) -> str:
    """A tool as logs may name it: native tools by name, MCP tools only as ``mcp`` (their
    registered names contain the server's name)."""
    if tool_type == "mcp" or (tool_name or "").startswith("mcp__"):
        return "mcp"
    return tool_name or "unregistered"


def guard_transition(record: TelemetryRecord, *, route: str, batch: int) -> None:
    with _never_fails():
        workflow.metric_meter().create_counter(
            GUARD_TRANSITIONS, "Repeated-failure guard transitions, one per settled batch."
        ).add(1, {"route": route, "cohort": cohort_label(), **record.metric_attributes()})
    with _never_fails():
        workflow.logger.info(
            "guard_transition",
            extra={
                "prompt_id": workflow.info().workflow_id,
                "route": route,
                "batch": batch,
                **record.model_dump(mode="json"),
            },
        )


def refusal(*, outcome: str, tool_name: str | None, tool_type: str | None, route: str) -> None:
    with _never_fails():
        workflow.metric_meter().create_counter(
            FAILED_CALL_REFUSALS, "Failed-call repeats refused (or, in shadow, would be)."
        ).add(
            1,
            {
                "route": route,
                "cohort": cohort_label(),
                "outcome": outcome,
                "tool_type": tool_type or "none",
            },
        )
    with _never_fails():
        workflow.logger.info(
            "failed_call_repeat",
            extra={
                "prompt_id": workflow.info().workflow_id,
                "tool_name": tool_label(tool_name, tool_type),
                "outcome": outcome,
            },
        )


def rule_decision(
    *,
    rule: str,
    decision: str,
    mode: GuardMode,
    count: int,
    tool_name: str | None,
    tool_type: str | None,
    route: str,
    batch: int,
) -> None:
    """One decision of a recommended-profile rule (a reminder, a stop, a denied re-request
    answered, or their shadow counterparts). ``tool_name`` is given only where the rule
    keys on a tool; it is logged as its safe label, never as a metric label."""
    with _never_fails():
        workflow.metric_meter().create_counter(
            LOOP_RULE_DECISIONS,
            "Decisions of the recommended loop profile's rules, by rule and decision.",
        ).add(
            1,
            {
                "route": route,
                "cohort": cohort_label(),
                "rule": rule,
                "decision": decision,
                "mode": mode.value,
                "tool_type": tool_type or "none",
            },
        )
    with _never_fails():
        workflow.logger.info(
            "loop_rule_decision",
            extra={
                "prompt_id": workflow.info().workflow_id,
                "route": route,
                "batch": batch,
                "rule": rule,
                "decision": decision,
                "mode": mode.value,
                "count": count,
                "tool_name": tool_label(tool_name, tool_type) if tool_name else "none",
            },
        )


def loop_stop(*, loop_type: str, mode: GuardMode, route: str, batch: int) -> None:
    """The one terminal loop event of a stopped prompt."""
    with _never_fails():
        workflow.metric_meter().create_counter(
            LOOP_STOPS, "Prompts stopped by a loop protection, by loop type."
        ).add(
            1,
            {"route": route, "cohort": cohort_label(), "loop_type": loop_type, "mode": mode.value},
        )
    with _never_fails():
        workflow.logger.warning(
            "loop_detected",
            extra={
                "prompt_id": workflow.info().workflow_id,
                "loop_type": loop_type,
                "mode": mode.value,
                "route": route,
                "batch": batch,
            },
        )


def context_fitted(
    *, request: int, messages: int, sent_messages: int, elided_outputs: int, sent_chars: int
) -> None:
    """The context policy cut what a model request carries (sizes only, never content)."""
    with _never_fails():
        workflow.logger.info(
            "context_fitted",
            extra={
                "prompt_id": workflow.info().workflow_id,
                "request": request,
                "messages": messages,
                "sent_messages": sent_messages,
                "elided_outputs": elided_outputs,
                "sent_chars": sent_chars,
            },
        )
