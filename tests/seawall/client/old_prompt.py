"""A prompt workflow as a worker deployed before ``events_page`` serves it: only the
``events`` query (for the follower's fallback test)."""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from workflows.contracts.prompt import AgentEvent, EventKind, EventsQuery

OLD_EVENTS = [
    AgentEvent(seq=1, kind=EventKind.AGENT_MESSAGE, text="from an older worker"),
    AgentEvent(seq=2, kind=EventKind.PROMPT_FINISHED, status="end_turn"),
]


@workflow.defn(name="OldPromptWorkflow")
class OldPromptWorkflow:
    def __init__(self) -> None:
        self._released = False

    @workflow.run
    async def run(self) -> None:
        await workflow.wait_condition(lambda: self._released)

    @workflow.signal
    def release(self) -> None:
        self._released = True

    @workflow.query
    def events(self, query: EventsQuery) -> list[AgentEvent]:
        return [event for event in OLD_EVENTS if event.seq > query.after]
