"""The normalizer (workflows/rules/normalize.py): what it masks,
what it keeps, when two readings are alike, and that it is deterministic and bounded."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from seawall.runtime.converter import seawall_data_converter
from workflows.contracts import ToolCall, ToolOutcome
from workflows.contracts.outcome import ExchangeReadings, TextReading
from workflows.rules import LoopRules, LoopSettings
from workflows.rules.evidence import call_evidence
from workflows.rules.normalize import (
    BATCH_BUDGET,
    MIN_WINDOW,
    READ_WHERE_RUN_CHARS,
    WINDOW,
    Reading,
    id_digests,
    mask,
    names,
    read_call,
    read_output,
    read_whole_exchange,
    similarity,
    window_for,
    with_readings,
)
from workflows.seed import GuardMode

WIRE = seawall_data_converter.payload_converter


def test_volatile_tokens_are_masked_and_quantities_are_kept() -> None:
    text = (
        "2026-12-06T08:32:05Z job 7f3a9c21e running, request_id: 42, revision 19, "
        "took 1.2s, size 12.3 KB, at 1733470000, trace 4bf92f3577b34da6a3ce929d0e0e4736, "
        'req_8fA2xQ91bZ9q, {"took_ms": 198}, updated 3 minutes ago; 3 failed, 12 passed, 45%'
    )
    masked = mask(text)
    for volatile in ("08:32:05", "7f3a9c21e", "42", "19", "1.2s", "12.3", "1733470000", "4bf92f"):
        assert volatile not in masked, volatile
    assert "req_8fA2" not in masked and "198" not in masked and "3 minutes" not in masked
    assert "revision <n>" in masked and "request_id: <n>" in masked
    assert "3 failed, 12 passed, 45%" in masked


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        # Counter labels: any case, ``_id``/``No``/``Number`` suffixes, ``#``, quotes, a
        # separator on the line before, and non-ASCII letters that match case-insensitively.
        ("revision 94", "revision <n>"),
        ("rev #94", "rev #<n>"),
        ('request_id": 42', 'request_id": <n>'),
        ("seqNo=5", "seqNo=<n>"),
        ("thoughtNumber:\n3", "thoughtNumber: <n>"),
        ("retry\n#4", "retry #<n>"),
        ("attempt#\n4", "attempt# <n>"),
        ("step\u00a07", "step <n>"),
        ("\u017feq 5", "\u017feq <n>"),
        ("run c63a10", "run <id>"),
        # Duration labels: a word that starts with one, a ``_secs``/``Ms`` ending, quotes.
        ('{"took_ms": 198}', '{"took_ms": <duration>}'),
        ("latencyMs: 40", "latencyMs: <duration>"),
        ('elapsed = "12"', 'elapsed = "<duration>"'),
        ("took2: 5", "took2: <duration>"),
        ("waiting_secs=30", "waiting_secs=<duration>"),
        # Quantities and look-alikes stay.
        ("size 94", "size 94"),
        ('"count": 7', '"count": 7'),
        ("total=12", "total=12"),
        ("xrevision 3", "xrevision 3"),
        ("run-c63a10", "run-c63a10"),
        ("tries: 4", "tries: 4"),
    ],
)
def test_a_number_is_masked_by_its_label_however_the_label_is_written(
    text: str, masked: str
) -> None:
    assert mask(text) == masked


@pytest.mark.parametrize("chunk", ["a6aae6", "6bb37f", "402817", "9"])
def test_since_looks_and_ids_a_labelled_id_is_one_id_whatever_its_characters(chunk: str) -> None:
    """Codex's six-hex chunk ids: one that begins with a digit was kept and one of digits only
    read as a counter, so an unchanged answer was new now and then (LOOKS_AND_IDS_PATCH)."""
    text = f"Chunk ID: {chunk}\nWall time: 0.41 seconds\nOutput:\nschemas/a.json"
    assert (
        mask(text, labelled_ids=True)
        == "Chunk ID: <id> Wall time: <duration> Output: schemas/a.json"
    )
    assert mask(f"run {chunk}: done", labelled_ids=True) == "run <id>: done"
    # Before it, as histories recorded then read it.
    before = {"a6aae6": "<id>", "6bb37f": "6bb37f", "402817": "<n>", "9": "<n>"}[chunk]
    assert mask(text).startswith(f"Chunk ID: {before} ")
    # Unlabelled words and quantities are what they were.
    assert mask("size 94, 6bb37f left", labelled_ids=True) == "size 94, 6bb37f left"


def test_since_looks_and_ids_a_time_taken_may_be_labelled_with_hyphens() -> None:
    header = "x-request-id: req_4e6bcd5b0bc77c1c7bd1b6b1\nopenai-processing-ms: 137"
    assert mask(header, labelled_ids=True) == "x-request-id: <id> openai-processing-ms: <duration>"
    assert mask(header).endswith("openai-processing-ms: 137")  # before it, a quantity
    assert mask("retry-count: 3", labelled_ids=True) == "retry-count: 3"


def test_a_long_answer_is_read_where_it_ran_as_its_prompt_reads_ids() -> None:
    text = "".join(f"Chunk ID: {n}b{n}c1f\n{LOG_LINE}" for n in range(12))
    other = text.replace("Chunk ID: 0b0c1f", "Chunk ID: 91e2a0")
    read = [
        with_readings("exec", {}, _outcome(t), labelled_ids=True).readings for t in (text, other)
    ]
    assert read[0] is not None and read[1] is not None
    assert read[0].answer.key == read[1].answer.key
    old = [with_readings("exec", {}, _outcome(t)).readings for t in (text, other)]
    assert old[0] is not None and old[1] is not None
    assert old[0].answer.key != old[1].answer.key


def test_the_calls_own_arguments_are_masked_in_its_output() -> None:
    assert mask("not found: src/a.py", {"path": "src/a.py"}) == "not found: <arg>"


def test_two_answers_that_differ_only_in_volatile_parts_have_one_fingerprint() -> None:
    first = read_output("[2026-12-06T08:00:01Z] status=pending (request 8812, took 41ms)")
    second = read_output("[2026-12-06T09:14:55Z] status=pending (request 8813, took 7ms)")
    assert first.key == second.key and first.alike(second, 0.99)
    moved = read_output("[2026-12-06T09:14:55Z] status=running (request 8813, took 7ms)")
    assert moved.key != first.key


def test_long_texts_alike_by_words_but_a_moved_count_is_new() -> None:
    base = "crawl status scraping pages of the docs site for the export job completed: {} total: 40"
    three, three_again, seven = (read_output(base.format(n)) for n in (3, 3, 7))
    assert three.alike(three_again, 0.8)
    assert not three.alike(seven, 0.8)  # progress looks like a count that moves
    reordered = read_output(
        "total: 40 completed: 3 for the export job: scraping pages of the docs site"
    )
    assert three.alike(reordered, 0.8)


def test_answers_that_differ_only_in_their_numbers_have_one_shape() -> None:
    listing = "src/ package.json README.md node_modules/ [Context: {} / 200,000 tokens used]"
    grown = [read_output(listing.format(n)) for n in ("38,744", "39,661", "912")]
    assert len({r.key for r in grown}) == 3  # each count is kept: what progress looks like
    assert len({r.shape for r in grown}) == 1
    assert read_output(listing.replace("README", "CHANGES").format(912)).shape != grown[0].shape
    assert read_call("ls", {"path": "."}).shape is None  # what a call asks has no shape
    # In the part of a long text left out of its window too.
    head, tail = "status ok\n" * 10, " tail"
    a, b, c = (head + "a" * 2_000 + f"rows {n} " * 100 + "b" * 2_000 + tail for n in (1, 22, 3))
    shapes = {read_output(t, window=MIN_WINDOW).shape for t in (a, b, c)}
    assert len(shapes) == 1 and None not in shapes


def test_short_texts_are_alike_only_when_their_masked_text_is_the_same() -> None:
    a, b = read_call("read_file", {"path": "a.py"}), read_call("read_file", {"path": "b.py"})
    assert not a.long and not a.alike(b, 0.0)
    assert a.alike(read_call("read_file", {"path": "a.py"}), 1.0)


def test_a_reworded_question_is_alike_and_another_question_is_not() -> None:
    asked = read_call(
        "ask_user", {"question": "Which database should the new service use, Postgres or MySQL?"}
    )
    again = read_call(
        "ask_user",
        {"question": "Postgres or MySQL: which database should I set up for the new service?"},
    )
    other = read_call(
        "ask_user",
        {"question": "What should the invoices table be called, and who owns the migrations?"},
    )
    assert asked.alike(again, 0.5)
    assert not asked.alike(other, 0.5)


@given(st.text(max_size=400), st.text(max_size=400))
def test_similarity_is_symmetric_and_bounded(a: str, b: str) -> None:
    x, y = read_output(a).sketch, read_output(b).sketch
    assert similarity(x, y) == similarity(y, x)
    assert 0.0 <= similarity(x, y) <= 1.0
    assert similarity(x, x) == 1.0


def test_a_batch_reads_a_bounded_window_and_the_rest_still_counts() -> None:
    assert window_for([100] * 10) == WINDOW
    assert window_for([10_000] * 50) == max(MIN_WINDOW, BATCH_BUDGET // 50)
    head = "status ok\n" * 10
    long_a = head + "x" * 20_000 + " tail"
    long_b = head + "x" * 19_000 + "y" * 1_000 + " tail"
    drift_a = head + "a" * 2_000 + "row 1 " * 100 + "b" * 2_000 + " tail"
    drift_b = head + "a" * 2_000 + "row 2 " * 100 + "b" * 2_000 + " tail"
    window = MIN_WINDOW
    assert read_output(long_a, window=window).key != read_output(long_b, window=window).key
    # A number that drifts in the part left out does not make the text new.
    assert read_output(drift_a, window=window).key == read_output(drift_b, window=window).key


def printed_per_hash_seed(code: str, seeds: range) -> set[str]:
    """What ``code`` prints in a fresh interpreter under each ``PYTHONHASHSEED`` of ``seeds``."""
    return {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": str(seed), "PATH": ""},
        ).stdout
        for seed in seeds
    }


def test_arguments_of_one_length_are_masked_alike_in_every_process() -> None:
    """Two argument values of one length that overlap in the output ("abc…" and "bcd…" in
    "abcd…") mask it one way whatever order the process's hash seed gives a set."""
    code = (
        "from workflows.rules.normalize import mask_arguments, read_whole_exchange;"
        "args = {'a': 'abcdefgh', 'b': 'bcdefghi'};"
        "print(mask_arguments('x abcdefghi y', args),"
        " read_whole_exchange('t', args, 'x abcdefghi y')[1].key)"
    )
    runs = printed_per_hash_seed(code, range(1, 9))
    assert len(runs) == 1, runs


