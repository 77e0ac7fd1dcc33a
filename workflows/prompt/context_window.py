"""The context policy's view of a prompt's conversation, kept between model requests.

Why it exists: :func:`workflows.contracts.conversation.fit_context` defines the view a model
request carries, and computes it from scratch: it counts every message and walks the
conversation from its start. Called before every request of a long prompt that is quadratic
in the conversation, and a replay pays it again for every request it rebuilds (40 % of
the workflow's time in a 50-batch prompt's replay, workflows/contracts/conversation.py). A prompt's
conversation only grows, and the policy elides the oldest outputs first, so the view for a longer
conversation is the view for the shorter one with the new messages appended and perhaps more outputs
elided after the last one elided. :class:`ContextWindow` keeps that view and extends it: each
request costs its new messages, not the conversation.

It returns exactly what ``fit_context`` returns for the same conversation and budget (the
same list object when nothing is elided, equal messages otherwise);
``tests/workflows/prompt/test_context_window.py`` checks it against ``fit_context`` request
by request on generated conversations. The rare second step of the policy (leaving out whole
earlier prompts once every output is elided) is fit_context's own, on the kept view.
"""

from __future__ import annotations

from dataclasses import dataclass

from workflows.contracts.conversation import (
    ELIDED_PREFIX,
    Message,
    Role,
    conversation_chars,
    earlier_prompts_left_out,
    elided,
    elided_outputs,
)


@dataclass(frozen=True)
class FittedView:
    """One request's view and what the policy did to make it."""

    messages: list[Message]
    fitted: bool  # whether the view differs from the conversation (the telemetry's cue)
    sent_chars: int
    elided_outputs: int  # outputs the policy replaced in this view (not those already so)


class ContextWindow:
    """The view of one append-only conversation within ``budget`` characters."""

    def __init__(self, budget: int) -> None:
        self._budget = budget
        self._counted = 0  # messages of the conversation counted so far
        self._conversation_chars = 0  # their characters, as the conversation has them
        self._view_chars = 0  # and as the view has them
        self._view: list[Message] | None = None  # None until an output is elided
        self._next = 0  # the first message the policy's first step has not passed yet
        self._elided = 0  # outputs the view replaced

    def fit(self, messages: list[Message]) -> FittedView:
        """The view of ``messages``: the conversation this window saw before, grown."""
        if len(messages) < self._counted:
            raise ValueError("a prompt's conversation only grows")
        new = messages[self._counted :]
        self._counted = len(messages)
        added = conversation_chars(new)
        self._conversation_chars += added
        self._view_chars += added
        if self._view is not None:
            self._view.extend(new)
        if self._conversation_chars <= self._budget:
            # Within the budget from the start: the conversation itself, as fit_context.
            return FittedView(messages, False, self._conversation_chars, 0)
        if self._view is None:
            self._view = list(messages)
        view = self._view
        # Step 1, resumed where it stopped: the oldest outputs not yet passed, oldest first.
        while self._next < len(view) and self._view_chars > self._budget:
            message = view[self._next]
            if message.role is Role.TOOL and not message.content.startswith(ELIDED_PREFIX):
                marker = elided(message)
                saved = len(message.content) - len(marker.content)
                if saved > 0:
                    view[self._next] = marker
                    self._view_chars -= saved
                    self._elided += 1
            self._next += 1
        if self._view_chars <= self._budget:
            return FittedView(list(view), True, self._view_chars, self._elided)
        return self._cut(messages, view)

    def _cut(self, messages: list[Message], view: list[Message]) -> FittedView:
        """Step 2: every output elided and still too long; fit_context's own second step on
        the kept view (a copy of it when nothing is cut: the view is this window's state)."""
        cut = earlier_prompts_left_out(view, self._view_chars, self._budget)
        if cut is view:
            cut = list(view)
        return FittedView(
            cut,
            True,
            conversation_chars(cut),
            elided_outputs(cut) - elided_outputs(messages),
        )
