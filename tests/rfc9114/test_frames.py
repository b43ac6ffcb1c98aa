"""RFC 9114 §7: the frame layout, every frame type, and the parser that cuts streams into frames.

Checked four ways: Hypothesis round trips of every frame, longer-than-needed varints included
(same frame, same bytes, same labels, every byte labelled once); the parser fed whole, a
byte at a time and split at random points, which must agree; aioquic's encoder and a real
aioquic H3Connection as a second opinion on the bytes; and every error the RFC names for a
malformed, misplaced or oversized frame, with its code, section and rule.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections import defaultdict
from types import SimpleNamespace
from typing import Any

import pytest
from aioquic.buffer import encode_uint_var
from aioquic.h3.connection import FrameType as AioquicFrameType
from aioquic.h3.connection import H3Connection, encode_frame, encode_settings
from hypothesis import given, settings
from hypothesis import strategies as st

from h3learn.events import FieldSpan
from h3learn.h3.errors import ErrorCode, H3ConnectionError, H3StreamError, reserved_value
from h3learn.h3.frame_layout import (
    HTTP2_ONLY_FRAME_TYPES,
    FrameType,
    frame_type_name,
    is_reserved_frame_type,
)
from h3learn.h3.frame_parser import (
    DEFAULT_MAX_PAYLOAD_LENGTH,
    FrameLimits,
    FrameParser,
    ParsedFrame,
    ParserState,
    parse_frame,
    parse_frames,
)
from h3learn.h3.frame_placement import ALLOWED_ON, check_frame_allowed
from h3learn.h3.frames import (
    CancelPushFrame,
    DataFrame,
    Frame,
    GoawayFrame,
    HeadersFrame,
    MaxPushIdFrame,
    PushPromiseFrame,
    SettingsFrame,
    UnknownFrame,
    serialize_frame,
)
from h3learn.h3.priority_update import PriorityUpdateFrame
from h3learn.h3.settings import Settings
from h3learn.h3.stream_types import StreamKind, StreamType, parse_stream_header
from h3learn.wire.spans import SpanReader
from h3learn.wire.varint import VARINT_MAX, varint_length

VARINTS = st.integers(min_value=0, max_value=VARINT_MAX)
SMALL_VARINTS = st.integers(min_value=0, max_value=20000)
PAYLOADS = st.binary(max_size=80)
UNKNOWN_TYPES = st.one_of(
    st.integers(min_value=0, max_value=10_000).map(reserved_value),
    VARINTS.filter(lambda t: t not in set(FrameType) and t not in HTTP2_ONLY_FRAME_TYPES),
)


# -- strategies -----------------------------------------------------------------------------


def payload_varints(frame: Frame) -> list[int]:
    """The integers inside the payload, in wire order."""
    if isinstance(frame, SettingsFrame):
        return [number for pair in frame.settings for number in pair]
    if isinstance(frame, CancelPushFrame | MaxPushIdFrame | PushPromiseFrame):
        return [frame.push_id]
    if isinstance(frame, GoawayFrame):
        return [frame.id]
    if isinstance(frame, PriorityUpdateFrame):
        return [frame.element_id]
    return []


def longer_or_equal(draw: st.DrawFn, value: int) -> int:
    return draw(st.sampled_from([n for n in (1, 2, 4, 8) if n >= varint_length(value)]))


@st.composite
def minimal_frames(draw: st.DrawFn) -> Frame:
    """Any frame of any type, every integer in its shortest form."""
    builders: list[st.SearchStrategy[Frame]] = [
        st.builds(DataFrame, PAYLOADS),
        st.builds(HeadersFrame, PAYLOADS),
        st.builds(CancelPushFrame, VARINTS),
        st.builds(SettingsFrame, st.lists(st.tuples(VARINTS, VARINTS), max_size=5).map(tuple)),
        st.builds(PushPromiseFrame, VARINTS, PAYLOADS),
        st.builds(GoawayFrame, VARINTS),
        st.builds(MaxPushIdFrame, VARINTS),
        st.builds(PriorityUpdateFrame, VARINTS, st.binary(max_size=20), st.booleans()),
        st.builds(UnknownFrame, UNKNOWN_TYPES, PAYLOADS),
    ]
    return draw(st.one_of(builders))


@st.composite
def any_frames(draw: st.DrawFn) -> Frame:
    """Any frame, with each integer sent in its shortest form or a longer one (RFC 9000 §16)."""
    frame = draw(minimal_frames())
    inside = payload_varints(frame)
    inside_lengths = [longer_or_equal(draw, value) for value in inside]
    payload_length = frame.payload_length() - sum(map(varint_length, inside)) + sum(inside_lengths)
    values = [frame.frame_type, payload_length, *inside]
    lengths = [
        longer_or_equal(draw, frame.frame_type),
        longer_or_equal(draw, payload_length),
        *inside_lengths,
    ]
    if all(length == varint_length(v) for v, length in zip(values, lengths, strict=True)):
        return frame
    return dataclasses.replace(frame, varint_lengths=tuple(lengths))


def feed_in_pieces(data: bytes, cuts: list[int]) -> Any:
    """Feed ``data`` cut at ``cuts``, then end the stream; the frames or the error raised."""
    parser = FrameParser()
    frames: list[ParsedFrame] = []
    bounds = [0, *sorted(set(cuts)), len(data)]
    try:
        for start, end in itertools.pairwise(bounds):
            frames += parser.feed(data[start:end])
        parser.eof()
    except H3ConnectionError as error:
        return ("error", str(error), frames + parser.frames_before_error)
    return ("frames", frames)


def assert_every_byte_labelled_once(raw: bytes, spans: tuple[FieldSpan, ...]) -> None:
    covered = sorted(
        position for span in spans for position in range(span.offset, span.offset + span.length)
    )
    assert covered == list(range(len(raw)))
    assert all(span.length >= 1 and span.bit_offset is None for span in spans)


def frame_error(data: bytes, code: ErrorCode = ErrorCode.H3_FRAME_ERROR) -> H3ConnectionError:
    with pytest.raises(H3ConnectionError) as caught:
        parse_frames(data)
    assert caught.value.code == code, caught.value
    return caught.value


# -- §7.1: the layout and the round trip ------------------------------------------------------


@given(any_frames())
def test_every_frame_parses_back_to_itself_with_the_same_bytes_and_labels(frame: Frame) -> None:
    raw, spans = serialize_frame(frame)
    (parsed,) = parse_frames(raw)
    assert parsed.frame == frame
    assert parsed.raw == raw
    assert parsed.spans == spans
    assert serialize_frame(parsed.frame)[0] == raw


@given(any_frames())
def test_every_byte_of_every_frame_is_labelled_exactly_once(frame: Frame) -> None:
    raw, spans = serialize_frame(frame)
    assert_every_byte_labelled_once(raw, spans)
    assert [span.name for span in spans[:2]] == ["Type", "Length"]
    assert spans[1].value == frame.payload_length() == len(raw) - spans[1].offset - spans[1].length


@given(any_frames())
def test_qlog_raw_info_gives_the_frame_and_payload_lengths(frame: Frame) -> None:
    raw, _ = serialize_frame(frame)
    assert frame.qlog()["raw"] == {"length": len(raw), "payload_length": frame.payload_length()}


def test_serializing_without_recording_gives_the_same_bytes_and_no_labels() -> None:
    frame = SettingsFrame(((1, 4096),))
    assert serialize_frame(frame, record=False) == (serialize_frame(frame)[0], ())
    assert parse_frame(serialize_frame(frame)[0], record=False).spans == ()


def test_a_longer_than_needed_length_is_kept_and_explained() -> None:
    """RFC 9000 §16: ``40 01`` is Length 1 in two bytes; the frame is still GOAWAY(4)."""
    raw = bytes.fromhex("07400104")
    (parsed,) = parse_frames(raw)
    assert parsed.frame == GoawayFrame(4, varint_lengths=(1, 2, 1))
    assert serialize_frame(parsed.frame)[0] == raw
    assert "Sent in 2 bytes where 1 would do" in parsed.spans[1].explain
    assert "Sent in" not in parsed.spans[0].explain


def test_a_frame_type_may_also_be_sent_in_a_longer_form() -> None:
    raw = bytes.fromhex("8000000000")  # DATA, its Type in 4 bytes, empty
    (parsed,) = parse_frames(raw)
    assert parsed.frame == DataFrame(b"", varint_lengths=(4, 1))
    assert serialize_frame(parsed.frame)[0] == raw


def test_varint_lengths_must_name_every_integer_of_the_frame() -> None:
    with pytest.raises(ValueError):
        serialize_frame(GoawayFrame(4, varint_lengths=(1, 1)))


# -- §7.1: the parser, however the bytes arrive -----------------------------------------------


@settings(max_examples=60)
@given(st.lists(any_frames(), max_size=5), st.data())
def test_the_parser_finds_the_same_frames_whole_a_byte_at_a_time_and_split_anywhere(
    frames: list[Frame], data: st.DataObject
) -> None:
    stream = b"".join(serialize_frame(frame)[0] for frame in frames)
    cuts = data.draw(st.lists(st.integers(min_value=0, max_value=len(stream)), max_size=8))
    whole = feed_in_pieces(stream, [])
    assert whole[0] == "frames"
    assert [parsed.frame for parsed in whole[1]] == frames
    assert feed_in_pieces(stream, list(range(len(stream)))) == whole
    assert feed_in_pieces(stream, cuts) == whole


@settings(max_examples=150)
@given(st.binary(max_size=60), st.data())
def test_errors_do_not_depend_on_how_the_bytes_arrive(stream: bytes, data: st.DataObject) -> None:
    cuts = data.draw(st.lists(st.integers(min_value=0, max_value=len(stream)), max_size=6))
    whole = feed_in_pieces(stream, [])
    assert feed_in_pieces(stream, list(range(len(stream)))) == whole
    assert feed_in_pieces(stream, cuts) == whole


def test_the_parser_holds_a_frame_until_its_last_byte_and_reports_where_it_is() -> None:
    raw = serialize_frame(DataFrame(b"hello"))[0]
    parser = FrameParser()
    assert parser.state is ParserState.TYPE
    assert parser.feed(raw[:1]) == [] and parser.state is ParserState.LENGTH
    assert parser.feed(raw[1:4]) == [] and parser.state is ParserState.PAYLOAD
    assert parser.buffered == 4
    (parsed,) = parser.feed(raw[4:])
    assert parsed.frame == DataFrame(b"hello")
    assert parser.state is ParserState.TYPE and parser.buffered == 0


def test_a_stream_ending_between_frames_is_clean() -> None:
    parser = FrameParser()
    parser.feed(serialize_frame(GoawayFrame(0))[0])
    parser.eof()


@given(any_frames().filter(lambda frame: len(serialize_frame(frame)[0]) > 1), st.data())
def test_a_stream_ending_inside_a_frame_is_h3_frame_error(frame: Frame, data: Any) -> None:
    """RFC 9114 §7.1: a cleanly closed stream whose last frame is truncated."""
    raw = serialize_frame(frame)[0]
    cut = data.draw(st.integers(min_value=1, max_value=len(raw) - 1))
    parser = FrameParser()
    assert parser.feed(raw[:cut]) == []
    with pytest.raises(H3ConnectionError) as caught:
        parser.eof()
    assert caught.value.code == ErrorCode.H3_FRAME_ERROR
    assert caught.value.rfc == "9114#7.1"
    assert caught.value.rule.startswith("the stream ended ")


def test_the_truncation_message_says_how_far_the_payload_got() -> None:
    error = frame_error(bytes.fromhex("0105aabb"))
    assert str(error) == (
        "H3_FRAME_ERROR (RFC 9114 §7.1): the stream ended 2 bytes into the 5-byte payload "
        "of a HEADERS frame"
    )


def test_frames_completed_before_an_error_in_the_same_feed_are_kept() -> None:
    parser = FrameParser()
    with pytest.raises(H3ConnectionError):
        parser.feed(serialize_frame(SettingsFrame())[0] + b"\x06")
    assert [parsed.frame for parsed in parser.frames_before_error] == [SettingsFrame()]


def test_feed_then_error_gives_the_frames_before_an_error_once_then_only_the_error() -> None:
    """The frames before a broken one are handled first, and once (RFC 9114 §7.1)."""
    parser = FrameParser()
    frames, error = parser.feed_then_error(serialize_frame(SettingsFrame())[0] + b"\x06")
    assert [parsed.frame for parsed in frames] == [SettingsFrame()]
    assert error is not None and error.code == ErrorCode.H3_FRAME_UNEXPECTED
    assert parser.feed_then_error(b"\x00") == ([], error)


def test_after_an_error_the_parser_keeps_raising_it() -> None:
    parser = FrameParser()
    with pytest.raises(H3ConnectionError) as first:
        parser.feed(b"\x06")
    with pytest.raises(H3ConnectionError) as again:
        parser.feed(b"\x00")
    assert again.value is first.value
    with pytest.raises(H3ConnectionError):
        parser.eof()


def test_parse_frame_wants_exactly_one_frame() -> None:
    raw = serialize_frame(MaxPushIdFrame(3))[0]
    assert parse_frame(raw).frame == MaxPushIdFrame(3)
    with pytest.raises(ValueError):
        parse_frame(raw + b"\x00")
    with pytest.raises(H3ConnectionError):
        parse_frame(raw[:-1])


# -- §7.1, §10.8: the payload must hold exactly its fields --------------------------------------


@pytest.mark.parametrize(
    ("raw", "rule"),
    [
        ("07020400", "the GOAWAY payload has 1 byte left over after its Stream ID/Push ID field"),
        ("0d03400100", "the MAX_PUSH_ID payload has 1 byte left over after its Push ID field"),
        ("03020506", "the CANCEL_PUSH payload has 1 byte left over after its Push ID field"),
        (
            "0703050607",
            "the GOAWAY payload has 2 bytes left over after its Stream ID/Push ID field",
        ),
    ],
)
def test_bytes_after_the_last_field_are_h3_frame_error(raw: str, rule: str) -> None:
    error = frame_error(bytes.fromhex(raw))
    assert (error.rfc, error.rule) == ("9114#7.1", rule)


def test_a_push_id_that_fills_the_declared_length_exactly_is_valid() -> None:
    parsed = parse_frames(bytes.fromhex("030480000001"))[0]
    assert parsed.frame == CancelPushFrame(1, (1, 1, 4))


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ("070140", "GOAWAY payload ends inside its Stream ID/Push ID field"),
        ("0d028000", "MAX_PUSH_ID payload ends inside its Push ID field"),
        ("030140", "CANCEL_PUSH payload ends inside its Push ID field"),
        ("040101", "SETTINGS payload ends inside its Value field"),
        ("0403400140", "SETTINGS payload ends inside its Value field"),
        ("0402c000", "SETTINGS payload ends inside its Identifier field"),
        ("050140", "PUSH_PROMISE payload ends inside its Push ID field"),
        (
            "800f07000140",
            "PRIORITY_UPDATE payload ends inside its Prioritized Element ID field",
        ),
    ],
)
def test_a_varint_cut_short_by_the_declared_length_is_h3_frame_error(raw: str, field: str) -> None:
    error = frame_error(bytes.fromhex(raw))
    assert error.rfc == "9114#7.1"
    assert error.rule == f"the {field}"


@pytest.mark.parametrize("frame_type", [0x03, 0x07, 0x0D])
@pytest.mark.parametrize("length", [0, 9, 1000])
def test_a_one_integer_frame_with_an_impossible_length_is_refused_at_its_length(
    frame_type: int, length: int
) -> None:
    """The payload is one varint, 1 to 8 bytes: other lengths fail before any payload arrives."""
    parser = FrameParser()
    header = encode_uint_var(frame_type) + encode_uint_var(length)
    with pytest.raises(H3ConnectionError) as caught:
        parser.feed(header)
    assert caught.value.code == ErrorCode.H3_FRAME_ERROR
    assert f"cannot take {length} bytes" in caught.value.rule


@pytest.mark.parametrize("frame_type", [0x05, 0xF0700, 0xF0701])
def test_a_frame_that_starts_with_an_id_cannot_be_empty(frame_type: int) -> None:
    frame_error(encode_uint_var(frame_type) + b"\x00")


def test_an_empty_settings_frame_is_valid() -> None:
    assert parse_frames(b"\x04\x00")[0].frame == SettingsFrame(())


# -- §7.2.1 - §7.2.7, RFC 9218 §7.2: each frame's exact bytes --------------------------------------


@pytest.mark.parametrize(
    ("frame", "hex_bytes"),
    [
        (DataFrame(b"hi"), "00026869"),
        (HeadersFrame(b"\x00\x00\xd1"), "01030000d1"),
        (CancelPushFrame(3), "030103"),
        (SettingsFrame(((0x01, 4096), (0x07, 16))), "04050150000710"),
        (PushPromiseFrame(64, b"\x00\x00"), "050440400000"),
        (GoawayFrame(4), "070104"),
        (MaxPushIdFrame(8), "0d0108"),
        (PriorityUpdateFrame(4, b"u=1"), "800f07000404753d31"),
        (PriorityUpdateFrame(2, b"i", push=True), "800f0701020269"),
        (UnknownFrame(0x21, b""), "2100"),
    ],
)
def test_each_frame_has_the_layout_its_section_draws(frame: Frame, hex_bytes: str) -> None:
    raw = bytes.fromhex(hex_bytes)
    assert serialize_frame(frame)[0] == raw
    assert parse_frames(raw)[0].frame == frame


def test_frame_types_match_the_registry() -> None:
    """RFC 9114 §11.2.1 and RFC 9218 §16."""
    assert {t.name: t.value for t in FrameType} == {
        "DATA": 0x00,
        "HEADERS": 0x01,
        "CANCEL_PUSH": 0x03,
        "SETTINGS": 0x04,
        "PUSH_PROMISE": 0x05,
        "GOAWAY": 0x07,
        "MAX_PUSH_ID": 0x0D,
        "PRIORITY_UPDATE_REQUEST": 0xF0700,
        "PRIORITY_UPDATE_PUSH": 0xF0701,
    }
    for frame_type in list(FrameType)[:7]:
        assert AioquicFrameType[frame_type.name].value == frame_type.value


def test_labels_name_the_fields_of_the_frame_diagram() -> None:
    names = {
        CancelPushFrame(1): ["Type", "Length", "Push ID"],
        SettingsFrame(((6, 100),)): ["Type", "Length", "Identifier", "Value"],
        PushPromiseFrame(1, b"\x00\x00"): ["Type", "Length", "Push ID", "Encoded Field Section"],
        GoawayFrame(0): ["Type", "Length", "Stream ID/Push ID"],
        PriorityUpdateFrame(0, b"u=2"): [
            "Type",
            "Length",
            "Prioritized Element ID",
            "Priority Field Value",
        ],
    }
    for frame, expected in names.items():
        assert [span.name for span in serialize_frame(frame)[1]] == expected
    spans = serialize_frame(SettingsFrame(((6, 100),)))[1]
    assert "MAX_FIELD_SECTION_SIZE" in spans[2].explain
    assert spans[2].rfc == "9114#7.2.4.1"


def test_describe_gives_one_line_per_frame() -> None:
    assert DataFrame(b"abc").describe() == "DATA (3 bytes)"
    assert SettingsFrame(((1, 4096), (0x21, 0))).describe() == (
        "SETTINGS (QPACK_MAX_TABLE_CAPACITY=4096, reserved setting 0x21=0)"
    )
    assert GoawayFrame(8).describe() == "GOAWAY (ID 8)"
    assert PriorityUpdateFrame(4, b"u=1, i").describe() == "PRIORITY_UPDATE (stream 4: 'u=1, i')"
    assert UnknownFrame(0x54, b"xy").describe() == "unknown frame type 0x54 (2 bytes, ignored)"
    # HTTP/2's types are not ignored: receiving one is H3_FRAME_UNEXPECTED (RFC 9114 §7.2.8).
    assert UnknownFrame(0x08, b"").describe() == "WINDOW_UPDATE (HTTP/2 only) (0 bytes, forbidden)"


def test_an_http2_only_frame_is_labelled_forbidden_not_skipped() -> None:
    """RFC 9114 §7.2.8: HTTP/2's frame types are reserved, and receiving one is an error."""
    frame = UnknownFrame(0x08, b"x")
    assert frame.describe() == "WINDOW_UPDATE (HTTP/2 only) (1 bytes, forbidden)"
    payload = serialize_frame(frame)[1][-1]
    assert payload.name == "Frame Payload" and "H3_FRAME_UNEXPECTED" in payload.explain


