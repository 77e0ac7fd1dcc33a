"""gemini-cli's LoopDetectionService, re-implemented for the loop benchmark.

Source: google-gemini/gemini-cli, ``packages/core/src/services/loopDetectionService.ts``
and its caller ``GeminiClient.processTurn`` / ``_recoverFromLoop`` in
``packages/core/src/core/client.ts``, with the headless loop in
``packages/cli/src/nonInteractiveCli.ts``; commit 5411f113 (2026-08-21, core
0.56.0-nightly.20260806).

What it does there, and here:

- Tool-call repetition, checked as each call streams in (``ToolCallRequest``): the key is
  the tool name and ``JSON.stringify(args)`` (key order as the model wrote it); the last
  25 keys of the prompt are kept, and a loop is the last ``k * 5`` keys repeating a cycle
  of length ``k`` for any ``k`` from 1 to 5 (``TOOL_CALL_LOOP_THRESHOLD = 5``): 5 identical
  calls, or ABABABABAB, … up to a period of 5.
- Content chanting over the streamed text (``CONTENT_LOOP_THRESHOLD = 10`` occurrences of
  a 50-character chunk, average distance at most 250 characters, at most 5 distinct
  periods; tracking reset by a tool call, a code fence, a table, list item, heading or
  quote; nothing counted inside code blocks). The reply's text streams before its calls;
  here it is fed line by line (the real chunking is the provider's).
- The first detection is not a halt: the turn's stream is cut at the offending event, the
  detection flag is cleared (the count stays 1) and a new request is sent with a feedback
  message, role ``user``, its text verbatim below (``_recoverFromLoop``). Here: the offending
  call and the reply's later calls do not run (``refuse_call``; the real client drops them
  with the cut turn, the text they carry here is the simulator's, not the model's), the
  calls before it run, and the feedback is the warning. The next reply is the script's
  next one (scripted models do not react to warnings).
- A second detection in the same prompt halts (``LoopDetected``, "Loop detected, stopping
  execution"). The history is not cleared by the recovery, so one more repeat of the same
  call is that second detection. Calls streamed before it still run (the headless loop
  schedules what it collected), then the prompt ends: here ``after_batch`` halts, or
  ``before_batch`` when the reply's first event was the detection.
- Not reproduced: the LLM check (from turn 30 of a prompt, every 5–15 turns a model rates
  the history; needs a model, not reproducible offline) and the interactive dialog that
  lets a user disable detection for the session.
"""

from __future__ import annotations

import hashlib
import json
import re

from bench.tables import tables
from workflows.contracts import ToolCall, ToolOutcome

_T = tables(__file__)  # gemini_cli.yaml, each value with its source
TOOL_CALL_LOOP_THRESHOLD: int = _T["TOOL_CALL_LOOP_THRESHOLD"]
MAX_CYCLE: int = _T["MAX_CYCLE"]
CONTENT_LOOP_THRESHOLD: int = _T["CONTENT_LOOP_THRESHOLD"]
CONTENT_CHUNK_SIZE: int = _T["CONTENT_CHUNK_SIZE"]
MAX_HISTORY_LENGTH: int = _T["MAX_HISTORY_LENGTH"]
CUT_TEXT: str = _T["CUT_TEXT"]

_TABLE = re.compile(r"(^|\n)\s*(\|.*\||[|+-]{3,})")
_LIST = re.compile(r"(^|\n)\s*[*-+]\s")
_NUMBERED = re.compile(r"(^|\n)\s*\d+\.\s")
_HEADING = re.compile(r"(^|\n)#+\s")
_QUOTE = re.compile(r"(^|\n)>\s")
_DIVIDER = re.compile(r"^[+-_=*\u2500-\u257F]+\Z")  # JS "$": end only


def js_stringify(arguments: object) -> str:
    """``JSON.stringify`` of parsed arguments: insertion order, no spaces, no escaping."""
    return json.dumps(arguments, separators=(",", ":"), ensure_ascii=False)


def feedback_text(detail: str) -> str:
    """``_recoverFromLoop``'s message to the model, verbatim."""
    return str(_T["FEEDBACK"].format(detail=detail or _T["DEFAULT_DETAIL"]))


