"""A real ``python worker.py`` process for telemetry tests: its JSON log lines (stderr) and
its Prometheus endpoint, exactly as an operator would collect them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.server_metrics import free_port
from tests.trust_helpers import harness_environment

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$")
GUARD_EVENTS = frozenset(
    {"guard_transition", "failed_call_repeat", "loop_detected", "loop_rule_decision"}
)


def closed_port() -> int:
    """A port nothing listens on (bound, then released)."""
    return free_port()


@dataclass
class WorkerProcess:
    process: subprocess.Popen[bytes]
    log_path: Path
    metrics_port: int | None

    def log_lines(self) -> list[dict[str, Any]]:
        """Every JSON log line the worker wrote so far (non-JSON lines are kept as text)."""
        lines: list[dict[str, Any]] = []
        for raw in self.log_path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                parsed = json.loads(raw)
            except ValueError:
                parsed = {"event": "<not json>", "text": raw}
            lines.append(parsed if isinstance(parsed, dict) else {"event": raw})
        return lines

    def log_text(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def scrape_text(self) -> str:
        assert self.metrics_port is not None
        url = f"http://127.0.0.1:{self.metrics_port}/metrics"
        with urllib.request.urlopen(url, timeout=5) as response:
            return str(response.read().decode())

    def samples(self) -> list[tuple[str, dict[str, str], float]]:
        """Every sample of the scrape: (metric, labels, value)."""
        found = []
        for line in self.scrape_text().splitlines():
            match = SAMPLE.match(line)
            if match and not line.startswith("#"):
                labels = dict(
                    re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="([^"]*)"', match.group(2) or "")
                )
                found.append((match.group(1), labels, float(match.group(3))))
        return found

    def assert_running(self) -> None:
        if self.process.poll() is not None:
            raise AssertionError(
                f"the worker exited ({self.process.returncode}):\n{self.log_text()}"
            )


@contextmanager
def worker_process(
    address: str,
    task_queue: str,
    log_path: Path,
    *,
    metrics_port: int | None = None,
    args: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
) -> Iterator[WorkerProcess]:
    """``worker.py`` on ``task_queue`` with JSON logs to ``log_path``, a private (empty)
    user config home, and every workflow task replayed from history (no cache), so
    replay-safety is exercised on every step."""
    command = [
        sys.executable,
        str(ROOT / "worker.py"),
        "--address",
        address,
        "--task-queue",
        task_queue,
        "--max-cached-workflows",
        "0",
        "--log-format",
        "json",
        *args,
    ]
    if metrics_port is not None:
        command += ["--metrics-port", str(metrics_port)]
    base = {k: v for k, v in os.environ.items() if not k.startswith(("SEAWALL_", "OTEL_"))}
    environment = {
        **base,
        "XDG_CONFIG_HOME": str(log_path.parent / "xdg"),
        "SEAWALL_LOG_LEVEL": "DEBUG",
        **harness_environment(),
        **(env or {}),
    }
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            command, cwd=ROOT, env=environment, stdout=log, stderr=subprocess.STDOUT
        )
    try:
        yield WorkerProcess(process, log_path, metrics_port)
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=30)
