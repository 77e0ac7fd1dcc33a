"""What a client may choose for its session: only what tightens the operator's policy.

docs/security.md, "What a client may choose". ``POST /v1/sessions`` takes four choices from
the client; each is bounded here by an operator setting, and a request past the bound is a
``403`` naming the setting (never the value of another owner's):

- ``approval_mode``: at most as loose as ``loosest_approval_mode`` (unset: ``approval_mode``);
  the bound travels with the session, whose ``set_approval_mode`` refuses a looser switch;
- ``client_metadata.channel: true`` (a channel bridge's session, which runs with the guard
  off): only for an owner named in ``channel_owners``; the worker checks it again against its
  own setting, from the signed start (docs/security-trust.md);
- ``model_script`` and ``fixture_tools``: only with ``allow_scripted_models`` (and the worker's
  own).

Every other session option (the caps, timeouts, the guard mode, the model, the workspace) is
the operator's alone: the request body forbids unknown fields (``422``).
"""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import HTTPException

from gateway.api_models import CreateSessionRequest
from gateway.settings import GatewaySettings
from seawall.runtime.owners import owner_listed
from workflows.contracts.prompt_options import ApprovalMode, looser_mode_refusal, loosest_allowed


@dataclass(frozen=True)
class SessionChoices:
    """What the session starts with, as the client chose within the operator's bounds."""

    approval_mode: ApprovalMode
    loosest_approval_mode: ApprovalMode
    scripted: bool


def session_choices(
    body: CreateSessionRequest, settings: GatewaySettings, owner_id: str | None
) -> SessionChoices:
    """The client's choices for a new session, or the ``403`` of the first one the
    operator's settings do not allow."""
    loosest = loosest_allowed(settings.approval_mode, settings.loosest_approval_mode)
    mode = body.approval_mode or settings.approval_mode
    if not mode.allowed_by(loosest):
        raise HTTPException(403, looser_mode_refusal(mode, loosest, where="for the gateway"))
    if body.client_metadata.get("channel") is True and not owner_listed(
        settings.channel_owners, owner_id
    ):
        raise HTTPException(
            403,
            "client_metadata.channel marks a channel-bridge session, which runs with the "
            "guard off; this gateway allows it only for the owners named in "
            "SEAWALL_CHANNEL_OWNERS",
        )
    scripted = body.model_script is not None or bool(body.fixture_tools)
    if scripted and not settings.allow_scripted_models:
        raise HTTPException(
            403, "scripted models are disabled on this gateway (SEAWALL_ALLOW_SCRIPTED_MODELS)"
        )
    return SessionChoices(approval_mode=mode, loosest_approval_mode=loosest, scripted=scripted)
