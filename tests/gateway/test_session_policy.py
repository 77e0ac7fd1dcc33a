"""A client's choices can only tighten the operator's policy (docs/security.md, "What a client
may choose"): one test per field of ``POST /v1/sessions``, through real gateway apps on a real
dev server and worker.

``approval_mode`` is bounded by ``loosest_approval_mode`` (unset: ``approval_mode``), here and
in the session itself; ``client_metadata.channel`` (the guard off) by ``channel_owners``;
``model_script`` and ``fixture_tools`` by ``allow_scripted_models``; every other option of a
session is not the client's to set at all.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError

from tests.gateway.owner_helpers import WAITING_SCRIPT, Gateway, auth
from workflows.contracts.prompt import ApprovalModeChange
from workflows.contracts.prompt_options import ApprovalMode, PromptOptions
from workflows.session import SessionWorkflow, session_workflow_id


async def create(http: httpx.AsyncClient, name: str, **body: Any) -> httpx.Response:
    return await http.post("/v1/sessions", json=body, headers=auth(name))


async def approval_mode_of(http: httpx.AsyncClient, name: str, created: httpx.Response) -> str:
    assert created.status_code == 201, created.text
    session_id = created.json()["session_id"]
    status = await http.get(f"/v1/sessions/{session_id}", headers=auth(name))
    mode: str = status.json()["approval_mode"]
    return mode


async def test_approval_mode_is_at_most_as_loose_as_the_operator_allows(
    gateway: Gateway,
) -> None:
    # Unset, the loosest a client may choose is the operator's approval_mode.
    strict = await gateway()
    for looser in ("auto_edit", "yolo"):
        refused = await create(strict, "alice", approval_mode=looser)
        assert refused.status_code == 403, refused.text
        # What the client may choose instead, and what the operator sets to allow it.
        assert refused.json()["detail"] == (
            f"approval mode {looser!r} asks before fewer calls than the operator allows (the "
            "loosest is 'default'; choose default); to allow it, the operator sets "
            f"SEAWALL_LOOSEST_APPROVAL_MODE={looser} (or loosest_approval_mode: {looser} in the "
            "config file) for the gateway"
        )
    assert await approval_mode_of(strict, "alice", await create(strict, "alice")) == "default"

    bounded = await gateway(loosest_approval_mode=ApprovalMode.AUTO_EDIT)
    chosen = await create(bounded, "alice", approval_mode="auto_edit")
    assert await approval_mode_of(bounded, "alice", chosen) == "auto_edit"
    assert (await create(bounded, "alice", approval_mode="yolo")).status_code == 403

    # A looser default is always allowed, and a client may still tighten it.
    loose = await gateway(approval_mode=ApprovalMode.YOLO)
    assert await approval_mode_of(loose, "bob", await create(loose, "bob")) == "yolo"
    tightened = await create(loose, "bob", approval_mode="default")
    assert await approval_mode_of(loose, "bob", tightened) == "default"


async def test_the_session_refuses_a_switch_past_the_bound_it_started_with(
    gateway: Gateway, client: Client
) -> None:
    http = await gateway(loosest_approval_mode=ApprovalMode.AUTO_EDIT)
    created = await create(http, "alice", model_script=WAITING_SCRIPT)
    assert created.status_code == 201, created.text
    session = client.get_workflow_handle_for(
        SessionWorkflow.run, session_workflow_id(created.json()["session_id"])
    )
    switched = await session.execute_update(
        SessionWorkflow.set_approval_mode, ApprovalModeChange(approval_mode=ApprovalMode.AUTO_EDIT)
    )
    assert switched.approval_mode is ApprovalMode.AUTO_EDIT
    with pytest.raises(WorkflowUpdateFailedError) as refused:
        await session.execute_update(
            SessionWorkflow.set_approval_mode, ApprovalModeChange(approval_mode=ApprovalMode.YOLO)
        )
    cause = refused.value.cause
    assert isinstance(cause, ApplicationError)
    assert cause.message == (
        "approval mode 'yolo' asks before fewer calls than the operator allows (the loosest is "
        "'auto_edit'; choose default or auto_edit); to allow it, the operator sets "
        "SEAWALL_LOOSEST_APPROVAL_MODE=yolo (or loosest_approval_mode: yolo in the config file) "
        "where the session was started (a session keeps the bound it started with)"
    )
    assert (await session.query(SessionWorkflow.status)).approval_mode is ApprovalMode.AUTO_EDIT


async def test_a_channel_session_is_only_for_the_owners_the_operator_names(
    gateway: Gateway, owners: dict[str, str]
) -> None:
    channel = {"client_metadata": {"channel": True}}
    nobody = await gateway()
    for name in ("alice", "operator"):
        refused = await create(nobody, name, **channel)
        assert refused.status_code == 403, refused.text
        assert refused.json()["detail"] == (
            "client_metadata.channel marks a channel-bridge session, which runs with the guard "
            "off; this gateway allows it only for the owners named in SEAWALL_CHANNEL_OWNERS"
        )
    # Marked false, or other metadata: nothing to allow.
    assert (await create(nobody, "alice", client_metadata={"channel": False})).status_code == 201
    assert (await create(nobody, "alice", client_metadata={"bridge": "x"})).status_code == 201

    named = await gateway(channel_owners=(owners["alice"],))
    assert (await create(named, "alice", **channel)).status_code == 201
    assert (await create(named, "bob", **channel)).status_code == 403
    # The single token names no owner: only "*" lets it.
    assert (await create(named, "operator", **channel)).status_code == 403
    everyone = await gateway(channel_owners=("*",))
    assert (await create(everyone, "operator", **channel)).status_code == 201


FIXTURE_TOOL = {"outcomes": [{"status": "success", "content": "ok"}]}


@pytest.mark.parametrize(
    "field", [{"model_script": WAITING_SCRIPT}, {"fixture_tools": {"probe": FIXTURE_TOOL}}]
)
async def test_a_scripted_session_needs_the_operators_allowance(
    gateway: Gateway, field: dict[str, Any]
) -> None:
    refused = await create(await gateway(allow_scripted_models=False), "alice", **field)
    assert refused.status_code == 403, refused.text
    assert refused.json()["detail"] == (
        "scripted models are disabled on this gateway (SEAWALL_ALLOW_SCRIPTED_MODELS)"
    )


# The options a client may choose: approval_mode (bounded above) and approval_rules, which in
# a request are the session's own rules (SessionSettings.session_approval_rules), that only
# tighten (tests/gateway/test_approval_rules.py); the operator's rules, PromptOptions'
# field of that name, cannot be sent apart from them.
CLIENT_CHOICES = {"approval_mode", "approval_rules"}
# Every other option a session's prompts run with, and what the gateway decides for it: none
# of them is the client's to set.
OPERATOR_ONLY = sorted(
    ({*PromptOptions.model_fields} - CLIENT_CHOICES)
    | {"guard_mode", "loop_settings", "workspace_root", "model", "owner_id", "route"}
    | {"rollout", "grant", "scenario"}
)


@pytest.mark.parametrize("name", OPERATOR_ONLY)
async def test_no_other_session_option_is_the_clients(gateway: Gateway, name: str) -> None:
    value: Any = 0 if name.startswith("max") else "off"
    refused = await create(await gateway(), "alice", **{name: value})
    assert refused.status_code == 422, refused.text
    assert refused.json()["detail"] == f"body.{name}: Extra inputs are not permitted"
