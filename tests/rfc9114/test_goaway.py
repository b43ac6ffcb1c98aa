"""RFC 9114 §5.2, §7.2.6: graceful shutdown with GOAWAY.

A server's GOAWAY carries the first client-initiated bidirectional stream ID it will not
process; a client's carries a push ID. Requests at or past the identifier are rejected
(H3_REQUEST_REJECTED) and the client may retry them elsewhere; no new requests or pushes
follow a GOAWAY; identifiers never grow (H3_ID_ERROR); a server's identifier that is not a
client bidirectional stream ID is H3_ID_ERROR too.
"""

from __future__ import annotations

import pytest
from h3_connection_helpers import (
    REQUEST,
    RESPONSE,
    Lone,
    assert_connection_error,
    assert_frame_traced,
    assert_no_error,
    assert_stream_error,
    assert_trace_labelled,
    frame_bytes,
    pair,
    stream_header,
)

from h3learn.h3.actions import CloseConnection, StopSending
from h3learn.h3.closure import MAX_CLIENT_BIDI_STREAM_ID, MAX_PUSH_ID_VALUE
from h3learn.h3.connection import H3UsageError
from h3learn.h3.errors import ErrorCode
from h3learn.h3.frames import DataFrame, GoawayFrame, MaxPushIdFrame
from h3learn.h3.http_events import (
    ConnectionTerminated,
    GoawayReceived,
    HeadersReceived,
    StreamReset,
)
from h3learn.h3.stream_types import StreamType

REJECTED = StreamReset(stream_id=4, error_code=ErrorCode.H3_REQUEST_REJECTED, retry_safe=True)


# -- a graceful shutdown over MemoryPair ------------------------------------------------


def test_a_server_shuts_down_gracefully_and_in_flight_requests_complete() -> None:
    memory = pair()
    first = memory.client.send_request(REQUEST, end_stream=True)
    second = memory.client.send_request(REQUEST, end_stream=True)
    memory.pump()
    assert memory.server.send_goaway() == 8, "the stream after the last one processed"
    memory.server.send_headers(first, RESPONSE, end_stream=True)
    memory.server.send_headers(second, RESPONSE, end_stream=True)
    events = memory.pump()
    assert events[0] == GoawayReceived(id=8)
    assert HeadersReceived(stream_id=4, headers=RESPONSE, stream_ended=False) in events
    with pytest.raises(H3UsageError, match="GOAWAY"):
        memory.client.send_request(REQUEST)
    memory.server.close(ErrorCode.H3_NO_ERROR)
    memory.pump()
    assert memory.received["client"][-1] == ConnectionTerminated(
        error_code=ErrorCode.H3_NO_ERROR, reason="", by_peer=True
    )
    closes = [
        (e.endpoint, e.data["code_name"], e.data["direction"])
        for e in memory.log.events
        if e.name == "connection_closed"
    ]
    assert closes == [("server", "H3_NO_ERROR", "sent"), ("client", "H3_NO_ERROR", "received")]
    assert not [e for e in memory.log.events if e.name == "connection_error"], "no error"
    assert_trace_labelled(memory.log)


def test_a_server_goaway_before_any_request_carries_stream_id_zero() -> None:
    """RFC 9114 §5.2: the identifier may be zero if no request was processed."""
    memory = pair()
    assert memory.server.send_goaway() == 0
    assert memory.pump() == [GoawayReceived(id=0)]
    assert not memory.client.closed


def test_a_client_shuts_down_gracefully_with_a_push_id() -> None:
    memory = pair()
    memory.client.send_max_push_id(8)
    stream_id = memory.client.send_request(REQUEST, end_stream=True)
    memory.pump()
    memory.server.send_push_promise(stream_id, REQUEST)
    memory.pump()
    assert memory.client.send_goaway() == 1, "the push ID after the last one promised"
    assert memory.pump() == [GoawayReceived(id=1)]


