"""The benchmarks as the operator's own trusted starter (docs/security-trust.md).

Their workers verify session grants, allow the benchmarks' scripted models and fixture tools,
and accept workspaces under the temporary directory; their clients sign what they start.
One key per benchmark run, handed to a worker process it spawns in the environment
(:data:`KEY_ENV`), so that process verifies what this one signs.
"""

from __future__ import annotations

import os

from temporalio.client import Client

from activities.trust import WorkerTrust
from seawall.runtime.grants import GrantSigner, new_signing_key, signing_client
from seawall.worker.build import local_run_trust

KEY_ENV = "SEAWALL_SESSION_SIGNING_KEY"
# A worker process of this benchmark (``--serve-worker``) inherits its parent's key.
BENCH_KEY = os.environ.get(KEY_ENV) or new_signing_key()


def bench_trust() -> WorkerTrust:
    """The operator's own trust (``trusted_local_run``'s), with the benchmark run's key."""
    return local_run_trust(BENCH_KEY)


def bench_client(client: Client) -> Client:
    """``client``, signing the sessions and prompts it starts with the benchmark's key."""
    return signing_client(client, GrantSigner(BENCH_KEY))


def worker_process_environment() -> dict[str, str]:
    """The environment of a worker process this benchmark spawns."""
    return {**os.environ, KEY_ENV: BENCH_KEY}
