"""Progress evidence: what a call's result says about whether the model is getting anywhere.

The seeds key every rule on *what was called* (the tool and its error type, or the call's
argument digest) and never look at *what came back*. Real sessions show why that is not
enough (docs/protections.md, "Loop profiles"): a build that fails differently after every
edit is progress, and a status command that fails the same way while a job runs is waiting,
while a command whose output is the same every time, with only a timestamp or a pid
drifting, is a loop. The recommended profile's rules therefore compare results through a
*fingerprint*: a digest of the output with the parts that always vary (timestamps, pids,
durations, addresses, the call's own argument values, paths) masked, so two results share a
fingerprint exactly when they say the same thing.

A fingerprint is private, like the failure key: it is kept in workflow state only, and is
never logged, labelled or put in a search attribute. Everything here is pure and
deterministic (no clock, no I/O), so the workflow and the benchmark simulator reach the
same verdicts.

**Time as evidence.** An identical call that waited is not the same as one that spins
(workflows/rules/evidence.py, "Time as evidence"). A call *waited* when its point is to let
time pass (:func:`waits_for_time`: ``sleep``, ``kubectl wait``, a ``wait`` tool), and also
when it *succeeded after taking* at least :data:`LONG_CALL_SECONDS` on the prompt's clock
(:func:`waited`): a long poll, a blocking status call, a tool that honoured a retry-after
before it answered. The world had that long to change, so the same answer again is a
status, not a spin; unless the call *acts* (a state-changing tool: a subagent dispatch
that ran for minutes spent them working, and dispatching it again for the same answer is a
repeat however long each run takes); and, like a sleep, it counts as time passed for every
other call (``LoopRules.wait_epoch``). Only successes: a *failure* that took long is a slow
build, a test run or a start that timed out, and the same slow failure again is exactly the
cycle the failure-cycle rule exists for (a dev server that times out the same way after every
restart), so a failure waits only by what it is (:func:`waits_for_time`), as before. The
price of the measure: a slow check re-run with nothing changed (a green suite that takes a
minute) waited too, so the identical-result rule no longer counts it; catching that takes
evidence of what changed between the runs, not of time.

The clock *between* two identical calls is deliberately not evidence on its own. That gap
is mostly the model's own latency and the harness's overhead: a slower model (a reasoning
model taking 20 s a turn) spinning on a poll that answers at once is as stuck as a fast
one, and a rule that excused it would get weaker exactly for slow models and would depend
on the provider's speed and the worker's load, not on the world (the simulator and the
workflow would disagree too). Time the model *gave* the world is visible already, as a
call: a separate ``sleep``/``wait`` call, or any call that itself took long, advances the
wait epoch, and every rule reads that. The clock itself reaches every rule
(``RuleReview.now``) for rules that need elapsed time; none of the three here does.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from enum import StrEnum
from typing import Any, NamedTuple

from workflows.contracts.outcome import ExecutionStatus, TerminalStatus, ToolCall, ToolOutcome
from workflows.rules.inspection import command_text, is_inspection, looks_at_nothing
from workflows.rules.normalize import Reading, mask_arguments, read_whole_exchange
from workflows.rules.searches import search_signature

_VOLATILE_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # ISO-8601 and common log timestamps, then bare clock times.
    (
        re.compile(
            r"\d{4}-\d{2}-\d{2}[T ]\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?"
        ),
        "<time>",
    ),
    (re.compile(r"\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b"), "<time>"),
    # UUIDs and long hex runs (commit ids, addresses, hashes in asset names).
    (
        re.compile(
            r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"
        ),
        "<id>",
    ),
    (re.compile(r"\b0x[0-9a-fA-F]+\b"), "<addr>"),
    (re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,}\b"), "<hex>"),
    # Durations: "0.53s", "1m12s", "48.21 s", "350ms", "2 minutes".
    (
        re.compile(
            r"\b\d+(?:\.\d+)?\s*(?:ms|milliseconds?|µs|us|ns|s|sec|secs|seconds?|m|min|mins|"
            r"minutes?|h|hours?)\b(?:\s*\d+(?:\.\d+)?\s*(?:ms|s|sec|seconds?|m|min)\b)*"
        ),
        "<duration>",
    ),
    (re.compile(r"\b\d+m\d+(?:\.\d+)?s\b"), "<duration>"),
    # Process ids, attempt counters and ports in "pid 123", "attempt 4", "try #3".
    (
        re.compile(r"\b(pid|process|attempt|try|retry|run|job|request)(\s*[#:=]?\s*)\d+\b", re.I),
        r"\1\2<n>",
    ),
)
_PATH = re.compile(r"(?<![\w.~-])(?:~|\.{1,2})?/[^\s'\"`<>|;,:()\[\]{}]+")
_SPACE = re.compile(r"\s+")


def normalized_output(text: str, arguments: Mapping[str, Any] | None = None) -> str:
    """``text`` with what always varies masked, so equal meanings compare equal.

    The call's own string arguments are masked first (``normalize.mask_arguments``), while
    the rest of the output (which test failed, which line the compiler names) is kept.
    """
    out = mask_arguments(text, arguments)
    for pattern, replacement in _VOLATILE_PATTERNS:
        out = pattern.sub(replacement, out)
    out = _PATH.sub("<path>", out)
    return _SPACE.sub(" ", out).strip()


def output_fingerprint(text: str, arguments: Mapping[str, Any] | None = None) -> str:
    """A private digest of :func:`normalized_output`; equal exactly when the outputs say the
    same thing. Never log or label it."""
    normalized = normalized_output(text, arguments)
    return hashlib.sha256(normalized.encode("utf-8")).hexdigest()[:32]


# A shell command that waits for time to pass (or for something else to happen) before it
# answers: its result depends on when it runs, so an identical repeat is not a repeat.
_WAITING_COMMAND = re.compile(
    r"(?:^|[;&|(]|\bdo\b|\bthen\b)\s*(?:sleep|wait|watch)\b"
    r"|\bgh\s+run\s+watch\b|\bkubectl\s+(?:wait|rollout\s+status)\b"
    r"|--watch\b|--wait\b|\buntil\b.*\bdo\b"
)
_WAITING_TOOL_NAMES = frozenset({"sleep", "wait"})
# Since ``seawall-loop-quality-v4``: the same waits with options between the program and its
# subcommand (``kubectl -n shop rollout status``, ``gh -R org/repo run watch``), which the
# pattern above, kept for prompts started before it, does not see.
_WAITING_WITH_OPTIONS = re.compile(
    r"\b(?:kubectl|gh)(?:\s+--?[\w-]+(?:[ =](?!-)\S+)?)+\s+"
    r"(?:wait|rollout\s+status|run\s+watch|pr\s+checks\s+.*--watch)\b"
)


# A successful call that took at least this long (seconds on the prompt's clock) waited
# for the world: a long poll (CI and queue APIs hold a request 20-60 s), a blocking wait, a
# tool honouring a retry-after. Ten seconds is far above what an instant status call,
# listing or read costs (milliseconds to a second or two, model latency not included: it
# is not the call's), and at or below the shortest long poll or back-off a tool applies.
LONG_CALL_SECONDS = 10.0


def waits_for_time(call: ToolCall, *, normalized: bool = False, any_shell: bool = False) -> bool:
    """True for a call whose point is to let time pass (``sleep 30``, ``kubectl rollout
    status``, ``gh run watch``, a ``wait`` tool): after it, the world may have changed.
    ``normalized``: a prompt started since ``seawall-loop-quality-v4``, which also sees
    those commands with options before their subcommand; ``any_shell``: one started since
    ``SHELL_READS_PATCH``, which reads a command given as ``cmd`` or as an argument list
    (``inspection.command_text``)."""
    name = call.name.rsplit("__", 1)[-1].lower()
    if name in _WAITING_TOOL_NAMES:
        return True
    command = command_text(call, any_shell=any_shell)
    if command is None:
        return False
    return bool(_WAITING_COMMAND.search(command)) or (
        normalized and bool(_WAITING_WITH_OPTIONS.search(command))
    )


# --- transient failures -----------------------------------------------------------------

# The recommended profile admits an unchanged retry after a failure that says it was
# transient. The list is deliberately narrow: an explicit timeout classification, and text
# that names rate limiting, a gateway or availability status (429/502/503/504), or a reset
# connection. Seed 000 lists inferring retryability from text as a non-goal of its design
# (its guard keys on structured error types only); this rule only admits one more attempt,
# and the failure-cycle rule still counts each of them (docs/protections.md, "Loop profiles").
_TRANSIENT_TEXT = re.compile(
    r"\brate[- ]?limit(?:ed|ing|s)?\b"
    r"|\btoo many requests\b"
    r"|\b(?:http(?:/\d(?:\.\d)?)?|status(?: code)?|code|error)\s*[:=#]?\s*(?:429|502|503|504)\b"
    r"|\b(?:429|502|503|504)\b\s*(?:too many requests|bad gateway|service unavailable|"
    r"gateway time-?out)"
    r"|\bbad gateway\b|\bservice unavailable\b|\bgateway time-?out\b"
    r"|\beconnreset\b|\bconnection reset by peer\b"
    r"|\btemporarily unavailable\b",
    re.IGNORECASE,
)
TRANSIENT_ERROR_TYPES = frozenset({"execution_timeout"})


def transient_failure(execution_error_type: str | None, text: str) -> bool:
    """True for a failure that says another identical attempt may well work: a timeout, a
    rate limit, an unavailable or failing gateway, a reset connection."""
    if (execution_error_type or "").strip() in TRANSIENT_ERROR_TYPES:
        return True
    return bool(_TRANSIENT_TEXT.search(text))


# --- refreshes --------------------------------------------------------------------------

# Arguments that name the thing a call reads or changes. A successful call naming the same
# thing as a failed one (re-reading the file an edit failed on) refreshed the model's view.
PATH_ARGUMENT_KEYS = frozenset(
    {
        "path",
        "file_path",
        "absolute_path",
        "filename",
        "file",
        "dir_path",
        "directory",
        "url",
        "uri",
    }
)


def path_values(call: ToolCall) -> frozenset[str]:
    """The call's top-level path-like argument values, normalized (``./a/`` is ``a``)."""
    values: set[str] = set()
    for key, value in (call.arguments or {}).items():
        if key.lower() in PATH_ARGUMENT_KEYS and isinstance(value, str):
            normalized = value.strip().removeprefix("./").rstrip("/")
            if normalized:
                values.add(normalized)
    return frozenset(values)


