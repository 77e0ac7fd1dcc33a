"""The normalizer: "the same thing again" when the bytes differ.

docs/protections.md, "The rules". Rules that compare calls or
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
  a count that moves is what progress looks like. Since ``LOOKS_AND_IDS_PATCH`` a word a label
  names as an identity (``run 28ab84``, ``Chunk ID: 6bb37f``) is one ``<id>`` whatever its
  characters; before it one that began with a digit and had a letter in it was kept, and one
  of digits only was ``<n>``, so a short random hex id made every answer new now and then.
- :func:`sketch` turns the masked text into a *bottom-k sketch*: the :data:`SKETCH_SIZE`
  smallest CRC-32 values of its distinct words. :func:`similarity` estimates the Jaccard
  similarity of two texts' word sets from their sketches alone, so rewording, shuffled
  sections and a drifting id all score near 1 while a different page of results scores near
  0. Each rule picks its own threshold.
- :func:`read_output` reads one call's output and :func:`read_call` what a call asks (its
  tool and argument text) into a :class:`Reading`: the exact fingerprint of the masked text,
  its sketch, its size and the quantities the mask kept; :meth:`Reading.alike` is the one
  comparison every rule uses. :func:`read_whole_exchange` reads both for one settled call. An
  output's reading also has a *shape*, its masked text without its numerals: two answers of
  one shape differ at most in their numbers, and the no-new-state rule (R11) compares their
  sketches to tell a count that moved in a long answer from a new one.

**Bounded cost.** A batch may carry 50 calls of 20 KB; reading all of it costs tens of
milliseconds of workflow-task time. Every call's text is cut to a window (its head and
tail, at most :data:`WINDOW` characters) and the batch shares a budget
(:data:`BATCH_BUDGET`, :func:`window_for`); the rest of a long text enters the fingerprint
as its length and a CRC of its bytes with every digit masked (a C-speed pass), so a change
in the middle still makes the fingerprint new while a drifting number there does not.
A short text's sketch and quantities are worked out only when a rule compares that far
(:data:`LAZY_MASKED_CHARS`). And a long text is read where it was made: the tool activity
that ran a call whose argument or output text is longer than :data:`READ_WHERE_RUN_CHARS`
returns the readings of both with the outcome (:func:`with_readings`, the whole window, off
the workflow task), so the step reads only the short texts and those no activity read (an
editor's, a worker's from before it). ``bench/guard_step.py`` measures a batch's step; where
its time goes is in docs/benchmarks.md.

Everything is deterministic (CRC-32, no ``hash()``, no randomness) and private: sketches
and fingerprints stay in workflow state and, read where a call ran, in its recorded result;
only rule names and counts are ever logged.
"""

from __future__ import annotations

import hashlib
import heapq
import re
import string
import struct
import zlib
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, NamedTuple

from pydantic_core import CoreSchema, core_schema

from workflows.contracts.outcome import ExchangeReadings, TextReading, ToolOutcome

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


def _duration_label_pattern(unit_after: str) -> re.Pattern[str]:
    """The duration label, its unit joined to the word by ``unit_after`` (a pattern)."""
    return re.compile(
        rf"(?i:\b(?:{'|'.join(_DURATION_WORDS)})\w*|\w+{unit_after}(?:ms|us|ns|secs?"
        r"|seconds))[\"']?\s*[:=]\s*[\"']?$|\b\w+(?:Ms|Secs|Seconds)[\"']?\s*[:=]\s*[\"']?$"
    )


_DURATION_LABEL = _duration_label_pattern("_")
# Since LOOKS_AND_IDS_PATCH: the same, with a unit written after a hyphen too (an HTTP header's
# ``openai-processing-ms: 137``).
_DURATION_LABEL_HYPHENS = _duration_label_pattern("[_-]")
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


def _duration_label(text: str, lo: int, hi: int, hyphens: bool = False) -> bool:
    """``_DURATION_LABEL.search(text, lo, hi)``: a duration label, an optional quote, then
    ``:`` or ``=`` followed by nothing but spaces and a quote (``hyphens``: its unit may
    follow a hyphen, ``_DURATION_LABEL_HYPHENS``)."""
    before = text[lo:hi]
    if before.isascii():
        colon = max(before.rfind(":"), before.rfind("="))
        if colon < 0 or before[colon + 1 :].strip(_ASCII_SPACE) not in ("", *_QUOTES):
            return False
        label = before[:colon].rstrip(_ASCII_SPACE)
        word = _last_word(label[:-1] if label.endswith(_QUOTES) else label)
        if not (word.startswith(_DURATION_WORDS) or word.endswith(_DURATION_ENDINGS)):
            return False
    pattern = _DURATION_LABEL_HYPHENS if hyphens else _DURATION_LABEL
    return pattern.search(text, lo, hi) is not None


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


