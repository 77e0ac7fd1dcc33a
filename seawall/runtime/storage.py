"""Where large payloads live: Temporal External Storage for the one data converter.

docs/durability.md, "Long prompts and stored payloads". A long prompt's conversation, its model
requests and its big tool results are far past Temporal's 2 MB payload limit; the SDK's External
Storage (``temporalio.converter.ExternalStorage``) replaces every payload at or above the operator's
threshold by a small reference and keeps the bytes elsewhere. :func:`payload_storage` builds it from
the settings, for the plugin (``seawall.runtime.plugin``) every client, worker and replayer uses:

- ``filesystem`` (the embedded default): :class:`FilesystemStorageDriver`, ours, under
  ``<data_dir>/payloads`` (or ``payload_storage_dir``): content-addressed, so identical
  payloads are stored once, with a per-workflow index that ``seawall storage gc`` reads and
  the gateway's codec checks (each claim names the workflow it was stored for);
- ``s3`` (production): the SDK's ``temporalio.contrib.aws.s3driver`` on a bucket (MinIO in
  docker-compose.yml), through our client (``seawall.runtime.storage_s3``);
- ``off``: every payload stays inline (and a prompt past 2 MB fails its workflow task).

Every storage fault is an ``ApplicationError`` whose type says what happened
(``StoredPayloadMissing``, ``StoredPayloadCorrupt``, ``PayloadStoreFailed``) and whose
message says which payload and what to do, plus one ``payload_storage_failed`` line in the
process's log (the kind only: neither payload content nor its digest, a fingerprint of
it). Where each surfaces (docs/durability.md, "When a payload cannot be read or stored"): an
activity that cannot read its input fails within its retry policy and the prompt ends with
``error``; a workflow task that cannot read or store fails with the message (the Temporal UI
shows it) and the prompt waits until the payload is back; a client reading a result gets the
error itself.

None of these errors is non-retryable, deliberately: while a workflow replays, a
non-retryable error would fail the workflow with a command its history contradicts, and
Temporal would report a nondeterminism error instead of the cause; a prompt is never failed
over a fault a restore would fix. Every process that decodes payloads must use the same store:
the worker, the gateway (it reads prompt results and serves the codec), ``seawall run`` (on
its embedded server, a temporary directory that goes with the server) and the replayer
(``tests/replay/payloads/`` holds the fixtures' stored payloads); ``client_with_plugin``
keeps a client's storage when a worker is built from it. The driver's name, claims, content
addressing and index are recorded in histories: change them only so that what was written
before still resolves (docs/architecture.md, "Versioning").
"""

from __future__ import annotations

import asyncio
import errno
import hashlib
import os
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

import structlog
from temporalio.api.common.v1 import Payload
from temporalio.converter import (
    ExternalStorage,
    StorageDriver,
    StorageDriverClaim,
    StorageDriverRetrieveContext,
    StorageDriverStoreContext,
    StorageDriverWorkflowInfo,
)
from temporalio.exceptions import ApplicationError

from seawall.runtime import storage_chunks
from seawall.runtime.private_files import PRIVATE_FILE_MODE, private_dir, private_file
from seawall.runtime.storage_s3 import s3_driver

PayloadStorageKind = Literal["filesystem", "s3", "off"]
PAYLOAD_STORAGE_KINDS: tuple[PayloadStorageKind, ...] = ("filesystem", "s3", "off")
# Payloads of at least this many bytes go to storage by default: every ordinary prompt's
# payloads stay inline (no storage round trip), a 200 KB tool result does not.
DEFAULT_THRESHOLD_BYTES = 64 * 1024

FILESYSTEM_DRIVER = "seawall.fs"
BLOBS = "blobs"
CHUNKS = "chunks"
REFS = "refs"
WORKFLOW_ID_FILE = "workflow-id"
# Index entries of payloads stored with no workflow in their context (a client starting a
# standalone activity, say): never collected by ``seawall storage gc``.
UNATTRIBUTED = "_unattributed"
# The claim key naming the workflow a payload was stored for (claims written before it have
# none): what lets the gateway's codec serve an owner only its own sessions' payloads
# (gateway/codec_scope.py).
WORKFLOW_CLAIM = "workflow_id"

