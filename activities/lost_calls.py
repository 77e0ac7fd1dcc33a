"""At most once: a call whose attempt was lost with its worker is not run blindly again.

docs/durability.md, "Lost calls". Temporal retries an activity whose worker died (its
heartbeats stop; after the heartbeat timeout the next attempt starts on another worker). For
a read that is harmless. For an agent's shell it means a ``git push``, a migration or an
``rm`` may run twice, without the model or the user knowing. A tool activity raises for
nothing but a lost worker (a tool's failure is a returned outcome, activities/tool_runner.py),
so an attempt after the first means the one before it was lost mid-run: it may have run
partly or fully.

So a later attempt of a call whose tool is not safe to repeat returns a fixed, truthful
outcome instead of running (``worker_lost``, ``workflows.contracts.synthetic_outcomes``: the
model reads what happened and is told to check before repeating; the event stream shows the
reason; the guard sees an execution whose end is unknown, as for any lost worker). Safe to
repeat: the built-in tools that change nothing, MCP tools their
server annotates read-only or idempotent, fixtures that are not ``mutating``, and the tools
the operator lists in ``repeatable_tools``. ``rerun_lost_calls`` keeps the at-least-once
behaviour of before for operators who want it.

The decision is the worker's, made where the tool is known, and recorded as the activity's
result: the workflow's commands do not change, so histories replay as they ran.
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass

from temporalio import activity

from seawall.runtime.settings import WORKER, SettingsError, load_settings


def lost_attempt() -> bool:
    """Whether this activity attempt follows one that was lost mid-run (never outside an
    activity)."""
    return activity.in_activity() and activity.info().attempt > 1


@dataclass(frozen=True)
class LostCalls:
    """The operator's policy for calls whose attempt was lost: ``rerun`` every one (at
    least once, as before) or only the ``repeatable`` ones (tool-name globs, besides the
    tools known to be safe)."""

    rerun: bool = False
    repeatable: tuple[str, ...] = ()

    @classmethod
    def from_settings(cls, rerun: bool, repeatable: str | None) -> LostCalls:
        names = tuple(n.strip() for n in (repeatable or "").split(",") if n.strip())
        return cls(rerun=rerun, repeatable=names)

    def may_rerun(self, tool_name: str, *, safe: bool) -> bool:
        """Whether a lost attempt of a ``tool_name`` call may run again: the policy says so,
        the tool is known to be ``safe`` to repeat, or the operator listed it."""
        return (
            self.rerun
            or safe
            or any(fnmatch.fnmatchcase(tool_name, pattern) for pattern in self.repeatable)
        )


def current_lost_calls() -> LostCalls:
    """The operator's policy as the worker's settings say now (read only for an attempt
    after a lost one, which is rare)."""
    try:
        settings = load_settings(os.environ, reader=WORKER).settings
    except SettingsError:
        return LostCalls()  # a setting went bad since start: the safe default, at most once
    return LostCalls.from_settings(settings.rerun_lost_calls, settings.repeatable_tools)
