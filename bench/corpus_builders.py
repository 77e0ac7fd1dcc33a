"""The pieces every corpus scenario is built from: calls, turns, fixture outcomes, ``Entry``.

The synthetic scenarios (``bench/synthetic_loops.py``, ``bench/synthetic_legit.py``) and
those modelled on real incidents (``bench/incident_loops.py``, ``bench/incident_legit.py``,
gathered by ``bench/make_incidents.py``) are built from these, and ``bench/make_corpus.py``
writes them; with the pieces here, no scenario module imports another (no import cycle).

Every tool is a fixture tool (fixtures replace built-ins of the same name), so the pure
simulator replays each scenario exactly. A stuck model never gives up, so a loop's script
runs on until the per-prompt tool-call cap (``CAP``) would cut it, with
``max_model_requests`` raised (``LOOP_MAX_MODEL_REQUESTS``) so the cap, not the request
limit, is what ends an unstopped loop. Fixture outcomes are used in order per tool, the last
one repeating, so outcomes are scripted in the order the calls run when nothing refuses them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

CAP = 100
LOOP_MAX_MODEL_REQUESTS = 200

Json = dict[str, Any]


# --- builders -----------------------------------------------------------------------------


def call(name: str, arguments: Json | str | None = None, id: str | None = None) -> Json:
    out: Json = {"name": name, "arguments": {} if arguments is None else arguments}
    if id is not None:
        out["id"] = id
    return out


def turn(*calls: Json, text: str = "") -> Json:
    out: Json = {}
    if text:
        out["text"] = text
    if calls:
        out["tool_calls"] = list(calls)
    return out


def answer(text: str) -> Json:
    return {"text": text}


def ok(content: str) -> Json:
    return {"status": "success", "execution_status": "success", "content": content}


def fail(error_type: str, message: str) -> Json:
    return {
        "status": "error",
        "execution_status": "error",
        "error_type": error_type,
        "message": message,
    }


def cancelled(message: str = "The user cancelled the call.") -> Json:
    return {"status": "cancelled", "execution_status": "cancelled", "message": message}


def tool(*outcomes: Json, tool_type: str = "native", mutating: bool = False) -> Json:
    out: Json = {"outcomes": list(outcomes)}
    if tool_type != "native":
        out["tool_type"] = tool_type
    if mutating:
        out["mutating"] = True
    return out


def until_cap(make_turn: Any, calls_per_turn: int, start: int = 0, spare: int = 1) -> list[Json]:
    """Loop turns ``make_turn(i)`` until one more batch would pass the cap (plus ``spare``)."""
    turns: list[Json] = []
    total = start
    i = 0
    while total <= CAP + calls_per_turn * spare:
        turns.append(make_turn(i))
        total += calls_per_turn
        i += 1
    return turns


@dataclass
class Entry:
    name: str
    label: str  # loop | legit
    shape: str
    description: str
    tools: Json
    turns: list[Json]
    loop_starts_at_batch: int | None = None
    after_reminder: list[Json] | None = None
    events: list[Json] = field(default_factory=list)
    permissions: Json = field(default_factory=dict)
    workspace: Json | None = None
    # Why the recommended profile does not stop a loop, or halts legit work (labels.yaml's
    # out_of_scope and known_gap); the seed profile's own reasons beside them.
    out_of_scope: str | None = None
    known_gap: str | None = None
    seed_out_of_scope: str | None = None
    seed_known_gap: str | None = None
    note: str = ""
    # The public report a real-incident scenario is modelled on (bench/make_incidents.py).
    url: str | None = None
    # Overrides the model request limit (loops default to LOOP_MAX_MODEL_REQUESTS).
    max_model_requests: int | None = None

    @property
    def file_name(self) -> str:
        return f"{self.name}.yaml"


# --- guessed paths that do not exist ------------------------------------------------------

MISSING = [
    "src/config.yaml",
    "config/config.yaml",
    "conf/app.yaml",
    "settings.yaml",
    "src/settings/app.yaml",
    "app/config.yml",
    "config.yml",
    "etc/app.yaml",
    ".config/app.yaml",
    "src/app/config.yaml",
    "deploy/config.yaml",
    "configs/default.yaml",
]


def missing_path(i: int) -> str:
    base = MISSING[i % len(MISSING)]
    round_ = i // len(MISSING)
    return base if round_ == 0 else f"v{round_}/{base}"


def not_found(path: str) -> Json:
    return fail("file_not_found", f"File not found: {path}")


# --- scripts built in call order (the real-incident scenarios) ----------------------------

Step = tuple[Json, Json | None]  # a call and the outcome its fixture answers (None: never runs)


class Script:
    """The model's turns and each fixture tool's outcomes, built together in call order."""

    def __init__(self) -> None:
        self.turns: list[Json] = []
        self.outcomes: dict[str, list[Json]] = {}
        self.calls = 0

    def batch(self, *steps: Step, text: str = "") -> None:
        for made, outcome in steps:
            if outcome is not None:
                self.outcomes.setdefault(made["name"], []).append(outcome)
        self.turns.append(turn(*[made for made, _ in steps], text=text))
        self.calls += len(steps)

    def answer(self, text: str) -> None:
        self.turns.append(answer(text))

    def until_cap(self, make_batch: Callable[[int], Sequence[Step]]) -> None:
        """A model that never gives up: batches ``make_batch(i)`` until one would pass the
        per-prompt tool-call cap, plus one spare."""
        i = 0
        while self.calls <= CAP:
            self.batch(*make_batch(i))
            i += 1
        self.batch(*make_batch(i))

    def tools(self, meta: dict[str, Json] | None = None) -> Json:
        """Fixture tools, in ``meta``'s order; a trailing run of equal outcomes is kept once
        (the last outcome repeats). A tool whose calls never run answers ``ok("done")``."""
        meta = meta or {}
        names = [*meta, *[n for n in self.outcomes if n not in meta]]
        out: Json = {}
        for name in names:
            outcomes = list(self.outcomes.get(name) or [ok("done")])
            while len(outcomes) > 1 and outcomes[-1] == outcomes[-2]:
                outcomes.pop()
            out[name] = tool(*outcomes, **meta.get(name, {}))
        return out


class TimedScript(Script):
    """A :class:`Script` whose model turns carry a latency (docs/scenarios.md, "Time"):
    ``latencies`` cycled turn by turn (deterministic), unless a batch or answer names its
    own. The calls' own durations are on their outcomes (:func:`took`)."""

    def __init__(self, latencies: Sequence[float] = (4.0,)) -> None:
        super().__init__()
        self.latencies = tuple(latencies)

    def batch(self, *steps: Step, text: str = "", latency: float | None = None) -> None:
        seconds = self._latency(latency)
        super().batch(*steps, text=text)
        self.turns[-1]["latency_seconds"] = seconds

    def answer(self, text: str, latency: float | None = None) -> None:
        seconds = self._latency(latency)
        super().answer(text)
        self.turns[-1]["latency_seconds"] = seconds

    def until_cap(
        self,
        make_batch: Callable[[int], Sequence[Step]],
        latency: Callable[[int], float] | None = None,
        text: Callable[[int], str] | None = None,
    ) -> None:
        """:meth:`Script.until_cap`, with ``latency(i)`` (and ``text(i)``) on batch ``i``."""
        i = 0
        while True:
            last = self.calls > CAP
            self.batch(
                *make_batch(i),
                text=text(i) if text else "",
                latency=latency(i) if latency else None,
            )
            i += 1
            if last:
                return

    def _latency(self, latency: float | None) -> float:
        if latency is not None:
            return latency
        return self.latencies[len(self.turns) % len(self.latencies)]


def took(outcome: Json, seconds: float) -> Json:
    """``outcome`` scripted to take ``seconds`` to return."""
    return {**outcome, "duration_seconds": seconds}


def sh(command: str, **extra: object) -> Json:
    return call("run_shell_command", {"command": command, **extra})


def sh_fail(output: str, code: int) -> Json:
    return fail("shell_execute_error", f"Command failed.\nOutput:\n{output}\nExit code: {code}")


def timed_out(text: str) -> Json:
    return fail("execution_timeout", text)


def denied(text: str = "The user doesn't want to proceed with this tool use.") -> Json:
    """A per-command refusal in the agent's own permission layer, as the tool reports it."""
    return {
        "status": "cancelled",
        "execution_status": "not_started",
        "error_type": "execution_denied",
        "message": text,
    }


MCP: Json = {"tool_type": "mcp"}
MUTATING: Json = {"mutating": True}
MCP_MUTATING: Json = {"tool_type": "mcp", "mutating": True}
