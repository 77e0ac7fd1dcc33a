"""The normalizer: "the same thing again" when the bytes differ.

the module docstring. Rules that compare calls or
results by exact digest miss the loops whose every call and result is new only in what
always varies: a status answer with a fresh request id and time, an error with a new trace
id, "revision 19" then "revision 29", a page snapshot whose element ids changed while the
page did not, a question to the user asked again in other words. Since
``seawall-loop-quality-v4`` every rule that compares calls or results reads them through this
one module:

- :func:`mask` replaces volatile tokens — ISO and clock times, epoch times, UUIDs, hex and
  random-looking ids, durations, byte sizes, labelled counters and revision numbers — with
  placeholders, in one scan for digits (each run classified by short patterns). Plain
  quantities stay (``3 failed``, ``45%``):
  a count that moves is what progress looks like.
- :func:`sketch` turns the masked text into a *bottom-k sketch*: the :data:`SKETCH_SIZE`
  smallest CRC-32 values of its distinct words. :func:`similarity` estimates the Jaccard
  similarity of two texts' word sets from their sketches alone, so rewording, shuffled
  sections and a drifting id all score near 1 while a different page of results scores near
  0. Each rule picks its own threshold.
- :func:`read_output` reads one call's output and :func:`read_call` what a call asks (its
  tool and argument text) into a :class:`Reading`: the exact fingerprint of the masked text,
  its sketch, its size and the quantities the mask kept; :meth:`Reading.alike` is the one
  comparison every rule uses.

**Bounded cost.** A batch may carry 50 calls of 20 KB; reading all of it costs tens of
milliseconds of workflow-task time. Every call's text is cut to a window (its head and
tail, at most :data:`WINDOW` characters) and the batch shares a budget
(:data:`BATCH_BUDGET`, :func:`window_for`); the rest of a long text enters the fingerprint
as its length and a CRC of its bytes with every digit masked (a C-speed pass), so a change
in the middle still makes the fingerprint new while a drifting number there does not.
``bench/guard_step.py`` measures a batch's step.

Everything is deterministic (CRC-32, no ``hash()``, no randomness) and private: sketches
and fingerprints stay in workflow state; only rule names and counts are ever logged.
"""

from __future__ import annotations

import hashlib
import re
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

# Distinct-word hashes kept per text: the estimate's resolution (1/24 ≈ 4 %).
SKETCH_SIZE = 24
# The most of one text read in full (three quarters from its head, the rest from its tail).
WINDOW = 6_000
# Characters of all the texts of one batch read in full; past it each text gets an equal
# share (never below MIN_WINDOW). Masking reads about 3 KB a millisecond.
BATCH_BUDGET = 8_000
MIN_WINDOW = 160
# Argument values shorter than this are too likely to occur by chance in unrelated output.
MIN_MASKED_ARGUMENT_CHARS = 3

# Masking is one scan for runs that start with a digit (``_NUMBER``: about 100 KB a
# millisecond); each run is then classified by the short patterns below, looking at the
# word it ends (``req_8fA2…``), the word after it (``2 minutes``) and the words before it
# (``revision 19``). A scan per kind of token would cost ten times as much.
_NUMBER = re.compile(r"\d[\w.:+%/-]*")
_WORD_BEFORE = re.compile(r"[\w-]*$")
_TIME = re.compile(
    r"\d{4}-\d{2}-\d{2}(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?"
    r"|\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?"
    r"|1[5-9]\d{8}(?:\d{3})?(?:\.\d+)?"  # epoch seconds or milliseconds
)
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_HEX = re.compile(r"(?:0x[0-9a-fA-F]+|(?=[0-9a-f]*[a-f])[0-9a-f]{7,})")
# Random-looking tokens: 12+ characters with 3+ digits and 3+ letters (req_8fA2xQ91bZ).
_RANDOM = re.compile(r"(?=(?:[A-Za-z_-]*\d){3})(?=(?:[\w-]*?[A-Za-z]){3})[\w-]{12,}")
_DURATION = re.compile(
    r"\d+(?:\.\d+)?(?:ms|µs|us|ns|s|sec|secs|m|min|mins|h|hrs?)"
    r"(?:\d+(?:\.\d+)?(?:ms|s|sec|m|min))*"
)
_SIZE_UNITS = r"[KMGT]i?B|bytes?|kb|mb|gb"
_UNIT_AFTER = re.compile(
    r"\s*(?:(?P<duration>ms|milliseconds?|µs|us|ns|s|sec|secs|seconds?|min|mins|minutes?"
    rf"|h|hrs?|hours?|days?|ago)|(?P<size>{_SIZE_UNITS}))\b"
)
_SIZE = re.compile(rf"\d+(?:\.\d+)?(?:{_SIZE_UNITS})")
# A number labelled as a time taken (``"took_ms": 198``, ``elapsed=12``, ``latencyMs: 40``).
_DURATION_LABEL = re.compile(
    r"(?i:\b(?:took|elapsed|latency|duration|uptime|runtime)\w*|\w+(?:_ms|_us|_ns|_secs?"
    r"|_seconds))[\"']?\s*[:=]\s*[\"']?$|\b\w+(?:Ms|Secs|Seconds)[\"']?\s*[:=]\s*[\"']?$"
)
# A number labelled as an identity or a position in a sequence, not a quantity.
_COUNTER_LABEL = re.compile(
    r"(?i:\b(?:pid|process|attempt|try|retry|run|job|request|req|trace|span|rev|revision"
    r"|version|ver|seq|sequence|iteration|iter|step|thought|round|tick|epoch|build|id"
    r"|generation|gen|snapshot|frame|message|msg|event|offset|cursor|etag|ref)"
    # request_id, thoughtNumber, seqNo; never any word that merely starts alike ("running").
    r"(?:_?(?:id|no|num|number|nr)|Id|ID|No|Num|Number)?[\s\"']*[#:=]?[\s\"']*|#)$"
)


