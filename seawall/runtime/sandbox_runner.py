"""The workflow sandbox, without a sandbox entry for every payload the worker converts.

Why this exists: before the worker decodes a workflow activation and after it encodes the
completion, the SDK asks the workflow instance, for each payload sequence and for each of
its three decode or four encode passes, which serialization and storage context applies
(the workflow's own, or that of the activity, child workflow or signal the payload
belongs to). ``SandboxedWorkflowRunner`` answers each question by executing a line of
source inside the sandbox, with the sandbox's importer applied. A Seawall prompt of 5
batches meets about 250 of these entries; a replay of a 12,000-event history about
25,000, which a profile put at three quarters of the replay's CPU (docs/capacity.md,
"Replay").

The answer does not need the sandbox. It is plain data the workflow instance keeps (its
info and its pending commands), read by a method that imports nothing and runs no
workflow code. :class:`SeawallSandboxRunner` is the SDK's sandbox, unchanged for
activations, whose instances ask that method directly:

- inside the sandbox, the SDK builds the real workflow instance through ``runner_class``;
  ours, :class:`_HandingOverRunner`, is the SDK's ``UnsandboxedWorkflowRunner`` that also
  hands the instance it built to the sandbox's owner, through a callable in the instance
  details' ``extern_functions`` (the SDK's channel from a worker to its instances);
- outside, :class:`_Instance` answers the two context questions from that instance, and
  every other call through the sandbox as before.

When anything of this is missing (a runner built with another ``runner_class``, an
instance still being created) the question goes through the sandbox as the SDK asks it,
so the answers are the SDK's either way; ``tests/seawall/runtime/test_sandbox_runner.py``
checks that they are equal for every payload of real prompts.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

import temporalio.bridge.proto.workflow_activation
import temporalio.bridge.proto.workflow_completion
import temporalio.converter
import temporalio.workflow
from temporalio.worker import (
    UnsandboxedWorkflowRunner,
    WorkflowInstance,
    WorkflowInstanceDetails,
    WorkflowRunner,
)
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner

if TYPE_CHECKING:
    from temporalio.converter._extstore import StorageDriverStoreContext as StoreContext
    from temporalio.worker._command_aware_visitor import CommandInfo

# The key of the hand-over callable in ``WorkflowInstanceDetails.extern_functions``.
HAND_OVER = "__seawall_hand_over_instance"

ActivationType = temporalio.bridge.proto.workflow_activation.WorkflowActivation
CompletionType = temporalio.bridge.proto.workflow_completion.WorkflowActivationCompletion


class _HandingOverRunner(UnsandboxedWorkflowRunner):
    """Runs inside the sandbox: builds the instance as the SDK does, then hands it out.

    This module is a sandbox passthrough module (``seawall.runtime.plugin``), so the class
    the sandbox imports is this one, not a re-import per run."""

    def create_instance(self, det: WorkflowInstanceDetails) -> WorkflowInstance:
        instance = super().create_instance(det)
        hand_over = det.extern_functions.get(HAND_OVER)
        if hand_over is not None:
            hand_over(instance)
        return instance


@dataclass(frozen=True)
class SeawallSandboxRunner(SandboxedWorkflowRunner):
    """The SDK's workflow sandbox whose instances resolve payload contexts outside it."""

    runner_class: type[WorkflowRunner] = _HandingOverRunner

    def create_instance(self, det: WorkflowInstanceDetails) -> WorkflowInstance:
        handed: list[WorkflowInstance] = []
        externs = {**det.extern_functions, HAND_OVER: handed.append}
        sandboxed = super().create_instance(dataclasses.replace(det, extern_functions=externs))
        # pop, not [0]: the instance keeps the hand-over callable in its extern functions, so
        # a list still holding the instance would make a cycle only the garbage collector frees.
        return _Instance(sandboxed, handed.pop() if handed else None)


def seawall_sandbox(runner: SandboxedWorkflowRunner) -> SandboxedWorkflowRunner:
    """The SDK's own sandbox, ``runner``, as a :class:`SeawallSandboxRunner` with the same
    restrictions. Anything else is kept as it is: a subclass (its ``create_instance`` may do
    more than the SDK's) or a sandbox that
    builds its instances with another class than the SDK's."""
    if type(runner) is not SandboxedWorkflowRunner:
        return runner
    if runner.runner_class is not UnsandboxedWorkflowRunner:
        return runner
    return SeawallSandboxRunner(restrictions=runner.restrictions)


class _Instance(WorkflowInstance):
    """A sandboxed instance whose two context questions go to the instance it runs
    (``inner``), or through the sandbox when there is none."""

    def __init__(self, sandboxed: WorkflowInstance, inner: WorkflowInstance | None) -> None:
        self.sandboxed = sandboxed
        self.inner = inner

    def activate(self, act: ActivationType) -> CompletionType:
        return self.sandboxed.activate(act)

    def get_serialization_context(
        self, command_info: CommandInfo | None
    ) -> temporalio.converter.SerializationContext | None:
        return (self.inner or self.sandboxed).get_serialization_context(command_info)

    def get_external_store_context(self, command_info: CommandInfo | None) -> StoreContext:
        return (self.inner or self.sandboxed).get_external_store_context(command_info)

    def get_info(self) -> temporalio.workflow.Info:
        return self.sandboxed.get_info()

    def get_thread_id(self) -> int | None:
        return self.sandboxed.get_thread_id()