def test_a_request_sent_while_the_goaway_was_in_flight_is_rejected_and_safe_to_retry() -> None:
    memory = pair()
    memory.client.send_request(REQUEST, end_stream=True)
    memory.pump()
    memory.server.send_goaway()  # 4: stream 0 was processed
    late = memory.client.send_request(REQUEST, end_stream=True)  # crosses the GOAWAY
    memory.pump()
    assert late == 4
    assert [e for e in memory.received["client"] if isinstance(e, StreamReset)] == [REJECTED]
    assert not any(
        isinstance(e, HeadersReceived) and e.stream_id == 4 for e in memory.received["server"]
    )
    rejected = [e for e in memory.log.events if e.name == "stream_error" and e.endpoint == "server"]
    assert [(e.data["code_name"], e.data["rfc"]) for e in rejected] == [
        ("H3_REQUEST_REJECTED", "9114#5.2")
    ]


# -- the server's side ------------------------------------------------------------------------


def test_requests_at_or_after_the_goaway_id_are_rejected_with_h3_request_rejected() -> None:
    """RFC 9114 §5.2: the sender of GOAWAY rejects, unprocessed, what its identifier excludes."""
    lone = Lone.server()
    lone.feed(0, lone.headers(0, REQUEST))
    assert lone.conn.send_goaway() == 4
    lone.take_sent()
    events = lone.feed(4, lone.headers(4, REQUEST), end_stream=True)
    assert events == [StreamReset(stream_id=4, error_code=ErrorCode.H3_REQUEST_REJECTED)]
    assert_stream_error(lone, 4, ErrorCode.H3_REQUEST_REJECTED, "9114#5.2")
    assert lone.feed(4, frame_bytes(DataFrame(b"ignored"))) == []
    events = lone.feed(8, lone.headers(8, REQUEST))
    assert events == [StreamReset(stream_id=8, error_code=ErrorCode.H3_REQUEST_REJECTED)]
    assert lone.feed(0, b"", end_stream=True), "stream 0, below the identifier, goes on"


def test_a_lower_goaway_explicitly_rejects_the_open_requests_it_excludes() -> None:
    """RFC 9114 §5.2: on sending GOAWAY the server cancels what it excludes, as rejected."""
    memory = pair()
    for _ in range(3):
        memory.client.send_request(REQUEST, end_stream=True)
    memory.pump()
    assert memory.server.send_goaway() == 12, "streams 0, 4 and 8 are processed"
    memory.server.send_headers(0, RESPONSE, end_stream=True)
    assert memory.server.send_goaway(4) == 4, "stream 4 and 8: not processed after all"
    # The requests arrived whole, so there is nothing to stop: only the responses are reset.
    quic_frames = [
        (e.name, e.stream_id, e.data["code_name"])
        for e in memory.log.events
        if e.name in ("stop_sending", "reset_stream") and e.endpoint == "server"
    ]
    assert quic_frames == [
        ("reset_stream", 4, "H3_REQUEST_REJECTED"),
        ("reset_stream", 8, "H3_REQUEST_REJECTED"),
    ]
    events = memory.pump()
    assert [e for e in events if isinstance(e, GoawayReceived)] == [
        GoawayReceived(id=12),
        GoawayReceived(id=4),
    ]
    assert [e for e in memory.received["client"] if isinstance(e, StreamReset)] == [
        REJECTED,
        StreamReset(stream_id=8, error_code=ErrorCode.H3_REQUEST_REJECTED, retry_safe=True),
    ]
    rejected = [e for e in memory.log.events if e.name == "stream_error" and e.endpoint == "server"]
    assert [(e.stream_id, e.data["code_name"], e.data["rfc"]) for e in rejected] == [
        (4, "H3_REQUEST_REJECTED", "9114#5.2"),
        (8, "H3_REQUEST_REJECTED", "9114#5.2"),
    ]


def test_a_goaway_cannot_exclude_a_request_whose_response_has_begun() -> None:
    """RFC 9114 §5.2: a request the server answers was processed, so no GOAWAY rejects it."""
    memory = pair()
    memory.client.send_request(REQUEST, end_stream=True)
    memory.client.send_request(REQUEST, end_stream=True)
    memory.pump()
    memory.server.send_headers(4, RESPONSE)
    with pytest.raises(H3UsageError, match="response on stream 4 has begun"):
        memory.server.send_goaway(4)
    assert memory.server.goaway_sent is None


