"""The s3 payload store: the SDK's S3 driver on one bucket, and that driver's key layout.

docs/durability.md, "Long prompts and stored payloads". ``payload_storage=s3`` stores payloads
through the Temporal SDK's ``temporalio.contrib.aws.s3driver`` (MinIO in docker-compose.yml, any S3
bucket in production). This module gives it its client, :class:`BucketClient`, which

- opens its aioboto3 client on first use (the driver is built synchronously with the
  plugin; an aioboto3 client needs a running loop);
- reads only from the configured bucket: a reference naming another bucket (a history
  written under other settings, or a codec request made up by hand) is refused, so neither
  a worker nor the gateway's codec endpoint reads objects it was not configured for;
- rewrites an object the driver finds already stored once it is older than
  :data:`REFRESH_AFTER`: S3 has no "touch", and an object's time is what tells ``seawall
  storage gc`` it is in use (``seawall.runtime.storage_gc_s3``).

It also reads the driver's object keys back (:func:`parse_key` for ``seawall storage gc``,
:func:`workflow_of_key` for the gateway's codec, which serves an owner only its own
sessions' objects: gateway/codec_scope.py). The driver keys every
object by the workflow the SDK's store context names, ``v0/ns/<namespace>/wt/<workflow
type>/wi/<workflow id>/ri/<run id>/d/sha256/<digest>`` (each segment percent-encoded; the
SDK's ``_driver.py``), so an object belongs to exactly one workflow id and needs no index of
ours: the workflow's runs share the id (continue-as-new), and a child's input or a signal's
argument is stored under the workflow that receives it.
"""

from __future__ import annotations

import asyncio
import io
import string
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import unquote

from temporalio.contrib.aws.s3driver import S3StorageDriver, S3StorageDriverClient
from temporalio.converter import StorageDriver

S3_DRIVER = "aws.s3driver"
# A stored object found again by the driver is rewritten once older than this, so that its
# time is recent while it is in use; ``seawall storage gc`` keeps anything younger than its
# grace period, which is therefore at least this long (MIN_GC_GRACE).
REFRESH_AFTER = timedelta(minutes=15)
MIN_GC_GRACE = REFRESH_AFTER
KEY_VERSION = "v0"
# The characters the SDK's driver leaves unencoded in a key segment (S3's safe set).
_SAFE = frozenset(string.ascii_letters + string.digits + "!-_.*'()")


def key_segment(text: str) -> str:
    """``text`` as the SDK's driver writes it in a key: UTF-8 bytes outside S3's safe set
    as ``%XX``, ``null`` for an empty value."""
    encoded = "".join(chr(b) if chr(b) in _SAFE else f"%{b:02X}" for b in text.encode("utf-8"))
    return encoded or "null"


def namespace_prefix(namespace: str) -> str:
    """The prefix of every object the driver stored for a workflow of ``namespace``."""
    return f"{KEY_VERSION}/ns/{key_segment(namespace)}/wt/"


@dataclass(frozen=True)
class WorkflowObject:
    """One stored object of a workflow, as listed."""

    key: str
    workflow_id: str
    size: int
    last_modified: datetime


def parse_key(key: str) -> str | None:
    """The workflow id ``key`` (a driver's workflow-scoped key) is stored under, or None for
    any other key (an activity's, one without a context, the driver's short form for keys
    past 1,024 bytes, something not written by the driver): those are never attributed."""
    parts = _workflow_key_parts(key)
    return parts[1] if parts is not None else None


def workflow_of_key(key: str, namespace: str) -> str | None:
    """The workflow id ``key`` is stored under if it is a workflow-scoped key of
    ``namespace``, else None (the gateway's codec serves an owner only such keys)."""
    parts = _workflow_key_parts(key)
    if parts is None or parts[0] != key_segment(namespace):
        return None
    return parts[1]


