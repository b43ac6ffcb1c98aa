"""RFC 9114 §4.6, §6.2.2, §7.2.3, §7.2.5, §7.2.7: server push.

The client allows pushes with MAX_PUSH_ID; the server promises one with PUSH_PROMISE on a
request stream and fulfils it on a push stream; either side may cancel with CANCEL_PUSH.
Every limit on push IDs is checked: above MAX_PUSH_ID, reused by a second push stream, a
decreasing MAX_PUSH_ID (H3_ID_ERROR), a promise repeated with other fields
(H3_GENERAL_PROTOCOL_ERROR), and frames sent by the wrong side (H3_FRAME_UNEXPECTED).
"""

from __future__ import annotations

import pytest
from h3_connection_helpers import (
    CLIENT_CONTROL,
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
    stream_header,
)

from h3learn.h3.actions import SendStreamData, StopSending
from h3learn.h3.connection import H3UsageError
from h3learn.h3.errors import ErrorCode
from h3learn.h3.frames import CancelPushFrame, DataFrame, MaxPushIdFrame, PushPromiseFrame
from h3learn.h3.http_events import (
    DataReceived,
    HeadersReceived,
    PushCancelled,
    PushPromiseReceived,
    StreamEnded,
    StreamReset,
)
from h3learn.h3.messages import UnpushableRequest
from h3learn.h3.settings import Settings
from h3learn.h3.stream_types import StreamType
from h3learn.transport.memory import MemoryPair

PUSHED: list[Header] = [
    (b":method", b"GET"),
    (b":scheme", b"https"),
    (b":authority", b"example.com"),
    (b":path", b"/style.css"),
]
#: The server's first push stream, after its control and QPACK streams (3, 7, 11).
PUSH_STREAM = 15


def push_stream_bytes(lone: Lone, push_id: int, headers: list[Header] = RESPONSE) -> bytes:
    return stream_header(StreamType.PUSH, push_id=push_id) + lone.headers(PUSH_STREAM, headers)


def client_allowing(max_push_id: int | None) -> Lone:
    """A lone client with a request on stream 0 and, unless None, MAX_PUSH_ID sent."""
    lone = Lone.client()
    if max_push_id is not None:
        lone.conn.send_max_push_id(max_push_id)
    lone.request()
    return lone


# -- a whole push over MemoryPair ---------------------------------------------------------


def requested(client_settings: Settings | None = None) -> tuple[MemoryPair, int]:
    """A client that allows pushes up to 4 and a request on stream 0, which the server has."""
    memory = pair(client_settings=client_settings)
    memory.client.send_max_push_id(4)
    stream_id = memory.client.send_request(REQUEST, end_stream=True)
    memory.pump()
    return memory, stream_id


def promised() -> tuple[MemoryPair, int]:
    """A client that allows pushes up to 4, a request on stream 0, and push 0 promised."""
    memory, stream_id = requested()
    return memory, memory.server.send_push_promise(stream_id, PUSHED)


def test_a_promised_response_is_pushed_on_a_push_stream() -> None:
    memory = pair()
    memory.client.send_max_push_id(4)
    stream_id = memory.client.send_request(REQUEST, end_stream=True)
    memory.pump()
    push_id = memory.server.send_push_promise(stream_id, PUSHED)
    push_stream = memory.server.create_push_stream(push_id)
    memory.server.send_headers(push_stream, RESPONSE)
    memory.server.send_data(push_stream, b"body { }", end_stream=True)
    memory.server.send_headers(stream_id, RESPONSE, end_stream=True)
    memory.pump()
    assert (push_id, push_stream) == (0, PUSH_STREAM)
    assert memory.received["client"] == [
        PushPromiseReceived(stream_id=0, push_id=0, headers=PUSHED),
        HeadersReceived(stream_id=PUSH_STREAM, headers=RESPONSE, push_id=0),
        DataReceived(stream_id=PUSH_STREAM, data=b"body { }", push_id=0),
        StreamEnded(stream_id=PUSH_STREAM, push_id=0),
        HeadersReceived(stream_id=0, headers=RESPONSE),
        StreamEnded(stream_id=0),
    ]
    push_type = [
        e
        for e in memory.log.events
        if e.name == "stream_type_set" and e.stream_id == PUSH_STREAM and e.endpoint == "client"
    ]
    assert push_type[0].data["associated_push_id"] == 0
    assert_trace_labelled(memory.log)


