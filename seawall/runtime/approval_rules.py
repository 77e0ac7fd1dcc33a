"""The operator's approval rules file: read once at start (one clear error per bad rule) and
by the worker each time a session resolves its settings (docs/protections.md, "Approval
rules"; the language is ``workflows/contracts/approval.py``).

The file is YAML (JSON is YAML too): ``rules:`` and a list of rules. A rule that does not
validate stops the process that reads it at start, with its position, its name and what is
wrong; an unknown field is an error, not ignored, so a typo never silently loosens a rule.
"""

from __future__ import annotations

from pathlib import Path

import yaml
from pydantic import ValidationError

from workflows.contracts.approval import ApprovalRule, ApprovalRules


def load_approval_rules(path: Path) -> tuple[ApprovalRule, ...]:
    """The rules of the file at ``path``; ``ValueError`` naming each problem."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise ValueError(f"cannot read {path}: {err.strerror or err}") from None
    except yaml.YAMLError as err:
        raise ValueError(f"{path} is not YAML: {err}") from None
    if not isinstance(data, dict) or not isinstance(data.get("rules"), list):
        raise ValueError(f"{path} must hold `rules:` and a list of rules")
    problems: list[str] = []
    for index, rule in enumerate(data["rules"], start=1):
        name = rule.get("name") if isinstance(rule, dict) else None
        label = f"rule {index}" + (f" ({name!r})" if isinstance(name, str) else "")
        try:
            ApprovalRule.model_validate(rule)
        except ValidationError as err:
            for error in err.errors():
                where = ".".join(str(part) for part in error["loc"]) or "rule"
                problems.append(f"{label}: {where}: {error['msg']}")
    if problems:
        raise ValueError("; ".join(problems))
    try:
        return ApprovalRules.model_validate(data).rules
    except ValidationError as err:
        raise ValueError("; ".join(e["msg"] for e in err.errors())) from None
