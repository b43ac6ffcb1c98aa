"""RFC 9204 §2.2: the decoder, fed by hand, by other encoders' files and by pylsqpack live.

- Blocked streams (§2.2.1): a section that needs inserts not yet received waits, and is
  decoded when they arrive, whatever order the streams were blocked in.
- State synchronisation (§2.2.2): a Section Acknowledgment after each section with a
  non-zero Required Insert Count and none otherwise; an Insert Count Increment for inserts
  no acknowledgment covered; a Stream Cancellation for an abandoned stream.
- Events: what the decoder records carries the exact input bytes, labelled bit by bit.
- Interop: ls-qpack's and F5's encodings of the netbsd corpus and the RFC's examples
  (tests/vectors/qifs-encoded, copied from the qifs corpus) decode to their .qif exactly;
  so does whatever pylsqpack encodes live, including Hypothesis-made header lists.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import pylsqpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from span_checks import assert_every_bit_labelled_once

from h3learn.events import Event, EventLog
from h3learn.qpack.decoder import Decoder
from h3learn.qpack.encoder_instructions import (
    Duplicate,
    InsertWithLiteralName,
    InsertWithNameReference,
    SetDynamicTableCapacity,
)
from h3learn.qpack.errors import DecompressionFailed
from h3learn.qpack.field_lines import (
    FieldSectionPrefix,
    IndexedFieldLine,
    IndexedFieldLineWithPostBaseIndex,
    LiteralFieldLineWithLiteralName,
    LiteralFieldLineWithNameReference,
    LiteralFieldLineWithPostBaseNameReference,
    delta_from_base,
    encode_required_insert_count,
)
from h3learn.wire.spans import SpanWriter

VECTORS = Path(__file__).resolve().parent.parent / "vectors"
ENCODED = VECTORS / "qifs-encoded"
INPUTS = VECTORS / "qif-inputs"

Header = tuple[bytes, bytes]

# -- helpers --------------------------------------------------------------------------------


def wire(*units: Any) -> bytes:
    """Instructions or field lines, serialised one after another."""
    writer = SpanWriter(record=False)
    for unit in units:
        unit.serialize(writer)
    return writer.unit()


def section(
    required_insert_count: int, base: int, *lines: Any, max_table_capacity: int = 4096
) -> bytes:
    """An encoded field section: the prefix of RFC 9204 §4.5.1, then ``lines``."""
    sign, delta_base = delta_from_base(required_insert_count, base)
    prefix = FieldSectionPrefix(
        encode_required_insert_count(required_insert_count, max_table_capacity), sign, delta_base
    )
    return wire(prefix, *lines)


def insert(name: bytes, value: bytes) -> InsertWithLiteralName:
    return InsertWithLiteralName(name, value, False, False)


def decoder_with(entries: list[Header], capacity: int = 4096, blocked: int = 10) -> Decoder:
    """A decoder whose table holds ``entries`` (absolute indexes 0, 1, ...)."""
    decoder = Decoder(max_table_capacity=capacity, blocked_streams=blocked)
    decoder.feed_encoder(
        wire(SetDynamicTableCapacity(capacity), *(insert(n, v) for n, v in entries))
    )
    return decoder


def assert_events_label_their_bytes(events: list[Event]) -> None:
    for event in events:
        if event.raw:
            assert_every_bit_labelled_once(event.raw, event.fields)
        else:
            assert event.fields == ()


def read_records(data: bytes) -> list[tuple[int, bytes]]:
    """A qifs record file: stream id (u64), length (u32), data; big-endian."""
    records = []
    offset = 0
    while offset < len(data):
        stream_id, length = struct.unpack_from(">QI", data, offset)
        offset += 12
        records.append((stream_id, data[offset : offset + length]))
        offset += length
    assert offset == len(data)
    return records


def read_qif(path: Path) -> list[list[Header]]:
    """A .qif file: ``name<TAB>value`` lines, a blank line after each section."""
    sections: list[list[Header]] = []
    current: list[Header] = []
    for line in path.read_bytes().split(b"\n"):
        if line.startswith(b"#"):
            continue
        if not line:
            if current:
                sections.append(current)
            current = []
            continue
        name, _, value = line.partition(b"\t")
        current.append((name, value))
    if current:
        sections.append(current)
    return sections


# -- decoding -------------------------------------------------------------------------------


def test_static_only_section_decodes_with_no_dynamic_table() -> None:
    decoder = Decoder()
    data = section(
        0,
        0,
        IndexedFieldLine(True, 17),
        LiteralFieldLineWithNameReference(False, True, 1, b"/index.html", False),
        LiteralFieldLineWithLiteralName(False, b"x-test", b"1", True, False),
        max_table_capacity=0,
    )
    decoded = decoder.decode(0, data)
    assert decoded is not None
    assert decoded.headers == [(b":method", b"GET"), (b":path", b"/index.html"), (b"x-test", b"1")]
    assert decoder.data_to_send() == b""


def test_section_with_no_field_lines_decodes_to_no_fields() -> None:
    # §4.5: "a possibly empty sequence of representations".
    decoded = Decoder().decode(0, b"\x00\x00")
    assert decoded is not None and decoded.headers == []


def test_fields_come_out_in_the_order_of_their_representations() -> None:
    # §2.2: the decoder MUST emit field lines in the order their representations appear.
    decoder = decoder_with([(b"a", b"1"), (b"b", b"2"), (b"c", b"3")])
    data = section(
        3,
        1,
        IndexedFieldLineWithPostBaseIndex(1),  # absolute 2
        IndexedFieldLine(True, 25),
        IndexedFieldLine(False, 0),  # absolute 0
        LiteralFieldLineWithPostBaseNameReference(False, 0, b"x", False),  # name of 1
        IndexedFieldLineWithPostBaseIndex(0),  # absolute 1
    )
    decoded = decoder.decode(4, data)
    assert decoded is not None
    assert decoded.headers == [
        (b"c", b"3"),
        (b":status", b"200"),
        (b"a", b"1"),
        (b"b", b"x"),
        (b"b", b"2"),
    ]
    assert (decoded.required_insert_count, decoded.base) == (3, 1)


def test_never_indexed_bit_is_reported_per_field() -> None:
    decoder = decoder_with([(b"secret", b"v")])
    data = section(
        1,
        1,
        LiteralFieldLineWithNameReference(True, False, 0, b"hidden", False),
        LiteralFieldLineWithLiteralName(True, b"cookie", b"c", False, False),
        LiteralFieldLineWithNameReference(False, True, 5, b"c", False),
        IndexedFieldLine(True, 1),
    )
    decoded = decoder.decode(0, data)
    assert decoded is not None
    assert decoded.never_indexed == [True, True, False, False]


def test_duplicate_entries_in_the_table_are_not_an_error() -> None:
    # §3.2: duplicate entries MUST NOT be treated as an error.
    decoder = decoder_with([(b"a", b"1"), (b"a", b"1")])
    decoder.feed_encoder(wire(Duplicate(0)))
    decoded = decoder.decode(0, section(3, 3, *(IndexedFieldLine(False, i) for i in range(3))))
    assert decoded is not None and decoded.headers == [(b"a", b"1")] * 3


def test_insert_may_name_the_entry_its_own_insertion_evicts() -> None:
    # §3.2.2: the referenced name survives the eviction the insert causes.
    decoder = decoder_with([(b"n" * 20, b"v" * 20)], capacity=100)  # 72 of 100 bytes
    decoder.feed_encoder(wire(InsertWithNameReference(False, 0, b"w" * 20, False)))
    assert [(e.absolute_index, e.name, e.value) for e in decoder.table] == [
        (1, b"n" * 20, b"w" * 20)
    ]
    decoder.feed_encoder(wire(Duplicate(0)))
    assert [(e.absolute_index, e.name, e.value) for e in decoder.table] == [
        (2, b"n" * 20, b"w" * 20)
    ]


def test_encoder_stream_split_anywhere_gives_the_same_table() -> None:
    stream = wire(
        SetDynamicTableCapacity(300),
        InsertWithNameReference(True, 0, b"www.example.com", True),
        InsertWithLiteralName(b"custom-key", b"custom-value", True, False),
        Duplicate(1),
        InsertWithNameReference(False, 0, b"v" * 200, False),
    )
    whole = Decoder(300)
    whole.feed_encoder(stream)
    expected = [(e.absolute_index, e.name, e.value) for e in whole.table]
    one_by_one = Decoder(300)
    for byte in stream:
        one_by_one.feed_encoder(bytes((byte,)))
    assert [(e.absolute_index, e.name, e.value) for e in one_by_one.table] == expected
    assert one_by_one.table.insert_count == whole.table.insert_count == 4


# -- §2.2.1: blocked streams ----------------------------------------------------------------


def test_section_needing_inserts_not_yet_received_is_blocked() -> None:
    decoder = decoder_with([], blocked=1)
    assert decoder.decode(4, section(1, 0, IndexedFieldLineWithPostBaseIndex(0))) is None
    assert decoder.blocked_streams == [4]
    assert decoder.data_to_send() == b""  # nothing decoded, nothing to acknowledge


def test_blocked_streams_resume_when_their_inserts_arrive_in_any_order() -> None:
    decoder = decoder_with([], blocked=3)
    # Three streams blocked in the order 4, 8, 12, needing 3, 1 and 2 inserts.
    assert decoder.decode(4, section(3, 0, IndexedFieldLineWithPostBaseIndex(2))) is None
    assert decoder.decode(8, section(1, 0, IndexedFieldLineWithPostBaseIndex(0))) is None
    assert decoder.decode(12, section(2, 2, IndexedFieldLine(False, 0))) is None
    assert sorted(decoder.blocked_streams) == [4, 8, 12]

    first = decoder.feed_encoder(wire(insert(b"a", b"1"))).sections
    assert [(s.stream_id, s.headers) for s in first] == [(8, [(b"a", b"1")])]
    second = decoder.feed_encoder(wire(insert(b"b", b"2"))).sections
    assert [(s.stream_id, s.headers) for s in second] == [(12, [(b"b", b"2")])]
    assert decoder.blocked_streams == [4]
    third = decoder.feed_encoder(wire(insert(b"c", b"3"))).sections
    assert [(s.stream_id, s.headers) for s in third] == [(4, [(b"c", b"3")])]
    assert decoder.blocked_streams == []
    # Each was acknowledged once decoded (§4.4.1): streams 8, 12, 4.
    assert decoder.data_to_send() == bytes.fromhex("888c84")


def test_one_encoder_stream_chunk_can_unblock_several_streams() -> None:
    decoder = decoder_with([], blocked=2)
    decoder.decode(4, section(2, 0, IndexedFieldLineWithPostBaseIndex(1)))
    decoder.decode(8, section(1, 0, IndexedFieldLineWithPostBaseIndex(0)))
    unblocked = decoder.feed_encoder(wire(insert(b"a", b"1"), insert(b"b", b"2"))).sections
    assert sorted(s.stream_id for s in unblocked) == [4, 8]
    assert decoder.blocked_streams == []


def test_inserts_that_do_not_reach_the_required_count_leave_the_stream_blocked() -> None:
    decoder = decoder_with([], blocked=1)
    decoder.decode(4, section(3, 0, IndexedFieldLineWithPostBaseIndex(2)))
    assert decoder.feed_encoder(wire(insert(b"a", b"1"), insert(b"b", b"2"))).sections == []
    assert decoder.feed_encoder(wire(SetDynamicTableCapacity(4096))).sections == []
    assert decoder.blocked_streams == [4]


def test_sections_behind_a_blocked_one_on_its_stream_wait_and_keep_their_order() -> None:
    # A stream's field sections are decoded in the order they arrive (a header section, then
    # trailers): one that needs nothing waits behind the stream's blocked section, one that
    # needs more inserts blocks the stream again, and the stream counts once (§2.1.2).
    log = EventLog()
    decoder = Decoder(4096, 1, recorder=log.for_endpoint("server"))
    decoder.feed_encoder(wire(SetDynamicTableCapacity(4096)))
    assert decoder.decode(4, section(1, 0, IndexedFieldLineWithPostBaseIndex(0))) is None
    assert decoder.decode(4, section(0, 0, IndexedFieldLine(True, 17))) is None
    assert decoder.decode(4, section(2, 0, IndexedFieldLineWithPostBaseIndex(1))) is None
    assert decoder.blocked_streams == [4]

    first = decoder.feed_encoder(wire(insert(b"a", b"1"))).sections
    assert [s.headers for s in first] == [[(b"a", b"1")], [(b":method", b"GET")]]
    assert decoder.blocked_streams == [4]
    second = decoder.feed_encoder(wire(insert(b"b", b"2"))).sections
    assert [s.headers for s in second] == [[(b"b", b"2")]]
    assert decoder.blocked_streams == []
    states = [
        (event.data["state"], event.data["required_insert_count"])
        for event in log.events
        if event.name == "stream_state_updated"
    ]
    assert states == [("blocked", 1), ("unblocked", 1), ("blocked", 2), ("unblocked", 2)]


def test_a_cancelled_stream_forgets_every_section_waiting_on_it() -> None:
    decoder = decoder_with([], blocked=1)
    decoder.decode(4, section(1, 0, IndexedFieldLineWithPostBaseIndex(0)))
    decoder.decode(4, section(0, 0, IndexedFieldLine(True, 17)))
    decoder.cancel_stream(4)
    assert decoder.blocked_streams == []
    assert decoder.feed_encoder(wire(insert(b"a", b"1"))).sections == []
    # The stream is free again, and another may now take the one blocked place.
    assert decoder.decode(8, section(2, 0, IndexedFieldLineWithPostBaseIndex(1))) is None


#: An Indexed Field Line (static) whose index is past the 2^62 - 1 h3learn accepts: beyond
#: this decoder's limits, which costs the stream only (RFC 9204 §7.4).
OVER_LIMIT_LINE = b"\xff" + b"\xff" * 8 + b"\x7f"


@pytest.mark.parametrize("failing_first", [False, True])
def test_a_section_past_the_limits_costs_only_its_stream_when_inserts_unblock_several(
    failing_first: bool,
) -> None:
    """RFC 9204 §2.2.1, §7.4: the other streams the inserts unblock are still decoded."""
    decoder = decoder_with([], blocked=3)
    good = section(1, 1, IndexedFieldLine(False, 0))
    bad = section(1, 1, IndexedFieldLine(False, 0)) + OVER_LIMIT_LINE
    order = [(4, bad), (0, good), (8, good)] if failing_first else [(0, good), (4, bad), (8, good)]
    for stream_id, data in order:
        assert decoder.decode(stream_id, data) is None
    assert decoder.decode(4, good) is None  # queued behind the failing one: dropped with it
    released = decoder.feed_encoder(wire(insert(b"a", b"1")))
    assert [(s.stream_id, s.headers) for s in released.sections] == [
        (0, [(b"a", b"1")]),
        (8, [(b"a", b"1")]),
    ]
    [failure] = released.failures
    assert (failure.stream_id, failure.beyond_limit, failure.rfc) == (4, True, "9204#4.1.1")
    assert decoder.blocked_streams == []
    assert decoder.data_to_send() == bytes.fromhex("8088")  # streams 0 and 8 acknowledged
    decoder.cancel_stream(4, end_received=True)  # what HTTP/3 does with the failure
    assert decoder.data_to_send() == bytes.fromhex("44")


def test_section_exactly_at_the_insert_count_is_not_blocked() -> None:
    decoder = decoder_with([(b"a", b"1")], blocked=0)
    assert decoder.decode(0, section(1, 1, IndexedFieldLine(False, 0))) is not None


# -- §2.2.2: what the decoder tells the encoder ---------------------------------------------


def test_section_with_dynamic_references_is_acknowledged() -> None:
    decoder = decoder_with([(b"a", b"1")])
    decoder.decode(4, section(1, 1, IndexedFieldLine(False, 0)))
    assert decoder.data_to_send() == bytes.fromhex("84")


def test_section_with_required_insert_count_zero_is_not_acknowledged() -> None:
    decoder = decoder_with([(b"a", b"1")])
    decoder.data_to_send()  # the Insert Count Increment for the insert
    decoder.decode(4, section(0, 0, IndexedFieldLine(True, 17)))
    assert decoder.data_to_send() == b""


def test_every_section_on_a_stream_is_acknowledged_on_its_own() -> None:
    # §2.2.2.1: a stream may carry several sections (e.g. headers and trailers).
    decoder = decoder_with([(b"a", b"1")])
    decoder.decode(4, section(1, 1, IndexedFieldLine(False, 0)))
    decoder.decode(4, section(1, 1, IndexedFieldLine(False, 0)))
    assert decoder.data_to_send() == bytes.fromhex("8484")


def test_acknowledgment_of_a_large_stream_id_uses_continuation_bytes() -> None:
    decoder = decoder_with([(b"a", b"1")])
    decoder.decode(200, section(1, 1, IndexedFieldLine(False, 0)))
    assert decoder.data_to_send() == bytes.fromhex("ff49")  # 127 + 73


def test_inserts_are_announced_with_one_insert_count_increment() -> None:
    decoder = Decoder(4096)
    decoder.feed_encoder(wire(SetDynamicTableCapacity(4096)))
    assert decoder.data_to_send() == b""  # a capacity change is not acknowledged (§4.3.1)
    decoder.feed_encoder(wire(insert(b"a", b"1"), insert(b"b", b"2"), Duplicate(0)))
    assert decoder.data_to_send() == bytes.fromhex("03")
    assert decoder.data_to_send() == b""


def test_acknowledgment_covers_inserts_up_to_its_required_insert_count() -> None:
    # §2.1.4: a Section Acknowledgment raises the Known Received Count to its RIC, so only
    # the inserts after it need an Insert Count Increment.
    decoder = decoder_with([(b"a", b"1"), (b"b", b"2"), (b"c", b"3")])
    decoder.decode(4, section(2, 2, IndexedFieldLine(False, 0)))
    assert decoder.data_to_send() == bytes.fromhex("8401")
    decoder.feed_encoder(wire(insert(b"d", b"4")))
    decoder.decode(8, section(4, 4, IndexedFieldLine(False, 0)))
    assert decoder.data_to_send() == bytes.fromhex("88")


def test_cancelling_a_stream_emits_a_stream_cancellation() -> None:
    decoder = decoder_with([(b"a", b"1")])
    decoder.data_to_send()
    decoder.cancel_stream(4)
    decoder.cancel_stream(100)
    assert decoder.data_to_send() == bytes.fromhex("447f25")  # 63 + 37


def test_cancelling_a_blocked_stream_forgets_its_section() -> None:
    decoder = decoder_with([], blocked=1)
    decoder.decode(4, section(1, 0, IndexedFieldLineWithPostBaseIndex(0)))
    decoder.cancel_stream(4)
    assert decoder.blocked_streams == []
    assert decoder.feed_encoder(wire(insert(b"a", b"1"))).sections == []
    assert decoder.data_to_send() == bytes.fromhex("4401")
    # The slot is free again: another stream may block.
    assert decoder.decode(8, section(2, 0, IndexedFieldLineWithPostBaseIndex(1))) is None


def test_a_stream_read_whole_and_acknowledged_is_owed_no_stream_cancellation() -> None:
    """RFC 9204 §2.2.2.2: nothing is outstanding once every referencing section is acked."""
    decoder = decoder_with([(b"a", b"1")])
    decoder.decode(4, section(1, 1, IndexedFieldLine(False, 0)))
    decoder.decode(4, section(0, 0, IndexedFieldLine(True, 17)))
    assert decoder.data_to_send() == bytes.fromhex("84")
    decoder.cancel_stream(4, end_received=True)
    assert decoder.data_to_send() == b""


def test_a_stream_read_whole_with_a_failed_referencing_section_is_owed_a_cancellation() -> None:
    """RFC 9204 §2.2.2.2, §4.4.2: a section that failed was never acknowledged, so the
    encoder still counts its references until the Stream Cancellation."""
    decoder = decoder_with([(b"a", b"1")])
    decoder.data_to_send()
    with pytest.raises(DecompressionFailed):
        decoder.decode(4, section(1, 1, IndexedFieldLine(False, 0)) + OVER_LIMIT_LINE)
    decoder.cancel_stream(4, end_received=True)
    assert decoder.data_to_send() == bytes.fromhex("44")


@pytest.mark.parametrize(
    ("required_insert_count", "expected"), [(1, "44"), (0, "")], ids=["references", "static"]
)
def test_a_stream_read_whole_with_unread_referencing_sections_is_owed_a_cancellation(
    required_insert_count: int, expected: str
) -> None:
    """RFC 9204 §2.2.2.2: a section never handed to the decoder (trailers behind a
    malformed header section) holds the encoder's references too, if it has any."""
    decoder = decoder_with([(b"a", b"1")])
    decoder.decode(4, section(0, 0, IndexedFieldLine(True, 17)))
    decoder.data_to_send()
    line = IndexedFieldLine(False, 0) if required_insert_count else IndexedFieldLine(True, 17)
    unread = section(required_insert_count, required_insert_count, line)
    decoder.cancel_stream(4, end_received=True, unread_sections=[unread])
    assert decoder.data_to_send() == bytes.fromhex(expected)


