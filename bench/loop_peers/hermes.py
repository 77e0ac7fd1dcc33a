"""hermes-agent's tool-call loop guardrails, re-implemented from its published source.

Why it exists: the loop benchmark compares Seawall with the peers' real detectors
(bench/loop_peers/__init__.py). Source: github.com/NousResearch/hermes-agent (too large to
mirror here; read from the stored index):

- ``agent/tool_guardrails.py`` at commit ``06c25ac90be80f38672ba0169814d9620fe8c9fa``:
  ``ToolCallGuardrailConfig`` (thresholds), ``ToolCallGuardrailController``
  (``before_call``, ``after_call``, ``observe_call``, ``_detect_identical_cycle``,
  ``_check_loop_cap``), the tool-name sets and every message text;
- ``run_agent.py`` at ``00075f36dfabd0a0604ce9620a1f6988935fe440``
  (``_append_guardrail_observation``, ``_guardrail_block_result``,
  ``_set_tool_guardrail_halt``) and ``agent/tool_executor.py`` at
  ``0019b9b93bc6edd5789730fd1e2fe420c566ba26`` (``_dispatch_authorized_once``: the
  guardrail's ``before_call`` runs per call, a block answers with a synthetic result);
  the turn ends after the batch when a halt decision was recorded (the tool round in
  ``agent/conversation_loop.py``: ``if agent._tool_guardrail_halt_decision is not None:``
  … ``break``; read in the index without a pinned commit).

The controller is per turn (``reset_for_turn``); a benchmark prompt is one turn. A call's
signature is its tool name and the SHA-256 of its arguments as compact sorted-key JSON;
a result is compared as canonical JSON when it parses, else as its text. Hard stops are
off on attended platforms (cli, tui, desktop, acp, subagent, api_server) and **on** for
unattended ones (``non_interactive_hard_stop_enabled``: gateway, cron): an unattended
benchmark is the latter, :class:`HermesGuardrails` (hard stops always on here). Defaults,
all per turn:

- **exact failure** (same signature failed): warn from the 2nd failure; with hard stops,
  ``before_call`` **blocks** once 5 have failed, so the 6th identical call is refused. A
  successful progress tool (write_file, patch, terminal, …) since the last failure makes
  the next retry a new experiment (its count restarts).
- **same-tool failure** (one tool failing with any arguments): warn from 3; with hard
  stops, **halt** after the 8th, except for failure-tolerant tools (terminal,
  execute_code, process, browser_navigate, web_extract). Any success of the tool clears
  it; a successful progress tool clears every tool's count.
- **idempotent no progress** (a read-only tool — read_file, search_files, web_search, … —
  returned the same result for the same signature): warn from the 2nd; with hard stops,
  ``before_call`` **blocks** the call after 5 such results.
- **identical-call streak** (``observe_call``, any tool except pollers: process_manage
  and names ending ``_get_result``/``_poll``): consecutive calls with the same signature
  and the same result; a "[hermes note: …]" from the 3rd; with hard stops, **halt** after
  the 5th.
- **identical cycle**: the last calls form a cycle of period 2–4 (same signatures and
  results per position) repeated 3 laps → the note; 5 laps → **halt** (a cycle made only of
  pollers is exempt).
- **loop caps** (whatever the hard-stop setting): the 51st ``web_search`` of a turn, and a
  ``delegate_task`` spawn past 50 subagents, are blocked.

A **block** refuses the call (:meth:`refuse_call`, with Hermes' synthetic JSON result)
*and* records the halt: the rest of the batch still runs, then the turn ends
(:meth:`after_batch`). A **halt** lets the call run, then ends the turn after the batch.
A **warn** or a note is appended to that call's tool result; here it is the
:meth:`warning` text after the batch (the same words; Hermes has no separate message).

Approximations:

- **Tool names.** Hermes' rules key on its own tool names. The benchmark's built-in tools
  are mapped to the Hermes tool doing the same job (:data:`HERMES_TOOL_EQUIVALENTS`:
  run_shell_command → terminal, edit_file/apply_patch → patch, grep_search/glob/
  list_directory → search_files, get_command_output → process_manage, web_fetch →
  web_extract, google_web_search → web_search); any other tool keeps its name and so is
  neither idempotent nor a progress tool, as an unknown MCP tool is in Hermes. Messages
  name the call's own tool.
- A failed call is a terminal ``error`` outcome (Hermes' callers pass ``failed``); its
  result is the text the model saw. ``file_mutation_result_landed`` is covered by the
  progress-tool names; ``execute_code``'s kernel metadata stripping is left out (no such
  tool in the benchmark).
- Result stubs (a byte-identical repeat shown as a reference) change what the model
  reads, not what is detected, and are left out.
- Hermes drops duplicate (name, arguments) calls inside one reply before running them
  (``_deduplicate_tool_calls``); the benchmark protocol cannot remove a call from a reply
  (a refusal would show the model an error Hermes never sends), so those duplicates run.
- ``run_agent.py`` at the cited commit promotes only the streak halt from
  ``observe_call`` to the turn's halt; ``tool_guardrails.py``'s cycle halt
  (``identical_cycle_halt``, with its own message) is promoted the same way here, as the
  controller's design says ("halt at no_progress_block_after laps").
"""

