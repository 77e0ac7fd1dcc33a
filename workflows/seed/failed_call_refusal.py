"""The failed-call repeat refusal: never run an unchanged repeat of a call that already failed.

Seed ``004_…`` and docs/architecture.md, "The failed-call refusal". A prompt keeps one
:class:`FailedCallLog` (in ``workflows.seed.protections.BatchProtections``): after a call ran and
failed it records the call's digest with a masked reason; before clearing a call to run it
checks the digest and, on a hit, answers the model with the earlier reason instead of
running the tool (``workflows.contracts.synthetic_outcomes.refused_outcome``). Everything here is
pure and deterministic.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import re
from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field

from workflows.contracts.outcome import ToolOutcome
from workflows.seed.recency import remember_latest

REMEMBERED_FAILURES = 64
# Built-in tools whose success can change what a repeated call would meet (a file edited,
# a command run, time passed). Their success forgets earlier failures: the world those
# failures were recorded against is gone.
STATE_CHANGING_TOOLS = frozenset({"write_file", "edit_file", "run_shell_command"})
MAX_REPEATS = 3
PATH_HIDDEN_TEXT = "[a path outside the workspace]"
MAX_REASON_CHARS = 500


class RefusalMode(StrEnum):
    OFF = "off"
    SHADOW = "shadow"
    ENFORCE = "enforce"


def parse_refusal_mode(value: str | None) -> RefusalMode | None:
    if value is None:
        return None
    try:
        return RefusalMode(value.strip().lower())
    except ValueError:
        return None


class RepeatCheck(StrEnum):
    """What to do with a call before it runs."""

    RUN = "run"
    WOULD_REFUSE = "would_refuse"  # shadow: count and log, but run it
    REFUSE = "refuse"


def argument_digest(tool_name: str, arguments: Mapping[str, Any] | None) -> str:
    """sha256 over the tool name and the normalized arguments.

    Normalized means JSON with sorted keys and no insignificant whitespace, so equal values
    in any key order give one digest.
    """
    payload = json.dumps(
        {"tool": tool_name, "arguments": arguments},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        default=str,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


# An absolute POSIX path, a home path or a Windows drive path. A path glued to a preceding
# word ("and/or", "1/2") is not one, except after a short option ("-I/usr/include"); a
# URL's "//host" is not one either, but a file:// URL's path is. Colons end a path so
# "file:12" grep locations keep their line number.
_PATH_CHARS = r"[^\s'\"`<>|;,:()\[\]{}]"
_PATH_PATTERN = re.compile(
    rf"file://(?P<file_url>/{_PATH_CHARS}+)"
    rf"|(?:(?<![\w/.~:-])|(?<=\s-[A-Za-z])|(?<=^-[A-Za-z])|(?<=:)(?!//))"
    rf"(?P<path>~?/{_PATH_CHARS}+|[A-Za-z]:\\[^\s'\"`<>|;,()\[\]{{}}]*)"
)
_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _inside(path: str, workspace_root: str) -> bool:
    if not path.startswith("/") or not workspace_root:
        return False
    root = posixpath.normpath(workspace_root)
    normalized = posixpath.normpath(path)
    return normalized == root or normalized.startswith(root.rstrip("/") + "/")


def mask_paths(text: str, workspace_root: str) -> str:
    """Replace every absolute path outside ``workspace_root`` with :data:`PATH_HIDDEN_TEXT`."""

    def replace(match: re.Match[str]) -> str:
        path = match.group("file_url") or match.group("path")
        if _inside(path, workspace_root):
            return match.group(0)
        return "file://" + PATH_HIDDEN_TEXT if match.group("file_url") else PATH_HIDDEN_TEXT

    return _PATH_PATTERN.sub(replace, text)


def masked_reason(text: str, workspace_root: str) -> str:
    """The reason as the model may see it again: paths masked, control characters
    escaped, length bounded."""
    reason = mask_paths(text, workspace_root)
    reason = _CONTROL_CHARS.sub(lambda m: f"\\x{ord(m.group(0)):02x}", reason).strip()
    if len(reason) > MAX_REASON_CHARS:
        reason = reason[:MAX_REASON_CHARS].rstrip() + " … [cut]"
    return reason or "(no reason was reported)"


def refusal_text(tool_name: str, reason: str) -> str:
    return (
        f"Refused: this exact {tool_name} call already failed earlier in this prompt, so it "
        "was not run again. Change the call (its arguments or the approach) instead of "
        f"repeating it. Earlier failure: {reason}"
    )


def repeat_limit_stop_message(max_repeats: int) -> str:
    return (
        "System: Automatic continuation stopped because the model repeated failed tool calls "
        f"unchanged more than MAX_REPEATS ({max_repeats}) times. New user input is required "
        "to continue."
    )


class FailedCallLog(BaseModel):
    """A prompt's memory of failed calls: digest → masked reason, oldest first."""

    mode: RefusalMode = RefusalMode.ENFORCE
    remembered_limit: int = Field(default=REMEMBERED_FAILURES, ge=1)
    max_repeats: int = Field(default=MAX_REPEATS, ge=0)
    failed: dict[str, str] = Field(default_factory=dict)
    repeats: int = 0
    would_refuse: int = 0

    def record(self, digest: str, outcome: ToolOutcome, workspace_root: str) -> bool:
        """Remember ``outcome`` if the call ran and failed; True when it was recorded.

        Successes, invalid parameters, permission denials, cancellations and refusals
        never ran-and-failed, so they are not recorded.
        """
        if self.mode is RefusalMode.OFF or outcome.refused_repeat or not outcome.ran_and_failed:
            return False
        reason = masked_reason(outcome.error_message or outcome.content, workspace_root)
        remember_latest(self.failed, digest, reason, self.remembered_limit)
        return True

    def check(self, digest: str) -> RepeatCheck:
        """Decide a call before it runs, counting refusals (and shadow would-refusals)."""
        if self.mode is RefusalMode.OFF or digest not in self.failed:
            return RepeatCheck.RUN
        if self.mode is RefusalMode.SHADOW:
            self.would_refuse += 1
            return RepeatCheck.WOULD_REFUSE
        self.repeats += 1
        return RepeatCheck.REFUSE

    def forget_failures(self) -> int:
        """Forget every remembered failure (after a state-changing call succeeded), so a
        recheck after a fix runs again; counters are kept. Returns how many were dropped."""
        dropped = len(self.failed)
        self.failed.clear()
        return dropped

    def earlier_reason(self, digest: str) -> str | None:
        return self.failed.get(digest)

    @property
    def limit_exceeded(self) -> bool:
        return self.repeats > self.max_repeats
