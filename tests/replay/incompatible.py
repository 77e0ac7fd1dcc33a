"""An incompatible change to PromptWorkflow, for the replay test to catch.

Kept in its own module with workflow-safe imports only: the sandbox re-imports the module
that defines a workflow, and the test module imports the whole worker.
"""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from workflows.contracts.activity import LIST_TOOLS, ListToolsInput, ListToolsOutput
    from workflows.contracts.prompt import PromptInput, PromptResult
    from workflows.prompt.activity_options import QUICK_ACTIVITY
    from workflows.prompt.workflow import PromptWorkflow


@workflow.defn(name="PromptWorkflow")
class ReorderedPromptWorkflow(PromptWorkflow):
    """An extra activity before the recorded ones: the commands no longer match history."""

    @workflow.run
    async def run(self, prompt: PromptInput) -> PromptResult:
        await workflow.execute_activity(
            LIST_TOOLS,
            ListToolsInput(),
            result_type=ListToolsOutput,
            start_to_close_timeout=QUICK_ACTIVITY,
        )
        return await super().run(prompt)
