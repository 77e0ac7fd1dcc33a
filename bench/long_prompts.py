"""Long prompts: conversations far past Temporal's payload limits, and what they cost.

    python bench/long_prompts.py [--json PATH]
    python bench/long_prompts.py --issue-1890 [--peers seawall,openai-agents,...]
                                 [--shape CONTEXT_CHARS,BATCHES,RESULT_CHARS]
                                 [--history-limit BYTES] [--json PATH]

docs/durability.md, "Long prompts and stored payloads". On one embedded Temporal dev server, with
payloads past the default threshold in the filesystem store (``seawall.runtime.storage``):

1. **Long prompts to ``end_turn``.** A prompt of 30 batches whose tool results are 200 KB
   each (a ≈6 MB conversation) and one of 100 batches (≈20 MB), each run
   - through ``seawall run`` (the real command, a subprocess, against this server), and
   - through the gateway (``python -m gateway``, its HTTP API): a scripted session reading
     the same number of 200 KB files with the built-in ``read_file``. A gateway session runs
     with the default options: ``max_output_chars`` (20,000) caps each result, as it would
     a user's, and ``max_model_requests`` (50) makes the 100 pages 34 batches of 3, so that
     conversation is ≈0.6 MB / ≈2 MB, still past the old 1,000,000-character stop.
   Reported: stop reason, history bytes (the events Temporal keeps), stored bytes (the
   payloads the store holds for the prompt), per-batch latency (median and p90 of the time
   between consecutive model requests, from the history's own timestamps). Results go to
   ``bench/results/long_prompts.json``. (Its former second leg, a short prompt in worker
   subprocesses of this tree and of 514ba60, was issue 13's one-time check against the code
   before it; its figures stay in docs/benchmarks.md as measured then.)

2. **sdk-python#1890's shape** (``--issue-1890``, only this leg). temporalio/sdk-python#1890
   reports a chat agent on the OpenAI Agents SDK's Temporal integration terminated with
   "Workflow history size exceeds limit" after 53 of 100 model calls: a ≈209k-token
   conversation, one tool call per model call (no parallel calls), 5 KB tool outputs, every
   model call recording the whole conversation again as its activity input. This leg runs
   that shape (:data:`SHAPE_1890`; ``--shape`` a smaller one) through Seawall and each
   installed peer of ``bench/peers.py``, each in its own worker process, one prompt each, on a
   dev server with its default history limits (50 MB; ``--history-limit``), and prints per
   harness the model calls it reached, how it ended (a terminated prompt: where it stopped and
   why), its history bytes and events, and what the payload store holds for it (only
   Seawall's worker stores payloads past 64 KiB; the peers keep theirs inline, as they ship).
   The conversation before the prompt is ``context_chars`` characters of text in front of the
   user's prompt (≈4 characters a token); Seawall's context budget is set to hold the whole
   conversation, so every harness sends the model the same requests. Results go to
   ``bench/results/long_prompts_1890.json`` unless ``--json`` says.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import httpx
import yaml
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from bench import peer_history, peers
from bench.peer_history import batch_gaps
from bench.peers import PEERS, peer_keys
from bench.peers_report import versions
from bench.report_runner import percentile, run_and_report
from bench.server_metrics import free_port
from bench.trusted import bench_client, bench_trust, worker_process_environment
from seawall.runtime.storage import DEFAULT_THRESHOLD_BYTES
from seawall.worker.build import build_worker
from workflows.contracts.activity import CALL_MODEL
from workflows.contracts.prompt import PromptResult
from workflows.contracts.prompt_options import DEFAULT_MAX_MODEL_REQUESTS

ROOT = Path(__file__).resolve().parent.parent

RESULTS = ROOT / "bench" / "results" / "long_prompts.json"
RESULTS_1890 = ROOT / "bench" / "results" / "long_prompts_1890.json"
PAGE_CHARS = 200_000
LONG_BATCHES = (30, 100)


def page(n: int, chars: int) -> str:
    head = f"page {n}\n"
    line = "lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor\n"
    return head + (line * (chars // len(line) + 1))[: max(chars - len(head), 0)]


def long_prompt_scenario(batches: int, result_chars: int) -> dict[str, Any]:
    """A scenario that reads ``batches`` different workspace files of ``result_chars``
    characters with the built-in ``read_file``, one per model request, then answers (the
    scenario file format, as a mapping). Real files, not fixture tools: a fixture tool's
    scripted outcomes travel in every tool activity's input, which a real prompt's do not."""
    turns: list[dict[str, Any]] = [
        {
            "tool_calls": [
                {"name": "read_file", "arguments": {"path": f"page-{n}.txt", "limit": 100_000}}
            ]
        }
        for n in range(batches)
    ]
    turns.append({"text": "read them all"})
    return {
        "name": f"long-{batches}x{result_chars}",
        "mode": "enforce",
        "max_model_requests": batches + 1,
        "max_output_chars": max(result_chars, 100),
        "workspace": {"files": {f"page-{n}.txt": page(n, result_chars) for n in range(batches)}},
        "model": {"turns": turns},
    }


# --- measurements ---------------------------------------------------------------------


async def measure(
    client: Client, store: Path, workflow_id: str, leg: str, pages: int, wall: float
) -> dict[str, Any]:
    """One prompt's figures: how it ended, its bytes (``peer_history.prompt_bytes``) and the
    time between consecutive model requests (one batch each)."""
    result = await client.get_workflow_handle(workflow_id, result_type=PromptResult).result()
    history, figures = await peer_history.prompt_bytes(client, workflow_id, store)
    latencies = [gap * 1000 for gap in batch_gaps(history, CALL_MODEL)]
    return {
        "leg": leg,
        "pages": pages,
        "batches": result.model_requests - 1,
        "stop_reason": result.stop_reason.value,
        "conversation_chars": sum(len(m.content) for m in result.messages),
        **figures,
        "batch_ms_median": round(statistics.median(latencies), 2) if latencies else 0.0,
        "batch_ms_p90": round(percentile(latencies, 0.9), 2),
        "wall_seconds": round(wall, 2),
    }


# --- leg 1: seawall run ---------------------------------------------------------------


def seawall_run(address: str, storage_dir: Path, batches: int, work: Path) -> str:
    """Run the long prompt with the real ``seawall run`` against ``address``; its id."""
    scenario = work / f"long-{batches}.yaml"
    scenario.write_text(yaml.safe_dump(long_prompt_scenario(batches, PAGE_CHARS)))
    env = {
        **os.environ,
        "TEMPORAL_ADDRESS": address,
        "SEAWALL_PAYLOAD_STORAGE": "filesystem",
        "SEAWALL_PAYLOAD_STORAGE_DIR": str(storage_dir),
    }
    seawall = str(Path(sys.executable).parent / "seawall")
    done = subprocess.run(
        [seawall, "run", str(scenario), "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=3600,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"seawall run failed: {done.stderr[-2000:]}")
    return str(json.loads(done.stdout)["workflow_id"])


# --- leg 2: the gateway ---------------------------------------------------------------


@contextlib.contextmanager
def gateway_process(address: str, queue: str, store: Path, work: Path) -> Iterator[str]:
    """The real gateway (``python -m gateway``) on a free loopback port; its URL."""
    port = free_port()
    env = {
        # The benchmark's signing key: its worker verifies the gateway's grants.
        **worker_process_environment(),
        "TEMPORAL_ADDRESS": address,
        "SEAWALL_TASK_QUEUE": queue,
        "SEAWALL_GATEWAY_HOST": "127.0.0.1",
        "SEAWALL_GATEWAY_PORT": str(port),
        "SEAWALL_WORKSPACES": str(work / "workspaces"),
        "SEAWALL_ALLOW_SCRIPTED_MODELS": "1",
        # Its sessions run in yolo, which the operator must allow a client to choose.
        "SEAWALL_LOOSEST_APPROVAL_MODE": "yolo",
        "SEAWALL_PAYLOAD_STORAGE": "filesystem",
        "SEAWALL_PAYLOAD_STORAGE_DIR": str(store),
        "SEAWALL_LOG_LEVEL": "WARNING",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "gateway"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the gateway did not start")
            time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


async def through_gateway(client: Client, url: str, pages: int, work: Path) -> str:
    """A scripted session reading ``pages`` 200 KB files through the gateway's API: one per
    batch, or as few per batch as fit the session's 50 model requests (the gateway's
    sessions run with the default ``max_model_requests``)."""
    per_batch = -(-pages // (DEFAULT_MAX_MODEL_REQUESTS - 1))
    turns: list[dict[str, Any]] = [
        {
            "tool_calls": [
                {"name": "read_file", "arguments": {"path": f"page-{n}.txt"}}
                for n in range(first, min(first + per_batch, pages))
            ]
        }
        for first in range(0, pages, per_batch)
    ]
    turns.append({"text": "read them all"})
    async with httpx.AsyncClient(base_url=url, timeout=600) as http:
        created = await http.post(
            "/v1/sessions",
            json={"model_script": {"turns": turns}, "approval_mode": "yolo"},
        )
        created.raise_for_status()
        session_id = created.json()["session_id"]
        workspace = work / "workspaces" / session_id
        workspace.mkdir(parents=True, exist_ok=True)
        for n in range(pages):
            (workspace / f"page-{n}.txt").write_text(page(n, PAGE_CHARS))
        submitted = await http.post(
            f"/v1/sessions/{session_id}/prompts", json={"text": f"read the {pages} pages"}
        )
        submitted.raise_for_status()
        prompt_id = str(submitted.json()["prompt_id"])
        handle = client.get_workflow_handle(prompt_id)
        while True:  # the session starts the prompt's workflow a moment later
            try:
                await handle.describe()
                break
            except RPCError as err:
                if err.status is not RPCStatusCode.NOT_FOUND:
                    raise
                await asyncio.sleep(0.1)
        await handle.result()
        view = await http.get(f"/v1/prompts/{prompt_id}")  # what a client sees
        view.raise_for_status()
        await http.post(f"/v1/sessions/{session_id}/close")
    return prompt_id


# --- the run --------------------------------------------------------------------------


async def run() -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="seawall-long-"))
    store = work / "payloads"
    report: dict[str, Any] = {
        "threshold_bytes": DEFAULT_THRESHOLD_BYTES,
        "page_chars": PAGE_CHARS,
        "long": [],
    }
    try:
        async with await peers.start_server(store, {}) as env:
            client = bench_client(env.client)  # the benchmark's starts, signed
            address = client.service_client.config.target_host
            queue = f"long-{uuid.uuid4().hex[:8]}"
            async with build_worker(client, queue, trust=bench_trust()):
                for batches in LONG_BATCHES:
                    for leg in ("seawall run", "gateway"):
                        started = time.monotonic()
                        if leg == "gateway":
                            with gateway_process(address, queue, store, work) as url:
                                workflow_id = await through_gateway(client, url, batches, work)
                        else:
                            workflow_id = await asyncio.to_thread(
                                seawall_run, address, store, batches, work
                            )
                        wall = time.monotonic() - started
                        figures = await measure(client, store, workflow_id, leg, batches, wall)
                        report["long"].append(figures)
                        print_long(figures)
    finally:
        shutil.rmtree(work, ignore_errors=True)  # the stored payloads: tens of MB
    return report


def print_long(m: dict[str, Any]) -> None:
    print(
        f"{m['leg']:<12} {m['pages']:>3} pages {m['batches']:>3} batches  {m['stop_reason']:<9} "
        f"conversation {m['conversation_chars'] / 1e6:6.2f} M chars  history "
        f"{m['history_bytes'] / 1e3:8.1f} kB ({m['history_events']} events)  stored "
        f"{m['stored_bytes'] / 1e6:6.2f} MB ({m['stored_payloads']} payloads)  per batch "
        f"{m['batch_ms_median']:7.1f} ms median, {m['batch_ms_p90']:7.1f} ms p90  wall "
        f"{m['wall_seconds']:6.1f} s",
        flush=True,
    )


# --- sdk-python#1890's shape through every durable agent (--issue-1890) -----------------


@dataclass(frozen=True)
class Shape:
    """A long prompt: ``context_chars`` of earlier conversation, ``batches`` model calls that
    each make one tool call returning ``result_chars``, then the answer."""

    context_chars: int
    batches: int
    result_chars: int

    @property
    def conversation_chars(self) -> int:
        """The conversation's size at the end, roughly (context, results, the calls)."""
        return self.context_chars + self.batches * (self.result_chars + 100)


