"""Stored payloads as content-defined chunks: a message in several payloads is stored once.

Why it exists: one message travels in several payloads. A 200 KB page a tool read is the tool
call's result, then a message of the next model request, then a message of the prompt's result
(and of the next prompt's start, in a session). Each of those payloads is past the storage
threshold, so the filesystem store kept the page three times or more: a long prompt left about
3× its conversation in the store (issue 43; docs/durability.md, "Long prompts and stored
payloads"). Storing payloads by their own digest cannot see that they share most of their bytes.

So a stored payload's bytes are cut into chunks where its *content* says, not at fixed offsets:
its JSON's string literals are the units (a message's text is one), a long one is a chunk of
its own, and shorter ones are grouped, a cut falling after a string whose checksum has its low
bits zero once a chunk is big enough. The same run of messages in two payloads is therefore cut
at the same places (after the first cut inside it) and its chunks are stored once, whatever
precedes it in each payload. The blob a payload's claim names becomes a small manifest: the
bytes before and after the payload's data, and the digests of the data's chunks in order.

What does not change: a claim still names the SHA-256 of the whole serialized payload, and a
read still checks the reassembled bytes against it (a lost or altered chunk is the payload's
``StoredPayloadMissing`` / ``StoredPayloadCorrupt``); a blob written before this (no manifest
header) is read as it always was. A chunk is found only through a manifest, never by a claim,
so the gateway's codec and the per-workflow index see payloads only. Cutting is deterministic
and the same in every process (CRC-32, no hash seed). ``seawall storage gc`` removes a chunk no
remaining manifest names (``seawall.runtime.storage_gc``).
"""

from __future__ import annotations

import hashlib
import struct
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import pairwise

# A manifest starts with a byte no serialized protobuf message starts with (field number 0).
MANIFEST_HEADER = b"\x00seawall-chunks-v1\n"
DIGEST_BYTES = 32
_BACKSLASH = ord("\\")
# A string at least this long is a chunk of its own: a message's text, a page, a file.
OWN_CHUNK_BYTES = 4 * 1024
# Shorter strings are grouped into chunks of at least this many bytes, cut after a string whose
# CRC-32 has its low CUT_BITS zero (on average every 2**CUT_BITS strings) or past MAX.
MIN_CHUNK_BYTES = 2 * 1024
MAX_CHUNK_BYTES = 256 * 1024
CUT_BITS = 4
_CUT_MASK = (1 << CUT_BITS) - 1
_LENGTH = struct.Struct(">I")


def strings(data: bytes) -> Iterator[tuple[int, int]]:
    """Where ``data``'s JSON string literals are (start, end), quotes included: the units
    chunks are made of. Found with ``bytes.find`` (a long page is two calls, not a loop over
    its characters); a quote is escaped when an odd run of backslashes precedes it."""
    find = data.find
    start = find(b'"')
    while start >= 0:
        end = find(b'"', start + 1)
        while end > 0 and data[end - 1] == _BACKSLASH:
            run = end - 1
            while data[run] == _BACKSLASH:
                run -= 1
            if (end - 1 - run) % 2 == 0:
                break
            end = find(b'"', end + 1)
        if end < 0:
            return
        yield start, end + 1
        start = find(b'"', end + 1)


def cuts(data: bytes) -> list[int]:
    """The offsets ``data`` is cut at (ascending, without 0 and ``len(data)``)."""
    found: list[int] = []
    last = 0
    for start, end in strings(data):
        if end - start >= OWN_CHUNK_BYTES:
            if start > last:
                found.append(start)
            found.append(end)
            last = end
        elif end - last >= MAX_CHUNK_BYTES or (
            end - last >= MIN_CHUNK_BYTES and zlib.crc32(data[start:end]) & _CUT_MASK == 0
        ):
            found.append(end)
            last = end
    if found and found[-1] >= len(data):
        found.pop()
    return found


def chunks_of(data: bytes) -> list[bytes]:
    """``data`` cut at :func:`cuts`."""
    offsets = [0, *cuts(data), len(data)]
    return [data[a:b] for a, b in pairwise(offsets) if b > a]


@dataclass(frozen=True)
class Manifest:
    """A stored payload as the bytes around its data and its data's chunks (by digest)."""

    prefix: bytes
    suffix: bytes
    chunks: tuple[bytes, ...]  # raw SHA-256 digests, in order

    def encode(self) -> bytes:
        return b"".join(
            [
                MANIFEST_HEADER,
                _LENGTH.pack(len(self.prefix)),
                self.prefix,
                _LENGTH.pack(len(self.suffix)),
                self.suffix,
                *self.chunks,
            ]
        )

    def chunk_digests(self) -> list[str]:
        return [d.hex() for d in self.chunks]


def is_manifest(blob: bytes) -> bool:
    return blob.startswith(MANIFEST_HEADER)


def decode(blob: bytes) -> Manifest:
    """The manifest ``blob`` holds; ``ValueError`` when it is malformed."""
    at = len(MANIFEST_HEADER)
    parts = []
    for _ in range(2):
        if at + _LENGTH.size > len(blob):
            raise ValueError("truncated manifest")
        (size,) = _LENGTH.unpack_from(blob, at)
        at += _LENGTH.size
        if at + size > len(blob):
            raise ValueError("truncated manifest")
        parts.append(blob[at : at + size])
        at += size
    rest = blob[at:]
    if len(rest) % DIGEST_BYTES:
        raise ValueError("truncated manifest")
    digests = tuple(rest[i : i + DIGEST_BYTES] for i in range(0, len(rest), DIGEST_BYTES))
    return Manifest(prefix=parts[0], suffix=parts[1], chunks=digests)


def split(serialized: bytes, data: bytes) -> tuple[Manifest, list[tuple[str, bytes]]] | None:
    """``serialized`` (a payload whose data field is ``data``) as a manifest and its chunks
    (digest, bytes), or None when chunking would not pay (one chunk only)."""
    if not data:
        return None
    # The data field is a payload's last but for rarely set ones: a comparison, not a search.
    at = len(serialized) - len(data) if serialized.endswith(data) else serialized.find(data)
    if at < 0:
        return None
    pieces = chunks_of(data)
    if len(pieces) < 2:
        return None
    named = [(hashlib.sha256(piece).digest(), piece) for piece in pieces]
    manifest = Manifest(
        prefix=serialized[:at],
        suffix=serialized[at + len(data) :],
        chunks=tuple(digest for digest, _ in named),
    )
    return manifest, [(digest.hex(), piece) for digest, piece in named]


def join(manifest: Manifest, read_chunk: Callable[[str], bytes]) -> bytes:
    """The payload ``manifest`` describes, its chunks read by ``read_chunk(hex digest)``."""
    chunks = [read_chunk(digest) for digest in manifest.chunk_digests()]
    return b"".join([manifest.prefix, *chunks, manifest.suffix])