_RUN_END = ".:+%/-"  # what a digit run may end with that is never part of its token
_WORD_DASH = _ASCII_WORD + "-"
_EPOCH_DIGITS = (10, 13, 14, 17)  # epoch seconds or milliseconds, with a fraction or not
# Characters one of which ends, past spaces, the text before a number a duration label
# names: its separator, or a quote after it (a necessary condition of ``_duration_label``).
_DURATION_SEPARATORS = ":=\"'"


def _id_word(word: str, run: str) -> bool:
    """Whether ``word``, which ends with the digit run ``run``, is an id: a UUID, a hex or a
    random-looking token. Digits alone never are (the callers ask only of a word with more
    than digits in it), nor is a run with a ``:`` or a ``.`` in it (none of the three
    patterns allows either). Each pattern's shortest match first, and a random token is all
    word characters and dashes: a quick no for most words."""
    if ":" in run or "." in run:
        return False
    size = len(word)
    return bool(
        (size == 36 and _UUID.fullmatch(word))
        or (size >= 3 and _HEX.fullmatch(word))
        or (
            size >= 12
            and (not word.isascii() or not word.strip(_WORD_DASH))
            and _RANDOM.fullmatch(word)
        )
    )


def _mask_volatile(text: str, labelled_ids: bool = False, ids: list[str] | None = None) -> str:
    """Every digit run of ``text`` classified, the volatile ones replaced. What each run is,
    in this order: an id (a UUID, a hex or random-looking token, with the rest of its
    word), a number inside a word (an id when a label says so, else part of the word), a
    time, a duration or a size written as one token, an epoch time, a number with a unit
    after it, a number a duration label names, a counter a label names; anything else is a
    quantity, kept. One function (no call per run): masking is the guard step's hot path.

    ``labelled_ids`` (``LOOKS_AND_IDS_PATCH``): a word a label names as an identity is one
    ``<id>`` whatever its characters (``run 28ab84``, ``run a1b2c3`` and ``run 402817`` alike;
    before it the first was kept, the last read as ``<n>``), and a label of a time taken may
    end in a hyphen and its unit (``openai-processing-ms: 137``, which was kept).

    ``ids``: collects every token replaced by ``<id>`` (``WORLD_IDS_PATCH``, :func:`id_digests`)."""
    counter = "<id>" if labelled_ids else "<n>"
    pieces: list[str] = []
    last = 0
    for match in _NUMBER.finditer(text):
        start = match.start()
        if start < last:
            continue  # inside a run already replaced (a duration's unit word)
        # ``before``: the word characters right before the run (the rest of its word).
        before = ""
        if start > last:
            previous = text[start - 1]
            if previous.isalnum() or previous in "_-":
                lo = max(last, start - 32)
                segment = text[lo:start]
                if segment.isascii():  # the same as the pattern's search, without its retries
                    before = segment[len(segment.rstrip(_WORD_DASH)) :]
                else:
                    found_before = _WORD_BEFORE.search(text, lo, start)
                    before = found_before.group() if found_before else ""
        stripped = match.group().rstrip(_RUN_END)
        end = start + len(stripped)
        if before:
            # A number inside a word (e123, v2, req_8fA2…): an id when the word is one, or
            # when a label says so (``run c63a10``), else part of the word.
            begin = start - len(before)
            if not (
                _id_word(before + stripped, stripped)
                or _counter_label(text, max(0, begin - 24), begin)
            ):
                continue
            placeholder = "<id>"
            start = begin
        elif not stripped.replace(".", "", 1).isdigit():
            if _id_word(stripped, stripped):
                placeholder = "<id>"
            elif (found := _TIME.match(stripped)) and found.end() == len(stripped):
                placeholder = "<time>"
            elif _DURATION.fullmatch(stripped):
                placeholder = "<duration>"
            elif _SIZE.fullmatch(stripped):
                placeholder = "<size>"
            elif (
                labelled_ids
                and stripped.isalnum()
                and _counter_label(text, max(0, start - 24), start)
            ):
                placeholder = "<id>"
            else:
                continue
        elif len(stripped) in _EPOCH_DIGITS and _TIME.fullmatch(stripped):
            placeholder = "<time>"  # epoch seconds or milliseconds
        else:
            unit = _UNIT_AFTER.match(text, end)
            if unit is not None:
                placeholder = f"<{unit.lastgroup}>"
                end = unit.end()
            else:
                lo = max(0, start - 32)
                # A duration label ends with ``:`` or ``=`` and at most spaces and a quote
                # (``rstrip()`` strips what ``\s`` matches): most numbers fail this at once.
                closing = text[lo:start].rstrip()[-1:]
                if (
                    closing
                    and closing in _DURATION_SEPARATORS
                    and _duration_label(text, lo, start, labelled_ids)
                ):
                    placeholder = "<duration>"
                elif stripped.isdigit() and _counter_label(text, max(0, start - 24), start):
                    placeholder = counter
                else:
                    continue
        if ids is not None and placeholder == "<id>":
            ids.append(text[start:end])
        pieces.append(text[last:start])
        pieces.append(placeholder)
        last = end
    if not pieces:
        return text
    pieces.append(text[last:])
    return "".join(pieces)


