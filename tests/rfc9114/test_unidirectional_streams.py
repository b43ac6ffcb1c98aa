"""RFC 9114 §6.1-§6.2.3: which streams a peer may open, and the critical ones it must keep.

A unidirectional stream starts with its type. Reserved and unknown types are read no further
(STOP_SENDING) and never close the connection; the control stream and the two QPACK streams
are critical: one each, never closed, never reset, never stopped (H3_STREAM_CREATION_ERROR,
H3_CLOSED_CRITICAL_STREAM). Each test feeds crafted stream bytes into a lone endpoint.
"""

from __future__ import annotations

import pytest
from h3_connection_helpers import (
    CLIENT_CONTROL,
    CLIENT_DECODER,
    CLIENT_ENCODER,
    SERVER_CONTROL,
    SERVER_DECODER,
    SERVER_ENCODER,
    Lone,
    assert_connection_error,
    assert_no_error,
    frame_bytes,
    stream_header,
)

from h3learn.h3.actions import StopSending
from h3learn.h3.errors import ErrorCode, reserved_value
from h3learn.h3.frames import DataFrame, SettingsFrame
from h3learn.h3.stream_types import StreamType

RESERVED_AND_UNKNOWN = [reserved_value(0), reserved_value(1000), 0x04, 0x54, 0x3FFF_FFFF]

CRITICAL = {
    "control": StreamType.CONTROL,
    "QPACK encoder": StreamType.QPACK_ENCODER,
    "QPACK decoder": StreamType.QPACK_DECODER,
}
#: The peer's critical streams as a lone server sees them (the client opened them).
PEER_CRITICAL = {
    "control": CLIENT_CONTROL,
    "QPACK encoder": CLIENT_ENCODER,
    "QPACK decoder": CLIENT_DECODER,
}
#: The lone server's own critical streams.
OWN_CRITICAL = {
    "control": SERVER_CONTROL,
    "QPACK encoder": SERVER_ENCODER,
    "QPACK decoder": SERVER_DECODER,
}


# -- §6.2, §6.2.3: reserved and unknown stream types ------------------------------------------


@pytest.mark.parametrize("stream_type", RESERVED_AND_UNKNOWN, ids=hex)
def test_reserved_or_unknown_stream_type_is_stopped_and_never_a_connection_error(
    stream_type: int,
) -> None:
    """RFC 9114 §6.2: the receiver aborts reading (H3_STREAM_CREATION_ERROR) or discards it."""
    lone = Lone.server()
    events = lone.feed(14, stream_header(stream_type) + b"anything at all \x00\xff")
    assert events == []
    assert lone.take_sent() == [StopSending(14, ErrorCode.H3_STREAM_CREATION_ERROR)]
    assert lone.feed(14, frame_bytes(SettingsFrame()) + b"more", end_stream=True) == []
    assert lone.take_sent() == []
    type_set = [e for e in lone.events("stream_type_set") if e.stream_id == 14]
    assert type_set[0].raw == stream_header(stream_type)
    expected = "reserved" if stream_type in RESERVED_AND_UNKNOWN[:2] else "unknown"
    assert type_set[0].data["stream_type"] == expected
    assert_no_error(lone)


def test_a_reserved_stream_has_no_meaning_even_if_its_bytes_look_like_frames() -> None:
    """RFC 9114 §6.2.3: DATA, or a second SETTINGS, on a reserved stream changes nothing."""
    lone = Lone.client()
    payload = frame_bytes(SettingsFrame(((0x06, 1),)), DataFrame(b"x"))
    lone.feed(15, stream_header(reserved_value(7)) + payload)
    assert lone.conn.peer_settings.max_field_section_size is None
    assert [e for e in lone.events("frame_parsed") if e.stream_id == 15] == []
    assert_no_error(lone)


@pytest.mark.parametrize("code", [ErrorCode.H3_NO_ERROR, reserved_value(3)], ids=hex)
def test_the_sender_may_reset_a_reserved_stream(code: int) -> None:
    """RFC 9114 §6.2.3: a reserved stream may end cleanly or be reset."""
    lone = Lone.server()
    lone.feed(14, stream_header(reserved_value(2)) + b"pad")
    assert lone.reset(14, code) == []
    assert lone.reset(14, code) == []
    assert not lone.conn.closed
    # The reset is noted once, as received: it changes nothing.
    (noted,) = lone.errors()
    assert noted.name == "stream_error" and noted.data["direction"] == "received"
    assert noted.data["code"] == code and noted.rfc == ("9114#6.2.3",)
    assert lone.take_sent() == [StopSending(14, ErrorCode.H3_STREAM_CREATION_ERROR)]