def test_a_server_goaway_carries_a_client_initiated_bidirectional_stream_id() -> None:
    memory = pair()
    for identifier in (1, 2, 3, 6):
        with pytest.raises(H3UsageError, match="client-initiated bidirectional"):
            memory.server.send_goaway(identifier)


def test_a_goaway_identifier_sent_never_increases() -> None:
    memory = pair()
    memory.server.send_goaway(MAX_CLIENT_BIDI_STREAM_ID)
    memory.server.send_goaway(8)
    memory.server.send_goaway(8)
    with pytest.raises(H3UsageError, match="never increase"):
        memory.server.send_goaway(12)
    assert memory.pump() == [
        GoawayReceived(id=MAX_CLIENT_BIDI_STREAM_ID),
        GoawayReceived(id=8),
        GoawayReceived(id=8),
    ]


def test_no_new_pushes_are_promised_after_the_clients_goaway() -> None:
    """RFC 9114 §5.2: not even one whose push ID is below the client's identifier."""
    memory = pair()
    memory.client.send_max_push_id(10)
    stream_id = memory.client.send_request(REQUEST, end_stream=True)
    memory.pump()
    memory.client.send_goaway(MAX_PUSH_ID_VALUE)
    memory.pump()
    with pytest.raises(H3UsageError, match="no new pushes"):
        memory.server.send_push_promise(stream_id, REQUEST)


PUSHED = [*REQUEST[:3], (b":path", b"/pushed.css")]
#: The server's first two push streams, after its control and QPACK streams (3, 7, 11).
PUSH_STREAMS = (15, 19)


def cancel_pushes_traced(lone: Lone) -> list[tuple[int, str]]:
    """The CANCEL_PUSH frames the client created: (push ID, the reason recorded)."""
    return [
        (e.data["frame"]["push_id"], e.data.get("reason", ""))
        for e in lone.events("frame_created")
        if e.data["frame"]["frame_type"] == "cancel_push"
    ]


def test_a_clients_goaway_cancels_the_promised_pushes_it_excludes_and_aborts_their_streams() -> (
    None
):
    """RFC 9114 §5.2: after a GOAWAY with push ID 1 the client takes no push from 1 on; it
    cancels push 1 with CANCEL_PUSH (§7.2.3) and aborts its push stream with
    H3_REQUEST_CANCELLED, while push 0 goes on."""
    lone = Lone.client()
    lone.conn.send_max_push_id(5)
    stream_id = lone.request()
    lone.feed(stream_id, lone.push_promise(stream_id, 0, REQUEST))
    lone.feed(stream_id, lone.push_promise(stream_id, 1, PUSHED))
    lone.feed(PUSH_STREAMS[1], stream_header(StreamType.PUSH, push_id=1))
    lone.take_sent()
    assert lone.conn.send_goaway(1) == 1
    assert cancel_pushes_traced(lone) == [(1, "this client's GOAWAY 1 excludes it")]
    events = lone.feed(PUSH_STREAMS[1], lone.headers(PUSH_STREAMS[1], RESPONSE), end_stream=True)
    assert events == [
        StreamReset(stream_id=PUSH_STREAMS[1], error_code=ErrorCode.H3_REQUEST_CANCELLED)
    ]
    assert StopSending(PUSH_STREAMS[1], ErrorCode.H3_REQUEST_CANCELLED) in lone.sent
    assert_stream_error(lone, PUSH_STREAMS[1], ErrorCode.H3_REQUEST_CANCELLED, "9114#5.2")
    events = lone.feed(
        PUSH_STREAMS[0],
        stream_header(StreamType.PUSH, push_id=0) + lone.headers(PUSH_STREAMS[0], RESPONSE),
        end_stream=True,
    )
    assert events == [
        HeadersReceived(stream_id=PUSH_STREAMS[0], headers=RESPONSE, push_id=0, stream_ended=True)
    ]


