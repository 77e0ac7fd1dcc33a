"""What the approval policy adds to a batch's workflow step, per call.

    python bench/approval_step.py [--calls 50] [--batches 200] [--json PATH]

Each call of a batch is decided by ``ApprovalPolicy.decide`` (workflows/prompt/approval_policy.py)
the way the workflow decides it before the call runs. Two variants side by side, in one run on
one machine: ``presets`` (no rules but the approval mode's, the baseline every prompt pays)
and ``rules`` (30 operator rules, 5 session rules and 10 calls allowed for the session, shell
commands of three segments and file paths). The issue's target is at most 0.2 ms median per
call (docs/protections.md, "Approval rules"); this is a benchmark, never a timed test.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from workflows.contracts.approval import ApprovalDecision, ApprovalRule
from workflows.contracts.outcome import ToolCall
from workflows.contracts.prompt_options import ApprovalMode
from workflows.prompt.approval_policy import ApprovalPolicy, remembered_rule


def _rules() -> ApprovalPolicy:
    operator = tuple(
        ApprovalRule(
            name=f"rule {n}",
            decision=list(ApprovalDecision)[n % 3],
            tool="run_shell_command" if n % 2 else "write_file",
            command=f"tool{n} *" if n % 2 else None,
            path=None if n % 2 else f"dir{n}/*",
            priority=n % 7,
        )
        for n in range(30)
    )
    session = tuple(
        ApprovalRule(name=f"session {n}", decision=ApprovalDecision.DENY, command=f"danger{n}*")
        for n in range(5)
    )
    remembered = tuple(
        remembered_rule(
            ToolCall(call_id="r", name="run_shell_command", arguments={"command": f"make t{n}"}),
            f"make t{n}",
        )
        for n in range(10)
    )
    return ApprovalPolicy(operator=operator, session=session, remembered=remembered)


def _batch(calls: int) -> list[ToolCall]:
    batch = []
    for n in range(calls):
        if n % 2:
            arguments = {"command": f"cd src && tool{n % 30} --flag x | grep y"}
            batch.append(ToolCall(call_id=f"c{n}", name="run_shell_command", arguments=arguments))
        else:
            arguments = {"path": f"dir{n % 30}/sub/file{n}.py", "content": "x" * 200}
            batch.append(ToolCall(call_id=f"c{n}", name="write_file", arguments=arguments))
    return batch


def measure(policy: ApprovalPolicy, calls: int, batches: int) -> list[float]:
    """Milliseconds per call, one sample per batch."""
    batch = _batch(calls)
    samples = []
    for _ in range(batches):
        start = time.perf_counter()
        for call in batch:
            policy.decide(ApprovalMode.DEFAULT, call, mutating=True)
        samples.append((time.perf_counter() - start) * 1000 / calls)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=50, help="calls per batch")
    parser.add_argument("--batches", type=int, default=200, help="batches measured")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    figures = {}
    for name, policy in (("presets", ApprovalPolicy()), ("rules", _rules())):
        samples = measure(policy, args.calls, args.batches)
        figures[name] = {
            "median_ms_per_call": statistics.median(samples),
            "p90_ms_per_call": statistics.quantiles(samples, n=10)[-1],
        }
    print(f"approval policy: ms per call, {args.calls} calls a batch, {args.batches} batches")
    print(f"{'variant':<10}{'median':>10}{'p90':>10}")
    for name, row in figures.items():
        print(f"{name:<10}{row['median_ms_per_call']:>10.4f}{row['p90_ms_per_call']:>10.4f}")
    added = figures["rules"]["median_ms_per_call"] - figures["presets"]["median_ms_per_call"]
    print(f"rules add {added:.4f} ms per call (target: at most 0.2)")
    if args.json:
        args.json.write_text(json.dumps({**figures, "calls": args.calls}, indent=1) + "\n")


if __name__ == "__main__":
    main()