# --- verifications and inspections ----------------------------------------------------

# A *verification* is a call whose point is to check the workspace without changing it: a
# test run, a linter, a type checker, a build (the repeated-verification rule, R6,
# docs/protections.md, "The rules"). The classification is deliberately conservative:
# a shell command is a verification only when every part of it (split on ``&&``, ``||``,
# ``;`` and pipes) is a known checker, a ``cd``, or a read-only filter of its output, and
# nothing in it fixes, writes or updates (``--fix``, ``--write``, ``-u``, a redirection to
# a file). Anything else is not a verification, so it counts as whatever it is (a change,
# for a shell command). Its key is the checkers it runs, whatever their flags or selection
# (``pytest -q``, ``pytest -v`` and ``pytest tests/`` are one check); private, like a digest.

_RUNNER_PREFIXES = frozenset({"uv", "poetry", "pipenv", "hatch", "pdm", "rye"})  # ``<x> run``
_PYTHON = re.compile(r"^python(?:\d(?:\.\d+)?)?$")
_PACKAGE_MANAGERS = frozenset({"npm", "pnpm", "yarn", "bun"})
_PACKAGE_SCRIPTS = frozenset(
    {"test", "tests", "lint", "typecheck", "type-check", "types", "check", "build", "tsc"}
)
# Programs that are a check by themselves, whatever their flags (minus the fixing ones).
_CHECKERS = frozenset(
    {
        "pytest",
        "py.test",
        "mypy",
        "pyright",
        "flake8",
        "pylint",
        "eslint",
        "jest",
        "vitest",
        "mocha",
        "tsc",
        "shellcheck",
        "hadolint",
        "rspec",
        "phpunit",
    }
)
# Programs that check with one of these subcommands.
_SUBCOMMAND_CHECKERS: dict[str, frozenset[str]] = {
    "ruff": frozenset({"check"}),
    "go": frozenset({"test", "vet", "build"}),
    "cargo": frozenset({"test", "check", "clippy", "build"}),
    "make": frozenset({"test", "check", "lint", "typecheck"}),
    "golangci-lint": frozenset({"run"}),
    "mvn": frozenset({"test", "verify"}),
    "./gradlew": frozenset({"test", "check", "build"}),
    "gradle": frozenset({"test", "check", "build"}),
    "dotnet": frozenset({"test", "build"}),
    "deno": frozenset({"test", "lint", "check"}),
}
# Formatters that only check with ``--check``.
_CHECK_FLAG_CHECKERS = frozenset({"black", "prettier", "isort", "rustfmt"})
_FIXING_FLAG = re.compile(
    r"^(?:--fix(?:=.*)?|--fix-only|--write|-w|--update-snapshots?|-u|--snapshot-update|"
    r"--in-place|-i|--inplace|--unsafe-fixes|--watch|--watchAll)$"
)
# Read-only filters of a checker's output (``pytest -q | tail -20``) and read-only
# inspections of the workspace (``git status``, ``ls``): they change nothing.
_READ_ONLY_PROGRAMS = frozenset(
    {"cat", "head", "tail", "grep", "rg", "wc", "ls", "pwd", "tree", "stat", "file", "less"}
)
_READ_ONLY_GIT = frozenset({"status", "diff", "log", "show", "blame", "rev-parse", "ls-files"})
_WRITES_UNSAFE = re.compile(r"(?<![0-9&])>|>>|\btee\b|`|\$\(")
_SEGMENT_SPLIT = re.compile(r"&&|\|\||;|\||\n")
_REDIRECT_TOKEN = re.compile(r"^\d?>&\d$|^\d?>/dev/null$")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
# Tool names (the part after an MCP server's ``__``) that run a check.
_VERIFYING_TOOL_NAMES = frozenset(
    {
        "run_tests",
        "run_test",
        "test",
        "tests",
        "lint",
        "run_lint",
        "run_linter",
        "typecheck",
        "type_check",
        "check_types",
        "run_typecheck",
        "build",
        "run_build",
    }
)