def test_a_server_cannot_push_before_the_client_sends_max_push_id() -> None:
    memory = pair()
    stream_id = memory.client.send_request(REQUEST, end_stream=True)
    memory.pump()
    with pytest.raises(H3UsageError, match="MAX_PUSH_ID"):
        memory.server.send_push_promise(stream_id, PUSHED)


def test_push_ids_count_from_zero_up_to_max_push_id_and_no_further() -> None:
    memory = pair()
    memory.client.send_max_push_id(1)
    stream_id = memory.client.send_request(REQUEST, end_stream=True)
    memory.pump()
    assert [memory.server.send_push_promise(stream_id, PUSHED) for _ in range(2)] == [0, 1]
    with pytest.raises(H3UsageError, match="push ID 2 is not allowed"):
        memory.server.send_push_promise(stream_id, PUSHED)
    memory.client.send_max_push_id(2)
    memory.pump()
    assert memory.server.send_push_promise(stream_id, PUSHED) == 2


def test_a_server_does_not_send_a_push_promise_larger_than_the_clients_field_section_limit() -> (
    None
):
    """RFC 9114 §4.2.2, §7.2.5: a PUSH_PROMISE carries a field section, held to the peer's
    SETTINGS_MAX_FIELD_SECTION_SIZE like a HEADERS frame's; no push ID is spent on it."""
    memory, stream_id = requested(Settings(max_field_section_size=200))
    with pytest.raises(H3UsageError, match=r"PUSH_PROMISE field section of \d+ bytes exceeds"):
        memory.server.send_push_promise(stream_id, [*PUSHED, (b"x-long", b"v" * 200)])
    assert memory.server.actions_to_send() == []
    assert memory.server.send_push_promise(stream_id, PUSHED) == 0


def test_only_a_client_sends_max_push_id_and_it_never_decreases() -> None:
    memory = pair()
    with pytest.raises(H3UsageError):
        memory.server.send_max_push_id(3)
    memory.client.send_max_push_id(5)
    with pytest.raises(H3UsageError, match="cannot decrease"):
        memory.client.send_max_push_id(4)


def test_a_client_cancels_a_push_with_cancel_push() -> None:
    memory, push_id = promised()
    memory.pump()
    memory.client.cancel_push(push_id)
    assert memory.pump() == [PushCancelled(push_id=0)]


def test_a_server_cancels_a_promise_it_will_not_fulfil() -> None:
    memory, push_id = promised()
    memory.server.cancel_push(push_id)
    events = memory.pump()
    assert events == [
        PushPromiseReceived(stream_id=0, push_id=0, headers=PUSHED),
        PushCancelled(push_id=0),
    ]


def test_a_server_opens_one_push_stream_per_push_id() -> None:
    """RFC 9114 §6.2.2: each push ID is used once in a push stream header."""
    memory, push_id = promised()
    memory.server.create_push_stream(push_id)
    with pytest.raises(H3UsageError, match="already has its push stream"):
        memory.server.create_push_stream(push_id)


def test_a_server_cuts_off_the_open_push_stream_of_a_push_the_client_cancelled() -> None:
    """RFC 9114 §7.2.3: a client's CANCEL_PUSH for a push whose stream is open: the server
    "SHOULD abruptly terminate that stream" (RESET_STREAM H3_REQUEST_CANCELLED)."""
    memory, push_id = promised()
    push_stream = memory.server.create_push_stream(push_id)
    memory.server.send_headers(push_stream, RESPONSE)
    memory.pump()
    memory.client.cancel_push(push_id)
    events = memory.pump()
    assert PushCancelled(push_id=0) in events
    cancelled = ErrorCode.H3_REQUEST_CANCELLED
    assert [(e.stream_id, e.error_code) for e in events if isinstance(e, StreamReset)] == [
        (push_stream, cancelled)
    ]
    resets = [e for e in memory.log.events if e.name == "reset_stream" and e.endpoint == "server"]
    assert [(e.stream_id, e.data["code"], e.data["rfc"]) for e in resets] == [
        (push_stream, cancelled, "9114#7.2.3")
    ]
    with pytest.raises(H3UsageError, match="reset"):
        memory.server.send_data(push_stream, b"body { }", end_stream=True)