def test_qlog_frames_have_the_shapes_of_the_http3_qlog_schema() -> None:
    """draft-ietf-quic-qlog-h3-events: HTTP3*Frame definitions."""

    def without_raw(frame: Frame) -> dict[str, Any]:
        data = frame.qlog()
        del data["raw"]
        return data

    assert without_raw(DataFrame(b"x")) == {"frame_type": "data"}
    assert without_raw(HeadersFrame(b"")) == {"frame_type": "headers"}
    assert without_raw(CancelPushFrame(2)) == {"frame_type": "cancel_push", "push_id": 2}
    assert without_raw(SettingsFrame(((7, 16),))) == {
        "frame_type": "settings",
        "settings": [{"name": "settings_qpack_blocked_streams", "value": 16}],
    }
    assert without_raw(PushPromiseFrame(1, b"")) == {"frame_type": "push_promise", "push_id": 1}
    assert without_raw(GoawayFrame(4)) == {"frame_type": "goaway", "id": 4}
    assert without_raw(MaxPushIdFrame(9)) == {"frame_type": "max_push_id", "push_id": 9}
    assert without_raw(PriorityUpdateFrame(4, b"u=1")) == {
        "frame_type": "priority_update",
        "stream_id": 4,
        "priority_field_value": "u=1",
    }
    assert without_raw(PriorityUpdateFrame(1, b"u=1", push=True))["push_id"] == 1
    assert without_raw(UnknownFrame(0x40, b"")) == {
        "frame_type": "reserved",
        "frame_type_bytes": 0x40,
    }
    assert without_raw(UnknownFrame(0x54, b"")) == {
        "frame_type": "unknown",
        "frame_type_bytes": 0x54,
    }