def _classify(text: str, start: int, run: str, before: str) -> tuple[str, int, int] | None:
    """What the digit run ``run`` at ``start`` is, as ``(placeholder, start, end)`` of the
    text it replaces, or ``None`` for a quantity kept as it is. ``before`` is the word
    characters right before it (the rest of its word)."""
    stripped = run.rstrip(".:+%/-")
    end = start + len(stripped)
    number = stripped.replace(".", "", 1).isdigit()
    word = before + stripped
    # Digits alone are never an id pattern (those need letters or dashes): skip the three.
    if (before or not number) and (
        _UUID.fullmatch(word) or _HEX.fullmatch(word) or _RANDOM.fullmatch(word)
    ):
        return "<id>", start - len(before), end
    if before:
        # A number inside a word (e123, v2): an id when it is one, or when a label says so
        # (``run c63a10``), else part of the word.
        begin = start - len(before)
        if _COUNTER_LABEL.search(text, max(0, begin - 24), begin):
            return "<id>", begin, end
        return None
    if not number:
        match = _TIME.match(stripped)
        if match and match.end() == len(stripped):
            return "<time>", start, end
        if _DURATION.fullmatch(stripped):
            return "<duration>", start, end
        if _SIZE.fullmatch(stripped):
            return "<size>", start, end
        return None
    if len(stripped) in (10, 13, 14, 17) and _TIME.fullmatch(stripped):
        return "<time>", start, end  # epoch seconds or milliseconds
    unit = _UNIT_AFTER.match(text, end)
    if unit is not None:
        return f"<{unit.lastgroup}>", start, unit.end()
    if _DURATION_LABEL.search(text, max(0, start - 32), start):
        return "<duration>", start, end
    if stripped.isdigit() and _COUNTER_LABEL.search(text, max(0, start - 24), start):
        return "<n>", start, end
    return None


def _mask_volatile(text: str) -> str:
    pieces: list[str] = []
    last = 0
    for match in _NUMBER.finditer(text):
        start = match.start()
        if start < last:
            continue  # inside a run already replaced (a duration's unit word)
        before = ""
        if start > last and (text[start - 1].isalnum() or text[start - 1] in "_-"):
            found_before = _WORD_BEFORE.search(text, max(last, start - 32), start)
            before = found_before.group() if found_before else ""
        found = _classify(text, start, match.group(), before)
        if found is None:
            continue
        placeholder, begin, end = found
        pieces.append(text[last:begin])
        pieces.append(placeholder)
        last = end
    pieces.append(text[last:])
    return "".join(pieces)


_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"[^\W_]+|<\w+>")
_DIGITS = str.maketrans("0123456789", "0000000000")
_QUANTITY = re.compile(r"\d+(?:\.\d+)?")


