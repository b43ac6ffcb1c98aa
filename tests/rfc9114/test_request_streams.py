"""RFC 9114 §4.1-§4.4: messages on request streams, as frames in order.

A request stream carries one request and its response: HEADERS, DATA..., optional trailing
HEADERS, then the end of the stream, with interim (1xx) responses before the final one. A
frame out of that order is a connection error (H3_FRAME_UNEXPECTED); a message whose fields
break the rules is malformed, a stream error (H3_MESSAGE_ERROR), and the connection goes on
to serve the next request. Whole exchanges run over a `MemoryPair`; broken ones are fed as
crafted bytes into a lone endpoint.
"""

from __future__ import annotations

import pytest
from h3_connection_helpers import (
    INTERIM,
    POST,
    REQUEST,
    RESPONSE,
    TRAILERS,
    Header,
    Lone,
    assert_connection_error,
    assert_frame_traced,
    assert_no_error,
    assert_stream_error,
    assert_trace_labelled,
    frame_bytes,
    pair,
)

from h3learn.events import Event
from h3learn.h3.actions import ResetStream, SendStreamData, StopSending
from h3learn.h3.connection import H3UsageError
from h3learn.h3.errors import ErrorCode, reserved_value
from h3learn.h3.frames import DataFrame, UnknownFrame
from h3learn.h3.http_events import (
    DataReceived,
    HeadersReceived,
    StreamEnded,
    StreamReset,
)
from h3learn.h3.messages import MalformedMessage
from h3learn.h3.settings import Settings

CONNECT: list[Header] = [(b":method", b"CONNECT"), (b":authority", b"example.com:443")]


def states(events: list[Event]) -> list[tuple[str, str, str]]:
    """(old, new, trigger) of each stream_state_updated event."""
    return [(e.data["old"], e.data["new"], e.data["trigger"]) for e in events]


# -- §4.1: a whole exchange ------------------------------------------------------------------


def test_a_request_and_its_response_are_headers_data_and_the_end_of_the_stream() -> None:
    memory = pair()
    stream_id = memory.client.send_request([*POST, (b"content-length", b"5")])
    memory.client.send_data(stream_id, b"hello", end_stream=True)
    memory.pump()
    memory.server.send_headers(stream_id, [*RESPONSE, (b"content-length", b"2")])
    memory.server.send_data(stream_id, b"ok", end_stream=True)
    memory.pump()
    server, client = memory.received["server"], memory.received["client"]
    assert server == [
        HeadersReceived(stream_id=0, headers=[*POST, (b"content-length", b"5")]),
        DataReceived(stream_id=0, data=b"hello"),
        StreamEnded(stream_id=0),
    ]
    assert client[-3:] == [
        HeadersReceived(stream_id=0, headers=[*RESPONSE, (b"content-length", b"2")]),
        DataReceived(stream_id=0, data=b"ok"),
        StreamEnded(stream_id=0),
    ]
    moves = [e for e in memory.log.events if e.name == "stream_state_updated"]
    assert states([e for e in moves if e.endpoint == "server"]) == [
        ("expecting_headers", "receiving_content", "headers"),
        ("receiving_content", "complete", "end_of_stream"),
    ]
    assert_trace_labelled(memory.log)


def test_client_requests_use_streams_0_4_8_in_order() -> None:
    """RFC 9114 §6.1: the client's bidirectional streams, in order, carry its requests."""
    memory = pair()
    ids = [memory.client.send_request(REQUEST, end_stream=True) for _ in range(3)]
    memory.pump()
    assert ids == [0, 4, 8]
    assert [e.stream_id for e in memory.received["server"] if isinstance(e, HeadersReceived)] == ids


def test_interim_responses_come_before_the_final_response() -> None:
    memory = pair()
    stream_id = memory.client.send_request(REQUEST, end_stream=True)
    memory.pump()
    memory.server.send_headers(stream_id, [(b":status", b"100")])
    memory.server.send_headers(stream_id, INTERIM)
    memory.server.send_headers(stream_id, RESPONSE, end_stream=True)
    events = memory.pump()
    assert events == [
        HeadersReceived(stream_id=0, headers=[(b":status", b"100")], interim=True),
        HeadersReceived(stream_id=0, headers=INTERIM, interim=True),
        HeadersReceived(stream_id=0, headers=RESPONSE),
        StreamEnded(stream_id=0),
    ]
    # Each interim response is in the trace as a move of the state table that stays put.
    moves = [e for e in memory.log.events if e.name == "stream_state_updated"]
    assert states([e for e in moves if e.endpoint == "client"]) == [
        ("expecting_headers", "expecting_headers", "interim_headers"),
        ("expecting_headers", "expecting_headers", "interim_headers"),
        ("expecting_headers", "receiving_content", "headers"),
        ("receiving_content", "complete", "end_of_stream"),
    ]


