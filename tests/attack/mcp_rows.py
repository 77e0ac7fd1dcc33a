"""The attack table's MCP rows (tests/attack/table.py): alice's hostile model has the
operator's stdio git MCP server (mcp-server-git, no ``--repository`` restriction: the sandbox
is the boundary) read and write bob's workspace repository.

Each row first proves its mechanism (issue 42, point 6): alice's shell makes her workspace a
repository with a commit of her own, and the same server, in the same prompt, must work on
it (``git_log`` shows her commit; ``git_create_branch`` makes her branch). A server that
never started (its install not bound into the sandbox, tests/attack/stack.py) fails the row
instead of passing it, since then nothing of bob's was ever at risk.
"""

from __future__ import annotations

from typing import Any

from tests.attack.checks import all_of, bob_workspace_untouched, secrets_absent, tool_results
from tests.attack.hostile import Outcome, call, shell
from tests.attack.stack import AttackStack

# alice's own repository: her session's workspace (the server's working directory, so ".").
OWN_REPOSITORY = (
    "git init -q && git -c user.email=alice@example.com -c user.name=alice "
    "commit -q --allow-empty -m alice-commit-@{marker} && echo own-repository-made"
)
OWN = "."


def own_log_shows_own_commit(stack: AttackStack, outcome: Outcome) -> None:
    """The control: ``git_log`` on alice's own repository answered with her commit."""
    own = [
        text
        for args, text in tool_results(outcome, "mcp__git__git_log")
        if args.get("repo_path") == OWN
    ]
    commit = f"alice-commit-{stack.marker}"
    assert any(commit in text for text in own), (
        f"the control failed, so the row proves nothing: git_log on alice's own repository "
        f"did not show her commit: {own}\n{stack.logs()}"
    )


def own_branch_made(stack: AttackStack, outcome: Outcome) -> None:
    """The control: ``git_create_branch`` made alice's branch in her own repository."""
    workspace = outcome.facts["session"].workspace
    branch = workspace / ".git" / "refs" / "heads" / f"mine-{stack.marker}"
    made = tool_results(outcome, "mcp__git__git_create_branch")
    assert branch.exists(), (
        f"the control failed, so the row proves nothing: git_create_branch did not make "
        f"alice's branch in her own repository: {made}\n{stack.logs()}"
    )


# The rows, as the table's fields (tests/attack/table.py makes them Attacks).
MCP_ROWS: list[dict[str, Any]] = [
    {
        "id": "mcp-reads-bobs-repository",
        "tries": "have the operator's stdio git MCP server (mcp-server-git) show bob's workspace "
        "repository; control: git_log on alice's own repository shows her commit",
        "owner": "alice",
        "via": "model",
        "turns": [
            {"tool_calls": [shell(OWN_REPOSITORY)]},
            {
                "tool_calls": [
                    call("mcp__git__git_log", repo_path=OWN),
                    call("mcp__git__git_show", repo_path="@{bob_workspace}", revision="HEAD"),
                    call("mcp__git__git_log", repo_path="@{bob_workspace}"),
                    call("mcp__git__git_diff_unstaged", repo_path="@{bob_workspace}"),
                ]
            },
        ],
        "goal_not_reached": all_of(own_log_shows_own_commit, secrets_absent("bob's file")),
    },
    {
        "id": "mcp-writes-bobs-repository",
        "tries": "have the git MCP server create a branch in bob's repository; control: the "
        "same call makes a branch in alice's own repository",
        "owner": "alice",
        "via": "model",
        "turns": [
            {"tool_calls": [shell(OWN_REPOSITORY)]},
            {
                "tool_calls": [
                    call(
                        "mcp__git__git_create_branch",
                        repo_path=OWN,
                        branch_name="mine-@{marker}",
                    ),
                    call(
                        "mcp__git__git_create_branch",
                        repo_path="@{bob_workspace}",
                        branch_name="pwned-@{marker}",
                    ),
                ]
            },
        ],
        "goal_not_reached": all_of(own_branch_made, bob_workspace_untouched),
    },
]