def test_long_payloads_are_shown_cut_short_in_their_label() -> None:
    spans = serialize_frame(DataFrame(b"a" * 100))[1]
    assert spans[2].value == "a" * 64 + "…"
    assert spans[2].length == 100


# -- §7.2.8: reserved types, and the types HTTP/2 used ---------------------------------------------


@given(st.integers(min_value=0, max_value=10_000).map(reserved_value), PAYLOADS)
def test_a_reserved_frame_type_is_skipped_as_an_unknown_frame(
    frame_type: int, payload: bytes
) -> None:
    assert is_reserved_frame_type(frame_type)
    raw = encode_frame(frame_type, payload)
    (parsed,) = parse_frames(raw)
    assert parsed.frame == UnknownFrame(frame_type, payload)
    assert parsed.frame.qlog()["frame_type"] == "reserved"
    assert parsed.frame.section == "9114#7.2.8"


def test_an_unknown_frame_type_is_skipped_too() -> None:
    """RFC 9114 §9: unknown frame types are ignored."""
    (parsed,) = parse_frames(encode_frame(0x54, b"\x01\x02"))
    assert parsed.frame == UnknownFrame(0x54, b"\x01\x02")
    assert parsed.frame.section == "9114#9"


@pytest.mark.parametrize(("frame_type", "name"), sorted(HTTP2_ONLY_FRAME_TYPES.items()))
def test_an_http2_only_frame_type_is_h3_frame_unexpected_as_soon_as_its_type_arrives(
    frame_type: int, name: str
) -> None:
    parser = FrameParser()
    with pytest.raises(H3ConnectionError) as caught:
        parser.feed(bytes([frame_type]))
    assert caught.value.code == ErrorCode.H3_FRAME_UNEXPECTED
    assert str(caught.value).startswith("H3_FRAME_UNEXPECTED (RFC 9114 §7.2.8): ")
    assert name in caught.value.rule
    assert frame_type_name(frame_type) == f"{name} (HTTP/2 only)"


