"""The start claim of a session or a root prompt, built one way for the workflow that hands
it to the worker and for the starter that signs it (docs/security-trust.md).

A workflow only claims what its own input says; the worker decides whether that input came
from a trusted starter. :func:`refused_start` turns the worker's refusal into the workflow's
own failure, with the refusal's type, so a hostile start fails clearly before any model
request or tool call.
"""

from __future__ import annotations

from temporalio.exceptions import ActivityError, ApplicationError

from workflows.contracts.grant import START_REFUSALS, StartClaim
from workflows.contracts.prompt import PromptInput
from workflows.contracts.session import SessionInput


def session_claim(session: SessionInput) -> StartClaim:
    """What a fresh ``SessionWorkflow`` claims: its id, owner, workspace, scenario and the
    operator decisions it was started with."""
    settings = session.settings
    return StartClaim(
        kind="session",
        session_id=session.session_id,
        owner_id=session.owner_id,
        workspace_root=settings.workspace_root,
        scripted=settings.scenario is not None,
        guard_mode=session.guard_mode,
        rollout=session.rollout,
        loop_settings=session.loop_settings,
        grant=session.grant,
    )


def prompt_claim(prompt: PromptInput) -> StartClaim:
    """What a root ``PromptWorkflow`` claims (a session's prompts claim nothing)."""
    return StartClaim(
        kind="prompt",
        owner_id=prompt.owner_id,
        workspace_root=prompt.workspace_root,
        scripted=prompt.scenario is not None,
        guard_mode=prompt.guard_mode,
        rollout=prompt.rollout,
        loop_settings=prompt.loop_settings,
        grant=prompt.grant,
    )


def refused_start(err: ActivityError) -> ApplicationError | None:
    """The workflow's failure for an activity that refused its start, else ``None``."""
    cause = err.cause
    if isinstance(cause, ApplicationError) and cause.type in START_REFUSALS:
        return ApplicationError(cause.message, type=cause.type, non_retryable=True)
    return None
