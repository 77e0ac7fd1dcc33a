"""``seawall prompt`` as a person runs it: the real console script in a pseudo-terminal
(approvals asked at the terminal; the demo loop in shadow and in enforce, with their exit
codes; a session the worker refused to start; no gateway, a wrong token), and without one
(the command that answers); against the real gateway, dev server and worker."""

from __future__ import annotations

import asyncio
import io
import os
import select
import socket
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
import pytest_asyncio
from temporalio.client import Client

from seawall.cli.prompt import (
    ANSWER_COMMAND,
    EXIT_GATEWAY,
    EXIT_LOOP_STOPPED,
    EXIT_PROMPT_ERROR,
    EXIT_TURN_CAP,
    send_prompt,
)
from seawall.worker.build import build_worker
from tests.seawall.cli.gateway_server import TOKEN, serve_gateway
from tests.trust_helpers import harness_trust
from workflows.seed.guard import REPEATED_TOOL_FAILURE_REMINDER, REPEATED_TOOL_FAILURE_STOP_MESSAGE

SEAWALL = Path(sys.executable).parent / "seawall"
# The most one wait for the terminal's next output may take (a generous bound on a loaded
# machine, never a pace: every read returns as soon as the text is there).
READ_SECONDS = 120.0


@pytest_asyncio.fixture
async def gateway_url(client: Client, task_queue: str, tmp_path: Path) -> AsyncIterator[str]:
    async with serve_gateway(
        client, task_queue=task_queue, workspaces=tmp_path / "workspaces"
    ) as url:
        yield url


