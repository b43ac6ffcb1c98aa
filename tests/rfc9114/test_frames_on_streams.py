"""RFC 9114 §7.1-§7.2.8: which frames may appear on which stream, and frames that break layout.

The table of RFC 9114 §7.2 is checked cell by cell on the three kinds of stream that carry
frames: the control stream, a request stream and a push stream. A frame where the table
says "No" is H3_FRAME_UNEXPECTED; so is any HTTP/2-only type, anywhere. Reserved and
unknown types are ignored everywhere. A payload longer or shorter than its fields, or a
frame cut off by the end of the stream, is H3_FRAME_ERROR (§7.1).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from h3_connection_helpers import (
    REQUEST,
    RESPONSE,
    Lone,
    assert_connection_error,
    assert_frame_traced,
    assert_no_error,
    frame_bytes,
    stream_header,
)

from h3learn.h3.errors import ErrorCode, is_reserved, reserved_value
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
)
from h3learn.h3.http_events import HeadersReceived, SettingsReceived, StreamReset
from h3learn.h3.priority_update import PriorityUpdateFrame
from h3learn.h3.stream_types import StreamType

PUSH_STREAM = 15
#: A field section the peer's encoder produced for b":status: 200" (static table only).
SECTION = bytes.fromhex("0000d9")


# -- three places a frame can land, each reached the way a peer would reach it ----------------


def on_control_stream(frame_data: bytes) -> Lone:
    """A server reading its client's control stream, after SETTINGS."""
    lone = Lone.server()
    lone.feed(lone.peer_control, frame_data)
    return lone


def on_request_stream(frame_data: bytes) -> Lone:
    """A server reading a request stream, after the request's HEADERS."""
    lone = Lone.server()
    lone.feed(0, lone.headers(0, REQUEST) + frame_data)
    return lone


def on_push_stream(frame_data: bytes) -> Lone:
    """A client reading a push stream, after the pushed response's HEADERS."""
    lone = Lone.client()
    lone.conn.send_max_push_id(10)
    push_header = stream_header(StreamType.PUSH, push_id=0)
    lone.feed(PUSH_STREAM, push_header + lone.headers(PUSH_STREAM, RESPONSE) + frame_data)
    return lone


STREAMS: dict[str, Callable[[bytes], Lone]] = {
    "control": on_control_stream,
    "request": on_request_stream,
    "push": on_push_stream,
}

#: RFC 9114 §7, Table 1: the cells that say "No" (SETTINGS: allowed once, first, on the
#: control stream only; PUSH_PROMISE from a client is tested in test_push.py).
NOT_ALLOWED: list[tuple[str, Frame]] = [
    ("control", DataFrame(b"content")),
    ("control", HeadersFrame(SECTION)),
    ("control", PushPromiseFrame(0, SECTION)),
    ("request", CancelPushFrame(0)),
    ("request", SettingsFrame()),
    ("request", GoawayFrame(0)),
    ("request", MaxPushIdFrame(0)),
    ("request", PriorityUpdateFrame(0, b"u=1")),
    ("push", CancelPushFrame(0)),
    ("push", SettingsFrame()),
    ("push", GoawayFrame(0)),
    ("push", MaxPushIdFrame(0)),
    ("push", PushPromiseFrame(1, SECTION)),
]


@pytest.mark.parametrize(
    ("stream", "frame"), NOT_ALLOWED, ids=[f"{s}-{f.describe()}" for s, f in NOT_ALLOWED]
)
def test_a_frame_where_table_1_says_no_is_h3_frame_unexpected(stream: str, frame: Frame) -> None:
    lone = STREAMS[stream](frame_bytes(frame))
    assert_connection_error(lone, ErrorCode.H3_FRAME_UNEXPECTED)
    assert_frame_traced(lone, frame_bytes(frame), frame.qlog()["frame_type"])


def test_data_frame_on_the_control_stream_is_h3_frame_unexpected() -> None:
    lone = on_control_stream(frame_bytes(DataFrame(b"x")))
    assert_connection_error(lone, ErrorCode.H3_FRAME_UNEXPECTED, "9114#7.2.1")


def test_headers_frame_on_the_control_stream_is_h3_frame_unexpected() -> None:
    lone = on_control_stream(frame_bytes(HeadersFrame(SECTION)))
    assert_connection_error(lone, ErrorCode.H3_FRAME_UNEXPECTED, "9114#7.2.2")


def test_cancel_push_on_a_request_stream_is_h3_frame_unexpected() -> None:
    lone = on_request_stream(frame_bytes(CancelPushFrame(0)))
    assert_connection_error(lone, ErrorCode.H3_FRAME_UNEXPECTED, "9114#7.2.3")


