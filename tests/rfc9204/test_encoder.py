"""RFC 9204 §2.1: the QPACK encoder, checked against h3learn's decoder and pylsqpack's.

Every test states the rule it checks. The round trips decode the encoder's output with both
decoders; the Hypothesis test drives random fields, settings and acknowledgment patterns
and checks the eviction and blocking rules at every step from the recorded events.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pylsqpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from h3learn.events import EventLog
from h3learn.qpack.acknowledgments import ABANDONED_REMEMBERED
from h3learn.qpack.decoder import Decoder
from h3learn.qpack.decoder_instructions import (
    SectionAcknowledgment,
    StreamCancellation,
    parse_decoder_instruction,
)
from h3learn.qpack.encoder import Encoder
from h3learn.qpack.encoder_instructions import (
    Duplicate,
    EncoderInstruction,
    SetDynamicTableCapacity,
    parse_encoder_instruction,
)
from h3learn.qpack.errors import DecoderStreamError
from h3learn.qpack.field_lines import (
    FieldSectionPrefix,
    LiteralFieldLineWithNameReference,
    decode_required_insert_count,
    parse_field_line,
)
from h3learn.qpack.flow_control import EncoderStreamCredit
from h3learn.qpack.interop import decode_records, encode_qif, encode_records, parse_qif
from h3learn.wire.spans import SpanReader, SpanWriter

Header = tuple[bytes, bytes]
VECTOR_INPUTS = Path(__file__).resolve().parent.parent / "vectors" / "qif-inputs"
VECTORS = ("netbsd.qif", "draft-examples.qif")
CONFIGURATIONS = ((4096, 100, True), (4096, 0, True), (256, 100, True), (4096, 100, False))


def instructions(encoder_stream: bytes) -> list[EncoderInstruction]:
    reader = SpanReader(encoder_stream, record=False)
    parsed = []
    while not reader.at_end():
        parsed.append(parse_encoder_instruction(reader))
    return parsed


def required_insert_count(section: bytes, capacity: int, inserts: int) -> int:
    prefix = FieldSectionPrefix.parse(SpanReader(section, record=False))
    return decode_required_insert_count(prefix.encoded_insert_count, capacity, inserts)


def decode_with_pylsqpack(
    records: Sequence[tuple[int, bytes]], capacity: int, blocked: int
) -> list[list[Header]]:
    decoder = pylsqpack.Decoder(capacity, blocked)
    decoded: dict[int, list[Header]] = {}
    for stream_id, data in records:
        if stream_id == 0:
            for unblocked in decoder.feed_encoder(data):
                decoded[unblocked] = list(decoder.resume_header(unblocked)[1])
            continue
        with contextlib.suppress(pylsqpack.StreamBlocked):  # resumed by feed_encoder
            decoded[stream_id] = list(decoder.feed_header(stream_id, data)[1])
    return [decoded[stream_id] for stream_id in sorted(decoded)]


# --- round trips ---------------------------------------------------------------------------


@pytest.mark.parametrize("vector", VECTORS)
@pytest.mark.parametrize(("capacity", "blocked", "ack"), CONFIGURATIONS)
def test_encoded_vectors_decode_to_their_input_with_h3learn_and_pylsqpack(
    vector: str, capacity: int, blocked: int, ack: bool
) -> None:
    """RFC 9204 §2.1: whatever the encoder chooses, both decoders recover the fields."""
    sections = parse_qif((VECTOR_INPUTS / vector).read_bytes())
    records = encode_records(sections, capacity, blocked, ack)
    assert decode_records(encode_qif(sections, capacity, blocked, ack), capacity, blocked) == (
        sections
    )
    assert decode_with_pylsqpack(records, capacity, blocked) == sections


def test_dynamic_table_makes_the_netbsd_vector_smaller() -> None:
    """RFC 9204 §2.1: with a table, repeated fields cost far less than without one."""
    sections = parse_qif((VECTOR_INPUTS / "netbsd.qif").read_bytes())
    sizes = {
        capacity: sum(len(data) for _, data in encode_records(sections, capacity, 100, True))
        for capacity in (0, 256, 4096)
    }
    assert sizes[4096] < sizes[256] < sizes[0]
    assert sizes[4096] < sizes[0] / 3


def test_recording_does_not_change_the_bytes() -> None:
    """Recording only labels what is sent: the same input gives the same bytes."""
    sections = parse_qif((VECTOR_INPUTS / "netbsd.qif").read_bytes())
    plain = encode_records(sections, 4096, 100, True)
    log = EventLog()
    recorded = encode_records(sections, 4096, 100, True, Encoder(log.for_endpoint("client")))
    assert recorded == plain
    created = b"".join(
        e.raw for e in log.events if e.name == "instruction_created" and e.endpoint == "client"
    )
    assert created == b"".join(data for stream_id, data in plain if stream_id == 0)
    encoded = [e for e in log.events if e.name == "headers_encoded"]
    assert [e.raw for e in encoded] == [data for stream_id, data in plain if stream_id]
    first = encoded[0]
    assert set(first.data["prefix"]) == {
        "required_insert_count",
        "base",
        "encoded_insert_count",
        "sign",
        "delta_base",
        "max_entries",
    }
    assert all("representation" in line and "table" in line for line in first.data["field_lines"])
    assert first.fields and first.fields[0].name == "Required Insert Count (encoded)"


def test_each_recorded_field_line_says_how_many_bytes_it_took() -> None:
    """RFC 9204 §4.5: after the prefix, a section is its field lines, end to end."""
    log = EventLog()
    encoder = Encoder(log.for_endpoint("client"), huffman=False)
    encoder.apply_settings(256, 100)
    decoder = Decoder(256, 100, log.for_endpoint("server"))
    sections = parse_qif((VECTOR_INPUTS / "netbsd.qif").read_bytes())
    for stream_id, headers in enumerate(sections[:12]):
        encoder_stream, section = encoder.encode(stream_id * 4, headers)
        decoder.feed_encoder(encoder_stream)
        assert decoder.decode(stream_id * 4, section) is not None
        encoder.feed_decoder(decoder.data_to_send())
    lengths: dict[str, list[list[int]]] = {}
    for event in log.events:
        if event.name not in ("headers_encoded", "headers_decoded"):
            continue
        reader = SpanReader(event.raw, record=False)
        FieldSectionPrefix.parse(reader)
        lines = [line["encoded_length"] for line in event.data["field_lines"]]
        assert reader.position + sum(lines) == len(event.raw)
        assert all(length >= 1 for length in lines)
        lengths.setdefault(event.name, []).append(lines)
    assert len(lengths["headers_encoded"]) == 12
    assert lengths["headers_encoded"] == lengths["headers_decoded"]


# --- the table's capacity (RFC 9204 §3.2.2, §3.2.3) ---------------------------------------


def test_capacity_zero_sends_no_encoder_instructions() -> None:
    """RFC 9204 §3.2.3: with a maximum capacity of 0 the encoder stream stays silent."""
    encoder = Encoder()
    encoder.apply_settings(0, 100)
    sections = parse_qif((VECTOR_INPUTS / "netbsd.qif").read_bytes())
    for stream_id, headers in enumerate(sections, start=1):
        encoder_stream, section = encoder.encode(stream_id, headers)
        assert encoder_stream == b""
        assert section[0] == 0  # Required Insert Count 0: no dynamic references
    assert len(encoder.table) == 0


def test_without_settings_the_encoder_uses_only_the_static_table() -> None:
    """RFC 9204 §3.2.3: until SETTINGS arrive the maximum capacity is 0."""
    assert Encoder().encode(0, [(b"x-a", b"b"), (b"x-a", b"b")])[0] == b""


def test_set_dynamic_table_capacity_precedes_the_first_insert() -> None:
    """RFC 9204 §3.2.2: the table starts at capacity 0, so the capacity is sent first."""
    encoder = Encoder()
    encoder.apply_settings(4096, 100)
    headers = [(b"user-agent", b"h3learn"), (b"user-agent", b"h3learn")]
    encoder_stream, _ = encoder.encode(0, headers)
    sent = instructions(encoder_stream)
    assert sent[0] == SetDynamicTableCapacity(4096)
    assert len(sent) > 1
    assert not any(isinstance(i, SetDynamicTableCapacity) for i in sent[1:])
    assert encoder.table.capacity == 4096
    again, _ = encoder.encode(4, [(b"x-other", b"1"), (b"x-other", b"1")])
    assert not any(isinstance(i, SetDynamicTableCapacity) for i in instructions(again))


def test_preferred_capacity_is_used_when_below_the_peer_maximum() -> None:
    """RFC 9204 §3.2.3: the encoder may choose any capacity up to the decoder's maximum."""
    encoder = Encoder(preferred_capacity=300)
    encoder.apply_settings(4096, 100)
    encoder_stream, section = encoder.encode(0, [(b"x-a", b"1"), (b"x-a", b"1")])
    assert instructions(encoder_stream)[0] == SetDynamicTableCapacity(300)
    decoder = Decoder(4096, 100)
    decoder.feed_encoder(encoder_stream)
    assert decoder.decode(0, section) is not None
    capped = Encoder(preferred_capacity=9000)
    capped.apply_settings(4096, 100)
    encoder_stream, _ = capped.encode(0, [(b"x-a", b"1"), (b"x-a", b"1")])
    assert instructions(encoder_stream)[0] == SetDynamicTableCapacity(4096)


