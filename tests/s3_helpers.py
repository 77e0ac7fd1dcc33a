"""A real S3-compatible server for tests (moto's ``moto_server``, installed from the dev
dependencies; nothing downloads at run time), and a fresh bucket on it per test."""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.telemetry_helpers import free_port

REGION = "us-east-1"


@contextmanager
def moto_server() -> Iterator[str]:
    """Run ``moto_server`` on a free loopback port until the block ends; yields its URL."""
    port = free_port()
    executable = Path(sys.executable).parent / "moto_server"
    process = subprocess.Popen(
        [str(executable), "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    endpoint = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{endpoint}/moto-api/", timeout=2).close()
                break
            except (urllib.error.URLError, ConnectionError):
                assert process.poll() is None, "moto_server exited"
                assert time.monotonic() < deadline, "moto_server never answered"
                time.sleep(0.1)
        yield endpoint
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def use_s3(monkeypatch: pytest.MonkeyPatch) -> None:
    """The AWS chain's credentials for the test server (any will do there)."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "test")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "test")
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)


def new_bucket_name() -> str:
    return f"seawall-{uuid.uuid4().hex[:12]}"
