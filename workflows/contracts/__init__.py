"""Contracts: everything that crosses a boundary, as frozen pydantic models.

Why a package: what a workflow exchanges with its activities, its clients, its starter
and the Temporal UI is what recorded histories and running clients depend on, so it lives
apart from the code that decides (docs/architecture.md, "Versioning"). Nothing here holds
state or does I/O.

- ``outcome``: the tool-call outcome contract (two status axes, ``ToolErrorType``);
  ``synthetic_outcomes``: the outcomes the loop makes up for calls no tool answered;
- ``conversation``: the messages a prompt carries, and the context policy (``fit_context``);
- ``activity``: activity names and every activity's input and output;
- ``prompt``: the prompt workflow's input, result, signals, updates, queries and events;
  ``prompt_options``: ``PromptOptions``, the defaults and ``ApprovalMode``;
- ``session``: the session workflow's input, updates and queries;
- ``scenario``: the scenario channel (model scripts, fixture tools, batch pauses);
- ``owner_admission``: the owner admission workflow's state, update and signal;
- ``grant`` and ``start_claims``: the signed session grant and the start claims a worker
  checks (docs/security-trust.md);
- ``search_attributes``: the custom search attributes.

Exported here: the outcome contract and the conversation's messages, which every layer
reads; import anything else from the module that holds it.
"""

from __future__ import annotations

from workflows.contracts.conversation import Message, Role
from workflows.contracts.outcome import (
    ExecutionStatus,
    TerminalStatus,
    ToolCall,
    ToolErrorType,
    ToolOutcome,
)

__all__ = [
    "ExecutionStatus",
    "Message",
    "Role",
    "TerminalStatus",
    "ToolCall",
    "ToolErrorType",
    "ToolOutcome",
]