# ≈209k tokens at ≈4 characters a token, 100 model calls of one call, 5 KB outputs.
SHAPE_1890 = Shape(context_chars=836_000, batches=100, result_chars=5_000)
# Each prompt's time limit here: a peer stuck on a failing workflow task must not hang the run.
PROMPT_TIMEOUT_SECONDS = 1_800
# The dev server's dynamic config keys of the history size past which it terminates a workflow
# (its default: 50 MB), and of the size past which it warns.
HISTORY_LIMIT_KEY = "limit.historySize.error"
HISTORY_WARN_KEY = "limit.historySize.warn"


async def reached(
    peer: peers.Peer, client: Client, workflow_id: str, store: Path, seconds: float
) -> dict[str, Any]:
    """How far one harness got with the shape (its model calls, how its history ended: a
    termination's reason or a failure's message), and what it left (its bytes)."""
    history, figures = await peer_history.prompt_bytes(client, workflow_id, store)
    last = history.events[-1]
    reason = ""
    if last.HasField("workflow_execution_terminated_event_attributes"):
        reason = last.workflow_execution_terminated_event_attributes.reason
    elif last.HasField("workflow_execution_failed_event_attributes"):
        reason = last.workflow_execution_failed_event_attributes.failure.message
    return {
        "peer": peer.key,
        "model_calls": sum(
            1
            for e in history.events
            if e.HasField("activity_task_scheduled_event_attributes")
            and peer.model_mark in e.activity_task_scheduled_event_attributes.activity_type.name
        ),
        # COMPLETED, TERMINATED, FAILED, ...
        "outcome": EventType.Name(last.event_type).removeprefix("EVENT_TYPE_WORKFLOW_EXECUTION_"),
        "reason": reason[:200],
        **figures,
        "seconds": round(seconds, 1),
    }