_DIGEST = re.compile("[0-9a-f]{64}")
STORED_PAYLOAD_MISSING = "StoredPayloadMissing"
STORED_PAYLOAD_CORRUPT = "StoredPayloadCorrupt"
PAYLOAD_STORE_FAILED = "PayloadStoreFailed"

log = structlog.get_logger("seawall.storage")


def _failure(kind: str, message: str) -> ApplicationError:
    """A storage fault. Never non-retryable: while a workflow replays, a non-retryable error
    would fail the workflow with a command its history contradicts (a nondeterminism error
    hiding this message), and a restored payload must let the prompt go on."""
    log.error("payload_storage_failed", kind=kind, driver=FILESYSTEM_DRIVER)
    return ApplicationError(message, type=kind)


def _quoted(text: str) -> str:
    """A file-name-safe, collision-free name for ``text`` (a namespace)."""
    return "".join(c if c.isalnum() or c in "-_." else f"%{ord(c):02X}" for c in text) or "%"


@dataclass(frozen=True)
class WorkflowRefs:
    """One workflow's entry in the index: the payloads stored for it."""

    namespace: str
    workflow_id: str
    path: Path

    def digests(self) -> set[str]:
        return {p.name for p in self.path.iterdir() if p.name != WORKFLOW_ID_FILE}