_WORD = re.compile(r"[^\W_]+|<\w+>")
_DIGIT_BYTES = bytes.maketrans(b"0123456789", b"0000000000")
# What a shape leaves out: digits, and the separators inside numbers ("38,744" and "912").
_NUMERALS = b"0123456789,."
_QUANTITY = re.compile(r"\d+(?:\.\d+)?")


def argument_strings(value: Any) -> Iterator[str]:
    """Every string inside an argument value (nested mappings and lists too)."""
    strings: list[str] = []
    _collect_strings(value, strings)
    return iter(strings)


def _collect_strings(value: Any, strings: list[str]) -> None:
    """:func:`argument_strings` into a list (no generator per value: a call's arguments
    are walked on the guard step's hot path)."""
    if isinstance(value, str):
        strings.append(value)
    elif type(value) is dict or isinstance(value, Mapping):
        for item in value.values():
            _collect_strings(item, strings)
    elif isinstance(value, list | tuple):
        for item in value:
            _collect_strings(item, strings)


def _masked_values(arguments: Mapping[str, Any] | None) -> list[str]:
    """The argument strings :func:`mask_arguments` masks, in the order it masks them."""
    if not arguments:
        return []
    strings: list[str] = []
    _collect_strings(arguments, strings)
    return _values_to_mask(strings)


def _values_to_mask(strings: list[str]) -> list[str]:
    """Of a call's argument strings, those long enough to mask, in the order they are."""
    return _longest_first({v for v in strings if len(v) >= MIN_MASKED_ARGUMENT_CHARS})


def names(arguments: Mapping[str, Any] | None, *, labelled_ids: bool = False) -> str:
    """A private digest of what a call with several arguments *names*: each top-level
    argument whose value is a number, a flag or a short string (fewer than
    :data:`LONG_TEXT_WORDS` words), masked — an event's title, a job's number, a mode;
    ``""`` when there is none. Two calls that name different things act on different items,
    however alike their words (eighteen birthdays of one calendar, each created with its own
    title); a status asked with a fresh request id names the same. A call with one argument
    names nothing: its one value is its content (a note, a question), which rules compare
    by similarity."""
    if not arguments or len(arguments) < 2:
        return ""
    named = []
    for key in sorted(arguments):
        value = arguments[key]
        if isinstance(value, bool | int | float):
            named.append(f"{key}={value}")
        elif isinstance(value, str) and len(value.split()) < LONG_TEXT_WORDS:
            named.append(f"{key}={_mask(value, [], labelled_ids)}")
    if not named:
        return ""
    return hashlib.sha256("\0".join(named).encode()).hexdigest()[:16]


def _longest_first(values: Iterable[str]) -> list[str]:
    """``values`` longest first, equal lengths in text order: a set's own order changes with
    ``PYTHONHASHSEED``, and two values of one length that overlap in a text mask it
    differently in each order (``abc`` and ``bcd`` in ``abcd``), so a replay on another worker
    would read another fingerprint."""
    return sorted(values, key=lambda value: (-len(value), value))


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
    return _replace_values(text, _masked_values(arguments))


