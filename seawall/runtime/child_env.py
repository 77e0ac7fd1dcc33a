"""What each process Seawall starts inherits of the operator's environment: only the secrets
it reads (docs/security-codec.md, "Secrets per process").

A process's environment is readable by whoever can read its ``/proc/<pid>/environ`` for its
whole life, whatever the process later deletes. The sandbox keeps tool calls out of other
processes' ``/proc``; this module keeps the processes themselves from carrying secrets they
never use, so an escape, a core dump or a debugging session exposes less. The one policy,
for every process Seawall spawns or runs in:

- the Temporal dev server (``seawall up``, ``seawall acp --embedded``, ``seawall run``)
  reads no Seawall setting and no model endpoint: it gets a short allowlist
  (:data:`DEV_SERVER_VARIABLES`), nothing else;
- every other process (the worker, the gateway, ``seawall acp`` with its in-process worker)
  gets the operator's environment without the variables of each secret setting
  (:data:`WHY_WITHHELD`) that none of its roles reads, by the settings' own ``read_by``;
- the gateway, a client only, also gets no variable of a setting it does not read and no
  ``OPENAI_*`` variable at all (the model SDK's own, settings or not).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

from seawall.runtime.settings import GATEWAY, SETTINGS, WORKER, Setting

# The dev server: the ``temporal`` binary, which reads its flags and its env file only
# (seawall/cli/stack.py); locale, time zone, temporary directory and home are harmless.
DEV_SERVER_VARIABLES = frozenset(
    {"PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TMPDIR"}
)
DEV_SERVER_PREFIXES = ("LC_",)

# Why each secret setting, or setting naming a file of secrets, reaches only the processes
# that read it (its ``read_by``). A secret of the settings model must have an entry here
# (tests/seawall/runtime/test_child_env.py); entries of settings this model lacks (some
# come with other parts of the work) withhold nothing.
WHY_WITHHELD: Mapping[str, str] = {
    "openai_api_key": "the model endpoint's key: only the worker calls the model; a gateway "
    "or dev server holding it would let whoever reads them spend it",
    "mcp_servers": "MCP server definitions carry their own credentials (env, headers): "
    "only the worker starts MCP servers",
    "gateway_token": "the operator's (admin) gateway token reads and drives every owner's "
    "sessions: only the gateway checks it and seawall prompt sends it; the worker, which "
    "runs the model's tools, never does",
    "gateway_tokens_file": "names the file of every owner's token: only the gateway reads it",
    "codec_token": "decodes every owner's stored payloads through the UI's codec endpoint: "
    "only the gateway checks it (seawall up hands it the dev server in a 0600 file)",
    "session_signing_key": "signs session starts: the starters and the worker verifying "
    "them, never the dev server",
    "session_signing_previous_key": "the rotated-out signing key: only the worker verifies with it",
    "temporal_api_key": "authenticates to a Temporal frontend: Temporal clients only, never "
    "the dev server",
    "temporal_tls_client_key_data": "the client's private key for mTLS: Temporal clients only",
    "temporal_tls_client_key_path": "names the client's private key file: Temporal clients only",
    "temporal_tls_client_cert_data": "the client certificate of mTLS: Temporal clients only",
    "temporal_tls_server_ca_cert_data": "the frontend's CA: Temporal clients only",
}

# Settings that are no secret themselves but name a file of secrets.
NAMES_A_SECRET_FILE = frozenset({"gateway_tokens_file", "temporal_tls_client_key_path"})

# The settings model checks a rollout policy against these wherever the policy is set (a
# config file every process reads), so a gateway that sees the policy must see them too.
VALIDATED_WITH_ROLLOUT = frozenset(
    {
        "guard_rollout",
        "guard_rollout_salt",
        "guard_rollout_allow_wide_enforce",
        "deployment_environment",
        "otel_resource_attributes",
    }
)

# The model SDK reads OPENAI_* variables that are no setting of ours (organization,
# project, admin key, ...): none of them is the gateway's business.
MODEL_SDK_PREFIX = "OPENAI_"


def is_sensitive(setting: Setting) -> bool:
    return setting.secret or setting.name in NAMES_A_SECRET_FILE


def withheld_variables(*roles: str) -> frozenset[str]:
    """The variables of every sensitive setting none of ``roles`` reads."""
    return frozenset(
        name
        for s in SETTINGS
        if is_sensitive(s) and not set(roles) & set(s.read_by)
        for name in s.env
    )


def environment_for(environ: Mapping[str, str], *roles: str) -> dict[str, str]:
    """``environ`` for a process that plays ``roles`` (the settings' readers: the worker,
    ``seawall acp``, ...): without the secrets none of them reads."""
    withheld = withheld_variables(*roles)
    return {key: value for key, value in environ.items() if key not in withheld}


def worker_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The worker's: no gateway token, tokens file, codec token (:data:`WHY_WITHHELD`)."""
    return environment_for(environ, WORKER)


def gateway_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The gateway's: no variable of a setting it never reads (the model endpoint and its
    key, MCP servers, ...) and no ``OPENAI_*``: the gateway is a client and gets no secret
    it does not use."""
    withheld = {
        name
        for s in SETTINGS
        if GATEWAY not in s.read_by and s.name not in VALIDATED_WITH_ROLLOUT
        for name in s.env
    } | withheld_variables(GATEWAY)
    return {
        key: value
        for key, value in environ.items()
        if key not in withheld and not key.startswith(MODEL_SDK_PREFIX)
    }


def dev_server_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The Temporal dev server's: the allowlist only, no token, key or Temporal profile."""
    return {
        key: value
        for key, value in environ.items()
        if key in DEV_SERVER_VARIABLES or key.startswith(DEV_SERVER_PREFIXES)
    }


def exec_without_withheld(*roles: str, environ: Mapping[str, str] | None = None) -> None:
    """Start this program again, same pid, arguments and descriptors, without the secrets
    none of ``roles`` reads, if its environment has any; else return.

    For a process that runs Seawall code in itself (``seawall acp --embedded``'s worker):
    deleting a variable would not take it out of ``/proc/<pid>/environ``; a new image
    does. Call it first thing, before anything reads stdin or starts a thread."""
    env = os.environ if environ is None else environ
    kept = environment_for(env, *roles)
    if len(kept) == len(env):
        return
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, list(sys.orig_argv), kept)
