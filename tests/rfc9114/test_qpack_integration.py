"""RFC 9204 over HTTP/3: the QPACK streams beside the request streams.

A field section may refer to table entries whose inserts travel on the encoder stream,
which QUIC does not order against the request stream. `MemoryPair.hold` keeps the encoder
stream back so that the field section arrives first and blocks (RFC 9204 §2.2.1); on
`release` the section is decoded and delivered, followed by the DATA that waited behind
it. QPACK errors close the connection with QPACK's own codes (RFC 9204 §6); a blocked
stream that is reset is cancelled on the decoder stream (RFC 9204 §4.4.2).
"""

from __future__ import annotations

import pytest
from h3_connection_helpers import (
    CLIENT_ENCODER,
    DYNAMIC,
    POST,
    REQUEST,
    SERVER_DECODER,
    Header,
    Lone,
    assert_connection_error,
    assert_no_error,
    assert_stream_error,
    assert_trace_labelled,
    frame_bytes,
    pair,
)

from h3learn.events import Event
from h3learn.h3.actions import SendStreamData
from h3learn.h3.errors import ErrorCode
from h3learn.h3.frames import DataFrame, HeadersFrame
from h3learn.h3.http_events import DataReceived, HeadersReceived, StreamReset
from h3learn.h3.settings import Settings
from h3learn.qpack.encoder import Encoder
from h3learn.qpack.errors import QpackErrorCode
from h3learn.transport.memory import MemoryPair

SESSION: Header = (b"x-session", b"abcdef123")
#: RFC 9204 §4.5.1: Required Insert Count 1 (encoded 2 with a 4096-byte table), Base 1, then
#: an Indexed Field Line for relative index 0 in the dynamic table (§4.5.2).
NEEDS_ONE_INSERT = bytes.fromhex("02 00 80")
#: RFC 9204 §4.4.2: Stream Cancellation for stream 0.
CANCEL_STREAM_0 = b"\x40"


def qpack_events(memory: MemoryPair, endpoint: str, name: str) -> list[Event]:
    return [
        e
        for e in memory.log.events
        if e.category == "qpack" and e.endpoint == endpoint and e.name == name
    ]


def blocked_request(memory: MemoryPair, end_stream: bool = True) -> int:
    """A POST whose field section refers to an insert that is held back on the way."""
    memory.client.send_request([*REQUEST, SESSION], end_stream=True)  # the encoder notes it
    memory.pump()
    memory.hold("client", CLIENT_ENCODER)
    stream_id = memory.client.send_request([*POST, SESSION])
    memory.client.send_data(stream_id, b"first ")
    memory.client.send_data(stream_id, b"second", end_stream=end_stream)
    assert memory.pump() == []
    assert memory.server.decoder.blocked_streams == [stream_id]
    return stream_id


# -- RFC 9204 §2.2.1: blocked streams -------------------------------------------------------


def test_a_blocked_field_section_is_delivered_with_the_data_that_followed_on_release() -> None:
    memory = pair(DYNAMIC, DYNAMIC)
    stream_id = blocked_request(memory)
    blocked = qpack_events(memory, "server", "stream_state_updated")
    assert [(e.stream_id, e.data["state"]) for e in blocked] == [(stream_id, "blocked")]
    events = memory.release("client", CLIENT_ENCODER)
    assert events == [
        HeadersReceived(stream_id=stream_id, headers=[*POST, SESSION]),
        DataReceived(stream_id=stream_id, data=b"first "),
        DataReceived(stream_id=stream_id, data=b"second", stream_ended=True),
    ]
    states = qpack_events(memory, "server", "stream_state_updated")
    assert [e.data["state"] for e in states] == ["blocked", "unblocked"]
    acknowledged = qpack_events(memory, "client", "instruction_parsed")
    assert acknowledged[-1].data["instruction_type"] == "section_acknowledgement"
    assert acknowledged[-1].data["stream_id"] == stream_id
    assert_trace_labelled(memory.log)