def test_trailers_follow_the_content_in_both_directions() -> None:
    memory = pair()
    stream_id = memory.client.send_request(POST)
    memory.client.send_data(stream_id, b"body")
    memory.client.send_headers(stream_id, TRAILERS, end_stream=True)
    memory.pump()
    memory.server.send_headers(stream_id, RESPONSE)
    memory.server.send_data(stream_id, b"answer")
    memory.server.send_headers(stream_id, TRAILERS, end_stream=True)
    memory.pump()
    trailers = HeadersReceived(stream_id=0, headers=TRAILERS, trailers=True)
    assert trailers in memory.received["server"] and trailers in memory.received["client"]
    server_moves = [
        e for e in memory.log.events if e.name == "stream_state_updated" and e.endpoint == "server"
    ]
    assert states(server_moves)[-2:] == [
        ("receiving_content", "trailers_received", "headers"),
        ("trailers_received", "complete", "end_of_stream"),
    ]


def test_a_frame_that_ends_the_stream_says_so_and_no_separate_end_event_follows() -> None:
    lone = Lone.server()
    events = lone.feed(0, lone.headers(0, REQUEST), end_stream=True)
    assert events == [HeadersReceived(stream_id=0, headers=REQUEST, stream_ended=True)]
    lone = Lone.server()
    lone.feed(0, lone.headers(0, POST) + frame_bytes(DataFrame(b"x")))
    assert lone.feed(0, b"", end_stream=True) == [StreamEnded(stream_id=0)]


def test_frames_fed_one_byte_at_a_time_give_the_same_events_and_trace() -> None:
    whole, bytewise = Lone.server(), Lone.server()
    data = whole.headers(0, POST) + frame_bytes(DataFrame(b"abc")) + whole.headers(0, TRAILERS)
    expected = whole.feed(0, data, end_stream=True)
    assert bytewise.feed_bytewise(0, data, end_stream=True) == expected
    parsed = [e.raw for e in whole.events("frame_parsed") if e.stream_id == 0]
    assert [e.raw for e in bytewise.events("frame_parsed") if e.stream_id == 0] == parsed
    assert b"".join(parsed) == data


def test_each_frame_parsed_event_carries_exactly_the_bytes_of_its_frame() -> None:
    lone = Lone.server()
    headers = lone.headers(0, POST)
    data = frame_bytes(DataFrame(b"payload"))
    lone.feed(0, headers + data, end_stream=True)
    headers_event = assert_frame_traced(lone, headers, "headers")
    assert [f.name for f in headers_event.fields] == ["Type", "Length", "Encoded Field Section"]
    data_event = assert_frame_traced(lone, data, "data")
    assert data_event.data["frame"]["raw"] == {"length": len(data), "payload_length": 7}
    assert_no_error(lone)


@pytest.mark.parametrize("where", ["before", "between", "after"])
def test_reserved_and_unknown_frames_may_be_interleaved_on_a_request_stream(where: str) -> None:
    """RFC 9114 §4.1, §7.2.8: they may come before, after or between the message's frames."""
    lone = Lone.server()
    grease = frame_bytes(UnknownFrame(reserved_value(2), b"pad"), UnknownFrame(0x2C, b""))
    headers, data = lone.headers(0, POST), frame_bytes(DataFrame(b"body"))
    stream = {
        "before": grease + headers + data,
        "between": headers + grease + data,
        "after": headers + data + grease,
    }[where]
    events = lone.feed(0, stream, end_stream=True)
    assert [type(e) for e in events][:2] == [HeadersReceived, DataReceived]
    assert_no_error(lone)


# -- §4.1: invalid frame sequences are connection errors ---------------------------------


def test_data_frame_before_headers_is_h3_frame_unexpected() -> None:
    lone = Lone.server()
    lone.feed(0, frame_bytes(DataFrame(b"early")))
    event = assert_connection_error(lone, ErrorCode.H3_FRAME_UNEXPECTED, "9114#4.1")
    assert event.data["rule"] == "DATA frame before the HEADERS frame on stream 0"


def test_data_frame_after_trailers_is_h3_frame_unexpected() -> None:
    lone = Lone.server()
    lone.feed(0, lone.headers(0, POST) + lone.headers(0, TRAILERS) + frame_bytes(DataFrame(b"x")))
    event = assert_connection_error(lone, ErrorCode.H3_FRAME_UNEXPECTED, "9114#4.1")
    assert "after the trailer section" in event.data["rule"]