@pytest.mark.parametrize("canceller", ["client", "server"])
def test_a_cancelled_push_gets_no_push_stream(canceller: str) -> None:
    """RFC 9114 §7.2.3: once either side has cancelled a push, the server does not open its
    push stream."""
    memory, push_id = promised()
    memory.pump()
    memory.endpoint(canceller).cancel_push(push_id)
    memory.pump()
    with pytest.raises(H3UsageError, match="push ID 0 was cancelled"):
        memory.server.create_push_stream(push_id)


def test_a_server_sends_no_push_promise_on_a_push_stream() -> None:
    memory, stream_id = requested()
    push_stream = memory.server.create_push_stream(
        memory.server.send_push_promise(stream_id, PUSHED)
    )
    with pytest.raises(H3UsageError, match="push stream"):
        memory.server.send_push_promise(push_stream, PUSHED)


# -- §7.2.5: PUSH_PROMISE as the client reads it ------------------------------------------


@pytest.mark.parametrize("where", ["before", "between", "after"])
def test_push_promise_may_come_before_between_or_after_the_response_frames(where: str) -> None:
    """RFC 9114 §4.1: PUSH_PROMISE frames are not part of the response they travel with."""
    lone = client_allowing(0)
    promise = lone.push_promise(0, 0, PUSHED)
    headers, data, trailers = (
        lone.headers(0, RESPONSE),
        frame_bytes(DataFrame(b"x")),
        lone.headers(0, TRAILERS),
    )
    stream = {
        "before": promise + headers + data + trailers,
        "between": headers + data + promise + trailers,
        "after": headers + data + trailers + promise,
    }[where]
    events = lone.feed(0, stream, end_stream=True)
    assert PushPromiseReceived(stream_id=0, push_id=0, headers=PUSHED) in events
    assert_frame_traced(lone, promise, "push_promise")
    assert_no_error(lone)


def test_push_promise_with_a_push_id_above_max_push_id_is_h3_id_error() -> None:
    lone = client_allowing(2)
    lone.feed(0, lone.push_promise(0, 3, PUSHED))
    assert_connection_error(lone, ErrorCode.H3_ID_ERROR, "9114#7.2.5")


def test_push_promise_before_any_max_push_id_is_h3_id_error() -> None:
    lone = client_allowing(None)
    lone.feed(0, lone.push_promise(0, 0, PUSHED))
    event = assert_connection_error(lone, ErrorCode.H3_ID_ERROR, "9114#7.2.5")
    assert "not sent" in event.data["rule"]


def test_the_same_push_id_promised_again_with_the_same_fields_is_accepted() -> None:
    """RFC 9114 §7.2.5: a push ID may be promised on several request streams."""
    lone = client_allowing(5)
    lone.request()
    lone.feed(0, lone.push_promise(0, 1, PUSHED))
    events = lone.feed(4, lone.push_promise(4, 1, PUSHED))
    assert events == [PushPromiseReceived(stream_id=4, push_id=1, headers=PUSHED)]
    assert_no_error(lone)


@pytest.mark.parametrize(
    "second",
    [
        [*PUSHED[:3], (b":path", b"/other.css")],
        [*PUSHED, (b"accept", b"text/css")],
        [PUSHED[1], PUSHED[0], *PUSHED[2:]],
    ],
    ids=["other value", "extra field", "other order"],
)
def test_mismatched_duplicate_push_promise_is_h3_general_protocol_error(
    second: list[Header],
) -> None:
    """RFC 9114 §7.2.5: the same fields, in the same order, or a connection error."""
    lone = client_allowing(5)
    lone.request()
    lone.feed(0, lone.push_promise(0, 1, PUSHED))
    lone.feed(4, lone.push_promise(4, 1, second))
    assert_connection_error(lone, ErrorCode.H3_GENERAL_PROTOCOL_ERROR, "9114#7.2.5")