def test_http2_only_types_are_exactly_priority_ping_window_update_and_continuation() -> None:
    assert HTTP2_ONLY_FRAME_TYPES == {
        0x02: "PRIORITY",
        0x06: "PING",
        0x08: "WINDOW_UPDATE",
        0x09: "CONTINUATION",
    }


def test_an_unknown_frame_cannot_take_a_type_that_has_its_own_class() -> None:
    with pytest.raises(ValueError):
        UnknownFrame(FrameType.DATA, b"")
    assert serialize_frame(UnknownFrame(0x06, b""))[0] == b"\x06\x00"  # for error lessons


# -- §7, Table 1: which frames may appear on which streams ---------------------------------------

#: RFC 9114 §7.2, "HTTP/3 Frames and Stream Type Overview", plus RFC 9218 §7.2.
TABLE_1 = {
    #                                  control, request, push
    FrameType.DATA: (False, True, True),
    FrameType.HEADERS: (False, True, True),
    FrameType.CANCEL_PUSH: (True, False, False),
    FrameType.SETTINGS: (True, False, False),
    FrameType.PUSH_PROMISE: (False, True, False),
    FrameType.GOAWAY: (True, False, False),
    FrameType.MAX_PUSH_ID: (True, False, False),
    FrameType.PRIORITY_UPDATE_REQUEST: (True, False, False),
    FrameType.PRIORITY_UPDATE_PUSH: (True, False, False),
}
KINDS = (StreamKind.CONTROL, StreamKind.REQUEST, StreamKind.PUSH)