def test_a_section_with_an_unusable_delta_base_still_holds_references_until_cancelled() -> None:
    """RFC 9204 §2.2.2.2: the encoder counted this section's references (its Required
    Insert Count is 1), so when its padded Delta Base fails the decoder's limits (§7.4) and
    the stream is abandoned, a Stream Cancellation must release them."""
    decoder = decoder_with([(b"a", b"")])
    decoder.data_to_send()
    padded_delta_base = bytes.fromhex("027f8000bf40")  # Delta Base 127 as 7f 80 00
    with pytest.raises(DecompressionFailed) as failure:
        decoder.decode(4, padded_delta_base)
    assert failure.value.beyond_limit and failure.value.stream_id == 4
    decoder.cancel_stream(4, end_received=True)
    assert decoder.data_to_send() == bytes.fromhex("44")


def test_decoder_without_a_dynamic_table_may_omit_stream_cancellations() -> None:
    # §2.2.2.2: with maximum capacity 0 the encoder cannot hold any reference.
    decoder = Decoder(max_table_capacity=0)
    decoder.cancel_stream(4)
    # Not even for an unread section that claims to refer to the table: it cannot.
    decoder.cancel_stream(8, end_received=True, unread_sections=[bytes.fromhex("0200 80")])
    assert decoder.data_to_send() == b""