@pytest.mark.parametrize(
    "promised",
    [
        POST,
        [*REQUEST, (b"content-length", b"10")],
        [(b":method", b"GET"), (b":scheme", b"https"), (b":path", b"/"), (b"host", b"a.example")],
    ],
    ids=["not safe", "with content", "no :authority"],
)
def test_a_promise_the_client_cannot_use_is_cancelled_and_its_push_stream_not_read(
    promised: list[Header],
) -> None:
    """RFC 9114 §4.6: the client cancels it, and the response must not be used."""
    lone = client_allowing(5)
    events = lone.feed(0, lone.push_promise(0, 0, promised))
    assert events == []
    cancel = SendStreamData(CLIENT_CONTROL, frame_bytes(CancelPushFrame(0)))
    assert cancel in lone.take_sent()
    # The trace says why: the CANCEL_PUSH names the rule the promise broke.
    (created,) = [e for e in lone.events("frame_created") if e.data["frame"].get("push_id") == 0]
    assert created.data["reason"].startswith("the promise is refused: promised request")
    assert "9114#4.6" in created.rfc and created.data["reason"] in created.summary
    events = lone.feed(PUSH_STREAM, push_stream_bytes(lone, 0))
    assert events == [StreamReset(stream_id=PUSH_STREAM, error_code=ErrorCode.H3_REQUEST_CANCELLED)]
    assert_stream_error(lone, PUSH_STREAM, ErrorCode.H3_REQUEST_CANCELLED, "9114#7.2.3")


def test_an_unusable_promise_made_twice_is_refused_with_one_cancel_push() -> None:
    """RFC 9114 §4.6 lets a push ID be promised on several request streams; the client
    refuses the push once (§7.2.3), not once per promise."""
    lone = client_allowing(5)
    second = lone.request()
    lone.feed(0, lone.push_promise(0, 0, POST))
    lone.feed(second, lone.push_promise(second, 0, POST))
    cancel = SendStreamData(CLIENT_CONTROL, frame_bytes(CancelPushFrame(0)))
    assert lone.take_sent().count(cancel) == 1
    assert_no_error(lone)


def test_a_push_stream_that_came_before_its_unusable_promise_is_abandoned() -> None:
    """RFC 9114 §7.2.3: "A client SHOULD NOT send a CANCEL_PUSH frame when it has already
    received a corresponding push stream"; aborting the stream is the refusal."""
    lone = client_allowing(5)
    lone.feed(PUSH_STREAM, stream_header(StreamType.PUSH, push_id=0))
    lone.feed(0, lone.push_promise(0, 0, POST))
    events = lone.feed(PUSH_STREAM, lone.headers(PUSH_STREAM, RESPONSE))
    assert events == []
    assert_stream_error(lone, PUSH_STREAM, ErrorCode.H3_REQUEST_CANCELLED)
    cancel = SendStreamData(CLIENT_CONTROL, frame_bytes(CancelPushFrame(0)))
    assert cancel not in lone.take_sent()


def test_a_malformed_promised_request_is_h3_message_error_on_its_request_stream() -> None:
    lone = client_allowing(5)
    lone.feed(0, lone.push_promise(0, 0, [*PUSHED, (b"Bad-Case", b"x")]))
    assert_stream_error(lone, 0, ErrorCode.H3_MESSAGE_ERROR, reset=False)


def test_server_receiving_push_promise_is_h3_frame_unexpected() -> None:
    """RFC 9114 §7.2.5: a client never sends PUSH_PROMISE."""
    lone = Lone.server()
    lone.feed(0, lone.headers(0, REQUEST) + lone.push_promise(0, 0, PUSHED))
    assert_connection_error(lone, ErrorCode.H3_FRAME_UNEXPECTED, "9114#7.2.5")


def test_push_promise_on_the_control_stream_is_h3_frame_unexpected() -> None:
    lone = client_allowing(5)
    lone.control(PushPromiseFrame(0, lone.field_section(0, PUSHED)))
    assert_connection_error(lone, ErrorCode.H3_FRAME_UNEXPECTED, "9114#7.2.5")


def test_push_promise_on_a_push_stream_is_h3_frame_unexpected() -> None:
    """RFC 9114 §4.1: a pushed response that carries PUSH_PROMISE frames is a connection error."""
    lone = client_allowing(5)
    lone.feed(PUSH_STREAM, push_stream_bytes(lone, 0) + lone.push_promise(PUSH_STREAM, 1, PUSHED))
    assert_connection_error(lone, ErrorCode.H3_FRAME_UNEXPECTED)