def test_the_http_frames_wait_behind_a_blocked_section_in_the_trace_too() -> None:
    """The DATA frames are parsed only after the HEADERS they follow is decoded."""
    memory = pair(DYNAMIC, DYNAMIC)
    stream_id = blocked_request(memory)
    memory.release("client", CLIENT_ENCODER)
    on_stream = [
        (e.category, e.name)
        for e in memory.log.events
        if e.endpoint == "server" and e.stream_id == stream_id
    ]
    decoded = on_stream.index(("qpack", "headers_decoded"))
    assert on_stream.index(("http3", "frame_parsed")) < decoded
    data_parsed = [i for i, item in enumerate(on_stream) if item == ("http3", "frame_parsed")]
    assert all(index > decoded for index in data_parsed[1:])


def test_several_blocked_streams_are_released_in_order() -> None:
    memory = pair(DYNAMIC, DYNAMIC)
    memory.client.send_request([*REQUEST, SESSION], end_stream=True)
    memory.pump()
    memory.hold("client", CLIENT_ENCODER)
    first = memory.client.send_request([*REQUEST, SESSION, (b"x-n", b"1")], end_stream=True)
    second = memory.client.send_request([*REQUEST, SESSION, (b"x-n", b"1")], end_stream=True)
    memory.pump()
    events = memory.release("client", CLIENT_ENCODER)
    assert [(e.stream_id, e.stream_ended) for e in events if isinstance(e, HeadersReceived)] == [
        (first, True),
        (second, True),
    ]


def test_more_blocked_streams_than_announced_is_qpack_decompression_failed() -> None:
    """RFC 9204 §2.1.2: SETTINGS_QPACK_BLOCKED_STREAMS bounds how many may wait."""
    lone = Lone.server(settings=Settings(qpack_max_table_capacity=4096, qpack_blocked_streams=1))
    lone.feed(0, frame_bytes(HeadersFrame(NEEDS_ONE_INSERT)))
    assert_no_error(lone)
    lone.feed(4, frame_bytes(HeadersFrame(NEEDS_ONE_INSERT)))
    assert_connection_error(lone, QpackErrorCode.QPACK_DECOMPRESSION_FAILED, "9204#2.1.2")


# -- RFC 9204 §2.2.2.2, §4.4.2: cancelling a blocked stream ---------------------------------


def test_a_stream_reset_while_blocked_is_cancelled_on_the_decoder_stream() -> None:
    lone = Lone.server(settings=DYNAMIC)
    lone.feed(0, frame_bytes(HeadersFrame(NEEDS_ONE_INSERT), DataFrame(b"waiting")))
    assert lone.conn.decoder.blocked_streams == [0]
    events = lone.reset(0, ErrorCode.H3_REQUEST_CANCELLED)
    assert events == [StreamReset(stream_id=0, error_code=ErrorCode.H3_REQUEST_CANCELLED)]
    assert SendStreamData(SERVER_DECODER, CANCEL_STREAM_0) in lone.sent
    assert lone.conn.decoder.blocked_streams == []
    created = [e for e in lone.events("instruction_created", "qpack")]
    assert (created[-1].data["instruction_type"], created[-1].raw) == (
        "stream_cancellation",
        CANCEL_STREAM_0,
    )
    assert lone.feed(0, frame_bytes(DataFrame(b"late"))) == []
    assert not lone.conn.closed


def test_a_client_cancelling_a_blocked_request_releases_its_encoders_references() -> None:
    memory = pair(DYNAMIC, DYNAMIC)
    stream_id = blocked_request(memory, end_stream=False)
    memory.client.reset_stream(stream_id)
    memory.pump()
    assert memory.server.decoder.blocked_streams == []
    parsed = qpack_events(memory, "client", "instruction_parsed")
    assert (parsed[-1].data["instruction_type"], parsed[-1].data["stream_id"]) == (
        "stream_cancellation",
        stream_id,
    )
    memory.release("client", CLIENT_ENCODER)
    assert memory.received["server"][-1] == StreamReset(
        stream_id=stream_id, error_code=ErrorCode.H3_REQUEST_CANCELLED
    )
    assert not memory.server.closed


