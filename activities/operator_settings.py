"""The activity that resolves the operator's settings once per session (docs/architecture.md, "The
life of a prompt").

The guard mode, the loop profile (with its per-rule modes), the context budget, the model
retry window and the session's rollout cohort (the owner's arm of the rollout policy) are
operator decisions, so they are read only from the worker's process environment and the
operator's user config file, through the per-session reads of
seawall/runtime/settings/session.py (:func:`~seawall.runtime.settings.resolve_guard_mode`
and the others), which validate each value with the settings model's own field, so a session
reads a value as startup did. Anything inside a workspace (a project ``.env``,
``.seawall/``, ``.qwen/.env``, workspace settings) is under the control of whoever wrote the
repository, who must not be able to switch the guard off or on; nothing here looks at the
working directory. Resolving in an activity keeps the workflow deterministic: the result is
recorded in history and replayed as is. An invalid value never fails the prompt: it means
the default (``shadow``; the ``recommended`` profile) and one operator diagnostic in the
log.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import structlog
from temporalio import activity

from seawall.runtime.approval_rules import load_approval_rules
from seawall.runtime.settings import (
    WORKER,
    ActivitySummariesResolution,
    ContextBudgetResolution,
    Diagnostic,
    GuardModeResolution,
    LoopSettingsResolution,
    ModelRetryWindowResolution,
    RolloutSettings,
    SettingsError,
    load_settings,
    resolve_activity_summaries,
    resolve_context_budget,
    resolve_guard_mode,
    resolve_loop_settings,
    resolve_model_retry_window,
    resolve_rollout_settings,
)
from workflows.contracts.activity import (
    RESOLVE_OPERATOR_SETTINGS,
    OperatorSettings,
    ResolveOperatorSettingsInput,
)
from workflows.contracts.approval import ApprovalRule
from workflows.seed.rollout import assign

from .trust import DENY_ALL, WorkerTrust

MAX_LOGGED_VALUE_CHARS = 100


APPROVAL_RULES_ENV = "SEAWALL_APPROVAL_RULES"


def current_approval_rules() -> tuple[ApprovalRule, ...]:
    """The operator's approval rules as the worker's settings say now (the file was checked
    when the worker started; a file broken since fails the session's start loudly)."""
    try:
        path = load_settings(os.environ, reader=WORKER).settings.approval_rules
    except SettingsError:
        # Another setting went bad since the worker started (each per-session read reports
        # its own): the rules still come from their variable, never silently from nowhere.
        named = os.environ.get(APPROVAL_RULES_ENV)
        path = Path(named).expanduser() if named else None
    return () if path is None else load_approval_rules(path)


class OperatorSettingsActivities:
    """The operator-settings activity of one worker. ``read_guard_mode`` and
    ``read_loop_settings`` resolve the guard mode and the loop settings from the worker's
    settings sources (by default :func:`seawall.runtime.settings.resolve_guard_mode` and
    :func:`seawall.runtime.settings.resolve_loop_settings`); they run at every session
    start. ``trust`` checks a fresh session's start claim first (activities/trust.py)."""

    def __init__(
        self,
        read_guard_mode: Callable[[], GuardModeResolution] = resolve_guard_mode,
        read_loop_settings: Callable[[], LoopSettingsResolution] = resolve_loop_settings,
        read_rollout: Callable[[], RolloutSettings] = resolve_rollout_settings,
        read_context_budget: Callable[[], ContextBudgetResolution] = resolve_context_budget,
        read_activity_summaries: Callable[
            [], ActivitySummariesResolution
        ] = resolve_activity_summaries,
        read_model_retry_window: Callable[
            [], ModelRetryWindowResolution
        ] = resolve_model_retry_window,
        read_approval_rules: Callable[[], tuple[ApprovalRule, ...]] = current_approval_rules,
        *,
        trust: WorkerTrust = DENY_ALL,
    ) -> None:
        self._trust = trust
        self._read_approval_rules = read_approval_rules
        self._read_guard_mode = read_guard_mode
        self._read_loop_settings = read_loop_settings
        self._read_rollout = read_rollout
        self._read_context_budget = read_context_budget
        self._read_activity_summaries = read_activity_summaries
        self._read_model_retry_window = read_model_retry_window

    def activities(self) -> list[Callable[..., Any]]:
        return [self.resolve_operator_settings]

    @activity.defn(name=RESOLVE_OPERATOR_SETTINGS)
    async def resolve_operator_settings(
        self, inp: ResolveOperatorSettingsInput
    ) -> OperatorSettings:
        """Read the operator's guard mode and loop settings from this worker's environment
        and user config, once a fresh session's start is verified (a refusal fails the
        session before any prompt runs)."""
        self._trust.check_start_in_activity(inp.start)
        result = self._read_guard_mode()
        loop = self._read_loop_settings()
        rollout = self._read_rollout()
        budget = self._read_context_budget()
        summaries = self._read_activity_summaries()
        retry_window = self._read_model_retry_window()
        for problem in (
            result.diagnostic,
            *loop.diagnostics,
            rollout.diagnostic,
            budget.diagnostic,
            summaries.diagnostic,
            retry_window.diagnostic,
        ):
            if problem is not None:
                _log_diagnostic(problem)
        # The owner's cohort (docs/rollout.md, "Rollout cohorts"): the owner id is
        # hashed here and goes nowhere else; only the cohort is returned and logged.
        assignment = assign(
            rollout.policies,
            owner_id=inp.owner_id,
            salt=rollout.salt,
            environment=rollout.environment,
            service_version=rollout.service_version,
            pinned_version=rollout.pinned_version,
            base_mode=result.mode,
        )
        return OperatorSettings(
            guard_mode=assignment.mode or result.mode,
            guard_mode_source=result.source,
            loop_settings=loop.settings,
            rollout=assignment,
            context_budget_chars=budget.chars,
            activity_summaries=summaries.enabled,
            model_retry_window_seconds=retry_window.seconds,
            approval_rules=list(self._read_approval_rules()),
        )


def _log_diagnostic(problem: Diagnostic) -> None:
    fields: dict[str, object] = {"source": problem.source, "diagnostic": problem.message}
    if problem.value is not None:
        # Operator configuration, not user data, so the value itself may be logged.
        fields["value"] = problem.value[:MAX_LOGGED_VALUE_CHARS]
        fields["value_length"] = len(problem.value)
    # A logging failure must not fail the activity (and so the prompt).
    with contextlib.suppress(Exception):
        structlog.get_logger(__name__).warning(problem.event, **fields)
