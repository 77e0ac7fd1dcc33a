"""Seawall's data converter: pydantic JSON, written without what a reader knows already.

Why it exists: the SDK's ``pydantic_data_converter`` writes every field of every model, so a
small prompt's history was mostly ``null``, ``false``, ``[]`` and defaults (issue 43: a
5-batch prompt recorded more bytes than the OpenAI Agents SDK's). This converter writes each
model without its defaults and with the wire context (``workflows/contracts/wire.py``), and
reads with the same context, so a contract may also leave out a field it rebuilds on reading.
Payloads written before it are read as they always were: a field present is taken as given.
Everything else (encodings, External Storage, failure conversion) is the SDK's.
"""

from __future__ import annotations

import functools
from typing import Any

import temporalio.api.common.v1
from pydantic import TypeAdapter
from pydantic_core import SchemaSerializer, core_schema
from temporalio.converter import (
    CompositePayloadConverter,
    DataConverter,
    DefaultPayloadConverter,
    EncodingPayloadConverter,
    JSONPlainPayloadConverter,
)

from workflows.contracts.wire import WIRE_CONTEXT

_SERIALIZER = SchemaSerializer(core_schema.any_schema())


@functools.lru_cache(maxsize=1024)
def _adapter(type_hint: Any) -> TypeAdapter[Any]:
    return TypeAdapter(type_hint)


class WirePayloadConverter(EncodingPayloadConverter):
    """``json/plain`` payloads of pydantic values, without defaults, in the wire context."""

    @property
    def encoding(self) -> str:
        return "json/plain"

    def to_payload(self, value: Any) -> temporalio.api.common.v1.Payload | None:
        data = _SERIALIZER.to_json(value, exclude_defaults=True, context=WIRE_CONTEXT)
        return temporalio.api.common.v1.Payload(
            metadata={"encoding": self.encoding.encode()}, data=data
        )

    def from_payload(
        self, payload: temporalio.api.common.v1.Payload, type_hint: type | None = None
    ) -> Any:
        hint = type_hint if type_hint is not None else Any
        try:
            adapter = _adapter(hint)
        except TypeError:
            try:
                hash(hint)
            except TypeError:  # an unhashable hint: not cached
                adapter = TypeAdapter(hint)
            else:
                raise
        return adapter.validate_json(payload.data, context=WIRE_CONTEXT)


class SeawallPayloadConverter(CompositePayloadConverter):
    """The SDK's encodings, with :class:`WirePayloadConverter` for JSON."""

    def __init__(self) -> None:
        super().__init__(
            *(
                WirePayloadConverter() if isinstance(c, JSONPlainPayloadConverter) else c
                for c in DefaultPayloadConverter.default_encoding_payload_converters
            )
        )


seawall_data_converter = DataConverter(payload_converter_class=SeawallPayloadConverter)