def test_a_request_still_blocked_was_never_processed_and_may_be_rejected() -> None:
    """RFC 9114 §4.1.1: nothing reached the application, so H3_REQUEST_REJECTED is allowed."""
    memory = pair(DYNAMIC, DYNAMIC)
    stream_id = blocked_request(memory)
    memory.server.reset_stream(stream_id, ErrorCode.H3_REQUEST_REJECTED)
    memory.pump()
    assert memory.received["client"] == [
        StreamReset(stream_id=stream_id, error_code=ErrorCode.H3_REQUEST_REJECTED, retry_safe=True)
    ]


def test_a_request_found_malformed_once_it_unblocks_is_only_a_stream_error() -> None:
    memory = pair(DYNAMIC, DYNAMIC)
    memory.client.send_request([*REQUEST, SESSION], end_stream=True)
    memory.pump()
    memory.hold("client", CLIENT_ENCODER)
    # Malformed, as the server learns only once it can decode it: Content-Length 1, no DATA.
    # (send_request would refuse to end a message short of its content-length.)
    malformed = [*POST, SESSION, (b"content-length", b"1")]
    memory.client.send_request_unchecked(malformed, end_stream=True)
    memory.pump()
    memory.release("client", CLIENT_ENCODER)
    errors = [e for e in memory.log.events if e.name == "stream_error" and e.endpoint == "server"]
    assert [e.data["code_name"] for e in errors] == ["H3_MESSAGE_ERROR"]
    assert not memory.server.closed


# -- RFC 9204 §2.2.1, §2.2.2.2, §7.4: a stream error among QPACK's streams -------------------

#: An Indexed Field Line (static) whose index is past the 2^62 - 1 h3learn accepts.
OVER_LIMIT_LINE = b"\xff" + b"\xff" * 8 + b"\x7f"
#: :method GET, :scheme https, :authority example.com, :path / (static references, §4.5.2).
STATIC_REQUEST = bytes.fromhex("d1 d7 50 0b") + b"example.com" + bytes.fromhex("c1")
ENTRY_0: Header = (b"x-a", b"b")


def decoder_stream_written(lone: Lone) -> bytes:
    sent = lone.take_sent()
    return b"".join(
        a.data for a in sent if isinstance(a, SendStreamData) and a.stream_id == SERVER_DECODER
    )


def dynamic_encoder() -> Encoder:
    """The client's encoder, with the dynamic table the server's DYNAMIC settings allow."""
    encoder = Encoder()
    encoder.apply_settings(4096, 16)
    return encoder


def peer_encoder_with_entry_0(lone: Lone) -> Encoder:
    """The client's encoder, after inserting ENTRY_0 and hearing the server receive it."""
    encoder = dynamic_encoder()
    lone.feed(CLIENT_ENCODER, encoder.insert(*ENTRY_0))
    encoder.feed_decoder(decoder_stream_written(lone))
    assert encoder.known_received_count == 1
    return encoder


@pytest.mark.parametrize("failing_first", [False, True])
def test_a_limit_error_in_one_unblocked_section_costs_only_its_stream(failing_first: bool) -> None:
    """RFC 9204 §2.2.1, §7.4: one insert unblocks two requests; the one past the decoder's
    limits is reset, the other is delivered and acknowledged."""
    lone = Lone.server(settings=DYNAMIC)
    good = frame_bytes(HeadersFrame(NEEDS_ONE_INSERT[:2] + STATIC_REQUEST + b"\x80"))
    bad = frame_bytes(HeadersFrame(NEEDS_ONE_INSERT + OVER_LIMIT_LINE))
    for stream_id, data in [(4, bad), (0, good)] if failing_first else [(0, good), (4, bad)]:
        assert lone.feed(stream_id, data, end_stream=True) == []
    events = lone.feed(CLIENT_ENCODER, dynamic_encoder().insert(*ENTRY_0))
    failed = QpackErrorCode.QPACK_DECOMPRESSION_FAILED
    assert events == [
        StreamReset(stream_id=4, error_code=failed),
        HeadersReceived(stream_id=0, headers=[*REQUEST, ENTRY_0], stream_ended=True),
    ]
    assert lone.conn.decoder.blocked_streams == []
    assert not lone.conn.closed
    # Stream 0 acknowledged (§4.4.1), stream 4 cancelled (§4.4.2).
    assert decoder_stream_written(lone) == bytes.fromhex("80 44")


