"""Inspection commands: shell commands that only look, so their success changes nothing.

docs/protections.md, "Loop profiles" ("Inspection commands"). The shell is a
state-changing tool (it asks for permission, and a command may write anything), so every
successful shell call used to count as a change of the world: the identical-result rule
(R3) forgave every repeat after it, and a model alternating ``echo "waiting"`` with ``ls``
on an unchanged tree looked busy forever. Most of what a stuck model runs is inspection
(``ls``, ``cat``, ``git status``, ``grep``, ``ps``), and those commands never change the
workspace. This module recognizes them, conservatively: a command counts as inspection only
when every part of it (split on ``|``, ``&&``, ``||`` and ``;``) is a read-only program with
no option that writes, and nothing in it can write or run something else — no output
redirection, no command substitution, no ``tee``, ``xargs``, ``-exec``, ``sed -i``. Anything
it does not recognize stays state-changing, so a mistake here can only make a rule more
forgiving, never less.

Since ``SHELL_READS_PATCH`` the shell is any tool that is given a command: a command that
only reads is an inspection whatever runs it (Claude Code's ``Bash``, ``execute_command``, an
MCP server's ``shell``: any call with a ``command`` or ``cmd`` argument, a string or an
argument list such as Codex's ``["bash", "-lc", "sleep 60; tail build.log"]``
(:func:`command_text`, which the time evidence and the verification key read too); a
command that is not a known reader, ``GET key`` to a database tool, stays a change), and ``curl``
only looks unless an option sends data, picks a method or writes a file. Prompts started
before it read only ``run_shell_command``, without ``curl``.

Since ``LOOKS_AND_IDS_PATCH`` PowerShell's readers only look too: a cmdlet whose verb only
gets, selects, measures, sorts, filters, lays out, tests, resolves, compares or converts
(``Get-Content -Raw x``, ``Get-ChildItem d | Measure-Object``), with no script block (``{ … }``
can run anything); and each line of a command is a command of its own. And
:func:`looks_at_nothing` tells a command that looks at nothing at all (``sleep 5; echo ok``:
every program in it prints only what it was given, or nothing), whose answer says nothing of
the world, for the no-new-state rule's waits (``stagnation``).

Only the recommended profile's progress rules read it (``PROGRESS_RULES_PATCH``); the seed's
failed-call refusal keeps the seed's notion that any successful shell call may change the
world. Pure: no I/O, no clock.
"""

from __future__ import annotations

import re
import shlex

from workflows.contracts.outcome import ToolCall

SHELL_TOOL = "run_shell_command"

# Programs that only read, whatever their (non-writing) arguments.
_READ_ONLY_PROGRAMS = frozenset(
    {
        "ls", "cat", "head", "tail", "wc", "pwd", "echo", "printf", "grep", "egrep", "fgrep",
        "rg", "ag", "stat", "file", "which", "type", "tree", "du", "df", "env", "printenv",
        "date", "whoami", "uname", "id", "nproc", "free", "uptime", "ps", "pgrep", "sort",
        "uniq", "cut", "tr", "diff", "cmp", "md5sum", "sha1sum", "sha256sum", "readlink",
        "realpath", "basename", "dirname", "test", "[", "true", "false", "cd", "less", "more",
        "column", "nl", "jq", "yq", "hostname", "lsof", "top", "htop", "history", "sed", "awk",
    }
)  # fmt: skip
# git subcommands that only read.
_READ_ONLY_GIT = frozenset(
    {"status", "diff", "log", "show", "rev-parse", "ls-files", "blame", "describe", "shortlog"}
)
# Options that make an otherwise read-only program write (``sed -i``, ``sort -o``).
_WRITING_PROGRAM_OPTIONS = {"sed": ("-i", "--in-place"), "sort": ("-o", "--output")}
# Since SHELL_READS_PATCH: curl options that send data, pick a method (``-X GET`` included:
# conservative), write a file or read options from one; short ones anywhere in a cluster
# (``-sO``; a letter of a value written on, ``-Hx-o``, errs towards a change).
_CURL_ACTING_LETTERS = frozenset("XdFToODcK")
_CURL_ACTING_OPTIONS = (
    *("--request", "--data", "--form", "--upload-file", "--json", "--output", "--remote-name"),
    *("--cookie-jar", "--dump-header", "--config"),
)
# The arguments a tool is given a command in.
_COMMAND_ARGUMENTS = ("command", "cmd")
# Shells whose ``-c`` script is the command of an argument list.
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ash", "ksh", "fish"})
_SCRIPT_OPTIONS = frozenset({"-c", "-lc", "-ic"})
# Anything that can write a file or run another command.
_UNSAFE = re.compile(r">|\$\(|`|<\(|\btee\b|\bxargs\b|-exec\b|-execdir\b|-delete\b|-fprint")
# Redirections that write nothing: stderr into stdout, output thrown away.
_HARMLESS_REDIRECT = re.compile(r"\s*\d?>&\d|\s*\d?>\s*/dev/null")
_SEPARATORS = re.compile(r"\|\||&&|[|;]")
# Since LOOKS_AND_IDS_PATCH: a PowerShell cmdlet (Verb-Noun, any case) whose verb only reads,
# and the Format- cmdlets that only lay out their input (Format-Volume writes a disk).
_READING_CMDLET = re.compile(
    r"(?i)(?:(?:get|select|measure|sort|where|test|resolve|compare|group|convertto"
    r"|convertfrom)-[a-z]+|format-(?:table|list|wide|custom|hex))"
)
# Programs whose output is only what they were given (or nothing): a command of these alone
# looks at nothing (LOOKS_AND_IDS_PATCH).
_SAYS_ONLY_ITS_WORDS = frozenset({"echo", "printf", "true", "false", ":", "sleep"})


