"""RFC 9114 §7.1, §4.1.2, §6.2.1: how QUIC splits a stream changes nothing HTTP/3 reports.

QUIC hands HTTP/3 a stream's bytes in whatever pieces its packets carried (RFC 9000 §2.2).
The frames before a broken one arrived first, so they are handled first, whether the broken
frame came in the same piece or a later one:

- a control stream that opens with anything but SETTINGS is H3_MISSING_SETTINGS (§6.2.1),
  even when the next frame, in the same piece, is also wrong;
- a malformed request is the stream error H3_MESSAGE_ERROR (§4.1.2), and what follows it on
  that stream, a forbidden frame type or a frame cut short by the end of the stream, is
  never read: the connection survives;
- a frame cut short by the end of the stream is H3_FRAME_ERROR (§7.1) after the frames
  before it, whole or in pieces.

Each case is fed whole, then split in two at every byte, then a byte at a time; the errors
sent and the trace must be the same every time (but for STOP_SENDING, which is owed only
while the stream's end has not yet arrived).
"""

from __future__ import annotations

import pytest
from h3_connection_helpers import CLIENT_CONTROL, REQUEST, Lone, frame_bytes, stream_header

from h3learn.h3.actions import CloseConnection, ResetStream
from h3learn.h3.errors import ErrorCode
from h3learn.h3.frames import DataFrame, GoawayFrame, HeadersFrame
from h3learn.h3.settings import Settings
from h3learn.h3.stream_types import StreamType
from h3learn.qpack.encoder_instructions import InsertWithLiteralName, SetDynamicTableCapacity
from h3learn.wire.spans import SpanWriter

#: Frame type 0x02, HTTP/2's PRIORITY: a connection error wherever it appears (§7.2.8).
HTTP2_PRIORITY = bytes.fromhex("0200")
#: A DATA frame announcing 5 bytes of payload, of which the stream's end leaves only 2.
CUT_SHORT_DATA = bytes.fromhex("0005") + b"ab"


def wire(*instructions: SetDynamicTableCapacity | InsertWithLiteralName) -> bytes:
    writer = SpanWriter(record=False)
    for instruction in instructions:
        instruction.serialize(writer)
    return writer.unit()


def malformed_request(lone: Lone) -> bytes:
    """HEADERS with an uppercase field name: malformed (RFC 9114 §4.2)."""
    return frame_bytes(HeadersFrame(lone.field_section(0, [*REQUEST, (b"X-Upper", b"1")])))


def control_stream_opening_with_goaway(lone: Lone) -> tuple[int, bytes, bool]:
    stream = stream_header(StreamType.CONTROL) + frame_bytes(GoawayFrame(0)) + HTTP2_PRIORITY
    return CLIENT_CONTROL, stream, False


def malformed_request_then_http2_frame(lone: Lone) -> tuple[int, bytes, bool]:
    return 0, malformed_request(lone) + HTTP2_PRIORITY, False


def malformed_request_then_cut_short_frame(lone: Lone) -> tuple[int, bytes, bool]:
    return 0, malformed_request(lone) + CUT_SHORT_DATA, True


def request_then_cut_short_frame(lone: Lone) -> tuple[int, bytes, bool]:
    """A well-formed request, then a frame the stream's end cuts short: H3_FRAME_ERROR (§7.1)."""
    request = frame_bytes(HeadersFrame(lone.field_section(0, REQUEST)), DataFrame(b"x"))
    return 0, request + CUT_SHORT_DATA, True


CASES = {
    "control stream: GOAWAY first, then an HTTP/2 frame": (
        control_stream_opening_with_goaway,
        False,
    ),
    "request: malformed, then an HTTP/2 frame": (malformed_request_then_http2_frame, True),
    "request: malformed, then a frame cut short": (malformed_request_then_cut_short_frame, True),
    "request: well-formed, then a frame cut short": (request_then_cut_short_frame, True),
}