# -- events --------------------------------------------------------------------------------


ENCODER_STREAM_EARLY = wire(
    SetDynamicTableCapacity(220),
    InsertWithNameReference(True, 0, b"www.example.com", True),
    InsertWithLiteralName(b"custom-key", b"custom-value", True, False),
)
#: Duplicate of absolute 0 (as 2), then an insert named after it (as 3) that evicts 0 and 1.
ENCODER_STREAM_LATE = wire(Duplicate(1), InsertWithNameReference(False, 0, b"v" * 90, False))
SECTIONS = [
    section(
        2,
        2,
        IndexedFieldLine(False, 1),
        IndexedFieldLine(True, 17),
        LiteralFieldLineWithNameReference(True, False, 0, b"value", True),
        LiteralFieldLineWithLiteralName(False, b"x-a", b"", False, True),
        max_table_capacity=220,
    ),
    section(
        4,
        2,
        IndexedFieldLineWithPostBaseIndex(1),
        LiteralFieldLineWithPostBaseNameReference(False, 0, b"y", False),
        max_table_capacity=220,
    ),
]


def run_exchange(recorder: Any = None) -> tuple[list[list[Header]], bytes]:
    """A small exchange with every kind of decoder event: the fields and the decoder stream."""
    decoder = Decoder(220, 2, recorder=recorder)
    decoder.feed_encoder(ENCODER_STREAM_EARLY)
    first = decoder.decode(0, SECTIONS[0])
    assert first is not None
    assert decoder.decode(4, SECTIONS[1]) is None  # blocked until the late inserts
    [second] = decoder.feed_encoder(ENCODER_STREAM_LATE).sections
    decoder.cancel_stream(8)
    return [first.headers, second.headers], decoder.data_to_send()


