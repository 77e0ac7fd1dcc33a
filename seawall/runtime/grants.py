"""Signing and verifying session grants, and the operator's signing key
(docs/security-trust.md, "Session grants").

The gateway, ``seawall acp`` and ``seawall run`` are the trusted starters: each starts its
sessions, root prompts and owners' admission workflows through :func:`signing_client`, which
signs each start with :class:`GrantSigner` — a session's or prompt's for the very run the
server started, by the ``grant`` signal — and the worker verifies with :func:`verify_grant`
over the same canonical encoding (:func:`workflows.contracts.grant.canonical_claim`). The
key is the ``session_signing_key`` setting, else the key file
``<data_dir>/session-signing.key``, which :func:`signing_key` creates (mode 0600,
atomically) when missing, so the processes of one data directory share one key with no step
by hand. Nothing here logs a key, a signature or an owner id.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, TypeVar, cast

from temporalio import client as temporal_client

from seawall.runtime.private_files import write_private
from seawall.runtime.settings import SeawallSettings
from workflows.contracts.grant import GRANT_SIGNAL, SessionGrant, StartClaim, canonical_claim
from workflows.contracts.owner_admission import AdmissionState
from workflows.contracts.prompt import PromptInput
from workflows.contracts.session import SessionInput
from workflows.contracts.start_claims import admission_claim, prompt_claim, session_claim

KEY_FILE_NAME = "session-signing.key"
# The starts whose grant names their run (sent by the ``grant`` signal).
RunStart = TypeVar("RunStart", bound=SessionInput | PromptInput)
AnyRunStart = SessionInput | PromptInput
# How long a grant may wait for a worker to start its workflow. Bounds the replay of a
# closed session's start under its old id (docs/security-trust.md, "Session grants").
GRANT_LIFETIME_SECONDS = 3600


def new_signing_key() -> str:
    return secrets.token_urlsafe(32)


def key_file(data_dir: Path) -> Path:
    return data_dir.absolute() / KEY_FILE_NAME


def read_key_file(path: Path) -> str | None:
    """The key in ``path``, or ``None`` when there is no (non-empty) file."""
    try:
        text = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    return text or None


def load_or_create_key_file(path: Path) -> str:
    """The key in ``path``, made first when missing: written to a private temporary file
    and linked into place, so a concurrent reader never sees a half-written key and two
    processes creating it at once agree on one."""
    existing = read_key_file(path)
    if existing is not None:
        return existing
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    try:
        write_private(temporary, new_signing_key() + "\n")
        with contextlib.suppress(FileExistsError):
            os.link(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
    created = read_key_file(path)
    assert created is not None
    return created


def signing_key(settings: SeawallSettings, *, data_dir: Path | None = None) -> str:
    """The operator's key: ``session_signing_key``, else the key file of ``data_dir``
    (default: the ``data_dir`` setting), created when missing."""
    if settings.session_signing_key is not None:
        return settings.session_signing_key.get_secret_value()
    return load_or_create_key_file(key_file(data_dir or settings.data_dir))


def existing_signing_key(settings: SeawallSettings) -> str | None:
    """:func:`signing_key` for a client of another process's workers: ``None`` rather than
    a new key file when there is none (a key of its own would verify nowhere)."""
    if settings.session_signing_key is not None:
        return settings.session_signing_key.get_secret_value()
    return read_key_file(key_file(settings.data_dir))


def verifying_keys(settings: SeawallSettings, *, data_dir: Path | None = None) -> tuple[str, ...]:
    """Every key a worker accepts: the signing key, then the previous one (rotation)."""
    keys = [signing_key(settings, data_dir=data_dir)]
    if settings.session_signing_previous_key is not None:
        keys.append(settings.session_signing_previous_key.get_secret_value())
    return tuple(key for key in keys if key)


def _signature(key: str, claim: StartClaim, workflow_id: str, expires_at: int) -> str:
    payload = canonical_claim(claim, workflow_id=workflow_id, expires_at=expires_at)
    return hmac.new(key.encode(), payload, hashlib.sha256).hexdigest()


class GrantProblem(StrEnum):
    """Why a start's grant does not hold (the refusal names it, never the key)."""

    MISSING = "missing"
    INVALID = "invalid"
    EXPIRED = "expired"
    NO_KEY = "no_key"


def verify_grant(
    claim: StartClaim, *, workflow_id: str, keys: Sequence[str], now: float
) -> GrantProblem | None:
    """``None`` when ``claim.grant`` signs ``claim`` for ``workflow_id`` with one of
    ``keys`` and has not expired; else what is wrong."""
    grant = claim.grant
    if grant is None:
        return GrantProblem.MISSING
    if not keys:
        return GrantProblem.NO_KEY
    if not any(
        hmac.compare_digest(_signature(key, claim, workflow_id, grant.expires_at), grant.signature)
        for key in keys
    ):
        return GrantProblem.INVALID
    if now > grant.expires_at:
        return GrantProblem.EXPIRED
    return None


