"""The chaos suite's client of the gateway: patient requests, and a prompt's events followed
across reconnects.

A chaos run restarts the server and kills workers under the gateway, so a request may meet
a refused connection or a 502/503/504: :class:`Client` repeats it (every write with an
``Idempotency-Key``, so a repeat takes effect once), and reads a prompt's server-sent events
from where it left off (``Last-Event-ID``) until ``prompt_finished``. Each wait is noted
with ``waiting_for`` so a prompt that misses its deadline says what it was waiting for
(``scripts/chaos_watch.py``).
"""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import httpx

from scripts.chaos_watch import waiting_for
from seawall.scenario.format import Scenario

# Statuses a request can meet while the server restarts: try again.
RETRYABLE = {502, 503, 504}
# How long the stack may take to answer its first session.
STACK_START_SECONDS = 120.0


class Client:
    """The gateway, asked patiently: requests that meet an outage are repeated."""

    def __init__(self, http: httpx.AsyncClient) -> None:
        self.http = http

    async def request(
        self, method: str, url: str, *, retry: bool = True, **kwargs: Any
    ) -> httpx.Response:
        """The answer, repeating the request through outages (writes carry an
        Idempotency-Key, so a repeat takes effect once)."""
        if method == "POST":
            kwargs.setdefault("headers", {})["Idempotency-Key"] = uuid.uuid4().hex
        for _ in range(600 if retry else 1):
            try:
                response = await self.http.request(method, url, **kwargs)
            except httpx.TransportError:
                await asyncio.sleep(0.2)
                continue
            if response.status_code not in RETRYABLE or not retry:
                return response
            await asyncio.sleep(0.2)
        if not retry:
            return httpx.Response(599)
        raise RuntimeError(f"{method} {url} kept failing")

    async def new_session(self, scenario: Scenario | None) -> str:
        """A session whose model is the suite's endpoint, with the scenario's fixture tools
        (none for an MCP prompt: its tools are the workers' MCP server's)."""
        waiting_for("its session to be created (POST /v1/sessions)")
        body: dict[str, Any] = {"approval_mode": "yolo"}
        if scenario is not None and scenario.tools:
            body["fixture_tools"] = {
                k: v.model_dump(mode="json") for k, v in scenario.tools.items()
            }
        response = await self.request("POST", "/v1/sessions", json=body)
        assert response.status_code == 201, response.text
        return str(response.json()["session_id"])

    async def submit(self, session_id: str, text: str) -> str:
        waiting_for(f"session {session_id} to accept a prompt (POST …/prompts)")
        response = await self.request(
            "POST", f"/v1/sessions/{session_id}/prompts", json={"text": text}
        )
        assert response.status_code == 202, response.text
        return str(response.json()["prompt_id"])

    async def result(self, prompt_id: str) -> dict[str, Any]:
        waiting_for(f"the result of {prompt_id} (GET /v1/prompts/{prompt_id})")
        while True:
            response = await self.request("GET", f"/v1/prompts/{prompt_id}")
            if response.status_code == 200 and response.json().get("result"):
                return dict(response.json()["result"])
            await asyncio.sleep(0.2)

    async def events(self, prompt_id: str) -> tuple[list[tuple[Any, ...]], int]:
        """Every event of the prompt, following the stream across disconnects."""
        seen: list[tuple[Any, ...]] = []
        cursor = 0
        reconnects = -1
        finished = False
        while not finished:
            reconnects += 1
            waiting_for(
                f"events of {prompt_id} after seq {cursor}, {len(seen)} seen "
                f"(GET …/events, {reconnects} reconnects)"
            )
            try:
                async with self.http.stream(
                    "GET",
                    f"/v1/prompts/{prompt_id}/events",
                    headers={"Last-Event-ID": str(cursor)},
                ) as stream:
                    if stream.status_code != 200:
                        await asyncio.sleep(0.2)
                        continue
                    async for line in stream.aiter_lines():
                        if not line.startswith("data: "):
                            continue
                        event = json.loads(line[len("data: ") :])
                        seen.append(
                            (
                                event["seq"],
                                event.get("batch", 0),
                                event["kind"],
                                event.get("call_id"),
                                event.get("status"),
                                event.get("text"),
                            )
                        )
                        cursor = event["seq"]
                        waiting_for(
                            f"events of {prompt_id} after seq {cursor} ({event['kind']}), "
                            f"{len(seen)} seen (GET …/events, {reconnects} reconnects)"
                        )
                        finished = event["kind"] == "prompt_finished"
            except httpx.TransportError:
                await asyncio.sleep(0.2)
        return seen, reconnects


async def wait_ready(client: Client) -> None:
    """Until the gateway answers and starts a session (the caller bounds it, with
    :data:`STACK_START_SECONDS`)."""
    while True:
        try:
            waiting_for("the gateway's /healthz to answer 200")
            response = await client.http.get("/healthz")
            if response.status_code == 200:
                waiting_for("the gateway to start a first session (POST /v1/sessions)")
                probe = await client.http.post("/v1/sessions", json={})
                if probe.status_code == 201:
                    return
        except httpx.TransportError:
            pass
        await asyncio.sleep(0.2)