# --- evictions (RFC 9204 §2.1.1) ------------------------------------------------------------


def test_without_acknowledgments_the_table_fills_and_nothing_is_evicted() -> None:
    """RFC 9204 §2.1.1: an entry whose insert is unacknowledged is never evicted."""
    encoder = Encoder()
    encoder.apply_settings(512, 100)
    decoder = Decoder(512, 100)
    for stream_id in range(1, 60):
        headers = [(b"x-counter", str(stream_id).encode() * 5)] * 2 + [(b"x-fixed", b"v")] * 2
        encoder_stream, section = encoder.encode(stream_id, headers)
        decoder.feed_encoder(encoder_stream)
        decoded = decoder.decode(stream_id, section)
        assert decoded is not None and decoded.headers == headers
    assert encoder.table.dropped_count == 0
    assert encoder.table.size <= 512
    assert encoder.table.insert_count == len(encoder.table) > 5


def test_an_insert_that_would_evict_an_unacknowledged_entry_is_skipped_and_recorded() -> None:
    """RFC 9204 §2.1.1: the encoder may not evict what the decoder has not acknowledged."""
    log = EventLog()
    encoder = Encoder(log.for_endpoint("client"))
    encoder.apply_settings(100, 0)
    encoder.insert(b"x-first", b"a" * 30)  # 7 + 30 + 32 = 69 bytes of 100
    with pytest.raises(ValueError, match="not evictable"):
        encoder.insert(b"x-second", b"b" * 20)  # 60 more: [0] would have to go
    skipped = [e for e in log.events if e.name == "insert_skipped"]
    assert len(skipped) == 1 and skipped[0].rfc == ("9204#2.1.1", "9204#2.1.1.1")
    assert skipped[0].data | {"reason": ""} == {
        "owner": "local",
        "instruction": "insert",
        "name": "x-second",
        "value": "b" * 20,
        "size": 60,
        "reason": "",
        "known_received_count": 0,
        "dynamic_table_size": 69,
        "dynamic_table_capacity": 100,
    }
    assert skipped[0].data["reason"] == (
        "it would evict [0] x-first, whose insertion the decoder has not acknowledged yet"
        " (Known Received Count 0)"
    )
    encoder.feed_decoder(bytes([0b00_000001]))  # Insert Count Increment 1 (§4.4.3)
    encoder.insert(b"x-second", b"b" * 20)  # now [0] is evictable
    assert [entry.name for entry in encoder.table] == [b"x-second"]
    assert len([e for e in log.events if e.name == "insert_skipped"]) == 1


