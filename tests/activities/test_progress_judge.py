"""The ``seawall.judge_progress`` activity (docs/protections.md, "The progress judge"): the
question it asks, its strict reading of the reply, the scripted path, the demo model's
``unknown``, and the operator's endpoint through a real local HTTP server (no mocks). The
reason reaches the result, never a log."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.model import ModelActivities
from activities.progress_judge import (
    JUDGE_INSTRUCTION,
    judge_question,
    parse_judgement,
    scripted_verdict,
)
from scripts.chat_server import ChatServer, completion, tool_call
from seawall.worker.build import model_providers
from tests.activities.mcp_helpers import captured_logs
from tests.trust_helpers import harness_trust
from workflows.contracts.activity import (
    JUDGE_REASON_CHARS,
    JudgedBatch,
    JudgedCall,
    JudgeProgressInput,
    JudgeVerdict,
    ModelSpec,
    ModelUsage,
)

REASON = "the same pgrep keeps matching its own shell REASON-7f3a"


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[pytest.MonkeyPatch]:
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "SEAWALL_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    yield monkeypatch


def question(
    provider: str = "operator", verdicts: list[JudgeVerdict] | None = None, ask: int = 1
) -> JudgeProgressInput:
    poll = JudgedCall(tool="run_shell_command", status="success", excerpt="running")
    return JudgeProgressInput(
        model=ModelSpec.model_validate({"provider": provider}),
        prompt_id="prompt-judge-test",
        ask=ask,
        user_prompt="Build the site and tell me when it is done.",
        batches=[JudgedBatch(batch=n, calls=[poll]) for n in range(2, 8)],
        scenario_verdicts=verdicts,
    )


@pytest.mark.parametrize(
    ("reply", "verdict", "reason"),
    [
        (
            "NO_PROGRESS\nthe same answer six times",
            JudgeVerdict.NO_PROGRESS,
            "the same answer six times",
        ),
        ("  PROGRESS  \n  the build log grows \n", JudgeVerdict.PROGRESS, "the build log grows"),
        ("PROGRESS", JudgeVerdict.PROGRESS, ""),
        ("No progress: it repeats", JudgeVerdict.UNKNOWN, ""),
        ("progress\nlower case", JudgeVerdict.UNKNOWN, ""),
        ("NO_PROGRESS.\nwith a full stop", JudgeVerdict.UNKNOWN, ""),
        ("I think NO_PROGRESS", JudgeVerdict.UNKNOWN, ""),
        ("", JudgeVerdict.UNKNOWN, ""),
    ],
)
def test_the_reply_is_read_strictly(reply: str, verdict: JudgeVerdict, reason: str) -> None:
    assert parse_judgement(reply) == (verdict, reason)


def test_the_reason_is_one_short_line() -> None:
    verdict, reason = parse_judgement("NO_PROGRESS\n" + "word " * 200 + "\nmore")
    assert verdict is JudgeVerdict.NO_PROGRESS
    assert len(reason) == JUDGE_REASON_CHARS and "\n" not in reason


def test_the_question_carries_the_request_and_the_excerpts() -> None:
    text = judge_question(question())
    assert text.startswith("The user's request:\nBuild the site")
    assert "Step 2:\n- run_shell_command [success]: running" in text
    assert "Step 7:" in text


def test_a_script_answers_in_order_then_unknown() -> None:
    script = ["no_progress", "progress"]
    assert [scripted_verdict(script, ask) for ask in (1, 2, 3)] == [
        JudgeVerdict.NO_PROGRESS,
        JudgeVerdict.PROGRESS,
        JudgeVerdict.UNKNOWN,
    ]


async def test_the_scripted_judge_answers_without_a_provider_when_the_worker_allows_it() -> None:
    judge = ModelActivities({}, trust=harness_trust())
    verdicts = [JudgeVerdict.NO_PROGRESS]
    first = await judge.judge_progress(question(verdicts=verdicts, ask=1))
    second = await judge.judge_progress(question(verdicts=verdicts, ask=2))
    assert (first.verdict, second.verdict) == (JudgeVerdict.NO_PROGRESS, JudgeVerdict.UNKNOWN)
    assert first.usage.input_tokens and first.usage.input_tokens > 0
    assert first.usage.output_tokens == len("NO_PROGRESS") // 4
    # No script at all in a scenario: unknown, still no provider.
    assert (await judge.judge_progress(question(verdicts=[]))).verdict is JudgeVerdict.UNKNOWN
    with pytest.raises(ApplicationError) as refused:
        await ModelActivities({}).judge_progress(question(verdicts=verdicts))
    assert refused.value.non_retryable


async def test_the_demo_model_answers_unknown(clean_env: pytest.MonkeyPatch) -> None:
    """No script and no operator endpoint: the operator provider is the demo model."""
    judge = ModelActivities(model_providers(os.environ))
    output = await ActivityEnvironment().run(judge.judge_progress, question("operator"))
    assert output.verdict is JudgeVerdict.UNKNOWN and output.reason == ""


async def test_the_operators_endpoint_is_asked_with_the_fixed_instruction_and_no_tools(
    clean_env: pytest.MonkeyPatch,
) -> None:
    reply = completion(text=f"NO_PROGRESS\n{REASON}", prompt_tokens=321, completion_tokens=12)
    async with ChatServer([reply]) as server:
        clean_env.setenv("OPENAI_BASE_URL", server.url)
        clean_env.setenv("OPENAI_API_KEY", "sk-judge-test")
        clean_env.setenv("SEAWALL_MODEL", "local-judge-model")
        judge = ModelActivities(model_providers(os.environ))
        with captured_logs() as logs:
            output = await ActivityEnvironment().run(judge.judge_progress, question("operator"))

    assert output.verdict is JudgeVerdict.NO_PROGRESS
    assert output.reason == REASON
    assert output.usage == ModelUsage(input_tokens=321, output_tokens=12)
    (body,) = server.bodies()
    assert "tools" not in body
    system, user = body["messages"]
    assert system == {"role": "system", "content": JUDGE_INSTRUCTION}
    assert user["role"] == "user" and "- run_shell_command [success]: running" in user["content"]
    assert not any(REASON in line for line in logs)


async def test_a_reply_that_calls_a_tool_is_unknown(clean_env: pytest.MonkeyPatch) -> None:
    reply = completion(tool_calls=[tool_call("read_file", '{"path": "a"}')])
    async with ChatServer([reply]) as server:
        clean_env.setenv("OPENAI_BASE_URL", server.url)
        clean_env.setenv("OPENAI_API_KEY", "sk-judge-test")
        judge = ModelActivities(model_providers(os.environ))
        output = await ActivityEnvironment().run(judge.judge_progress, question("openai"))
    assert output.verdict is JudgeVerdict.UNKNOWN
