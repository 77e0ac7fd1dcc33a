"""The scripted agent conversation the durable-agent peers replay (bench/peers.py).

Why it exists: the peers' workflows run in Temporal's sandbox, which re-imports their
modules; this module is small and imports nothing but the standard library so that cost is
the peers' own, not ours. Batch ``b`` calls ``fetch_k(path="data/b/k.json")`` for ``k < M-1``
and ``flaky_api(path="status/b")``, which fails in the first five batches; then one final
text. Seawall runs the same script as a scenario (``bench.peer_seawall.Workload``).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
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
    """``flaky_api``'s answer: it fails in its first five calls, then recovers."""
    return FAIL_MESSAGE if attempt < FAILING_BATCHES else OK_CONTENT


def fetch_result() -> str:
    return OK_CONTENT


async def answer(name: str, path: str) -> str:
    """What tool ``name`` answers for ``path``, after the shape's tool latency."""
    await asyncio.sleep(SHAPE.tool_latency_seconds)
    return flaky_result(status_batch(path)) if name == "flaky_api" else fetch_result()


def tools(calls: int) -> list[Callable[[str], Awaitable[str]]]:
    """Every tool of the script as an async function of its ``path``, named as the tool and
    described by its docstring, for a peer to declare as its framework does."""

    def tool(name: str) -> Callable[[str], Awaitable[str]]:
        async def call(path: str) -> str:
            return await answer(name, path)

        call.__name__ = call.__qualname__ = name
        call.__doc__ = "Call the flaky endpoint." if name == "flaky_api" else "Fetch one data file."
        return call

    return [tool(name) for name in [*fetch_names(calls), "flaky_api"]]


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