def test_a_request_stream_reset_before_any_of_it_arrived_is_cancelled() -> None:
    """RFC 9204 §2.2.2.2: "When an endpoint receives a stream reset before the end of a
    stream ... it generates a Stream Cancellation instruction"; the reset may have
    overtaken a section that refers to the table, whose references the encoder still holds."""
    lone = Lone.server(settings=DYNAMIC)
    lone.reset(0, ErrorCode.H3_REQUEST_CANCELLED)
    assert decoder_stream_written(lone) == CANCEL_STREAM_0
    assert [e.stream_id for e in lone.errors()] == [0]
    # Bytes that come after the reset are not read; the connection is fine.
    assert lone.feed(0, frame_bytes(DataFrame(b"late")), end_stream=True) == []
    assert not lone.conn.closed


def test_a_stream_read_whole_whose_referencing_section_failed_is_cancelled() -> None:
    """RFC 9204 §2.2.2.2, §4.4.2: the section was received but never acknowledged."""
    lone = Lone.server(settings=DYNAMIC)
    encoder = peer_encoder_with_entry_0(lone)
    _, section = encoder.encode(0, [*REQUEST, ENTRY_0])
    lone.feed(0, frame_bytes(HeadersFrame(section + OVER_LIMIT_LINE)), end_stream=True)
    assert_stream_error(lone, 0, QpackErrorCode.QPACK_DECOMPRESSION_FAILED, stop=False)
    written = decoder_stream_written(lone)
    assert written == CANCEL_STREAM_0
    created = lone.events("instruction_created", "qpack")
    assert (created[-1].data["instruction_type"], created[-1].raw) == (
        "stream_cancellation",
        CANCEL_STREAM_0,
    )
    encoder.feed_decoder(written)
    assert encoder.acknowledgments.sections_awaiting() == 0


def test_a_stream_read_whole_whose_referencing_trailers_went_unread_is_cancelled() -> None:
    """RFC 9204 §2.2.2.2: a malformed header section ends the stream before its trailers,
    which refer to the table, are decoded; the encoder must still learn to let go."""
    lone = Lone.server(settings=DYNAMIC)
    encoder = peer_encoder_with_entry_0(lone)
    _, header_section = encoder.encode(0, [*REQUEST, (b"X-Bad", b"1")])
    _, trailer_section = encoder.encode(0, [ENTRY_0])
    data = frame_bytes(HeadersFrame(header_section), HeadersFrame(trailer_section))
    lone.feed(0, data, end_stream=True)
    assert_stream_error(lone, 0, ErrorCode.H3_MESSAGE_ERROR, stop=False)
    written = decoder_stream_written(lone)
    assert written == CANCEL_STREAM_0
    encoder.feed_decoder(written)
    assert encoder.acknowledgments.sections_awaiting() == 0


def test_a_stream_read_whole_with_every_referencing_section_acknowledged_is_not_cancelled() -> None:
    """RFC 9204 §2.2.2.2: nothing is outstanding, so no Stream Cancellation follows the
    stream error that the end of the message brings (content-length 5, no DATA)."""
    lone = Lone.server(settings=DYNAMIC)
    encoder = peer_encoder_with_entry_0(lone)
    _, section = encoder.encode(0, [*POST, ENTRY_0, (b"content-length", b"5")])
    lone.feed(0, frame_bytes(HeadersFrame(section)), end_stream=True)
    assert_stream_error(lone, 0, ErrorCode.H3_MESSAGE_ERROR, stop=False)
    assert decoder_stream_written(lone) == b"\x80"  # the Section Acknowledgment only


def test_a_peer_reset_after_a_whole_acknowledged_request_is_not_cancelled() -> None:
    """RFC 9204 §2.2.2.2: the reset came after the end of the stream and every section
    was processed, so the Section Acknowledgment already released the references."""
    lone = Lone.server(settings=DYNAMIC)
    encoder = peer_encoder_with_entry_0(lone)
    _, section = encoder.encode(0, [*POST, ENTRY_0])
    lone.feed(0, frame_bytes(HeadersFrame(section)), end_stream=True)
    lone.reset(0, ErrorCode.H3_REQUEST_CANCELLED)
    assert decoder_stream_written(lone) == b"\x80"  # the Section Acknowledgment only