def _part_is_inspection(part: str, curl: bool, looks: bool = False) -> bool:
    try:
        words = shlex.split(part)
    except ValueError:
        return False
    while words and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=\S*", words[0]):
        words = words[1:]  # a leading VAR=value assignment
    if not words:
        return False
    program = words[0].rsplit("/", 1)[-1]
    if curl and program == "curl":
        return not any(
            w.startswith(_CURL_ACTING_OPTIONS)
            if w.startswith("--")
            else w[:1] == "-" and not _CURL_ACTING_LETTERS.isdisjoint(w[1:])
            for w in words[1:]
        )
    if program == "git":
        rest = [w for w in words[1:] if not w.startswith("-")]
        return bool(rest) and rest[0] in _READ_ONLY_GIT
    if program == "find":
        return True  # its writing actions are refused by _UNSAFE
    if looks and _READING_CMDLET.fullmatch(program):
        return "{" not in part
    if program not in _READ_ONLY_PROGRAMS:
        return False
    writing = _WRITING_PROGRAM_OPTIONS.get(program, ())
    if program == "awk":
        # awk writes only through print > file or system(), both caught above or here.
        return "system(" not in part
    return not any(w.startswith(writing) for w in words[1:] if writing and w.startswith("-"))


def command_text(call: ToolCall, *, any_shell: bool = False) -> str | None:
    """The command a call gives, as text: its string ``command`` argument; with
    ``any_shell`` (``SHELL_READS_PATCH``) also ``cmd``, and an argument list (a shell's
    ``-c`` script, or the words joined)."""
    arguments = call.arguments or {}
    if not any_shell:
        command = arguments.get("command")
        return command if isinstance(command, str) else None
    for key in _COMMAND_ARGUMENTS:  # a loop, not a generator: asked of every call, four times
        if key in arguments:
            value = arguments[key]
            break
    else:
        return None
    if isinstance(value, str):
        return value
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        return None
    words: list[str] = value
    if len(words) == 3 and words[0].rsplit("/", 1)[-1] in _SHELLS and words[1] in _SCRIPT_OPTIONS:
        return words[2]
    return shlex.join(words)


def is_inspection(call: ToolCall, *, any_shell: bool = False, looks: bool = False) -> bool:
    """True for a shell call whose command only reads (``ls``, ``git status``, ``grep``,
    ``ps | grep x``): its success changes nothing, so it is not a change of the world.
    ``any_shell`` (``SHELL_READS_PATCH``): any tool given a command, and ``curl`` that
    only looks; ``looks`` (``LOOKS_AND_IDS_PATCH``): each line a command of its own, and
    PowerShell's readers too."""
    if not any_shell and call.name != SHELL_TOOL:
        return False
    command = command_text(call, any_shell=any_shell)
    if command is None:
        return False
    command = _HARMLESS_REDIRECT.sub("", command)
    if not command.strip() or _UNSAFE.search(command):
        return False
    if looks:
        command = _one_per_line(command)
    parts = [p.strip() for p in _SEPARATORS.split(command)]
    return all(parts) and all(_part_is_inspection(p, any_shell, looks) for p in parts)


def _one_per_line(command: str) -> str:
    """``command`` with each of its lines a command of its own (``ls\nrm -rf build`` is two,
    which before ``LOOKS_AND_IDS_PATCH`` read as one ``ls`` with odd arguments)."""
    return ";".join(line for line in command.splitlines() if line.strip())


def looks_at_nothing(call: ToolCall) -> bool:
    """True for a call given a command (:func:`command_text`) whose every program only prints
    what it was given, or nothing (``echo``, ``printf``, ``true``, ``sleep``; no variable):
    its answer is its own words, so whatever it waited for, it saw none of it."""
    command = command_text(call, any_shell=True)
    if command is None or not command.strip() or "$" in command or _UNSAFE.search(command):
        return False  # ``$HOME`` prints what the environment holds
    for part in _SEPARATORS.split(_one_per_line(command)):
        try:
            words = shlex.split(part)
        except ValueError:
            return False
        if not words or words[0] not in _SAYS_ONLY_ITS_WORDS:
            return False
    return True
