"""Sessions and admission: ``SessionWorkflow`` and ``OwnerAdmissionWorkflow``.

Why a package: a session runs its prompts one at a time as child prompt workflows, and
the per-owner admission workflow holds each owner's prompt slots across every gateway
replica (workflows/session/workflow.py, workflows/session/owner_admission.py).

- ``workflow``: ``SessionWorkflow`` and ``session_workflow_id``;
- ``owner_admission``: ``OwnerAdmissionWorkflow`` and its rule for freeing slots.
"""

from __future__ import annotations

from workflows.session.owner_admission import OwnerAdmissionWorkflow
from workflows.session.workflow import SessionWorkflow, session_workflow_id

__all__ = [
    "OwnerAdmissionWorkflow",
    "SessionWorkflow",
    "session_workflow_id",
]