def recorded_exchange() -> EventLog:
    log = EventLog()
    run_exchange(log.for_endpoint("client"))
    return log


def test_events_carry_the_exact_input_and_output_bytes() -> None:
    log = EventLog()
    _, decoder_stream = run_exchange(log.for_endpoint("client"))

    def raw_of(name: str) -> list[bytes]:
        return [event.raw for event in log.events if event.name == name]

    assert b"".join(raw_of("instruction_parsed")) == ENCODER_STREAM_EARLY + ENCODER_STREAM_LATE
    assert len(raw_of("instruction_parsed")) == 5
    assert raw_of("headers_decoded") == SECTIONS
    assert b"".join(raw_of("instruction_created")) == decoder_stream
    blocked = [e for e in log.events if e.name == "stream_state_updated"]
    assert [(e.data["state"], e.stream_id) for e in blocked] == [
        ("blocked", 4),
        ("unblocked", 4),
    ]
    assert blocked[0].raw == SECTIONS[1]


def test_events_label_every_bit_of_their_bytes() -> None:
    assert_events_label_their_bytes(recorded_exchange().events)


def test_events_come_in_causal_order() -> None:
    log = recorded_exchange()
    names = [(e.name, e.data.get("instruction_type") or e.data.get("state")) for e in log.events]
    # An instruction is recorded before the table change it causes.
    first_insert = names.index(("dynamic_table_updated", None))
    assert names[first_insert - 1] == ("instruction_parsed", "insert_with_name_reference")
    # A section is decoded before it is acknowledged; a blocked one is unblocked first.
    decoded = [i for i, name in enumerate(names) if name[0] == "headers_decoded"]
    acknowledgment = ("instruction_created", "section_acknowledgement")
    acks = [i for i, name in enumerate(names) if name == acknowledgment]
    assert len(decoded) == len(acks) == 2
    assert all(d < a for d, a in zip(decoded, acks, strict=True))
    assert names.index(("stream_state_updated", "unblocked")) < decoded[1]
    assert all(event.endpoint == "client" for event in log.events)