def test_an_entry_referenced_by_an_unacknowledged_section_is_not_evicted() -> None:
    """RFC 9204 §2.1.1: acknowledged, but referenced by a section awaiting acknowledgment."""
    log = EventLog()
    encoder = Encoder(log.for_endpoint("client"))
    encoder.apply_settings(200, 100)
    decoder = Decoder(200, 100)
    pinned = (b"x-pinned", b"p" * 40)

    def send(stream_id: int, headers: list[Header], acknowledge: bool) -> None:
        encoder_stream, section = encoder.encode(stream_id, headers)
        decoder.feed_encoder(encoder_stream)
        assert decoder.decode(stream_id, section) is not None
        acknowledgments = decoder.data_to_send()
        if acknowledge:
            encoder.feed_decoder(acknowledgments)

    send(1, [pinned, pinned], acknowledge=True)
    pinned_index = encoder.table.insert_count - 1
    send(2, [pinned], acknowledge=False)  # stream 2 now holds a reference to the entry
    for stream_id in range(3, 30):
        filler = (b"x-filler", str(stream_id).encode() * 20)
        send(stream_id, [filler, filler], acknowledge=True)
        assert encoder.table.get(pinned_index) is not None
    reasons = {e.data["reason"] for e in log.events if e.name == "insert_skipped"}
    assert (
        f"it would evict [{pinned_index}] x-pinned, which a field section still awaiting"
        " acknowledgment refers to" in reasons
    )


# --- blocked streams (RFC 9204 §2.1.2) -------------------------------------------------------


@pytest.mark.parametrize("blocked", [0, 1, 3])
def test_no_more_streams_than_allowed_are_blocked_at_the_decoder(blocked: int) -> None:
    """RFC 9204 §2.1.2: sections arriving before the inserts block at most B streams."""
    encoder = Encoder()
    encoder.apply_settings(4096, blocked)
    decoder = Decoder(4096, blocked)
    encoder_stream = bytearray()
    most_blocked = 0
    for stream_id in range(1, 20):
        headers = [(b"x-new", str(stream_id).encode()), (b"x-new", str(stream_id).encode())]
        instructions_, section = encoder.encode(stream_id, headers)
        encoder_stream += instructions_
        decoder.decode(stream_id, section)  # the section overtakes the encoder stream
        most_blocked = max(most_blocked, len(decoder.blocked_streams))
    assert most_blocked == blocked
    decoded = decoder.feed_encoder(bytes(encoder_stream)).sections
    assert len(decoded) == blocked


