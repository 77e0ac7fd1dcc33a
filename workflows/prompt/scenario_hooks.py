"""The scenario driver's hooks into ``PromptWorkflow``: batch pauses and the driver's wait.

docs/scenarios.md, "Running a scenario". A scenario lands each event inside exactly the
batch it names: the prompt pauses once that batch's calls have settled (all but those
scripted to hang), the driver learns it through the ``wait_for_driver`` update, sends the
event's signal (or cancels) and releases the batch with ``release_batch``. The signals are
ordered in history before the batch's input drain, so every run sees the same thing. Only a
prompt whose ``scenario`` names the batch ever pauses; ordinary prompts never use these
handlers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from temporalio import workflow

from workflows.contracts.prompt import PermissionRequest, StopReason


class BatchRelease(BaseModel):
    """Let a paused batch go on (signal ``release_batch``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    batch: int


class DriverWait(BaseModel):
    """Permission requests the driver chose to leave unanswered (they time out)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    ignored_permissions: list[str] = Field(default_factory=list)


class PauseInfo(BaseModel):
    """What a scenario driver must act on next (update ``wait_for_driver``)."""

    model_config = ConfigDict(frozen=True)
    paused_batch: int | None = None
    pending_permissions: list[PermissionRequest] = Field(default_factory=list)
    finished: bool = False


class ScenarioDriverHooks:
    """Mixin of ``PromptWorkflow``: the paused batch and the batches released so far."""

    # Kept by the rest of the workflow: the open permission requests, and why the prompt
    # ended (None while it runs).
    _pending_permissions: dict[str, PermissionRequest]
    _stop_reason: StopReason | None

    def __init__(self) -> None:
        super().__init__()
        self._paused_batch: int | None = None
        self._released: set[int] = set()

    @workflow.signal
    def release_batch(self, release: BatchRelease) -> None:
        self._released.add(release.batch)
        if self._paused_batch == release.batch:
            self._paused_batch = None

    @workflow.update
    async def wait_for_driver(self, wait: DriverWait) -> PauseInfo:
        """Return once a scenario driver has something to do: a paused batch, a permission
        request it has not chosen to ignore, or the end of the prompt."""
        ignored = set(wait.ignored_permissions)

        def actionable() -> list[PermissionRequest]:
            return [r for r in self._pending_permissions.values() if r.request_id not in ignored]

        await workflow.wait_condition(
            lambda: (
                self._paused_batch is not None
                or bool(actionable())
                or self._stop_reason is not None
            )
        )
        return PauseInfo(
            paused_batch=self._paused_batch,
            pending_permissions=actionable(),
            finished=self._stop_reason is not None,
        )

    async def _pause_for_driver(self, batch: int, settling: Sequence[asyncio.Task[Any]]) -> None:
        """Pause once every call that can settle on its own has settled, so the driver's
        event lands at the same point of the batch on every run; go on once released."""
        try:
            await workflow.wait_condition(lambda: all(task.done() for task in settling))
            self._paused_batch = batch
            await workflow.wait_condition(lambda: batch in self._released)
        finally:
            self._paused_batch = None
