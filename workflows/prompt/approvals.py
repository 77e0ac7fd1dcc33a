"""What a person is shown of a call before they approve it.

docs/http-api.md, "Approvals". A permission request that names only the tool makes the
person approve blind: ``write_file`` of what, where; ``run_shell_command`` of which command.
So every request carries the call's arguments as the model sent them, made fit to show:

- a long string is cut to :data:`SHOWN_VALUE_CHARS` with how much was left out, so a 1 MB
  ``content`` does not flood a terminal or an event page (the ``tool_calls`` query and the
  editor's diff still have all of it);
- an argument whose *name* matches one of the operator's ``redacted_arguments`` globs
  (``*token*``, ``*password*``…) is shown as ``[redacted]``, and so is a value that looks
  like a credential wherever it appears (``Bearer …``, ``sk-…``, ``ghp_…``, ``AKIA…``), so a
  secret the model put in a command line does not reach a screen, a scrollback or a
  screenshot.

Pure and deterministic: the workflow computes it when it opens the request (state only, no
command), and every client shows the same thing.
"""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

SHOWN_VALUE_CHARS = 400
SUMMARY_CHARS = 160
REDACTED = "[redacted]"
# Nested arguments are shown this deep; deeper values are summarized.
SHOWN_DEPTH = 4
SHOWN_ITEMS = 20
# Values that are credentials whatever the argument is called.
_CREDENTIAL = re.compile(
    r"(?i:(?<=bearer )|(?<=token )|(?<=basic ))[A-Za-z0-9._~+/=-]{8,}"
    r"|\b(?:sk|pk|rk)-[A-Za-z0-9_-]{16,}"
    r"|\bgh[pousr]_[A-Za-z0-9]{20,}"
    r"|\bxox[abprs]-[A-Za-z0-9-]{10,}"
    r"|\bAKIA[0-9A-Z]{16}\b"
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)"
)


def _redacted_name(name: str, redacted: Iterable[str]) -> bool:
    lowered = name.lower()
    return any(fnmatch.fnmatchcase(lowered, pattern.lower()) for pattern in redacted)


def _shown_text(text: str) -> str:
    text = _CREDENTIAL.sub(REDACTED, text)
    if len(text) <= SHOWN_VALUE_CHARS:
        return text
    left = len(text) - SHOWN_VALUE_CHARS
    return f"{text[:SHOWN_VALUE_CHARS]}… ({left} more characters)"


def _shown(value: Any, redacted: Sequence[str], depth: int) -> Any:
    if isinstance(value, str):
        return _shown_text(value)
    if isinstance(value, Mapping):
        if depth >= SHOWN_DEPTH:
            return f"{{… {len(value)} {'entry' if len(value) == 1 else 'entries'}}}"
        items = list(value.items())
        shown = {
            str(key): REDACTED
            if _redacted_name(str(key), redacted)
            else _shown(item, redacted, depth + 1)
            for key, item in items[:SHOWN_ITEMS]
        }
        if len(items) > SHOWN_ITEMS:
            shown["…"] = f"{len(items) - SHOWN_ITEMS} more entries"
        return shown
    if isinstance(value, list | tuple):
        if depth >= SHOWN_DEPTH:
            return f"[… {len(value)} items]"
        shown_items = [_shown(item, redacted, depth + 1) for item in value[:SHOWN_ITEMS]]
        if len(value) > SHOWN_ITEMS:
            shown_items.append(f"… {len(value) - SHOWN_ITEMS} more items")
        return shown_items
    return value  # numbers, booleans, null: shown as they are


def shown_arguments(arguments: Mapping[str, Any], redacted: Sequence[str]) -> dict[str, Any]:
    """``arguments`` fit to show a person: long strings cut, secrets ``[redacted]``."""
    shown = _shown(dict(arguments), redacted, 0)
    assert isinstance(shown, dict)
    return shown


def call_summary(tool_name: str, shown: Mapping[str, Any]) -> str:
    """The call on one line, from its shown arguments: ``write_file path=notes.md
    content="a note…"``; at most :data:`SUMMARY_CHARS` characters."""
    parts = [tool_name]
    for name, value in shown.items():
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        text = " ".join(text.split())
        if isinstance(value, str) and (not text or " " in text or '"' in text):
            text = json.dumps(text, ensure_ascii=False)
        parts.append(f"{name}={text}")
    line = " ".join(parts)
    return line if len(line) <= SUMMARY_CHARS else line[: SUMMARY_CHARS - 1] + "…"
