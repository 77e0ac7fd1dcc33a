"""Inspection commands (workflows/rules/inspection.py): what only looks is no
change of the world, and anything that might write stays one."""

from __future__ import annotations

import pytest

from workflows.contracts.outcome import ToolCall
from workflows.rules.evidence import waits_for_time
from workflows.rules.inspection import command_text, is_inspection, looks_at_nothing


def shell(command: object) -> ToolCall:
    return ToolCall(call_id="c1", name="run_shell_command", arguments={"command": command})


@pytest.mark.parametrize(
    "command",
    [
        "ls -la",
        "echo waiting for instructions",
        "git status",
        "git diff --stat",
        "ps aux | grep vitest",
        "cd src && ls",
        "sed -n 1,40p app.py",
        "ls missing 2>/dev/null",
        "grep -rn TODO . 2>&1 | head -20",
        "find . -name '*.py'",
        "LC_ALL=C sort names.txt",
        "stat -c %s .lobe/cmd_7/stdout.log",
    ],
)
def test_commands_that_only_look_are_inspection(command: str) -> None:
    assert is_inspection(shell(command))


@pytest.mark.parametrize(
    "command",
    [
        "pytest -q",
        "rm -rf build",
        "echo x > notes.txt",
        "cat a >> b",
        "sed -i s/a/b/ f.py",
        "sort -o out.txt in.txt",
        "find . -name '*.pyc' -delete",
        "find . -exec rm {} +",
        "grep -l foo . | xargs rm",
        "echo $(touch x)",
        "ls `touch x`",
        "ls | tee listing.txt",
        "git commit -m wip",
        "git -C repo status",
        "ls && make",
        "awk 'BEGIN { system(\"rm x\") }'",
        "ls 'unterminated",
        "",
    ],
)
def test_anything_that_might_write_or_run_more_is_not(command: str) -> None:
    assert not is_inspection(shell(command))


def test_only_the_shell_tool_with_a_string_command_counts() -> None:
    assert not is_inspection(ToolCall(call_id="c1", name="read_file", arguments={"path": "a"}))
    assert not is_inspection(shell(["ls"]))
    assert not is_inspection(ToolCall(call_id="c1", name="run_shell_command", arguments={}))


def called(tool: str, **arguments: object) -> ToolCall:
    return ToolCall(call_id="c1", name=tool, arguments=arguments)


@pytest.mark.parametrize(
    ("call", "inspects"),
    [
        (called("Bash", command="ls -la", description="List files"), True),
        (called("execute_command", command="git log --oneline -5"), True),
        (called("shell__exec", cmd="cat package.json"), True),
        (called("Bash", command='curl -s -i "$API/runs/run_7?v=2" -H "api-key: $KEY"'), True),
        (called("run_shell_command", command="curl -sf https://example.com/health"), True),
        (called("Bash", command="npm test"), False),
        (called("Bash", command="curl -X POST https://example.com/jobs"), False),
        (called("Bash", command="curl -X GET https://example.com/jobs"), False),
        (called("Bash", command="curl -d @job.json https://example.com/jobs"), False),
        (called("Bash", command="curl --data-urlencode q=x https://example.com"), False),
        (called("Bash", command="curl -o page.html https://example.com"), False),
        (called("Bash", command="curl -sO https://example.com/a.tgz"), False),
        (called("Bash", command="curl https://example.com > page.html"), False),
        (called("redis", command="GET session:42"), False),  # not a known reader
        (called("read_file", path="a.py"), False),
    ],
)
def test_since_shell_reads_any_tool_given_a_command_is_a_shell(
    call: ToolCall, inspects: bool
) -> None:
    assert is_inspection(call, any_shell=True) is inspects
    # Before SHELL_READS_PATCH: only run_shell_command, and never curl.
    assert not is_inspection(call) or call.name == "run_shell_command"
    assert not is_inspection(called("run_shell_command", command="curl https://example.com"))


