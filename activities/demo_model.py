"""The offline demo model: the full gateway → session → prompt → tools path with no endpoint.

``make run`` uses it when no model endpoint is configured. It is deterministic and reads only
the conversation, like the scripted provider. A prompt that mentions "loop" shows the guard
at work: the model keeps reading files that do not exist; once reminded it changes approach,
unless the prompt also says "stubborn", in which case it repeats the failure and (in
``enforce``) is stopped. A prompt that mentions "note" writes it to ``NOTES.md``: a call
that changes the workspace, so in the default approval mode it asks the user first.

Its text streams like a real model's: word by word, :data:`WORD_SECONDS` apart, so the demo
shows live text in every client. Only the pace is timed; the words are fixed by the
conversation, so a retried request streams the same text again.
"""

from __future__ import annotations

import asyncio
import re

from activities.model_stream import TextSink
from activities.progress_judge import is_judge_request
from workflows.contracts import ToolCall
from workflows.contracts.activity import CallModelInput, ModelReply
from workflows.contracts.conversation import MID_TURN_INPUT_PREFIX, Message, Role
from workflows.seed.guard import REPEATED_TOOL_FAILURE_REMINDER

MISSING_PER_BATCH = 4
NOTES_FILE = "NOTES.md"
WORD_SECONDS = 0.04


def _current_prompt(messages: list[Message]) -> tuple[str, list[Message]]:
    """The latest user prompt and the messages this prompt has added since."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.role is Role.USER and not message.content.startswith(MID_TURN_INPUT_PREFIX):
            return message.content, messages[index + 1 :]
    return "", messages


class DemoProvider:
    """The demo model; ``word_seconds`` is the pause between streamed words."""

    def __init__(self, word_seconds: float = WORD_SECONDS) -> None:
        self._word_seconds = word_seconds

    async def complete(
        self, request: CallModelInput, on_text: TextSink | None = None
    ) -> ModelReply:
        reply = self._reply(request)
        if on_text is not None:
            await self._stream(reply.text, on_text)
        return reply

    async def _stream(self, text: str, on_text: TextSink) -> None:
        """Hand ``text`` to ``on_text`` a word (with its following space) at a time."""
        for index, word in enumerate(re.findall(r"\S+\s*", text)):
            if index and self._word_seconds > 0:
                await asyncio.sleep(self._word_seconds)
            on_text(word)

    def _reply(self, request: CallModelInput) -> ModelReply:
        if is_judge_request(request):
            # The demo model cannot judge progress: its empty reply reads as ``unknown``.
            return ModelReply()
        prompt, since = _current_prompt(request.messages)
        replies = sum(1 for m in since if m.role is Role.ASSISTANT)
        reminded = any(m.content == REPEATED_TOOL_FAILURE_REMINDER for m in since)
        lowered = prompt.lower()
        number = request.request_number

        if "loop" in lowered and (not reminded or "stubborn" in lowered):
            calls = [
                ToolCall(
                    call_id=f"demo_{number}_{i}",
                    name="read_file",
                    arguments={"path": f"missing-{replies}-{i}.txt"},
                )
                for i in range(MISSING_PER_BATCH)
            ]
            return ModelReply(text="Looking for the file…", tool_calls=calls)
        if "note" in lowered:
            if replies == 0:
                call = ToolCall(
                    call_id=f"demo_{number}_0",
                    name="write_file",
                    arguments={"path": NOTES_FILE, "content": prompt + "\n"},
                )
                return ModelReply(text=f"I will write the note to {NOTES_FILE}.", tool_calls=[call])
            wrote = any(m.role is Role.TOOL and m.content.startswith("Wrote ") for m in since)
            return ModelReply(
                text=f"Demo model: wrote {NOTES_FILE}."
                if wrote
                else f"Demo model: {NOTES_FILE} was not written."
            )
        if replies == 0 or (reminded and since[-1].role is Role.SYSTEM):
            call = ToolCall(call_id=f"demo_{number}_0", name="list_directory", arguments={})
            return ModelReply(text="Let me look at the workspace.", tool_calls=[call])
        listing = next((m.content for m in reversed(since) if m.role is Role.TOOL), "")
        entries = [
            line for line in listing.splitlines() if line.strip() and not line.startswith("(")
        ]
        return ModelReply(
            text=f"Demo model: the workspace lists {len(entries)} entries. "
            "Configure a model endpoint for real answers."
        )