def test_allowed_on_is_table_1_of_section_7_2() -> None:
    for frame_type, row in TABLE_1.items():
        assert ALLOWED_ON[frame_type] == {k for k, yes in zip(KINDS, row, strict=True) if yes}
    assert set(ALLOWED_ON) == set(FrameType)


@pytest.mark.parametrize(
    ("frame_type", "kind"),
    [(t, k) for t, row in TABLE_1.items() for k, yes in zip(KINDS, row, strict=True) if not yes],
)
def test_a_frame_on_a_stream_table_1_says_no_to_is_h3_frame_unexpected(
    frame_type: FrameType, kind: StreamKind
) -> None:
    with pytest.raises(H3ConnectionError) as caught:
        check_frame_allowed(frame_type, kind.value)
    assert caught.value.code == ErrorCode.H3_FRAME_UNEXPECTED
    assert caught.value.rule.startswith(f"{frame_type_name(frame_type)} frame on ")
    assert kind.value in caught.value.rule


def test_the_message_names_the_frame_the_stream_and_the_frames_own_section() -> None:
    with pytest.raises(H3ConnectionError) as caught:
        check_frame_allowed(DataFrame(b""), "control")
    assert str(caught.value) == (
        "H3_FRAME_UNEXPECTED (RFC 9114 §7.2.1): DATA frame on the control stream; it may "
        "appear only on a request stream or a push stream"
    )