def test_readings_are_the_same_in_another_process() -> None:
    """CRC-32, not ``hash()``: a replay on another worker reads the same (PYTHONHASHSEED)."""
    code = (
        "from workflows.rules.normalize import read_output;"
        "r = read_output('job 7 says: waiting for the lock held by pid 88 since 10:00:00');"
        "print(r.key, sorted(r.sketch), r.quantities)"
    )
    assert len(printed_per_hash_seed(code, range(1, 3))) == 1


# --- read where the call ran (with_readings) -------------------------------------------------


def _outcome(content: str) -> ToolOutcome:
    return ToolOutcome(call_id="c1", tool_name="query_logs", status="success", content=content)


LOG_LINE = "2026-12-07T09:14:03.221Z request_id=8fa2c91b77e0d4a3 took_ms=1834 pool exhausted\n"


def test_a_long_text_is_read_where_its_call_ran_and_a_short_one_is_not() -> None:
    arguments = {"service": "api"}
    short = with_readings("query_logs", arguments, _outcome("pool exhausted"))
    assert short.readings is None
    long_text = LOG_LINE * 20
    assert len(long_text) > READ_WHERE_RUN_CHARS
    read = with_readings("query_logs", arguments, _outcome(long_text))
    asked, answer, echoes, named, *ids = read_whole_exchange("query_logs", arguments, long_text)
    assert ids == [(), (), ""]  # read only since WORLD_IDS_PATCH
    assert read.readings == ExchangeReadings(
        asked=asked.wire(), answer=answer.wire(), echoes=echoes, named=named
    )
    # Since WORLD_IDS_PATCH the ids each text holds come back too, as private digests.
    world = with_readings("query_logs", arguments, _outcome(long_text), world_ids=True)
    assert world.readings is not None and world.readings.asked_ids == ()
    assert world.readings.answer_ids == id_digests(["8fa2c91b77e0d4a3"])
    assert not world.readings.echoed  # the answer names none of the call's values
    about = with_readings(
        "query_logs", {"service": "payments"}, _outcome(long_text + " payments"), world_ids=True
    )
    assert about.readings is not None and about.readings.echoed
    assert "8fa2c91b77e0d4a3" not in WIRE.to_payload(world.readings).data.decode()
    # What the call names and whether its answer names it are read there too.
    named = {"service": "api", "since": "5m"}
    echoed = with_readings("query_logs", named, _outcome(long_text + " api")).readings
    assert echoed is not None
    assert (echoed.echoes, echoed.named) == (True, names(named))
    assert names(named) and not names(arguments)  # one argument names nothing
    assert read.model_copy(update={"readings": None}) == _outcome(long_text)
    # A long argument (a file's content to write) is read there too, whatever the output.
    content = {"path": "a.py", "content": "x = 1\n" * 200}
    assert with_readings("write_file", content, _outcome("wrote a.py")).readings is not None


