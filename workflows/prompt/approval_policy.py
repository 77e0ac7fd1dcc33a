"""The approval policy: which rule decides a call, and what it decides (docs/protections.md,
"Approval rules"; the rule language is ``workflows/contracts/approval.py``).

Pure and deterministic, evaluated in the workflow for every call the protections cleared:
the same call, rules and answers always give the same decision, on any worker and on replay.

Shell commands are read per segment: ``a && b; c | d`` is three commands for the rules. An
``allow`` (or ``ask``) rule with a ``command`` matches only when it matches every segment, so
``git status && rm -rf x`` is not allowed by a rule for ``git status*``; a ``deny`` rule
matches when it matches any segment. Quoting is not parsed: an operator character inside
quotes also splits, which can only make an allow rule match less often.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from workflows.contracts.approval import (
    PRESET_PRIORITY,
    ApprovalDecision,
    ApprovalRule,
)
from workflows.contracts.outcome import ToolCall
from workflows.contracts.prompt_options import MUTATING_TOOLS_ALLOWED_IN_AUTO_EDIT, ApprovalMode

# The arguments that name what a file tool touches.
PATH_ARGUMENTS = ("path", "file_path", "absolute_path", "dir_path", "directory")
_SEGMENTS = re.compile(r"&&|\|\||[;|&\n]")


def _preset(mode: ApprovalMode) -> tuple[ApprovalRule, ...]:
    """The approval mode as rules: what it decided before rules existed."""
    allow = ApprovalRule(
        name=f"{mode.value} mode", decision=ApprovalDecision.ALLOW, priority=PRESET_PRIORITY
    )
    if mode is ApprovalMode.YOLO:
        return (allow,)
    ask = ApprovalRule(
        name=f"{mode.value} mode: changes ask",
        decision=ApprovalDecision.ASK,
        mutating=True,
        priority=PRESET_PRIORITY,
    )
    if mode is ApprovalMode.DEFAULT:
        return (allow, ask)
    edits = tuple(
        ApprovalRule(
            name=f"{mode.value} mode: edits run",
            decision=ApprovalDecision.ALLOW,
            tool=tool,
            priority=PRESET_PRIORITY + 1,  # above the preset's own "changes ask"
        )
        for tool in sorted(MUTATING_TOOLS_ALLOWED_IN_AUTO_EDIT)
    )
    return (allow, ask, *edits)


PRESETS: Mapping[ApprovalMode, tuple[ApprovalRule, ...]] = {m: _preset(m) for m in ApprovalMode}


def command_segments(command: str) -> list[str]:
    """The simple commands of a command line, whitespace collapsed."""
    return [" ".join(s.split()) for s in _SEGMENTS.split(command) if s.strip()]


def _path_of(arguments: Mapping[str, Any]) -> str | None:
    for name in PATH_ARGUMENTS:
        value = arguments.get(name)
        if isinstance(value, str) and value:
            return value.removeprefix("./")
    return None


@dataclass(frozen=True)
class _Call:
    """What the rules read of a call, read once per call (not once per rule)."""

    name: str
    mutating: bool
    path: str | None
    command: str | None  # whitespace collapsed
    segments: tuple[str, ...]

    @classmethod
    def of(cls, call: ToolCall, mutating: bool) -> _Call:
        arguments = call.arguments or {}
        command = arguments.get("command")
        if not isinstance(command, str):
            return cls(call.name, mutating, _path_of(arguments), None, ())
        line = " ".join(command.split())
        return cls(call.name, mutating, _path_of(arguments), line, tuple(command_segments(line)))


def matches(rule: ApprovalRule, call: ToolCall, *, mutating: bool) -> bool:
    """Whether ``rule`` applies to ``call`` (of a tool that is ``mutating`` or not)."""
    return _matches(rule, _Call.of(call, mutating))


def _matches(rule: ApprovalRule, call: _Call) -> bool:
    if rule.tool != "*" and not fnmatch.fnmatchcase(call.name, rule.tool):
        return False
    if rule.mutating is not None and rule.mutating != call.mutating:
        return False
    if rule.path is not None and (
        call.path is None or not fnmatch.fnmatchcase(call.path, rule.path)
    ):
        return False
    if rule.exact_command is not None and call.command != rule.exact_command:
        return False
    if rule.command is not None:
        if not call.segments:
            return False
        hit = (fnmatch.fnmatchcase(segment, rule.command) for segment in call.segments)
        return any(hit) if rule.decision is ApprovalDecision.DENY else all(hit)
    return True


def decide(rules: Iterable[ApprovalRule], call: ToolCall, *, mutating: bool) -> ApprovalRule | None:
    """The rule that decides ``call``: the highest priority among those that match, the
    strictest at equal priority (the first written among equals); ``None`` when none does."""
    return _decide(rules, _Call.of(call, mutating))


def _decide(rules: Iterable[ApprovalRule], call: _Call) -> ApprovalRule | None:
    best: ApprovalRule | None = None
    for rule in rules:
        if not _matches(rule, call):
            continue
        if best is None or (rule.priority, rule.decision.strictness) > (
            best.priority,
            best.decision.strictness,
        ):
            best = rule
    return best


@dataclass(frozen=True)
class Approval:
    """How a call was decided, and by which rule."""

    decision: ApprovalDecision
    rule: str


@dataclass(frozen=True)
class ApprovalPolicy:
    """One prompt's layers: the mode's preset and the operator's rules; the session's rules
    (only tighter); the calls the user allowed for the session."""

    operator: tuple[ApprovalRule, ...] = ()
    session: tuple[ApprovalRule, ...] = ()
    remembered: tuple[ApprovalRule, ...] = ()

    def decide(self, mode: ApprovalMode, call: ToolCall, *, mutating: bool) -> Approval:
        seen = _Call.of(call, mutating)
        base = _decide((*PRESETS[mode], *self.operator), seen)
        assert base is not None  # every preset has a rule for every call
        approval = Approval(base.decision, base.name)
        # A session's allow rules could only loosen: they have no effect.
        strict = (r for r in self.session if r.decision is not ApprovalDecision.ALLOW)
        tighter = _decide(strict, seen)
        if tighter is not None and tighter.decision.strictness > approval.decision.strictness:
            approval = Approval(tighter.decision, tighter.name)
        if approval.decision is ApprovalDecision.ASK:
            allowed = _decide(self.remembered, seen)
            if allowed is not None:
                approval = Approval(ApprovalDecision.ALLOW, allowed.name)
        return approval


def remembered_rule(call: ToolCall, summary: str) -> ApprovalRule:
    """The rule "allow always for this session" adds for ``call``: the same tool with the
    same command or path, nothing wider (``summary``: the call on one line, its name)."""
    arguments = call.arguments or {}
    command = arguments.get("command")
    path = _path_of(arguments)
    return ApprovalRule(
        name=f"allowed for this session: {summary}"[:100],
        decision=ApprovalDecision.ALLOW,
        tool=_literal(call.name),
        exact_command=" ".join(command.split()) if isinstance(command, str) else None,
        path=_literal(path) if path is not None and not isinstance(command, str) else None,
    )


def _literal(text: str) -> str:
    """``text`` as a glob that matches only itself."""
    return re.sub(r"([*?\[])", r"[\1]", text)
