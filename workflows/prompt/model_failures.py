"""Why a model request failed for good, as the prompt's result says it (docs/durability.md, "Model
requests and outages").

The result carries an ``error_reason`` a client can act on and an ``error`` text that says
what happened and why: the retry window that ran out, the endpoint's own words on what it
refused (for the user, never a log), or the chain of failures that caused it.
"""

from __future__ import annotations

from temporalio.exceptions import ActivityError, ApplicationError

from workflows.contracts.activity import MODEL_REQUEST_REJECTED, MODEL_RETRIES_EXHAUSTED
from workflows.contracts.prompt import ErrorReason


def failure_text(err: ActivityError) -> str:
    """An activity's failure and the failures that caused it, outermost first: "Failed
    decoding arguments: stored payload … is missing …" says what happened and why."""
    texts: list[str] = []
    cause = err.cause
    while cause is not None and len(texts) < 5:
        texts.append(str(cause))
        cause = cause.__cause__ if isinstance(cause.__cause__, BaseException) else None
    return ": ".join(texts) if texts else str(err)


def model_failure(err: ActivityError) -> tuple[ErrorReason, str]:
    """The reason and the error text of a model request that failed for good."""
    cause = err.cause
    kind = cause.type if isinstance(cause, ApplicationError) else None
    if isinstance(cause, ApplicationError) and kind == MODEL_RETRIES_EXHAUSTED:
        return ErrorReason.MODEL_RETRIES_EXHAUSTED, str(cause.message)
    text = f"model request failed: {failure_text(err)}"
    if isinstance(cause, ApplicationError) and kind == MODEL_REQUEST_REJECTED:
        # The endpoint's own words on what it refused (a wrong model name, a bad key).
        details = cause.details
        if len(details) > 1 and isinstance(details[1], str):
            text = f"{text}: {details[1]}"
        return ErrorReason.MODEL_REQUEST_REJECTED, text
    return ErrorReason.MODEL_REQUEST_FAILED, text
