"""Long prompts: conversations far past Temporal's payload limits, and what they cost.

    python bench/long_prompts.py [--rounds N] [--short-prompts N] [--baseline-ref REF]
                                 [--skip-long] [--json PATH]
    python bench/long_prompts.py --issue-1890 [--peers seawall,openai-agents,...]
                                 [--shape CONTEXT_CHARS,BATCHES,RESULT_CHARS] [--json PATH]

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
   between consecutive model requests, from the history's own timestamps).
2. **The short prompt against today's code.** A short prompt (5 batches of 2 KB results)
   runs in worker subprocesses of two trees: this checkout and ``--baseline-ref`` (default:
   the commit this branch started from) extracted with ``git archive``; the two alternate in
   rounds so the machine's load hits them alike. Reported side by side: per-batch latency and
   history bytes, and the ratio; the goal is ≤ 1.05. Printed, never asserted (the tests make
   no timing claims).

Results go to ``bench/results/long_prompts.json``.

3. **sdk-python#1890's shape** (``--issue-1890``, only this leg): a ≈209k-token conversation
   (836,000 characters before the prompt), 100 model calls of one tool call each, 5 KB tool
   outputs, through Seawall and each installed durable-agent peer of ``bench/peers.py``, on a
   dev server with its default history limits (``bench/long_peers.py``). Printed per harness: the
   model calls it reached, how it ended (a terminated prompt: where it stopped and why), its
   history bytes and events, and what the payload store holds for it. ``--shape`` runs a smaller
   one. Results go to ``bench/results/long_prompts_1890.json`` unless ``--json`` says.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import httpx
import yaml
from temporalio.client import Client, WorkflowHistory
from temporalio.converter import ExternalStorage
from temporalio.service import RPCError, RPCStatusCode

from bench import long_peers
from bench.long_peers import SHAPE_1890, Shape
from bench.peer_history import batch_gaps
from bench.peers import PEERS, peer_keys
from bench.report_runner import percentile, run_and_report
from bench.server_metrics import free_port
from bench.trusted import bench_client, bench_trust, worker_process_environment
from seawall.runtime.devserver import start_dev_server
from seawall.runtime.storage import DEFAULT_THRESHOLD_BYTES, FilesystemStorageDriver
from seawall.worker.build import build_worker
from workflows.contracts.activity import CALL_MODEL
from workflows.contracts.prompt import PromptResult
from workflows.contracts.prompt_options import DEFAULT_MAX_MODEL_REQUESTS

ROOT = Path(__file__).resolve().parent.parent

RESULTS = ROOT / "bench" / "results" / "long_prompts.json"
RESULTS_1890 = ROOT / "bench" / "results" / "long_prompts_1890.json"
BASELINE_REF = "514ba60"  # main when issue 13 started: the 1,000,000-character stop
PAGE_CHARS = 200_000
LONG_BATCHES = (30, 100)
SHORT_BATCHES = 5
SHORT_RESULT_CHARS = 2_000


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


@dataclass
class Measured:
    """One prompt's figures."""

    leg: str
    pages: int
    batches: int
    stop_reason: str
    conversation_chars: int
    history_bytes: int
    history_events: int
    stored_bytes: int
    stored_payloads: int
    batch_ms_median: float
    batch_ms_p90: float
    wall_seconds: float


def batch_latencies_ms(history: WorkflowHistory) -> list[float]:
    """Time between consecutive model requests being scheduled: one batch each."""
    return [gap * 1000 for gap in batch_gaps(history, CALL_MODEL)]


async def measure(
    client: Client,
    driver: FilesystemStorageDriver,
    workflow_id: str,
    leg: str,
    pages: int,
    wall: float,
) -> Measured:
    handle = client.get_workflow_handle(workflow_id, result_type=PromptResult)
    result = await handle.result()
    history = await handle.fetch_history()
    latencies = batch_latencies_ms(history)
    digests: set[str] = set()
    for refs in driver.workflow_refs(client.namespace):
        if refs.workflow_id == workflow_id:
            digests = refs.digests()
    return Measured(
        leg=leg,
        pages=pages,
        batches=result.model_requests - 1,
        stop_reason=result.stop_reason.value,
        conversation_chars=sum(len(m.content) for m in result.messages),
        history_bytes=sum(e.ByteSize() for e in history.events),
        history_events=len(history.events),
        stored_bytes=driver.stored_size(digests),
        stored_payloads=len(digests),
        batch_ms_median=round(statistics.median(latencies), 2) if latencies else 0.0,
        batch_ms_p90=round(percentile(latencies, 0.9), 2),
        wall_seconds=round(wall, 2),
    )


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