@pytest.mark.parametrize(
    "third", [TRAILERS, RESPONSE, [(b"Not-Lowercase", b"x")]], ids=["trailers", "status", "bad"]
)
def test_headers_frame_after_trailers_is_h3_frame_unexpected(third: list[Header]) -> None:
    """Whatever the third HEADERS frame holds, the sequence itself is invalid (RFC 9114 §4.1)."""
    lone = Lone.client()
    stream_id = lone.request()
    lone.feed(stream_id, lone.headers(0, RESPONSE) + lone.headers(0, TRAILERS))
    lone.feed(stream_id, lone.headers(0, third))
    event = assert_connection_error(lone, ErrorCode.H3_FRAME_UNEXPECTED, "9114#4.1")
    assert event.data["rule"] == "HEADERS frame after the trailer section on stream 0"


def test_data_after_an_interim_response_is_h3_frame_unexpected() -> None:
    """Interim responses have no content (RFC 9114 §4.1): DATA must wait for the final one."""
    lone = Lone.client()
    lone.request()
    lone.feed(0, lone.headers(0, INTERIM) + frame_bytes(DataFrame(b"x")))
    event = assert_connection_error(lone, ErrorCode.H3_FRAME_UNEXPECTED, "9114#4.1")
    assert event.data["rule"] == (
        "DATA frame after an interim (1xx) response, before the final response on stream 0"
    )


# -- §4.1: the end of the stream ----------------------------------------------------------


@pytest.mark.parametrize(
    "before_end",
    [b"", frame_bytes(UnknownFrame(reserved_value(1), b"only padding"))],
    ids=["nothing", "reserved frame only"],
)
def test_request_stream_ending_before_the_header_section_is_h3_request_incomplete(
    before_end: bytes,
) -> None:
    """RFC 9114 §4.1: the server aborts such a stream with H3_REQUEST_INCOMPLETE."""
    lone = Lone.server()
    lone.feed(0, before_end, end_stream=True)
    assert_stream_error(lone, 0, ErrorCode.H3_REQUEST_INCOMPLETE, "9114#4.1", stop=False)


@pytest.mark.parametrize("before_end", [[], [INTERIM]], ids=["nothing", "interim only"])
def test_response_stream_ending_before_the_final_response_is_malformed_h3_message_error(
    before_end: list[list[Header]],
) -> None:
    """H3_REQUEST_INCOMPLETE names an incomplete request only (RFC 9114 §8.1)."""
    lone = Lone.client()
    stream_id = lone.request()
    lone.feed(stream_id, b"".join(lone.headers(0, h) for h in before_end), end_stream=True)
    assert_stream_error(
        lone, stream_id, ErrorCode.H3_MESSAGE_ERROR, "9114#4.1.2", reset=False, stop=False
    )


# -- §4.1.2: malformed messages are stream errors ------------------------------------------

MALFORMED_REQUESTS: dict[str, list[Header]] = {
    "uppercase field name": [*REQUEST, (b"User-Agent", b"x")],
    "connection-specific field": [*REQUEST, (b"connection", b"keep-alive")],
    "transfer-encoding": [*REQUEST, (b"transfer-encoding", b"chunked")],
    "te other than trailers": [*REQUEST, (b"te", b"gzip")],
    "pseudo-header after a regular field": [*REQUEST[:3], (b"accept", b"*/*"), REQUEST[3]],
    "missing :method": REQUEST[1:],
    "missing :path": REQUEST[:3],
    "undefined pseudo-header": [*REQUEST, (b":colour", b"blue")],
    "response pseudo-header in a request": [*REQUEST, (b":status", b"200")],
    "empty :path": [*REQUEST[:3], (b":path", b"")],
    ":authority with userinfo": [*REQUEST[:2], (b":authority", b"user@example.com"), REQUEST[3]],
    "content-length not a number": [*POST, (b"content-length", b"five")],
    "line feed in a value": [*REQUEST, (b"x-header", b"a\nb")],
    "CONNECT with :path": [*CONNECT, (b":path", b"/")],
}


@pytest.mark.parametrize("fields", MALFORMED_REQUESTS.values(), ids=MALFORMED_REQUESTS.keys())
def test_malformed_request_is_h3_message_error_and_the_next_request_is_served(
    fields: list[Header],
) -> None:
    """RFC 9114 §4.1.2: a stream error on the one stream; other requests go on."""
    lone = Lone.server()
    events = lone.feed(0, lone.headers(0, fields), end_stream=True)
    assert not any(isinstance(e, HeadersReceived) for e in events)
    assert_stream_error(lone, 0, ErrorCode.H3_MESSAGE_ERROR, stop=False)
    assert lone.feed(0, frame_bytes(DataFrame(b"late")), end_stream=True) == []
    served = lone.feed(4, lone.headers(4, REQUEST), end_stream=True)
    assert served == [HeadersReceived(stream_id=4, headers=REQUEST, stream_ended=True)]
    lone.conn.send_headers(4, RESPONSE, end_stream=True)
    assert SendStreamData(4, b"", end_stream=True) in lone.conn.actions_to_send()


