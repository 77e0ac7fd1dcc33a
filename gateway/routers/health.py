"""The health route, ``/healthz``: liveness for load balancers and ``seawall up``.

Outside ``/v1`` and served without a token (gateway/middleware.py, ``PUBLIC_PATHS``): it
calls nothing, so it answers as long as the process does.
"""

from __future__ import annotations

from fastapi import APIRouter

from gateway.api_models import Health

router = APIRouter(tags=["health"])


@router.get("/healthz")
async def healthz() -> Health:
    """Liveness: the process answers (no Temporal call, no token)."""
    return Health(ok=True)