def test_headers_decoded_event_shows_the_prefix_and_each_line_resolved() -> None:
    log = recorded_exchange()
    event = next(e for e in log.events if e.name == "headers_decoded" and e.stream_id == 4)
    assert event.data["prefix"] == {
        "encoded_insert_count": 5,
        "max_entries": 6,
        # The insert count the Required Insert Count was worked out with (§4.5.1.1): 2 when
        # the section arrived and was blocked, not the 4 there were when it was decoded.
        "total_inserts": 2,
        "required_insert_count": 4,
        "sign": True,
        "delta_base": 1,
        "base": 2,
    }
    lines = event.data["field_lines"]
    assert [(line["table"], line.get("absolute_index")) for line in lines] == [
        ("dynamic", 3),
        ("dynamic", 2),
    ]
    assert event.data["headers"] == [
        {"name": ":authority", "value": "v" * 90},
        {"name": ":authority", "value": "y"},
    ]


def test_recording_changes_nothing_the_decoder_decides() -> None:
    quiet = run_exchange()
    recorded = run_exchange(EventLog().for_endpoint("client"))
    assert quiet == recorded
    headers, decoder_stream = quiet
    assert headers[0] == [
        (b":authority", b"www.example.com"),
        (b":method", b"GET"),
        (b"custom-key", b"value"),
        (b"x-a", b""),
    ]
    # Acknowledgments for streams 0 and 4, then the cancellation of stream 8; the
    # acknowledgment of the section needing 4 inserts covers them all.
    assert decoder_stream == bytes.fromhex("808448")


