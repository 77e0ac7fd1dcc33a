"""How the rollout report says a number: counts with their noun ("1 owner", "2 owners"), rates
in %, and a value in a gate's unit (pp, a ratio, calls).

This module exists so that the gates' explanations, the verdict's reasons and next steps, and
the terminal and HTML renderings say the same number the same way, from one place.
"""

from __future__ import annotations

import math

# Nouns whose plural is not the noun and an "s".
PLURALS = {"day": "days", "prompt": "prompts", "retry": "retries", "policy": "policies"}


def plural(count: int, noun: str) -> str:
    """``count`` and ``noun``, the noun in the plural unless the count is one."""
    if count == 1:
        return f"{count} {noun}"
    return f"{count} {PLURALS.get(noun, noun + 's')}"


def percent(rate: float, digits: int = 1) -> str:
    """A rate (0..1) in %: ``0.125`` is ``12.5 %``; n/a when it is not a number."""
    return f"{100 * rate:.{digits}f} %" if math.isfinite(rate) else "n/a"


def in_unit(value: float, unit: str = "") -> str:
    """A value in a gate's unit: ``+1.50 pp``, ``1.100x``, ``2.00 calls``."""
    if not math.isfinite(value):
        return "n/a"
    if unit == "x":
        return f"{value:.3f}x"
    if unit == "pp":
        return f"{value:+.2f} pp"
    return f"{value:.2f}{(' ' + unit) if unit else ''}"