def test_a_blocking_stream_may_add_blocking_sections_but_another_may_not() -> None:
    """RFC 9204 §2.1.2: the limit counts streams, not sections."""
    encoder = Encoder()
    encoder.apply_settings(4096, 1)
    headers = [(b"x-a", b"1"), (b"x-a", b"1")]
    encoder.encode(4, headers)
    inserts = encoder.table.insert_count
    _, second_on_4 = encoder.encode(4, [(b"x-b", b"2"), (b"x-b", b"2")])
    assert required_insert_count(second_on_4, 4096, encoder.table.insert_count) > 0
    assert encoder.known_received_count == 0
    _, on_8 = encoder.encode(8, [(b"x-a", b"1"), (b"x-c", b"3"), (b"x-c", b"3")])
    assert required_insert_count(on_8, 4096, encoder.table.insert_count) == 0
    assert encoder.table.insert_count >= inserts


def test_with_blocked_streams_zero_no_section_needs_an_unacknowledged_insert() -> None:
    """RFC 9204 §2.1.2: B=0 means every reference is to an acknowledged entry."""
    sections = parse_qif((VECTOR_INPUTS / "netbsd.qif").read_bytes())
    encoder = Encoder()
    encoder.apply_settings(4096, 0)
    decoder = Decoder(4096, 0)
    for stream_id, headers in enumerate(sections, start=1):
        encoder_stream, section = encoder.encode(stream_id, headers)
        ric = required_insert_count(section, 4096, encoder.table.insert_count)
        assert ric <= encoder.known_received_count
        assert decoder.decode(stream_id, section) is not None  # before the encoder stream
        decoder.feed_encoder(encoder_stream)
        encoder.feed_decoder(decoder.data_to_send())


def test_new_entries_are_referenced_in_the_same_section_when_blocking_is_allowed() -> None:
    """RFC 9204 §3.2.6: an entry inserted for this section is referenced at once."""
    encoder = Encoder()
    encoder.apply_settings(4096, 100)
    headers = [(b"x-a", b"1"), (b"x-a", b"1"), (b"x-a", b"1")]
    encoder_stream, section = encoder.encode(0, headers)
    assert required_insert_count(section, 4096, encoder.table.insert_count) == 1
    decoder = Decoder(4096, 100)
    assert decoder.decode(0, section) is None  # blocked until the insert arrives
    assert [s.headers for s in decoder.feed_encoder(encoder_stream).sections] == [headers]


@pytest.mark.parametrize("base", [-1, -5])
def test_a_negative_base_is_refused_because_base_must_not_be_negative(base: int) -> None:
    """RFC 9204 §4.5.1.2: no Sign bit and Delta Base give a negative Base; nothing changes."""
    encoder = Encoder()
    encoder.apply_settings(4096, 16)
    encoder.insert(b"x-a", b"b")
    with pytest.raises(ValueError, match=r"Base -?\d+ is negative.*RFC 9204 §4\.5\.1\.2"):
        encoder.encode(0, [(b"x-a", b"b"), (b"x-b", b"c")], base=base)
    assert encoder.table.insert_count == 1
    assert encoder.acknowledgments.sections_awaiting() == 0


# --- Duplicate (RFC 9204 §4.3.4) -------------------------------------------------------------


def test_a_wanted_entry_in_the_draining_region_is_duplicated() -> None:
    """RFC 9204 §2.1.1.1: an old entry still in use is copied to the front, not lost."""
    encoder = Encoder()
    encoder.apply_settings(200, 100)
    decoder = Decoder(200, 100)
    kept = (b"x-kept", b"k" * 10)
    sent: list[EncoderInstruction] = []
    for stream_id in range(1, 12):
        other = (b"x-other", str(stream_id).encode() * 10)
        headers = [kept, other, other]
        encoder_stream, section = encoder.encode(stream_id, headers)
        sent += instructions(encoder_stream)
        decoder.feed_encoder(encoder_stream)
        decoded = decoder.decode(stream_id, section)
        assert decoded is not None and decoded.headers == headers
        encoder.feed_decoder(decoder.data_to_send())
    assert any(isinstance(i, Duplicate) for i in sent)
    assert sum(1 for e in encoder.table if (e.name, e.value) == kept) >= 1


# --- flow control (RFC 9204 §2.1.3) -------------------------------------------------------------

REPEATED = [(b"x-a", b"1"), (b"x-a", b"1"), (b"x-b", b"2"), (b"x-b", b"2")]


def instruction_lengths(encoder_stream: bytes) -> list[int]:
    reader = SpanReader(encoder_stream, record=False)
    lengths = []
    while not reader.at_end():
        start = reader.position
        parse_encoder_instruction(reader)
        lengths.append(reader.position - start)
    return lengths


def skipped_for_flow_control(log: EventLog) -> list[dict[str, Any]]:
    return [e.data for e in log.events if e.name == "insert_skipped" and e.rfc == ("9204#2.1.3",)]


