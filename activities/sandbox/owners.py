"""Which cgroup an owner's sandboxes share on this worker: named by a pseudonym, never the id.

A cap per sandbox bounds one call, not an owner: three of one owner's calls at once, each
capped at one core, take both cores of a two-core worker. So every sandbox of an owner sits
in one group of that owner's under ``seawall-sandbox/`` (``seawall-sandbox/o-<pseudonym>/
<sandbox>``), whose limits bind all of them together (``sandbox_owner_cpu_max_percent``,
``sandbox_owner_memory_max_mb``), and whose default weight makes busy owners, not busy
calls, share the sandboxes' CPU equally (docs/security-sandbox.md, "Resource limits").

Every local user can read a process's cgroup path (``/proc/<pid>/cgroup``), so the group is
named by a keyed hash of the owner id: HMAC-SHA256 under the worker's session-signing key,
domain-separated from the grants that key signs. Workers that share the key and the host's
``seawall-sandbox/`` put one owner's sandboxes in the same group; a worker without a key (the
tools' own tests) uses a key of its own process. A call whose prompt has no owner (a local
user's, or a prompt recorded before calls carried one) gets no owner group: its sandbox sits
directly under ``seawall-sandbox/`` as one group of its own, as before.

The same pseudonym names the owner's directory in the index of her workspaces that the
owner-wide disk quota (``sandbox_owner_disk_mb``) measures, in the worker's data directory.

The supervisor (:mod:`activities.sandbox.supervisor`) makes the group when an owner's first
sandbox starts and removes it when the last one ends; the worker removes empty ones a killed
supervisor left at start (:mod:`activities.sandbox.cgroup`).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

# An owner group's name: the prefix and this many hex digits of the keyed hash.
PREFIX = "o-"
DIGITS = 16
_DOMAIN = b"seawall-sandbox-owner\n"
_PROCESS_KEY = secrets.token_bytes(32)


def owner_group(owner_id: str | None, key: str | None) -> str | None:
    """The name of the cgroup ``owner_id``'s sandboxes share (``None``: no owner)."""
    if owner_id is None:
        return None
    secret = key.encode() if key else _PROCESS_KEY
    digest = hmac.new(secret, _DOMAIN + owner_id.encode(), hashlib.sha256).hexdigest()
    return PREFIX + digest[:DIGITS]


def is_owner_group(name: str) -> bool:
    """Whether a directory under ``seawall-sandbox/`` is an owner's group."""
    rest = name[len(PREFIX) :]
    return (
        name.startswith(PREFIX)
        and len(rest) == DIGITS
        and all(c in "0123456789abcdef" for c in rest)
    )