def test_a_second_request_on_one_stream_is_malformed_h3_message_error() -> None:
    """RFC 9114 §4.1: one request per stream; a second one is malformed."""
    lone = Lone.server()
    lone.feed(0, lone.headers(0, POST) + lone.headers(0, REQUEST))
    assert_stream_error(lone, 0, ErrorCode.H3_MESSAGE_ERROR)


def test_an_additional_response_after_the_final_response_is_malformed_h3_message_error() -> None:
    lone = Lone.client()
    lone.request()
    lone.feed(0, lone.headers(0, RESPONSE) + lone.headers(0, [(b":status", b"204")]))
    assert_stream_error(lone, 0, ErrorCode.H3_MESSAGE_ERROR, reset=False)


@pytest.mark.parametrize(
    "fields",
    [
        [(b":status", b"2000")],
        [(b"server", b"x")],
        [(b":status", b"101")],
        [*RESPONSE, (b"A", b"")],
    ],
    ids=["bad status", "no status", "101", "uppercase"],
)
def test_clients_do_not_accept_a_malformed_response(fields: list[Header]) -> None:
    """RFC 9114 §4.1.2: the response never reaches the application; the stream is reset."""
    lone = Lone.client()
    lone.request()
    events = lone.feed(0, lone.headers(0, fields), end_stream=True)
    assert events == [StreamReset(stream_id=0, error_code=ErrorCode.H3_MESSAGE_ERROR)]
    assert_stream_error(lone, 0, ErrorCode.H3_MESSAGE_ERROR, reset=False, stop=False)


@pytest.mark.parametrize(("declared", "sent"), [(5, b"abc"), (2, b"abc"), (0, b"a")])
def test_content_length_that_differs_from_the_data_is_malformed_h3_message_error(
    declared: int, sent: bytes
) -> None:
    lone = Lone.server()
    request = [*POST, (b"content-length", str(declared).encode())]
    events = lone.feed(0, lone.headers(0, request) + frame_bytes(DataFrame(sent)), end_stream=True)
    assert events[-1] == StreamReset(stream_id=0, error_code=ErrorCode.H3_MESSAGE_ERROR)
    assert_stream_error(lone, 0, ErrorCode.H3_MESSAGE_ERROR, "9114#4.1.2", stop=False)


def test_content_length_that_matches_the_data_frames_is_accepted() -> None:
    lone = Lone.server()
    request = [*POST, (b"content-length", b"6")]
    data = frame_bytes(DataFrame(b"abc"), DataFrame(b""), DataFrame(b"def"))
    lone.feed(0, lone.headers(0, request) + data, end_stream=True)
    assert_no_error(lone)


def test_a_response_to_head_may_declare_a_content_length_without_content() -> None:
    """RFC 9114 §4.1.2: a response that never has content can have a non-zero Content-Length."""
    lone = Lone.client()
    lone.request([(b":method", b"HEAD"), *REQUEST[1:]])
    lone.feed(0, lone.headers(0, [*RESPONSE, (b"content-length", b"1234")]), end_stream=True)
    assert_no_error(lone)


def test_data_in_a_204_response_is_malformed_h3_message_error() -> None:
    lone = Lone.client()
    lone.request()
    lone.feed(0, lone.headers(0, [(b":status", b"204")]) + frame_bytes(DataFrame(b"x")))
    assert_stream_error(lone, 0, ErrorCode.H3_MESSAGE_ERROR, reset=False)


def test_a_field_section_above_this_endpoints_limit_is_refused_with_h3_excessive_load() -> None:
    """RFC 9114 §4.2.2 lets an endpoint limit header size; this one resets the stream."""
    lone = Lone.server(settings=Settings(max_field_section_size=200))
    lone.feed(0, lone.headers(0, [*REQUEST, (b"x-big", b"v" * 200)]), end_stream=True)
    assert_stream_error(lone, 0, ErrorCode.H3_EXCESSIVE_LOAD, "9114#4.2.2", stop=False)


# -- §4.1.1: cancelling and rejecting requests ---------------------------------------------


def test_a_client_cancels_a_request_by_resetting_and_stopping_its_stream() -> None:
    memory = pair()
    stream_id = memory.client.send_request(POST)
    memory.pump()
    memory.client.reset_stream(stream_id)
    assert memory.client.actions_to_send() == [
        StopSending(stream_id, ErrorCode.H3_REQUEST_CANCELLED),
        ResetStream(stream_id, ErrorCode.H3_REQUEST_CANCELLED),
    ]


