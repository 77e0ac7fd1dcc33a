"""A model request is retried for a window of time, not a number of attempts.

Temporal retries the model activity with capped exponential backoff and no attempt limit
(``MODEL_RETRY_WINDOW`` in workflows/prompt/activity_options.py); this module is what ends the
retries, in the activity, because only the activity knows when the request's first attempt
was scheduled (``activity.info().scheduled_time``) and which attempt this is. An attempt
that fails is final once no further attempt could start within the prompt's
``model_retry_window_seconds`` (docs/settings.md; docs/durability.md, "Model requests and outages"):
the next backoff — or the delay the endpoint asked for — would end after the window. An attempt that
begins after the window (its predecessor was lost with its worker) is final at once.

The final error is non-retryable, says that the endpoint failed and retries stopped, after
how long and how many attempts, and gives only the failure's short reason (``HTTP 503``,
``unreachable (ConnectError)``: the provider error's first detail), never the provider's
own text; it is logged with counts and the error type alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import structlog
from temporalio.exceptions import ApplicationError

from workflows.contracts.activity import MODEL_RETRIES_EXHAUSTED, model_retry_delay

_log = structlog.get_logger(__name__)


def failure_reason(err: BaseException) -> str:
    """A failure's short reason for the final error: the provider error's first detail when
    it is one, else the error's type (never its message)."""
    if isinstance(err, ApplicationError):
        if err.details and isinstance(err.details[0], str):
            return err.details[0]
        return err.type or "ApplicationError"
    return type(err).__name__


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


@dataclass(frozen=True)
class RetryWindow:
    """One attempt of one model request, with its prompt's retry window."""

    window_seconds: float
    # When the request's first attempt was scheduled.
    first_scheduled: datetime
    attempt: int

    def elapsed(self, now: datetime | None = None) -> float:
        first = self.first_scheduled
        if first.tzinfo is None:
            first = first.replace(tzinfo=UTC)
        return max(0.0, ((now or datetime.now(UTC)) - first).total_seconds())

    def check_start(self, now: datetime | None = None) -> None:
        """Raise the final error when a retry begins after the window has passed."""
        if self.attempt > 1:
            elapsed = self.elapsed(now)
            if elapsed >= self.window_seconds:
                raise self._final(
                    "an earlier attempt was lost", elapsed, self.attempt - 1, "lost_attempt"
                ) from None

    def after_failure(self, err: Exception, now: datetime | None = None) -> Exception:
        """``err`` when Temporal may retry it within the window; the final error otherwise
        (``err`` itself when it is already final)."""
        if isinstance(err, ApplicationError) and err.non_retryable:
            return err
        elapsed = self.elapsed(now)
        delay = model_retry_delay(self.attempt)
        if isinstance(err, ApplicationError) and err.next_retry_delay is not None:
            delay = err.next_retry_delay.total_seconds()
        if elapsed + delay < self.window_seconds:
            return err
        error_type = err.type if isinstance(err, ApplicationError) else type(err).__name__
        return self._final(failure_reason(err), elapsed, self.attempt, error_type or "unknown")

    def _final(self, reason: str, elapsed: float, attempts: int, error_type: str) -> Exception:
        _log.warning(
            "model_retries_exhausted",
            attempts=attempts,
            elapsed_seconds=round(elapsed, 1),
            window_seconds=self.window_seconds,
            error_type=error_type,
        )
        return ApplicationError(
            f"the model endpoint failed ({reason}) and retries stopped after "
            f"{_plural(attempts, 'attempt')} over {elapsed:.0f} s: no retry could start "
            f"within the {self.window_seconds:g} s model retry window "
            "(model_retry_window_seconds)",
            reason,
            type=MODEL_RETRIES_EXHAUSTED,
            non_retryable=True,
        )