async def issue_1890(shape: Shape, keys: list[str], history_limit: int | None) -> dict[str, Any]:
    """The shape through Seawall and each installed peer of ``keys``, one after another, on a
    dev server whose history size limit is ``history_limit`` bytes (None: its default)."""
    wanted, skipped = peers.available(keys)
    work = Path(tempfile.mkdtemp(prefix="seawall-bench-long-peers-"))
    store = work / "payloads"
    report: dict[str, Any] = {
        "versions": versions(),
        "shape": asdict(shape),
        "history_limit_bytes": history_limit,
        "skipped": skipped,
        "rows": [],
    }
    limit = history_limit or 0
    limits = {HISTORY_LIMIT_KEY: limit, HISTORY_WARN_KEY: limit // 2} if limit else {}
    env = await peers.start_server(store, limits)
    # Seawall's fixtures are built here from the shape: set for this run, then put back.
    replaced = peers.set_shape(1, 0.0, shape.result_chars)
    try:
        for peer in wanted:
            worker, driver = await peers.start_peer(
                env,
                peer,
                str(work),
                calls=1,
                tool_latency=0.0,
                result_chars=shape.result_chars,
                payload_store=store,
            )
            try:
                driver = dataclasses.replace(
                    driver,
                    context_chars=shape.context_chars,
                    result_chars=shape.result_chars,
                    # The whole conversation in every request, as the peers send it.
                    context_budget_chars=max(2 * shape.conversation_chars, 400_000),
                )
                started = time.perf_counter()
                workflow_id, ending = await driver.start(shape.batches, 1)
                # However it ends (a terminated prompt raises), its history says how, below.
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(ending, PROMPT_TIMEOUT_SECONDS)
                seconds = time.perf_counter() - started
                row = await reached(peer, driver.client, workflow_id, store, seconds)
                report["rows"].append(row)
                print(shape_line(row, shape), flush=True)
            finally:
                await worker.stop()
    finally:
        peers.set_shape(replaced.calls, replaced.tool_latency_seconds, replaced.result_chars)
        await env.shutdown()
        shutil.rmtree(work, ignore_errors=True)
    return report


def shape_line(row: dict[str, Any], shape: Shape) -> str:
    stopped = f" ({row['reason']})" if row["reason"] else ""
    return (
        f"{row['peer']:<24} {row['model_calls']:>4} of {shape.batches + 1} model calls  "
        f"{row['outcome']}{stopped}  history {row['history_bytes'] / 1e6:7.2f} MB "
        f"({row['history_events']} events)  stored {row['stored_bytes'] / 1e6:6.2f} MB "
        f"({row['stored_payloads']} payloads)  {row['seconds']} s"
    )


def shape_arg(text: str) -> Shape:
    try:
        context_chars, batches, result_chars = (int(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            "--shape is CONTEXT_CHARS,BATCHES,RESULT_CHARS (three integers)"
        ) from None
    if context_chars < 0 or batches < 1 or result_chars < 1:
        raise argparse.ArgumentTypeError("--shape needs CONTEXT_CHARS ≥ 0, BATCHES and RESULT ≥ 1")
    return Shape(context_chars, batches, result_chars)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, default=None, help="where the results go")
    parser.add_argument(
        "--issue-1890", action="store_true", help="only sdk-python#1890's shape, every peer"
    )
    parser.add_argument(
        "--peers",
        type=peer_keys,
        default=list(PEERS),
        help="with --issue-1890: comma-separated, of " + ",".join(PEERS),
    )
    parser.add_argument(
        "--shape", type=shape_arg, default=SHAPE_1890, help="with --issue-1890: a smaller one"
    )
    parser.add_argument(
        "--history-limit",
        type=int,
        default=None,
        help="with --issue-1890: the dev server's history size limit in bytes (default: 50 MB)",
    )
    args = parser.parse_args(argv)
    if args.issue_1890:
        measured = issue_1890(args.shape, args.peers, args.history_limit)
        run_and_report(measured, lambda _: None, args.json or RESULTS_1890)  # printed as it ran
    else:
        run_and_report(run(), lambda _: None, args.json or RESULTS)  # printed as it ran


if __name__ == "__main__":
    from seawall.runtime.process_exit import run_then_exit

    # Failures included: the SDK's threads must not race the interpreter's finalization.
    run_then_exit(main)