# -- §6.2.2: push streams as the client reads them -----------------------------------------


def test_a_push_stream_may_arrive_before_its_promise() -> None:
    """RFC 9114 §4.6: reordering can bring the push stream first."""
    lone = client_allowing(5)
    events = lone.feed(PUSH_STREAM, push_stream_bytes(lone, 0), end_stream=True)
    assert events == [
        HeadersReceived(stream_id=PUSH_STREAM, headers=RESPONSE, push_id=0, stream_ended=True)
    ]
    assert lone.feed(0, lone.push_promise(0, 0, PUSHED)) == [
        PushPromiseReceived(stream_id=0, push_id=0, headers=PUSHED)
    ]
    assert_no_error(lone)


HEAD_PROMISED: list[Header] = [(b":method", b"HEAD"), *PUSHED[1:]]
#: A response to HEAD announces the length its content would have had (RFC 9110 §9.3.2).
HEAD_RESPONSE: list[Header] = [(b":status", b"200"), (b"content-length", b"10")]


def test_a_pushed_response_to_a_head_promise_may_announce_a_length_without_data() -> None:
    """RFC 9114 §4.1.2, RFC 9110 §6.4.1: the promised request's method decides, as on a
    request stream; a response to HEAD has no content whatever its content-length says."""
    lone = client_allowing(5)
    lone.feed(0, lone.push_promise(0, 0, HEAD_PROMISED))
    events = lone.feed(PUSH_STREAM, push_stream_bytes(lone, 0, HEAD_RESPONSE), end_stream=True)
    assert events == [
        HeadersReceived(stream_id=PUSH_STREAM, headers=HEAD_RESPONSE, push_id=0, stream_ended=True)
    ]
    assert_no_error(lone)


@pytest.mark.parametrize("promise_first", [True, False], ids=["promise first", "stream first"])
def test_data_in_a_pushed_response_to_a_head_promise_is_h3_message_error(
    promise_first: bool,
) -> None:
    """RFC 9114 §4.1.2, RFC 9110 §6.4.1: DATA in a response to HEAD is malformed, also when
    the push stream's response arrived before the PUSH_PROMISE that says it answers HEAD."""
    lone = client_allowing(5)
    promise = lone.push_promise(0, 0, HEAD_PROMISED)
    if promise_first:
        lone.feed(0, promise)
    lone.feed(PUSH_STREAM, push_stream_bytes(lone, 0, [(b":status", b"200")]))
    lone.feed(PUSH_STREAM, frame_bytes(DataFrame(b"body")))
    if not promise_first:
        lone.feed(0, promise)
    event = assert_stream_error(lone, PUSH_STREAM, ErrorCode.H3_MESSAGE_ERROR, reset=False)
    assert event.data["rule"] == "4 bytes of DATA in a response to HEAD, which has no content"


def test_a_server_pushes_a_response_to_head_with_a_length_and_never_data() -> None:
    """RFC 9114 §4.1.2: the server's push stream answers the promised HEAD, so it may
    announce a content-length with no DATA, and may not send DATA at all."""
    memory, stream_id = requested()
    push_stream = memory.server.create_push_stream(
        memory.server.send_push_promise(stream_id, HEAD_PROMISED)
    )
    memory.server.send_headers(push_stream, HEAD_RESPONSE)
    with pytest.raises(H3UsageError, match="DATA in a response to HEAD"):
        memory.server.send_data(push_stream, b"body")
    memory.server.end_stream(push_stream)
    memory.pump()
    assert memory.received["client"][-1] == StreamEnded(stream_id=PUSH_STREAM, push_id=0)
    assert not any(e.name == "stream_error" for e in memory.log.events)


def test_push_stream_with_a_push_id_above_max_push_id_is_h3_id_error() -> None:
    lone = client_allowing(3)
    lone.feed(PUSH_STREAM, stream_header(StreamType.PUSH, push_id=4))
    assert_connection_error(lone, ErrorCode.H3_ID_ERROR, "9114#4.6")


