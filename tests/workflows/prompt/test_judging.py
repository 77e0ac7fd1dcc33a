"""What the progress judge sees of a stretch (docs/protections.md, "The progress judge"), pure:
each call's tool, status and the start of its result, masked, at most 300 characters each and
6,000 in all, the newest batches kept; never a call's arguments."""

from __future__ import annotations

from workflows.contracts import ToolCall, ToolOutcome
from workflows.contracts.activity import JUDGE_EVIDENCE_CHARS, JUDGE_EXCERPT_CHARS
from workflows.contracts.prompt import PromptInput, Route
from workflows.prompt.activity_options import (
    MODEL_HEARTBEAT_TIMEOUT,
    MODEL_RETRY_WINDOW,
    MODEL_TIMEOUT,
)
from workflows.prompt.judging import (
    JudgeRequests,
    PromptJudging,
    judged_batches,
    result_excerpt,
)
from workflows.rules import LoopRules, LoopSettings
from workflows.seed.guard import GuardMode

SECRET = "deploy-token-4f9c2a77b1"


def shell(n: int, command: str) -> ToolCall:
    return ToolCall(call_id=f"c{n}", name="run_shell_command", arguments={"command": command})


def ran(n: int, content: str, status: str = "success") -> ToolOutcome:
    return ToolOutcome(
        call_id=f"c{n}", tool_name="run_shell_command", status=status, content=content
    )


def test_an_excerpt_is_masked_and_short() -> None:
    call = ToolCall(call_id="c1", name="read_file", arguments={"path": "plans/q3-launch.md"})
    outcome = ToolOutcome(
        call_id="c1",
        tool_name="read_file",
        status="error",
        error_message="2026-03-01T10:00:00Z request 8812: plans/q3-launch.md not found "
        + SECRET
        + "\n"
        + "x " * 2000,
    )
    excerpt = result_excerpt(call, outcome)
    assert len(excerpt) == JUDGE_EXCERPT_CHARS
    assert excerpt.startswith("<time> request <n>: <arg> not found <id> x x")
    assert SECRET not in excerpt and "q3-launch" not in excerpt


def test_the_stretch_is_cut_to_its_budget_newest_first() -> None:
    recent = [
        (batch, [shell(i, "make check") for i in range(8)], [ran(i, "y" * 1000) for i in range(8)])
        for batch in range(1, 7)
    ]
    seen = judged_batches(recent)
    total = sum(len(c.tool) + len(c.excerpt) for b in seen for c in b.calls)
    assert total <= JUDGE_EVIDENCE_CHARS
    assert seen[-1].batch == 6 and [b.batch for b in seen] == sorted(b.batch for b in seen)
    assert all(len(c.excerpt) == JUDGE_EXCERPT_CHARS for b in seen for c in b.calls)
    assert "make check" not in "".join(b.model_dump_json() for b in seen)


def test_a_failed_call_shows_its_error() -> None:
    call = shell(1, "pgrep -f vite")
    failed = ToolOutcome(
        call_id="c1",
        tool_name="run_shell_command",
        status="error",
        execution_status="error",
        error_message="exit status 1",
    )
    (batch,) = judged_batches([(3, [call], [failed])])
    (seen,) = batch.calls
    assert (batch.batch, seen.tool, seen.status, seen.excerpt) == (
        3,
        "run_shell_command",
        "error",
        "exit status 1",
    )


def test_a_prompt_whose_judge_is_off_has_none() -> None:
    def judging(settings: LoopSettings, route: Route, normalized: bool) -> PromptJudging | None:
        prompt = PromptInput(prompt="go", workspace_root="/ws", route=route)
        rules = LoopRules(
            settings,
            GuardMode.ENFORCE,
            route_forced_off=route != Route.INTERACTIVE,
            normalized=normalized,
        )
        return PromptJudging.for_prompt(
            prompt,
            rules,
            JudgeRequests(
                retry_policy=MODEL_RETRY_WINDOW,
                retry_window_seconds=600,
                start_to_close_timeout=MODEL_TIMEOUT,
                heartbeat_timeout=MODEL_HEARTBEAT_TIMEOUT,
                summaries=False,
            ),
        )

    on = LoopSettings(progress_judge_mode=GuardMode.SHADOW)
    assert judging(on, Route.INTERACTIVE, True) is not None
    assert judging(LoopSettings(), Route.INTERACTIVE, True) is None
    assert judging(on, Route.BACKGROUND, True) is None
    # A prompt replaying from before LOOP_QUALITY_V4_PATCH never asks.
    assert judging(on, Route.INTERACTIVE, False) is None