def test_a_decoder_without_a_table_cancels_nothing_for_an_unread_section() -> None:
    """RFC 9204 §2.2.2.2: with maximum table capacity 0 the decoder may omit Stream
    Cancellations; no section can refer to a table it does not have."""
    lone = Lone.server()
    post = [*POST, (b"content-length", b"1")]
    # Too much content (a stream error) leaves the trailers, which name a table, unread.
    data = lone.headers(0, post) + frame_bytes(DataFrame(b"12345"), HeadersFrame(NEEDS_ONE_INSERT))
    lone.feed(0, data, end_stream=True)
    assert_stream_error(lone, 0, ErrorCode.H3_MESSAGE_ERROR, stop=False)
    assert decoder_stream_written(lone) == b""


# -- RFC 9204 §6: QPACK errors are connection errors with QPACK's codes ---------------------


def test_an_undecodable_field_section_is_qpack_decompression_failed() -> None:
    """RFC 9204 §4.5.1.1: with no dynamic table, a Required Insert Count above 0 is invalid."""
    lone = Lone.server()
    lone.feed(0, frame_bytes(HeadersFrame(NEEDS_ONE_INSERT)))
    assert_connection_error(lone, QpackErrorCode.QPACK_DECOMPRESSION_FAILED, "9204#4.5.1.1")


def test_a_field_section_that_ends_inside_its_prefix_is_qpack_decompression_failed() -> None:
    lone = Lone.server()
    lone.feed(0, frame_bytes(HeadersFrame(b"")))
    assert_connection_error(lone, QpackErrorCode.QPACK_DECOMPRESSION_FAILED)


#: An Indexed Field Line (static) whose index, 2^63 + 62, is past the 2^62 - 1 h3learn
#: accepts: the 6-bit prefix all ones, then nine 7-bit groups of ones (63 bits).
HUGE_INDEX = bytes.fromhex("00 00 ff") + b"\xff" * 8 + b"\x7f"


def test_a_field_section_past_the_decoders_limits_costs_only_its_stream() -> None:
    """RFC 9204 §7.4: a value larger than the implementation can decode is a stream error
    of type QPACK_DECOMPRESSION_FAILED on a request stream (not a connection error)."""
    lone = Lone.server()
    events = lone.feed(0, frame_bytes(HeadersFrame(HUGE_INDEX)), end_stream=True)
    failed = QpackErrorCode.QPACK_DECOMPRESSION_FAILED
    assert events == [StreamReset(stream_id=0, error_code=failed)]
    error = assert_stream_error(lone, 0, failed, "9204#4.1.1", stop=False)
    assert "2^62-1" in error.data["rule"]
    # The connection carries on: the next request is answered as usual.
    assert lone.feed(4, lone.headers(4, REQUEST), end_stream=True)[0] == HeadersReceived(
        stream_id=4, headers=REQUEST, stream_ended=True
    )


def test_the_same_value_on_the_encoder_stream_closes_the_connection() -> None:
    """RFC 9204 §7.4: on the encoder stream it is a connection error of that stream's type."""
    lone = Lone.server(Settings(qpack_max_table_capacity=4096))
    lone.feed(lone.peer_encoder_stream, bytes.fromhex("3f") + b"\xff" * 8 + b"\x7f")
    assert_connection_error(lone, QpackErrorCode.QPACK_ENCODER_STREAM_ERROR, "9204#4.1.1")


def test_a_bad_encoder_instruction_is_qpack_encoder_stream_error() -> None:
    """RFC 9204 §4.3.1: a capacity above the decoder's maximum (here 0)."""
    lone = Lone.server()
    lone.feed(lone.peer_encoder_stream, bytes.fromhex("3fe11f"))  # Set Capacity 4096
    assert_connection_error(lone, QpackErrorCode.QPACK_ENCODER_STREAM_ERROR, "9204#4.3.1")