def _segment_checker(words: list[str]) -> str | None:
    """The checker one command segment runs (``pytest``, ``cargo test``), or ``None``."""
    while words and _ASSIGNMENT.match(words[0]):
        words = words[1:]  # FOO=1 pytest
    if len(words) >= 2 and words[0] in _RUNNER_PREFIXES and words[1] == "run":
        words = words[2:]  # uv run pytest
    elif words and words[0] == "npx":
        words = words[1:]
    if len(words) >= 3 and _PYTHON.match(words[0]) and words[1] == "-m":
        words = words[2:]  # python -m pytest
        if words and words[0] == "unittest":
            return "unittest"
    if not words:
        return None
    program, rest = words[0], words[1:]
    if any(_FIXING_FLAG.match(word) for word in rest):
        return None
    if program in _PACKAGE_MANAGERS:
        script = rest[1] if rest[:1] == ["run"] and len(rest) > 1 else (rest[0] if rest else "")
        return f"{program} {script}" if script in _PACKAGE_SCRIPTS else None
    if program in _CHECKERS:
        return program
    if program in _SUBCOMMAND_CHECKERS:
        return f"{program} {rest[0]}" if rest and rest[0] in _SUBCOMMAND_CHECKERS[program] else None
    if program in _CHECK_FLAG_CHECKERS:
        return program if "--check" in rest else None
    return None