from __future__ import annotations

import hashlib
import json
from collections import deque
from dataclasses import dataclass
from typing import Any

from bench.loop_peers.base import NoStopByDefault
from bench.tables import tables
from workflows.contracts import TerminalStatus, ToolCall, ToolOutcome

# The tables, with where each comes from in Hermes' source: hermes.yaml.
_T = tables(__file__)
IDEMPOTENT_TOOL_NAMES: frozenset[str] = frozenset(_T["IDEMPOTENT_TOOL_NAMES"])
MUTATING_TOOL_NAMES: frozenset[str] = frozenset(_T["MUTATING_TOOL_NAMES"])
FAILURE_TOLERANT_TOOL_NAMES: frozenset[str] = frozenset(_T["FAILURE_TOLERANT_TOOL_NAMES"])
PROGRESS_RESET_TOOL_NAMES: frozenset[str] = frozenset(_T["PROGRESS_RESET_TOOL_NAMES"])
STALL_GUARD_REPEATABLE_TOOLS: frozenset[str] = frozenset(_T["STALL_GUARD_REPEATABLE_TOOLS"])
STALL_GUARD_REPEATABLE_SUFFIXES: tuple[str, ...] = tuple(_T["STALL_GUARD_REPEATABLE_SUFFIXES"])
STALL_GUARD_IDENTICAL_CALL_THRESHOLD: int = _T["STALL_GUARD_IDENTICAL_CALL_THRESHOLD"]
STALL_GUARD_MAX_CYCLE_PERIOD: int = _T["STALL_GUARD_MAX_CYCLE_PERIOD"]
STALL_GUARD_CYCLE_HISTORY: int = _T["STALL_GUARD_CYCLE_HISTORY"]
EXACT_FAILURE_WARN_AFTER: int = _T["EXACT_FAILURE_WARN_AFTER"]
EXACT_FAILURE_BLOCK_AFTER: int = _T["EXACT_FAILURE_BLOCK_AFTER"]
SAME_TOOL_FAILURE_WARN_AFTER: int = _T["SAME_TOOL_FAILURE_WARN_AFTER"]
SAME_TOOL_FAILURE_HALT_AFTER: int = _T["SAME_TOOL_FAILURE_HALT_AFTER"]
NO_PROGRESS_WARN_AFTER: int = _T["NO_PROGRESS_WARN_AFTER"]
NO_PROGRESS_BLOCK_AFTER: int = _T["NO_PROGRESS_BLOCK_AFTER"]
MAX_WEB_SEARCHES_PER_TURN: int = _T["MAX_WEB_SEARCHES_PER_TURN"]
MAX_SUBAGENTS_PER_TURN: int = _T["MAX_SUBAGENTS_PER_TURN"]
HERMES_TOOL_EQUIVALENTS: dict[str, str] = _T["HERMES_TOOL_EQUIVALENTS"]
_DECISION_MESSAGES: dict[str, str] = _T["DECISION_MESSAGES"]
_IDENTICAL_CALL_NOTICE: str = _T["IDENTICAL_CALL_NOTICE"]
_IDENTICAL_CYCLE_NOTICE: str = _T["IDENTICAL_CYCLE_NOTICE"]


def _canonical_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str)


def _sha256(value: str) -> str:
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()