def test_push_stream_before_any_max_push_id_is_h3_id_error() -> None:
    lone = client_allowing(None)
    lone.feed(PUSH_STREAM, stream_header(StreamType.PUSH, push_id=0))
    assert_connection_error(lone, ErrorCode.H3_ID_ERROR, "9114#4.6")


def test_duplicate_push_stream_id_is_h3_id_error() -> None:
    """RFC 9114 §6.2.2: a push ID appears in one push stream header only."""
    lone = client_allowing(5)
    lone.feed(PUSH_STREAM, push_stream_bytes(lone, 2))
    lone.feed(PUSH_STREAM + 4, stream_header(StreamType.PUSH, push_id=2))
    event = assert_connection_error(lone, ErrorCode.H3_ID_ERROR, "9114#6.2.2")
    assert event.data["rule"] == "push ID 2 used by a second push stream (19)"


def test_a_push_stream_ending_before_its_final_response_is_h3_message_error() -> None:
    lone = client_allowing(5)
    lone.feed(PUSH_STREAM, stream_header(StreamType.PUSH, push_id=0), end_stream=True)
    assert_stream_error(lone, PUSH_STREAM, ErrorCode.H3_MESSAGE_ERROR, stop=False)


def test_data_before_headers_on_a_push_stream_is_h3_frame_unexpected() -> None:
    lone = client_allowing(5)
    push_header = stream_header(StreamType.PUSH, push_id=0)
    lone.feed(PUSH_STREAM, push_header + frame_bytes(DataFrame(b"x")))
    assert_connection_error(lone, ErrorCode.H3_FRAME_UNEXPECTED, "9114#4.1")


def test_a_stream_error_on_a_push_stream_ends_that_stream_only() -> None:
    """RFC 9114 §8: what follows the malformed response on the push stream is not read."""
    lone = client_allowing(5)
    bad = push_stream_bytes(lone, 0, [(b":status", b"200"), (b"X-Upper", b"1")])
    lone.feed(PUSH_STREAM, bad + frame_bytes(DataFrame(b"first")))
    assert lone.feed(PUSH_STREAM, frame_bytes(DataFrame(b"second")), end_stream=True) == []
    assert_stream_error(lone, PUSH_STREAM, ErrorCode.H3_MESSAGE_ERROR)
    assert lone.feed(0, lone.headers(0, RESPONSE), end_stream=True) == [
        HeadersReceived(stream_id=0, headers=RESPONSE, stream_ended=True)
    ]


def test_a_client_may_abandon_a_push_stream() -> None:
    lone = client_allowing(5)
    lone.feed(PUSH_STREAM, push_stream_bytes(lone, 0))
    lone.conn.reset_stream(PUSH_STREAM)
    assert lone.conn.actions_to_send() == [StopSending(PUSH_STREAM, ErrorCode.H3_REQUEST_CANCELLED)]
    assert lone.feed(PUSH_STREAM, frame_bytes(DataFrame(b"x")), end_stream=True) == []


def test_a_push_stream_for_a_push_the_client_cancelled_is_not_read() -> None:
    """RFC 9114 §7.2.3: the client aborts reading it with H3_REQUEST_CANCELLED."""
    lone = client_allowing(5)
    lone.feed(0, lone.push_promise(0, 0, PUSHED))
    lone.conn.cancel_push(0)
    lone.feed(PUSH_STREAM, push_stream_bytes(lone, 0))
    assert_stream_error(lone, PUSH_STREAM, ErrorCode.H3_REQUEST_CANCELLED, "9114#7.2.3")


# -- §7.2.3: CANCEL_PUSH --------------------------------------------------------------------


def test_cancel_push_received_by_the_client_is_reported() -> None:
    lone = client_allowing(5)
    assert lone.control(CancelPushFrame(3)) == [PushCancelled(push_id=3)]
    assert_frame_traced(lone, frame_bytes(CancelPushFrame(3)), "cancel_push")
    assert_no_error(lone)


def test_cancel_push_above_max_push_id_is_h3_id_error() -> None:
    """RFC 9114 §7.2.3: a push ID greater than the connection allows."""
    lone = client_allowing(5)
    lone.control(CancelPushFrame(6))
    assert_connection_error(lone, ErrorCode.H3_ID_ERROR, "9114#7.2.3")


