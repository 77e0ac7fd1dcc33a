"""The scripted agent conversation the durable-agent peers replay (bench/peers.py).

Why it exists: the peers' workflows run in Temporal's sandbox, which re-imports their
modules; this module is small and imports nothing but the standard library so that cost is
the peers' own, not ours. It states the same conversation as ``bench.overhead_harness.Workload``
(batch ``b`` calls ``fetch_k(path="data/b/k.json")`` for ``k < M-1`` and
``flaky_api(path="status/b")``, which fails in the first five batches; then one final text) and
the same tool results; ``tests/bench/test_peers.py`` checks that the two agree.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

FAILING_BATCHES = 5
OK_CONTENT = '{"items": [' + ", ".join(str(i) for i in range(40)) + "]}"
FAIL_MESSAGE = "HTTP 500 Internal Server Error"
FINAL_TEXT = "All data fetched; one endpoint kept failing."
PROMPT = "Fetch the data files."


@dataclass(frozen=True)
class Call:
    name: str
    arguments: dict[str, object]

    def arguments_json(self) -> str:
        return json.dumps(self.arguments)


def fetch_names(calls: int) -> list[str]:
    return [f"fetch_{k}" for k in range(calls - 1)]


def batch_calls(batch: int, calls: int) -> list[Call]:
    """The tool calls of batch ``batch`` (0-based) of a prompt with ``calls`` per batch."""
    out = [
        Call(name, {"path": f"data/{batch}/{k}.json"}) for k, name in enumerate(fetch_names(calls))
    ]
    out.append(Call("flaky_api", {"path": f"status/{batch}"}))
    return out


def status_batch(path: str) -> int:
    """The 0-based batch a ``flaky_api`` path asks about (``status/3``)."""
    return int(path.rsplit("/", 1)[-1])


def flaky_result(attempt: int) -> str:  # attempt: the 0-based batch
    """``flaky_api``'s answer: it fails in its first five calls, then recovers (as
    ``Workload.fixtures``, whose short prompts never get past five)."""
    return FAIL_MESSAGE if attempt < FAILING_BATCHES else OK_CONTENT


def fetch_result() -> str:
    return OK_CONTENT


def prompt_text(batches: int) -> str:
    """The user prompt. The peers' scripted models are stateless functions of the
    conversation, so the prompt carries the batch count (Seawall's script knows it)."""
    return f"{PROMPT} [batches={batches}]"


def batches_in(prompt: str) -> int:
    return int(prompt.rsplit("[batches=", 1)[1].rstrip("]"))


@dataclass
class Shape:
    """What the peers' module-level agents are built from, set by the worker process
    before it imports a peer module (passed through the sandbox, so the sandboxed
    re-import sees the same values)."""

    calls: int = 4
    tool_latency_seconds: float = 0.0


SHAPE = Shape()