def test_a_cancelled_request_is_traced_on_both_sides_and_a_late_response_is_discarded() -> None:
    memory = pair()
    stream_id = memory.client.send_request(POST)
    memory.pump()
    memory.server.send_headers(stream_id, RESPONSE)  # already in flight when the client cancels
    memory.client.reset_stream(stream_id)
    memory.pump()
    errors = [
        (e.endpoint, e.data["code_name"], e.data["direction"])
        for e in memory.log.events
        if e.name in ("stream_error", "connection_error")
    ]
    assert errors == [
        ("client", "H3_REQUEST_CANCELLED", "sent"),
        ("server", "H3_REQUEST_CANCELLED", "received"),
    ]
    assert not memory.client.closed and not memory.server.closed
    assert not any(isinstance(e, HeadersReceived) for e in memory.received["client"])
    assert memory.received["server"][-1] == StreamReset(
        stream_id=0, error_code=ErrorCode.H3_REQUEST_CANCELLED
    )


def test_cancelling_a_request_already_sent_in_full_only_stops_the_response() -> None:
    """RFC 9114 §4.1.1: only the directions still open are terminated."""
    memory = pair()
    stream_id = memory.client.send_request(REQUEST, end_stream=True)
    memory.pump()
    memory.client.reset_stream(stream_id)
    assert memory.client.actions_to_send() == [
        StopSending(stream_id, ErrorCode.H3_REQUEST_CANCELLED)
    ]


def test_a_client_does_not_use_h3_request_rejected() -> None:
    """RFC 9114 §4.1.1: only the server says a request was rejected."""
    memory = pair()
    stream_id = memory.client.send_request(REQUEST, end_stream=True)
    with pytest.raises(H3UsageError, match="H3_REQUEST_REJECTED"):
        memory.client.reset_stream(stream_id, ErrorCode.H3_REQUEST_REJECTED)


def test_a_server_may_reject_a_request_it_received_but_has_not_answered() -> None:
    """RFC 9114 §4.1.1: receiving a request is not processing it; a server that declines
    it before acting on it rejects it, so the client may retry (as GOAWAY would, §5.2)."""
    lone = Lone.server()
    lone.feed(0, lone.headers(0, REQUEST), end_stream=True)
    lone.conn.reset_stream(0, ErrorCode.H3_REQUEST_REJECTED)
    assert ResetStream(0, ErrorCode.H3_REQUEST_REJECTED) in lone.conn.actions_to_send()


def test_a_server_does_not_use_h3_request_rejected_once_its_response_began() -> None:
    """RFC 9114 §4.1.1: a request being answered was processed; it is cancelled instead."""
    lone = Lone.server()
    lone.feed(0, lone.headers(0, REQUEST), end_stream=True)
    lone.conn.send_headers(0, [(b":status", b"200")])
    with pytest.raises(H3UsageError, match="response on stream 0 has begun"):
        lone.conn.reset_stream(0, ErrorCode.H3_REQUEST_REJECTED)
    lone.conn.reset_stream(0, ErrorCode.H3_REQUEST_CANCELLED)
    assert ResetStream(0, ErrorCode.H3_REQUEST_CANCELLED) in lone.conn.actions_to_send()


def test_a_request_rejected_by_the_server_is_reported_to_the_client_as_safe_to_retry() -> None:
    lone = Lone.client()
    lone.request()
    events = lone.reset(0, ErrorCode.H3_REQUEST_REJECTED)
    assert events == [
        StreamReset(stream_id=0, error_code=ErrorCode.H3_REQUEST_REJECTED, retry_safe=True)
    ]
    received = lone.events("stream_error")[0]
    assert (received.data["direction"], received.data["code_name"]) == (
        "received",
        "H3_REQUEST_REJECTED",
    )


def test_a_client_keeps_a_complete_response_after_the_server_stops_its_request() -> None:
    """RFC 9114 §4.1: a server may stop reading and answer; the client keeps the response."""
    lone = Lone.client()
    stream_id = lone.request(POST, end_stream=False)
    lone.stop_sending(stream_id, ErrorCode.H3_NO_ERROR)
    assert [a for a in lone.take_sent() if isinstance(a, ResetStream)] == [
        ResetStream(stream_id, ErrorCode.H3_NO_ERROR)  # RFC 9000 §3.5: the code copied
    ]
    with pytest.raises(H3UsageError, match=r"STOP_SENDING \(H3_NO_ERROR\).*may still arrive"):
        lone.conn.send_data(stream_id, b"more")
    events = lone.feed(
        stream_id, lone.headers(0, RESPONSE) + frame_bytes(DataFrame(b"done")), end_stream=True
    )
    assert events == [
        HeadersReceived(stream_id=0, headers=RESPONSE),
        DataReceived(stream_id=0, data=b"done", stream_ended=True),
    ]
    assert lone.errors() == []


