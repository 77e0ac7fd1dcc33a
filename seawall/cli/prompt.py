"""``seawall prompt "…"``: send one prompt through the gateway and follow it in the terminal.

Creates a session unless one is given, submits the prompt, and prints one line per agent
update from the prompt's server-sent-events stream (reconnecting from the last event id if
the connection drops), then the stop reason — with why, for a prompt that ended ``error``
(its result's ``error_reason`` and ``error``). Model text is printed as it streams
(``message_delta``); the complete ``agent_message`` that follows is then not printed again.
A call the loop's protections refused before it ran has no ``tool_call_started`` event; its
start line is printed with its settlement, so every call shows both lines.
Exit code: 0, or 1 when the prompt ended with ``error``, or 2 when the gateway could not be
reached or refused the request.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import AsyncIterator
from typing import Any, TextIO

import httpx

from seawall.runtime.settings import PROMPT, SeawallSettings, settings_or_exit

EXIT_OK = 0
EXIT_PROMPT_ERROR = 1
EXIT_GATEWAY = 2
# Reconnect attempts after a dropped event stream (each resumes from the last event id).
STREAM_RETRIES = 5
RETRY_SECONDS = 1.0


class GatewayError(Exception):
    """The gateway refused a request or could not be reached."""


def _detail(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text.strip() or response.reason_phrase
    if isinstance(body, dict) and "detail" in body:
        return str(body["detail"])
    return response.text.strip()


async def _post(http: httpx.AsyncClient, path: str, body: dict[str, Any]) -> dict[str, Any]:
    response = await http.post(path, json=body)
    if response.is_error:
        raise GatewayError(f"{response.status_code} {_detail(response)}")
    result: dict[str, Any] = response.json()
    return result


async def _sse_events(response: httpx.Response) -> AsyncIterator[tuple[str, str, str]]:
    """(id, event, data) for each event of a text/event-stream body."""
    fields: dict[str, str] = {}
    async for line in response.aiter_lines():
        if not line:
            if "data" in fields:
                yield fields.get("id", ""), fields.get("event", "message"), fields["data"]
            fields = {}
        elif not line.startswith(":"):
            name, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if name == "data" and "data" in fields:
                value = f"{fields['data']}\n{value}"  # a multi-line data field
            fields[name] = value


class _Printer:
    """One terminal line per agent update; streamed model text grows its line as it comes."""

    def __init__(self, out: TextIO, prompt_id: str) -> None:
        self.out = out
        self.prompt_id = prompt_id
        self.last_message: str | None = None
        # The batches whose text was printed as it streamed, and whether that line is open.
        self.streamed: set[int] = set()
        self.open_line = False
        # The calls whose start line was printed.
        self.started: set[str] = set()

    def line(self, text: str) -> None:
        self.end_line()
        print(text, file=self.out, flush=True)

    def end_line(self) -> None:
        if self.open_line:
            print(file=self.out, flush=True)
            self.open_line = False

    def delta(self, event: dict[str, Any]) -> None:
        text = event.get("text") or ""
        if event.get("status") == "retry":
            # A retried model request said something else: its text starts over.
            self.line("[model request retried]")
        self.streamed.add(int(event.get("batch") or 0))
        print(text, end="", file=self.out, flush=True)
        self.open_line = True

    def event(self, kind: str, event: dict[str, Any]) -> None:
        tool = event.get("tool_name") or "?"
        text = event.get("text") or ""
        if kind == "message_delta":
            self.delta(event)
        elif kind == "agent_message":
            self.last_message = text
            if int(event.get("batch") or 0) in self.streamed:
                self.end_line()  # already printed as it streamed
            else:
                self.line(text)
        elif kind == "tool_call_started":
            self.started.add(str(event.get("call_id")))
            self.line(f"→ {tool} ({event.get('call_id')})")
        elif kind == "tool_call_settled":
            if str(event.get("call_id")) not in self.started:
                # Refused before it ran (no started event): its start line first.
                self.event("tool_call_started", event)
            self.line(f"← {tool} {event.get('status')} ({event.get('call_id')})")
        elif kind == "reminder":
            self.line(f"[reminder] {text}")
        elif kind == "stop":
            # The stop message itself arrived as the agent message just before; the stop
            # event names the loop type.
            loop_type = event.get("status")
            self.line(f"[stop: {loop_type}]" if loop_type else "[stop]")
        elif kind == "permission_request":
            request_id = event.get("request_id")
            self.line(
                f"? {tool} asks for permission: answer with POST "
                f"/v1/prompts/{self.prompt_id}/permissions/{request_id} "
                '{"approve": true|false}'
            )


async def _follow(http: httpx.AsyncClient, prompt_id: str, printer: _Printer) -> str:
    """Print the prompt's events until it finishes; returns its stop reason."""
    cursor = "0"
    failures = 0
    while True:
        try:
            async with http.stream(
                "GET", f"/v1/prompts/{prompt_id}/events", headers={"Last-Event-ID": cursor}
            ) as response:
                if response.is_error:
                    await response.aread()
                    raise GatewayError(f"{response.status_code} {_detail(response)}")
                async for event_id, kind, data in _sse_events(response):
                    cursor = event_id or cursor
                    failures = 0
                    event = json.loads(data)
                    if kind == "prompt_finished":
                        printer.end_line()
                        return str(event.get("status"))
                    printer.event(kind, event)
        except httpx.TransportError as err:
            failures += 1
            if failures > STREAM_RETRIES:
                raise GatewayError(f"lost the event stream: {err}") from err
            await asyncio.sleep(RETRY_SECONDS)
            continue
        # The stream ended without prompt_finished (the gateway gave up waiting): resume.
        failures += 1
        if failures > STREAM_RETRIES:
            raise GatewayError("the event stream ended before the prompt finished")
        await asyncio.sleep(RETRY_SECONDS)


