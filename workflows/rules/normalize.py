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
import heapq
import re
import string
import zlib
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

# Distinct-word hashes kept per text: the estimate's resolution (1/24 ≈ 4 %).
SKETCH_SIZE = 24
# The most of one text read in full (three quarters from its head, the rest from its tail).
WINDOW = 6_000
# Characters of all the texts of one batch read in full; past it each text gets an equal
# share (never below MIN_WINDOW). Masking reads about 6 KB a millisecond (a loaded two-core
# machine).
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
_DURATION_WORDS = ("took", "elapsed", "latency", "duration", "uptime", "runtime")
_DURATION_LABEL = re.compile(
    rf"(?i:\b(?:{'|'.join(_DURATION_WORDS)})\w*|\w+(?:_ms|_us|_ns|_secs?"
    r"|_seconds))[\"']?\s*[:=]\s*[\"']?$|\b\w+(?:Ms|Secs|Seconds)[\"']?\s*[:=]\s*[\"']?$"
)
# How every label of a time taken that is not one of the words above ends (lower-cased).
_DURATION_ENDINGS = ("ms", "us", "ns", "sec", "secs", "seconds")
# A number labelled as an identity or a position in a sequence, not a quantity.
_COUNTER_WORDS = (
    *("pid", "process", "attempt", "try", "retry", "run", "job", "request", "req", "trace"),
    *("span", "rev", "revision", "version", "ver", "seq", "sequence", "iteration", "iter"),
    *("step", "thought", "round", "tick", "epoch", "build", "id", "generation", "gen"),
    *("snapshot", "frame", "message", "msg", "event", "offset", "cursor", "etag", "ref"),
)
_COUNTER_SUFFIXES = ("id", "no", "num", "number", "nr")
_COUNTER_LABEL = re.compile(
    rf"(?i:\b(?:{'|'.join(_COUNTER_WORDS)})"
    # request_id, thoughtNumber, seqNo; never any word that merely starts alike ("running").
    rf"(?:_?(?:{'|'.join(_COUNTER_SUFFIXES)})|Id|ID|No|Num|Number)?[\s\"']*[#:=]?[\s\"']*|#)$"
)

# The label patterns are searched for in the few dozen characters before a number, which
# tries every starting position there (a few microseconds a number). Most numbers have no
# label, and a cheap test of ASCII text proves it first: each test below is a necessary
# condition of its pattern's match (a label is the whole last word before its separator,
# since the patterns start at a word boundary), so the outcome is always the pattern's.
# Text that is not ASCII always goes to the pattern (case-insensitive matching lets ``ſ`` or
# the Kelvin sign stand for an ASCII letter).
_ASCII_SPACE = "".join(c for c in map(chr, range(128)) if c.isspace())  # ``\s`` in ASCII
_ASCII_WORD = string.ascii_letters + string.digits + "_"  # ``\w`` in ASCII
_QUOTES = ('"', "'")
_COUNTER_ENDINGS = frozenset(
    word + suffix
    for word in _COUNTER_WORDS
    for suffix in ("", *_COUNTER_SUFFIXES, *(f"_{s}" for s in _COUNTER_SUFFIXES))
)


def _last_word(text: str) -> str:
    """The last word of ASCII ``text`` (its trailing ``\\w`` characters), lower-cased."""
    return text[len(text.rstrip(_ASCII_WORD)) :].lower()


def _duration_label(text: str, lo: int, hi: int) -> bool:
    """``_DURATION_LABEL.search(text, lo, hi)``: a duration label, an optional quote, then
    ``:`` or ``=`` followed by nothing but spaces and a quote."""
    before = text[lo:hi]
    if before.isascii():
        colon = max(before.rfind(":"), before.rfind("="))
        if colon < 0 or before[colon + 1 :].strip(_ASCII_SPACE) not in ("", *_QUOTES):
            return False
        label = before[:colon].rstrip(_ASCII_SPACE)
        word = _last_word(label[:-1] if label.endswith(_QUOTES) else label)
        if not (word.startswith(_DURATION_WORDS) or word.endswith(_DURATION_ENDINGS)):
            return False
    return _DURATION_LABEL.search(text, lo, hi) is not None


