"""Long prompts for tests and the benchmark: scenarios whose tool results are large, and a
client and worker that store payloads in a given directory (docs/durability.md, "Long prompts and
stored payloads")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from temporalio.client import Client
from temporalio.converter import ExternalStorage

from seawall.runtime.plugin import SeawallPlugin, client_with_plugin
from seawall.runtime.storage import FilesystemStorageDriver
from seawall.scenario.format import Scenario


def filesystem_storage(root: Path, threshold: int = 64 * 1024) -> ExternalStorage:
    return ExternalStorage(
        drivers=[FilesystemStorageDriver(root)], payload_size_threshold=threshold
    )


def with_storage(client: Client, storage: ExternalStorage) -> Client:
    """``client``'s connection with the Seawall plugin storing payloads in ``storage``."""
    return client_with_plugin(client, SeawallPlugin(storage=storage))


def long_prompt(batches: int, result_chars: int, **fields: Any) -> Scenario:
    """A prompt that reads ``batches`` pages of ``result_chars`` characters, one per model
    request, then answers: every page differs, as real file pages do."""
    turns: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "read_page", "arguments": {"page": n}}]} for n in range(batches)
    ]
    turns.append({"text": "read them all"})
    outcomes = [
        {"status": "success", "execution_status": "success", "content": page(n, result_chars)}
        for n in range(batches)
    ]
    spec: dict[str, Any] = {
        "name": f"long-{batches}x{result_chars}",
        "mode": "enforce",
        "max_model_requests": batches + 1,
        "max_output_chars": max(result_chars, 100),
        "tools": {"read_page": {"outcomes": outcomes}},
        "model": {"turns": turns},
        **fields,
    }
    return Scenario.model_validate(spec)


def page(n: int, chars: int) -> str:
    head = f"page {n}\n"
    return head + ("lorem ipsum dolor sit amet " * (chars // 27 + 1))[: max(chars - len(head), 0)]