def test_a_request_reset_before_its_header_section_is_answered_with_h3_request_incomplete() -> None:
    """RFC 9114 §4.1: the server aborts its response stream with H3_REQUEST_INCOMPLETE."""
    lone = Lone.server()
    lone.feed(0, lone.headers(0, REQUEST)[:3])
    events = lone.reset(0, ErrorCode.H3_REQUEST_CANCELLED)
    assert events == [StreamReset(stream_id=0, error_code=ErrorCode.H3_REQUEST_CANCELLED)]
    assert lone.take_sent() == [ResetStream(0, ErrorCode.H3_REQUEST_INCOMPLETE)]
    received = lone.events("stream_error")[0]
    assert (received.data["direction"], received.data["code_name"]) == (
        "received",
        "H3_REQUEST_CANCELLED",
    )


# -- what this endpoint may send: the same rules, checked before a byte leaves --------------


def test_nothing_but_the_end_of_the_stream_may_follow_sent_trailers() -> None:
    """RFC 9114 §4.1: a HEADERS or DATA frame after the trailer section would be
    H3_FRAME_UNEXPECTED for the peer, a connection error: the send is refused instead."""
    memory = pair()
    stream_id = memory.client.send_request(POST)
    memory.client.send_data(stream_id, b"hello")
    memory.client.send_headers(stream_id, TRAILERS)
    with pytest.raises(H3UsageError, match=r"trailer section was sent.*RFC 9114 §4\.1"):
        memory.client.send_headers(stream_id, TRAILERS)
    with pytest.raises(H3UsageError, match="trailer section was sent"):
        memory.client.send_data(stream_id, b"more")
    memory.client.send_data(stream_id, b"", end_stream=True)  # the end alone is allowed
    memory.pump()
    assert memory.received["server"][-1] == StreamEnded(stream_id=stream_id)
    assert not memory.server.closed and not memory.client.closed


@pytest.mark.parametrize(
    ("announced", "sent", "how"),
    [
        (b"5", [b"hello", b"!"], "more"),  # DATA past the content-length
        (b"5", [b"hel"], "short"),  # the end of the stream short of it
        (b"5", [], "headers only"),  # HEADERS with end_stream and no DATA
    ],
)
def test_a_sender_is_held_to_the_content_length_it_announced(
    announced: bytes, sent: list[bytes], how: str
) -> None:
    """RFC 9114 §4.1.2: DATA that does not add up to the content-length makes the message
    malformed; the peer would reset the stream with H3_MESSAGE_ERROR. Refused before sending."""
    memory = pair()
    headers = [*POST, (b"content-length", announced)]
    if how == "headers only":
        with pytest.raises(H3UsageError, match=r"content-length is 5 \(RFC 9114 §4\.1\.2\)"):
            memory.client.send_request(headers, end_stream=True)
        return
    stream_id = memory.client.send_request(headers)
    with pytest.raises(H3UsageError, match=r"malformed.*content-length"):
        for chunk in sent[:-1]:
            memory.client.send_data(stream_id, chunk)
        memory.client.send_data(stream_id, sent[-1], end_stream=True)
    memory.pump()
    assert not any(e.name == "stream_error" for e in memory.log.events)


def test_a_response_to_head_announces_a_length_it_does_not_send() -> None:
    """RFC 9110 §9.3.2 (RFC 9114 §4.1.2): the sender's check knows the exceptions too."""
    memory = pair()
    stream_id = memory.client.send_request([(b":method", b"HEAD"), *REQUEST[1:]], end_stream=True)
    memory.pump()
    memory.server.send_headers(stream_id, [*RESPONSE, (b"content-length", b"40")], end_stream=True)
    memory.pump()
    assert memory.received["client"][-1] == StreamEnded(stream_id=stream_id)
    assert not any(e.name == "stream_error" for e in memory.log.events)


@pytest.mark.parametrize(
    "headers",
    [[(":method", "GET")], [(b":method", "GET")], [(b":method",)], [b":method: GET"]],
)
def test_field_lines_that_are_not_pairs_of_bytes_are_refused_in_words(headers: object) -> None:
    """RFC 9114 §4.2: names and values are octets; an application that forgot to encode
    is told so in words, before any rule is checked."""
    memory = pair()
    with pytest.raises(TypeError, match=r"\(name, value\) pair of bytes"):
        memory.client.send_request(headers)  # type: ignore[arg-type]
    stream_id = memory.client.send_request(REQUEST, end_stream=True)
    memory.pump()
    with pytest.raises(TypeError, match="pair of bytes"):
        memory.server.send_headers(stream_id, [(":status", "200")])  # type: ignore[list-item]


def ended(events: list[object]) -> list[object]:
    """The events that told the application a message was complete."""
    return [e for e in events if getattr(e, "stream_ended", False) or isinstance(e, StreamEnded)]


