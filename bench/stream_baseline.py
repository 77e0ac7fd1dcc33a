"""The alternative ``bench/streaming.py`` measures Seawall's event follower against:
``PromptWorkflow`` with a ``temporalio.contrib.workflow_streams`` stream.

Exactly Seawall's prompt loop, plus a ``WorkflowStream`` constructed in ``@workflow.init``
and every agent event also published to its ``events`` topic, so a client can subscribe with
``WorkflowStreamClient.subscribe`` (long-poll Updates) instead of following the ``events``
query. A benchmark baseline only: it runs on Seawall's converter and sandbox through the
plugin's ``workflows`` argument and is never registered by a Seawall worker.
"""

from __future__ import annotations

from typing import Any

from temporalio import workflow
from temporalio.contrib.workflow_streams import WorkflowStream, WorkflowTopicHandle

with workflow.unsafe.imports_passed_through():
    from workflows.contracts.prompt import AgentEvent, EventKind, PromptInput, PromptResult
    from workflows.prompt.events import EventLog
    from workflows.prompt.workflow import PromptWorkflow

EVENTS_TOPIC = "events"


class PublishingEventLog(EventLog):
    """The prompt's event log, also appending each event to the workflow stream."""

    def __init__(self, topic: WorkflowTopicHandle[AgentEvent]) -> None:
        super().__init__()
        self._topic = topic

    def emit(self, kind: EventKind, **fields: Any) -> AgentEvent:
        event = super().emit(kind, **fields)
        self._topic.publish(event)
        return event


@workflow.defn(name="StreamedPromptWorkflow")
class StreamedPromptWorkflow(PromptWorkflow):
    """``PromptWorkflow`` whose events are also served by a workflow stream."""

    @workflow.init
    def __init__(self, prompt: PromptInput) -> None:
        super().__init__(prompt)
        self._stream = WorkflowStream()
        self._log = PublishingEventLog(self._stream.topic(EVENTS_TOPIC, type=AgentEvent))

    @workflow.run
    async def run(self, prompt: PromptInput) -> PromptResult:
        return await super().run(prompt)