# -- interop: the qifs corpus ---------------------------------------------------------------

CORPUS = [
    # (encoded file, .qif, maximum capacity, blocked streams, synthetic Set Capacity)
    ("ls-qpack/netbsd.out.4096.100.1", INPUTS / "netbsd.qif", 4096, 100, True),
    ("ls-qpack/netbsd.out.256.100.1", INPUTS / "netbsd.qif", 256, 100, True),
    ("ls-qpack/netbsd.out.4096.0.1", INPUTS / "netbsd.qif", 4096, 0, True),
    ("f5/netbsd.out.4096.100.0", INPUTS / "netbsd.qif", 4096, 100, True),
    ("examples/examples.out.220.100.1", ENCODED / "examples/examples.qif", 220, 100, False),
    ("examples/draft-examples.out", INPUTS / "draft-examples.qif", 220, 100, False),
]


def decode_corpus_file(
    name: str, capacity: int, blocked: int, synthetic: bool, recorder: Any = None
) -> tuple[list[list[Header]], int]:
    """Decode a record file; returns the sections in stream order and how many blocked."""
    decoder = Decoder(capacity, blocked, recorder=recorder)
    if synthetic:
        # The corpus predates RFC 9204 §3.2.2 (table starts at capacity 0): these encoders
        # insert without a Set Dynamic Table Capacity, so one is fed first.
        decoder.feed_encoder(wire(SetDynamicTableCapacity(capacity)))
    decoded: dict[int, list[Header]] = {}
    blocked_count = 0
    for stream_id, data in read_records((ENCODED / name).read_bytes()):
        if stream_id == 0:
            for unblocked in decoder.feed_encoder(data).sections:
                decoded[unblocked.stream_id] = unblocked.headers
            continue
        result = decoder.decode(stream_id, data)
        if result is None:
            blocked_count += 1
        else:
            decoded[stream_id] = result.headers
        decoder.data_to_send()
    assert decoder.blocked_streams == []
    return [decoded[stream_id] for stream_id in sorted(decoded)], blocked_count