def test_server_receiving_cancel_push_for_a_push_id_never_promised_is_h3_id_error() -> None:
    lone = Lone.server()
    lone.control(MaxPushIdFrame(10), CancelPushFrame(0))
    assert_connection_error(lone, ErrorCode.H3_ID_ERROR, "9114#7.2.3")


@pytest.mark.parametrize("canceller", ["client", "server"])
def test_only_a_promised_push_can_be_cancelled(canceller: str) -> None:
    """RFC 9114 §7.2.3: a server closes the connection with H3_ID_ERROR on CANCEL_PUSH for
    a push ID no PUSH_PROMISE has used, so neither side sends one."""
    memory, _ = requested()
    with pytest.raises(H3UsageError, match=r"push ID 0 is in no PUSH_PROMISE .*§7\.2\.3"):
        memory.endpoint(canceller).cancel_push(0)
    memory.pump()
    assert not [
        e for e in memory.log.events if e.data.get("frame", {}).get("frame_type") == "cancel_push"
    ]


def test_a_push_promised_again_after_the_client_cancelled_it_is_not_announced() -> None:
    """RFC 9114 §4.6 lets one push ID be promised on several request streams; once the
    client has cancelled it (§7.2.3), a later promise of it is not a new push."""
    lone = client_allowing(5)
    second = lone.request()
    assert lone.feed(0, lone.push_promise(0, 0, PUSHED)) == [
        PushPromiseReceived(stream_id=0, push_id=0, headers=PUSHED)
    ]
    lone.conn.cancel_push(0)
    assert lone.feed(second, lone.push_promise(second, 0, PUSHED)) == []
    assert_no_error(lone)
    assert [
        e.stream_id
        for e in lone.events("frame_parsed")
        if e.data["frame"]["frame_type"] == "push_promise"
    ] == [0, second]


def test_a_promise_overtaken_by_the_servers_cancel_push_is_not_announced() -> None:
    """RFC 9114 §7.2.3: a CANCEL_PUSH can arrive before the PUSH_PROMISE it cancels; the
    client "cannot expect the corresponding promise to be fulfilled"."""
    lone = client_allowing(5)
    assert lone.control(CancelPushFrame(0)) == [PushCancelled(push_id=0)]
    assert lone.feed(0, lone.push_promise(0, 0, PUSHED)) == []
    assert_no_error(lone)


# -- §7.2.7: MAX_PUSH_ID ---------------------------------------------------------------------


def test_max_push_id_may_grow_or_repeat() -> None:
    lone = Lone.server()
    lone.control(MaxPushIdFrame(3), MaxPushIdFrame(3), MaxPushIdFrame(9))
    assert lone.conn.max_push_id == 9
    assert_frame_traced(lone, frame_bytes(MaxPushIdFrame(9)), "max_push_id")
    assert_no_error(lone)


def test_max_push_id_decreasing_is_h3_id_error() -> None:
    lone = Lone.server()
    lone.control(MaxPushIdFrame(5), MaxPushIdFrame(4))
    event = assert_connection_error(lone, ErrorCode.H3_ID_ERROR, "9114#7.2.7")
    assert event.data["rule"] == "MAX_PUSH_ID 4 is smaller than the previous 5"


def test_client_receiving_max_push_id_is_h3_frame_unexpected() -> None:
    """RFC 9114 §7.2.7: a server never sends MAX_PUSH_ID."""
    lone = Lone.client()
    lone.control(MaxPushIdFrame(1))
    assert_connection_error(lone, ErrorCode.H3_FRAME_UNEXPECTED, "9114#7.2.7")


def test_a_server_promises_only_requests_it_may_push() -> None:
    """RFC 9114 §4.6: safe, cacheable, no content, and an :authority the server stands for."""
    memory = pair()
    memory.client.send_max_push_id(4)
    stream_id = memory.client.send_request(REQUEST, end_stream=True)
    memory.pump()
    without_authority = [PUSHED[0], PUSHED[1], PUSHED[3], (b"host", b"example.com")]
    for promised in (POST, without_authority):
        with pytest.raises(UnpushableRequest):
            memory.server.send_push_promise(stream_id, promised)
    assert memory.server.actions_to_send() == []