@pytest.mark.parametrize(
    ("frame_type", "kind"),
    [(t, k) for t, row in TABLE_1.items() for k, yes in zip(KINDS, row, strict=True) if yes],
)
def test_a_frame_on_a_stream_table_1_allows_passes(frame_type: FrameType, kind: StreamKind) -> None:
    check_frame_allowed(frame_type, kind)


@pytest.mark.parametrize("kind", KINDS)
def test_reserved_and_unknown_frames_may_appear_on_any_stream_and_http2_ones_on_none(
    kind: StreamKind,
) -> None:
    check_frame_allowed(0x21, kind)
    check_frame_allowed(0x54, kind)
    with pytest.raises(H3ConnectionError):
        check_frame_allowed(0x06, kind)


@pytest.mark.parametrize(
    ("frame", "kind", "wrong_sender"),
    [
        (PushPromiseFrame(0, b""), "request", "client"),
        (MaxPushIdFrame(0), "control", "server"),
        (PriorityUpdateFrame(0, b""), "control", "server"),
    ],
)
def test_frames_only_one_side_may_send_are_h3_frame_unexpected_from_the_other(
    frame: Frame, kind: str, wrong_sender: str
) -> None:
    """RFC 9114 §7.2.5, §7.2.7 and RFC 9218 §7.2."""
    right_sender = "server" if wrong_sender == "client" else "client"
    check_frame_allowed(frame, kind, sender=right_sender)
    with pytest.raises(H3ConnectionError) as caught:
        check_frame_allowed(frame, kind, sender=wrong_sender)
    assert caught.value.code == ErrorCode.H3_FRAME_UNEXPECTED
    assert f"sent by the {wrong_sender}" in caught.value.rule


