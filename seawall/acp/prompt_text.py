"""An ACP prompt (a list of content blocks) as the one text a Seawall prompt carries.

Text blocks are joined; a resource link becomes ``@<uri>`` (the baseline every ACP agent
must understand); an embedded text resource becomes a fenced block headed by its URI. Images,
audio and binary resources are not advertised in the agent's capabilities, so they are
refused with a clear error rather than silently dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from acp.schema import (
    EmbeddedResourceContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

from seawall.acp.errors import invalid_params


def prompt_text(blocks: Sequence[Any], max_chars: int) -> str:
    """The prompt's text; invalid params when it is empty, too long or not text."""
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            parts.append(block.text)
        elif isinstance(block, ResourceContentBlock):
            parts.append(f"@{block.uri}")
        elif isinstance(block, EmbeddedResourceContentBlock) and isinstance(
            block.resource, TextResourceContents
        ):
            resource = block.resource
            parts.append(f"{resource.uri}:\n```\n{resource.text}\n```")
        else:
            kind = getattr(block, "type", type(block).__name__)
            raise invalid_params(
                f"seawall acp takes text, resource links and embedded text resources; "
                f"a {kind!s} block is not supported",
                blockType=str(kind),
            )
    text = "\n\n".join(part for part in parts if part)
    if not text.strip():
        raise invalid_params("the prompt has no text")
    if len(text) > max_chars:
        raise invalid_params(
            f"the prompt is {len(text)} characters; the limit is {max_chars} "
            "(SEAWALL_MAX_PROMPT_CHARS)"
        )
    return text
