"""The attack table's policy rows (docs/security.md, "What a client may choose", and
docs/security-trust.md): nothing a client chooses loosens the operator's policy, and no start
signed for one run starts another.

Every field of ``POST /v1/sessions`` and the ACP session options has a row or a gateway test
(tests/gateway/test_session_policy.py): ``client_metadata.channel`` (the guard off) here and
there; every option that is the operator's here and there; ``approval_mode`` through ``seawall
acp`` here (this stack's operator lets clients choose yolo, which the model rows need) and
through the gateway there; ``model_script``/``fixture_tools`` there (this stack allows them).
"""

from __future__ import annotations

from tests.attack import policy_drives
from tests.attack.checks import DEV_FRONTEND_EXPOSURE, Attack, all_of, fact
from tests.attack.hostile import call

POLICY_ATTACKS = [
    Attack(
        "gateway-channel-session-without-the-operators-leave",
        "create a session marked as a channel bridge's (client_metadata.channel: true, the "
        "guard off) though the operator named no channel owner, and prompt it",
        "alice",
        "core",
        [],
        fact(
            "channel_prompts_completed",
            lambda v: v == 0,
            "a prompt of alice's channel session ran (with the guard off)",
        ),
        policy_drives.alice_opens_a_channel_session,
    ),
    Attack(
        "gateway-sets-the-operators-options",
        "create sessions that set, one at a time, every session option that is the operator's "
        "(the guard mode, a route, the caps off, the timeouts, the loosest approval mode, the "
        "workspace, the owner, the model, a grant) and a channel marker that is a word",
        "alice",
        "core",
        [],
        fact(
            "statuses",
            lambda v: bool(v) and all(400 <= code < 500 for code in v.values()),
            "the gateway accepted (or failed on) an option that is the operator's",
        ),
        policy_drives.alice_sets_the_operators_options,
    ),
    Attack(
        "acp-switches-to-a-looser-approval-mode",
        "through seawall acp whose operator allows only the default approval mode, switch the "
        "session to yolo and let the model write a file without asking",
        "alice",
        "acp",
        [{"tool_calls": [call("write_file", path="pwned-@{marker}", content="x")]}],
        fact(
            "written_without_asking",
            lambda v: v is False,
            "the model's write ran without the editor's approval",
        ),
        policy_drives.acp_switches_to_yolo,
    ),
    Attack(
        "temporal-replays-bobs-closed-session",
        "copy a closed session of bob's start input and grant from its history and start it "
        "again under the same workflow id, as it was and as a channel session with free "
        "prompt ids, then submit a prompt to it",
        "frontend",
        "core",
        [],
        fact(
            "runs_that_completed_a_prompt",
            lambda v: v == [],
            "a replayed start of bob's session ran a prompt",
        ),
        policy_drives.replay_a_closed_session_of_bobs,
        notes="a reset is another way back to a closed session: the next row",
    ),
    Attack(
        "temporal-resets-bobs-closed-session",
        "reset a closed session of bob's to its last task before it closed, then submit a "
        "prompt to the new run",
        "frontend",
        "core",
        [],
        fact(
            "prompts_completed_after_the_reset",
            lambda v: v == 0,
            "bob's reset session ran the attacker's prompt",
        ),
        policy_drives.reset_a_closed_session_of_bobs,
        exposure=DEV_FRONTEND_EXPOSURE,
    ),
    Attack(
        "temporal-starts-bobs-admission-workflow-full",
        "end bob's owner admission workflow and start it again with slots that never free (as "
        "many as his prompt limit) and a session holding more bytes than any quota, so that "
        "bob is refused",
        "frontend",
        "core",
        [],
        all_of(
            fact("create_status", lambda v: v == 201, "bob could not create a session"),
            fact("submit_status", lambda v: v == 202, "bob's prompt was refused"),
        ),
        policy_drives.start_bobs_admission_workflow_full,
    ),
]