def test_a_stream_kind_must_be_one_of_the_three() -> None:
    with pytest.raises(ValueError):
        check_frame_allowed(FrameType.DATA, "qpack")


# -- §10.5: payloads larger than this endpoint will buffer -----------------------------------------


def test_a_payload_above_the_limit_is_h3_excessive_load_as_soon_as_its_length_arrives() -> None:
    parser = FrameParser()
    header = encode_uint_var(FrameType.HEADERS) + encode_uint_var(DEFAULT_MAX_PAYLOAD_LENGTH + 1)
    with pytest.raises(H3ConnectionError) as caught:
        parser.feed(header)
    assert caught.value.code == ErrorCode.H3_EXCESSIVE_LOAD
    assert caught.value.rfc == "9114#10.5"


def test_a_payload_at_the_limit_is_accepted() -> None:
    limits = FrameLimits(max_payload_length=10)
    raw = encode_frame(FrameType.HEADERS, b"0123456789")
    assert parse_frames(raw, limits)[0].frame == HeadersFrame(b"0123456789")
    with pytest.raises(H3ConnectionError):
        parse_frames(encode_frame(FrameType.HEADERS, b"0123456789a"), limits)


@pytest.mark.parametrize("frame_type", [0x21, 0x1F * 7 + 0x21, 0x2A, 0xABCDEF])
def test_a_reserved_or_unknown_frame_above_the_limit_is_discarded_as_it_arrives(
    frame_type: int,
) -> None:
    """RFC 9114 §9: such a frame is ignored, so nothing needs buffering (§10.5 is no reason
    to refuse it): its payload is dropped piece by piece, and it is reported with its Type
    and Length only."""
    limits = FrameLimits(max_payload_length=10)
    payload = bytes(range(200)) * 5
    raw = encode_frame(frame_type, payload) + encode_frame(FrameType.DATA, b"after")
    header_size = len(encode_frame(frame_type, payload)) - len(payload)
    parser = FrameParser(limits)
    frames: list[ParsedFrame] = []
    for start in range(0, len(raw), 7):
        frames += parser.feed(raw[start : start + 7])
        assert parser.buffered <= 10 + 16, "the payload is never kept"
    parser.eof()
    discarded, data = frames
    assert discarded.frame == UnknownFrame(frame_type, b"", discarded=1000)
    assert discarded.frame.payload_length() == 1000
    assert "1000 bytes, ignored, discarded as it arrived" in discarded.frame.describe()
    assert discarded.raw == raw[:header_size]
    assert [span.name for span in discarded.spans] == ["Type", "Length"]
    assert data.frame == DataFrame(b"after")


def test_a_stream_ending_inside_a_discarded_payload_is_h3_frame_error() -> None:
    parser = FrameParser(FrameLimits(max_payload_length=10))
    parser.feed(encode_frame(0x21, bytes(100))[:-1])
    with pytest.raises(H3ConnectionError, match="99 bytes into the 100-byte payload") as caught:
        parser.eof()
    assert caught.value.code == ErrorCode.H3_FRAME_ERROR


def test_data_frames_have_no_limit_unless_one_is_set() -> None:
    header = encode_uint_var(FrameType.DATA) + encode_uint_var(VARINT_MAX)
    assert FrameParser().feed(header) == []
    with pytest.raises(H3ConnectionError) as caught:
        FrameParser(FrameLimits(max_data_length=1 << 16)).feed(header)
    assert caught.value.code == ErrorCode.H3_EXCESSIVE_LOAD
    assert FrameParser(FrameLimits(max_payload_length=None)).feed(b"\x01\x80\xff\xff\xff") == []


# -- cross-checks with aioquic ---------------------------------------------------------------------


@given(PAYLOADS)
def test_data_and_headers_frames_are_the_bytes_aioquic_encodes(payload: bytes) -> None:
    assert serialize_frame(DataFrame(payload))[0] == encode_frame(AioquicFrameType.DATA, payload)
    assert serialize_frame(HeadersFrame(payload))[0] == encode_frame(
        AioquicFrameType.HEADERS, payload
    )


