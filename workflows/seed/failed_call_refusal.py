"""The failed-call repeat refusal: never run an unchanged repeat of a call that already failed.

Seed 004, "a repair attempt cannot repeat a failed tool call". A prompt keeps one
:class:`FailedCallLog` (in ``workflows.seed.protections.BatchProtections``) as workflow state:
after a call ran and failed it records the call's digest with a masked reason; before
clearing a call to run it checks the digest and, on a hit, answers the model with the earlier
reason instead of running the tool (``workflows.contracts.synthetic_outcomes.refused_outcome``).
Everything here is pure and deterministic.

**Digest.** :func:`argument_digest` is the SHA-256 of the JSON ``{"tool": name, "arguments":
arguments}`` with sorted keys, no insignificant whitespace, ``ensure_ascii=False`` and
``str()`` for values JSON cannot encode: equal arguments in any key order, nested included,
give one digest. Argument text that was not a JSON object is digested as
``{"<raw>": raw_argument_text}``. The same digest is the call-id dedup's fingerprint.

**What is recorded.** After a batch settles, each call that *ran and failed* (terminal
``error`` and execution ``error``) is recorded as digest → masked reason; re-recording moves it
to the newest end. Nothing is recorded for a success, an invalid-parameter or unknown-tool
call (``not_started``), a permission denial, a cancellation (terminal ``cancelled`` wins over an
execution error), a post-processing failure, a contract violation, a refusal, or anything in
mode ``off``. At most :data:`REMEMBERED_FAILURES` digests (per prompt
``remembered_failures``), the oldest dropped, so a repeat of a dropped failure runs again: the
log is held by the worker that caches the prompt and rebuilt by every replay, and a model that
never stops failing must not grow it without bound.

**Masked reason** (:func:`masked_reason`). The outcome's ``error_message`` (else its
``content``) with every absolute path outside the workspace — POSIX, ``~/`` and Windows drive
paths, ``file://`` URLs — replaced by :data:`PATH_HIDDEN_TEXT` (paths inside the workspace are
kept: the model needs them), control characters escaped as ``\\xNN`` (newline and tab kept),
blanks stripped, and cut to :data:`MAX_REASON_CHARS` with `` … [cut]``; an empty reason is
``(no reason was reported)``. Masking comes before cutting, so a path straddling the cut is
still masked.

**Refusal.** At screening, after call-id dedup and before validation or any permission
request, a call whose digest is in the log is refused in ``enforce``: the tool does not run
and the model gets :func:`refusal_text` with the earlier reason (terminal ``error``, execution
``not_started``, ``execution_denied``, ``refused_repeat=True``). The log changes only after a
batch settles, so two identical calls inside one batch both run. Each refusal adds one to the
prompt's ``refused`` count and to ``seawall_failed_call_refusals`` (outcome ``repeat``) and
writes one ``failed_call_repeat`` line with the tool's safe label. When refusals in one prompt
exceed :data:`MAX_REPEATS` (per prompt ``max_repeats``; the fourth refusal by default) the
prompt stops ``repeated_failed_call`` with :func:`repeat_limit_stop_message`. Modes: ``off``
(record and refuse nothing), ``shadow`` (record; a hit is counted and logged as
``would_refuse`` and runs), ``enforce`` (the default); per prompt ``refusal_mode``. The guard
ignores refused calls as it ignores provider duplicates: a refusal neither advances nor resets
its streak.

**Forgetting after a state-changing success** (beyond the seed). When a call of a
state-changing tool succeeds — :data:`STATE_CHANGING_TOOLS`, or any tool the prompt's tool list
marks as mutating (the ones that ask for permission) — the log forgets every remembered
failure before recording the batch's own (:meth:`FailedCallLog.forget_failures`; the counters
are kept): the world those failures were recorded against is gone, so an identical recheck
after a fix is legitimate work, not a loop. Behind ``seawall-refusal-forgets-after-change-v1``
(docs/architecture.md, "Versioning"): histories from before it replay with the log kept.

The recommended loop profile admits an unchanged repeat instead of refusing it when time
passed, a refresh happened, the failure was transient or the call is a shell command, and
counts an admitted repeat that fails exactly as before toward the same limit (R1,
``workflows.rules.loop_rules``). Everything here is the seed profile's refusal, unchanged.

Departs from the seed: the limit stops the prompt (``loop_detected`` with its own loop type and
stop message), not the run (seed 004 raises ``UnexpectedModelBehavior``), so the session stays
usable and the operator sees the cause; the seed records "a retry or a failure", Seawall has no
``ModelRetry`` and records exactly the calls that ran and failed (invalid-parameter calls are
bounded by the invalid-parameter guard instead, as the seed bounds shell refusals by their own
limit); modes ``off``/``shadow``/``enforce``, so it rolls out like the guard; forgetting after a
state-changing success, above; the scope is one prompt (the seed's "step"): a new prompt starts
with an empty log.
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
    payload = _ARGUMENT_ENCODER.encode({"tool": tool_name, "arguments": arguments})
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


# ``json.dumps`` with these options builds an encoder per call; one shared encoder writes
# the same text.
_ARGUMENT_ENCODER = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
)


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
