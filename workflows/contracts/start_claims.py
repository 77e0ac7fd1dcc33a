"""The start claim of a session, a root prompt or an owner's admission workflow, built one way
for the workflow that hands it to the worker and for the starter that signs it
(docs/security-trust.md).

A workflow only claims what its own input says, and which run it is; the worker decides
whether that input came from a trusted starter. :class:`RunGrantInbox` receives the grant a
starter signals for the run, :func:`fresh_start` says which runs are checked at all, and
:func:`refused_start` turns the worker's refusal into the workflow's own failure, with the
refusal's type, so a hostile start fails clearly before any model request or tool call.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError

from workflows.contracts.grant import (
    GRANT_MISSING,
    GRANT_SIGNAL,
    GRANT_WAIT_SECONDS,
    START_REFUSALS,
    SessionGrant,
    StartClaim,
    input_digest,
)
from workflows.contracts.owner_admission import AdmissionState
from workflows.contracts.prompt import PromptInput, channel_marked, guard_forced_off
from workflows.contracts.session import SessionInput


def session_claim(
    session: SessionInput, *, run_id: str | None, grant: SessionGrant | None
) -> StartClaim:
    """What a fresh ``SessionWorkflow`` claims: its id, owner, workspace, scenario, whether
    it is a channel session, the operator decisions and the whole input it was started with,
    for the run ``run_id``."""
    settings = session.settings
    return StartClaim(
        kind="session",
        session_id=session.session_id,
        owner_id=session.owner_id,
        workspace_root=settings.workspace_root,
        scripted=settings.scenario is not None,
        guard_off=channel_marked(settings.client_metadata),
        guard_mode=session.guard_mode,
        rollout=session.rollout,
        loop_settings=session.loop_settings,
        input_sha256=input_digest(session),
        run_id=run_id,
        grant=grant,
    )


def prompt_claim(
    prompt: PromptInput, *, run_id: str | None, grant: SessionGrant | None
) -> StartClaim:
    """What a root ``PromptWorkflow`` claims (a session's prompts claim nothing)."""
    return StartClaim(
        kind="prompt",
        owner_id=prompt.owner_id,
        workspace_root=prompt.workspace_root,
        scripted=prompt.scenario is not None,
        guard_off=guard_forced_off(prompt),
        guard_mode=prompt.guard_mode,
        rollout=prompt.rollout,
        loop_settings=prompt.loop_settings,
        input_sha256=input_digest(prompt),
        run_id=run_id,
        grant=grant,
    )


def admission_claim(state: AdmissionState) -> StartClaim:
    """What a fresh ``OwnerAdmissionWorkflow`` claims: its whole start state, for its workflow
    id (which names the owner and the task queue)."""
    return StartClaim(kind="admission", input_sha256=input_digest(state), grant=state.grant)


def fresh_start(info: workflow.Info) -> bool:
    """Whether this run began from a starter's input, so the worker checks it: every run
    but one that continue-as-new made (its input is the checked run's own carry). A cron
    run or a retry also continues an earlier run, but from the original start input again,
    so it is checked like a start."""
    return info.continued_run_id is None or bool(info.cron_schedule) or info.attempt > 1


class RunGrantInbox:
    """A mixin of the workflows a trusted starter starts and then signals its run's grant
    (``SessionWorkflow``, ``PromptWorkflow``): the ``grant`` signal, and the grant a fresh
    run's claim carries."""

    def __init__(self) -> None:
        super().__init__()
        self._run_grant: SessionGrant | None = None

    @workflow.signal(name=GRANT_SIGNAL)
    def grant(self, grant: SessionGrant) -> None:
        """The starter's grant for this run; the first one is the one checked."""
        if self._run_grant is None:
            self._run_grant = grant

    async def start_grant(
        self, *, grant_follows: bool, input_grant: SessionGrant | None, kind: str
    ) -> SessionGrant | None:
        """The grant this fresh run is checked with: the one signalled for the run when the
        input says it follows (waiting up to :data:`GRANT_WAIT_SECONDS`, then refused as
        missing), else the input's own (``None``: unsigned)."""
        if not grant_follows:
            return input_grant
        if self._run_grant is None:
            try:
                await workflow.wait_condition(
                    lambda: self._run_grant is not None,
                    timeout=timedelta(seconds=GRANT_WAIT_SECONDS),
                )
            except TimeoutError:
                raise ApplicationError(
                    f"the {kind}'s session grant did not arrive within {GRANT_WAIT_SECONDS} s "
                    "of its start: start it again through the gateway or seawall acp "
                    "(docs/security-trust.md)",
                    type=GRANT_MISSING,
                    non_retryable=True,
                ) from None
        return self._run_grant

    async def run_claim(self, start: SessionInput | PromptInput) -> StartClaim:
        """What this fresh run of ``start`` claims, with its grant (:meth:`start_grant`), for
        the run the server started (its original run id, so a reset keeps it)."""
        run_id = workflow.info().original_execution_run_id
        if isinstance(start, SessionInput):
            grant = await self.start_grant(
                grant_follows=start.grant_follows, input_grant=start.grant, kind="session"
            )
            return session_claim(start, run_id=run_id, grant=grant)
        grant = await self.start_grant(
            grant_follows=start.grant_follows, input_grant=start.grant, kind="prompt"
        )
        return prompt_claim(start, run_id=run_id, grant=grant)

    async def root_prompt_claim(self, prompt: PromptInput) -> StartClaim | None:
        """What a prompt hands the worker to check: its :meth:`run_claim` at a root prompt's
        fresh start; ``None`` for a session's prompt (a child: its session's start was
        checked, and ``workflow.info().parent`` is the server's word) and for a run that
        continue-as-new made."""
        info = workflow.info()
        if info.parent is not None or not fresh_start(info):
            return None
        return await self.run_claim(prompt)


def refused_start(err: ActivityError) -> ApplicationError | None:
    """The workflow's failure for an activity that refused its start, else ``None``."""
    cause = err.cause
    if isinstance(cause, ApplicationError) and cause.type in START_REFUSALS:
        return ApplicationError(cause.message, type=cause.type, non_retryable=True)
    return None