def test_a_command_given_as_an_argument_list_is_read_as_its_text() -> None:
    """Codex's ``shell`` takes argv: ``["bash", "-lc", script]`` is the script, any other list
    its words joined; before SHELL_READS_PATCH only a string ``command`` was read."""
    poll = called("shell", command=["bash", "-lc", "sleep 60; tail -n 4 /tmp/build.log"])
    assert command_text(poll, any_shell=True) == "sleep 60; tail -n 4 /tmp/build.log"
    assert waits_for_time(poll, any_shell=True) and not waits_for_time(poll)
    listing = called("shell", command=["ls", "-la", "my dir"])
    assert command_text(listing, any_shell=True) == "ls -la 'my dir'"
    assert is_inspection(listing, any_shell=True)
    assert command_text(called("exec", cmd="git status"), any_shell=True) == "git status"
    assert command_text(called("shell", command=["ls", 3]), any_shell=True) is None
    assert command_text(called("shell", command=[]), any_shell=True) is None


@pytest.mark.parametrize(
    ("command", "inspects"),
    [
        (r"Get-Content -Raw validators\validate_repo.py", True),
        ("Get-ChildItem records | Measure-Object | Select-Object -ExpandProperty Count", True),
        ("get-childitem -recurse | select-string -pattern TODO", True),
        ("Test-Path .\\build && Get-Item .\\build", True),
        ("Get-ChildItem | ForEach-Object { Remove-Item $_ }", False),  # runs a script block
        ("Get-ChildItem | Where-Object { Remove-Item x }", False),
        ("Set-Content a.txt hello", False),
        ("Get-Process | Format-Table Name", True),
        ("Format-Volume -DriveLetter D", False),  # formats a disk, not its input
        ("Get-Content a.txt | Out-File b.txt", False),
        ("ls\nrm -rf build", False),  # two commands, one of them writes
        ("ls\n\ngit status\n", True),
    ],
)
def test_since_looks_and_ids_powershell_readers_and_each_line_are_read(
    command: str, inspects: bool
) -> None:
    shell = called("exec_command", cmd=command)
    assert is_inspection(shell, any_shell=True, looks=True) is inspects
    # Before LOOKS_AND_IDS_PATCH no cmdlet read, and a line break did not separate.
    assert is_inspection(shell, any_shell=True) is command.startswith("ls")


@pytest.mark.parametrize(
    ("command", "blind"),
    [
        ("echo idle", True),
        ("sleep 5; echo ok", True),
        ('printf "%s" waiting && true', True),
        ("sleep 5\necho ok", True),
        ("sleep 5; cat status.txt", False),
        ("sleep 5\ncat status.txt", False),
        ("echo $HOME", False),  # prints what the environment holds
        ("echo done > flag", False),
        ("gh run view 12", False),
    ],
)
def test_a_command_of_echoes_and_sleeps_looks_at_nothing(command: str, blind: bool) -> None:
    assert looks_at_nothing(called("Bash", command=command)) is blind
    assert not looks_at_nothing(called("send_message", text=command))


def _changes_after_an_ls(progress_rules: bool) -> int:
    from workflows.contracts.outcome import ToolOutcome
    from workflows.rules import LoopSettings
    from workflows.rules.loop_rules import LoopRules
    from workflows.seed import GuardMode

    rules = LoopRules(
        LoopSettings(), GuardMode.ENFORCE, route_forced_off=False, progress_rules=progress_rules
    )
    call = shell("ls -la")
    outcome = ToolOutcome(
        call_id="c1",
        tool_name="run_shell_command",
        policy_tool_name="run_shell_command",
        status="success",
        execution_status="success",
        content="a.py",
    )
    rules.settle([call], ["d1"], [outcome], frozenset({"run_shell_command"}))
    return rules.changes


def test_an_inspection_is_no_change_only_for_prompts_with_the_progress_rules() -> None:
    # Prompts replaying from before seawall-progress-rules-v1 keep counting it as one.
    assert _changes_after_an_ls(progress_rules=True) == 0
    assert _changes_after_an_ls(progress_rules=False) == 1
