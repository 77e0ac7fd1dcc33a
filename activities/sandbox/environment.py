"""The environment of a model-chosen process: an allowlist, never the worker's own.

The worker's environment holds the model API key, the gateway and codec tokens, Temporal
credentials and whatever else its operator exported. A denylist of "secret-looking" names
always misses one (``MY_DB_PASSWD``), so a sandboxed process gets only the variables named
here, plus the operator's ``sandbox_env_passthrough`` names; those pass a denylist as a
second check, so a name that looks like a secret is withheld even when listed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

# What a confined process sees as PATH: the system's directories, the only ones bound in.
SANDBOX_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# A private tmpfs in the sandbox, so tools that write under $HOME leave nothing behind.
SANDBOX_HOME = "/tmp"

# Copied from the worker when set: locale and terminal only, nothing that names a secret.
_ALLOWED = ("LANG", "LANGUAGE", "TERM", "TZ")
_ALLOWED_PREFIXES = ("LC_",)
# Bare mode (``sandbox: none``) also keeps what a login shell expects.
_BARE_ALLOWED = ("PATH", "HOME", "USER", "LOGNAME", "SHELL", "TMPDIR")

_WITHHELD_PREFIXES = ("OPENAI_", "SEAWALL_", "TEMPORAL_", "QWEN_CODE_", "AWS_", "OTEL_")
_SECRET_PATTERN = re.compile(
    r"KEY|TOKEN|SECRET|PASSW(OR)?D|PASSPHRASE|(^|_)PASS($|_)|CREDENTIAL|(^|_)AUTH|PRIVATE"
    r"|COOKIE|SESSION",
)


def looks_secret(name: str) -> bool:
    """Whether ``name`` is a worker setting or looks like it holds a secret."""
    upper = name.upper()
    return upper.startswith(_WITHHELD_PREFIXES) or bool(_SECRET_PATTERN.search(upper))


def _allowed(name: str, passthrough: Iterable[str], bare: bool) -> bool:
    if name in _ALLOWED or name.startswith(_ALLOWED_PREFIXES):
        return True
    if bare and name in _BARE_ALLOWED:
        return True
    return name in passthrough and not looks_secret(name)


def sandbox_environment(
    environ: Mapping[str, str], passthrough: Iterable[str] = (), *, bare: bool = False
) -> dict[str, str]:
    """The variables of ``environ`` a model-chosen process may see. Confined processes get a
    fixed ``PATH`` and ``HOME`` (the sandbox's); ``bare`` ones keep the worker's."""
    names = frozenset(passthrough)
    env = {name: value for name, value in environ.items() if _allowed(name, names, bare=bare)}
    if not bare:
        env["PATH"] = SANDBOX_PATH
        env["HOME"] = SANDBOX_HOME
    return env


def withheld_passthrough(passthrough: Iterable[str]) -> list[str]:
    """The operator's passthrough names that are withheld because they look secret."""
    return [name for name in passthrough if looks_secret(name)]
