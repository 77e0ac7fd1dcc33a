"""Owners: who a session belongs to (docs/rollout.md, "Rollout cohorts").

The gateway maps each bearer token of its tokens file (``gateway_tokens_file``) to an owner
id (gateway/settings.py); ``seawall acp`` names its local user (:func:`local_owner_id`).
The gateway checks the tokens file when it starts, through the settings catalogue's
``gateway_tokens_file`` type, with this same reader, so a file it would refuse stops it at
startup; no other process opens the file (the worker knows its path only, to hide it from
its sandbox). An owner id is an operator-given name, never a secret, but kept out of logs,
labels and search attributes all the same.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import yaml

OWNER_ID = re.compile(r"^[A-Za-z0-9._@:-]{1,128}$")
MIN_TOKEN_CHARS = 16
# In a list of owners (``channel_owners``): every caller, an owner or the single principal
# of a gateway without a tokens file.
ANY_OWNER = "*"


def owner_list(value: str) -> tuple[str, ...]:
    """A comma-separated list of owner ids, or ``*``; raises ValueError naming a bad entry."""
    owners = tuple(dict.fromkeys(o.strip() for o in value.split(",") if o.strip()))
    for owner in owners:
        if owner != ANY_OWNER and not OWNER_ID.match(owner):
            raise ValueError(
                f"{owner[:40]!r} is not an owner id (1-128 of A-Z a-z 0-9 . _ @ : -) or *"
            )
    return owners


def owner_listed(owners: Sequence[str], owner_id: str | None) -> bool:
    """Whether ``owner_id`` (``None``: a caller with no owner) is one of ``owners``."""
    return ANY_OWNER in owners or (owner_id is not None and owner_id in owners)


def read_owner_tokens(path: Path) -> dict[str, str]:
    """The gateway's tokens file: a YAML mapping of owner id to a token or a list of tokens.
    Returns token -> owner id. Raises ValueError naming the problem (never a token)."""
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: cannot be read ({type(exc).__name__})") from None
    except yaml.YAMLError:
        raise ValueError(f"{path}: is not valid YAML") from None
    if not isinstance(data, dict) or not data:
        raise ValueError(f"{path}: must be a non-empty mapping of owner id to token(s)")
    tokens: dict[str, str] = {}
    for owner, given in data.items():
        owner = str(owner)
        if not OWNER_ID.match(owner):
            raise ValueError(
                f"{path}: owner id {owner[:40]!r} is not 1-128 of A-Z a-z 0-9 . _ @ : -"
            )
        listed = given if isinstance(given, list) else [given]
        if not listed:
            raise ValueError(f"{path}: owner {owner} has no token")
        for token in listed:
            if not isinstance(token, str) or len(token.strip()) < MIN_TOKEN_CHARS:
                raise ValueError(
                    f"{path}: a token of owner {owner} is shorter than {MIN_TOKEN_CHARS} characters"
                )
            if token.strip() in tokens:
                raise ValueError(f"{path}: a token of owner {owner} is also another owner's")
            tokens[token.strip()] = owner
    return tokens


def local_owner_id(owner_id: str | None, environ: Mapping[str, str] | None = None) -> str:
    """The owner of a local client's sessions (``seawall acp``): ``owner_id`` (the setting),
    else ``local:<user name>`` of this process."""
    if owner_id:
        return owner_id
    env = os.environ if environ is None else environ
    user = env.get("USER") or env.get("LOGNAME") or ""
    if not user:
        import getpass

        try:
            user = getpass.getuser()
        except (KeyError, OSError):
            user = "unknown"
    name = re.sub(r"[^A-Za-z0-9._@-]", "_", user)[:120] or "unknown"
    return f"local:{name}"
