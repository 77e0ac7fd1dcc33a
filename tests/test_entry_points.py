"""Every program a user runs exits with its own code, never with a crash at interpreter exit.

The Temporal SDK's core threads can outlive the event loop and abort CPython's finalization
(``Fatal Python error: PyGILState_Release``, exit 134) after a program already printed its
results (seawall/runtime/process_exit.py). Each entry point here talks to a real Temporal
server (embedded, started and shut down by the program itself where it does so in use) and
must exit 0 with no fatal error on stderr. The worker's and ``seawall up``'s own exits are
checked in tests/test_worker.py and tests/e2e/test_stack.py.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
import yaml

from gateway.app import MAX_HEADER_BYTES
from seawall.cli.prompt import EXIT_LOOP_STOPPED
from tests.scenario_helpers import SCENARIOS
from tests.telemetry_helpers import free_port

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def clean_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "TEMPORAL_ADDRESS"}
    env["XDG_CONFIG_HOME"] = str(tmp_path / "config")
    return env


def check_clean_exit(done: subprocess.CompletedProcess[str], code: int = 0) -> None:
    assert "Fatal Python error" not in done.stderr, done.stderr[-2000:]
    assert done.returncode == code, done.stderr[-2000:]


def test_seawall_config_and_run_exit_as_documented(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    check_clean_exit(
        subprocess.run(
            [str(BIN / "seawall"), "config", "--json"],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
    )
    # Starts the embedded dev server, runs the scenario, shuts the server down, prints.
    done = subprocess.run(
        [str(BIN / "seawall"), "run", str(SCENARIOS / "read-missing-file-loop.yaml")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    check_clean_exit(done, EXIT_LOOP_STOPPED)  # as `seawall prompt` exits for a loop stop
    assert "stop:       loop_detected" in done.stdout


def test_the_loop_benchmark_exits_zero_after_its_real_workflow_check(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    names = ("legit-paging.yaml", "loop-edit-never-matches.yaml")
    for name in names:
        shutil.copy(ROOT / "bench" / "corpus" / name, corpus / name)
    labels = yaml.safe_load((ROOT / "bench" / "corpus" / "labels.yaml").read_text())
    (corpus / "labels.yaml").write_text(yaml.safe_dump({n: labels[n] for n in names}))
    out = tmp_path / "out.json"
    # One scenario through the real workflow: an embedded server started and shut down.
    command = [sys.executable, "bench/loops.py", str(corpus), "--sample", "1", "--json", str(out)]
    done = subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, env=clean_env(tmp_path), timeout=600
    )
    check_clean_exit(done)
    assert out.exists()


def start_gateway(tmp_path: Path, port: int) -> subprocess.Popen[str]:
    """``python -m gateway`` on ``port``, returned once it listens. No Temporal server is
    there: the gateway starts anyway and answers 503 until one appears."""
    env = {
        **clean_env(tmp_path),
        "SEAWALL_GATEWAY_PORT": str(port),
        "TEMPORAL_ADDRESS": f"127.0.0.1:{free_port()}",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "gateway"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    started = next((line for line in process.stderr if "Uvicorn running" in line), None)
    assert started is not None, "the gateway never started"
    return process


@pytest.mark.parametrize("how", ["SIGTERM", "SIGINT"])
def test_the_gateway_exits_zero_when_stopped(tmp_path: Path, how: str) -> None:
    process = start_gateway(tmp_path, free_port())
    process.send_signal(getattr(signal, how))
    _, rest = process.communicate(timeout=60)
    assert "Fatal Python error" not in rest
    assert process.returncode == 0, rest[-2000:]


def test_the_gateway_refuses_an_oversized_request_head(tmp_path: Path) -> None:
    port = free_port()
    process = start_gateway(tmp_path, port)
    try:
        huge = {"X-Padding": "a" * (MAX_HEADER_BYTES + 1024)}
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
            assert http.get("/healthz").status_code == 200
            refused = http.get("/healthz", headers=huge)
            assert refused.status_code == 431
            assert "request headers are larger" in refused.json()["detail"]
            assert http.get("/healthz").status_code == 200  # and it still serves
    finally:
        process.terminate()
        process.communicate(timeout=60)