def test_settings_frame_on_a_request_stream_is_h3_frame_unexpected() -> None:
    lone = on_request_stream(frame_bytes(SettingsFrame()))
    assert_connection_error(lone, ErrorCode.H3_FRAME_UNEXPECTED, "9114#7.2.4")


def test_goaway_frame_on_a_push_stream_is_h3_frame_unexpected() -> None:
    lone = on_push_stream(frame_bytes(GoawayFrame(0)))
    assert_connection_error(lone, ErrorCode.H3_FRAME_UNEXPECTED, "9114#7.2.6")


def test_max_push_id_on_a_request_stream_is_h3_frame_unexpected() -> None:
    lone = on_request_stream(frame_bytes(MaxPushIdFrame(0)))
    assert_connection_error(lone, ErrorCode.H3_FRAME_UNEXPECTED, "9114#7.2.7")


def test_priority_update_from_a_server_is_h3_frame_unexpected() -> None:
    """RFC 9218 §7.2: only a client sends PRIORITY_UPDATE; a server's is refused."""
    lone = Lone.client()
    lone.control(PriorityUpdateFrame(0, b"u=1"))
    assert_connection_error(lone, ErrorCode.H3_FRAME_UNEXPECTED, "9218#7.2")


def test_priority_update_from_a_client_is_read_and_traced() -> None:
    lone = on_control_stream(frame_bytes(PriorityUpdateFrame(0, b"u=1, i")))
    event = assert_frame_traced(
        lone, frame_bytes(PriorityUpdateFrame(0, b"u=1, i")), "priority_update"
    )
    assert event.data["frame"]["priority_field_value"] == "u=1, i"
    assert_no_error(lone)


# -- §7.2.8: HTTP/2's frame types, and reserved and unknown ones ----------------------------

HTTP2_ONLY = {0x02: "PRIORITY", 0x06: "PING", 0x08: "WINDOW_UPDATE", 0x09: "CONTINUATION"}


@pytest.mark.parametrize("stream", STREAMS)
@pytest.mark.parametrize("frame_type", HTTP2_ONLY, ids=HTTP2_ONLY.values())
def test_an_http2_only_frame_type_is_h3_frame_unexpected(stream: str, frame_type: int) -> None:
    lone = STREAMS[stream](frame_bytes(UnknownFrame(frame_type, b"\x00" * 8)))
    event = assert_connection_error(lone, ErrorCode.H3_FRAME_UNEXPECTED, "9114#7.2.8")
    assert HTTP2_ONLY[frame_type] in event.data["rule"]


def test_an_http2_only_frame_type_is_refused_as_soon_as_its_type_arrives() -> None:
    """The Type alone is enough: no payload is waited for (or buffered)."""
    lone = on_request_stream(b"\x06")
    assert_connection_error(lone, ErrorCode.H3_FRAME_UNEXPECTED, "9114#7.2.8")


@pytest.mark.parametrize("stream", STREAMS)
@pytest.mark.parametrize(
    "frame",
    [
        UnknownFrame(reserved_value(0), b""),
        UnknownFrame(reserved_value(77), b"padding" * 20),
        UnknownFrame(reserved_value(2**40), b"\x00"),
        UnknownFrame(0x0B, b"an unassigned type"),
        UnknownFrame(0x2C, b""),
    ],
    ids=lambda frame: frame.describe(),
)
def test_reserved_and_unknown_frame_types_are_ignored_on_every_stream(
    stream: str, frame: UnknownFrame
) -> None:
    """RFC 9114 §7.2.8 (reserved types mean nothing), §9 (unknown types are ignored)."""
    lone = STREAMS[stream](frame_bytes(frame))
    kind = "reserved" if is_reserved(frame.frame_type) else "unknown"
    event = assert_frame_traced(lone, frame_bytes(frame), kind)
    assert event.data["frame"]["frame_type_bytes"] == frame.frame_type
    assert all(isinstance(e, SettingsReceived | HeadersReceived) for e in lone.received)
    assert_no_error(lone)


def test_reserved_frames_are_ignored_on_the_control_stream_between_other_frames() -> None:
    lone = Lone.server()
    grease = UnknownFrame(reserved_value(5), b"x")
    events = lone.control(grease, MaxPushIdFrame(2), grease, GoawayFrame(1), grease)
    assert [type(e).__name__ for e in events] == ["GoawayReceived"]
    assert lone.conn.max_push_id == 2
    assert_no_error(lone)