def test_a_push_promise_at_or_above_the_clients_goaway_is_cancelled_and_never_reported() -> None:
    """RFC 9114 §5.2: a PUSH_PROMISE that arrives after the client's GOAWAY with a push ID
    at or above it is cancelled, not handed to the application, and its push stream is
    aborted; the trace says why."""
    lone = Lone.client()
    lone.conn.send_max_push_id(5)
    stream_id = lone.request()
    assert lone.conn.send_goaway() == 0
    lone.take_sent()
    events = lone.feed(
        stream_id, lone.push_promise(stream_id, 0, PUSHED) + lone.headers(stream_id, RESPONSE)
    )
    assert events == [HeadersReceived(stream_id=stream_id, headers=RESPONSE)]
    assert cancel_pushes_traced(lone) == [(0, "this client's GOAWAY 0 excludes it")]
    (created,) = [e for e in lone.events("frame_created") if e.data.get("reason")]
    assert "9114#5.2" in created.rfc
    events = lone.feed(
        PUSH_STREAMS[0],
        stream_header(StreamType.PUSH, push_id=0) + lone.headers(PUSH_STREAMS[0], RESPONSE),
        end_stream=True,
    )
    assert events == [
        StreamReset(stream_id=PUSH_STREAMS[0], error_code=ErrorCode.H3_REQUEST_CANCELLED)
    ]
    assert_stream_error(lone, PUSH_STREAMS[0], ErrorCode.H3_REQUEST_CANCELLED, "9114#5.2")


def test_a_push_stream_at_or_above_the_clients_goaway_is_aborted_before_its_promise() -> None:
    """RFC 9114 §5.2: the push stream is aborted at once; no CANCEL_PUSH names a push ID
    that no PUSH_PROMISE has used yet (§7.2.3), but the promise, when it comes, is."""
    lone = Lone.client()
    lone.conn.send_max_push_id(5)
    stream_id = lone.request()
    lone.conn.send_goaway(0)
    lone.feed(PUSH_STREAMS[0], stream_header(StreamType.PUSH, push_id=0))
    assert_stream_error(lone, PUSH_STREAMS[0], ErrorCode.H3_REQUEST_CANCELLED, "9114#5.2")
    assert cancel_pushes_traced(lone) == []
    assert lone.feed(stream_id, lone.push_promise(stream_id, 0, PUSHED)) == []
    assert cancel_pushes_traced(lone) == [(0, "this client's GOAWAY 0 excludes it")]


def test_a_server_accepts_any_push_id_in_a_client_goaway() -> None:
    lone = Lone.server()
    assert lone.control(GoawayFrame(7), GoawayFrame(3)) == [
        GoawayReceived(id=7),
        GoawayReceived(id=3),
    ]
    assert_no_error(lone)


def test_client_goaway_push_ids_that_increase_are_h3_id_error() -> None:
    lone = Lone.server()
    lone.control(MaxPushIdFrame(9), GoawayFrame(3), GoawayFrame(4))
    assert_connection_error(lone, ErrorCode.H3_ID_ERROR, "9114#5.2")


# -- the client's side ------------------------------------------------------------------------


def test_the_client_reports_requests_at_or_after_the_goaway_id_as_safe_to_retry() -> None:
    lone = Lone.client()
    for _ in range(3):
        lone.request()
    lone.take_sent()
    events = lone.control(GoawayFrame(4))
    assert events == [
        GoawayReceived(id=4),
        REJECTED,
        StreamReset(stream_id=8, error_code=ErrorCode.H3_REQUEST_REJECTED, retry_safe=True),
    ]
    assert lone.take_sent() == [
        StopSending(4, ErrorCode.H3_REQUEST_CANCELLED),
        StopSending(8, ErrorCode.H3_REQUEST_CANCELLED),
    ]
    assert lone.feed(0, lone.headers(0, RESPONSE), end_stream=True) == [
        HeadersReceived(stream_id=0, headers=RESPONSE, stream_ended=True)
    ]
    assert_frame_traced(lone, frame_bytes(GoawayFrame(4)), "goaway")
    assert lone.errors() == []


@pytest.mark.parametrize("order", ["reset first", "goaway first"])
def test_a_rejected_request_is_reported_once_whatever_arrives_first(order: str) -> None:
    lone = Lone.client()
    lone.request()
    lone.request()
    if order == "reset first":
        events = lone.reset(4, ErrorCode.H3_REQUEST_REJECTED) + lone.control(GoawayFrame(4))
    else:
        events = lone.control(GoawayFrame(4)) + lone.reset(4, ErrorCode.H3_REQUEST_REJECTED)
    assert [e for e in events if isinstance(e, StreamReset)] == [REJECTED]


