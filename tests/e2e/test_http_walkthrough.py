"""The curl walkthrough of docs/http-api.md, run as written against a real stack.

docs/http-api.md, "A session with curl": every ```sh block under a ``<!-- walkthrough -->``
comment runs, in order, in one bash process (``set -euo pipefail``) against a `seawall up`
stack started as `make run` starts it (no model endpoint, so the demo model; the default
settings), on ports and a data directory of its own. Only the two lines that name the stack
change: ``GATEWAY=http://127.0.0.1:8000`` and ``DATA=.data``. The ```text block under a
``<!-- walkthrough: output -->`` comment is what the block before it prints: each of its
lines must match a line of the real output, in order (other lines may come between, blank
lines are ignored, ``…`` matches anything). So a command that breaks, or an output the page
shows that the API no longer gives, fails here; the story's facts (the permission request's
arguments, the approval, the resumed stream without repeats, the cancelled prompt, the note
written, the session closed) are checked on their own too.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from bench.server_metrics import free_port
from workflows.contracts.prompt import AgentEvent, EventKind

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "http-api.md"
# What the walkthrough's first block says, and the test replaces with its own stack's.
DOC_GATEWAY = re.compile(r"^GATEWAY=http://127\.0\.0\.1:8000(?=\s)", re.MULTILINE)
DOC_DATA = re.compile(r"^DATA=\.data(?=\s)", re.MULTILINE)
_MARKER = re.compile(r"^<!--\s*walkthrough(:\s*output)?\s*-->\s*$")
_STEP_MARK = "@@walkthrough step {}@@"
# The whole walkthrough (every stream in it is bounded by curl's --max-time 60).
SCRIPT_SECONDS = 300


@dataclass
class Step:
    line: int  # of its marker in the document
    commands: str
    expected: list[str] | None = None
    output: list[str] = field(default_factory=list)


def walkthrough(text: str, name: str = "docs/http-api.md") -> list[Step]:
    """The marked blocks of ``text``: each command block with the output shown after it."""
    lines = text.splitlines()
    steps: list[Step] = []
    index = 0
    while index < len(lines):
        marker = _MARKER.match(lines[index])
        index += 1
        if not marker:
            continue
        output, where = marker.group(1) is not None, f"{name}:{index}"
        while index < len(lines) and not lines[index].strip():
            index += 1
        fence = "```text" if output else "```sh"
        if index >= len(lines) or lines[index].strip() != fence:
            raise ValueError(
                f"{where}: the walkthrough marker must stand right above a {fence} block"
            )
        end = index + 1
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        block = lines[index + 1 : end]
        index = end + 1
        if not output:
            steps.append(Step(line=int(where.rsplit(":", 1)[1]), commands="\n".join(block)))
        elif not steps or steps[-1].expected is not None:
            raise ValueError(f"{where}: an output block needs a command block of its own before it")
        else:
            steps[-1].expected = block
    return steps


def unmatched(expected: list[str], actual: list[str]) -> str | None:
    """The first line of ``expected`` that no line of ``actual`` matches after the line the
    previous one matched (``…`` matches anything; blank lines are skipped), or None."""
    position = 0
    for line in expected:
        if line.strip() in ("", "…"):
            continue
        pattern = re.compile(".*?".join(re.escape(part) for part in line.rstrip().split("…")))
        while position < len(actual) and not pattern.fullmatch(actual[position].rstrip()):
            position += 1
        if position == len(actual):
            return line
        position += 1
    return None


def script(steps: list[Step], gateway: str, data_dir: Path) -> str:
    """The steps as one bash script, each step's output announced by a marker line."""
    first = steps[0].commands
    for pattern, name, value in ((DOC_GATEWAY, "GATEWAY", gateway), (DOC_DATA, "DATA", data_dir)):
        assert len(pattern.findall(first)) == 1, (
            f"the walkthrough's first block must set {name} once, as the document has it "
            f"(the line this test points at its own stack: {pattern.pattern})"
        )
        first = pattern.sub(f"{name}={shlex.quote(str(value))}".replace("\\", r"\\"), first)
    parts = ["set -euo pipefail"]
    for number, step in enumerate(steps):
        parts.append(f"echo {shlex.quote(_STEP_MARK.format(number))}")
        parts.append(first if number == 0 else step.commands)
    return "\n".join(parts) + "\n"


def split_output(steps: list[Step], stdout: str) -> None:
    current: Step | None = None
    marks = {_STEP_MARK.format(number): step for number, step in enumerate(steps)}
    for line in stdout.splitlines():
        if line in marks:
            current = marks[line]
        elif current is not None:
            current.output.append(line)