@given(st.dictionaries(VARINTS, VARINTS, max_size=6))
def test_settings_frames_are_the_bytes_aioquic_encodes(pairs: dict[int, int]) -> None:
    expected = encode_frame(AioquicFrameType.SETTINGS, encode_settings(pairs))
    assert serialize_frame(SettingsFrame(tuple(pairs.items())))[0] == expected
    assert parse_frames(expected)[0].frame == SettingsFrame(tuple(pairs.items()))


@given(VARINTS)
def test_one_integer_frames_are_the_bytes_aioquic_encodes(number: int) -> None:
    for frame, frame_type in [
        (GoawayFrame(number), AioquicFrameType.GOAWAY),
        (MaxPushIdFrame(number), AioquicFrameType.MAX_PUSH_ID),
        (CancelPushFrame(number), AioquicFrameType.CANCEL_PUSH),
    ]:
        assert serialize_frame(frame)[0] == encode_frame(frame_type, encode_uint_var(number))


class CapturingQuic:
    """Just enough of aioquic's QuicConnection for H3Connection to write its streams into."""

    def __init__(self, is_client: bool) -> None:
        self.configuration = SimpleNamespace(is_client=is_client)
        self._quic_logger = None
        self.sent: defaultdict[int, bytearray] = defaultdict(bytearray)
        self._next = {False: 0 if is_client else 1, True: 2 if is_client else 3}

    def get_next_available_stream_id(self, is_unidirectional: bool = False) -> int:
        stream_id = self._next[is_unidirectional]
        self._next[is_unidirectional] += 4
        return stream_id

    def send_stream_data(self, stream_id: int, data: bytes, end_stream: bool = False) -> None:
        self.sent[stream_id] += data


def test_a_real_aioquic_client_control_stream_parses_into_settings_and_max_push_id() -> None:
    quic = CapturingQuic(is_client=True)
    H3Connection(quic)  # type: ignore[arg-type]
    control = bytes(quic.sent[2])
    reader = SpanReader(control)
    assert parse_stream_header(reader).stream_type == StreamType.CONTROL
    frames = [parsed.frame for parsed in parse_frames(control[reader.position :])]
    assert isinstance(frames[0], SettingsFrame)
    assert frames[1:] == [MaxPushIdFrame(8)]
    settings_ = Settings.from_frame(frames[0])
    assert settings_.qpack_max_table_capacity == 4096
    assert settings_.qpack_blocked_streams == 16
    assert settings_.enable_connect_protocol
    assert settings_.ignored == ((0x21, 1),)  # aioquic's reserved "DUMMY" setting
    assert b"".join(serialize_frame(frame)[0] for frame in frames) == control[reader.position :]


def test_a_real_aioquic_request_parses_into_headers_then_data() -> None:
    quic = CapturingQuic(is_client=True)
    connection = H3Connection(quic)  # type: ignore[arg-type]
    headers = [
        (b":method", b"POST"),
        (b":scheme", b"https"),
        (b":authority", b"a.example"),
        (b":path", b"/"),
    ]
    connection.send_headers(0, headers)
    connection.send_data(0, b"hello", end_stream=True)
    frames = [parsed.frame for parsed in parse_frames(bytes(quic.sent[0]))]
    assert isinstance(frames[0], HeadersFrame) and frames[0].field_section
    assert frames[1:] == [DataFrame(b"hello")]


# -- fuzzing: random bytes raise only HTTP/3 errors ------------------------------------------------


@settings(max_examples=300)
@given(st.binary(max_size=120))
def test_random_bytes_raise_only_http3_errors(stream: bytes) -> None:
    for cuts in ([], list(range(len(stream)))):
        parser = FrameParser(FrameLimits(max_payload_length=64))
        try:
            for start, end in zip([0, *cuts], [*cuts, len(stream)], strict=True):
                parser.feed(stream[start:end])
            parser.eof()
        except (H3ConnectionError, H3StreamError):
            pass


@settings(max_examples=300)
@given(
    st.one_of(st.sampled_from([*FrameType, 0x21, 0x54]), VARINTS),
    st.binary(max_size=24),
)
def test_any_payload_under_any_type_either_fails_cleanly_or_round_trips(
    frame_type: int, payload: bytes
) -> None:
    raw = encode_uint_var(frame_type) + encode_uint_var(len(payload)) + payload
    try:
        (parsed,) = parse_frames(raw)
    except (H3ConnectionError, H3StreamError):
        return
    assert serialize_frame(parsed.frame) == (raw, parsed.spans)
    assert_every_byte_labelled_once(raw, parsed.spans)
