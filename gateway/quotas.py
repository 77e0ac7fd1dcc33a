"""What one owner may keep in Seawall, measured as the gateway measures it.

docs/security-gateway.md, "Per-owner quotas". The owner's admission workflow counts its open
sessions and the bytes they were given (gateway/admission.py); this module says how many
bytes a request brings and answers ``413`` for one that could never fit: a
``client_metadata`` over ``SEAWALL_MAX_CLIENT_METADATA_BYTES`` (for every caller), or a
prompt or input bigger on its own than the owner's whole byte quota.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import HTTPException

from gateway.settings import GatewaySettings
from workflows.contracts.owner_admission import OwnerQuotas


def owner_quotas(settings: GatewaySettings) -> OwnerQuotas | None:
    """The quotas the admission workflow is asked to apply; None when both are off."""
    quotas = OwnerQuotas(
        max_open_sessions=settings.max_open_sessions_per_owner,
        max_stored_bytes=settings.max_stored_bytes_per_owner,
    )
    return quotas if quotas.max_open_sessions or quotas.max_stored_bytes else None


def metadata_bytes(metadata: dict[str, Any], limit: int) -> int:
    """The bytes of ``metadata`` as compact JSON (UTF-8); 413 over ``limit``."""
    size = len(json.dumps(metadata, separators=(",", ":"), ensure_ascii=False).encode())
    if size > limit:
        raise HTTPException(
            413,
            f"client_metadata is {size} bytes as JSON; the limit is {limit} "
            "(SEAWALL_MAX_CLIENT_METADATA_BYTES)",
        )
    return size


def text_bytes(text: str, quotas: OwnerQuotas | None, what: str) -> int:
    """The bytes of ``text`` (UTF-8); 413 when it alone exceeds the owner's byte quota."""
    size = len(text.encode())
    limit = quotas.max_stored_bytes if quotas is not None else 0
    if limit and size > limit:
        raise HTTPException(
            413,
            f"the {what} is {size} bytes, more than one owner's open sessions may hold in all "
            f"(SEAWALL_MAX_STORED_BYTES_PER_OWNER={limit})",
        )
    return size