def _replace_values(text: str, values: list[str]) -> str:
    for value in values:
        text = text.replace(value, "<arg>")
    return text


def mask(
    text: str, arguments: Mapping[str, Any] | None = None, *, labelled_ids: bool = False
) -> str:
    """``text`` with the call's own argument values (longest first) and every volatile token
    replaced by a placeholder, whitespace collapsed (``labelled_ids``: as for
    :func:`_mask_volatile`)."""
    return _mask(text, _masked_values(arguments), labelled_ids)


def _mask(
    text: str, values: list[str], labelled_ids: bool = False, ids: list[str] | None = None
) -> str:
    """:func:`mask`, with the argument values to mask already sorted out (``ids``: as for
    :func:`_mask_volatile`)."""
    # ``split()`` splits on exactly what ``\s`` matches and drops the ends.
    return " ".join(_mask_volatile(_replace_values(text, values), labelled_ids, ids).split())


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


# A masked text up to this long is kept in its reading until a rule asks for its sketch or
# quantities (most readings are never compared that far: their key or size decides); a
# longer one is read in full at once, so a reading never holds much text.
LAZY_MASKED_CHARS = 512


def _quantities(masked: str) -> str:
    numbers = _QUANTITY.findall(masked)
    if not numbers:
        return _NO_QUANTITIES
    return hashlib.sha256(" ".join(sorted(set(numbers))).encode()).hexdigest()[:16]


class Reading:
    """One text as the rules compare it: ``key``, a private digest of the masked text (the
    fingerprint: equal exactly when the texts say the same thing); ``sketch``; ``size``, its
    distinct words; ``quantities``, a digest of the numbers the mask kept (counts, sizes,
    percentages: what progress looks like); ``shape``, an output's digest of its masked text
    without its numerals (equal for two answers that differ only in their numbers; ``None``
    for what a call asks, and for an output read where it ran before shapes). Immutable:
    ``sketch`` and ``quantities`` of a short text are worked out from its masked text the
    first time a rule asks (every call of a batch makes two readings, and most are never
    compared that far), the same values either way. Equal, like a tuple, when all five are."""

    __slots__ = ("_masked", "_quantities", "_sketch", "_sketch_hex", "key", "shape", "size")

    def __init__(
        self,
        key: str,
        sketch: frozenset[int] | None,
        size: int,
        quantities: str | None,
        masked: str = "",
        shape: str | None = None,
        sketch_hex: str = "",
    ) -> None:
        self.key = key
        self.size = size
        self.shape = shape
        # ``None``: not worked out yet (from ``_sketch_hex``, a payload's, or ``_masked``).
        self._sketch = sketch
        self._quantities = quantities
        self._masked = masked
        self._sketch_hex = sketch_hex

    @property
    def sketch(self) -> frozenset[int]:
        sketch = self._sketch
        if sketch is None:
            if self._sketch_hex:
                hashes = bytes.fromhex(self._sketch_hex)
                sketch = frozenset(struct.unpack(f">{len(hashes) // 4}I", hashes))
                self._sketch_hex = ""
            else:
                sketch = _bottom_k(_words(self._masked))
                if self._quantities is not None:
                    self._masked = ""
            self._sketch = sketch
        return sketch

    @property
    def quantities(self) -> str:
        quantities = self._quantities
        if quantities is None:
            quantities = self._quantities = _quantities(self._masked)
            if self._sketch is not None:
                self._masked = ""
        return quantities

    def _fields(self) -> tuple[str, frozenset[int], int, str, str | None]:
        return (self.key, self.sketch, self.size, self.quantities, self.shape)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Reading):
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        key, sketch, size, quantities, shape = self._fields()
        return f"Reading({key=}, {sketch=}, {size=}, {quantities=}, {shape=})"

    def wire(self) -> TextReading:
        """This reading as a payload carries it (a tool activity's, :func:`with_readings`)."""
        return TextReading(
            key=self.key,
            sketch="".join(f"{h:08x}" for h in sorted(self.sketch)),
            size=self.size,
            quantities=self.quantities,
            shape=self.shape,
        )

    @classmethod
    def from_wire(cls, wire: TextReading) -> Reading:
        """The reading a payload carries; equal to the one read from the text. Its sketch is
        decoded the first time a rule compares it (most readings are matched by key alone)."""
        if not wire.sketch:
            return cls(wire.key, frozenset(), wire.size, wire.quantities, shape=wire.shape)
        return cls(
            wire.key, None, wire.size, wire.quantities, shape=wire.shape, sketch_hex=wire.sketch
        )

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> CoreSchema:
        """Rule counters (pydantic models) hold readings as they are: never serialized."""
        return core_schema.is_instance_schema(cls)

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


