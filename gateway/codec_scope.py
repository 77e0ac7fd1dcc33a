"""Which stored payloads a codec caller may read: an owner only its own sessions'.

docs/security-codec.md. A stored payload's reference is no secret (it
sits in Temporal's history, and a digest names content, not who stored it), so the codec
checks each reference against its caller before it reads anything:

- the reference must name the workflow it was stored for: the filesystem driver's claims
  carry it (``WORKFLOW_CLAIM``) and its index records which workflow stored which digest;
  the s3 driver's object key carries it (``v0/ns/<namespace>/wt/…/wi/<workflow id>/…``), and
  an object exists under that key only if that workflow stored it;
- an owner's token reads a reference only if that workflow is of a session the owner owns
  (a session's own workflow, ``session-<id>``, or one of its prompts, ``<id>-prompt-<n>``);
- a filesystem claim naming a workflow is read only if the index holds its digest under that
  workflow, whoever asks (no claim pairs one workflow with another's digest).

Everything else an owner sends (a claim written before claims named their workflow, an
activity's or an unattributed payload, the s3 driver's short key form, a made-up reference,
another owner's) gets :class:`UnknownReference`, answered exactly as a payload missing from
the store is: whether a digest exists is never told to someone who may not read it. The
operator's token, the single ``SEAWALL_GATEWAY_TOKEN``, and the UI's codec credential read
every reference the store holds, as the Temporal UI, which shows every history, needs.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from temporalio.api.sdk.v1.external_storage_pb2 import ExternalStorageReference
from temporalio.client import Client
from temporalio.converter import ExternalStorage
from temporalio.service import RPCError

from gateway.ownership import SessionOwners
from seawall.client.temporal_ops import is_not_found, session_of_prompt
from seawall.runtime.storage import FILESYSTEM_DRIVER, WORKFLOW_CLAIM, filesystem_driver
from seawall.runtime.storage_s3 import S3_DRIVER, workflow_of_key
from workflows.session import session_workflow_id

SESSION_WORKFLOW_PREFIX = session_workflow_id("")


class UnknownReference(Exception):
    """A reference this caller may not read, or that names no stored payload."""


@dataclass(frozen=True)
class CodecReader:
    """Who asks the codec: ``owner_id`` None reads every stored payload (the operator's
    token, a gateway without an owners' tokens file, the UI's credential)."""

    owner_id: str | None = None


EVERYTHING = CodecReader()


def stored_for(reference: ExternalStorageReference, namespace: str) -> str | None:
    """The workflow ``reference`` says its payload was stored for, if it says one."""
    claim = reference.claim_data
    if reference.driver_name == FILESYSTEM_DRIVER:
        return claim.get(WORKFLOW_CLAIM) or None
    if reference.driver_name == S3_DRIVER:
        return workflow_of_key(claim.get("key", ""), namespace)
    return None


def session_of_workflow(workflow_id: str) -> str | None:
    """The session a Seawall workflow id belongs to: the session's own, or one of its
    prompts' (None: a workflow of no session)."""
    if workflow_id.startswith(SESSION_WORKFLOW_PREFIX):
        return workflow_id[len(SESSION_WORKFLOW_PREFIX) :] or None
    return session_of_prompt(workflow_id)


async def check_reference(
    reference: ExternalStorageReference,
    reader: CodecReader,
    *,
    client: Client,
    storage: ExternalStorage | None,
    owners: SessionOwners | None,
) -> None:
    """Raise :class:`UnknownReference` unless ``reader`` may read ``reference`` (module
    docstring). Reads no payload: the owner check comes first, so a stranger's answer does
    not depend on what the store holds."""
    workflow_id = stored_for(reference, client.namespace)
    if reader.owner_id is not None:
        session_id = session_of_workflow(workflow_id) if workflow_id else None
        if session_id is None or owners is None:
            raise UnknownReference
        try:
            owner = await owners.owner_of(client, session_id)
        except RPCError as err:
            if is_not_found(err):
                raise UnknownReference from None
            raise
        if owner != reader.owner_id:
            raise UnknownReference
    fs = filesystem_driver(storage)
    if reference.driver_name == FILESYSTEM_DRIVER and workflow_id is not None and fs is not None:
        digest = reference.claim_data.get("digest", "")
        if not await asyncio.to_thread(fs.holds, client.namespace, workflow_id, digest):
            raise UnknownReference