class FilesystemStorageDriver(StorageDriver):
    """Payloads as files under ``root``, content-addressed by SHA-256.

    ``blobs/<d[:2]>/<digest>`` holds the serialized payload (written to a temporary file and
    renamed into place, so a reader never sees half a payload); ``refs/<namespace>/<sha256 of
    the workflow id>/<digest>`` (an empty file) records that the workflow the SDK's store
    context names holds that payload, and ``workflow-id`` beside them the workflow id itself.
    A claim carries the digest and that workflow id (:data:`WORKFLOW_CLAIM`), so a reader can
    check that the workflow it names holds the digest (:meth:`holds`).
    The index entry is written before the blob, and an existing blob is touched, so ``seawall
    storage gc`` (which keeps recently touched blobs) never removes a payload being stored.
    """

    def __init__(self, root: Path) -> None:
        self.root = root

    def name(self) -> str:
        return FILESYSTEM_DRIVER

    def type(self) -> str:
        return FILESYSTEM_DRIVER

    def blob_path(self, digest: str) -> Path:
        return self.root / BLOBS / digest[:2] / digest

    def refs_dir(self, namespace: str, workflow_id: str | None) -> Path:
        if workflow_id is None:
            return self.root / REFS / _quoted(namespace) / UNATTRIBUTED
        key = hashlib.sha256(workflow_id.encode("utf-8")).hexdigest()
        return self.root / REFS / _quoted(namespace) / key

    async def store(
        self, context: StorageDriverStoreContext, payloads: Sequence[Payload]
    ) -> list[StorageDriverClaim]:
        target = context.target
        namespace = target.namespace if target is not None else ""
        workflow_id = target.id if isinstance(target, StorageDriverWorkflowInfo) else None
        blobs = [(p.SerializeToString(), p.data) for p in payloads]
        return await asyncio.to_thread(self._store, namespace, workflow_id, blobs)

    def _store(
        self, namespace: str, workflow_id: str | None, blobs: list[tuple[bytes, bytes]]
    ) -> list[StorageDriverClaim]:
        claims = []
        refs = self.refs_dir(namespace, workflow_id)
        for data, payload_data in blobs:
            digest = hashlib.sha256(data).hexdigest()
            try:
                private_dir(refs)
                if workflow_id is not None and not (refs / WORKFLOW_ID_FILE).exists():
                    private_file(refs / WORKFLOW_ID_FILE).write_text(workflow_id, encoding="utf-8")
                (refs / digest).touch(mode=PRIVATE_FILE_MODE)
                self._write_payload(digest, data, payload_data)
            except OSError as err:
                reason = "the disk is full" if err.errno == errno.ENOSPC else err.strerror
                raise _failure(
                    PAYLOAD_STORE_FAILED,
                    f"could not store a payload of {len(data)} bytes in the payload store "
                    f"(seawall config: payload_storage_dir): {reason}",
                ) from None
            claim = {"digest": digest, "size": str(len(data))}
            if workflow_id is not None:
                claim[WORKFLOW_CLAIM] = workflow_id
            claims.append(StorageDriverClaim(claim_data=claim))
        return claims

    def holds(self, namespace: str, workflow_id: str, digest: str) -> bool:
        """Whether the index records that ``workflow_id`` (of ``namespace``) stored the
        payload ``digest``: a stat, never a read of the payload."""
        if not _DIGEST.fullmatch(digest):
            return False
        return (self.refs_dir(namespace, workflow_id) / digest).is_file()

    def chunk_path(self, digest: str) -> Path:
        return self.root / CHUNKS / digest[:2] / digest

    def _write_payload(self, digest: str, data: bytes, payload_data: bytes) -> None:
        """The payload ``data`` (whose data field is ``payload_data``) under ``digest``: as
        a manifest of content-defined chunks when it has more than one (the chunks first,
        so a manifest never names a chunk not yet written), else as itself. One stored
        already is only touched."""
        path = self.blob_path(digest)
        chunked = None if path.exists() else storage_chunks.split(data, payload_data)
        if chunked is not None:
            manifest, chunks = chunked
            for chunk_digest, chunk in chunks:
                self._write_file(self.chunk_path(chunk_digest), chunk)
            data = manifest.encode()
        self._write_file(path, data)

    @staticmethod
    def _write_file(path: Path, data: bytes) -> None:
        if path.exists():
            os.utime(path)  # recently used: gc's grace period starts again
            return
        private_dir(path.parent)
        # mkstemp makes it 0600: a blob is private like the rest of the data dir.
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    async def retrieve(
        self, context: StorageDriverRetrieveContext, claims: Sequence[StorageDriverClaim]
    ) -> list[Payload]:
        return await asyncio.to_thread(self._retrieve, [dict(c.claim_data) for c in claims])

    def _retrieve(self, claims: list[dict[str, str]]) -> list[Payload]:
        payloads = []
        for claim in claims:
            digest = claim.get("digest", "")
            if not _DIGEST.fullmatch(digest):
                # A reference made up by hand (the codec endpoint takes them from browsers)
                # names no file of the store, and never one outside it.
                raise _failure(
                    STORED_PAYLOAD_CORRUPT,
                    "a stored payload reference is malformed (its digest is not a SHA-256)",
                )
            # Which prompt (or session) lost it, where the claim says (claims carry it since
            # WORKFLOW_CLAIM).
            stored = f"stored payload {digest}" + (
                f" of {claim[WORKFLOW_CLAIM]}" if claim.get(WORKFLOW_CLAIM) else ""
            )
            try:
                data = self._read_payload(digest)
            except FileNotFoundError:
                raise _failure(
                    STORED_PAYLOAD_MISSING,
                    f"{stored} is missing from the payload store (removed by hand, or this "
                    "process uses another payload_storage_dir than the one that stored it)",
                ) from None
            except OSError as err:
                raise _failure(
                    PAYLOAD_STORE_FAILED, f"could not read {stored}: {err.strerror}"
                ) from None
            if hashlib.sha256(data).hexdigest() != digest:
                raise _failure(
                    STORED_PAYLOAD_CORRUPT,
                    f"{stored} is corrupt (its content no longer matches its digest)",
                )
            payload = Payload()
            payload.ParseFromString(data)
            payloads.append(payload)
        return payloads

    def _read_payload(self, digest: str) -> bytes:
        """The serialized payload ``digest`` names, its chunks joined (unchecked: the caller
        compares it with the digest). A malformed manifest reads as bytes that do not match."""
        blob = self.blob_path(digest).read_bytes()
        if not storage_chunks.is_manifest(blob):
            return blob
        try:
            manifest = storage_chunks.decode(blob)
        except ValueError:
            return blob
        return storage_chunks.join(manifest, lambda d: self.chunk_path(d).read_bytes())

    def manifest_chunks(self, blob: Path) -> list[str]:
        """The chunks the stored payload ``blob`` is made of (none for one stored whole)."""
        header = storage_chunks.MANIFEST_HEADER
        with blob.open("rb") as handle:  # a payload stored whole is not read past its header
            if handle.read(len(header)) != header:
                return []
            rest = handle.read()
        try:
            return storage_chunks.decode(header + rest).chunk_digests()
        except ValueError:
            return []

    def stored_size(self, digests: set[str]) -> int:
        """The bytes the payloads ``digests`` take in the store: their blobs, and each chunk
        they are made of once."""
        total = 0
        chunks: set[str] = set()
        for digest in digests:
            path = self.blob_path(digest)
            if path.exists():
                total += path.stat().st_size
                chunks.update(self.manifest_chunks(path))
        return total + sum(
            self.chunk_path(c).stat().st_size for c in chunks if self.chunk_path(c).exists()
        )

    def workflow_refs(self, namespace: str) -> list[WorkflowRefs]:
        """Every workflow of ``namespace`` the index holds payloads for."""
        base = self.root / REFS / _quoted(namespace)
        if not base.is_dir():
            return []
        found = []
        for entry in sorted(base.iterdir()):
            id_file = entry / WORKFLOW_ID_FILE
            if entry.name == UNATTRIBUTED or not id_file.is_file():
                continue
            found.append(WorkflowRefs(namespace, id_file.read_text(encoding="utf-8"), entry))
        return found

    def referenced_digests(self, excluding: set[Path] | None = None) -> set[str]:
        """Every digest any index entry (of any namespace) holds, but those of the workflow
        entries ``excluding`` names."""
        refs = self.root / REFS
        if not refs.is_dir():
            return set()
        skipped = excluding or set()
        return {
            p.name
            for p in refs.glob("*/*/*")
            if p.name != WORKFLOW_ID_FILE and p.parent not in skipped
        }

    def blobs(self) -> list[Path]:
        return self._files(BLOBS)

    def chunks(self) -> list[Path]:
        return self._files(CHUNKS)

    def _files(self, kind: str) -> list[Path]:
        base = self.root / kind
        if not base.is_dir():
            return []
        return [p for p in base.glob("*/*") if not p.name.startswith(".")]