def test_an_insert_the_flow_control_credit_does_not_cover_is_not_written() -> None:
    """RFC 9204 §2.1.3: no instruction is written without credit for all of it."""
    unconstrained = Encoder()
    unconstrained.apply_settings(4096, 100)
    wanted, _ = unconstrained.encode(0, REPEATED[:2])
    assert [type(i).__name__ for i in instructions(wanted)] == [
        "SetDynamicTableCapacity",
        "InsertWithLiteralName",
    ]
    log = EventLog()
    encoder = Encoder(log.for_endpoint("client"))
    encoder.apply_settings(4096, 100)
    credit = EncoderStreamCredit(stream=len(wanted) - 1, connection=10_000)
    encoder_stream, section = encoder.encode(0, REPEATED[:2], credit=credit)
    assert encoder_stream == b"" and encoder.table.insert_count == 0
    decoded = Decoder(4096, 100).decode(0, section)  # literals: decodable with no inserts
    assert decoded is not None and decoded.headers == REPEATED[:2]
    (skipped,) = skipped_for_flow_control(log)
    assert skipped["instruction_size"] == len(wanted)  # Set Dynamic Table Capacity included
    assert (skipped["stream_credit"], skipped["connection_credit"]) == (len(wanted) - 1, 10_000)
    assert skipped["reason"] == (
        f"its instruction takes {len(wanted)} bytes and QUIC flow control lets the encoder"
        f" stream carry only {len(wanted) - 1} more now (stream credit {len(wanted) - 1},"
        " connection credit 10000)"
    )


def test_the_credit_is_spent_instruction_by_instruction() -> None:
    """RFC 9204 §2.1.3: each instruction written uses up credit for the next ones."""
    unconstrained = Encoder()
    unconstrained.apply_settings(4096, 100)
    wanted, _ = unconstrained.encode(0, REPEATED)
    capacity, first, second = instruction_lengths(wanted)
    assert capacity == 3  # Set Dynamic Table Capacity 4096
    credit = EncoderStreamCredit(stream=3 + first + second - 1, connection=10_000)
    log = EventLog()
    encoder = Encoder(log.for_endpoint("client"))
    encoder.apply_settings(4096, 100)
    encoder_stream, section = encoder.encode(0, REPEATED, credit=credit)
    assert len(encoder_stream) == 3 + first <= credit.available
    (skipped,) = skipped_for_flow_control(log)
    assert (skipped["name"], skipped["stream_credit"]) == ("x-b", second - 1)
    decoder = Decoder(4096, 100)
    decoder.feed_encoder(encoder_stream)
    decoded = decoder.decode(0, section)
    assert decoded is not None and decoded.headers == REPEATED


def test_the_smaller_of_the_stream_and_connection_credit_is_what_may_be_written() -> None:
    """RFC 9204 §2.1.3: the instruction needs stream *and* connection credit."""
    log = EventLog()
    encoder = Encoder(log.for_endpoint("client"))
    encoder.apply_settings(4096, 100)
    credit = EncoderStreamCredit(stream=10_000, connection=2)
    encoder_stream, _ = encoder.encode(0, REPEATED, credit=credit)
    assert encoder_stream == b""
    assert [d["connection_credit"] for d in skipped_for_flow_control(log)] == [2, 2]
    assert EncoderStreamCredit(stream=-5, connection=7).available == 0


def test_a_duplicate_the_credit_does_not_cover_is_not_written() -> None:
    """RFC 9204 §2.1.3: a Duplicate is an instruction like any other."""
    kept = (b"x-kept", b"k" * 10)

    def run(limited_from: int, log: EventLog) -> dict[int, list[EncoderInstruction]]:
        """Sections 1-11, with no credit at all from section ``limited_from`` on."""
        encoder = Encoder(log.for_endpoint("client"))
        encoder.apply_settings(200, 100)
        decoder = Decoder(200, 100)
        sent: dict[int, list[EncoderInstruction]] = {}
        for stream_id in range(1, 12):
            other = (b"x-other", str(stream_id).encode() * 10)
            headers = [kept, other, other]
            credit = EncoderStreamCredit(0, 0) if stream_id >= limited_from else None
            encoder_stream, section = encoder.encode(stream_id, headers, credit=credit)
            sent[stream_id] = instructions(encoder_stream)
            decoder.feed_encoder(encoder_stream)
            decoded = decoder.decode(stream_id, section)
            assert decoded is not None and decoded.headers == headers
            encoder.feed_decoder(decoder.data_to_send())
        return sent

    unconstrained = run(limited_from=12, log=EventLog())
    duplicating = next(
        n for n, sent in unconstrained.items() if any(isinstance(i, Duplicate) for i in sent)
    )
    log = EventLog()
    limited = run(limited_from=duplicating, log=log)
    assert not any(isinstance(i, Duplicate) for sent in limited.values() for i in sent)
    assert "duplicate" in {d["instruction"] for d in skipped_for_flow_control(log)}


def test_without_credit_information_the_encoder_is_unconstrained() -> None:
    """RFC 9204 §2.1.3 needs the credit: a transport without flow control gives none."""
    sections = parse_qif((VECTOR_INPUTS / "netbsd.qif").read_bytes())
    outputs = []
    for credit in (None, EncoderStreamCredit(10**9, 10**9)):
        encoder = Encoder()
        encoder.apply_settings(4096, 100)
        outputs.append([encoder.encode(n, h, credit=credit) for n, h in enumerate(sections)])
    assert outputs[0] == outputs[1]
    assert any(encoder_stream for encoder_stream, _ in outputs[0])