def test_a_later_goaway_with_a_lower_identifier_rejects_more_requests() -> None:
    lone = Lone.client()
    lone.request()
    lone.request()
    assert lone.control(GoawayFrame(8)) == [GoawayReceived(id=8)]
    assert lone.control(GoawayFrame(4)) == [GoawayReceived(id=4), REJECTED]
    assert_no_error(lone)


def test_goaway_ids_that_increase_are_h3_id_error() -> None:
    """RFC 9114 §5.2: a GOAWAY larger than an earlier one is a connection error."""
    lone = Lone.client()
    lone.control(GoawayFrame(8), GoawayFrame(12))
    event = assert_connection_error(lone, ErrorCode.H3_ID_ERROR, "9114#5.2")
    assert event.data["rule"] == "GOAWAY 12 is larger than the previous GOAWAY 8"


@pytest.mark.parametrize("identifier", [1, 2, 3, 5, 6, 7])
def test_server_goaway_with_a_stream_id_that_is_not_client_bidirectional_is_h3_id_error(
    identifier: int,
) -> None:
    """RFC 9114 §7.2.6: from the server, GOAWAY names a client-initiated bidirectional stream."""
    lone = Lone.client()
    lone.control(GoawayFrame(identifier))
    assert_connection_error(lone, ErrorCode.H3_ID_ERROR, "9114#7.2.6")


def test_goaway_on_a_request_stream_is_h3_frame_unexpected() -> None:
    """RFC 9114 §7.2.6: GOAWAY belongs to the control stream."""
    lone = Lone.client()
    lone.request()
    lone.feed(0, lone.headers(0, RESPONSE) + frame_bytes(GoawayFrame(0)))
    assert_connection_error(lone, ErrorCode.H3_FRAME_UNEXPECTED, "9114#7.2.6")


def test_no_new_requests_after_goaway() -> None:
    """RFC 9114 §5.2: not even on a stream ID below the server's identifier."""
    lone = Lone.client()
    lone.control(GoawayFrame(MAX_CLIENT_BIDI_STREAM_ID))
    with pytest.raises(H3UsageError, match="no new requests"):
        lone.conn.send_request(REQUEST)
    assert lone.conn.actions_to_send() == []


def test_without_goaway_a_closed_connection_marks_no_request_safe_to_retry() -> None:
    """RFC 9114 §5.4: with no GOAWAY, every request sent might have been processed."""
    lone = Lone.client()
    lone.request()
    events = lone.conn.connection_closed(ErrorCode.H3_NO_ERROR, "bye")
    assert events == [
        ConnectionTerminated(error_code=ErrorCode.H3_NO_ERROR, reason="bye", by_peer=True)
    ]
    assert not any(isinstance(a, CloseConnection) for a in lone.conn.actions_to_send())


def test_a_closed_connection_lists_the_requests_that_may_have_been_processed() -> None:
    """RFC 9114 §5.4: the client names the requests left without a response; the ones a
    GOAWAY excluded are not among them (they were rejected)."""
    lone = Lone.client()
    for _ in range(3):
        lone.request()
    lone.feed(0, lone.headers(0, RESPONSE), end_stream=True)
    lone.control(GoawayFrame(8))
    lone.conn.connection_closed(ErrorCode.H3_NO_ERROR)
    (closed,) = lone.events("connection_closed")
    assert closed.data["unanswered_requests"] == [4]
    assert "9114#5.4" in closed.rfc
    assert "stream 4" in closed.summary


def test_a_client_with_every_response_in_has_nothing_unanswered_at_close() -> None:
    lone = Lone.client()
    lone.request()
    lone.feed(0, lone.headers(0, RESPONSE), end_stream=True)
    lone.conn.connection_closed(ErrorCode.H3_NO_ERROR)
    (closed,) = lone.events("connection_closed")
    assert closed.data["unanswered_requests"] == []
    assert closed.rfc == ("9114#5.3",)