def argument_strings(value: Any) -> Iterator[str]:
    """Every string inside an argument value (nested mappings and lists too)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from argument_strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from argument_strings(item)


def window_for(lengths: list[int]) -> int:
    """The characters of each text read in full when a batch brings texts of ``lengths``:
    the whole window while the batch fits :data:`BATCH_BUDGET`, else an equal share."""
    total = sum(min(n, WINDOW) for n in lengths)
    if total <= BATCH_BUDGET or not lengths:
        return WINDOW
    return max(MIN_WINDOW, BATCH_BUDGET // len(lengths))


def _windowed(text: str, window: int) -> tuple[str, str]:
    """The part read in full, and the middle left out of it."""
    if len(text) <= window:
        return text, ""
    head = window * 3 // 4
    tail = window - head
    return text[:head] + "\n" + text[-tail:], text[head : len(text) - tail]


def mask_arguments(text: str, arguments: Mapping[str, Any] | None) -> str:
    """``text`` with the call's own string argument values masked, longest first, so "not
    found: a.txt" and "not found: b.txt" from two reads of two missing files say the same
    thing (the fingerprint before the normalizer masks them the same way)."""
    values = {v for v in argument_strings(arguments or {}) if len(v) >= MIN_MASKED_ARGUMENT_CHARS}
    for value in sorted(values, key=len, reverse=True):
        text = text.replace(value, "<arg>")
    return text


def mask(text: str, arguments: Mapping[str, Any] | None = None) -> str:
    """``text`` with the call's own argument values (longest first) and every volatile token
    replaced by a placeholder, whitespace collapsed."""
    return _SPACE.sub(" ", _mask_volatile(mask_arguments(text, arguments))).strip()


def _words(masked: str) -> set[str]:
    return set(_WORD.findall(masked.lower()))


def _bottom_k(words: set[str]) -> frozenset[int]:
    return frozenset(sorted(map(zlib.crc32, map(str.encode, words)))[:SKETCH_SIZE])


def sketch(masked: str) -> frozenset[int]:
    """The bottom-k sketch of ``masked``: the :data:`SKETCH_SIZE` smallest CRC-32 values of
    its distinct (lower-cased) words."""
    return _bottom_k(_words(masked))


def similarity(a: frozenset[int], b: frozenset[int]) -> float:
    """The estimated Jaccard similarity of two texts' word sets, from their sketches (two
    empty texts are the same)."""
    if not a and not b:
        return 1.0
    union = sorted(a | b)[:SKETCH_SIZE]
    both = sum(1 for h in union if h in a and h in b)
    return both / len(union)


# Below this many distinct words a text is too short for a similarity estimate to mean
# anything ("read_file a.py" and "read_file b.py" share most of their words): short texts
# are alike only when their masked text is the same.
LONG_TEXT_WORDS = 8


@dataclass(frozen=True)
class Reading:
    """One text as the rules compare it: ``key``, a private digest of the masked text (the
    fingerprint: equal exactly when the texts say the same thing); ``sketch``; ``size``, its
    distinct words; ``quantities``, a digest of the numbers the mask kept (counts, sizes,
    percentages: what progress looks like)."""

    key: str
    sketch: frozenset[int]
    size: int
    quantities: str

    @property
    def long(self) -> bool:
        return self.size >= LONG_TEXT_WORDS

    def alike(self, other: Reading, threshold: float) -> bool:
        """Whether two texts say the same thing: the same masked text, or, when both are
        long enough to compare (:data:`LONG_TEXT_WORDS`), the same quantities and a
        similarity of at least ``threshold``. A count that moved (``completed: 3`` then
        ``completed: 7``) makes a text new however alike its words are."""
        if self.key == other.key:
            return True
        return (
            self.long
            and other.long
            and self.quantities == other.quantities
            and similarity(self.sketch, other.sketch) >= threshold
        )


def _reading(masked: str, extra: str = "") -> Reading:
    digest = hashlib.sha256(masked.encode("utf-8"))
    if extra:
        digest.update(extra.encode())
    numbers = " ".join(sorted(set(_QUANTITY.findall(masked))))
    words = _words(masked)
    return Reading(
        key=digest.hexdigest()[:32],
        sketch=_bottom_k(words),
        size=len(words),
        quantities=hashlib.sha256(numbers.encode()).hexdigest()[:16],
    )


def read_output(
    text: str, arguments: Mapping[str, Any] | None = None, *, window: int = WINDOW
) -> Reading:
    """One output, normalized (its ``key`` is the fingerprint). ``window``: the characters
    read in full (:func:`window_for`)."""
    read, rest = _windowed(text, window)
    extra = ""
    if rest:
        # The middle left out still counts, as its size and its bytes with digits masked.
        crc = zlib.crc32(rest.translate(_DIGITS).encode("utf-8", "replace"))
        extra = f"\0{len(rest) // 64}:{crc}"
    return _reading(mask(read, arguments), extra)


def read_call(name: str, arguments: Mapping[str, Any] | None, *, window: int = WINDOW) -> Reading:
    """What a call asks, normalized: its tool and every argument string (read within
    ``window``), masked."""
    strings, _ = _windowed(" ".join(argument_strings(arguments or {})), window)
    return _reading(mask(f"{name.rsplit('__', 1)[-1]} {strings}"))