def test_an_unknown_stream_type_may_arrive_one_byte_at_a_time() -> None:
    lone = Lone.server()
    lone.feed_bytewise(14, stream_header(0x3FFF_FFFF) + b"xyz", end_stream=True)
    assert lone.take_sent() == [StopSending(14, ErrorCode.H3_STREAM_CREATION_ERROR)]
    assert_no_error(lone)


# -- §6.2: streams that end before their type -------------------------------------------------


@pytest.mark.parametrize("partial", [b"", b"\x40", b"\x80\x00\x00", b"\x01"], ids=repr)
def test_a_unidirectional_stream_closed_before_its_type_arrives_is_tolerated(
    partial: bytes,
) -> None:
    """RFC 9114 §6.2: a receiver tolerates streams that end before the stream header."""
    lone = Lone.client()
    assert lone.feed(15, partial, end_stream=True) == []
    assert lone.events("stream_type_set")[-1].stream_id != 15
    assert_no_error(lone)


@pytest.mark.parametrize("partial", [b"", b"\x40"], ids=repr)
def test_a_unidirectional_stream_reset_before_its_type_arrives_is_tolerated(
    partial: bytes,
) -> None:
    lone = Lone.client()
    lone.feed(15, partial)
    assert lone.reset(15, ErrorCode.H3_NO_ERROR) == []
    assert_no_error(lone)


def test_the_stream_type_may_use_a_longer_than_needed_encoding() -> None:
    """RFC 9000 §16: 0x40 0x00 is the Stream Type 0 (control) in two bytes."""
    lone = Lone.server(open_peer_streams=False)
    lone.feed(CLIENT_CONTROL, b"\x40\x00" + frame_bytes(SettingsFrame()))
    type_set = lone.events("stream_type_set")[-1]
    assert (type_set.raw, type_set.data["stream_type"]) == (b"\x40\x00", "control")
    assert lone.conn.peer_settings_received
    assert_no_error(lone)


def test_stream_type_set_events_carry_the_header_bytes_with_every_byte_labelled() -> None:
    lone = Lone.client()
    lone.conn.send_max_push_id(1000)
    lone.feed(15, stream_header(StreamType.PUSH, push_id=300))
    event = next(e for e in lone.events("stream_type_set") if e.stream_id == 15)
    assert event.raw == b"\x01\x41\x2c"
    assert [f.name for f in event.fields] == ["Stream Type", "Push ID"]
    assert event.data == {
        "stream_id": 15,
        "stream_type": "push",
        "associated_push_id": 300,
        "owner": "remote",
    }
    assert_no_error(lone)


# -- §6.2.1, RFC 9204 §4.2: one of each critical stream -----------------------------------


@pytest.mark.parametrize("name", CRITICAL)
def test_second_critical_stream_is_h3_stream_creation_error(name: str) -> None:
    """RFC 9114 §6.2.1 (control), RFC 9204 §4.2 (QPACK): a second one is a connection error."""
    lone = Lone.server()
    lone.feed(14, stream_header(CRITICAL[name]))
    event = assert_connection_error(lone, ErrorCode.H3_STREAM_CREATION_ERROR)
    assert event.data["rule"].startswith(f"second {name} stream (14)")


def test_second_control_stream_is_h3_stream_creation_error() -> None:
    lone = Lone.client()
    lone.feed(19, stream_header(StreamType.CONTROL) + frame_bytes(SettingsFrame()))
    assert_connection_error(lone, ErrorCode.H3_STREAM_CREATION_ERROR, "9114#6.2.1")


def test_a_push_stream_opened_by_a_client_is_h3_stream_creation_error() -> None:
    """RFC 9114 §6.2.2: only servers push."""
    lone = Lone.server()
    lone.feed(14, stream_header(StreamType.PUSH, push_id=0))
    assert_connection_error(lone, ErrorCode.H3_STREAM_CREATION_ERROR, "9114#6.2.2")


