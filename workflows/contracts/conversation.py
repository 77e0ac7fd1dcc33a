"""The conversation a prompt carries between model requests, and the context policy.

One model for every message role keeps the history a flat, ordered list that providers can
translate to their wire format and that ``PromptResult`` returns as is. The durable
conversation is always whole; :func:`fit_context` is the one place that decides what of it a
model request (or a session's next prompt) sees when it outgrows the context budget.

Why a budget and not a size stop: what bounds a model request is the model's context window,
and a prompt used to stop at 1,000,000 characters only because Temporal refuses payloads past
2 MB, which External Storage now handles (``seawall.runtime.storage``). The budget is the
prompt's ``context_budget_chars`` or, unset, the operator's (docs/settings.md; default
400,000 characters, about 100k tokens), resolved once per session and handed to each prompt,
so it is in history and replays unchanged. The policy is deterministic: the same conversation
and budget give the same view on every replay, and a view already elided is its own fit. The
durable conversation stays whole (history keeps every tool result, ``PromptResult.messages``
returns them all); when it cuts, the workflow logs one ``context_fitted`` line (request
number, message counts, characters sent; never content). A session hands each new prompt
``fit_context`` of its conversation as its history, so a session's prompts start within the
budget too. Prompts from before ``CONTEXT_POLICY_PATCH`` replay with the old size stop.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from workflows.contracts.outcome import ToolCall, ToolOutcome

MID_TURN_INPUT_PREFIX = "[User message received during tool execution]: "


class Role(StrEnum):
    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


class Message(BaseModel):
    model_config = ConfigDict(frozen=True)

    role: Role
    content: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None


def user_message(text: str) -> Message:
    return Message(role=Role.USER, content=text)


def assistant_message(text: str, tool_calls: list[ToolCall]) -> Message:
    """A model's reply (its text and calls) as the conversation records it."""
    return Message(role=Role.ASSISTANT, content=text, tool_calls=tool_calls)


def system_message(text: str) -> Message:
    return Message(role=Role.SYSTEM, content=text)


def mid_turn_message(text: str) -> Message:
    return Message(role=Role.USER, content=MID_TURN_INPUT_PREFIX + text)


def tool_message(outcome: ToolOutcome) -> Message:
    """A settled call's result as the model reads it."""
    return result_message(outcome.call_id, outcome.content)


def result_message(call_id: str, content: str) -> Message:
    """The tool message of call ``call_id`` whose result's content is ``content``: what a
    request that keeps the result by the call's id stands for (``conversation_ref.KeptResult``)."""
    return Message(role=Role.TOOL, tool_call_id=call_id, content=content)


# Prompts started before the context policy (the module docstring)
# ended with ``error`` once their conversation passed this many characters; they still do on
# replay, so their histories stay valid. Nothing newer stops on size.
MAX_CONVERSATION_CHARS = 1_000_000

# The default context budget of a prompt, in characters of the conversation a model request
# carries (about 100k tokens at four characters a token: within the window of current
# models, leaving room for the system prompt, the tool list and the reply).
DEFAULT_CONTEXT_BUDGET_CHARS = 400_000
# The smallest budget a prompt may set: below it a single ordinary tool result would not fit.
MIN_CONTEXT_BUDGET_CHARS = 10_000

ELIDED_TOOL_OUTPUT = "[tool output elided to fit the context budget: {chars} characters]"
ELIDED_PREFIX = "[tool output elided to fit the context budget"


def conversation_chars(messages: list[Message]) -> int:
    return sum(message_chars(m) for m in messages)


def message_chars(message: Message) -> int:
    return len(message.content) + sum(
        len(c.name) + len(c.raw_arguments or "{}") for c in message.tool_calls
    )


def elided(message: Message) -> Message:
    """A tool message with its output replaced by the marker that says how much was left out."""
    return message.model_copy(
        update={"content": ELIDED_TOOL_OUTPUT.format(chars=len(message.content))}
    )


def elided_outputs(messages: list[Message]) -> int:
    """How many tool outputs of ``messages`` the context policy replaced by its marker."""
    return sum(1 for m in messages if m.role is Role.TOOL and m.content.startswith(ELIDED_PREFIX))


def is_prompt_start(message: Message) -> bool:
    """A user prompt (not mid-turn input): the only place a conversation may be cut."""
    return message.role is Role.USER and not message.content.startswith(MID_TURN_INPUT_PREFIX)


def fit_context(messages: list[Message], budget: int) -> list[Message]:
    """The view of ``messages`` a model request carries: within ``budget`` characters when
    the policy can make it so, and ``messages`` itself when it already fits.

    Deterministic and pure (the module docstring says why):

    1. the oldest tool outputs are replaced, oldest first, by a marker naming their size
       (every call keeps its result message, so no provider sees a call without one), until
       the view fits;
    2. if it still does not fit, the oldest whole earlier prompts are left out (cut only where
       a user prompt starts), never the newest one.

    What is left may still exceed the budget (a huge user prompt, say); the model endpoint is
    then the judge, and its refusal ends the prompt with ``error`` and its message.
    """
    total = conversation_chars(messages)
    if total <= budget:
        return messages
    view = list(messages)
    for index, message in enumerate(view):
        if total <= budget:
            return view
        if message.role is not Role.TOOL or message.content.startswith(ELIDED_PREFIX):
            continue
        marker = elided(message)
        saved = len(message.content) - len(marker.content)
        if saved > 0:
            view[index] = marker
            total -= saved
    if total <= budget:
        return view
    return earlier_prompts_left_out(view, total, budget)


def earlier_prompts_left_out(view: list[Message], total: int, budget: int) -> list[Message]:
    """The policy's second step: ``view`` (``total`` characters, every output already
    elided) without its oldest whole earlier prompts, cut only where a user prompt starts,
    as few as fit ``budget``; never the newest prompt (``view`` itself when it has none)."""
    starts = [i for i, m in enumerate(view) if is_prompt_start(m)]
    for start in starts[1:]:
        if total - conversation_chars(view[:start]) <= budget:
            return view[start:]
    return view[starts[-1] :] if starts else view


def recent_history(messages: list[Message], budget: int) -> list[Message]:
    """The newest whole prompts of a conversation that fit in ``budget`` characters: it is
    cut only where a user prompt starts, so no tool result loses its call. (How sessions
    handed history to prompts started before the context policy; replay keeps it.)"""
    kept: list[Message] = []
    size = 0
    pending: list[Message] = []
    for message in reversed(messages):
        pending.append(message)
        if is_prompt_start(message):
            chunk = conversation_chars(pending)
            if size + chunk > budget:
                break
            kept = list(reversed(pending)) + kept
            size += chunk
            pending = []
    return kept