@pytest.mark.parametrize(("name", "qif", "capacity", "blocked", "synthetic"), CORPUS)
def test_corpus_file_decodes_to_its_qif_exactly(
    name: str, qif: Path, capacity: int, blocked: int, synthetic: bool
) -> None:
    sections, _ = decode_corpus_file(name, capacity, blocked, synthetic)
    assert sections == read_qif(qif)


def test_f5_corpus_file_blocks_every_stream_and_each_resumes() -> None:
    sections, blocked_count = decode_corpus_file("f5/netbsd.out.4096.100.0", 4096, 100, True)
    assert blocked_count == 18
    assert sections == read_qif(INPUTS / "netbsd.qif")


@pytest.mark.parametrize("name", ["f5/netbsd.out.4096.100.0", "ls-qpack/netbsd.out.256.100.1"])
def test_corpus_events_label_every_bit(name: str) -> None:
    log = EventLog()
    decode_corpus_file(name, int(name.split(".")[2]), 100, True, log.for_endpoint("server"))
    assert len(log.events) > 50
    assert_events_label_their_bytes(log.events)


# -- interop: pylsqpack live ----------------------------------------------------------------


def run_pylsqpack(
    header_lists: list[list[Header]], capacity: int, blocked: int, reorder: bool = False
) -> list[list[Header]]:
    """Encode with ls-qpack, decode with h3learn, feed h3learn's decoder stream back.

    With ``reorder`` each field section arrives before the encoder-stream bytes it needs.
    ls-qpack checks every decoder instruction it is fed, so bad acknowledgments would raise.
    """
    encoder = pylsqpack.Encoder()
    decoder = Decoder(capacity, blocked)
    decoder.feed_encoder(encoder.apply_settings(capacity, blocked))
    decoded: dict[int, list[Header]] = {}
    for number, headers in enumerate(header_lists):
        stream_id = 4 * number
        encoder_stream, field_section = encoder.encode(stream_id, headers)
        if reorder:
            result = decoder.decode(stream_id, field_section)
            unblocked = decoder.feed_encoder(encoder_stream).sections
        else:
            unblocked = decoder.feed_encoder(encoder_stream).sections
            result = decoder.decode(stream_id, field_section)
        assert unblocked == [] or result is None
        for found in [*unblocked, *([result] if result is not None else [])]:
            decoded[found.stream_id] = found.headers
        encoder.feed_decoder(decoder.data_to_send())
    return [decoded[4 * number] for number in range(len(header_lists))]