@dataclass(frozen=True)
class GrantSigner:
    """Signs the starts of one trusted starter with ``key``."""

    key: str
    lifetime_seconds: int = GRANT_LIFETIME_SECONDS
    clock: Callable[[], float] = time.time

    def __repr__(self) -> str:  # never the key
        return "GrantSigner(<key>)"

    def _grant(self, claim: StartClaim, workflow_id: str) -> SessionGrant:
        expires_at = int(self.clock()) + self.lifetime_seconds
        signature = _signature(self.key, claim, workflow_id, expires_at)
        return SessionGrant(expires_at=expires_at, signature=signature)

    def for_run(self, start: AnyRunStart, workflow_id: str, run_id: str) -> SessionGrant:
        """The grant of ``start`` (as :func:`awaiting_grant` made it) for the run ``run_id``
        of ``workflow_id``: what the starter signals to that run."""
        if isinstance(start, SessionInput):
            claim = session_claim(start, run_id=run_id, grant=None)
        else:
            claim = prompt_claim(start, run_id=run_id, grant=None)
        return self._grant(claim, workflow_id)

    def admission(self, state: AdmissionState, workflow_id: str) -> AdmissionState:
        """``state`` with its grant, for the admission workflow ``workflow_id``."""
        unsigned = state.model_copy(update={"grant": None})
        return state.model_copy(
            update={"grant": self._grant(admission_claim(unsigned), workflow_id)}
        )


def awaiting_grant(start: RunStart) -> RunStart:
    """``start`` as a trusted starter sends it: no grant in it, and a note that the grant
    follows, for the run the server starts (docs/security-trust.md, "Session grants")."""
    return cast(RunStart, start.model_copy(update={"grant": None, "grant_follows": True}))


def _needs_grant(arg: Any) -> bool:
    return (
        isinstance(arg, SessionInput | PromptInput) and arg.grant is None and not arg.grant_follows
    )


class _SigningOutbound(temporal_client.OutboundInterceptor):
    def __init__(self, next: temporal_client.OutboundInterceptor, signer: GrantSigner) -> None:
        super().__init__(next)
        self._signer = signer

    async def start_workflow(
        self, input: temporal_client.StartWorkflowInput
    ) -> temporal_client.WorkflowHandle[Any, Any]:
        runs = [awaiting_grant(arg) if _needs_grant(arg) else arg for arg in input.args]
        input.args = [self._admission(arg, input.id) for arg in runs]
        handle = await super().start_workflow(input)
        run_id = handle.result_run_id
        for arg in runs:
            if isinstance(arg, SessionInput | PromptInput) and arg.grant_follows and run_id:
                # The run the server started (or, with USE_EXISTING, found): the grant holds
                # for it only, and only if its input is this one.
                grant = self._signer.for_run(arg, input.id, run_id)
                await self.signal_workflow(
                    temporal_client.SignalWorkflowInput(
                        id=input.id,
                        run_id=run_id,
                        signal=GRANT_SIGNAL,
                        args=[grant],
                        headers={},
                        rpc_metadata=input.rpc_metadata,
                        rpc_timeout=input.rpc_timeout,
                    )
                )
        return handle

    async def start_update_with_start_workflow(
        self, input: temporal_client.StartWorkflowUpdateWithStartInput
    ) -> temporal_client.WorkflowUpdateHandle[Any]:
        start = input.start_workflow_input
        start.args = [self._admission(arg, start.id) for arg in start.args]
        return await super().start_update_with_start_workflow(input)

    def _admission(self, arg: Any, workflow_id: str) -> Any:
        if isinstance(arg, AdmissionState) and arg.grant is None:
            return self._signer.admission(arg, workflow_id)
        return arg


class SigningInterceptor(temporal_client.Interceptor):
    """Signs every session, prompt and owner admission workflow a client starts without a
    grant: a session or prompt starts with ``grant_follows`` and gets the grant for the run
    the server started by the ``grant`` signal right after; an admission workflow's state
    carries its grant. The gateway, ``seawall acp``, ``seawall run``, the scripts, the
    benchmarks and the test harness all start workflows through it."""

    def __init__(self, signer: GrantSigner) -> None:
        self._signer = signer

    def intercept_client(
        self, next: temporal_client.OutboundInterceptor
    ) -> temporal_client.OutboundInterceptor:
        return _SigningOutbound(next, self._signer)


def signing_client(client: temporal_client.Client, signer: GrantSigner) -> temporal_client.Client:
    """``client`` that signs the sessions, prompts and admission workflows it starts with
    ``signer`` (see :class:`SigningInterceptor`), in place of any signer it had."""
    config = client.config()
    others = [i for i in config["interceptors"] if not isinstance(i, SigningInterceptor)]
    config["interceptors"] = [*others, SigningInterceptor(signer)]
    return temporal_client.Client(**config)