def _result_hash(result: str) -> str:
    """Canonical JSON when the result parses as JSON, else the text itself."""
    try:
        parsed = json.loads(result)
    except ValueError:
        return _sha256(result)
    return _sha256(_canonical_json(parsed))


def _ordinal(count: int) -> str:
    suffixes = {1: "st", 2: "nd", 3: "rd"}
    suffix = "th" if 11 <= count % 100 <= 13 else suffixes.get(count % 10, "th")
    return f"{count}{suffix}"


def hermes_tool_name(name: str) -> str:
    return HERMES_TOOL_EQUIVALENTS.get(name, name)


def is_stall_guard_repeatable(hermes_name: str) -> bool:
    return hermes_name in STALL_GUARD_REPEATABLE_TOOLS or hermes_name.endswith(
        STALL_GUARD_REPEATABLE_SUFFIXES
    )


def _is_idempotent(hermes_name: str) -> bool:
    return hermes_name not in MUTATING_TOOL_NAMES and hermes_name in IDEMPOTENT_TOOL_NAMES


def _subagent_spawn_count(arguments: dict[str, Any]) -> int:
    if str(arguments.get("action") or "").strip().lower() in ("list", "steer", "stop"):
        return 0
    tasks = arguments.get("tasks")
    return len(tasks) if isinstance(tasks, list) and tasks else 1


@dataclass(frozen=True)
class Signature:
    """``ToolCallSignature``: the tool's Hermes name and the hash of its canonical arguments."""

    tool_name: str
    args_hash: str


@dataclass(frozen=True)
class Decision:
    """``ToolGuardrailDecision``: allow | warn | block | halt, with its code and message."""

    action: str
    code: str
    message: str
    tool_name: str
    count: int
    signature: Signature

    @property
    def should_halt(self) -> bool:
        return self.action in {"block", "halt"}

    def synthetic_result(self) -> str:
        """``toolguard_synthetic_result``: what a blocked call answers."""
        metadata = {
            "action": self.action,
            "code": self.code,
            "message": self.message,
            "tool_name": self.tool_name,
            "count": self.count,
            "signature": {
                "tool_name": self.signature.tool_name,
                "args_hash": self.signature.args_hash,
            },
        }
        return json.dumps({"error": self.message, "guardrail": metadata}, ensure_ascii=False)

    def guidance(self) -> str:
        """``append_toolguard_guidance``'s suffix, without the result it follows."""
        label = "Tool loop hard stop" if self.action == "halt" else "Tool loop warning"
        return f"[{label}: {self.code}; count={self.count}; {self.message}]"