# The quantities digest of a text that keeps no number (most call texts).
_NO_QUANTITIES = hashlib.sha256(b"").hexdigest()[:16]


def _reading(masked: str, extra: str = "", shape_extra: str | None = None) -> Reading:
    """``shape_extra``: read an output's shape too, with this for what was left out of it."""
    encoded = masked.encode("utf-8")
    digest = hashlib.sha256(encoded)
    if extra:
        digest.update(extra.encode())
    shape = None
    if shape_extra is not None:
        # One C-speed pass: "8,244.20" and "912" both leave nothing.
        shaped = hashlib.sha256(encoded.translate(None, _NUMERALS))
        shaped.update(shape_extra.encode())
        shape = shaped.hexdigest()[:32]
    words = _words(masked)
    if len(masked) <= LAZY_MASKED_CHARS:
        return Reading(digest.hexdigest()[:32], None, len(words), None, masked, shape)
    return Reading(
        digest.hexdigest()[:32], _bottom_k(words), len(words), _quantities(masked), shape=shape
    )


def _read_output(
    text: str,
    values: list[str],
    window: int,
    labelled_ids: bool = False,
    ids: list[str] | None = None,
) -> Reading:
    """:func:`read_output`, with the argument values to mask already sorted out (``ids``:
    collects the ids read, as for :func:`_mask_volatile`)."""
    if len(text) <= window:
        return _reading(_mask(text, values, labelled_ids, ids), shape_extra="")
    head = window * 3 // 4
    tail = window - head
    # The middle left out still counts, as its size and its bytes with digits masked.
    # (Digits are single bytes in UTF-8, so masking the bytes masks the text.)
    rest = text[head : len(text) - tail]
    raw = rest.encode("utf-8", "replace")
    crc = zlib.crc32(raw.translate(_DIGIT_BYTES))
    read = text[:head] + "\n" + text[-tail:]
    return _reading(
        _mask(read, values, labelled_ids, ids),
        f"\0{len(rest) // 64}:{crc}",
        f"\0{zlib.crc32(raw.translate(None, _NUMERALS))}",
    )


def read_output(
    text: str, arguments: Mapping[str, Any] | None = None, *, window: int = WINDOW
) -> Reading:
    """One output, normalized (its ``key`` is the fingerprint). ``window``: the characters
    read in full (:func:`window_for`)."""
    return _read_output(text, _masked_values(arguments), window)


def _read_call(
    name: str,
    strings: list[str],
    window: int,
    labelled_ids: bool = False,
    ids: list[str] | None = None,
) -> Reading:
    joined = " ".join(strings)
    if len(joined) > window:
        joined = _windowed(joined, window)[0]
    return _reading(_mask(f"{name.rsplit('__', 1)[-1]} {joined}", [], labelled_ids, ids))


def read_call(name: str, arguments: Mapping[str, Any] | None, *, window: int = WINDOW) -> Reading:
    """What a call asks, normalized: its tool and every argument string (read within
    ``window``), masked."""
    strings: list[str] = []
    _collect_strings(arguments or {}, strings)
    return _read_call(name, strings, window)


class Exchange(NamedTuple):
    """One settled call as the rules read it (:func:`read_whole_exchange`)."""

    asked: Reading
    answer: Reading
    # Whether the answer names one of the call's own argument values.
    echoes: bool
    # What a call with several arguments names (:func:`names`), a private digest.
    named: str
    # Since ``WORLD_IDS_PATCH``: the ids the call's arguments and its answer hold, as private
    # digests (:func:`id_digests`; ``workflows.rules.world_ids``); empty before it.
    asked_ids: tuple[str, ...] = ()
    answer_ids: tuple[str, ...] = ()
    # Since ``WORLD_IDS_PATCH``: a private digest of the argument values the answer names
    # (what it is about: the trace, the pod), ``""`` when it names none or before it.
    echoed: str = ""

    def wire(self) -> ExchangeReadings:
        """This exchange as a tool activity returns it with the outcome (:func:`with_readings`)."""
        return ExchangeReadings(
            asked=self.asked.wire(),
            answer=self.answer.wire(),
            echoes=self.echoes,
            named=self.named,
            asked_ids=self.asked_ids,
            answer_ids=self.answer_ids,
            echoed=self.echoed,
        )


