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
    return [f"fetch_{k}" for k in range(max(calls - 1, 1))]


def batch_calls(batch: int, calls: int) -> list[Call]:
    """The tool calls of batch ``batch`` (0-based) of a prompt with ``calls`` per batch; with
    one call a batch (sdk-python#1890's shape: no parallel calls) only ``fetch_0``."""
    out = [
        Call(name, {"path": f"data/{batch}/{k}.json"}) for k, name in enumerate(fetch_names(calls))
    ]
    if calls > 1:
        out.append(Call("flaky_api", {"path": f"status/{batch}"}))
    return out


def status_batch(path: str) -> int:
    """The 0-based batch a ``flaky_api`` path asks about (``status/3``)."""
    return int(path.rsplit("/", 1)[-1])


def flaky_result(attempt: int) -> str:  # attempt: the 0-based batch
    """``flaky_api``'s answer: it fails in its first five calls, then recovers."""
    return FAIL_MESSAGE if attempt < FAILING_BATCHES else OK_CONTENT


def sized(text: str, chars: int) -> str:
    """``text`` padded to ``chars`` characters (itself when already as long)."""
    if chars <= len(text):
        return text
    filler = " lorem ipsum dolor sit amet"
    return text + (filler * (chars // len(filler) + 1))[: chars - len(text)]


def fetch_result(path: str = "") -> str:
    """A fetch's result: :data:`OK_CONTENT`; with ``SHAPE.result_chars``, the path it read
    and the content padded to that many characters (each result its own, as real pages are)."""
    return sized_result(path, SHAPE.result_chars)


def sized_result(path: str, chars: int) -> str:
    return sized(f"{path}: {OK_CONTENT}", chars) if chars > 0 else OK_CONTENT


async def answer(name: str, path: str) -> str:
    """What tool ``name`` answers for ``path``, after the shape's tool latency."""
    await asyncio.sleep(SHAPE.tool_latency_seconds)
    return flaky_result(status_batch(path)) if name == "flaky_api" else fetch_result(path)


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


def context(chars: int) -> str:
    """What a long conversation brought before the prompt (sdk-python#1890's ≈200k tokens),
    ``chars`` characters of it, to put in front of the prompt; empty for 0."""
    return sized("Earlier in this conversation:", chars) + "\n" if chars > 0 else ""


def prompt_text(batches: int, context_chars: int = 0) -> str:
    """The user prompt (after ``context_chars`` of earlier conversation). The peers' scripted
    models are stateless functions of the conversation, so the prompt carries the batch count
    (Seawall's script knows it)."""
    return f"{context(context_chars)}{PROMPT} [batches={batches}]"


def batches_in(prompt: str) -> int:
    return int(prompt.rsplit("[batches=", 1)[1].rstrip("]"))


@dataclass
class Shape:
    """What the peers' module-level agents are built from, set by the worker process
    before it imports a peer module (passed through the sandbox, so the sandboxed
    re-import sees the same values)."""

    calls: int = 4
    tool_latency_seconds: float = 0.0
    result_chars: int = 0  # a fetch's result padded to this many characters (0: as it is)


SHAPE = Shape()
