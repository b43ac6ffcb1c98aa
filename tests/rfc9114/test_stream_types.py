"""RFC 9114 §6: stream IDs, stream types and the header of a unidirectional stream.

Stream IDs are checked against the table of RFC 9000 §2.1; the stream header against its
layout (§6.2, §6.2.2), aioquic's encoding of it, a byte-at-a-time feed, and a Hypothesis round
trip that keeps longer-than-needed varint encodings (RFC 9000 §16).
"""

from __future__ import annotations

import pytest
from aioquic.buffer import encode_uint_var
from aioquic.h3.connection import StreamType as AioquicStreamType
from hypothesis import given
from hypothesis import strategies as st

from h3learn.h3.errors import ErrorCode, H3ConnectionError, reserved_value
from h3learn.h3.stream_types import (
    OPENED_BY,
    StreamHeader,
    StreamKind,
    StreamType,
    check_stream_opener,
    describe_stream_id,
    initiator,
    is_bidirectional,
    is_request_stream,
    is_reserved_stream_type,
    is_unidirectional,
    parse_stream_header,
    stream_type_name,
)
from h3learn.wire.errors import NeedMoreData
from h3learn.wire.spans import SpanReader, SpanWriter
from h3learn.wire.varint import VARINT_MAX, varint_length

VARINTS = st.integers(min_value=0, max_value=VARINT_MAX)


def serialize(header: StreamHeader) -> SpanWriter:
    writer = SpanWriter()
    header.serialize(writer)
    return writer


@st.composite
def encoding_lengths(draw: st.DrawFn, values: list[int]) -> tuple[int, ...] | None:
    """Either None (shortest forms) or, for each value, a length at least its shortest."""
    lengths = tuple(
        draw(st.sampled_from([n for n in (1, 2, 4, 8) if n >= varint_length(v)])) for v in values
    )
    if all(length == varint_length(v) for v, length in zip(values, lengths, strict=True)):
        return None
    return lengths


@st.composite
def stream_headers(draw: st.DrawFn) -> StreamHeader:
    stream_type = draw(st.one_of(st.sampled_from(list(StreamType)), VARINTS))
    push_id = draw(VARINTS) if stream_type == StreamType.PUSH else None
    values = [stream_type] if push_id is None else [stream_type, push_id]
    return StreamHeader(stream_type, push_id, draw(encoding_lengths(values)))


# -- RFC 9000 §2.1: the two low bits of a stream ID --------------------------------------------


@pytest.mark.parametrize(
    ("stream_id", "opener", "unidirectional"),
    [(0, "client", False), (1, "server", False), (2, "client", True), (3, "server", True)],
)
def test_the_two_low_bits_say_who_opened_the_stream_and_which_way_it_flows(
    stream_id: int, opener: str, unidirectional: bool
) -> None:
    for nth in range(3):
        assert initiator(stream_id + 4 * nth) == opener
        assert is_unidirectional(stream_id + 4 * nth) is unidirectional
        assert is_bidirectional(stream_id + 4 * nth) is not unidirectional


def test_request_streams_are_the_client_initiated_bidirectional_ones() -> None:
    """RFC 9114 §6.1: the first request is on stream 0, then 4, 8, ..."""
    assert [s for s in range(16) if is_request_stream(s)] == [0, 4, 8, 12]


def test_a_stream_id_is_described_in_words() -> None:
    assert describe_stream_id(7) == "stream 7 (server-initiated, unidirectional)"


# -- §6.2: stream types -----------------------------------------------------------------------


def test_stream_types_match_the_registry_and_aioquic() -> None:
    """RFC 9114 §11.2.4 and RFC 9204 §8.2."""
    assert {t.name: t.value for t in StreamType} == {
        "CONTROL": 0x00,
        "PUSH": 0x01,
        "QPACK_ENCODER": 0x02,
        "QPACK_DECODER": 0x03,
    }
    for stream_type in StreamType:
        assert AioquicStreamType[stream_type.name].value == stream_type.value


def test_the_stream_kinds_that_carry_frames_are_control_request_and_push() -> None:
    assert [kind.value for kind in StreamKind] == ["control", "request", "push"]


def test_reserved_stream_types_are_recognised_and_named() -> None:
    """RFC 9114 §6.2.3."""
    assert is_reserved_stream_type(0x21) and is_reserved_stream_type(reserved_value(1000))
    assert not is_reserved_stream_type(0x54)
    assert stream_type_name(0x21) == "reserved stream type 0x21"
    assert stream_type_name(0x54) == "unknown stream type 0x54"