# An id shorter than this is too likely to be something else by chance (``#7``); ids read
# per text, at most; the hex digits of an id's digest.
MIN_ID_CHARS = 3
IDS_PER_TEXT = 64
ID_DIGEST_CHARS = 12


def id_digests(tokens: Iterable[str]) -> tuple[str, ...]:
    """Private digests (12 hex digits) of the distinct ``tokens`` of at least
    :data:`MIN_ID_CHARS` characters, in the order first read, at most :data:`IDS_PER_TEXT`."""
    seen: dict[str, None] = {}
    for token in tokens:
        if len(token) >= MIN_ID_CHARS and token not in seen:
            seen[token] = None
            if len(seen) == IDS_PER_TEXT:
                break
    return tuple(hashlib.sha256(t.encode()).hexdigest()[:ID_DIGEST_CHARS] for t in seen)


def read_whole_exchange(
    name: str,
    arguments: Mapping[str, Any] | None,
    text: str,
    *,
    window: int = WINDOW,
    labelled_ids: bool = False,
    world_ids: bool = False,
) -> Exchange:
    """One settled call, its arguments walked and their values sorted out once: what it
    asked (:func:`read_call`), what came back (:func:`read_output`), whether the answer
    holds one of the values :func:`mask_arguments` masks (an answer about what the call
    asked for: "trace tr_3a11: 7 observations") and what the call names (:func:`names`).
    ``labelled_ids``: as for :func:`_mask_volatile`; ``world_ids``: also the ids each text
    holds and which of the values the answer holds (``WORLD_IDS_PATCH``)."""
    strings: list[str] = []
    _collect_strings(arguments or {}, strings)
    values = _values_to_mask(strings)
    asked_ids: list[str] | None = [] if world_ids else None
    answer_ids: list[str] | None = [] if world_ids else None
    asked = _read_call(name, strings, window, labelled_ids, asked_ids)
    answer = _read_output(text, values, window, labelled_ids, answer_ids)
    echoed = [value for value in values if value in text]
    return Exchange(
        asked,
        answer,
        bool(echoed),
        names(arguments, labelled_ids=labelled_ids),
        id_digests(asked_ids or ()),
        id_digests(answer_ids or ()),
        _echoed_digest(echoed) if world_ids else "",
    )


def _echoed_digest(values: list[str]) -> str:
    if not values:
        return ""
    return hashlib.sha256("\0".join(sorted(values)).encode()).hexdigest()[:16]


# A call whose output or argument text is longer than this is read where it ran
# (:func:`with_readings`); the workflow task reads the shorter ones itself, within the
# batch's budget.
READ_WHERE_RUN_CHARS = LAZY_MASKED_CHARS


def with_readings(
    name: str,
    arguments: Mapping[str, Any] | None,
    outcome: ToolOutcome,
    *,
    labelled_ids: bool = False,
    world_ids: bool = False,
) -> ToolOutcome:
    """``outcome`` carrying :func:`read_whole_exchange` of its call (the whole :data:`WINDOW` of
    each text) when its argument or output text is long: the tool activity reads what it
    returns, so the workflow task, which would read every long text of a batch of fifty
    within :data:`BATCH_BUDGET`, reads none (``bench/guard_step.py``). The reading is
    recorded with the outcome in history, so a replay reads it back and never reads the
    text again; an outcome recorded without one (before it, or from an editor) is read by
    the workflow as before. ``labelled_ids``: the prompt's (``RunToolInput.labelled_ids``),
    as for :func:`_mask_volatile`; ``world_ids``: the prompt's (``RunToolInput.world_ids``),
    the ids each text holds too."""
    text = outcome.error_message or outcome.content
    strings: list[str] = []
    _collect_strings(arguments or {}, strings)
    if len(text) <= READ_WHERE_RUN_CHARS and sum(map(len, strings)) <= READ_WHERE_RUN_CHARS:
        return outcome
    read = read_whole_exchange(
        name, arguments, text, labelled_ids=labelled_ids, world_ids=world_ids
    )
    return outcome.model_copy(update={"readings": read.wire()})
