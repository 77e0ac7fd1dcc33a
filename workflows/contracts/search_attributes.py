"""The custom search attributes a prompt workflow keeps current for the Temporal UI.

An operator filters with them: ``SeawallLoopType = 'repeated_tool_execution_failure'`` lists
prompts stopped by the guard, ``SeawallLastDecision = 'would_stop'`` the shadow evidence.
Values are low-cardinality enum names only, never tool names, arguments or paths. The
worker registers them on its namespace at startup (``seawall.runtime.temporal_setup``).
"""

from __future__ import annotations

from temporalio.common import SearchAttributeKey

GUARD_PHASE = SearchAttributeKey.for_keyword("SeawallGuardPhase")
LAST_DECISION = SearchAttributeKey.for_keyword("SeawallLastDecision")
STOP_REASON = SearchAttributeKey.for_keyword("SeawallStopReason")
LOOP_TYPE = SearchAttributeKey.for_keyword("SeawallLoopType")

# Set when a session starts its prompt (docs/rollout.md, "Rollout cohorts"): the guard
# mode the prompt runs in, its owner's rollout cohort (a Cohort value, never the owner), and
# the deployment environment and service version of the worker that assigned it (short
# operator-set tokens; absent when the operator set none). `seawall rollout report` selects
# prompts by them.
GUARD_MODE = SearchAttributeKey.for_keyword("SeawallGuardMode")
ROLLOUT_COHORT = SearchAttributeKey.for_keyword("SeawallRolloutCohort")
ENVIRONMENT = SearchAttributeKey.for_keyword("SeawallEnvironment")
SERVICE_VERSION = SearchAttributeKey.for_keyword("SeawallServiceVersion")

ALL = (
    GUARD_PHASE,
    LAST_DECISION,
    STOP_REASON,
    LOOP_TYPE,
    GUARD_MODE,
    ROLLOUT_COHORT,
    ENVIRONMENT,
    SERVICE_VERSION,
)