def _environment(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SEAWALL_")}
    env["XDG_CONFIG_HOME"] = str(tmp_path / "config")
    return env


class Terminal:
    """A process on a pseudo-terminal: what it printed so far, and typing into it."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.master, slave = os.openpty()
        self.process = subprocess.Popen(
            argv, stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True
        )
        os.close(slave)
        self._raw = b""

    @property
    def output(self) -> str:
        """What the terminal shows so far (its line ends as newlines)."""
        return self._raw.decode(errors="replace").replace("\r\n", "\n")

    def _shows(self, text: str, after: str) -> bool:
        shown = self.output
        start = shown.find(after)
        return start >= 0 and text in shown[start + len(after) :]

    def _read_until(self, text: str, after: str) -> str:
        while not self._shows(text, after):
            ready, _, _ = select.select([self.master], [], [], READ_SECONDS)
            assert ready, f"no {text!r} on the terminal; it shows:\n{self.output}"
            try:
                chunk = os.read(self.master, 4096)
            except OSError:  # the process closed the terminal
                chunk = b""
            assert chunk, f"the terminal closed before {text!r}; it shows:\n{self.output}"
            self._raw += chunk
        return self.output

    async def read_until(self, text: str, after: str = "") -> str:
        """The output once it shows ``text`` (after ``after``, when given)."""
        return await asyncio.to_thread(self._read_until, text, after)

    def type(self, line: str) -> None:
        os.write(self.master, line.encode() + b"\n")

    async def exit_code(self) -> int:
        code = await asyncio.to_thread(self.process.wait, READ_SECONDS)
        os.close(self.master)
        return code


async def test_a_permission_is_asked_at_the_terminal_with_what_the_call_does(
    gateway_url: str, tmp_path: Path
) -> None:
    terminal = Terminal(
        [
            str(SEAWALL),
            "prompt",
            "write a note: buy milk",
            "--gateway",
            gateway_url,
            "--token",
            TOKEN,
        ],
        _environment(tmp_path),
    )
    shown = await terminal.read_until("allow? [y/N/a")
    # The person sees what they approve: the tool, where it writes and what.
    assert "? permission asked to run: write_file path=NOTES.md" in shown
    assert "    path: NOTES.md" in shown
    assert "    content: write a note: buy milk" in shown
    terminal.type("y")
    shown = await terminal.read_until("stop: end_turn")
    assert await terminal.exit_code() == 0
    assert "  approved" in shown
    assert "← write_file success" in shown
    assert "Demo model: wrote NOTES.md." in shown
    (session,) = (tmp_path / "workspaces").iterdir()
    assert (session / "NOTES.md").read_text() == "write a note: buy milk\n"


async def test_a_rejection_at_the_terminal_runs_nothing(gateway_url: str, tmp_path: Path) -> None:
    terminal = Terminal(
        [str(SEAWALL), "prompt", "note this", "--gateway", gateway_url, "--token", TOKEN],
        _environment(tmp_path),
    )
    await terminal.read_until("allow? [y/N/a")
    terminal.type("n")
    shown = await terminal.read_until("stop: end_turn")
    assert await terminal.exit_code() == 0
    assert "  rejected: the call is not run" in shown
    assert "← write_file cancelled: not approved" in shown
    assert not list(tmp_path.glob("workspaces/*/NOTES.md"))


class _Watched(io.StringIO):
    """An output that tells when a line containing ``text`` was written."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text
        self.seen = asyncio.Event()

    def write(self, s: str) -> int:
        written = super().write(s)
        if self.text in self.getvalue():
            self.seen.set()
        return written


async def test_without_a_terminal_it_says_how_to_answer_and_seawall_answer_does(
    gateway_url: str, tmp_path: Path
) -> None:
    out = _Watched("answer with:")
    following = asyncio.create_task(
        send_prompt(gateway_url, "write a note", token=TOKEN, out=out, ask=None)
    )
    await asyncio.wait_for(out.seen.wait(), READ_SECONDS)
    (hint,) = [line for line in out.getvalue().splitlines() if "answer with:" in line]
    command = hint.split("answer with: ", 1)[1].split(" yes|no")[0]
    assert command.startswith(ANSWER_COMMAND + " ")
    _, _, prompt_id, request_id = command.rsplit(" ", 3)
    answering = await asyncio.create_subprocess_exec(
        str(SEAWALL),
        "answer",
        prompt_id,
        request_id,
        "yes",
        "--gateway",
        gateway_url,
        "--token",
        TOKEN,
        env=_environment(tmp_path),
        stdout=asyncio.subprocess.PIPE,
    )
    answered, _ = await answering.communicate()
    assert answering.returncode == 0
    assert answered.decode().strip() == f"{request_id}: approved"
    assert await following == 0
    assert "Demo model: wrote NOTES.md." in out.getvalue()


@pytest_asyncio.fixture
async def refusing_gateway(client: Client, tmp_path: Path) -> AsyncIterator[str]:
    """A gateway whose sessions' workspaces are outside its worker's workspaces."""
    (tmp_path / "root").mkdir()
    queue = f"narrow-{uuid.uuid4().hex[:8]}"
    trust = harness_trust(workspace_roots=(tmp_path / "root",))
    async with (
        build_worker(client, queue, trust=trust),
        serve_gateway(client, task_queue=queue, workspaces=tmp_path / "elsewhere") as url,
    ):
        yield url


async def test_a_refused_start_is_printed_with_its_reason(
    refusing_gateway: str, tmp_path: Path
) -> None:
    terminal = Terminal(
        [str(SEAWALL), "prompt", "hello", "--gateway", refusing_gateway, "--token", TOKEN],
        _environment(tmp_path),
    )
    shown = await terminal.read_until("\n", after="stop: ")
    assert await terminal.exit_code() == EXIT_PROMPT_ERROR == 1
    last = shown.splitlines()[-1]
    assert last.startswith(
        "stop: error (start_refused): the worker refused to start this prompt's session: "
        "the workspace is not inside this worker's workspaces directory"
    ), last


async def test_a_session_refused_before_its_prompt_arrives_reads_the_same(
    refusing_gateway: str, tmp_path: Path
) -> None:
    """The worker may refuse a session before its first prompt reaches the gateway (which
    then answers 409): the person sees the same stop and exit code as when it refuses after."""
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with httpx.AsyncClient(base_url=refusing_gateway, headers=headers) as http:
        session_id = (await http.post("/v1/sessions", json={})).json()["session_id"]
        for _ in range(600):  # until the worker has refused it (each look is one request)
            if (await http.get(f"/v1/sessions/{session_id}")).json().get("state") == "refused":
                break
            await asyncio.sleep(0.1)
        else:
            pytest.fail("the worker never refused the session")
    terminal = _prompt(refusing_gateway, "hello", tmp_path, "--session", session_id)
    shown = await terminal.read_until("\n", after="stop: ")
    assert await terminal.exit_code() == EXIT_PROMPT_ERROR
    assert shown.splitlines()[-1].startswith(
        "stop: error (start_refused): the worker refused to start this prompt's session: "
        "the workspace is not inside this worker's workspaces directory"
    ), shown


def _prompt(gateway_url: str, text: str, tmp_path: Path, *flags: str) -> Terminal:
    argv = [str(SEAWALL), "prompt", text, "--gateway", gateway_url, "--token", TOKEN, *flags]
    return Terminal(argv, _environment(tmp_path))


async def test_a_shadow_loop_is_told_in_a_few_lines_with_what_enforcement_would_do(
    gateway_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The demo loop as a person sees it in ``shadow`` (docs/running.md, "What the terminal
    shows"): why each call failed, repeats counted, the guard's would-remind and would-stop
    where they happened, one stop line and the turn cap's own exit code."""
    monkeypatch.setenv("SEAWALL_REPEATED_TOOL_FAILURE_GUARD", "shadow")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    terminal = _prompt(gateway_url, "show me a loop", tmp_path)
    shown = await terminal.read_until("\n", after="stop: ")
    assert await terminal.exit_code() == EXIT_TURN_CAP == 4
    lines = shown.splitlines()
    batch = ["→ read_file", "  … ×4", "← read_file error: not found", "  … ×4"]
    assert lines[3:7] == batch, shown
    remind, stop = (
        f"[shadow] would {what} (repeated_tool_execution_failure); nothing was sent to the model"
        for what in ("remind the model here", "stop the prompt here")
    )
    # Each shadow decision is printed once, right after the batch it was taken at.
    for decision in (remind, stop):
        assert lines.count(decision) == 1, shown
        at = lines.index(decision)
        assert lines[at - 4 : at] == batch, shown
    assert lines.index(remind) < lines.index(stop)
    # Fifty model requests in a few dozen lines: runs of the same reply are counted.
    assert len(lines) < 60, shown
    assert any(line.endswith("(the 5 lines above)") for line in lines), shown
    assert [line for line in lines if line.startswith(("stop", "[stop"))] == [
        "stop: max_turn_requests"
    ]
    assert lines[-1] == "stop: max_turn_requests"


async def test_an_enforced_loop_stop_is_printed_once_with_its_exit_code(
    gateway_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("SEAWALL_REPEATED_TOOL_FAILURE_GUARD", "enforce")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    terminal = _prompt(gateway_url, "show me a stubborn loop", tmp_path)
    shown = await terminal.read_until("\n", after="stop: ")
    assert await terminal.exit_code() == EXIT_LOOP_STOPPED == 3
    lines = shown.splitlines()
    assert "← read_file error: not found" in lines
    assert lines.count(f"[reminder] {REPEATED_TOOL_FAILURE_REMINDER}") == 1
    assert lines[-2:] == [
        REPEATED_TOOL_FAILURE_STOP_MESSAGE,
        "stop: loop_detected (repeated_tool_execution_failure)",
    ]
    assert [line for line in lines if line.startswith(("stop", "[stop"))] == [lines[-1]]


async def test_no_gateway_is_one_line_saying_how_to_start_or_find_it(tmp_path: Path) -> None:
    # A port bound but not listening: nothing answers there, and no one else can take it.
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{taken.getsockname()[1]}"
        terminal = _prompt(url, "hello", tmp_path)
        shown = await terminal.read_until("\n", after="seawall: error:")
        assert await terminal.exit_code() == EXIT_GATEWAY == 2
    (line,) = shown.splitlines()
    assert line.startswith(f"seawall: error: no gateway answers at {url} ("), line
    for hint in ("`make run`", "--gateway", "SEAWALL_GATEWAY_URL", "SEAWALL_GATEWAY_PORT"):
        assert hint in line, line


async def test_a_wrong_token_names_the_flag_and_the_setting(
    gateway_url: str, tmp_path: Path
) -> None:
    terminal = Terminal(
        [str(SEAWALL), "prompt", "hello", "--gateway", gateway_url, "--token", "wrong"],
        _environment(tmp_path),
    )
    shown = await terminal.read_until("\n", after="seawall: error:")
    assert await terminal.exit_code() == EXIT_GATEWAY
    (line,) = shown.splitlines()
    assert line.startswith(f"seawall: error: gateway {gateway_url}: 401 invalid bearer token"), line
    assert line.endswith("(seawall prompt: --token or SEAWALL_GATEWAY_TOKEN)"), line