def _read_only(words: list[str]) -> bool:
    if not words:
        return True
    program = words[0]
    if program == "cd" or program in _READ_ONLY_PROGRAMS:
        return True
    return program == "git" and len(words) > 1 and words[1] in _READ_ONLY_GIT


def _shell_words(segment: str) -> list[str]:
    return [word for word in segment.split() if not _REDIRECT_TOKEN.match(word)]


def verification_key(call: ToolCall, *, any_shell: bool = False) -> str:
    """A private key of the checks the call runs (``""``: it is not a verification);
    ``any_shell`` as for :func:`waits_for_time`."""
    name = call.name.rsplit("__", 1)[-1].lower()
    command = command_text(call, any_shell=any_shell)
    if command is not None and not command.strip():
        command = None
    if command is None:
        if name not in _VERIFYING_TOOL_NAMES:
            return ""
        checkers = [f"tool:{name}"]
    else:
        if _WRITES_UNSAFE.search(command):
            return ""
        checkers = []
        for segment in _SEGMENT_SPLIT.split(command):
            words = _shell_words(segment)
            checker = _segment_checker(words)
            if checker is not None:
                checkers.append(checker)
            elif not _read_only(words):
                return ""
        if not checkers:
            return ""
    joined = "\n".join(sorted(set(checkers)))
    return hashlib.sha256(f"verification\n{joined}".encode()).hexdigest()[:32]


# --- one settled call, as the recommended rules read it ---------------------------------


class ResultKind(StrEnum):
    SUCCESS = "success"
    # Ended as an error after the tool was entered (or whether it was is unknown): what
    # the model reads is a failure of the call itself.
    FAILURE = "failure"
    DENIED = "denied"
    # Never ran on the model's account: cancelled, not started (invalid, refused, a
    # resent id, past the cap).
    OTHER = "other"


