"""Record the replay fixtures in tests/replay/histories/ from the example scenarios.

Run it only for a reason you write in the commit (a deliberate, patched change to workflow
commands, or a new representative scenario): replay tests exist to catch the changes that
would break workflows already running.

    .venv/bin/python scripts/record_histories.py
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from seawall.devserver import start_dev_server  # noqa: E402
from seawall.scenario import load_scenario  # noqa: E402
from seawall.scenario_runner import run_scenario  # noqa: E402
from worker import build_worker  # noqa: E402
from workflows.guard import GuardMode  # noqa: E402

HISTORIES = ROOT / "tests" / "replay" / "histories"
# fixture name -> (scenario, guard mode override)
FIXTURES: dict[str, tuple[str, GuardMode | None]] = {
    "warn-then-stop": ("read-missing-file-loop", None),
    "shadow": ("read-missing-file-loop", GuardMode.SHADOW),
    "warn-mode": ("read-missing-file-loop", GuardMode.WARN),
    "mid-turn-input-reset": ("mid-turn-input-reset", None),
    "queued-prompt": ("queued-prompt", None),
    "cancellation": ("cancel-mid-batch", None),
    "permission-rejection": ("permission-rejected", None),
    "refusal": ("repeated-failed-call", None),
    "invalid-parameter-stop": ("invalid-params-stop", None),
    "cap-stop": ("tool-call-cap", None),
    "reminder-heeded": ("reminder-heeded", None),
}


async def record() -> None:
    HISTORIES.mkdir(parents=True, exist_ok=True)
    async with await start_dev_server() as env:
        queue = f"record-{uuid.uuid4().hex[:8]}"
        async with build_worker(env.client, queue):
            for fixture, (scenario_name, mode) in FIXTURES.items():
                scenario = load_scenario(ROOT / "scenarios" / f"{scenario_name}.yaml")
                with tempfile.TemporaryDirectory(prefix="seawall-record-") as workspace:
                    result = await run_scenario(
                        env.client,
                        scenario,
                        task_queue=queue,
                        workspace=Path(workspace),
                        mode_override=mode,
                        workflow_id=f"replay-{fixture}",
                    )
                history = await env.client.get_workflow_handle(result.workflow_id).fetch_history()
                target = HISTORIES / f"{fixture}.json"
                target.write_text(
                    json.dumps(json.loads(history.to_json()), indent=1) + "\n", encoding="utf-8"
                )
                print(f"{target.relative_to(ROOT)}: {len(history.events)} events")


if __name__ == "__main__":
    asyncio.run(record())