@pytest.mark.parametrize("bytewise", [False, True])
def test_a_message_malformed_at_its_end_is_never_reported_complete(bytewise: bool) -> None:
    """RFC 9114 §4.1.2: content-length 5 and 2 bytes of DATA, then the end of the stream.
    The application hears of the headers and the data, then the reset; never of an end."""
    lone = Lone.server()
    message = lone.headers(0, [*POST, (b"content-length", b"5")]) + frame_bytes(DataFrame(b"hi"))
    feed = lone.feed_bytewise if bytewise else lone.feed
    events = feed(0, message, end_stream=True)
    assert ended(events) == []
    assert isinstance(events[-1], StreamReset)
    assert events[-1].error_code == ErrorCode.H3_MESSAGE_ERROR
    # The whole stream was read, so no STOP_SENDING; the server's half is reset.
    assert_stream_error(lone, 0, ErrorCode.H3_MESSAGE_ERROR, "9114#4.1.2", stop=False)


def test_a_reset_says_whose_doing_it_was_and_why() -> None:
    """The application learns from the event itself (no trace needed) whether the peer
    reset the stream or this endpoint did after a broken rule, and which rule."""
    lone = Lone.server()
    events = lone.feed(0, lone.headers(0, [*POST, (b"content-length", b"5")]), end_stream=True)
    (reset,) = [e for e in events if isinstance(e, StreamReset)]
    assert not reset.by_peer
    assert (reset.rfc, "content-length is 5" in reset.rule) == ("9114#4.1.2", True)
    lone.feed(4, lone.headers(4, POST))
    (by_peer,) = lone.reset(4, ErrorCode.H3_REQUEST_CANCELLED)
    assert isinstance(by_peer, StreamReset)
    assert by_peer.by_peer and by_peer.rfc == "9000#19.4"


def test_an_interim_response_alone_is_not_a_complete_response() -> None:
    """RFC 9114 §4.1: a 1xx is not the final response; the stream ending after it leaves
    the response malformed, and the client is not told a response ended."""
    lone = Lone.client()
    stream_id = lone.request()
    events = lone.feed(stream_id, lone.headers(stream_id, INTERIM), end_stream=True)
    # A malformed response is not forwarded, its interim part neither (§4.1.2).
    assert ended(events) == []
    assert [type(e) for e in events] == [StreamReset]
    assert events[0].error_code == ErrorCode.H3_MESSAGE_ERROR  # type: ignore[attr-defined]
    assert not lone.conn.closed


def test_a_reset_from_the_peer_ends_both_halves_of_the_exchange() -> None:
    """RFC 9114 §4.1.1: this side's half is reset too, and nothing more is read or sent."""
    lone = Lone.server()
    lone.feed(0, lone.headers(0, POST))
    lone.reset(0, ErrorCode.H3_REQUEST_CANCELLED)
    assert lone.take_sent() == [ResetStream(0, ErrorCode.H3_REQUEST_CANCELLED)]
    with pytest.raises(H3UsageError):
        lone.conn.send_headers(0, RESPONSE)
    assert lone.feed(0, frame_bytes(DataFrame(b"late")), end_stream=True) == []
    assert lone.take_sent() == []


def test_a_client_whose_request_the_server_rejected_cancels_rather_than_rejects() -> None:
    """RFC 9114 §4.1.1: a client does not send H3_REQUEST_REJECTED back."""
    lone = Lone.client()
    stream_id = lone.request(POST, end_stream=False)
    lone.take_sent()
    lone.reset(stream_id, ErrorCode.H3_REQUEST_REJECTED)
    assert lone.take_sent() == [ResetStream(stream_id, ErrorCode.H3_REQUEST_CANCELLED)]


# -- §4.4: CONNECT ---------------------------------------------------------------------------


def test_a_connect_tunnel_carries_data_both_ways() -> None:
    memory = pair()
    stream_id = memory.client.send_request(CONNECT)
    memory.pump()
    memory.server.send_headers(stream_id, RESPONSE)
    memory.server.send_data(stream_id, b"from the origin")
    memory.client.send_data(stream_id, b"to the origin")
    memory.pump()
    assert DataReceived(stream_id=0, data=b"to the origin") in memory.received["server"]
    assert DataReceived(stream_id=0, data=b"from the origin") in memory.received["client"]
    assert_trace_labelled(memory.log)


def test_a_known_frame_other_than_data_on_a_connect_stream_is_h3_frame_unexpected() -> None:
    """RFC 9114 §4.4: once CONNECT has completed, only DATA (and unknown types) may follow."""
    lone = Lone.client()
    stream_id = lone.request(CONNECT, end_stream=False)
    grease = frame_bytes(UnknownFrame(reserved_value(4), b""))
    lone.feed(stream_id, lone.headers(0, RESPONSE) + frame_bytes(DataFrame(b"tcp")) + grease)
    assert_no_error(lone)
    lone.feed(stream_id, lone.headers(0, TRAILERS))
    assert_connection_error(lone, ErrorCode.H3_FRAME_UNEXPECTED, "9114#4.4")