def _workflow_key_parts(key: str) -> tuple[str, str] | None:
    """A workflow-scoped key's namespace segment (as encoded) and workflow id (decoded)."""
    parts = key.split("/")
    shape = [KEY_VERSION, "ns", None, "wt", None, "wi", None, "ri", None, "d", "sha256", None]
    if len(parts) != len(shape):
        return None
    if any(want is not None and part != want for part, want in zip(parts, shape, strict=True)):
        return None
    workflow_id = parts[6]
    if workflow_id == "null":
        return None
    try:
        return parts[2], unquote(workflow_id, errors="strict")
    except UnicodeDecodeError:
        return None


class StoredObjectMissing(LookupError):
    """The bucket has no object under a claim's key (the SDK's driver wraps this in its
    ``RuntimeError``; the codec answers it as it answers an unknown reference)."""


@asynccontextmanager
async def s3_client(endpoint_url: str | None, region: str | None) -> AsyncIterator[Any]:
    """A raw aioboto3 S3 client (credentials from the standard AWS chain)."""
    import aioboto3

    async with aioboto3.Session().client(
        "s3", endpoint_url=endpoint_url, region_name=region
    ) as client:
        yield client


def _error_code(err: Exception) -> str:
    response = getattr(err, "response", None)
    return str(response.get("Error", {}).get("Code", "")) if isinstance(response, dict) else ""


class BucketClient(S3StorageDriverClient):
    """The SDK driver's client, on ``bucket`` only (module docstring)."""

    def __init__(self, bucket: str, endpoint_url: str | None, region: str | None) -> None:
        self.bucket = bucket
        self._endpoint_url = endpoint_url
        self._region = region
        self._raw: Any = None
        self._opening = asyncio.Lock()

    async def _client(self) -> Any:
        async with self._opening:
            if self._raw is None:
                context = s3_client(self._endpoint_url, self._region)
                # Kept open for the life of the process, like the Temporal connection.
                self._raw = await context.__aenter__()
            return self._raw

    def _check(self, bucket: str) -> None:
        if bucket != self.bucket:
            raise ValueError(
                f"a stored payload names bucket {bucket!r}; this process reads bucket "
                f"{self.bucket!r} only (seawall config: payload_storage_bucket)"
            )

    async def put_object(self, *, bucket: str, key: str, data: bytes) -> None:
        self._check(bucket)
        # upload_fileobj: multipart above its threshold, as the SDK's own adapter does.
        await (await self._client()).upload_fileobj(io.BytesIO(data), bucket, key)

    async def object_exists(self, *, bucket: str, key: str) -> bool:
        """Whether ``key`` is stored and recent; an older object counts as absent, so the
        driver writes it again and its time starts over (module docstring)."""
        self._check(bucket)
        try:
            head = await (await self._client()).head_object(Bucket=bucket, Key=key)
        except Exception as err:
            if _error_code(err) in {"404", "NoSuchKey", "NotFound"}:
                return False
            raise
        modified = head.get("LastModified")
        if not isinstance(modified, datetime):
            return False
        return datetime.now(UTC) - modified < REFRESH_AFTER

    async def get_object(self, *, bucket: str, key: str) -> bytes:
        self._check(bucket)
        try:
            response = await (await self._client()).get_object(Bucket=bucket, Key=key)
        except Exception as err:
            if _error_code(err) in {"404", "NoSuchKey", "NotFound"}:
                raise StoredObjectMissing("no object is stored under this key") from None
            raise
        data: bytes = await response["Body"].read()
        return data

    def describe(self) -> Mapping[str, str]:
        return {"endpoint": self._endpoint_url or "aws"}


def s3_driver(bucket: str, endpoint_url: str | None, region: str | None) -> StorageDriver:
    """The SDK's S3 driver on ``bucket``."""
    try:
        import aioboto3  # noqa: F401
    except ImportError as err:
        raise RuntimeError(
            "payload_storage=s3 needs aioboto3: install Seawall with its s3 extra "
            "(pip install -e '.[s3]')"
        ) from err
    return S3StorageDriver(client=BucketClient(bucket, endpoint_url, region), bucket=bucket)
