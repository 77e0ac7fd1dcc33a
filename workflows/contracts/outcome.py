"""The tool-call outcome contract: what a settled tool call reports, on two status axes.

Every protection in Seawall reads this one contract, so it lives in one place. The terminal
``status`` (``success``, ``error``, ``cancelled``) is authoritative: it is what the model and
the user see. ``execution_status`` (``not_started``, ``success``, ``error``, ``cancelled``) is
frozen when the tool's execute step settles and says whether the tool actually ran;
validation failures, permission denials and refusals are ``not_started``.
``execution_error_type`` is the structured :class:`ToolErrorType` captured at execute-settle,
never inferred from text; ``error_type`` is the terminal one, which post-processing may
replace (``output_truncated``) while ``execution_error_type`` stays. ``error_message`` is for
the model only, never for telemetry.

The two axes tell apart "the tool ran and failed" (``error``/``error``), "the call never ran"
(``error``/``not_started``: invalid arguments, an unknown tool, a refusal), "it ran, then
post-processing failed" (``error``/``success``) and "the user cancelled" (``cancelled``/…: the
terminal status wins cancellation arbitration, so an execution error racing a cancellation
does not count). Only the first is a repeated-failure signal.

**Invalid pairs.** ``success``/``error`` and ``success``/``cancelled`` are contract violations
(:func:`is_contract_violation`): a call cannot succeed for the model while its execution
errored or was cancelled. The built-in and MCP runners never produce them; scenario fixtures
may, to test that the guard fails open (it resets with ``contract_violation`` and never
enforces again in that prompt).

**Where the axes are set.** The tool activity freezes the execution fields when the tool's
execute step settles, through the builders every tool runner shares
(``activities/outcomes.py``), so "frozen at execute-settle" is true in one place;
post-processing (spilling long output to a workspace file) runs afterwards and may change only
the terminal fields. The outcomes Seawall makes up itself come from
``workflows.contracts.synthetic_outcomes``.

Status fields are plain strings validated loosely on purpose: fixture tools and future
producers may report values this code has never seen, and the guard must fail open on them
(reset and disable enforcement) rather than crash. The enums below name the values this code
produces.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
from enum import StrEnum
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    StringConstraints,
    ValidationInfo,
    model_serializer,
    model_validator,
)

from workflows.contracts.wire import on_the_wire, with_twin, without_twin


class TerminalStatus(StrEnum):
    """How the call ended, as the model and the user see it."""

    SUCCESS = "success"
    ERROR = "error"
    CANCELLED = "cancelled"


class ExecutionStatus(StrEnum):
    """What the tool's execute step did, frozen when it settled."""

    NOT_STARTED = "not_started"
    SUCCESS = "success"
    ERROR = "error"
    CANCELLED = "cancelled"


class ToolType(StrEnum):
    NATIVE = "native"
    MCP = "mcp"


class ToolErrorType(StrEnum):
    """Structured failure classifications; never inferred from error text."""

    INVALID_TOOL_PARAMS = "invalid_tool_params"
    UNKNOWN = "unknown"
    UNHANDLED_EXCEPTION = "unhandled_exception"
    TOOL_NOT_REGISTERED = "tool_not_registered"
    EXECUTION_FAILED = "execution_failed"
    EXECUTION_DENIED = "execution_denied"
    FILE_NOT_FOUND = "file_not_found"
    FILE_WRITE_FAILURE = "file_write_failure"
    READ_CONTENT_FAILURE = "read_content_failure"
    ATTEMPT_TO_CREATE_EXISTING_FILE = "attempt_to_create_existing_file"
    FILE_TOO_LARGE = "file_too_large"
    PERMISSION_DENIED = "permission_denied"
    NO_SPACE_LEFT = "no_space_left"
    TARGET_IS_DIRECTORY = "target_is_directory"
    PATH_NOT_IN_WORKSPACE = "path_not_in_workspace"
    SEARCH_PATH_NOT_FOUND = "search_path_not_found"
    EDIT_NO_OCCURRENCE_FOUND = "edit_no_occurrence_found"
    EDIT_EXPECTED_OCCURRENCE_MISMATCH = "edit_expected_occurrence_mismatch"
    EDIT_NO_CHANGE = "edit_no_change"
    GLOB_EXECUTION_ERROR = "glob_execution_error"
    GREP_EXECUTION_ERROR = "grep_execution_error"
    LS_EXECUTION_ERROR = "ls_execution_error"
    MCP_TOOL_ERROR = "mcp_tool_error"
    SHELL_EXECUTE_ERROR = "shell_execute_error"
    EXECUTION_TIMEOUT = "execution_timeout"
    OUTPUT_TRUNCATED = "output_truncated"
    # The worker running the call was lost mid-run and the call was not run again: it may
    # have run partly or fully (activities/lost_calls.py).
    WORKER_LOST = "worker_lost"
    # An editor-side call (workflows/contracts/editor_calls.py) got no answer from the editor
    # in time, or the editor went away: whether it ran there is unknown.
    EDITOR_UNAVAILABLE = "editor_unavailable"
    # The sandbox stopped the command at one of its operator's limits: its tree's memory
    # limit, or its workspace's disk quota (activities/sandbox/, reported by the supervisor).
    OUT_OF_MEMORY = "out_of_memory"
    DISK_QUOTA_EXCEEDED = "disk_quota_exceeded"


