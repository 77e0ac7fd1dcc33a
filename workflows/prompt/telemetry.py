"""Guard telemetry emitted from workflow code, replay-safely and data-minimized.

docs/observability.md, "Privacy". Counters go through ``workflow.metric_meter()``
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
# One per finished prompt: the rollout gates' quantities, per cohort (docs/rollout.md,
# "Dashboards"): completion (by stop reason), latency, tokens (only when the model reported
# usage) and rounds (model requests).
PROMPTS_FINISHED = "seawall_prompts_finished"
PROMPT_LATENCY = "seawall_prompt_latency_seconds"
PROMPT_TOKENS = "seawall_prompt_tokens"
PROMPT_ROUNDS = "seawall_prompt_rounds"
# Their Prometheus buckets (seawall/runtime/metrics.py), so a p95 has resolution where
# prompts are: seconds to an hour, tens to a million tokens, one to a few hundred rounds.
PROMPT_HISTOGRAM_BUCKETS: dict[str, tuple[float, ...]] = {
    PROMPT_LATENCY: (1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1200, 1800, 3600),
    PROMPT_TOKENS: (
        100,
        500,
        1000,
        2000,
        5000,
        10_000,
        20_000,
        50_000,
        100_000,
        200_000,
        500_000,
        1_000_000,
    ),
    PROMPT_ROUNDS: (1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233),
}


@contextlib.contextmanager
def _never_fails() -> Iterator[None]:
    try:
        yield
    except Exception:
        with contextlib.suppress(Exception):
            workflow.logger.debug("telemetry emission failed")


def cohort_label() -> str:
    """The prompt's rollout cohort as a metric label (a bounded ``Cohort`` value, set when
    its session started it; docs/rollout.md, "Rollout cohorts"). Never the owner."""
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


def prompt_finished(
    *,
    stop_reason: str,
    mode: GuardMode,
    route: str,
    seconds: float,
    input_tokens: int | None,
    output_tokens: int | None,
    rounds: int,
) -> None:
    """A finished prompt's outcome, latency, tokens and rounds, labelled by cohort and mode
    (the rollout gates' inputs, docs/rollout.md, "The rollout report"). Tokens are left
    out when unknown: a None count, or none at all from a prompt that asked the model (a
    server that sends no usage), so a mean is over known counts only."""
    labels = {"route": route, "cohort": cohort_label(), "mode": mode.value}
    with _never_fails():
        meter = workflow.metric_meter()
        meter.create_counter(
            PROMPTS_FINISHED, "Finished prompts, by stop reason (completion is end_turn)."
        ).add(1, {**labels, "stop_reason": stop_reason})
        meter.create_histogram_float(
            PROMPT_LATENCY, "Prompt latency, start to finish.", "s"
        ).record(max(seconds, 0.0), labels)
        meter.create_histogram(PROMPT_ROUNDS, "Model requests (rounds) per prompt.").record(
            max(rounds, 0), labels
        )
        tokens = (
            None if input_tokens is None or output_tokens is None else input_tokens + output_tokens
        )
        if tokens is not None and (tokens > 0 or rounds == 0):
            meter.create_histogram(
                PROMPT_TOKENS, "Tokens (input and output) per prompt, when reported."
            ).record(tokens, labels)