@given(st.text(max_size=2_000))
def test_a_reading_carried_in_a_payload_is_the_reading_of_its_text(text: str) -> None:
    reading = read_output(text)
    assert Reading.from_wire(reading.wire()) == reading
    [back] = WIRE.from_payloads(WIRE.to_payloads([reading.wire()]), [TextReading])
    assert Reading.from_wire(back) == reading


@pytest.mark.parametrize(
    "bad",
    [
        {"key": "not hex", "sketch": "", "size": 0, "quantities": "0" * 16},
        {"key": "0" * 32, "sketch": "abc", "size": 0, "quantities": "0" * 16},
        {"key": "0" * 32, "sketch": "0" * 8 * 25, "size": 0, "quantities": "0" * 16},
        {"key": "0" * 32, "sketch": "", "size": -1, "quantities": "0" * 16},
        {"key": "0" * 32, "sketch": "", "size": 0, "quantities": "0" * 16, "text": "leak"},
        {"key": "0" * 32, "sketch": "", "size": 0, "quantities": "0" * 16, "shape": "0" * 31},
    ],
)
def test_a_malformed_reading_is_refused(bad: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        TextReading.model_validate(bad)


def test_the_rules_decide_on_the_activitys_reading_and_read_only_the_rest() -> None:
    call = ToolCall(call_id="c1", name="query_logs", arguments={"service": "api"})
    text = LOG_LINE * 20
    carried = with_readings(call.name, call.arguments, _outcome(text))
    assert carried.readings is not None
    # The reading carried is what decides: a different one makes a different fingerprint.
    other = read_output("something else entirely " * 40).wire()
    swapped = carried.model_copy(
        update={"readings": ExchangeReadings(asked=carried.readings.asked, answer=other)}
    )
    evidence = call_evidence(call, "d", carried, window=MIN_WINDOW)
    assert evidence.fingerprint == carried.readings.answer.key
    assert call_evidence(call, "d", swapped, window=MIN_WINDOW).fingerprint == other.key
    # Without a reading the workflow reads the text itself, within the window it is given.
    assert call_evidence(call, "d", _outcome(text), window=MIN_WINDOW).fingerprint == (
        read_output(text, call.arguments, window=MIN_WINDOW).key
    )


def test_only_the_texts_no_activity_read_share_the_batchs_budget() -> None:
    rules = LoopRules(LoopSettings(), GuardMode.ENFORCE, route_forced_off=False, normalized=True)
    calls = [ToolCall(call_id=f"c{n}", name="query_logs", arguments={}) for n in range(50)]
    read = [with_readings("query_logs", {}, _outcome(LOG_LINE * 120)) for _ in range(49)]
    unread = _outcome("status ok\n" * 10 + "a" * 2_000 + "row 2 " * 100 + "b" * 2_000)
    # Read with the whole window, the drifting row is in it; with a fiftieth of the budget,
    # it is in the part left out.
    whole = read_output(unread.content, window=WINDOW)
    assert whole.key != read_output(unread.content, window=BATCH_BUDGET // 50).key
    rules.settle(calls, ["d"] * 50, [*read, unread])
    assert rules._settled[-1].answer == whole  # one text left to read: the whole window