@pytest.mark.parametrize("qif", ["netbsd.qif", "netbsd-hq.qif", "draft-examples.qif"])
@pytest.mark.parametrize(("capacity", "blocked"), [(4096, 100), (256, 100), (4096, 0), (0, 0)])
def test_pylsqpack_live_encoding_of_the_vector_header_lists_decodes_exactly(
    qif: str, capacity: int, blocked: int
) -> None:
    header_lists = read_qif(INPUTS / qif)
    assert run_pylsqpack(header_lists, capacity, blocked) == header_lists


@pytest.mark.parametrize(("capacity", "blocked"), [(4096, 100), (256, 16)])
def test_pylsqpack_sections_arriving_before_their_inserts_are_resumed(
    capacity: int, blocked: int
) -> None:
    header_lists = read_qif(INPUTS / "netbsd.qif")
    assert run_pylsqpack(header_lists, capacity, blocked, reorder=True) == header_lists


def test_pylsqpack_live_encoding_of_the_first_fb_requests_decodes_exactly() -> None:
    header_lists = read_qif(INPUTS / "fb-req.qif")[:60]
    assert run_pylsqpack(header_lists, 4096, 100) == header_lists


names = st.one_of(
    st.sampled_from([b":authority", b":path", b"cookie", b"user-agent", b"x-custom"]),
    st.binary(min_size=1, max_size=16),
)
values = st.one_of(st.sampled_from([b"", b"GET", b"/", b"a" * 40]), st.binary(max_size=60))
header_lists = st.lists(st.lists(st.tuples(names, values), max_size=8), min_size=1, max_size=6)


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(
    lists=header_lists,
    configuration=st.sampled_from([(4096, 100), (256, 100), (128, 0), (0, 0)]),
    reorder=st.booleans(),
)
def test_pylsqpack_live_encoding_of_any_header_lists_decodes_exactly(
    lists: list[list[Header]], configuration: tuple[int, int], reorder: bool
) -> None:
    capacity, blocked = configuration
    assert run_pylsqpack(lists, capacity, blocked, reorder and blocked > 0) == lists
