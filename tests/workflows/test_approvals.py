"""What a permission request shows of a call (workflows/prompt/approvals.py)."""

from __future__ import annotations

from workflows.contracts.prompt_options import DEFAULT_REDACTED_ARGUMENTS
from workflows.prompt.approvals import (
    REDACTED,
    SHOWN_ITEMS,
    SUMMARY_CHARS,
    call_summary,
    shown_arguments,
)


def test_credentials_are_redacted_wherever_they_appear() -> None:
    key = "-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n-----END OPENSSH PRIVATE KEY-----"
    shown = shown_arguments(
        {
            "command": "git push https://ghp_0123456789abcdefghijKLMN@github.com/x/y",
            "env": ["AWS_ACCESS_KEY_ID=AKIA0123456789ABCDEF", "PLAIN=1"],
            "key": key,
            "GitHub_Token": "anything",
        },
        DEFAULT_REDACTED_ARGUMENTS,
    )
    assert shown["command"] == f"git push https://{REDACTED}@github.com/x/y"
    assert shown["env"] == [f"AWS_ACCESS_KEY_ID={REDACTED}", "PLAIN=1"]
    assert shown["key"] == REDACTED
    assert shown["GitHub_Token"] == REDACTED  # names match whatever their case


def test_ordinary_values_are_shown_as_they_are() -> None:
    arguments = {"path": "src/app.py", "count": 3, "recursive": True, "pattern": None}
    assert shown_arguments(arguments, DEFAULT_REDACTED_ARGUMENTS) == arguments


def test_long_lists_and_deep_values_are_summarized() -> None:
    shown = shown_arguments(
        {"files": [f"f{i}" for i in range(SHOWN_ITEMS + 5)], "a": {"b": {"c": {"d": {"e": 1}}}}},
        (),
    )
    assert shown["files"][-1] == "… 5 more items"
    assert len(shown["files"]) == SHOWN_ITEMS + 1
    assert shown["a"] == {"b": {"c": {"d": "{… 1 entry}"}}}


def test_the_summary_is_one_bounded_line() -> None:
    assert call_summary("read_file", {"path": "a.txt"}) == "read_file path=a.txt"
    assert call_summary("write_file", {"path": "a b.txt", "content": "x\ny"}) == (
        'write_file path="a b.txt" content="x y"'
    )
    long = call_summary("run_shell_command", {"command": "echo " + "x" * 500})
    assert len(long) == SUMMARY_CHARS and long.endswith("…") and "\n" not in long