def test_a_bad_decoder_instruction_is_qpack_decoder_stream_error() -> None:
    """RFC 9204 §4.4.3: an Insert Count Increment of 0."""
    lone = Lone.client()
    lone.feed(lone.peer_decoder_stream, b"\x00")
    assert_connection_error(lone, QpackErrorCode.QPACK_DECODER_STREAM_ERROR, "9204#4.4.3")


def test_an_acknowledgment_for_a_section_never_sent_is_qpack_decoder_stream_error() -> None:
    lone = Lone.client()
    lone.feed(lone.peer_decoder_stream, b"\x80")  # Section Acknowledgment, stream 0
    assert_connection_error(lone, QpackErrorCode.QPACK_DECODER_STREAM_ERROR, "9204#4.4.1")


def test_a_malformed_message_found_by_qpack_decoding_is_only_a_stream_error() -> None:
    """QPACK decodes fine; HTTP finds the fields malformed (RFC 9114 §4.1.2)."""
    lone = Lone.server()
    lone.feed(0, lone.headers(0, [*REQUEST, (b"Upper", b"x")]), end_stream=True)
    assert_stream_error(lone, 0, ErrorCode.H3_MESSAGE_ERROR, stop=False)


# -- RFC 9204 §2.1.3: the encoder stream's flow-control credit --------------------------------

OTHER: Header = (b"x-other", b"ghijkl456")


def three_requests(credit: tuple[int, int] | None) -> MemoryPair:
    """A request with SESSION and OTHER (each seen once: not inserted yet); then, queued
    without being delivered, one with SESSION (inserted now, with :authority) and one with
    OTHER. ``credit`` (stream, connection) is reported to the client before the second."""
    memory = pair(DYNAMIC, DYNAMIC)
    memory.client.send_request([*REQUEST, SESSION, OTHER], end_stream=True)
    memory.pump()
    if credit is not None:
        stream, connection = credit
        memory.client.flow_control_credit_updated(encoder_stream=stream, connection=connection)
    memory.client.send_request([*REQUEST, SESSION], end_stream=True)
    memory.client.send_request([*REQUEST, OTHER], end_stream=True)
    return memory


def encoder_stream_writes(memory: MemoryPair) -> list[bytes]:
    return [e.raw for e in qpack_events(memory, "client", "instruction_created")]


def test_bytes_queued_since_the_transports_report_use_up_the_encoder_streams_credit() -> None:
    """RFC 9204 §2.1.3: the credit counts what the connection queued after the report."""
    unconstrained = encoder_stream_writes(three_requests(None))
    *second, insert_other = unconstrained  # capacity, :authority, x-session; then x-other
    enough_for_second = sum(map(len, second))
    memory = three_requests((enough_for_second, 10_000))
    assert encoder_stream_writes(memory) == second
    (skipped,) = qpack_events(memory, "client", "insert_skipped")
    assert skipped.rfc == ("9204#2.1.3",)
    assert (skipped.data["name"], skipped.data["instruction_size"]) == (
        "x-other",
        len(insert_other),
    )
    assert skipped.data["stream_credit"] == 0
    # The connection's credit lost every byte queued since the report: the second request's
    # instructions and its HEADERS frame (the third's is encoded after the skip).
    second_headers = [e for e in memory.log.events if e.name == "frame_created"][-2]
    assert second_headers.stream_id == 4
    assert skipped.data["connection_credit"] == 10_000 - enough_for_second - len(second_headers.raw)
    memory.pump()
    assert [e.headers for e in memory.received["server"] if isinstance(e, HeadersReceived)] == [
        [*REQUEST, SESSION, OTHER],
        [*REQUEST, SESSION],
        [*REQUEST, OTHER],
    ]


def test_a_connection_without_a_credit_report_writes_every_instruction_it_chooses() -> None:
    """RFC 9204 §2.1.3 needs a transport with flow control; the memory transport has none."""
    memory = three_requests(None)
    assert len(encoder_stream_writes(memory)) == 4
    assert not qpack_events(memory, "client", "insert_skipped")