def _counter_label(text: str, lo: int, hi: int) -> bool:
    """``_COUNTER_LABEL.search(text, lo, hi)``: a ``#``, or a counter label that starts a
    word, followed by spaces and quotes around at most one of ``#:=``. ASCII text is read
    directly (the search costs more than the rest of a number's reading); other text goes to
    the pattern."""
    before = text[lo:hi]
    if not before.isascii():
        return _COUNTER_LABEL.search(text, lo, hi) is not None
    if before.endswith(("#", "#\n")):  # (``$`` also matches before a last newline)
        return True
    label = before.rstrip(_ASCII_SPACE + "\"'#:=")
    word = _last_word(label)
    if word not in _COUNTER_ENDINGS or sum(map(before[len(label) :].count, "#:=")) > 1:
        return False
    start = lo + len(label) - len(word)  # the word's start, which must be a word boundary
    return start == 0 or not (text[start - 1].isalnum() or text[start - 1] == "_")


def _classify(text: str, start: int, run: str, before: str) -> tuple[str, int, int] | None:
    """What the digit run ``run`` at ``start`` is, as ``(placeholder, start, end)`` of the
    text it replaces, or ``None`` for a quantity kept as it is. ``before`` is the word
    characters right before it (the rest of its word)."""
    stripped = run.rstrip(".:+%/-")
    end = start + len(stripped)
    number = stripped.replace(".", "", 1).isdigit()
    word = before + stripped
    # Digits alone are never an id pattern (those need letters or dashes): skip the three.
    # (Each pattern's shortest match first, and a random token is all word characters and
    # dashes: a quick no for most runs, a time above all.)
    size = len(word)
    if (before or not number) and (
        (size == 36 and _UUID.fullmatch(word))
        or (size >= 3 and _HEX.fullmatch(word))
        or (
            size >= 12
            and (not word.isascii() or not word.strip(_ASCII_WORD + "-"))
            and _RANDOM.fullmatch(word)
        )
    ):
        return "<id>", start - len(before), end
    if before:
        # A number inside a word (e123, v2): an id when it is one, or when a label says so
        # (``run c63a10``), else part of the word.
        begin = start - len(before)
        if _counter_label(text, max(0, begin - 24), begin):
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
    if _duration_label(text, max(0, start - 32), start):
        return "<duration>", start, end
    if stripped.isdigit() and _counter_label(text, max(0, start - 24), start):
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
            segment = text[max(last, start - 32) : start]
            if segment.isascii():  # the same as the pattern's search, without its retries
                before = segment[len(segment.rstrip(_ASCII_WORD + "-")) :]
            else:
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


_WORD = re.compile(r"[^\W_]+|<\w+>")
_DIGIT_BYTES = bytes.maketrans(b"0123456789", b"0000000000")
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
    # ``split()`` splits on exactly what ``\s`` matches and drops the ends.
    return " ".join(_mask_volatile(mask_arguments(text, arguments)).split())


def _words(masked: str) -> set[str]:
    return set(_WORD.findall(masked.lower()))


def _bottom_k(words: set[str]) -> frozenset[int]:
    hashes = map(zlib.crc32, map(str.encode, words))
    if len(words) <= SKETCH_SIZE:
        return frozenset(hashes)  # all of them: nothing to sort out
    return frozenset(heapq.nsmallest(SKETCH_SIZE, hashes))


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


class Reading(NamedTuple):
    """One text as the rules compare it: ``key``, a private digest of the masked text (the
    fingerprint: equal exactly when the texts say the same thing); ``sketch``; ``size``, its
    distinct words; ``quantities``, a digest of the numbers the mask kept (counts, sizes,
    percentages: what progress looks like). Immutable (a tuple: every call of a batch makes
    two, so they are cheap to make)."""

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
            self.size >= LONG_TEXT_WORDS
            and other.size >= LONG_TEXT_WORDS
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
        # (Digits are single bytes in UTF-8, so masking the bytes masks the text.)
        crc = zlib.crc32(rest.encode("utf-8", "replace").translate(_DIGIT_BYTES))
        extra = f"\0{len(rest) // 64}:{crc}"
    return _reading(mask(read, arguments), extra)


def read_call(name: str, arguments: Mapping[str, Any] | None, *, window: int = WINDOW) -> Reading:
    """What a call asks, normalized: its tool and every argument string (read within
    ``window``), masked."""
    strings, _ = _windowed(" ".join(argument_strings(arguments or {})), window)
    return _reading(mask(f"{name.rsplit('__', 1)[-1]} {strings}"))
