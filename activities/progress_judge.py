"""The progress judge's request: what the operator's model is asked, and how its reply is read.

docs/protections.md, "The progress judge". The workflow hands the ``seawall.judge_progress``
activity (``ModelActivities.judge_progress``) the user's prompt and the masked excerpts of a
stale stretch (``JudgeProgressInput``); this module turns them into a two-message
conversation under a fixed system instruction, and reads the reply strictly: the first line
must be exactly ``PROGRESS`` or ``NO_PROGRESS``, anything else is ``unknown`` (which never
reminds). The reason (the rest of the reply, one line, at most
:data:`~workflows.contracts.activity.JUDGE_REASON_CHARS`) goes back into history only; nothing
here logs it.

A scenario's script answers instead of any provider (:func:`scripted_judgement`): its
``judge`` verdicts in order, ``unknown`` past their end, with estimated tokens, exactly as the
benchmark simulator reads them (:func:`scripted_verdict`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from workflows.contracts import Message, Role
from workflows.contracts.activity import (
    JUDGE_REASON_CHARS,
    CallModelInput,
    JudgeProgressInput,
    JudgeProgressOutput,
    JudgeVerdict,
    ModelReply,
    ModelUsage,
)

JUDGE_INSTRUCTION = (
    "You are a progress judge for a coding agent. You are shown the user's request and the "
    "agent's last steps: for each tool call, the tool's name, how it ended and the start of "
    "its result, with volatile parts such as times, ids and the call's own arguments masked. "
    "Decide whether the agent is making progress toward the request, or keeps repeating "
    "steps that cannot tell it anything new (waiting on a condition that can never change "
    "counts as no progress; waiting on something that is still moving does not). Answer "
    "exactly PROGRESS or NO_PROGRESS on the first line, then one short reason on the second "
    "line."
)
_ANSWERS = {"PROGRESS": JudgeVerdict.PROGRESS, "NO_PROGRESS": JudgeVerdict.NO_PROGRESS}
SCRIPTED_REASON = "scripted"


def judge_question(request: JudgeProgressInput) -> str:
    """The user message the judge reads: the request, then each batch's calls."""
    lines = ["The user's request:", request.user_prompt or "(empty)", ""]
    lines.append("The agent's last steps, oldest first:")
    for batch in request.batches:
        lines.append(f"Step {batch.batch}:")
        for call in batch.calls:
            lines.append(f"- {call.tool} [{call.status}]: {call.excerpt or '(no output)'}")
    lines += ["", "Is the agent making progress? PROGRESS or NO_PROGRESS, then one reason."]
    return "\n".join(lines)


def judge_request(request: JudgeProgressInput) -> CallModelInput:
    """The model request that asks the judge: no tools, the fixed instruction first."""
    return CallModelInput(
        model=request.model,
        messages=[
            Message(role=Role.SYSTEM, content=JUDGE_INSTRUCTION),
            Message(role=Role.USER, content=judge_question(request)),
        ],
        request_number=request.ask,
    )


def is_judge_request(request: CallModelInput) -> bool:
    """Whether a model request is the judge's (the demo model answers it with nothing)."""
    first = request.messages[0] if request.messages else None
    return first is not None and first.role is Role.SYSTEM and first.content == JUDGE_INSTRUCTION


def parse_judgement(text: str) -> tuple[JudgeVerdict, str]:
    """The verdict of a reply and its reason; ``unknown`` unless the first line is exactly
    ``PROGRESS`` or ``NO_PROGRESS``."""
    first, _, rest = text.strip().partition("\n")
    verdict = _ANSWERS.get(first.strip(), JudgeVerdict.UNKNOWN)
    if verdict is JudgeVerdict.UNKNOWN:
        return verdict, ""
    reason = " ".join(rest.split())
    return verdict, reason[:JUDGE_REASON_CHARS]


def judgement(reply: ModelReply) -> JudgeProgressOutput:
    """A provider's reply as the judge's output (a reply that calls tools is ``unknown``)."""
    verdict, reason = (
        parse_judgement(reply.text) if not reply.tool_calls else (JudgeVerdict.UNKNOWN, "")
    )
    return JudgeProgressOutput(verdict=verdict, reason=reason, usage=reply.usage)


def scripted_verdict(verdicts: Sequence[str], ask: int) -> JudgeVerdict:
    """A script's answer to question number ``ask`` (from 1): its verdicts in order,
    ``unknown`` past their end."""
    return JudgeVerdict(verdicts[ask - 1]) if 0 < ask <= len(verdicts) else JudgeVerdict.UNKNOWN


def scripted_judgement(
    request: JudgeProgressInput, estimate_tokens: Callable[[str], int]
) -> JudgeProgressOutput:
    """The scripted judge: the script's verdict, no network; tokens estimated (as the
    scripted model estimates its own, ``activities.model.estimate_tokens``) from the
    question it would have asked and the answer it gives."""
    verdict = scripted_verdict(request.scenario_verdicts or [], request.ask)
    answers = {answer: word for word, answer in _ANSWERS.items()}
    text = answers.get(verdict, "")
    asked = JUDGE_INSTRUCTION + judge_question(request)
    return JudgeProgressOutput(
        verdict=verdict,
        reason=SCRIPTED_REASON if text else "",
        usage=ModelUsage(input_tokens=estimate_tokens(asked), output_tokens=estimate_tokens(text)),
    )