class GeminiLoopDetection:
    """gemini-cli's ``LoopDetectionService`` (tool-call cycles and content chanting) with
    the client's recover-once-then-stop handling."""

    name = "gemini_loop_detection"
    title = "gemini-cli LoopDetectionService"
    warning_role = "user"

    def __init__(self) -> None:
        self.history: list[str] = []
        self.detected = 0
        self.halt = False
        self.cut = False
        self.cut_first = False
        self.calls_seen = 0
        self._warning: str | None = None
        self._reset_content()
        self.in_code_block = False

    # hooks -------------------------------------------------------------------------------

    def observe_model(self, text: str, calls: list[ToolCall]) -> None:
        self.cut = self.cut_first = False
        self.calls_seen = 0
        for chunk in text.splitlines(keepends=True):
            if self._content_loop(chunk):
                self._detect(f'Repeating content detected: "{self._content_detail()}..."')
                self.cut = self.cut_first = True
                return

    def refuse_call(self, call: ToolCall) -> str | None:
        if self.cut:
            return CUT_TEXT
        self.calls_seen += 1
        self._reset_content()
        arguments = call.arguments if call.arguments is not None else call.raw_arguments
        if self._tool_call_loop(f"{call.name}:{js_stringify(arguments)}"):
            self._detect(
                f"Repeated tool call: {call.name} with arguments {js_stringify(arguments)}"
            )
            self.cut = True
            self.cut_first = self.calls_seen == 1
            return CUT_TEXT
        return None

    def before_batch(self, calls: list[ToolCall]) -> str | None:
        return self.name if self.halt and self.cut_first else None

    def after_batch(self, calls: list[ToolCall], outcomes: list[ToolOutcome]) -> str | None:
        return self.name if self.halt else None

    def warning(self) -> str | None:
        text, self._warning = self._warning, None
        return text

    # the service -------------------------------------------------------------------------

    def _detect(self, detail: str) -> None:
        self.detected += 1
        if self.detected > 1:
            self.halt = True
        else:  # recovery: clearDetection(), then the feedback turn
            self._warning = feedback_text(detail)

    def _tool_call_loop(self, key: str) -> bool:
        self.history.append(key)
        self.history = self.history[-MAX_CYCLE * TOOL_CALL_LOOP_THRESHOLD :]
        n = len(self.history)
        for k in range(1, MAX_CYCLE + 1):
            required = k * TOOL_CALL_LOOP_THRESHOLD
            if n < required:
                continue
            cycle = self.history[-k:]
            if all(self.history[n - required + i] == cycle[i % k] for i in range(required)):
                return True
        return False

    def _reset_content(self) -> None:
        self.stream = ""
        self.stats: dict[str, list[int]] = {}
        self.last_index = 0

    def _content_detail(self) -> str:
        start = max(0, self.last_index - 20)
        return self.stream[start : self.last_index + CONTENT_CHUNK_SIZE].strip()

    def _content_loop(self, content: str) -> bool:
        fences = content.count("```")
        divider = bool(_DIVIDER.match(content))
        if (
            fences
            or _TABLE.search(content)
            or _LIST.search(content)
            or _NUMBERED.search(content)
            or _HEADING.search(content)
            or _QUOTE.search(content)
            or divider
        ):
            self._reset_content()
        was_in_code = self.in_code_block
        if fences % 2:
            self.in_code_block = not self.in_code_block
        if was_in_code or self.in_code_block or divider:
            return False
        self.stream += content
        if len(self.stream) > MAX_HISTORY_LENGTH:
            cut = len(self.stream) - MAX_HISTORY_LENGTH
            self.stream = self.stream[cut:]
            self.last_index = max(0, self.last_index - cut)
            self.stats = {
                h: kept
                for h, indices in self.stats.items()
                if (kept := [i - cut for i in indices if i - cut >= 0])
            }
        while self.last_index + CONTENT_CHUNK_SIZE <= len(self.stream):
            chunk = self.stream[self.last_index : self.last_index + CONTENT_CHUNK_SIZE]
            if self._chunk_loops(chunk, hashlib.sha256(chunk.encode()).hexdigest()):
                return True
            self.last_index += 1
        return False

    def _chunk_loops(self, chunk: str, digest: str) -> bool:
        indices = self.stats.get(digest)
        if indices is None:
            self.stats[digest] = [self.last_index]
            return False
        if self.stream[indices[0] : indices[0] + CONTENT_CHUNK_SIZE] != chunk:
            return False
        indices.append(self.last_index)
        if len(indices) < CONTENT_LOOP_THRESHOLD:
            return False
        recent = indices[-CONTENT_LOOP_THRESHOLD:]
        if (recent[-1] - recent[0]) / (CONTENT_LOOP_THRESHOLD - 1) > CONTENT_CHUNK_SIZE * 5:
            return False
        periods = {self.stream[recent[i] : recent[i + 1]] for i in range(len(recent) - 1)}
        return len(periods) <= CONTENT_LOOP_THRESHOLD // 2
