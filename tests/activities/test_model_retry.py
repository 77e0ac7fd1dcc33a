"""Which failure of a model request is its last (activities/model_retry.py): decided by the
time since the request's first attempt and the next backoff, never by a count."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from temporalio.exceptions import ApplicationError

from activities.model_retry import RetryWindow, failure_reason
from workflows.contracts.activity import MODEL_RETRIES_EXHAUSTED, model_retry_delay

FIRST = datetime(2026, 1, 1, tzinfo=UTC)
RAW = "upstream says: database password is hunter2"


def failed(status: int = 503, delay: float | None = None) -> ApplicationError:
    return ApplicationError(
        f"model endpoint returned HTTP {status}: {RAW}",
        f"HTTP {status}",
        type="ModelRequestFailed",
        next_retry_delay=timedelta(seconds=delay) if delay is not None else None,
    )


def at(seconds: float) -> datetime:
    return FIRST + timedelta(seconds=seconds)


def test_the_backoff_is_capped_exponential() -> None:
    assert [model_retry_delay(n) for n in (1, 2, 3, 4, 5, 6, 7, 100)] == [
        1,
        2,
        4,
        8,
        16,
        30,
        30,
        30,
    ]


def test_a_failure_is_retried_while_the_next_attempt_can_start_within_the_window() -> None:
    err = failed()
    # Attempt 20 fails 500 s in: the next backoff (30 s) still starts inside 600 s.
    assert RetryWindow(600, FIRST, 20).after_failure(err, at(500)) is err


def test_a_failure_whose_next_attempt_would_start_after_the_window_is_final() -> None:
    final = RetryWindow(600, FIRST, 21).after_failure(failed(), at(580))
    assert isinstance(final, ApplicationError)
    assert final.non_retryable and final.type == MODEL_RETRIES_EXHAUSTED
    assert final.message == (
        "the model endpoint failed (HTTP 503) and retries stopped after 21 attempts over "
        "580 s: no retry could start within the 600 s model retry window "
        "(model_retry_window_seconds)"
    )
    assert RAW not in final.message and final.details == ("HTTP 503",)


def test_the_delay_the_endpoint_asks_for_counts_instead_of_the_backoff() -> None:
    window = RetryWindow(600, FIRST, 2)
    later = failed(429, delay=300)
    assert window.after_failure(later, at(200)) is later
    soon = failed(429, delay=0.05)
    assert RetryWindow(600, FIRST, 30).after_failure(soon, at(599)) is soon
    final = window.after_failure(failed(429, delay=300), at(301))
    assert isinstance(final, ApplicationError) and final.type == MODEL_RETRIES_EXHAUSTED


def test_a_refusal_stays_what_it_is() -> None:
    rejected = ApplicationError(
        "rejected", "HTTP 400", type="ModelRequestRejected", non_retryable=True
    )
    assert RetryWindow(1, FIRST, 9).after_failure(rejected, at(3600)) is rejected


def test_any_other_error_past_the_window_is_final_and_named_by_its_type_only() -> None:
    final = RetryWindow(10, FIRST, 3).after_failure(ValueError(RAW), at(11))
    assert isinstance(final, ApplicationError) and final.details == ("ValueError",)
    assert RAW not in final.message


def test_a_retry_that_begins_after_the_window_ends_at_once() -> None:
    RetryWindow(60, FIRST, 1).check_start(at(3600))  # a first attempt always runs
    RetryWindow(60, FIRST, 4).check_start(at(59))
    with pytest.raises(ApplicationError) as caught:
        RetryWindow(60, FIRST, 4).check_start(at(70))
    assert caught.value.non_retryable and "after 3 attempts over 70 s" in caught.value.message


def test_failure_reasons_never_carry_the_provider_text() -> None:
    assert failure_reason(failed()) == "HTTP 503"
    assert failure_reason(ApplicationError(RAW, type="ModelTimeout")) == "ModelTimeout"
    assert failure_reason(RuntimeError(RAW)) == "RuntimeError"
