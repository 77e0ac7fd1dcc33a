"""A model request that carries its conversation by reference: what is new since the request
before it, and a digest of the whole.

Why it exists: a model request used to carry its whole (context-budgeted) conversation, the
prompt's tool list and a scenario's script, so a prompt's history (and, past 64 KiB, the payload
store) grew with the square of its length: every message was recorded again by every later
request (issue 43; docs/durability.md, "Conversations stored once"). A request of a prompt started
after ``CONVERSATION_REFS_PATCH`` carries a :class:`ConversationRef` instead: the digest of the
request before it (``previous``), its view as ranges of that request's view (:class:`KeptMessages`)
and the messages new since, the tools and the script only when they changed, and the digest of
what it resolves to. Each message is then recorded once in the prompt's history, where the
request that first sent it keeps it; the chain is the workflow's own history, so anything that
can read the history (any worker, after any restart) can resolve any request.

A chain and not a list of digests: counted on the peers benchmark's prompts (four calls a
batch), a list of the view's message digests costs every request a digest per message, which
grows with the conversation (about 7 KB a request at 20 batches, 35 KB at 100); a chain costs
each request its new messages and a few ranges, whatever the conversation's length. The context
policy's elisions replace messages in place, so a view is ranges of the previous one around the
replaced messages, never a resend of what follows them.

Everything here is pure and deterministic (the workflow builds requests with it and the model
activity resolves them with it, ``activities/conversation_refs.py``): the same conversation
gives the same digests in both. A digest covers each message's canonical JSON, the tools and the
script, so a view rebuilt from anything lost or altered fails its check instead of reaching the
model.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from workflows.contracts.conversation import Message, Role, result_message

# The model activity's failure when a request's conversation cannot be resolved (its previous
# request is not in the prompt's history, a stored part of it is lost, or what it resolves to
# does not match its digest): never retried, the prompt ends with ``error`` and says why.
CONVERSATION_UNRESOLVED = "ConversationUnresolved"


class KeptMessages(BaseModel):
    """Messages ``start`` to ``stop`` (exclusive) of the previous request's view, in order."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    start: int = Field(ge=0)
    stop: int = Field(ge=0)


class KeptReply(BaseModel):
    """The previous request's reply, as the assistant message the workflow made of it
    (``assistant_message``): recorded already as that request's result."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # On the wire, which leaves out defaults (workflows/contracts/wire.py), this part is
    # ``{}``: the only part without a required field, so still told from the others.
    reply: Literal[True] = True


class KeptResult(BaseModel):
    """The tool message of call ``result_of``, exactly the content of that call's
    ``seawall.run_tool`` result, which the prompt's history records already (since
    ``RESULTS_BY_REFERENCE_PATCH``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    result_of: str


# What a request's parts may be, in order.
Part = KeptMessages | KeptReply | KeptResult | Message


