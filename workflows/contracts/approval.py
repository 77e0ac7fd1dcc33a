"""Approval rules: which calls run, which ask the user first, which never run.

docs/protections.md, "Approval rules". A rule matches a tool (a name glob:
``run_shell_command``, ``mcp__git__*``) and, optionally, what the call does: its ``command``
(the shell; a glob over each simple command of the line, so ``npm run test*`` matches
``npm run test -- -k x``), its ``path`` (file tools; a glob over the workspace-relative
path, ``*`` crossing directories), whether the tool is ``mutating``. Its ``decision`` is
``allow``, ``ask`` or ``deny``. The highest ``priority`` among the matching rules decides;
at equal priority the strictest wins (deny, then ask, then allow).

Three layers, evaluated in the workflow (``workflows/prompt/approval_policy.py``): the
operator's rules over the approval mode's preset (each mode is a preset of rules at the
lowest priority); the session's own rules, which can only tighten that decision; and the
calls the user allowed "always for this session", which turn an ``ask`` into ``allow`` for
the same call again but never lift a ``deny``.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, field_validator


class ApprovalDecision(StrEnum):
    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"

    @property
    def strictness(self) -> int:
        return _STRICTNESS[self]


_STRICTNESS = {ApprovalDecision.ALLOW: 0, ApprovalDecision.ASK: 1, ApprovalDecision.DENY: 2}
# The presets' rules sit at the lowest priority (a rule written at it ties with them, and
# the stricter decides).
PRESET_PRIORITY = -1000


class ApprovalRule(BaseModel):
    """One rule; ``name`` is what events, results and the UI say decided a call."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1, max_length=100)
    decision: ApprovalDecision
    tool: str = Field(default="*", min_length=1, max_length=200)
    command: str | None = Field(default=None, min_length=1, max_length=1000)
    # The whole command line, exactly (whitespace collapsed): what "allow always for this
    # session" remembers of a shell call, compound or not.
    exact_command: str | None = Field(default=None, min_length=1, max_length=10_000)
    path: str | None = Field(default=None, min_length=1, max_length=1000)
    # Strict: a yes/no or a number must be one, never a string or a boolean taken for it.
    mutating: bool | None = Field(default=None, strict=True)
    priority: int = Field(default=0, ge=PRESET_PRIORITY, le=-PRESET_PRIORITY, strict=True)

    @field_validator("priority", mode="before")
    @classmethod
    def _integral_number(cls, value: object) -> object:
        # JSON has one number type: 5.0 is the integer 5 to a JSON Schema (and to a client
        # that wrote it), so it is taken; a string or a boolean still is not (strict).
        if isinstance(value, float) and value.is_integer():
            return int(value)
        return value


class ApprovalRules(BaseModel):
    """A rule list as operators and sessions write it (``rules:`` in YAML or JSON)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rules: tuple[ApprovalRule, ...] = Field(default=(), max_length=500)
