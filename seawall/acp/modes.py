"""The ACP session modes an editor offers: Seawall's approval modes, one to one.

The repeated-failure guard's mode is operator policy and is never a session mode: nothing a
client sends can switch the guard (docs/acp.md, "Operator policy").
"""

from __future__ import annotations

from acp.schema import SessionMode, SessionModeState

from seawall.acp.errors import invalid_params
from workflows.contracts.prompt_options import ApprovalMode

SESSION_MODES = [
    SessionMode(
        id=ApprovalMode.DEFAULT.value,
        name="Default",
        description="Ask before file edits, shell commands and MCP tools that change things",
    ),
    SessionMode(
        id=ApprovalMode.AUTO_EDIT.value,
        name="Auto Edit",
        description="File edits run without asking; shell commands and MCP tools ask",
    ),
    SessionMode(id=ApprovalMode.YOLO.value, name="YOLO", description="Nothing asks"),
]


def mode_state(current: ApprovalMode) -> SessionModeState:
    return SessionModeState(current_mode_id=current.value, available_modes=SESSION_MODES)


def approval_mode(mode_id: str) -> ApprovalMode:
    """The approval mode an ACP mode id names; an unknown id is invalid params."""
    try:
        return ApprovalMode(mode_id)
    except ValueError:
        choices = ", ".join(mode.value for mode in ApprovalMode)
        raise invalid_params(
            f"unknown session mode {mode_id!r}; choose one of {choices}", modeId=mode_id
        ) from None