def outcome(pieces: list[bytes], case: str) -> tuple[list[tuple[str, int | None, int]], list[str]]:
    """What a server does when the case's stream arrives in these pieces."""
    build, open_peer_streams = CASES[case]
    lone = Lone.server(open_peer_streams=open_peer_streams)
    stream_id, _, end_stream = build(lone)
    for number, piece in enumerate(pieces):
        lone.feed(stream_id, piece, end_stream and number == len(pieces) - 1)
    # STOP_SENDING is left out: it asks the peer to stop only while the stream's end has not
    # arrived, so it rightly depends on whether the end came with the malformed frame.
    errors = [
        (type(action).__name__, getattr(action, "stream_id", None), action.error_code)
        for action in lone.take_sent()
        if isinstance(action, CloseConnection | ResetStream)
    ]
    shown = [event for event in lone.log.events if event.name != "stop_sending"]
    return errors, [event.summary for event in shown]


@pytest.mark.parametrize("case", CASES)
def test_the_same_outcome_however_the_stream_is_split(case: str) -> None:
    build, open_peer_streams = CASES[case]
    _, data, _ = build(Lone.server(open_peer_streams=open_peer_streams))
    whole = outcome([data], case)
    assert whole[0], "every case breaks a rule"
    for cut in range(1, len(data)):
        assert outcome([data[:cut], data[cut:]], case) == whole, f"split at byte {cut}"
    assert outcome([data[i : i + 1] for i in range(len(data))], case) == whole


def test_a_control_stream_opening_with_goaway_is_missing_settings_in_one_piece() -> None:
    """RFC 9114 §6.2.1: the first frame decides, even with a broken frame right after it."""
    errors, summaries = outcome(
        [control_stream_opening_with_goaway(Lone.server())[1]], next(iter(CASES))
    )
    assert [(kind, code) for kind, _, code in errors] == [
        ("CloseConnection", ErrorCode.H3_MISSING_SETTINGS)
    ]
    assert any("GOAWAY" in summary for summary in summaries), "the GOAWAY is in the trace"


@pytest.mark.parametrize("case", list(CASES)[1:3])
def test_a_malformed_request_is_a_stream_error_whatever_follows_it(case: str) -> None:
    """RFC 9114 §4.1.2: H3_MESSAGE_ERROR on the stream; the connection carries on."""
    build, _ = CASES[case]
    _, data, _ = build(Lone.server())
    errors, _ = outcome([data], case)
    assert errors == [("ResetStream", 0, ErrorCode.H3_MESSAGE_ERROR)]


@pytest.mark.parametrize("tail", [HTTP2_PRIORITY, CUT_SHORT_DATA], ids=["http2-frame", "cut-short"])
@pytest.mark.parametrize("inserts_first", [True, False], ids=["inserts-first", "inserts-later"])
def test_a_malformed_request_waiting_for_qpack_is_still_a_stream_error(
    tail: bytes, inserts_first: bool
) -> None:
    """RFC 9204 §2.2.1, RFC 9114 §4.1.2: while QPACK holds the HEADERS, a broken frame
    behind it waits too; once decoded, the request is malformed and the stream error comes
    first, whether the encoder stream's insert arrived before the request or after it."""
    lone = Lone.server(settings=Settings(qpack_max_table_capacity=4096, qpack_blocked_streams=8))
    insert = wire(
        SetDynamicTableCapacity(4096), InsertWithLiteralName(b"X-Upper", b"1", False, False)
    )
    # Required Insert Count 1 (encoded as 2, RFC 9204 §4.5.1.1) and Base 1: the request's
    # static lines, then the inserted entry, whose uppercase name makes it malformed (§4.2).
    static_lines = lone.field_section(0, REQUEST)[2:]
    request = frame_bytes(HeadersFrame(b"\x02\x00" + static_lines + b"\x80"))
    if inserts_first:
        lone.feed(lone.peer_encoder_stream, insert)
    lone.feed(0, request + tail, tail is CUT_SHORT_DATA)
    if not inserts_first:
        assert not lone.take_sent(), "nothing happens while the section waits"
        lone.feed(lone.peer_encoder_stream, insert)
    errors = [a for a in lone.take_sent() if isinstance(a, CloseConnection | ResetStream)]
    assert [(type(a).__name__, a.error_code) for a in errors] == [
        ("ResetStream", ErrorCode.H3_MESSAGE_ERROR)
    ]
