"""A session, and its prompts, are visible only to the owner that started it.

docs/http-api.md, "Tokens, owners and limits". With an owners' tokens file, several
owners share one gateway, and a session id or prompt id is not a secret (ids show in logs,
URLs, the Temporal UI). So every route that names a session or a prompt first checks that
the caller owns its session, and answers a stranger exactly as it answers an unknown id
(404, not 403: a stranger learns nothing about which ids exist).

The owner is asked once per session with the session's ``owner`` query and remembered: it
never changes. Without a tokens file there is one principal and nothing to check.
"""

from __future__ import annotations

from collections import OrderedDict

from fastapi import HTTPException, Request
from temporalio.client import Client, WorkflowQueryFailedError

from gateway.errors import RETRY_AFTER, not_found_detail
from gateway.middleware import OWNER_STATE_KEY
from seawall.client.temporal_ops import RPC_TIMEOUT, read, session_handle, session_of_prompt
from workflows.session import SessionWorkflow

# Sessions whose owner the gateway remembers (about 100 bytes each).
OWNERS_REMEMBERED = 100_000


class SessionOwners:
    """Each session's owner, asked once and remembered (least recently used go first)."""

    def __init__(self, capacity: int = OWNERS_REMEMBERED) -> None:
        self._owners: OrderedDict[str, str | None] = OrderedDict()
        self._capacity = capacity

    async def owner_of(self, client: Client, session_id: str) -> str | None:
        """The session's owner; an unknown session raises ``RPCError`` NOT_FOUND (a 404)."""
        if session_id in self._owners:
            self._owners.move_to_end(session_id)
            return self._owners[session_id]
        handle = session_handle(client, session_id)
        try:
            answer = await read(
                lambda: handle.query(SessionWorkflow.owner, rpc_timeout=RPC_TIMEOUT)
            )
        except WorkflowQueryFailedError as err:
            # A worker still running code from before the query: a rollout in progress.
            raise HTTPException(
                503,
                "the worker cannot tell this session's owner yet; try again shortly",
                headers=RETRY_AFTER,
            ) from err
        self.remember(session_id, answer.owner_id)
        return answer.owner_id

    def remember(self, session_id: str, owner_id: str | None) -> None:
        """A session this gateway started: its owner is known without asking."""
        self._owners[session_id] = owner_id
        self._owners.move_to_end(session_id)
        if len(self._owners) > self._capacity:
            self._owners.popitem(last=False)

    async def check(self, request: Request, client: Client, session_id: str) -> None:
        """Raise the route's 404 unless the caller owns ``session_id``."""
        caller = getattr(request.state, OWNER_STATE_KEY, None)
        if await self.owner_of(client, session_id) != caller:
            raise HTTPException(404, not_found_detail(request))

    async def check_prompt(self, request: Request, client: Client, prompt_id: str) -> None:
        """Raise the route's 404 unless ``prompt_id`` names a prompt of a session the caller
        owns. An id of no session's prompt (a session's own workflow id, a prompt started
        outside any session, garbage) is nobody's here, the operator's token included: it
        names no owner to check, so nothing of it is served or signalled."""
        session_id = session_of_prompt(prompt_id)
        if session_id is None:
            raise HTTPException(404, not_found_detail(request))
        await self.check(request, client, session_id)
