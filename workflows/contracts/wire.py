"""The wire format of a payload: what Seawall's data converter writes, kept apart from a
model's own ``model_dump``.

Why it exists: history bytes are what a Temporal server stores for every prompt, and most
of a small prompt's payload bytes were values a reader knows already: defaults (``null``,
``false``, ``[]``, a setting's default) and fields that repeat another field of the same
model (a tool call's parsed arguments beside the text they were parsed from). The converter
(``seawall/runtime/converter.py``) writes every model without its defaults, and with
:data:`WIRE_CONTEXT` as the serialization context, so a model can leave out a field it can
rebuild when it is read (:func:`on_the_wire`, and a ``mode="before"`` validator that puts
it back). A model's ``model_dump`` (digests, the HTTP API, logs) is unchanged: only the
converter passes the context.

The rule this makes (docs/architecture.md, "Versioning"): **a contract field's default is
part of the wire format.** A payload recorded without a field means that field's default as
the reading code declares it, so a default never changes; a new meaning takes a new field.
``tests/workflows/contracts/test_wire.py`` holds every contract's defaults to a recorded
table so a changed default fails a test instead of a replay.
"""

from __future__ import annotations

from typing import Any

from pydantic import SerializationInfo, ValidationInfo

# The serialization context Seawall's converter passes (and nothing else does).
WIRE_CONTEXT: dict[str, bool] = {"seawall_wire": True}


def on_the_wire(info: SerializationInfo | ValidationInfo) -> bool:
    """Whether this serialization writes a payload, or this validation reads one (the
    converter's), not a plain dump or a model built in code."""
    context = info.context
    return isinstance(context, dict) and context.get("seawall_wire") is True


def without_twin(
    dumped: dict[str, Any], twin: str, primary: str, default: Any = None
) -> dict[str, Any]:
    """``dumped`` without ``twin`` when it equals ``primary`` (a reader copies it back:
    :func:`with_twin`); with ``twin`` written out when it is ``default`` while ``primary`` is
    not, so that an absent twin only ever means "the same as ``primary``"."""
    if twin in dumped and primary in dumped and dumped[twin] == dumped[primary]:
        dumped.pop(twin)
    elif twin not in dumped and dumped.get(primary, default) != default:
        dumped[twin] = default
    return dumped


def with_twin(data: Any, twin: str, primary: str) -> Any:
    """``data`` (a payload being read) with ``twin`` copied from ``primary`` when the wire
    left it out (:func:`without_twin`); anything else as it is."""
    if isinstance(data, dict) and twin not in data and primary in data:
        return {**data, twin: data[primary]}
    return data
