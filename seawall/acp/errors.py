"""The JSON-RPC errors the bridge answers, each with a message that says what was wrong.

The SDK's factories carry only generic messages ("Invalid params"); an editor shows the
message to its user, so the bridge's errors say which value was refused and why.
"""

from __future__ import annotations

from typing import Any

from acp import RequestError

INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
# ACP's own code (the schema's ``ErrorCode``): a session, or another resource, not found.
RESOURCE_NOT_FOUND = -32002


def invalid_params(message: str, **data: Any) -> RequestError:
    return RequestError(INVALID_PARAMS, message, data or None)


def invalid_request(message: str, **data: Any) -> RequestError:
    return RequestError(INVALID_REQUEST, message, data or None)


def resource_not_found(message: str, **data: Any) -> RequestError:
    return RequestError(RESOURCE_NOT_FOUND, message, data or None)


def unsupported(method: str) -> RequestError:
    return RequestError(
        METHOD_NOT_FOUND, f"{method} is not supported by seawall acp", {"method": method}
    )


def internal_error(message: str, **data: Any) -> RequestError:
    return RequestError(INTERNAL_ERROR, message, data or None)