def test_with_no_credit_at_all_every_section_decodes_without_the_encoder_stream() -> None:
    """RFC 9204 §2.1.3: literals instead of inserts keep every section decodable."""
    sections = parse_qif((VECTOR_INPUTS / "netbsd.qif").read_bytes())
    encoder = Encoder()
    encoder.apply_settings(4096, 100)
    decoder = Decoder(4096, 100)
    for stream_id, headers in enumerate(sections):
        encoder_stream, section = encoder.encode(
            stream_id, headers, credit=EncoderStreamCredit(0, 0)
        )
        assert encoder_stream == b""
        decoded = decoder.decode(stream_id, section)
        assert decoded is not None and decoded.headers == headers


# --- never-indexed fields (RFC 9204 §7.1.3) ----------------------------------------------------


def encode_twice_and_decode(encoder: Encoder, headers: list[Header], **kwargs: Any) -> list[bool]:
    decoder = Decoder(4096, 100)
    encoder.apply_settings(4096, 100)
    never_indexed: list[bool] = []
    for stream_id in (0, 4):
        encoder_stream, section = encoder.encode(stream_id, headers, **kwargs)
        decoder.feed_encoder(encoder_stream)
        decoded = decoder.decode(stream_id, section)
        assert decoded is not None and decoded.headers == headers
        never_indexed = decoded.never_indexed
        encoder.feed_decoder(decoder.data_to_send())
    return never_indexed


def test_credentials_and_short_cookies_carry_the_n_bit_and_stay_out_of_the_table() -> None:
    """RFC 9204 §7.1.3: sensitive values are literals with N set, never inserted."""
    encoder = Encoder()
    headers = [
        (b"authorization", b"Basic dXNlcjpwYXNz"),
        (b"proxy-authorization", b"Basic cHJveHk="),
        (b"cookie", b"sid=1234"),
        (b"cookie", b"session=" + b"x" * 40),
    ]
    assert encode_twice_and_decode(encoder, headers) == [True, True, True, False]
    stored = {(e.name, e.value) for e in encoder.table}
    assert not stored & set(headers[:3])
    assert headers[3] in stored


def test_names_passed_as_never_indexed_carry_the_n_bit() -> None:
    """RFC 9204 §7.1.3: the caller decides which other fields are sensitive."""
    encoder = Encoder()
    headers = [(b"x-secret", b"hunter2"), (b"x-plain", b"hello")]
    flags = encode_twice_and_decode(encoder, headers, never_indexed={b"x-secret"})
    assert flags == [True, False]
    assert all(e.name != b"x-secret" or e.value == b"" for e in encoder.table)
    assert (b"x-plain", b"hello") in {(e.name, e.value) for e in encoder.table}


# --- Huffman (RFC 9204 §4.1.2) -------------------------------------------------------------------


def test_huffman_is_used_only_when_shorter_and_never_when_disabled() -> None:
    """RFC 9204 §4.1.2: the H bit is a choice; the encoder picks the shorter form."""
    text = (b":path", b"/index.html")  # 8 bytes in Huffman, 11 as it is
    binary = (b":path", bytes(range(200, 220)))  # longer in Huffman
    _, section = Encoder().encode(0, [text, binary])
    reader = SpanReader(section, record=False)
    FieldSectionPrefix.parse(reader)
    first, second = parse_field_line(reader), parse_field_line(reader)
    assert isinstance(first, LiteralFieldLineWithNameReference) and first.huffman
    assert isinstance(second, LiteralFieldLineWithNameReference) and not second.huffman
    assert len(section) == 2 + (2 + 8) + (2 + 20)
    _, plain = Encoder(huffman=False).encode(0, [text])
    assert plain == bytes.fromhex("0000510b") + b"/index.html"


# --- the decoder stream (RFC 9204 §4.4) ---------------------------------------------------------


def encoder_with_sections() -> Encoder:
    encoder = Encoder()
    encoder.apply_settings(4096, 100)
    encoder.encode(4, [(b"x-a", b"1"), (b"x-a", b"1")])
    encoder.encode(4, [(b"x-b", b"2"), (b"x-b", b"2")])
    return encoder


def test_section_acknowledgment_acknowledges_the_oldest_section_on_the_stream() -> None:
    """RFC 9204 §4.4.1: the first section's Required Insert Count becomes known."""
    encoder = encoder_with_sections()
    encoder.feed_decoder(bytes.fromhex("84"))
    assert encoder.known_received_count == 1
    encoder.feed_decoder(bytes.fromhex("84"))
    assert encoder.known_received_count == 2


def test_section_acknowledgment_with_nothing_outstanding_is_an_error() -> None:
    """RFC 9204 §4.4.1: acknowledging a section that was never sent."""
    encoder = encoder_with_sections()
    with pytest.raises(DecoderStreamError, match=r"RFC 9204 §4\.4\.1"):
        encoder.feed_decoder(bytes.fromhex("88"))