@pytest.mark.parametrize("end_stream", [False, True], ids=["open", "ended"])
def test_client_push_stream_is_h3_stream_creation_error_as_soon_as_its_type_arrives(
    end_stream: bool,
) -> None:
    """RFC 9114 §6.2.2: the Stream Type alone says it is a push stream, which only a server
    opens; the error does not wait for the Push ID that would follow it."""
    lone = Lone.server()
    lone.feed(14, bytes([StreamType.PUSH]), end_stream=end_stream)
    event = assert_connection_error(lone, ErrorCode.H3_STREAM_CREATION_ERROR, "9114#6.2.2")
    assert event.data["rule"] == "client opened push stream 14; only servers push"


def test_a_server_initiated_bidirectional_stream_is_h3_stream_creation_error() -> None:
    """RFC 9114 §6.1: HTTP/3 does not use server-initiated bidirectional streams."""
    lone = Lone.client()
    lone.feed(1, lone.headers(1, [(b":status", b"200")]))
    assert_connection_error(lone, ErrorCode.H3_STREAM_CREATION_ERROR, "9114#6.1")


def test_an_unopened_client_bidirectional_stream_at_a_client_is_h3_stream_creation_error() -> None:
    """RFC 9114 §6.1: only the client opens request streams, so data on one of its stream IDs
    that it never used came from a stream nobody may open; the message says so."""
    lone = Lone.client()
    lone.feed(8, lone.headers(8, [(b":status", b"200")]))
    event = assert_connection_error(lone, ErrorCode.H3_STREAM_CREATION_ERROR, "9114#6.1")
    assert "opened by the server" not in event.data["rule"]
    assert "client-initiated but this client never opened it" in event.data["rule"]


# -- §6.2.1, RFC 9204 §4.2: critical streams stay open -----------------------------------


@pytest.mark.parametrize("name", CRITICAL)
def test_closing_a_critical_stream_is_h3_closed_critical_stream(name: str) -> None:
    lone = Lone.server()
    lone.feed(PEER_CRITICAL[name], b"", end_stream=True)
    event = assert_connection_error(lone, ErrorCode.H3_CLOSED_CRITICAL_STREAM)
    assert event.data["rule"] == f"peer closed its {name} stream {PEER_CRITICAL[name]}"


def test_closing_the_control_stream_is_h3_closed_critical_stream() -> None:
    """RFC 9114 §6.2.1: the control stream is never closed, even right after SETTINGS."""
    lone = Lone.server(open_peer_streams=False)
    control = stream_header(StreamType.CONTROL) + frame_bytes(SettingsFrame())
    lone.feed(CLIENT_CONTROL, control, end_stream=True)
    assert_connection_error(lone, ErrorCode.H3_CLOSED_CRITICAL_STREAM, "9114#6.2.1")
    assert lone.conn.peer_settings_received, "the SETTINGS before the end were still read"


@pytest.mark.parametrize("name", CRITICAL)
def test_resetting_a_critical_stream_is_h3_closed_critical_stream(name: str) -> None:
    lone = Lone.server()
    lone.reset(PEER_CRITICAL[name], ErrorCode.H3_NO_ERROR)
    event = assert_connection_error(lone, ErrorCode.H3_CLOSED_CRITICAL_STREAM)
    assert event.data["rule"] == f"peer reset its {name} stream {PEER_CRITICAL[name]}"


@pytest.mark.parametrize("name", CRITICAL)
def test_stop_sending_on_a_critical_stream_is_h3_closed_critical_stream(name: str) -> None:
    """RFC 9114 §6.2.1: the peer must not ask for a control stream to be closed."""
    lone = Lone.server()
    lone.stop_sending(OWN_CRITICAL[name], ErrorCode.H3_NO_ERROR)
    assert_connection_error(lone, ErrorCode.H3_CLOSED_CRITICAL_STREAM, "9114#6.2.1")


def test_a_critical_stream_closed_before_its_type_arrived_is_not_yet_critical() -> None:
    """RFC 9114 §6.2: until its type is read a stream is nothing in particular."""
    lone = Lone.server(open_peer_streams=False)
    lone.feed(CLIENT_CONTROL, b"", end_stream=True)
    assert_no_error(lone)
