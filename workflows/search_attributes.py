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

ALL = (GUARD_PHASE, LAST_DECISION, STOP_REASON, LOOP_TYPE)
