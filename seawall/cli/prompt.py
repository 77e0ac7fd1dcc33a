"""``seawall prompt "…"``: send one prompt through the gateway and follow it in the terminal.

Creates a session unless one is given, submits the prompt, and tells the story of the
prompt's server-sent-events stream (reconnecting from the last event id if the connection
drops): the model's text as it streams, each call and why it failed (``← read_file error:
not found``), the guard's reminders, what a protection in shadow would have done, and
permission requests, asked at the terminal. Runs of identical lines and of identical replies
are counted instead of printed again (:class:`_Screen`). The last line says how the prompt
ended, once: the loop a stop named, or why a prompt ended ``error`` (a worker's refusal to
start it included). The exit code says it too (:data:`EXIT_CODES`, docs/running.md).

``seawall answer PROMPT REQUEST yes|no`` answers a permission request from elsewhere (a
second terminal, a script).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TextIO

import httpx

from seawall.runtime.settings import PROMPT, SeawallSettings, settings_or_exit
from workflows.contracts.prompt import REFUSED_START_TEXT, ErrorReason

EXIT_OK = 0
EXIT_PROMPT_ERROR = 1
EXIT_GATEWAY = 2
EXIT_LOOP_STOPPED = 3
EXIT_TURN_CAP = 4
EXIT_CANCELLED = 5
# How each stop reason exits (anything else: EXIT_PROMPT_ERROR).
EXIT_CODES = {
    "end_turn": EXIT_OK,
    "error": EXIT_PROMPT_ERROR,
    "loop_detected": EXIT_LOOP_STOPPED,
    "max_turn_requests": EXIT_TURN_CAP,
    "cancelled": EXIT_CANCELLED,
}
# The command a permission request without a terminal is answered with (seawall answer).
ANSWER_COMMAND = ".venv/bin/seawall answer"
# Reconnect attempts after a dropped event stream (each resumes from the last event id).
STREAM_RETRIES = 5
RETRY_SECONDS = 1.0


# Shown a question, returns the answer typed (a permission request's y/n).
Asker = Callable[[str], Awaitable[str]]


class GatewayError(Exception):
    """The gateway refused a request (``status``: its HTTP status) or could not be reached."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


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
        raise GatewayError(f"{response.status_code} {_detail(response)}", response.status_code)
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


# What the terminal shows for a protection in shadow (EventKind.SHADOW_DECISION).
_SHADOW_WORDS = {"would_warn": "would remind the model", "would_stop": "would stop the prompt"}