# (terminal status, execution status) pairs that no honest producer can report: a call
# cannot succeed for the model while its execution errored or was cancelled.
INVALID_STATUS_PAIRS: frozenset[tuple[str, str]] = frozenset(
    {
        (TerminalStatus.SUCCESS, ExecutionStatus.ERROR),
        (TerminalStatus.SUCCESS, ExecutionStatus.CANCELLED),
    }
)


def is_contract_violation(status: str, execution_status: str | None) -> bool:
    """True for the two status pairs the contract forbids (``success/error``,
    ``success/cancelled``)."""
    return execution_status is not None and (status, execution_status) in INVALID_STATUS_PAIRS


class ToolCall(BaseModel):
    """One function call as the model sent it.

    ``arguments`` is ``None`` when the model's argument text was not a JSON object; the raw
    text is then kept in ``raw_arguments`` so the invalid-parameter path can explain it.
    """

    model_config = ConfigDict(frozen=True)

    call_id: str
    name: str
    arguments: dict[str, Any] | None = Field(default_factory=dict)
    raw_arguments: str | None = None

    # On the wire (workflows/contracts/wire.py) ``arguments`` is left out when it is exactly
    # what ``raw_arguments`` parses to, and parsed again when the payload is read.
    @model_serializer(mode="wrap")
    def _wire(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> Any:
        dumped = handler(self)
        if not on_the_wire(info) or self.raw_arguments is None:
            return dumped
        if _parsed(self.raw_arguments) == self.arguments:
            dumped.pop("arguments", None)
        elif "arguments" not in dumped:
            dumped["arguments"] = self.arguments
        return dumped

    @model_validator(mode="before")
    @classmethod
    def _arguments_from_raw(cls, data: Any, info: ValidationInfo) -> Any:
        if on_the_wire(info) and isinstance(data, dict) and "arguments" not in data:
            raw = data.get("raw_arguments")
            if isinstance(raw, str):
                return {**data, "arguments": _parsed(raw)}
        return data


def _parsed(raw: str) -> dict[str, Any] | None:
    """What ``raw`` parses to when it is a JSON object, else None (a marker that never equals
    a call's parsed arguments, which are a dict or None only with raw text kept)."""
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


class TextReading(BaseModel):
    """One text as the loop rules compare it (``workflows.rules.normalize.Reading``), as the
    tool activity that produced the text read it: digests and a count, never the text."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # A digest of the masked text (32 hex digits).
    key: str = Field(pattern=r"^[0-9a-f]{32}$")
    # The bottom-k sketch: its CRC-32 values, ascending, each 8 hex digits.
    sketch: str = Field(pattern=r"^(?:[0-9a-f]{8}){0,24}$")
    # Distinct words.
    size: int = Field(ge=0)
    # A digest of the numbers the mask kept (16 hex digits).
    quantities: str = Field(pattern=r"^[0-9a-f]{16}$")
    # An output's digest of its masked text without its numerals (32 hex digits): equal for
    # two answers that differ only in their numbers. None: a call's text, or read before it.
    shape: str | None = Field(default=None, pattern=r"^[0-9a-f]{32}$")


# A private digest of an id a text holds (12 hex digits).
IdDigest = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{12}$")]


class ExchangeReadings(BaseModel):
    """What a call asked and what came back, read where the call ran (``asked``: its tool
    and argument text; ``answer``: its output or error text), so the workflow task does not
    read long texts itself (workflows/rules/normalize.py, "Bounded cost")."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    asked: TextReading
    answer: TextReading
    # Whether the answer names one of the call's own argument values, and a digest of what a
    # call with several arguments names (``normalize.read_whole_exchange``, ``names``).
    echoes: bool = False
    named: str = Field(default="", pattern=r"^(?:[0-9a-f]{16})?$")
    # Since WORLD_IDS_PATCH, the ids the call's arguments and its answer hold, as private
    # digests (``normalize.id_digests``; ``workflows.rules.world_ids``); empty before it.
    asked_ids: tuple[IdDigest, ...] = Field(default=(), max_length=64)
    answer_ids: tuple[IdDigest, ...] = Field(default=(), max_length=64)
    # Since WORLD_IDS_PATCH, a digest of the call's argument values the answer names (what it
    # is about), "" when it names none.
    echoed: str = Field(default="", pattern=r"^(?:[0-9a-f]{16})?$")


class ToolOutcome(BaseModel):
    """A settled tool call, on both status axes (the module docstring)."""

    model_config = ConfigDict(frozen=True)

    call_id: str
    tool_name: str
    policy_tool_name: str | None = None
    tool_type: str | None = None
    status: str
    execution_status: str | None = None
    execution_error_type: str | None = None
    error_type: str | None = None
    content: str = ""
    error_message: str | None = None
    provider_duplicate: bool = False
    refused_repeat: bool = False
    # The user denied the call: the workflow's permission path, or a tool's own permission
    # layer (a fixture's denied outcome). Set explicitly by whoever answered; never
    # inferred from statuses or text (R4, ``workflows.rules.denied_calls``).
    denied: bool = False
    # The files a successful call changed, as (path digest, content digest) pairs
    # (:func:`file_write`): private digests, never the path or the content. Only producers
    # that know what they wrote fill it (the built-in file tools, a scenario fixture's
    # ``writes``); empty otherwise, and in every payload recorded before it existed.
    writes: tuple[tuple[str, str], ...] = ()
    # The tool activity's reading of a call with a long argument or output text
    # (``workflows.rules.normalize.with_readings``); ``None`` for every other outcome, for
    # those Seawall makes up itself and in every payload recorded before it existed (the
    # workflow then reads the texts itself).
    readings: ExchangeReadings | None = None

    # On the wire (workflows/contracts/wire.py) a field equal to its twin is left out and
    # copied back when the payload is read: most outcomes have one tool name, one status and
    # one error type on both axes.
    @model_serializer(mode="wrap")
    def _wire(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> Any:
        dumped = handler(self)
        if on_the_wire(info):
            for twin, primary in _OUTCOME_TWINS:
                without_twin(dumped, twin, primary)
        return dumped

    @model_validator(mode="before")
    @classmethod
    def _twins_from_wire(cls, data: Any, info: ValidationInfo) -> Any:
        if on_the_wire(info):
            for twin, primary in _OUTCOME_TWINS:
                data = with_twin(data, twin, primary)
        return data

    @property
    def contract_violation(self) -> bool:
        return is_contract_violation(self.status, self.execution_status)

    @property
    def ran_and_failed(self) -> bool:
        """The tool was entered, its execute step failed, and the call ended as an error.

        A cancelled terminal status wins over an execution error, and ``success/error`` is
        a contract violation, so neither counts as a failure to remember.
        """
        return (
            self.status == TerminalStatus.ERROR and self.execution_status == ExecutionStatus.ERROR
        )


# (twin, primary): fields of a ToolOutcome the wire leaves out when equal to their primary.
_OUTCOME_TWINS = (
    ("policy_tool_name", "tool_name"),
    ("execution_status", "status"),
    ("execution_error_type", "error_type"),
)

# The content digest of a file the call deleted.
DELETED_FILE = "deleted"


def _digest(kind: bytes, data: bytes) -> str:
    return hashlib.sha256(kind + b"\x00" + data).hexdigest()[:32]


def file_write(path: str, content: str | bytes | None) -> tuple[str, str]:
    """One changed file as :attr:`ToolOutcome.writes` holds it: a private digest of its
    workspace-relative path (normalized: ``./a//b.py`` is ``a/b.py``) and of its content
    after the call (:data:`DELETED_FILE` when ``content`` is ``None``: the call deleted it).
    Equal pairs mean the same file with the same content; neither digest is ever logged."""
    normalized = posixpath.normpath(path.strip())
    path_digest = _digest(b"path", normalized.encode("utf-8", "surrogatepass"))
    if content is None:
        return path_digest, DELETED_FILE
    data = content.encode("utf-8", "surrogatepass") if isinstance(content, str) else content
    return path_digest, _digest(b"content", data)


def is_denial(status: str, execution_status: str | None, error_type: str | None) -> bool:
    """The status triple of a denied call: it ended cancelled or as an error, never started,
    and its error type is ``execution_denied``. Only a producer that answers for the user's
    permission uses it to set :attr:`ToolOutcome.denied` (the refusal, the call-id dedup and
    the cap report the same triple but are not denials)."""
    return (
        status in (TerminalStatus.CANCELLED, TerminalStatus.ERROR)
        and execution_status == ExecutionStatus.NOT_STARTED
        and error_type == ToolErrorType.EXECUTION_DENIED
    )