# -- §7.1: frame layout ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("stream", "cut"),
    [
        ("request", b"\x00"),  # DATA: the Type only
        ("request", b"\x00\x05"),  # DATA: Type and Length
        ("request", b"\x00\x05abc"),  # DATA: three of five payload bytes
        ("request", b"\x40"),  # a Type cut inside its own varint
        ("push", b"\x01\x04\x00\x00"),  # HEADERS: two of four payload bytes
        ("push", bytes([0x7F])),  # the first byte of a two-byte Type
    ],
    ids=["type", "type+length", "partial payload", "partial type", "push partial", "push type"],
)
def test_truncated_frame_at_the_end_of_a_stream_is_h3_frame_error(stream: str, cut: bytes) -> None:
    """RFC 9114 §7.1: a stream that ends cleanly inside a frame is a connection error."""
    lone = STREAMS[stream](b"")
    stream_id = 0 if stream == "request" else PUSH_STREAM
    lone.feed(stream_id, cut, end_stream=True)
    event = assert_connection_error(lone, ErrorCode.H3_FRAME_ERROR, "9114#7.1")
    assert event.data["rule"].startswith("the stream ended ")


def test_a_stream_reset_in_the_middle_of_a_frame_is_not_a_frame_error() -> None:
    """RFC 9114 §7.1: streams that end abruptly may be reset at any point in a frame."""
    lone = on_request_stream(b"\x00\x05ab")
    events = lone.reset(0, ErrorCode.H3_REQUEST_CANCELLED)
    assert events == [StreamReset(stream_id=0, error_code=ErrorCode.H3_REQUEST_CANCELLED)]
    assert not lone.conn.closed


@pytest.mark.parametrize(
    "raw",
    [
        bytes.fromhex("07 02 00 00"),  # GOAWAY: a one-byte ID, then one byte more
        bytes.fromhex("0d 03 40 01 ff"),  # MAX_PUSH_ID: a two-byte ID, then one byte more
        bytes.fromhex("03 09 00") + bytes(8),  # CANCEL_PUSH: longer than any varint
    ],
    ids=["GOAWAY", "MAX_PUSH_ID", "CANCEL_PUSH too long"],
)
def test_frame_payload_with_bytes_after_its_fields_is_h3_frame_error(raw: bytes) -> None:
    lone = on_control_stream(raw)
    assert_connection_error(lone, ErrorCode.H3_FRAME_ERROR, "9114#7.1")


@pytest.mark.parametrize(
    "raw",
    [
        bytes.fromhex("03 01 40"),  # CANCEL_PUSH: a two-byte Push ID in a one-byte payload
        bytes.fromhex("07 00"),  # GOAWAY with no ID at all
        bytes.fromhex("04 01 06"),  # SETTINGS: an Identifier without its Value
        bytes.fromhex("04 02 06 80"),  # SETTINGS: a Value cut inside its varint
    ],
    ids=["CANCEL_PUSH", "GOAWAY empty", "SETTINGS half pair", "SETTINGS cut value"],
)
def test_frame_payload_ending_inside_its_fields_is_h3_frame_error(raw: bytes) -> None:
    lone = Lone.server(open_peer_streams=False)
    control = stream_header(StreamType.CONTROL)
    settings_first = raw.startswith(b"\x04")
    preamble = control if settings_first else control + frame_bytes(SettingsFrame())
    lone.feed(lone.peer_control, preamble + raw)
    assert_connection_error(lone, ErrorCode.H3_FRAME_ERROR, "9114#7.1")


def test_a_frame_larger_than_this_endpoint_buffers_is_h3_excessive_load() -> None:
    """RFC 9114 §10.5 lets an endpoint refuse frames that would cost it too much memory."""
    # PRIORITY_UPDATE (RFC 9218 §7.2) announcing a 4 MiB payload.
    lone = on_control_stream(bytes.fromhex("800f0700 80400001"))
    assert_connection_error(lone, ErrorCode.H3_EXCESSIVE_LOAD, "9114#10.5")


@pytest.mark.parametrize("stream", ["control", "request"])
def test_a_reserved_frame_larger_than_this_endpoint_buffers_is_ignored(stream: str) -> None:
    """RFC 9114 §7.2.8, §9: frames of reserved or unknown types MUST be ignored, whatever
    their size; the payload is discarded as it arrives, so it costs no memory."""
    frame = bytes.fromhex("21 80180000") + bytes(0x180000)  # 1.5 MiB, over the 1 MiB limit
    lone = Lone.server()
    stream_id = lone.peer_control if stream == "control" else 0
    prefix = b"" if stream == "control" else lone.headers(0, REQUEST)
    for start in range(0, len(frame), 65536):
        lone.feed(stream_id, (prefix if start == 0 else b"") + frame[start : start + 65536])
    assert_no_error(lone)
    (event,) = [
        e for e in lone.events("frame_parsed") if e.data["frame"]["frame_type"] == "reserved"
    ]
    assert event.raw == bytes.fromhex("21 80180000")
    assert event.data["length"] == 0x180000
    assert event.data["frame"]["raw"] == {"length": 5 + 0x180000, "payload_length": 0x180000}