class ConversationRef(BaseModel):
    """How a request's conversation, tools and script are carried (the module docstring).

    ``previous`` is None in a prompt's first request (every message of its view in ``parts``);
    then the request's ``tools`` and ``scenario_script`` are its own. Otherwise ``tools_kept``
    and ``script_kept`` say they are the previous request's (the request then carries none).
    Since ``INPUTS_BY_REFERENCE_PATCH`` a request whose tools or script are not kept names them
    instead of carrying them: ``tools_listed``, the tools the prompt listed at its start;
    ``script_in_start``, the script of the prompt's start input (``activities/
    prompt_preamble.py`` reads both from the prompt's history); and a first request
    (``from_start``) keeps ranges of the conversation the prompt started with (its start input's
    history and text, ``PromptInput.start_messages``) instead of carrying them again; a later
    one keeps the reply to the request before (:class:`KeptReply`), which that request's result
    records. Since ``RESULTS_BY_REFERENCE_PATCH`` a tool message that is exactly its call's
    recorded result is kept by the call's id (:class:`KeptResult`).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    previous: str | None = None
    parts: list[Part] = Field(default_factory=list)
    tools_kept: bool = False
    script_kept: bool = False
    tools_listed: bool = False
    script_in_start: bool = False
    from_start: bool = False
    digest: str


def message_digest(message: Message) -> str:
    """The digest of one message: its canonical JSON (sorted keys, no spaces)."""
    canonical = json.dumps(
        message.model_dump(mode="json"), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def part_digest(value: BaseModel | Sequence[BaseModel] | None) -> str:
    """The digest of a request's tools (a list) or script (a model or None)."""
    if value is None:
        dumped: object = None
    elif isinstance(value, BaseModel):
        dumped = value.model_dump(mode="json")
    else:
        dumped = [v.model_dump(mode="json") for v in value]
    canonical = json.dumps(dumped, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def request_digest(message_digests: Sequence[str], tools: str, script: str) -> str:
    """The digest of a resolved request: its messages' digests in order, its tools' and its
    script's."""
    joined = "\n".join(["seawall-request-v1", tools, script, *message_digests])
    return hashlib.sha256(joined.encode("ascii")).hexdigest()


@dataclass(frozen=True)
class Carried:
    """A request as resolved: the view, its messages' digests, and the tools and script with
    their digests; ``digest`` is what the next request names as its ``previous``."""

    messages: list[Message]
    message_digests: list[str]
    tools: tuple[BaseModel, ...]
    tools_digest: str
    script: BaseModel | None
    script_digest: str
    digest: str
    # The reply to this request as an assistant message, once known (for a KeptReply).
    reply: Message | None = None


def results_named(ref: ConversationRef) -> list[str]:
    """The calls whose recorded results ``ref`` keeps, in order."""
    return [part.result_of for part in ref.parts if isinstance(part, KeptResult)]


def parts_between(
    previous: Carried | None,
    digests: Sequence[str],
    view: Sequence[Message],
    recorded: Mapping[str, str] | None = None,
) -> list[Part]:
    """``view`` (whose messages' digests are ``digests``) as ranges of ``previous``'s view and
    the messages it does not hold: runs of consecutive messages found in order become one
    range; a message found nowhere is kept by reference when it is the reply to ``previous``
    or exactly the tool message of its call's recorded result (``recorded``: call id →
    content; :func:`result_message`), else carried whole."""
    recorded = recorded or {}

    def new(message: Message, digest: str) -> Part:
        call = message.tool_call_id
        if (
            message.role is Role.TOOL
            and call is not None
            and not message.tool_calls
            and recorded.get(call) == message.content
        ):
            return KeptResult(result_of=call)
        return message

    if previous is None:
        return [new(m, d) for m, d in zip(view, digests, strict=True)]
    reply = message_digest(previous.reply) if previous.reply is not None else None
    where: dict[str, int] = {}
    for index, digest in enumerate(previous.message_digests):
        where.setdefault(digest, index)
    parts: list[Part] = []
    run_start = run_stop = -1
    for message, digest in zip(view, digests, strict=True):
        kept = previous.message_digests
        if 0 <= run_stop < len(kept) and kept[run_stop] == digest:
            run_stop += 1
            continue
        if run_stop >= 0:
            parts.append(KeptMessages(start=run_start, stop=run_stop))
            run_start = run_stop = -1
        found = where.get(digest)
        if found is None:
            parts.append(KeptReply() if digest == reply else new(message, digest))
        else:
            run_start, run_stop = found, found + 1
    if run_stop >= 0:
        parts.append(KeptMessages(start=run_start, stop=run_stop))
    return parts


class Unresolvable(ValueError):
    """A reference that does not resolve against the request it names (the reason says how)."""


def resolve_parts(
    previous: Carried | None, parts: Sequence[Part], results: Mapping[str, str] | None = None
) -> tuple[list[Message], list[str]]:
    """The view ``parts`` stand for, and its messages' digests (recomputed for carried ones);
    ``results`` holds the recorded result content of each call a :class:`KeptResult` names."""
    messages: list[Message] = []
    digests: list[str] = []
    for part in parts:
        if isinstance(part, KeptResult):
            content = (results or {}).get(part.result_of)
            if content is None:
                raise Unresolvable(f"it keeps the result of call {part.result_of}, not recorded")
            message = result_message(part.result_of, content)
            messages.append(message)
            digests.append(message_digest(message))
        elif isinstance(part, KeptReply):
            if previous is None or previous.reply is None:
                raise Unresolvable("it keeps the reply to the request before, which is not known")
            messages.append(previous.reply)
            digests.append(message_digest(previous.reply))
        elif isinstance(part, KeptMessages):
            if previous is None:
                raise Unresolvable("it keeps messages but names no previous request")
            if not part.start < part.stop <= len(previous.messages):
                raise Unresolvable(
                    f"it keeps messages {part.start}..{part.stop} of a view of "
                    f"{len(previous.messages)}"
                )
            messages.extend(previous.messages[part.start : part.stop])
            digests.extend(previous.message_digests[part.start : part.stop])
        else:
            messages.append(part)
            digests.append(message_digest(part))
    return messages, digests


def resolve(
    previous: Carried | None,
    ref: ConversationRef,
    tools: Sequence[BaseModel],
    script: BaseModel | None,
    start: Carried | None = None,
    results: Mapping[str, str] | None = None,
) -> Carried:
    """The request ``ref`` (with the ``tools`` and ``script`` its request carries) stands for,
    on top of ``previous`` (the request it names; None for a first request) or, for a first
    request ``from_start``, of ``start`` (the prompt's start conversation, :func:`started`);
    ``results``: the recorded results (call id → content) its :class:`KeptResult` parts name.
    Raises :class:`Unresolvable` when it does not resolve or its digest does not match."""
    if ref.previous is None:
        if ref.tools_kept or ref.script_kept:
            raise Unresolvable("it keeps tools or a script but names no previous request")
        base = None
    elif previous is None or previous.digest != ref.previous:
        raise Unresolvable("the request it builds on is not the one given")
    else:
        base = previous
    kept_from = base
    if ref.from_start:
        if base is not None or start is None:
            raise Unresolvable("it keeps messages of the prompt's start, which are not given")
        kept_from = start
    messages, digests = resolve_parts(kept_from, ref.parts, results)
    if ref.tools_kept and base is not None:
        kept_tools, tools_digest = base.tools, base.tools_digest
    else:
        kept_tools, tools_digest = tuple(tools), part_digest(list(tools))
    if ref.script_kept and base is not None:
        kept_script, script_digest = base.script, base.script_digest
    else:
        kept_script, script_digest = script, part_digest(script)
    digest = request_digest(digests, tools_digest, script_digest)
    if digest != ref.digest:
        raise Unresolvable(
            "what it resolves to does not match its digest (a part of it is lost or altered)"
        )
    return Carried(messages, digests, kept_tools, tools_digest, kept_script, script_digest, digest)


def started(messages: Sequence[Message]) -> Carried:
    """The conversation a prompt started with, as a first request ``from_start`` keeps ranges
    of (no tools, script or digest of its own: it is never a request)."""
    return Carried(list(messages), [message_digest(m) for m in messages], (), "", None, "", "")


def with_reply(carried: Carried, reply: Message) -> Carried:
    """``carried`` with the reply its request got (what the next request may keep)."""
    return replace(carried, reply=reply)
