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
- every other process (the worker, the gateway, ``seawall acp`` and ``seawall run`` with
  their in-process workers) gets the operator's environment without the variables of each
  secret setting (:data:`WHY_WITHHELD`) that none of its roles reads, by the settings' own
  ``read_by``; ``seawall acp`` and ``seawall run`` start themselves again to drop them
  (:func:`exec_keeping`);
- the gateway, a client only, also gets no variable of a setting it does not read and no
  ``OPENAI_*`` variable at all (the model SDK's own, settings or not);
- ``seawall up`` itself keeps what it hands its worker and gateway, but not the Temporal
  access settings (:data:`TEMPORAL_ACCESS`), which none of its processes uses.

The environment is half of it: a process also reads from the user config file only the
settings it uses (seawall/runtime/settings/loading.py), so what is withheld here is not read
back from there.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

from seawall.runtime.settings import GATEWAY, SETTINGS, UP, WORKER

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
    "gateway_tokens_file": "names the file of every owner's token: only the gateway opens it; "
    "the worker knows the path, to hide the file from its sandbox",
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

# The model SDK reads OPENAI_* variables that are no setting of ours (organization,
# project, admin key, ...): none of them is the gateway's business.
MODEL_SDK_PREFIX = "OPENAI_"

# The variables of the Temporal access settings (seawall/runtime/temporal_connect.py):
# ``seawall up``'s worker and gateway talk to its own dev server without TLS or credentials,
# so neither they nor ``seawall up`` itself keep them.
TEMPORAL_ACCESS = frozenset(
    name
    for s in SETTINGS
    if s.name.startswith(("temporal_tls", "temporal_api_key", "temporal_profile"))
    or s.name == "temporal_config_file"
    for name in s.env
)


def withheld_variables(*roles: str) -> frozenset[str]:
    """The variables of every sensitive setting (a secret, or the path of a file of
    secrets) none of ``roles`` reads."""
    return frozenset(
        name for s in SETTINGS if s.sensitive and not set(roles) & set(s.read_by) for name in s.env
    )


def environment_for(environ: Mapping[str, str], *roles: str) -> dict[str, str]:
    """``environ`` for a process that plays ``roles`` (the settings' readers: the worker,
    ``seawall acp``, ...): without the secrets none of them reads."""
    withheld = withheld_variables(*roles)
    return {key: value for key, value in environ.items() if key not in withheld}


def worker_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The worker's: no gateway token or codec token (:data:`WHY_WITHHELD`)."""
    return environment_for(environ, WORKER)


def stack_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """``seawall up``'s own: what its worker and gateway read, without the Temporal access
    settings neither of them gets (seawall/cli/stack.py)."""
    kept = environment_for(environ, UP, WORKER, GATEWAY)
    return {key: value for key, value in kept.items() if key not in TEMPORAL_ACCESS}


def gateway_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The gateway's: no variable of a setting it never reads (the model endpoint and its
    key, MCP servers, ...) and no ``OPENAI_*``: the gateway is a client and gets no secret
    it does not use."""
    withheld = {
        name for s in SETTINGS if GATEWAY not in s.read_by for name in s.env
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
    """:func:`exec_keeping` the environment of a process playing ``roles``: without the
    secrets none of them reads."""
    env = os.environ if environ is None else environ
    exec_keeping(environment_for(env, *roles), env)


def exec_keeping(kept: Mapping[str, str], environ: Mapping[str, str] | None = None) -> None:
    """Start this program again, same pid, arguments and descriptors, with the environment
    ``kept`` (a part of ``environ``, default: this process's), if that drops anything;
    else return.

    For a process that runs Seawall code in itself (``seawall acp``, ``seawall run``, with
    their in-process workers; ``seawall up``): deleting a variable would not take it out of
    ``/proc/<pid>/environ``; a new image does. Call it first thing, before anything reads
    stdin or starts a thread."""
    env = os.environ if environ is None else environ
    if len(kept) == len(env):
        return
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, list(sys.orig_argv), kept)