def result_kind(outcome: ToolOutcome) -> ResultKind:
    if outcome.denied:
        return ResultKind.DENIED
    if outcome.provider_duplicate or outcome.refused_repeat:
        return ResultKind.OTHER
    if outcome.status == TerminalStatus.SUCCESS:
        return ResultKind.SUCCESS
    if outcome.status == TerminalStatus.ERROR and outcome.execution_status not in (
        ExecutionStatus.NOT_STARTED,
        ExecutionStatus.CANCELLED,
    ):
        return ResultKind.FAILURE
    return ResultKind.OTHER


def waited(
    call: ToolCall,
    kind: ResultKind,
    duration: float,
    *,
    acts: bool = False,
    normalized: bool = False,
    any_shell: bool = False,
) -> bool:
    """True for a call after which the world may have changed: it waits by what it is
    (:func:`waits_for_time`), or it succeeded after taking at least
    :data:`LONG_CALL_SECONDS` without acting itself (``acts``: a state-changing tool; a
    failure waits only by what it is; see the module doc)."""
    return waits_for_time(call, normalized=normalized, any_shell=any_shell) or (
        kind is ResultKind.SUCCESS and not acts and duration >= LONG_CALL_SECONDS
    )


def refused_unrun(outcome: ToolOutcome) -> bool:
    """True for a call the runner refused to start (a tool-call limit, a policy, invalid
    arguments): it never ran, and what the model reads is the runner's refusal. Denials,
    cancellations, Seawall's own refusal of a failed repeat and a provider's duplicate are
    not refusals of this kind."""
    return (
        outcome.status == TerminalStatus.ERROR
        and outcome.execution_status == ExecutionStatus.NOT_STARTED
        and not (outcome.denied or outcome.refused_repeat or outcome.provider_duplicate)
    )


class CallEvidence(NamedTuple):
    """One settled call: its tool, its call digest, what came back (as a private
    fingerprint), whether it waited for time to pass (:func:`waited`: by what it is, or a
    success that took long), whether it changed the world (a state-changing tool
    succeeded), and how many such changes the prompt saw before it. Never logged or
    labelled. Immutable (a tuple: one is made per settled call, so it is cheap to make)."""

    tool: str
    digest: str
    kind: ResultKind
    fingerprint: str
    waits: bool
    paths: frozenset[str]
    changes: bool = False
    changes_before: int = 0
    # Seconds the call took on the prompt's clock (0 when unknown or instant).
    duration: float = 0.0
    # The files a successful call changed, as (path digest, content digest) pairs
    # (``ToolOutcome.writes``), when the tool knows them (the built-in file tools, a
    # scenario fixture's ``writes``); private.
    writes: tuple[tuple[str, str], ...] = ()
    # A private key of the checks the call runs (a test suite, a linter; ``""``: none), and
    # whether it is a shell command that only reads (R6; see ``verification_key``).
    verifies: str = ""
    inspects: bool = False
    # What the call searches for, when it is a search (``workflows.rules.searches``): a
    # private digest, equal for two pages of one search; ``None`` for any other call.
    search: str | None = None
    # The runner refused to start it (:func:`refused_unrun`); its kind is ``OTHER``.
    refused: bool = False
    # Since ``seawall-loop-quality-v4`` (``workflows.rules.normalize``): what the call asked
    # and what came back, as the rules compare them ("the same thing again" when the bytes
    # differ); ``None`` before it.
    asked: Reading | None = None
    answer: Reading | None = None
    # Since the normalizer: whether what came back names something the call asked for (one
    # of its argument values, three characters or more): an answer *about* what was asked
    # ("trace tr_3a11: 7 observations" for trace tr_3a11), so the same words for another
    # argument are another answer, not the same one again (R11 and R12 key such calls by
    # what they asked too).
    echoes: bool = False
    # Since the normalizer: what the call names (``normalize.names``: its short top-level
    # argument values, masked), a private digest; R9 and R10 join only calls that name the
    # same things since NOTHING_NEW_PATCH.
    named: str = ""
    # Since LOOKS_AND_IDS_PATCH: the call's command looks at nothing (``sleep 5; echo ok``:
    # ``inspection.looks_at_nothing``), so what it waited for it never saw (R11).
    sees_nothing: bool = False
    # Since WORLD_IDS_PATCH: the ids the call's arguments and its answer hold, as private
    # digests (``normalize.id_digests``) of ID_DIGEST_CHARS each, one after the other (one
    # string a text: kept per answer, it costs one object), and a private digest of the ids
    # the world listed that it acts on (``workflows.rules.world_ids``; ``""``: none): R9 and
    # R10 join only calls that act on the same.
    asked_ids: str = ""
    answer_ids: str = ""
    acts_on: str = ""
    # Since WORLD_IDS_PATCH: the call looks at nothing (``sees_nothing``), so what came back is
    # the model's own words, never news to R11.
    own_words: bool = False
    # Since WORLD_IDS_PATCH: a private digest of the argument values the answer names (what it
    # is about: ``normalize.read_whole_exchange``), ``""`` when none; R11 keys an answer
    # about what was asked by it instead of by the whole call.
    echoed: str = ""

    def answered(self, refusals: bool = True) -> bool:
        """Whether what came back is an answer the rules that compare answers read: a
        success's, and with ``refusals`` the runner's refusal to start the call (the same
        refusal again is a repeat: R3 since PROGRESS_RULES_PATCH, R9, R11 since
        REFUSALS_PATCH). Failures and denials are the failure and denial rules' business."""
        return self.kind is ResultKind.SUCCESS or (refusals and self.refused)


