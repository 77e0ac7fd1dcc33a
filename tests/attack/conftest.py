"""One stack per test module (tests/attack/stack.py), with bob's data in place before any
attack: a file in his workspace (a git repository, for the MCP rows), in his session's
history, and a large payload in the payload store."""

from __future__ import annotations

import secrets
import subprocess
from collections.abc import AsyncIterator

import pytest

from tests.attack.drives import stored_references
from tests.attack.hostile import call, hostile_prompt, temporal_client
from tests.attack.stack import AttackStack, running_stack

# Past the payload store's 64 KiB threshold, so it is stored outside the history.
STORED_BYTES = 100_000


async def give_bob_data(stack: AttackStack) -> None:
    secret = f"bob-secret-{secrets.token_hex(8)}"
    stored = f"bob-stored-{secrets.token_hex(8)}"
    turns = [
        {"tool_calls": [call("write_file", path="bob-secret.txt", content=secret)]},
        {"tool_calls": [call("write_file", path="big.txt", content=stored + "y" * STORED_BYTES)]},
    ]
    # bob's session stays open: the attacks on his session workflow need it running.
    outcome = await hostile_prompt(stack, "bob", turns, close=False)
    session = outcome.facts["session"]
    workspace = session.workspace
    assert (workspace / "bob-secret.txt").read_text() == secret, outcome.seen[:2000]
    # His workspace is a repository (what the git MCP server is asked about).
    git = ["git", "-C", str(workspace), "-c", "user.email=bob@example.com", "-c", "user.name=bob"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "bob-secret.txt"], check=True)
    subprocess.run([*git, "commit", "-qm", "bob's secret"], check=True)
    client = await temporal_client(stack)
    history = await client.get_workflow_handle(outcome.facts["prompt_id"]).fetch_history()
    stack.bob.update(
        secret=secret,
        stored_secret=stored,
        workspace=workspace,
        session_id=session.session_id,
        prompt_id=outcome.facts["prompt_id"],
        references=stored_references(history.to_json_dict()),
    )


@pytest.fixture(scope="module")
async def attack_stack(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[AttackStack]:
    """The module's stack; a module's ``STACK_ENV`` adds operator settings of its own."""
    extra = getattr(request.module, "STACK_ENV", None)
    with running_stack(tmp_path_factory.mktemp("attack"), extra) as stack:
        await give_bob_data(stack)
        yield stack