def events(output: list[str]) -> list[dict[str, Any]]:
    return [json.loads(line[len("data: ") :]) for line in output if line.startswith("data: ")]


def event_ids(output: list[str]) -> list[int]:
    return [int(line[len("id: ") :]) for line in output if line.startswith("id: ")]


def until(check: Callable[[], Any], what: str, timeout: float = 60) -> Any:
    """Poll another process's progress until ``check`` returns something truthy."""
    deadline = time.monotonic() + timeout
    while not (found := check()):
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.1)
    return found


@contextmanager
def demo_stack(root: Path) -> Iterator[tuple[str, Path, Callable[[], str]]]:
    """`seawall up` as `make run` starts it: no model endpoint (the demo model) and no
    settings but its own ports and data dir; the code of this tree (``-m`` from its root,
    as `make run` runs it). Yields the gateway's URL, the data dir and the stack's logs."""
    data = root / "data"
    gateway_port = free_port()
    env = {
        **{
            name: value
            for name, value in os.environ.items()
            if not name.startswith(("SEAWALL_", "OPENAI_", "TEMPORAL_"))
        },
        "SEAWALL_DATA_DIR": str(data),
        "SEAWALL_TEMPORAL_PORT": str(free_port()),
        "SEAWALL_UI_PORT": str(free_port()),
        "SEAWALL_GATEWAY_PORT": str(gateway_port),
        "XDG_CONFIG_HOME": str(root / "config"),  # no config file: the defaults
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "seawall.cli.main", "up"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert process.stdout is not None
    banner = [process.stdout.readline() for _ in range(7)]
    output: list[str] = []
    # The supervisor's later lines (restarts) are kept, so its pipe never fills.
    drain = threading.Thread(target=lambda: output.extend(process.stdout or []), daemon=True)
    drain.start()

    def logs() -> str:
        found = ["".join(banner + output)]
        for log in sorted((data / "logs").glob("*.log")):
            found.append(f"--- {log.name}\n{log.read_text(errors='replace')[-4000:]}")
        return "\n".join(found)

    try:
        assert banner[0].startswith("Seawall is up."), "".join(banner)
        url = f"http://127.0.0.1:{gateway_port}"
        assert url in banner[1], "".join(banner)
        yield url, data, logs
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=90)
        drain.join(timeout=10)
    assert "Seawall stopped." in "".join(output), logs()


def run_script(text: str, cwd: Path) -> tuple[int, str, str]:
    """Run ``text`` with bash in a process group of its own; whatever it leaves running
    (a stream's curl that ``sed`` let go of) is ended with it."""
    (cwd / "walkthrough.sh").write_text(text, encoding="utf-8")
    with open(cwd / "stdout", "w") as out, open(cwd / "stderr", "w") as err:
        process = subprocess.Popen(
            ["bash", "walkthrough.sh"],
            cwd=cwd,
            stdout=out,
            stderr=err,
            env={**os.environ, "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1"},
            start_new_session=True,
        )
        try:
            returncode = process.wait(timeout=SCRIPT_SECONDS)
        except subprocess.TimeoutExpired:
            returncode = -1
        finally:
            with suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    return returncode, (cwd / "stdout").read_text(), (cwd / "stderr").read_text()


# --- the walkthrough against a real stack -------------------------------------------------