# --- leg 3: the short prompt against today's code -------------------------------------

# Runs in a worker subprocess of either tree: only APIs both trees have, the payload storage
# where the tree has it. run_child puts the tree first on the child's PYTHONPATH (and makes
# it the cwd), so ``seawall`` (and an older tree's ``worker.py``) come from that tree: the
# PYTHONPATH entry is searched before the editable install's finder, which only maps names to
# this checkout.
CHILD = r"""
import asyncio, json, sys, tempfile, uuid
from seawall.runtime.plugin import connect
from seawall.scenario.driver import run_scenario
from seawall.scenario.format import Scenario
try:  # the composition root: seawall.worker.build, or an older tree's worker.py
    import seawall.worker.build as root
except ImportError:
    import worker as root

address, spec_json, count, storage_dir = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
spec = Scenario.model_validate(json.loads(spec_json))

async def main():
    try:
        from seawall.runtime.settings import load_settings
        from seawall.runtime.storage import payload_storage
        settings = load_settings(environ={"HOME": "/nonexistent",
                                          "SEAWALL_PAYLOAD_STORAGE_DIR": storage_dir}).settings
        client = await connect(address, "default", storage=payload_storage(settings))
    except ImportError:
        client = await connect(address, "default")
    queue = f"short-{uuid.uuid4().hex[:8]}"
    ids = []
    if hasattr(root, "trusted_local_run"):  # a tree whose worker checks session grants
        client, trust = root.trusted_local_run(client)
        worker = root.build_worker(client, queue, trust=trust)
    else:
        worker = root.build_worker(client, queue)
    async with worker:
        for _ in range(count):
            with tempfile.TemporaryDirectory() as ws:
                from pathlib import Path
                result = await run_scenario(client, spec, task_queue=queue, workspace=Path(ws))
            ids.append(result.workflow_id)
    print(json.dumps(ids))

asyncio.run(main())
from seawall.runtime.process_exit import exit_without_finalizing
exit_without_finalizing(0)
"""


def extract(ref: str, into: Path) -> Path:
    """The tree of ``ref`` (``git archive``), for the baseline's worker."""
    archive = into / "baseline.tar"
    subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", "-o", str(archive), ref], check=True
    )
    tree = into / "baseline"
    with tarfile.open(archive) as tar:
        tar.extractall(tree, filter="data")
    return tree


def run_child(tree: Path, address: str, count: int, storage_dir: Path) -> list[str]:
    spec = long_prompt_scenario(SHORT_BATCHES, SHORT_RESULT_CHARS)
    spec["name"] = "short"
    del spec["max_output_chars"]  # today's scenario format has no such field (nor need)
    done = subprocess.run(
        [sys.executable, "-c", CHILD, address, json.dumps(spec), str(count), str(storage_dir)],
        cwd=tree,
        capture_output=True,
        text=True,
        timeout=1800,
        env={**os.environ, "PYTHONPATH": str(tree), "SEAWALL_LOG_LEVEL": "WARNING"},
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"short-prompt worker in {tree} failed: {done.stderr[-2000:]}")
    ids: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return ids


async def short_prompt_figures(client: Client, ids: list[str]) -> tuple[list[float], list[int]]:
    latencies: list[float] = []
    sizes: list[int] = []
    for workflow_id in ids:
        history = await client.get_workflow_handle(workflow_id).fetch_history()
        latencies.extend(batch_latencies_ms(history))
        sizes.append(sum(e.ByteSize() for e in history.events))
    return latencies, sizes


# --- the run --------------------------------------------------------------------------


async def run(args: argparse.Namespace) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="seawall-long-"))
    try:
        return await _run(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)  # the stored payloads: tens of MB


