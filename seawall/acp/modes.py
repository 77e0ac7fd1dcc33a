"""The ACP session modes an editor offers: Seawall's approval modes, one to one, as far as
the operator allows.

The repeated-failure guard's mode is operator policy and is never a session mode: nothing a
client sends can switch the guard (docs/acp.md, "Operator policy"). The approval modes
offered are those at most as loose as the operator's ``loosest_approval_mode`` (unset: its
``approval_mode``); a looser one is refused here and by the session itself.
"""

from __future__ import annotations

from acp.schema import SessionMode, SessionModeState

from seawall.acp.errors import invalid_params
from workflows.contracts.prompt_options import (
    ApprovalMode,
    allowed_approval_modes,
    looser_mode_refusal,
)

# Where the editor's user, the operator of their own seawall acp, sets the bound.
ACP_SETTING = "for seawall acp: an editor passes it in its agent server's env (docs/acp.md)"

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


def mode_state(current: ApprovalMode, loosest: ApprovalMode | None) -> SessionModeState:
    """The modes ``loosest`` allows (and ``current``, whatever it is), ``current`` selected."""
    allowed = {mode.value for mode in allowed_approval_modes(loosest)} | {current.value}
    return SessionModeState(
        current_mode_id=current.value,
        available_modes=[mode for mode in SESSION_MODES if mode.id in allowed],
    )


def approval_mode(mode_id: str, loosest: ApprovalMode | None) -> ApprovalMode:
    """The approval mode an ACP mode id names; an unknown id, or a mode looser than
    ``loosest``, is invalid params."""
    try:
        mode = ApprovalMode(mode_id)
    except ValueError:
        choices = ", ".join(mode.value for mode in allowed_approval_modes(loosest))
        raise invalid_params(
            f"unknown session mode {mode_id!r}; choose one of {choices}", modeId=mode_id
        ) from None
    if loosest is not None and not mode.allowed_by(loosest):
        raise invalid_params(looser_mode_refusal(mode, loosest, where=ACP_SETTING), modeId=mode_id)
    return mode
