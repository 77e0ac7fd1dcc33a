"""What a prompt costs the Temporal server: its CPU and its persistence writes.

The benchmarks run on the embedded dev server (``temporal server start-dev``), one process
holding every Temporal service and its SQLite store. Two windows onto it:

- its CPU time (user + system, from ``/proc/<pid>/stat``) across a run, divided by the
  prompts the run completed;
- its Prometheus endpoint (``--metrics-port``), read before and after a run:
  ``persistence_requests`` by operation (``UpdateWorkflowExecution`` is the write every
  workflow update makes to the store; in production each is a PostgreSQL/Cassandra
  transaction). (Its ``state_transition_count`` histogram records each execution's
  running total at every update, so its sum is not a count of transitions.) Its
  ``task_latency_queue`` histogram times each transfer task from its creation to its
  processing: the hand-offs (:data:`HANDOFF_TASKS`) of a workflow task or a non-eager
  activity to matching, which wait for the history service's next transfer-queue read.

These are the per-prompt figures ``bench/capacity.py`` sizes a production cluster from
(docs/capacity.md). Counters are for the ``default`` namespace only, so the server's own
system workflows stay out.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import re
import socket
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

NAMESPACE = "default"
# Persistence operations that write a workflow's state or history: each is one store
# transaction on PostgreSQL/Cassandra.
WRITE_OPERATIONS = frozenset(
    {"CreateWorkflowExecution", "UpdateWorkflowExecution", "ConflictResolveWorkflowExecution"}
)
# Transfer tasks that hand work to matching: a workflow task (after an activity result, a
# signal, a start) and an activity the worker did not take eagerly.
ACTIVITY_HANDOFF = "TransferActiveTaskActivity"
HANDOFF_TASKS = frozenset({"TransferActiveTaskWorkflowTask", ACTIVITY_HANDOFF})
_SAMPLE = re.compile(
    r"^(?P<name>[a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(?P<labels>[^}]*)\})?\s+(?P<value>\S+)"
)
_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def free_port() -> int:
    """A loopback port nothing listens on now (bound, then released): the dev server's
    metrics endpoint here; the tests and ``scripts/chaos.py`` use it for the servers they
    start."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass(frozen=True)
class ServerCounters:
    """Cumulative counters of the dev server at one moment; subtract two for a run."""

    workflow_writes: float = 0.0  # WRITE_OPERATIONS on the history service
    persistence_requests: float = 0.0  # every operation, every service, this namespace
    history_reads: float = 0.0  # ReadHistoryBranch: replays after cache eviction, fetches
    handoffs: float = 0.0  # HANDOFF_TASKS processed
    handoff_wait_seconds: float = 0.0  # their summed creation-to-processing time
    # Of the hand-offs, the activities: calls the worker did not start eagerly.
    activity_handoffs: float = 0.0

    def _pairs(self, other: ServerCounters) -> zip[tuple[float, float]]:
        return zip(dataclasses.astuple(self), dataclasses.astuple(other), strict=True)

    def __sub__(self, other: ServerCounters) -> ServerCounters:
        return ServerCounters(*(a - b for a, b in self._pairs(other)))

    def __add__(self, other: ServerCounters) -> ServerCounters:
        return ServerCounters(*(a + b for a, b in self._pairs(other)))


def parse_counters(text: str) -> ServerCounters:
    """The counters of one Prometheus text exposition."""
    writes = requests = reads = handoffs = handoff_wait = activity_handoffs = 0.0
    for line in text.splitlines():
        match = _SAMPLE.match(line)
        if match is None:
            continue
        labels = dict(_LABEL.findall(match["labels"] or ""))
        if labels.get("namespace") != NAMESPACE:
            continue
        name, value = match["name"], float(match["value"])
        if name == "persistence_requests":
            requests += value
            operation = labels.get("operation", "")
            if operation in WRITE_OPERATIONS and labels.get("service_name") == "history":
                writes += value
            elif operation == "ReadHistoryBranch":
                reads += value
        elif name.startswith("task_latency_queue_") and labels.get("operation") in HANDOFF_TASKS:
            if name == "task_latency_queue_count":
                handoffs += value
                if labels["operation"] == ACTIVITY_HANDOFF:
                    activity_handoffs += value
            elif name == "task_latency_queue_sum":
                handoff_wait += value
    return ServerCounters(writes, requests, reads, handoffs, handoff_wait, activity_handoffs)


def read_counters(port: int | None) -> ServerCounters:
    """The dev server's counters now (all zero without a metrics port)."""
    if port is None:
        return ServerCounters()
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        return parse_counters(response.read().decode("utf-8"))


# The dev server reports its persistence counters to its endpoint about once a second (its
# hand-offs at once): a run's last writes show up to a second after it ended. A settle gives
# up after SETTLE_READS reads: writes still arriving then are counted in the next run.
SETTLE_SECONDS = 1.0
SETTLE_READS = 4


async def settled_counters(port: int | None) -> ServerCounters:
    """The counters once every workflow write made so far has reached them: read until two
    reads :data:`SETTLE_SECONDS` apart agree on it, so a run's writes are not counted in the
    next one (the other requests never stop: the pollers' own keep coming)."""
    counters = read_counters(port)
    for _ in range(SETTLE_READS if port is not None else 0):
        await asyncio.sleep(SETTLE_SECONDS)
        later = read_counters(port)
        if later.workflow_writes == counters.workflow_writes:
            return later
        counters = later
    return counters


@dataclass
class SettledReadings:
    """Runs one after another, each counted between two settled reads of the counters; the
    read that ends one run starts the next, so each run waits for one settle, not two."""

    port: int | None
    last: ServerCounters = field(default_factory=ServerCounters)

    @classmethod
    async def start(cls, port: int | None) -> SettledReadings:
        return cls(port, await settled_counters(port))

    async def since_last(self) -> ServerCounters:
        """What the counters gained since the last settled read (the run just ended)."""
        now = await settled_counters(self.port)
        gained, self.last = now - self.last, now
        return gained


def process_cpu_seconds(pid: int) -> float:
    """CPU time (user + system) of one process so far; 0 once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def dev_server_pids() -> list[int]:
    """This process's children that are the ``temporal`` dev server (not worker
    subprocesses)."""
    me = str(os.getpid())
    pids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            head, tail = stat.read_text().rsplit(")", 1)
        except (OSError, ValueError):
            continue
        fields = tail.split()
        if fields and fields[1] == me and head.split("(", 1)[-1] == "temporal":
            pids.append(int(stat.parent.name))
    return pids


def server_cpu_seconds() -> float:
    """CPU time so far of the embedded dev server this process started."""
    return sum(process_cpu_seconds(pid) for pid in dev_server_pids())
