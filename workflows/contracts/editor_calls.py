"""Editor-side file tools: the contract between a prompt, its worker and an ACP editor.

docs/acp.md, "Editor-side tools". An editor that speaks the Agent Client Protocol can read
and write files for the agent (``fs/read_text_file``, ``fs/write_text_file``): a write then
shows as the editor's own diff and a read sees the buffers the user has not saved. When a
session's ``editor_tools`` says so, a ``read_file`` or ``write_file`` call of its prompts is
planned on the worker (arguments parsed, the path resolved and confined to the workspace:
``seawall.prepare_editor_call``), then handed to the editor through the prompt's
``editor_calls`` query and answered through its ``answer_editor_call`` update, like a
permission request; no answer within the tool timeout settles the call as
``editor_unavailable``. The text the model reads is built here, purely, so the worker's own
``read_file`` and the editor's answer window a file the same way.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, model_validator

from workflows.contracts.outcome import (
    ExecutionStatus,
    TerminalStatus,
    ToolCall,
    ToolErrorType,
    ToolOutcome,
    ToolType,
    file_write,
)

# ``read_file`` without a limit shows at most this many lines.
DEFAULT_READ_LINES = 2000
# The most an editor's read answer may carry (characters): within Temporal's payload limit,
# with room for the update's envelope. A larger file is the editor's ``too_large`` answer.
MAX_EDITOR_READ_CHARS = 1_000_000
# The most a write may carry to the editor (the query answer that hands it over).
MAX_EDITOR_WRITE_CHARS = MAX_EDITOR_READ_CHARS


class EditorTools(StrEnum):
    """Which built-in tools of a session run through its ACP editor (the ``acp_client_tools``
    setting, and what the editor advertised at ``initialize``)."""

    OFF = "off"  # every tool runs on the worker
    FS = "fs"  # read_file and write_file go through the editor's fs/* methods


class EditorOperation(StrEnum):
    READ = "read"
    WRITE = "write"


# The built-in tools ``EditorTools.FS`` routes, and what each asks of the editor.
EDITOR_FS_TOOLS: dict[str, EditorOperation] = {
    "read_file": EditorOperation.READ,
    "write_file": EditorOperation.WRITE,
}


def routes_to_editor(editor_tools: EditorTools, tool_name: str) -> bool:
    """Whether a call of ``tool_name`` runs through the editor in a session with
    ``editor_tools``."""
    return editor_tools is EditorTools.FS and tool_name in EDITOR_FS_TOOLS


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class PrepareEditorCallInput(_Strict):
    """Plan one call for the editor on the worker: its arguments, its path in the workspace."""

    call: ToolCall
    workspace_root: str


class EditorCallPlan(_Strict):
    """What the editor is asked: an absolute ``path`` the worker resolved (symlinks
    followed) inside the workspace, ``shown`` its workspace-relative form for the model,
    and for a write its ``content``; for a read the window the model asked for."""

    operation: EditorOperation
    path: str
    shown: str
    content: str | None = Field(default=None, max_length=MAX_EDITOR_WRITE_CHARS)
    offset: int | None = Field(default=None, ge=0)
    limit: int | None = Field(default=None, ge=1)


class PreparedEditorCall(_Strict):
    """The plan, or the outcome the call is refused with before the editor is asked."""

    plan: EditorCallPlan | None = None
    refused: ToolOutcome | None = None

    @model_validator(mode="after")
    def _one(self) -> PreparedEditorCall:
        if (self.plan is None) == (self.refused is None):
            raise ValueError("exactly one of plan and refused")
        return self


class EditorRequest(_Strict):
    """An open request for the editor (the ``editor_calls`` query): never in an event,
    because events carry no paths or contents."""

    request_id: str
    call_id: str
    tool_name: str
    plan: EditorCallPlan


class EditorRequestsQuery(_Strict):
    """The open requests with these ids (all open ones when empty)."""

    request_ids: list[str] = Field(default_factory=list, max_length=100)


class EditorFailure(StrEnum):
    """Why the editor could not do what it was asked, as the bridge classifies it (the
    editor's own error text never reaches the workflow)."""

    NOT_FOUND = "not_found"
    TOO_LARGE = "too_large"
    REFUSED = "refused"  # the editor (or the bridge's own workspace check) refused the path
    FAILED = "failed"  # any other error, or the editor went away mid-request


class EditorAnswer(_Strict):
    """The editor's answer to one request: a read's ``content``, or a ``failure``; a
    successful write carries neither."""

    request_id: str = Field(min_length=1, max_length=100)
    content: str | None = Field(default=None, max_length=MAX_EDITOR_READ_CHARS)
    failure: EditorFailure | None = None

    @model_validator(mode="after")
    def _not_both(self) -> EditorAnswer:
        if self.content is not None and self.failure is not None:
            raise ValueError("an answer carries content or a failure, not both")
        return self


def read_window(text: str, shown: str, offset: int | None, limit: int | None) -> str:
    """What ``read_file`` shows of a file's ``text``: all of it when it fits, else the lines
    from ``offset`` (0-based), at most ``limit`` (default :data:`DEFAULT_READ_LINES`), headed
    by where they are."""
    lines = text.splitlines(keepends=True)
    start = offset or 0
    limit = limit if limit is not None else DEFAULT_READ_LINES
    if start == 0 and len(lines) <= limit:
        return text
    if start >= len(lines):
        return f"[offset {start} is past the end of {shown!r}, which has {len(lines)} lines.]"
    window = lines[start : start + limit]
    end = start + len(window)
    note = f"[Showing lines {start + 1}-{end} of {len(lines)} in {shown!r}."
    if end < len(lines):
        note += f" Use offset={end} to read more."
    return note + "]\n" + "".join(window)


def wrote_message(shown: str, data: bytes) -> str:
    """What ``write_file`` tells the model after writing ``data``."""
    return f"Wrote {len(data)} bytes to {shown!r}."


# --- the outcome the model reads -------------------------------------------------------------

EDITOR_UNAVAILABLE_CONTENT = (
    "The editor did not answer this {operation} of {shown!r} within {seconds:g} seconds (it "
    "may have closed), so whether it happened there is unknown.{check} Ask the user, or try "
    "again later."
)
_FAILURES: dict[tuple[EditorOperation, EditorFailure], tuple[ToolErrorType, str]] = {
    (EditorOperation.READ, EditorFailure.NOT_FOUND): (
        ToolErrorType.FILE_NOT_FOUND,
        "file {shown!r} does not exist; check the path with list_directory or glob.",
    ),
    (EditorOperation.READ, EditorFailure.TOO_LARGE): (
        ToolErrorType.FILE_TOO_LARGE,
        f"file {{shown!r}} is over the editor's {MAX_EDITOR_READ_CHARS}-character limit; use "
        "grep_search to find the relevant part.",
    ),
    (EditorOperation.READ, EditorFailure.REFUSED): (
        ToolErrorType.PERMISSION_DENIED,
        "the editor refused to read {shown!r}.",
    ),
    (EditorOperation.READ, EditorFailure.FAILED): (
        ToolErrorType.READ_CONTENT_FAILURE,
        "the editor could not read {shown!r}.",
    ),
    (EditorOperation.WRITE, EditorFailure.REFUSED): (
        ToolErrorType.PERMISSION_DENIED,
        "the editor refused to write {shown!r}; it was not written.",
    ),
}
_WRITE_FAILED = (
    ToolErrorType.FILE_WRITE_FAILURE,
    "the editor could not write {shown!r}; read it before you write it again.",
)


def editor_outcome(
    call: ToolCall, plan: EditorCallPlan, answer: EditorAnswer, *, max_chars: int
) -> ToolOutcome:
    """The settled outcome of an editor-side call from the editor's ``answer``.
    A read's text is windowed as the worker's ``read_file`` windows it and cut at
    ``max_chars``."""
    base = {
        "call_id": call.call_id,
        "tool_name": call.name,
        "policy_tool_name": call.name,
        "tool_type": ToolType.NATIVE,
    }
    if answer.failure is not None:
        error_type, text = _FAILURES.get((plan.operation, answer.failure), _WRITE_FAILED)
        message = text.format(shown=plan.shown)
        return ToolOutcome(
            **base,
            status=TerminalStatus.ERROR,
            execution_status=ExecutionStatus.ERROR,
            execution_error_type=error_type,
            error_type=error_type,
            content=message,
            error_message=message,
        )
    if plan.operation is EditorOperation.READ:
        if answer.content is None:
            raise ValueError("a read's answer carries the file's content")
        content = read_window(answer.content, plan.shown, plan.offset, plan.limit)
        if len(content) > max_chars:
            left = len(content) - max_chars
            content = (
                f"{content[:max_chars]}\n\n[Output truncated: {left} more characters; read a "
                "smaller window with offset/limit.]"
            )
        return ToolOutcome(
            **base,
            status=TerminalStatus.SUCCESS,
            execution_status=ExecutionStatus.SUCCESS,
            content=content,
        )
    data = (plan.content or "").encode("utf-8", "surrogatepass")
    return ToolOutcome(
        **base,
        status=TerminalStatus.SUCCESS,
        execution_status=ExecutionStatus.SUCCESS,
        content=wrote_message(plan.shown, data),
        writes=(file_write(plan.shown, data),),
    )


def editor_unavailable_outcome(call: ToolCall, plan: EditorCallPlan, seconds: float) -> ToolOutcome:
    """No answer from the editor within ``seconds``: whether the call ran there is unknown
    (no execution status, which the guard treats as untrusted, as a lost worker's call)."""
    check = (
        " Read the file before you write it again."
        if plan.operation is EditorOperation.WRITE
        else ""
    )
    content = EDITOR_UNAVAILABLE_CONTENT.format(
        operation=plan.operation.value, shown=plan.shown, seconds=seconds, check=check
    )
    return ToolOutcome(
        call_id=call.call_id,
        tool_name=call.name,
        policy_tool_name=call.name,
        tool_type=ToolType.NATIVE,
        status=TerminalStatus.ERROR,
        execution_status=None,
        error_type=ToolErrorType.EDITOR_UNAVAILABLE,
        content=content,
        error_message=content,
    )