async def _result(http: httpx.AsyncClient, prompt_id: str) -> dict[str, Any] | None:
    """The prompt's result (it lands just after the last event); None when it does not."""
    for _ in range(20):
        response = await http.get(f"/v1/prompts/{prompt_id}")
        if response.is_success:
            result = response.json().get("result")
            if isinstance(result, dict):
                return result
        await asyncio.sleep(0.1)
    return None


def stop_line(stop_reason: str, result: dict[str, Any] | None) -> str:
    """``stop: REASON``, with the loop type of a stopped loop or why a prompt ended
    ``error`` (``stop: error (model_retries_exhausted): the model endpoint failed …``)."""
    line = f"stop: {stop_reason}"
    if result is None:
        return line
    if stop_reason == "loop_detected" and result.get("loop_type"):
        return f"{line} ({result['loop_type']})"
    if stop_reason == "error":
        reason, error = result.get("error_reason"), result.get("error")
        return line + (f" ({reason})" if reason else "") + (f": {error}" if error else "")
    return line


async def send_prompt(
    base_url: str,
    text: str,
    *,
    session_id: str | None = None,
    token: str | None = None,
    out: TextIO | None = None,
) -> int:
    """Send ``text`` as a prompt and print its updates to ``out`` (default: the current
    ``sys.stdout``, looked up at call time); returns the exit code."""
    out = sys.stdout if out is None else out
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    # No read timeout: a stream may be quiet while a long tool runs.
    timeout = httpx.Timeout(30.0, read=None)
    async with httpx.AsyncClient(base_url=base_url, headers=headers, timeout=timeout) as http:
        try:
            if session_id is None:
                session_id = str((await _post(http, "/v1/sessions", {}))["session_id"])
                print(f"session {session_id}", file=out, flush=True)
            accepted = await _post(http, f"/v1/sessions/{session_id}/prompts", {"text": text})
            prompt_id = str(accepted["prompt_id"])
            position = int(accepted.get("position", 0))
            waiting = f" (queued behind {position})" if position else ""
            print(f"prompt {prompt_id}{waiting}", file=out, flush=True)
            stop_reason = await _follow(http, prompt_id, _Printer(out, prompt_id))
            result = None
            if stop_reason in ("loop_detected", "error"):
                result = await _result(http, prompt_id)
        except (GatewayError, httpx.HTTPError) as err:
            print(f"seawall: error: gateway {base_url}: {err}", file=sys.stderr, flush=True)
            return EXIT_GATEWAY
    print(stop_line(stop_reason, result), file=out, flush=True)
    return EXIT_PROMPT_ERROR if stop_reason == "error" else EXIT_OK


def add_prompt_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``seawall prompt`` flags (for the CLI's subparser). The defaults come from the
    settings when the command runs (:func:`main_prompt`), not when the parser is built."""
    parser.add_argument("text", help="the prompt to send (quote it)")
    parser.add_argument(
        "--gateway",
        help="gateway base URL (default: the gateway_url setting, SEAWALL_GATEWAY_URL, else "
        "http://<gateway_host>:<gateway_port>, i.e. http://127.0.0.1:8000)",
    )
    parser.add_argument("--session", help="an existing session id (default: a new session)")
    parser.add_argument(
        "--token", help="bearer token (default: the gateway_token setting, SEAWALL_GATEWAY_TOKEN)"
    )


def main_prompt(args: argparse.Namespace, settings: SeawallSettings | None = None) -> int:
    """``seawall prompt``: args has ``text``, ``gateway``, ``session`` and ``token``; an
    unset flag takes its value from ``settings`` (default: loaded now; a bad setting exits
    with code 2)."""
    if settings is None:
        settings = settings_or_exit("seawall", reader=PROMPT).settings
    base_url = args.gateway or settings.gateway_client_url
    token = args.token
    if token is None and settings.gateway_token is not None:
        token = settings.gateway_token.get_secret_value()
    return asyncio.run(send_prompt(base_url, args.text, session_id=args.session, token=token))