def test_a_server_refuses_headers_after_a_connect_request() -> None:
    lone = Lone.server()
    lone.feed(0, lone.headers(0, CONNECT) + frame_bytes(DataFrame(b"tcp")))
    lone.feed(0, lone.headers(0, TRAILERS))
    assert_connection_error(lone, ErrorCode.H3_FRAME_UNEXPECTED, "9114#4.4")


def test_a_failed_connect_is_an_ordinary_response() -> None:
    lone = Lone.client()
    lone.request(CONNECT, end_stream=False)
    lone.feed(0, lone.headers(0, [(b":status", b"502")]) + frame_bytes(DataFrame(b"sorry")))
    lone.feed(0, lone.headers(0, TRAILERS), end_stream=True)
    assert_no_error(lone)


def test_an_endpoint_sends_nothing_but_data_on_a_connect_stream() -> None:
    memory = pair()
    stream_id = memory.client.send_request(CONNECT)
    with pytest.raises(H3UsageError, match="CONNECT"):
        memory.client.send_headers(stream_id, TRAILERS)


# -- §4.2, §4.3: what an endpoint refuses to send -------------------------------------------


@pytest.mark.parametrize(
    "fields",
    [
        [*REQUEST, (b"User-Agent", b"x")],
        [*REQUEST, (b"transfer-encoding", b"chunked")],
        [*REQUEST, (b"connection", b"close")],
        REQUEST[1:],
    ],
    ids=["uppercase name", "transfer-encoding", "connection-specific", "no :method"],
)
def test_an_endpoint_does_not_send_a_malformed_request(fields: list[Header]) -> None:
    """RFC 9114 §4.2: names are lowercased before encoding; no connection-specific fields."""
    memory = pair()
    with pytest.raises(MalformedMessage):
        memory.client.send_request(fields)
    assert memory.client.actions_to_send() == []


# -- §4.1.1: a client that stops reading the response has cancelled the request ------------


def test_a_server_told_stop_sending_tells_its_application_the_request_was_cancelled() -> None:
    """RFC 9114 §4.1.1: a client cancels by aborting the stream; when its request was sent
    in full only STOP_SENDING can say so, and the server's application must hear of it."""
    memory = pair()
    stream_id = memory.client.send_request(REQUEST, end_stream=True)
    memory.pump()
    memory.client.reset_stream(stream_id)
    memory.pump()
    assert memory.received["server"][-1] == StreamReset(
        stream_id=stream_id, error_code=ErrorCode.H3_REQUEST_CANCELLED
    )
    assert memory.received["server"][-1].rfc == "9114#4.1.1"
    with pytest.raises(H3UsageError, match=r"stream 0 is finished.*reset.*StreamReset"):
        memory.server.send_headers(stream_id, RESPONSE, end_stream=True)
    # The connection goes on: the next request is answered.
    next_id = memory.client.send_request(REQUEST, end_stream=True)
    memory.pump()
    memory.server.send_headers(next_id, RESPONSE, end_stream=True)
    memory.pump()
    assert memory.received["client"][-2:] == [
        HeadersReceived(stream_id=next_id, headers=RESPONSE),
        StreamEnded(stream_id=next_id),
    ]


def test_stop_sending_on_a_received_request_resets_the_response_with_its_code() -> None:
    """RFC 9000 §3.5: answered with RESET_STREAM carrying the same code; the cancellation is
    traced as the peer's (RFC 9114 §4.1.1)."""
    lone = Lone.server()
    lone.feed(0, lone.headers(0, REQUEST), end_stream=True)
    lone.take_sent()
    events = lone.stop_sending(0, ErrorCode.H3_REQUEST_CANCELLED)
    assert events == [StreamReset(stream_id=0, error_code=ErrorCode.H3_REQUEST_CANCELLED)]
    assert lone.take_sent() == [ResetStream(0, ErrorCode.H3_REQUEST_CANCELLED)]
    received = lone.events("stream_error")[-1]
    assert (received.data["direction"], received.data["rfc"]) == ("received", "9114#4.1.1")


# -- §4.1: a response is interim responses, then one final response ------------------------


def test_an_interim_response_cannot_end_the_stream() -> None:
    lone = Lone.server()
    lone.feed(0, lone.headers(0, REQUEST), end_stream=True)
    with pytest.raises(H3UsageError, match=r"no final header section.*RFC 9114 §4.1"):
        lone.conn.send_headers(0, INTERIM, end_stream=True)
    assert not any(isinstance(a, SendStreamData) and a.end_stream for a in lone.take_sent())
    lone.conn.send_headers(0, INTERIM)
    with pytest.raises(H3UsageError, match="no final header section"):
        lone.conn.end_stream(0)
    lone.conn.send_headers(0, RESPONSE, end_stream=True)  # the final response may end it
    assert lone.errors() == []