class StorageSettings(Protocol):
    """The settings the payload store is built from, as the settings model
    (seawall/runtime/settings/) has them. Named here rather than imported: the settings
    take their storage kinds and default threshold from this module, so this module does
    not import them back."""

    @property
    def payload_storage(self) -> PayloadStorageKind: ...
    @property
    def payload_storage_threshold_bytes(self) -> int: ...
    @property
    def payload_storage_dir(self) -> Path | None: ...
    @property
    def payload_storage_bucket(self) -> str | None: ...
    @property
    def payload_storage_s3_endpoint(self) -> str | None: ...
    @property
    def payload_storage_s3_region(self) -> str | None: ...
    @property
    def data_dir(self) -> Path: ...


def storage_dir(settings: StorageSettings) -> Path:
    """The filesystem driver's root: ``payload_storage_dir``, else ``<data_dir>/payloads``."""
    return (settings.payload_storage_dir or settings.data_dir / "payloads").absolute()


def payload_storage(
    settings: StorageSettings, *, root: Path | None = None
) -> ExternalStorage | None:
    """The External Storage the settings choose (``None``: ``payload_storage=off``).
    ``root`` overrides the filesystem driver's directory (``seawall run``'s embedded server
    keeps its payloads beside it, in a directory that goes with it)."""
    kind = settings.payload_storage
    if kind == "off":
        return None
    driver: StorageDriver
    if kind == "s3":
        assert settings.payload_storage_bucket is not None  # the settings model checks it
        driver = s3_driver(
            settings.payload_storage_bucket,
            settings.payload_storage_s3_endpoint,
            settings.payload_storage_s3_region,
        )
    else:
        driver = FilesystemStorageDriver(root or storage_dir(settings))
    return ExternalStorage(
        drivers=[driver], payload_size_threshold=settings.payload_storage_threshold_bytes
    )


def filesystem_driver(storage: ExternalStorage | None) -> FilesystemStorageDriver | None:
    """The filesystem driver of ``storage``, if that is what it uses."""
    if storage is None:
        return None
    found = [d for d in storage.drivers if isinstance(d, FilesystemStorageDriver)]
    return found[0] if found else None


def describe(storage: ExternalStorage | None) -> dict[str, Any]:
    """What a process's log says about its payload storage at startup (no credentials)."""
    if storage is None:
        return {"payload_storage": "off"}
    fs = filesystem_driver(storage)
    return {
        "payload_storage": "filesystem" if fs else "s3",
        "payload_storage_threshold_bytes": storage.payload_size_threshold,
        **({"payload_storage_dir": str(fs.root)} if fs else {}),
    }