def test_stream_cancellation_drops_every_outstanding_section_of_the_stream() -> None:
    """RFC 9204 §4.4.2: after a cancellation there is nothing left to acknowledge."""
    encoder = encoder_with_sections()
    encoder.feed_decoder(bytes.fromhex("44"))
    assert encoder.known_received_count == 0
    with pytest.raises(DecoderStreamError, match="QPACK_DECODER_STREAM_ERROR"):
        encoder.feed_decoder(bytes.fromhex("84"))


def test_a_section_for_an_abandoned_stream_refers_to_the_static_table_only() -> None:
    """RFC 9204 §4.4.2, §2.1.1, §2.1.2: the decoder will never acknowledge a section sent
    after its Stream Cancellation (the peer's reset crossed it), so a dynamic reference in
    it would keep its entry from eviction and hold a blocked-stream slot for good."""
    log = EventLog()
    encoder = Encoder(recorder=log.for_endpoint("client"))
    encoder.apply_settings(4096, 1)
    fields = [(b"x-a", b"1"), (b"x-a", b"1"), (b":method", b"GET"), (b"accept", b"*/*")]
    encoder.encode(0, fields)
    encoder.encode(0, fields)
    assert encoder.acknowledgments.blocking_streams(encoder.table.insert_count) == {0}
    encoder.feed_decoder(bytes.fromhex("40"))  # Stream Cancellation, stream 0
    encoder_stream, section = encoder.encode(0, fields)
    assert encoder_stream == b""
    assert section[:2] == b"\x00\x00", "Required Insert Count 0, Base 0"
    assert Decoder(4096, 1).decode(0, section).headers == fields
    assert encoder.acknowledgments.unacknowledged == {}
    assert not encoder.acknowledgments.reference_counts
    encoded = [event for event in log.events if event.name == "headers_encoded"]
    assert encoded[-1].summary.endswith(
        "(static table only: the decoder abandoned this stream, RFC 9204 §4.4.2)"
    )
    assert "abandoned" not in encoded[0].summary
    # The slot is free: another stream may block again, and its section refers to x-a.
    _, other = encoder.encode(4, fields)
    assert other[0] != 0 and encoder.acknowledgments.blocking_streams(1) == {4}


def test_only_the_most_recent_abandoned_streams_are_remembered() -> None:
    """A peer may name stream after stream in Stream Cancellations (RFC 9204 §4.4.2): the
    encoder's memory of them stays bounded."""
    encoder = Encoder()
    encoder.apply_settings(4096, 1)
    writer = SpanWriter(record=False)
    streams = range(0, 4 * (ABANDONED_REMEMBERED + 10), 4)
    for stream_id in streams:
        StreamCancellation(stream_id).serialize(writer)
    encoder.feed_decoder(writer.unit())
    assert list(encoder.acknowledgments.abandoned) == list(streams[-ABANDONED_REMEMBERED:])


def test_insert_count_increment_raises_the_known_received_count() -> None:
    """RFC 9204 §4.4.3: the count grows by the increment."""
    encoder = encoder_with_sections()
    encoder.feed_decoder(bytes.fromhex("02"))
    assert encoder.known_received_count == 2


@pytest.mark.parametrize("data", ["00", "03"])
def test_insert_count_increment_of_zero_or_beyond_the_inserts_is_an_error(data: str) -> None:
    """RFC 9204 §4.4.3: an increment of 0, or past the inserts sent (two here)."""
    encoder = encoder_with_sections()
    with pytest.raises(DecoderStreamError, match=r"RFC 9204 §4\.4\.3"):
        encoder.feed_decoder(bytes.fromhex(data))


def test_malformed_decoder_stream_bytes_are_a_decoder_stream_error() -> None:
    """RFC 9204 §4.1.1: a stream id too large for any integer h3learn accepts."""
    encoder = encoder_with_sections()
    with pytest.raises(DecoderStreamError, match="QPACK_DECODER_STREAM_ERROR"):
        encoder.feed_decoder(bytes.fromhex("ff" + "ff" * 10 + "01"))


def test_decoder_stream_integer_longer_than_9_continuation_bytes_is_a_decoder_stream_error() -> (
    None
):
    """RFC 7541 §5.1 (limit in octet length): 0x80 bytes one at a time end in an error."""
    encoder = encoder_with_sections()
    encoder.feed_decoder(b"\xff")
    for _ in range(8):
        encoder.feed_decoder(b"\x80")
    with pytest.raises(DecoderStreamError, match=r"QPACK_DECODER_STREAM_ERROR \(RFC 7541 §5\.1\)"):
        encoder.feed_decoder(b"\x80")


