"""The chaos suite's watchdog: a deadline per prompt, and the stack's logs kept on failure.

A chaos run once hung in CI with nothing to diagnose it. So every prompt the suite drives
(``scripts/chaos.py``) runs under :func:`within_deadline`: one that does not finish in time
fails the whole run at once with :class:`PromptStuck`, naming the prompt and what it was
waiting for (the last thing its client asked, noted with :func:`waiting_for`), and
:func:`run_all` cancels the others instead of waiting on them. When a run fails, stuck or
not, :func:`keep_logs` copies the stack's logs (server, workers, gateway) out of the run's
temporary directory to a kept one, and :func:`log_tails` gives their last lines for the
failure message, so a CI log alone says what happened.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import shutil
import time
from collections.abc import Awaitable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

TAIL_LINES = 20


@dataclass
class Progress:
    """What one prompt's client is waiting for now."""

    name: str
    waiting_for: str = "its turn to start"


_PROGRESS: contextvars.ContextVar[Progress | None] = contextvars.ContextVar(
    "chaos_progress", default=None
)


def waiting_for(what: str) -> None:
    """Note what the prompt running in this task waits for next (no-op outside one)."""
    progress = _PROGRESS.get()
    if progress is not None:
        progress.waiting_for = what


class PromptStuck(RuntimeError):
    """A prompt did not finish within its deadline."""


async def within_deadline(name: str, run: Awaitable[T], seconds: float) -> T:
    """``run``'s result, or :class:`PromptStuck` naming ``name`` and what it was waiting
    for once ``seconds`` have passed since it started."""
    progress = Progress(name)
    token = _PROGRESS.set(progress)
    try:
        # The task wait_for makes copies this context: it notes into ``progress``.
        return await asyncio.wait_for(run, seconds)
    except TimeoutError:
        raise PromptStuck(
            f"{name} did not finish within {seconds:g} s; it was waiting for {progress.waiting_for}"
        ) from None
    finally:
        _PROGRESS.reset(token)


async def run_all(
    runs: Iterable[tuple[str, Awaitable[Any]]], *, limit: int, deadline: float
) -> list[Any]:
    """Every named run's result, in order, ``limit`` at a time, each under ``deadline``
    from its own start. The first failure (a :class:`PromptStuck` included) is raised once
    the runs still going are cancelled; runs not started yet never start."""
    gate = asyncio.Semaphore(limit)
    failures: list[BaseException] = []

    async def one(name: str, run: Awaitable[Any]) -> Any:
        async with gate:
            if failures:
                if inspect.iscoroutine(run):
                    run.close()
                return None
            try:
                return await within_deadline(name, run, deadline)
            except Exception as err:
                failures.append(err)  # before the gate opens for the next run
                raise

    tasks = [asyncio.ensure_future(one(name, run)) for name, run in runs]
    if not tasks:
        return []
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    if failures:
        raise failures[0]
    return [task.result() for task in tasks]


def keep_logs(logs: Path, keep_root: Path, label: str) -> Path:
    """Copy the stack's ``logs`` directory to a new directory under ``keep_root`` (named
    by the time and ``label``); its path."""
    kept = keep_root / f"{time.strftime('%Y%m%dT%H%M%S')}-{label}"
    suffix = 1
    while kept.exists():
        suffix += 1
        kept = kept.with_name(f"{kept.name.rsplit('~', 1)[0]}~{suffix}")
    kept.mkdir(parents=True)
    if logs.is_dir():
        for log in sorted(logs.iterdir()):
            if log.is_file():
                shutil.copy2(log, kept / log.name)
    return kept


def log_tails(logs: Path, lines: int = TAIL_LINES) -> str:
    """The last ``lines`` lines of each log in ``logs``, each under its file name."""
    parts = []
    for log in sorted(logs.glob("*.log")) if logs.is_dir() else []:
        text = log.read_text(errors="replace").splitlines()
        parts.append(f"--- {log.name} (last {min(lines, len(text))} of {len(text)} lines)")
        parts.extend(text[-lines:])
    return "\n".join(parts)