@pytest.mark.skipif(
    not all(shutil.which(tool) for tool in ("bash", "curl", "jq")),
    reason="the walkthrough needs bash, curl and jq (apt-get install curl jq)",
)
def test_the_curl_walkthrough_runs_as_written(tmp_path: Path) -> None:
    steps = walkthrough(DOC.read_text(encoding="utf-8"))
    shell = tmp_path / "shell"
    shell.mkdir()
    with demo_stack(tmp_path) as (gateway, data, logs):
        returncode, stdout, stderr = run_script(script(steps, gateway, data), shell)
        split_output(steps, stdout)
        story = "\n".join(f"--- step at line {s.line}\n" + "\n".join(s.output) for s in steps)
        assert returncode == 0, (
            f"the walkthrough failed (exit {returncode}):\n{story}\n--- stderr\n{stderr}\n{logs()}"
        )
        noise = [line for line in stderr.splitlines() if "setlocale" not in line]
        assert not noise, f"the walkthrough printed errors:\n{stderr}\n{story}"
        for step in steps:
            missing = unmatched(step.expected or [], step.output)
            assert missing is None, (
                f"docs/http-api.md:{step.line}: the output shown after this block has the line\n"
                f"  {missing}\nwhich the block did not print (in that order); it printed:\n"
                + "\n".join(step.output)
            )

        # The facts the story tells, checked on their own.
        replies = [
            json.loads(line) for step in steps for line in step.output if line.startswith("{")
        ]
        session_id = next(r["session_id"] for r in replies if "workflow_id" in r)
        asked = next(
            (i, e)
            for i, s in enumerate(steps)
            for e in events(s.output)
            if e["kind"] == "permission_request"
        )
        ask_step, request = asked
        assert request["arguments"] == {"path": "NOTES.md", "content": "write a note: hello\n"}
        assert request["text"] == 'write_file path=NOTES.md content="write a note: hello"'
        answer = next(r for r in replies if "outcome" in r)
        assert answer == {
            "prompt_id": f"{session_id}-prompt-1",
            "request_id": request["request_id"],
            "outcome": "approved",
        }
        # The stream up to the request and its resumption: every event once, in order.
        resumed = next(
            s
            for s in steps[ask_step + 1 :]
            if any(e["kind"] == "prompt_finished" for e in events(s.output))
        )
        seen = event_ids(steps[ask_step].output) + event_ids(resumed.output)
        assert seen == list(range(1, len(seen) + 1))
        finishes = [
            e["status"] for s in steps for e in events(s.output) if e["kind"] == "prompt_finished"
        ]
        assert finishes == ["end_turn", "cancelled"]
        assert {"stop_reason": "cancelled", "error": None} in replies
        notes = data / "workspaces" / session_id / "NOTES.md"
        assert notes.read_text(encoding="utf-8") == "write a note: hello\n"

        with httpx.Client(base_url=gateway, timeout=30) as http:

            def closed() -> dict[str, Any] | None:
                view = http.get(f"/v1/sessions/{session_id}").json()
                return view if view["state"] == "closed" else None

            session = until(closed, "the session to close")
        assert [(f["prompt_id"], f["stop_reason"]) for f in session["finished"]] == [
            (f"{session_id}-prompt-1", "end_turn"),
            (f"{session_id}-prompt-2", "cancelled"),
        ]


# --- the reading and matching themselves --------------------------------------------------


def test_the_walkthrough_is_there_and_points_at_one_stack() -> None:
    steps = walkthrough(DOC.read_text(encoding="utf-8"))

    assert len(steps) >= 5 and all(step.commands.strip() for step in steps)
    assert all(step.expected for step in steps), "every walkthrough block shows its output"
    text = script(steps, "http://127.0.0.1:1", Path("/tmp/x y"))
    assert "\nGATEWAY=http://127.0.0.1:1 " in text and "\nDATA='/tmp/x y' " in text
    assert "127.0.0.1:8000" not in text


def test_a_marker_stands_right_above_its_block() -> None:
    assert walkthrough("<!-- walkthrough -->\n\n```sh\necho hi\n```\n") == [
        Step(line=1, commands="echo hi")
    ]
    with pytest.raises(ValueError, match=r"x\.md:1: the walkthrough marker"):
        walkthrough("<!-- walkthrough -->\nsome text\n```sh\necho hi\n```\n", "x.md")
    with pytest.raises(ValueError, match=r"x\.md:1: an output block needs"):
        walkthrough("<!-- walkthrough: output -->\n```text\nhi\n```\n", "x.md")


def test_an_output_line_missing_or_out_of_order_is_found() -> None:
    actual = ['{"id":"abc","n":1}', "", "event: stop", "done"]

    assert unmatched(['{"id":"…","n":1}', "…", "", "done"], actual) is None
    assert unmatched(["event: stop", '{"id":"…","n":1}'], actual) == '{"id":"…","n":1}'
    assert unmatched(['{"id":"…","n":2}'], actual) == '{"id":"…","n":2}'
    assert unmatched(["done…x"], actual) == "done…x"


def test_the_events_section_names_every_field_and_shows_every_kind() -> None:
    """docs/http-api.md, "Events": the fields every event carries are the event's fields, and
    the table has a row with a real example for each kind an event can be."""
    text = DOC.read_text(encoding="utf-8")
    fields = text.split("whose fields are always", 1)[1].split(", `null` where", 1)[0]
    assert set(re.findall(r"`(\w+)`", fields)) == set(AgentEvent.model_fields)
    rows = re.findall(r"^\| `(\w+)`[^|]*\|[^|]*\| `(\{.*\})` \|$", text, re.M)
    assert {kind for kind, _ in rows} == {kind.value for kind in EventKind}
    for kind, example in rows:
        event = AgentEvent.model_validate_json(example.replace("…", ""))
        assert event.kind == kind, example