def test_only_a_server_may_open_a_push_stream() -> None:
    """RFC 9114 §6.2.2: a client-initiated push stream is H3_STREAM_CREATION_ERROR."""
    assert OPENED_BY[StreamType.PUSH] == {"server"}
    check_stream_opener(StreamType.PUSH, "server")
    with pytest.raises(H3ConnectionError) as caught:
        check_stream_opener(StreamType.PUSH, "client")
    assert caught.value.code == ErrorCode.H3_STREAM_CREATION_ERROR
    assert str(caught.value).startswith("H3_STREAM_CREATION_ERROR (RFC 9114 §6.2.2): ")


def test_either_endpoint_may_open_control_qpack_reserved_and_unknown_streams() -> None:
    for stream_type in (0x00, 0x02, 0x03, 0x21, 0x54):
        check_stream_opener(stream_type, "client")
        check_stream_opener(stream_type, "server")


# -- §6.2, §6.2.2: the stream header ------------------------------------------------------------


def test_a_control_stream_header_is_one_byte_labelled_stream_type() -> None:
    writer = serialize(StreamHeader(StreamType.CONTROL))
    assert writer.unit() == b"\x00"
    (span,) = writer.field_spans()
    assert (span.name, span.offset, span.length, span.value) == ("Stream Type", 0, 1, 0)


def test_a_push_stream_header_carries_the_push_id_after_the_type() -> None:
    writer = serialize(StreamHeader(StreamType.PUSH, push_id=300))
    assert writer.unit() == encode_uint_var(1) + encode_uint_var(300)
    assert [span.name for span in writer.field_spans()] == ["Stream Type", "Push ID"]


def test_a_push_id_belongs_on_push_stream_headers_only() -> None:
    with pytest.raises(ValueError):
        StreamHeader(StreamType.PUSH)
    with pytest.raises(ValueError):
        StreamHeader(StreamType.CONTROL, push_id=0)


@given(stream_headers())
def test_stream_headers_round_trip_with_their_exact_bytes_and_labels(header: StreamHeader) -> None:
    writer = serialize(header)
    reader = SpanReader(writer.unit())
    assert parse_stream_header(reader) == header
    assert reader.at_end()
    assert reader.field_spans() == writer.field_spans()
    assert header.size() == len(writer.unit())
    covered = sorted(
        position
        for span in writer.field_spans()
        for position in range(span.offset, span.offset + span.length)
    )
    assert covered == list(range(len(writer.unit())))


@given(stream_headers())
def test_stream_header_matches_aioquic_when_minimal(header: StreamHeader) -> None:
    minimal = StreamHeader(header.stream_type, header.push_id)
    expected = encode_uint_var(minimal.stream_type)
    if minimal.push_id is not None:
        expected += encode_uint_var(minimal.push_id)
    assert serialize(minimal).unit() == expected


def test_a_stream_header_fed_a_byte_at_a_time_asks_for_more_until_complete() -> None:
    raw = serialize(StreamHeader(StreamType.PUSH, push_id=70000, varint_lengths=(2, 8))).unit()
    for end in range(len(raw)):
        with pytest.raises(NeedMoreData):
            parse_stream_header(SpanReader(raw[:end]))
    assert parse_stream_header(SpanReader(raw)).push_id == 70000


def test_a_longer_than_needed_stream_type_is_kept_and_explained() -> None:
    raw = b"\x40\x00"  # CONTROL in two bytes
    reader = SpanReader(raw)
    header = parse_stream_header(reader)
    assert header == StreamHeader(StreamType.CONTROL, varint_lengths=(2,))
    assert serialize(header).unit() == raw
    assert "Sent in 2 bytes where 1 would do" in reader.field_spans()[0].explain


def test_qlog_names_the_stream_type_and_keeps_unknown_values() -> None:
    assert StreamHeader(StreamType.QPACK_ENCODER).qlog(2) == {
        "stream_id": 2,
        "stream_type": "qpack_encode",
    }
    assert StreamHeader(StreamType.PUSH, push_id=4).qlog(3)["associated_push_id"] == 4
    assert StreamHeader(0x21).qlog(6)["stream_type"] == "reserved"
    assert StreamHeader(0x54).qlog(6) == {
        "stream_id": 6,
        "stream_type": "unknown",
        "stream_type_bytes": 0x54,
    }
