"""The test harness as a trusted starter (docs/security-trust.md): one signing key for the
in-process workers and the clients that start workflows, scripted models allowed, and the
system temporary directory (which holds every ``tmp_path``) as the workers' workspaces.

A test of what the worker refuses uses :data:`UNSIGNED` starts through the dev server's own
client (``temporal_env.client``), which signs nothing.
"""

from __future__ import annotations

import secrets
import tempfile
from pathlib import Path
from typing import Any

from temporalio.client import Client

from activities.trust import WorkerTrust
from seawall.runtime.grants import GrantSigner, signing_client
from seawall.runtime.owners import ANY_OWNER

TEST_SIGNING_KEY = secrets.token_urlsafe(32)
# Every pytest tmp_path and tempfile directory lies below it.
TEST_WORKSPACES = Path(tempfile.gettempdir()).resolve()
TEST_SIGNER = GrantSigner(TEST_SIGNING_KEY)


def harness_trust(**overrides: Any) -> WorkerTrust:
    """What the tests' workers trust: scripted models, workspaces under the temporary
    directory, grants signed with :data:`TEST_SIGNING_KEY` (``overrides`` replace any)."""
    fields: dict[str, Any] = {
        "allow_scripted_models": True,
        "workspace_roots": (TEST_WORKSPACES,),
        "keys": (TEST_SIGNING_KEY,),
        "channel_owners": (ANY_OWNER,),
        **overrides,
    }
    return WorkerTrust(**fields)


def signed(client: Client) -> Client:
    """``client``, signing every session and prompt it starts with the test key."""
    return signing_client(client, TEST_SIGNER)


def harness_environment(workspaces: Path = TEST_WORKSPACES) -> dict[str, str]:
    """What a ``python worker.py`` the tests spawn needs to trust as the harness's workers
    do, set the way an operator sets it: scripted models, ``workspaces``, the test key."""
    return {
        "SEAWALL_ALLOW_SCRIPTED_MODELS": "1",
        "SEAWALL_CHANNEL_OWNERS": "*",
        "SEAWALL_WORKSPACES": str(workspaces),
        "SEAWALL_SESSION_SIGNING_KEY": TEST_SIGNING_KEY,
    }