class HermesGuardrails(NoStopByDefault):
    """hermes-agent on an unattended platform (gateway, cron): warnings, blocks and halts."""

    name = "hermes_guardrails"
    title = "hermes-agent guardrails (unattended: hard stops on)"

    def __init__(self) -> None:
        self.exact_failure_counts: dict[Signature, int] = {}
        self.same_tool_failure_counts: dict[str, int] = {}
        self.progress_since_failure: dict[Signature, bool] = {}
        self.no_progress: dict[Signature, tuple[str, int]] = {}
        self.streak: tuple[Signature, str] | None = None
        self.streak_count = 0
        self.history: deque[tuple[Signature, str, bool]] = deque(maxlen=STALL_GUARD_CYCLE_HISTORY)
        self.web_search_count = 0
        self.subagent_count = 0
        self.halt: Decision | None = None  # the agent's _tool_guardrail_halt_decision
        self.controller_halt: Decision | None = None  # the controller's _halt_decision
        self.refused_call_ids: set[str] = set()
        self.pending: list[str] = []

    # -- decisions ----------------------------------------------------------------------

    def _decide(
        self,
        action: str,
        code: str,
        call: ToolCall,
        count: int,
        signature: Signature,
        message: str | None = None,
        **fmt: Any,
    ) -> Decision:
        if message is None:
            message = _DECISION_MESSAGES[code].format(tool_name=call.name, count=count, **fmt)
        decision = Decision(action, code, message, call.name, count, signature)
        if decision.should_halt:
            self.controller_halt = decision
        return decision

    def _set_halt(self, decision: Decision) -> None:
        if decision.should_halt and self.halt is None:
            self.halt = decision

    @staticmethod
    def _signature(call: ToolCall) -> Signature:
        arguments = call.arguments if call.arguments is not None else {}
        return Signature(hermes_tool_name(call.name), _sha256(_canonical_json(arguments)))

    # -- before the call ----------------------------------------------------------------

    def _loop_cap(self, call: ToolCall, signature: Signature) -> Decision | None:
        hermes_name = signature.tool_name
        if hermes_name == "delegate_task":
            spawn_count = _subagent_spawn_count(call.arguments or {})
            if spawn_count == 0:
                return None
            if self.subagent_count >= MAX_SUBAGENTS_PER_TURN:
                return self._decide(
                    "block",
                    "loop_subagent_cap",
                    call,
                    self.subagent_count,
                    signature,
                    cap=MAX_SUBAGENTS_PER_TURN,
                )
            self.subagent_count += spawn_count
            return None
        if hermes_name == "web_search":
            if self.web_search_count >= MAX_WEB_SEARCHES_PER_TURN:
                return self._decide(
                    "block",
                    "loop_web_search_cap",
                    call,
                    self.web_search_count,
                    signature,
                    cap=MAX_WEB_SEARCHES_PER_TURN,
                )
            self.web_search_count += 1
        return None

    def _before_call(self, call: ToolCall) -> Decision | None:
        """``before_call``: a block decision, or None to let the call run."""
        signature = self._signature(call)
        cap_block = self._loop_cap(call, signature)
        if cap_block is not None:
            return cap_block
        exact_count = (
            0
            if self.progress_since_failure.get(signature)
            else self.exact_failure_counts.get(signature, 0)
        )
        if exact_count >= EXACT_FAILURE_BLOCK_AFTER:
            return self._decide(
                "block", "repeated_exact_failure_block", call, exact_count, signature
            )
        record = self.no_progress.get(signature) if _is_idempotent(signature.tool_name) else None
        if record is not None and record[1] >= NO_PROGRESS_BLOCK_AFTER:
            return self._decide("block", "idempotent_no_progress_block", call, record[1], signature)
        return None

    def refuse_call(self, call: ToolCall) -> str | None:
        decision = self._before_call(call)
        if decision is None:
            return None
        self._set_halt(decision)  # _guardrail_block_result
        self.refused_call_ids.add(call.call_id)
        return decision.synthetic_result()

    # -- after the call -----------------------------------------------------------------

    def _after_call(self, call: ToolCall, result: str, failed: bool) -> Decision | None:
        """``after_call``: a warn/halt decision, or None."""
        signature = self._signature(call)
        hermes_name = signature.tool_name
        if failed:
            if self.progress_since_failure.pop(signature, False):
                self.exact_failure_counts.pop(signature, None)
            exact_count = self.exact_failure_counts.get(signature, 0) + 1
            self.exact_failure_counts[signature] = exact_count
            same_count = self.same_tool_failure_counts.get(hermes_name, 0) + 1
            self.same_tool_failure_counts[hermes_name] = same_count
            self.no_progress.pop(signature, None)
            if (
                hermes_name not in FAILURE_TOLERANT_TOOL_NAMES
                and same_count >= SAME_TOOL_FAILURE_HALT_AFTER
            ):
                return self._decide("halt", "same_tool_failure_halt", call, same_count, signature)
            if exact_count >= EXACT_FAILURE_WARN_AFTER:
                return self._decide(
                    "warn", "repeated_exact_failure_warning", call, exact_count, signature
                )
            if same_count >= SAME_TOOL_FAILURE_WARN_AFTER:
                return self._decide(
                    "warn",
                    "same_tool_failure_warning",
                    call,
                    same_count,
                    signature,
                    message=_tool_failure_recovery_hint(call.name, hermes_name, same_count),
                )
            return None

        self.exact_failure_counts.pop(signature, None)
        self.same_tool_failure_counts.pop(hermes_name, None)
        if hermes_name in PROGRESS_RESET_TOOL_NAMES:
            self.progress_since_failure.update(dict.fromkeys(self.exact_failure_counts, True))
            self.same_tool_failure_counts.clear()
        if not _is_idempotent(hermes_name):
            self.no_progress.pop(signature, None)
            return None
        result_hash = _result_hash(result)
        previous = self.no_progress.get(signature)
        repeat_count = previous[1] + 1 if previous is not None and previous[0] == result_hash else 1
        self.no_progress[signature] = (result_hash, repeat_count)
        if repeat_count >= NO_PROGRESS_WARN_AFTER:
            return self._decide(
                "warn", "idempotent_no_progress_warning", call, repeat_count, signature
            )
        return None

    def _observe_call(self, call: ToolCall, result: str) -> str | None:
        """``observe_call``: the identical-call streak and cycle note (and their halts)."""
        signature = self._signature(call)
        result_hash = _result_hash(result)
        repeatable = is_stall_guard_repeatable(signature.tool_name)
        if (signature, result_hash) == self.streak:
            self.streak_count += 1
        else:
            self.streak, self.streak_count = (signature, result_hash), 1
        count = self.streak_count
        notice: str | None = None
        if not repeatable and count >= STALL_GUARD_IDENTICAL_CALL_THRESHOLD:
            notice = _IDENTICAL_CALL_NOTICE.format(ordinal=_ordinal(count), tool_name=call.name)
            if count >= NO_PROGRESS_BLOCK_AFTER and self.controller_halt is None:
                self._decide("halt", "identical_call_streak_halt", call, count, signature)
        self.history.append((signature, result_hash, repeatable))
        if notice is None:
            cycle = self._detect_identical_cycle()
            if cycle is not None:
                period, laps = cycle
                notice = _IDENTICAL_CYCLE_NOTICE.format(
                    count=laps, period=period, tool_name=call.name
                )
                if laps >= NO_PROGRESS_BLOCK_AFTER and self.controller_halt is None:
                    self._decide(
                        "halt", "identical_cycle_halt", call, laps, signature, period=period
                    )
        return notice

    def _detect_identical_cycle(self) -> tuple[int, int] | None:
        history = self.history
        for period in range(2, STALL_GUARD_MAX_CYCLE_PERIOD + 1):
            if len(history) < period * STALL_GUARD_IDENTICAL_CALL_THRESHOLD:
                continue
            laps = 1
            while True:
                base = len(history) - period * (laps + 1)
                if base < 0:
                    break
                lap_equal = all(
                    history[base + i][:2] == history[len(history) - period + i][:2]
                    for i in range(period)
                )
                if not lap_equal:
                    break
                laps += 1
            if laps >= STALL_GUARD_IDENTICAL_CALL_THRESHOLD:
                tail = [history[len(history) - period + i] for i in range(period)]
                if all(repeatable for _, _, repeatable in tail):
                    continue
                return period, laps
        return None

    def _append_observation(self, call: ToolCall, result: str, failed: bool) -> list[str]:
        """``_append_guardrail_observation``: the texts appended to this call's result."""
        appended: list[str] = []
        decision = self._after_call(call, result, failed)
        notice = self._observe_call(call, result)
        if decision is not None and decision.action in {"warn", "halt"}:
            appended.append(decision.guidance())
        if decision is not None and decision.should_halt:
            self._set_halt(decision)
        else:
            streak_halt = self.controller_halt
            if streak_halt is not None and streak_halt.code in (
                "identical_call_streak_halt",
                "identical_cycle_halt",
            ):
                appended.append(streak_halt.guidance())
                self._set_halt(streak_halt)
        if notice:
            appended.append(notice)
        return appended

    def after_batch(self, calls: list[ToolCall], outcomes: list[ToolOutcome]) -> str | None:
        for call, outcome in zip(calls, outcomes, strict=False):
            if outcome.call_id in self.refused_call_ids:
                continue  # blocked calls never ran and are not observed
            failed = outcome.status == TerminalStatus.ERROR
            result = (outcome.error_message or outcome.content) if failed else outcome.content
            self.pending.extend(self._append_observation(call, result, failed))
        self.refused_call_ids.clear()
        return self.name if self.halt is not None else None

    def warning(self) -> str | None:
        text = "\n\n".join(self.pending) or None
        self.pending = []
        return text


def _tool_failure_recovery_hint(tool_name: str, hermes_name: str, count: int) -> str:
    advice = _T["RECOVERY_HINT_TERMINAL" if hermes_name == "terminal" else "RECOVERY_HINT_OTHER"]
    return f"{_T['RECOVERY_HINT'].format(tool_name=tool_name, count=count)} {advice}"