async def _run(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    store = work / "payloads"
    driver = FilesystemStorageDriver(store)
    storage = ExternalStorage(drivers=[driver], payload_size_threshold=DEFAULT_THRESHOLD_BYTES)
    report: dict[str, Any] = {
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "threshold_bytes": DEFAULT_THRESHOLD_BYTES,
        "page_chars": PAGE_CHARS,
        "long": [],
    }
    async with await start_dev_server(storage=storage) as env:
        client = bench_client(env.client)  # the benchmark's starts, signed
        address = client.service_client.config.target_host
        if not args.skip_long:
            queue = f"long-{uuid.uuid4().hex[:8]}"
            async with build_worker(client, queue, trust=bench_trust()):
                for batches in LONG_BATCHES:
                    started = time.monotonic()
                    workflow_id = await asyncio.to_thread(
                        seawall_run, address, store, batches, work
                    )
                    figures = await measure(
                        client,
                        driver,
                        workflow_id,
                        "seawall run",
                        batches,
                        time.monotonic() - started,
                    )
                    report["long"].append(asdict(figures))
                    print_long(figures)
                    started = time.monotonic()
                    with gateway_process(address, queue, store, work) as url:
                        prompt_id = await through_gateway(client, url, batches, work)
                    figures = await measure(
                        client, driver, prompt_id, "gateway", batches, time.monotonic() - started
                    )
                    report["long"].append(asdict(figures))
                    print_long(figures)
        tree = extract(args.baseline_ref, work)
        per_tree: dict[str, tuple[list[float], list[int]]] = {
            "baseline": ([], []),
            "current": ([], []),
        }
        for _ in range(args.rounds):
            for name, root in (("baseline", tree), ("current", ROOT)):
                ids = await asyncio.to_thread(run_child, root, address, args.short_prompts, store)
                latencies, sizes = await short_prompt_figures(client, ids)
                per_tree[name][0].extend(latencies)
                per_tree[name][1].extend(sizes)
        short = {
            name: {
                "batch_ms_median": round(statistics.median(lat), 2),
                "batch_ms_p90": round(percentile(lat, 0.9), 2),
                "history_bytes_median": int(statistics.median(sizes)),
                "batches_measured": len(lat),
            }
            for name, (lat, sizes) in per_tree.items()
        }
        ratio = short["current"]["batch_ms_median"] / short["baseline"]["batch_ms_median"]
        report["short"] = {
            "baseline_ref": args.baseline_ref,
            "rounds": args.rounds,
            "prompts_per_round": args.short_prompts,
            **short,
            "median_ratio_current_to_baseline": round(ratio, 3),
            "goal": "<= 1.05",
        }
        print_short(report["short"])
    return report


def print_long(m: Measured) -> None:
    print(
        f"{m.leg:<12} {m.pages:>3} pages {m.batches:>3} batches  {m.stop_reason:<9} conversation "
        f"{m.conversation_chars / 1e6:6.2f} M chars  history {m.history_bytes / 1e3:8.1f} kB "
        f"({m.history_events} events)  stored {m.stored_bytes / 1e6:6.2f} MB "
        f"({m.stored_payloads} payloads)  per batch {m.batch_ms_median:7.1f} ms median, "
        f"{m.batch_ms_p90:7.1f} ms p90  wall {m.wall_seconds:6.1f} s",
        flush=True,
    )


def print_short(short: dict[str, Any]) -> None:
    base, cur = short["baseline"], short["current"]
    print(f"\nshort prompt ({SHORT_BATCHES} batches of {SHORT_RESULT_CHARS} chars), side by side:")
    print(f"  {'':<22}{'today (' + short['baseline_ref'] + ')':>20}{'this branch':>16}")
    print(
        f"  {'per batch, median ms':<22}{base['batch_ms_median']:>20}{cur['batch_ms_median']:>16}"
    )
    print(f"  {'per batch, p90 ms':<22}{base['batch_ms_p90']:>20}{cur['batch_ms_p90']:>16}")
    print(
        f"  {'history bytes':<22}{base['history_bytes_median']:>20}"
        f"{cur['history_bytes_median']:>16}"
    )
    print(f"  ratio (median): {short['median_ratio_current_to_baseline']} (goal {short['goal']})")


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
    parser.add_argument("--rounds", type=int, default=3, help="short-prompt rounds per tree")
    parser.add_argument("--short-prompts", type=int, default=10, help="prompts per round")
    parser.add_argument("--baseline-ref", default=BASELINE_REF, help="today's code (git ref)")
    parser.add_argument("--skip-long", action="store_true", help="only the short prompt")
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
        measure = long_peers.run(args.shape, args.peers, args.history_limit)
        run_and_report(measure, lambda _: None, args.json or RESULTS_1890)  # printed as it ran
        return
    args.json = args.json or RESULTS
    report = asyncio.run(run(args))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(f"\nresults: {args.json}")


if __name__ == "__main__":
    from seawall.runtime.process_exit import run_then_exit

    # Failures included: the SDK's threads must not race the interpreter's finalization.
    run_then_exit(main)