def call_evidence(
    call: ToolCall,
    digest: str,
    outcome: ToolOutcome,
    *,
    state_changing: bool = False,
    changes_before: int = 0,
    duration: float = 0.0,
    window: int | None = None,
    any_shell: bool = False,
    inspects: bool | None = None,
    looks_and_ids: bool = False,
    world_ids: bool = False,
) -> CallEvidence:
    """``duration``: the seconds the call took on the prompt's clock (0: unknown or
    instant). ``window``: read the call through the normalizer (``seawall-loop-quality-v4``),
    this many characters of each text in full (``normalize.window_for``), unless the tool
    activity read it already (``outcome.readings``); ``None``: the fingerprint as before it.
    ``any_shell``: read any tool given a command as a shell (``inspection.is_inspection``);
    ``inspects``: that reading when the caller has it already (``None``: worked out here).
    ``looks_and_ids`` (``LOOKS_AND_IDS_PATCH``): read what a call looked at
    (``sees_nothing``), and a labelled id as one whatever its characters (read here; a tool
    activity reads it so when its input says, ``RunToolInput.labelled_ids``). ``world_ids``
    (``WORLD_IDS_PATCH``): read the ids the call and its answer hold (``asked_ids``,
    ``answer_ids``; a tool activity reads them when ``RunToolInput.world_ids`` says), and an
    answer in the model's own words as one (``own_words``)."""
    text = outcome.error_message or outcome.content
    kind = result_kind(outcome)
    asked = answer = None
    echoes = False
    named = ""
    asked_ids: tuple[str, ...] = ()
    answer_ids: tuple[str, ...] = ()
    echoed = ""
    if window is None:
        fingerprint = output_fingerprint(text, call.arguments)
    else:
        wired = outcome.readings
        if wired is not None:  # read where the call ran (normalize.with_readings)
            asked, answer = Reading.from_wire(wired.asked), Reading.from_wire(wired.answer)
            echoes, named = wired.echoes, wired.named
            asked_ids, answer_ids, echoed = wired.asked_ids, wired.answer_ids, wired.echoed
        else:
            read = read_whole_exchange(
                call.name,
                call.arguments,
                text,
                window=window,
                labelled_ids=looks_and_ids,
                world_ids=world_ids,
            )
            asked, answer, echoes, named, asked_ids, answer_ids, echoed = read
        fingerprint = answer.key
    sees_nothing = looks_and_ids and looks_at_nothing(call)
    return CallEvidence(
        tool=outcome.policy_tool_name or outcome.tool_name,
        digest=digest,
        kind=kind,
        fingerprint=fingerprint,
        waits=waited(
            call,
            kind,
            duration,
            acts=state_changing,
            normalized=window is not None,
            any_shell=any_shell,
        ),
        paths=path_values(call),
        changes=state_changing and kind is ResultKind.SUCCESS,
        changes_before=changes_before,
        duration=duration,
        verifies=verification_key(call, any_shell=any_shell),
        inspects=is_inspection(call, any_shell=any_shell) if inspects is None else inspects,
        writes=outcome.writes if kind is ResultKind.SUCCESS else (),
        search=search_signature(call),
        refused=refused_unrun(outcome),
        asked=asked,
        answer=answer,
        echoes=echoes,
        named=named,
        sees_nothing=sees_nothing,
        asked_ids="".join(asked_ids) if world_ids else "",
        answer_ids="".join(answer_ids) if world_ids else "",
        own_words=world_ids and sees_nothing,
        echoed=echoed if world_ids else "",
    )