class _Screen:
    """What reaches the terminal: runs of identical lines, and runs of identical replies.

    A looping agent says and does the same thing again and again; printing it all buries the
    one line that matters. So a line that repeats the one before is counted, not printed,
    and the run ends with ``  … ×N`` (the line above N times in all); and a reply whose lines
    (its text, its calls, their results) repeat the reply before is held back, and the run
    ends with ``  … ×N (the K lines above, N times in all)``. Anything new prints at once:
    held lines are printed as soon as they stop matching, streamed text as it comes."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self._last_line: str | None = None
        self._line_count = 0
        self._previous: list[str] | None = None  # the last reply's lines, as counted
        self._current: list[str] = []
        self._holding = False  # the current reply matches the previous one so far
        self._repeats = 1  # how many times in all the previous reply was seen
        self._text = ""  # streamed text of the current line
        self._text_shown = False  # whether the streamed text was printed

    def _print(self, text: str, end: str = "\n") -> None:
        print(text, end=end, file=self.out, flush=True)

    # --- replies --------------------------------------------------------------------------

    def reply_starts(self) -> None:
        """A new model reply begins: the last one is complete."""
        self._end_run()
        if self._current:
            if self._holding and self._current == self._previous:
                self._repeats += 1
            else:
                self._release()
                self._previous, self._repeats = self._current, 1
        self._current = []
        self._holding = self._previous is not None

    def finish(self) -> None:
        """The prompt is over: close every run."""
        self.end_text()
        self.reply_starts()
        self._release()

    def _release(self) -> None:
        """Print the count of a finished run of replies, then whatever was held."""
        if self._repeats > 1 and self._previous:
            self._print(f"  … ×{self._repeats} (the {len(self._previous)} lines above)")
            self._repeats = 1
        if self._holding:
            self._holding = False
            self._previous = None
            for line in self._current:
                self._print(line)
            if self._text:
                self._print(self._text, end="")
                self._text_shown = True

    def _matches(self) -> bool:
        previous = self._previous or []
        n = len(self._current)
        if self._current != previous[:n]:
            return False
        return not self._text or (n < len(previous) and previous[n].startswith(self._text))

    # --- lines ----------------------------------------------------------------------------

    def line(self, text: str) -> None:
        """One complete line."""
        self.end_text()
        if text == self._last_line:
            self._line_count += 1
            return
        self._end_run()
        self._last_line, self._line_count = text, 1
        self._add(text)

    def _end_run(self) -> None:
        if self._line_count > 1:
            self._add(f"  … ×{self._line_count}")
        self._last_line, self._line_count = None, 0

    def _add(self, text: str, shown: bool = False) -> None:
        self._current.append(text)
        if self._holding and not self._matches():
            self._release()
        elif not self._holding and not shown:
            self._print(text)

    def stream(self, piece: str) -> None:
        """Model text as it streams: printed at once unless it repeats the last reply."""
        if not self._text:
            self._end_run()
        self._text += piece
        if self._holding and not self._matches():
            self._release()
        elif not self._holding:
            self._print(piece, end="")
            self._text_shown = True

    def end_text(self) -> None:
        """The streamed line is complete."""
        if not self._text:
            return
        text, shown = self._text, self._text_shown
        self._text, self._text_shown = "", False
        if shown:
            self._print("")
        self._last_line, self._line_count = text, 1
        self._add(text, shown=shown)


class _Printer:
    """Agent events as a story a person can follow (docs/running.md, "What the terminal
    shows"): the model's text as it streams, each call and why it failed, the guard's
    reminders, what a protection in shadow would have done, permission requests."""

    def __init__(self, out: TextIO, prompt_id: str) -> None:
        self.screen = _Screen(out)
        self.prompt_id = prompt_id
        self.last_message: str | None = None
        # The batches whose text was printed as it streamed.
        self.streamed: set[int] = set()
        # The calls whose start line was printed.
        self.started: set[str] = set()
        # Whether the current reply has a settled call (the next text or call starts anew).
        self._settled = False

    def _reply_starts(self) -> None:
        if self._settled:
            self.screen.reply_starts()
            self._settled = False

    def line(self, text: str) -> None:
        self.screen.line(text)

    def finish(self) -> None:
        self.screen.finish()

    def delta(self, event: dict[str, Any]) -> None:
        self._reply_starts()
        if event.get("status") == "retry":
            # A retried model request said something else: its text starts over.
            self.line("[model request retried]")
        self.streamed.add(int(event.get("batch") or 0))
        self.screen.stream(event.get("text") or "")

    def event(self, kind: str, event: dict[str, Any]) -> None:
        tool = event.get("tool_name") or "?"
        text = event.get("text") or ""
        if kind == "message_delta":
            self.delta(event)
        elif kind == "agent_message":
            self.last_message = text
            if int(event.get("batch") or 0) in self.streamed:
                self.screen.end_text()  # already printed as it streamed
            else:
                self._reply_starts()
                self.line(text)
        elif kind == "tool_call_started":
            self._reply_starts()
            self.started.add(str(event.get("call_id")))
            self.line(f"→ {tool}")
        elif kind == "tool_call_settled":
            if str(event.get("call_id")) not in self.started:
                # Refused before it ran (no started event): its start line first.
                self.event("tool_call_started", event)
            reason = event.get("reason")
            self.line(f"← {tool} {event.get('status')}" + (f": {reason}" if reason else ""))
            self._settled = True
        elif kind == "reminder":
            self.line(f"[reminder] {text}")
        elif kind == "shadow_decision":
            what = _SHADOW_WORDS.get(str(event.get("status")), str(event.get("status")))
            self.line(f"[shadow] {what} here ({text}); nothing was sent to the model")
        elif kind == "stop":
            # Its message arrived as the agent message just before, and the last line names
            # the stop: nothing more to print.
            pass


class _Approvals:
    """Answers permission requests: at the terminal when there is one (the call shown, then
    ``allow? [y/N]``), else by saying the command that answers it."""

    def __init__(
        self, http: httpx.AsyncClient, prompt_id: str, printer: _Printer, ask: Asker | None
    ) -> None:
        self.http = http
        self.prompt_id = prompt_id
        self.printer = printer
        self.ask = ask

    async def request(self, event: dict[str, Any]) -> None:
        request_id = str(event.get("request_id"))
        what = event.get("text") or event.get("tool_name") or "a call"
        printer = self.printer
        rule = f" (rule: {event['rule']})" if event.get("rule") else ""
        printer.line(f"? permission asked to run: {what}{rule}")
        for name, value in (event.get("arguments") or {}).items():
            shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            printer.line(f"    {name}: {shown}")
        if self.ask is None:
            printer.line(
                f"  answer with: {ANSWER_COMMAND} {self.prompt_id} {request_id} yes|no "
                "(no terminal to ask at; unanswered, the call is not run)"
            )
            return
        answer = (await self.ask("  allow? [y/N/a: always in this session] ")).strip().lower()
        approve = answer in ("y", "yes", "a", "always")
        remember = answer in ("a", "always")
        response = await self.http.post(
            f"/v1/prompts/{self.prompt_id}/permissions/{request_id}",
            json={"approve": approve, "remember": remember},
        )
        if response.is_success:
            said = {True: "  approved", False: "  rejected: the call is not run"}[approve]
            printer.line("  approved for the rest of this session" if remember else said)
        else:
            printer.line(f"  not answered: {_detail(response)} (the call was not run)")


async def _follow(
    http: httpx.AsyncClient, prompt_id: str, printer: _Printer, approvals: _Approvals
) -> str:
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
                        printer.finish()
                        return str(event.get("status"))
                    if kind == "permission_request":
                        await approvals.request(event)
                    else:
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


async def _refusal(http: httpx.AsyncClient, session_id: str) -> str | None:
    """Why the worker refused ``session_id``, when it did (its view's ``reason``)."""
    response = await http.get(f"/v1/sessions/{session_id}")
    if not response.is_success:
        return None
    view = response.json()
    if view.get("state") != "refused" or not view.get("reason"):
        return None
    return str(view["reason"])


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


def _gateway_error(base_url: str, err: Exception) -> str:
    """What went wrong reaching the gateway, and what to do about it."""
    if isinstance(err, httpx.ConnectError | httpx.ConnectTimeout):
        return (
            f"seawall: error: no gateway answers at {base_url} ({err}). Is Seawall running? "
            "Start it with `make run` (or `.venv/bin/seawall up`), or point --gateway, "
            "SEAWALL_GATEWAY_URL or SEAWALL_GATEWAY_PORT at the one that runs."
        )
    return f"seawall: error: gateway {base_url}: {err}"


def exit_code(stop_reason: str) -> int:
    """The documented exit code of a prompt that ended with ``stop_reason``."""
    return EXIT_CODES.get(stop_reason, EXIT_PROMPT_ERROR)


async def send_prompt(
    base_url: str,
    text: str,
    *,
    session_id: str | None = None,
    token: str | None = None,
    out: TextIO | None = None,
    ask: Asker | None = None,
) -> int:
    """Send ``text`` as a prompt and print its updates to ``out`` (default: the current
    ``sys.stdout``, looked up at call time); returns the exit code (:data:`EXIT_CODES`).
    ``ask`` answers permission requests (it is shown the question and returns the answer);
    ``None``: each request prints the command that answers it."""
    out = sys.stdout if out is None else out
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    # No read timeout: a stream may be quiet while a long tool runs.
    timeout = httpx.Timeout(30.0, read=None)
    async with httpx.AsyncClient(base_url=base_url, headers=headers, timeout=timeout) as http:
        try:
            if session_id is None:
                session_id = str((await _post(http, "/v1/sessions", {}))["session_id"])
                print(f"session {session_id}", file=out, flush=True)
            try:
                accepted = await _post(http, f"/v1/sessions/{session_id}/prompts", {"text": text})
            except GatewayError as err:
                # The worker refused the session before its prompt arrived: the same stop
                # as a refusal that comes after it.
                reason = await _refusal(http, session_id) if err.status == 409 else None
                if reason is None:
                    raise
                refused = {
                    "error_reason": ErrorReason.START_REFUSED.value,
                    "error": REFUSED_START_TEXT.format(reason=reason),
                }
                print(stop_line("error", refused), file=out, flush=True)
                return EXIT_PROMPT_ERROR
            prompt_id = str(accepted["prompt_id"])
            position = int(accepted.get("position", 0))
            waiting = f" (queued behind {position})" if position else ""
            print(f"prompt {prompt_id}{waiting}", file=out, flush=True)
            printer = _Printer(out, prompt_id)
            approvals = _Approvals(http, prompt_id, printer, ask)
            stop_reason = await _follow(http, prompt_id, printer, approvals)
            result = None
            if stop_reason in ("loop_detected", "error"):
                result = await _result(http, prompt_id)
        except (GatewayError, httpx.HTTPError) as err:
            print(_gateway_error(base_url, err), file=sys.stderr, flush=True)
            return EXIT_GATEWAY
    print(stop_line(stop_reason, result), file=out, flush=True)
    return exit_code(stop_reason)


async def _ask_terminal(question: str) -> str:
    """Ask at the terminal (a thread reads the line, so the event loop keeps running)."""
    print(question, end="", flush=True)
    return await asyncio.to_thread(sys.stdin.readline)


def _client_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--gateway",
        help="gateway base URL (default: the gateway_url setting, SEAWALL_GATEWAY_URL, else "
        "http://<gateway_host>:<gateway_port>, i.e. http://127.0.0.1:8000)",
    )
    parser.add_argument(
        "--token", help="bearer token (default: the gateway_token setting, SEAWALL_GATEWAY_TOKEN)"
    )


def add_prompt_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``seawall prompt`` flags (for the CLI's subparser). The defaults come from the
    settings when the command runs (:func:`main_prompt`), not when the parser is built."""
    parser.add_argument("text", help="the prompt to send (quote it)")
    parser.add_argument("--session", help="an existing session id (default: a new session)")
    _client_arguments(parser)


def add_answer_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``seawall answer`` arguments."""
    parser.add_argument("prompt_id", help="the prompt that asks (printed by seawall prompt)")
    parser.add_argument("request_id", help="the permission request, e.g. permission-1")
    parser.add_argument("answer", choices=["yes", "no"], help="yes: run the call; no: do not")
    _client_arguments(parser)


def _client(args: argparse.Namespace, settings: SeawallSettings | None) -> tuple[str, str | None]:
    """The gateway URL and token: the flags, else the settings (loaded now if not given; a
    bad setting exits with code 2)."""
    if settings is None:
        settings = settings_or_exit("seawall", reader=PROMPT).settings
    token = args.token
    if token is None and settings.gateway_token is not None:
        token = settings.gateway_token.get_secret_value()
    return args.gateway or settings.gateway_client_url, token


def main_prompt(args: argparse.Namespace, settings: SeawallSettings | None = None) -> int:
    """``seawall prompt``: args has ``text``, ``gateway``, ``session`` and ``token``; an
    unset flag takes its value from ``settings``. Permission requests are asked at the
    terminal when stdin and stdout are one."""
    base_url, token = _client(args, settings)
    ask = _ask_terminal if sys.stdin.isatty() and sys.stdout.isatty() else None
    return asyncio.run(
        send_prompt(base_url, args.text, session_id=args.session, token=token, ask=ask)
    )


async def answer_permission(base_url: str, token: str | None, args: argparse.Namespace) -> int:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx.AsyncClient(base_url=base_url, headers=headers, timeout=30.0) as http:
        try:
            answered = await _post(
                http,
                f"/v1/prompts/{args.prompt_id}/permissions/{args.request_id}",
                {"approve": args.answer == "yes"},
            )
        except (GatewayError, httpx.HTTPError) as err:
            print(_gateway_error(base_url, err), file=sys.stderr, flush=True)
            return EXIT_GATEWAY
    print(f"{args.request_id}: {answered.get('outcome')}", flush=True)
    return EXIT_OK


def main_answer(args: argparse.Namespace, settings: SeawallSettings | None = None) -> int:
    """``seawall answer PROMPT REQUEST yes|no``: answer a permission request."""
    base_url, token = _client(args, settings)
    return asyncio.run(answer_permission(base_url, token, args))
