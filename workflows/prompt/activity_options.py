"""The prompt workflow's activity timeouts and retry policies, in one place.

Each is a command attribute of the activities the loop schedules (replay compares activity
ids and types, not these, so a change here needs no patch unless the workflow's reaction to
a failure changes with it). ``workflows/prompt/judging.py`` schedules the progress judge
with the model request's.

Why each:

- **Model requests** (``MODEL_TIMEOUT`` 5 minutes start-to-close; the provider's own request
  timeout, 180 s by default, fires first). Temporal owns retries (the SDK's are off):
  timeouts, connection errors, 408, 409, 429 and 5xx are retryable, a ``retry-after`` sets the
  next delay, any other 4xx is a non-retryable ``ModelRequestRejected``. ``MODEL_RETRY_WINDOW``
  has no attempt limit; the activity ends the retries once no attempt could start within the
  prompt's window (``activities.model_retry``; before ``MODEL_RETRY_WINDOW_PATCH``,
  ``MODEL_RETRY``'s five attempts). ``MODEL_HEARTBEAT_TIMEOUT``: the activity heartbeats every
  second while the request runs and on every streamed piece, so a cancelled prompt cancels the
  request and a lost worker's request is retried after seconds.
- **Tool calls**: start-to-close the prompt's tool timeout + 30 s; ``TOOL_HEARTBEAT_TIMEOUT``
  with a background heartbeat every second (``activities/heartbeat.py``), so a lost worker is
  noticed in seconds; ``TOOL_RETRY`` only for a crashed activity or lost worker, after which
  the workflow settles the call with a missing execution status
  (``worker_lost_outcome``). Cancellation type ``WAIT_CANCELLATION_COMPLETED``: the workflow
  waits for the tool to report its cancelled outcome, so a cancelled batch still settles every
  call honestly; a cancellation that is not the workflow's (a pause, a reset) is re-raised so
  Temporal can pause or rerun it.
- **Quick activities** (``QUICK_ACTIVITY``: checking a call, listing tools, the session's
  settings) and the settings' local activity (``SETTINGS_LOCAL_ACTIVITY``, at most 5 attempts):
  they only read, are idempotent and answer in milliseconds. Heartbeats carry cancellation
  (Temporal delivers it only in a heartbeat response), and the worker forwards them within a
  second (``seawall/worker/build.py``), so a cancelled prompt stops its shell promptly.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio.common import RetryPolicy

from workflows.contracts.activity import (
    MODEL_REQUEST_REJECTED,
    MODEL_RETRIES_EXHAUSTED,
    MODEL_RETRY_BACKOFF,
    MODEL_RETRY_INITIAL_SECONDS,
    MODEL_RETRY_MAX_INTERVAL_SECONDS,
)

# Prompts started before MODEL_RETRY_WINDOW_PATCH: five attempts, whatever the outage.
MODEL_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(seconds=30),
    maximum_attempts=5,
    non_retryable_error_types=[MODEL_REQUEST_REJECTED],
)
# Since MODEL_RETRY_WINDOW_PATCH: the same capped backoff and no attempt limit; the model
# activity ends the retries once the prompt's retry window has passed since the request's
# first attempt (activities/model_retry.py; docs/durability.md, "Model requests and outages").
MODEL_RETRY_WINDOW = RetryPolicy(
    initial_interval=timedelta(seconds=MODEL_RETRY_INITIAL_SECONDS),
    backoff_coefficient=MODEL_RETRY_BACKOFF,
    maximum_interval=timedelta(seconds=MODEL_RETRY_MAX_INTERVAL_SECONDS),
    maximum_attempts=0,
    non_retryable_error_types=[MODEL_REQUEST_REJECTED, MODEL_RETRIES_EXHAUSTED],
)
# A tool error is a returned outcome; only a lost worker or a crashed activity retries.
TOOL_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    maximum_interval=timedelta(seconds=10),
    maximum_attempts=3,
)
QUICK_ACTIVITY = timedelta(seconds=30)
# The operator-settings and tool-listing local activities read the worker's environment and
# config files: they answer in milliseconds and never raise, so a short timeout and a few
# retries suffice.
SETTINGS_LOCAL_ACTIVITY = timedelta(seconds=10)
SETTINGS_RETRY = RetryPolicy(maximum_interval=timedelta(seconds=5), maximum_attempts=5)
TOOL_HEARTBEAT_TIMEOUT = timedelta(seconds=10)
# The model activity heartbeats as its reply streams (and while it waits for the first
# chunk), so a lost worker's request is retried after seconds, not after the five-minute
# start-to-close timeout. A command attribute only: replay compares activity ids and types,
# so prompts started before it replay unchanged (tests/replay).
MODEL_HEARTBEAT_TIMEOUT = timedelta(seconds=10)
# A model request's start-to-close timeout (and the progress judge's, which runs like one).
MODEL_TIMEOUT = timedelta(minutes=5)
