"""RFC 9114 §9, §7.2.8, §6.2.3: sending reserved ("GREASE") and unknown types on purpose.

An endpoint may send frames and open unidirectional streams of types its peer does not
know; the peer must ignore them. `H3Connection.send_extension_frame` and
`open_extension_stream` do that over a MemoryPair, and the peer's reaction is checked: the
frame is read and skipped, the stream is stopped (STOP_SENDING) and then reset by its
opener, and nothing else changes.
"""

from __future__ import annotations

import pytest
from h3_connection_helpers import REQUEST, RESPONSE, assert_trace_labelled, pair

from h3learn.events import Event
from h3learn.h3.connection import H3UsageError
from h3learn.h3.errors import ErrorCode, reserved_value
from h3learn.h3.frame_layout import FrameType
from h3learn.h3.http_events import DataReceived, HeadersReceived
from h3learn.h3.stream_types import StreamType

GREASE_FRAME = reserved_value(5)  # 0xbc: a two-byte variable-length integer
GREASE_STREAM = reserved_value(2)  # 0x5f


def _errors(events: list[Event]) -> list[Event]:
    return [e for e in events if e.name in ("connection_error", "stream_error")]


def test_a_reserved_frame_on_the_control_stream_is_read_and_ignored() -> None:
    """RFC 9114 §7.2.8: a reserved frame may be sent on any stream that carries frames."""
    memory = pair()
    assert memory.client.control_stream_id is not None
    memory.client.send_extension_frame(memory.client.control_stream_id, GREASE_FRAME, b"pad")
    assert memory.pump() == []
    (parsed,) = [
        e
        for e in memory.log.events
        if e.name == "frame_parsed" and e.data["frame"]["frame_type"] == "reserved"
    ]
    assert parsed.endpoint == "server" and parsed.rfc == ("9114#7.2.8",)
    assert parsed.raw == bytes.fromhex("40bc03") + b"pad"
    assert not memory.server.closed and _errors(memory.log.events) == []
    assert_trace_labelled(memory.log)


def test_unknown_frames_inside_a_request_change_nothing() -> None:
    """RFC 9114 §4.1: unknown frame types may come before, between or after a message's frames."""
    memory = pair()
    stream = memory.client.send_request(REQUEST)
    memory.client.send_extension_frame(stream, GREASE_FRAME, b"")
    memory.client.send_data(stream, b"body")
    memory.client.send_extension_frame(stream, 0x54, b"unknown extension")
    memory.client.end_stream(stream)
    events = memory.pump()
    assert [type(e) for e in events][:2] == [HeadersReceived, DataReceived]
    memory.server.send_headers(stream, RESPONSE, end_stream=True)
    memory.pump()
    assert _errors(memory.log.events) == []


@pytest.mark.parametrize("frame_type", [FrameType.DATA, FrameType.SETTINGS, 0x06, 0x09], ids=hex)
def test_only_reserved_or_unknown_frame_types_count_as_extensions(frame_type: int) -> None:
    """Registered types have their own methods; HTTP/2-only types must never be sent (§7.2.8)."""
    memory = pair()
    assert memory.client.control_stream_id is not None
    with pytest.raises(H3UsageError, match="not a reserved or unknown frame type"):
        memory.client.send_extension_frame(memory.client.control_stream_id, frame_type)


def test_an_extension_frame_needs_a_stream_open_for_sending() -> None:
    memory = pair()
    stream = memory.client.send_request(REQUEST, end_stream=True)
    with pytest.raises(H3UsageError, match="already closed for sending"):
        memory.client.send_extension_frame(stream, GREASE_FRAME)


def test_a_reserved_stream_is_stopped_then_reset_with_a_reserved_code() -> None:
    """RFC 9114 §6.2.3: the receiver ignores it; the sender resets it with a reserved code."""
    memory = pair()
    stream = memory.client.open_extension_stream(GREASE_STREAM, b"\x00padding")
    assert memory.pump() == []
    names = [(e.endpoint, e.name) for e in memory.log.events if e.stream_id == stream]
    assert names == [
        ("client", "stream_type_set"),
        ("client", "raw_bytes_sent"),
        ("server", "stream_type_set"),
        ("server", "stop_sending"),
        ("client", "stop_sending"),
        ("client", "reset_stream"),
        ("server", "stream_error"),
    ]
    events = {(e.endpoint, e.name): e for e in memory.log.events if e.stream_id == stream}
    assert events[("server", "stream_type_set")].rfc == ("9114#6.2", "9114#6.2.3")
    assert events[("server", "stop_sending")].data["code"] == ErrorCode.H3_STREAM_CREATION_ERROR
    reset = events[("client", "reset_stream")]
    assert reset.data["code"] == GREASE_STREAM and reset.rfc == ("9000#19.4", "9114#6.2.3")
    received = events[("server", "stream_error")]
    assert received.data["direction"] == "received"
    assert received.data["code_name"] == "reserved error code 0x5f"
    assert not memory.client.closed and not memory.server.closed
    assert_trace_labelled(memory.log)


def test_an_unknown_stream_is_reset_with_the_code_stop_sending_gave() -> None:
    """RFC 9000 §3.5: STOP_SENDING is answered with RESET_STREAM, copying its code."""
    memory = pair()
    stream = memory.server.open_extension_stream(0x54, b"an extension we never agreed on")
    memory.pump()
    (reset,) = [e for e in memory.log.events if e.name == "reset_stream"]
    assert reset.stream_id == stream and reset.endpoint == "server"
    assert reset.data["code"] == ErrorCode.H3_STREAM_CREATION_ERROR


def test_a_finished_extension_stream_is_not_reset() -> None:
    memory = pair()
    memory.client.open_extension_stream(GREASE_STREAM, b"done", end_stream=True)
    memory.pump()
    assert [e for e in memory.log.events if e.name == "reset_stream"] == []
    assert [e.name for e in memory.log.events if e.name == "stop_sending"] == [
        "stop_sending",
        "stop_sending",
    ]


@pytest.mark.parametrize("stream_type", list(StreamType), ids=lambda t: t.name)
def test_a_registered_stream_type_is_not_an_extension(stream_type: StreamType) -> None:
    memory = pair()
    with pytest.raises(H3UsageError, match="is registered"):
        memory.client.open_extension_stream(stream_type)