def test_decoder_instructions_may_arrive_one_byte_at_a_time() -> None:
    """RFC 9204 §4.4: an unfinished instruction waits for the rest of its bytes."""
    encoder = Encoder()
    encoder.apply_settings(4096, 100)
    encoder.encode(300, [(b"x-a", b"1"), (b"x-a", b"1")])
    acknowledgment = bytes.fromhex("ff ad 01")  # Section Acknowledgment (stream 300)
    for byte in acknowledgment:
        assert encoder.known_received_count == 0
        encoder.feed_decoder(bytes([byte]))
    assert encoder.known_received_count == 1


# --- random round trips ----------------------------------------------------------------------

NAMES = st.sampled_from(
    [b":authority", b":path", b"cookie", b"user-agent", b"x-a", b"x-b", b"content-type", b"etag"]
)
VALUES = st.one_of(
    st.sampled_from([b"", b"/", b"GET", b"text/html", b"a" * 30, b"\x00\xff"]),
    st.binary(max_size=40),
)
SECTIONS = st.lists(st.lists(st.tuples(NAMES, VALUES), max_size=8), min_size=1, max_size=12)


class Checker:
    """Watches an encoder's events and decoder stream, and checks every eviction.

    It keeps its own account of the sections awaiting acknowledgment (from the
    headers_encoded events and the decoder instructions delivered), independent of the
    encoder's bookkeeping.
    """

    def __init__(self, encoder: Encoder, log: EventLog) -> None:
        self.encoder = encoder
        self.log = log
        self.seen = 0
        self.outstanding: dict[int, list[set[int]]] = {}

    def after_encode(self, stream_id: int) -> None:
        for event in self.log.events[self.seen :]:
            if event.name == "dynamic_table_updated" and event.data["update_type"] == "evicted":
                for entry in event.data["entries"]:
                    index = entry["index"]
                    assert index < self.encoder.known_received_count, "unacknowledged entry"
                    assert not any(
                        index in refs for sections in self.outstanding.values() for refs in sections
                    ), "entry referenced by an unacknowledged section"
            if event.name == "headers_encoded":
                referenced = {
                    line["absolute_index"]
                    for line in event.data["field_lines"]
                    if "absolute_index" in line
                }
                if referenced:
                    self.outstanding.setdefault(stream_id, []).append(referenced)
        self.seen = len(self.log.events)

    def deliver(self, decoder_stream: bytes) -> None:
        """Feed decoder stream bytes to the encoder, noting what they acknowledge."""
        reader = SpanReader(decoder_stream, record=False)
        while not reader.at_end():
            instruction = parse_decoder_instruction(reader)
            if isinstance(instruction, SectionAcknowledgment):
                self.outstanding[instruction.stream_id].pop(0)
            elif isinstance(instruction, StreamCancellation):
                self.outstanding.pop(instruction.stream_id, None)
        self.encoder.feed_decoder(decoder_stream)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sections=SECTIONS,
    capacity=st.sampled_from([0, 64, 100, 256, 1000]),
    blocked=st.integers(0, 3),
    policy=st.lists(st.sampled_from(["deliver", "delay", "cancel"]), min_size=12, max_size=12),
    huffman=st.booleans(),
)
def test_random_fields_round_trip_and_keep_the_eviction_and_blocking_rules(
    sections: list[list[Header]],
    capacity: int,
    blocked: int,
    policy: list[str],
    huffman: bool,
) -> None:
    """RFC 9204 §2.1.1 and §2.1.2 under any acknowledgment timing; both decoders agree.

    Each section reaches h3learn's decoder before the encoder stream bytes it needs (the
    worst case for blocking); the decoder's instructions reach the encoder at once, later
    ("delay"), or after the decoder cancels the stream.
    """
    log = EventLog()
    encoder = Encoder(log.for_endpoint("client"), huffman=huffman)
    encoder.apply_settings(capacity, blocked)
    checker = Checker(encoder, log)
    decoder = Decoder(capacity, blocked)
    reference = pylsqpack.Decoder(capacity, blocked)
    delayed = bytearray()
    for position, headers in enumerate(sections):
        stream_id = 4 * (position % 4)  # streams are reused: one stream holds several sections
        encoder_stream, section = encoder.encode(stream_id, headers)
        checker.after_encode(stream_id)
        result = decoder.decode(stream_id, section)  # raises if too many streams block
        assert len(decoder.blocked_streams) <= blocked
        for unblocked in decoder.feed_encoder(encoder_stream).sections:
            assert unblocked.stream_id == stream_id
            result = unblocked
        assert result is not None and result.headers == headers
        reference.feed_encoder(encoder_stream)
        if headers:  # pylsqpack refuses an empty field section, which RFC 9204 allows
            assert list(reference.feed_header(stream_id, section)[1]) == headers
        action = policy[position % len(policy)]
        if action == "cancel":
            decoder.cancel_stream(stream_id)
        delayed += decoder.data_to_send()
        if action != "delay":
            checker.deliver(bytes(delayed))
            delayed.clear()
    checker.deliver(bytes(delayed))
    assert encoder.known_received_count == decoder.acknowledged_insert_count
    if capacity == 0:
        assert encoder.table.insert_count == 0
