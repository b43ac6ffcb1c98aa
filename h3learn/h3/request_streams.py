"""RFC 9114 §4.1, §6.1: request streams, one HTTP message exchange on each.

A client opens a bidirectional stream for every request (§6.1: client-initiated only) and
sends its message; the server answers on the same stream, and both sides then close it:

    client ── HEADERS [DATA...] [HEADERS (trailers)] ──▶ server
    client ◀── [HEADERS (1xx)...] HEADERS [DATA...] [HEADERS (trailers)] ── server

Which frame may come next is the state table of message_exchange.py (§4.1); a header
section is checked by pseudo_headers.py (§4.2-§4.4) before the application sees it, the DATA
against Content-Length by content_length.py, and a malformed message is a stream error
(§4.1.2). A client reads a push stream (§4.6) with the same code, as a response.

QPACK may hold a field section until the encoder stream brings the inserts it refers to
(RFC 9204 §2.2.1): the stream then stops, and the frames after it wait in order
(`RequestStream.waiting`) until `unblocked` lets them through, so that the application
never sees DATA before the headers it follows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from h3learn.h3 import error_handling, push
from h3learn.h3.actions import SendStreamData
from h3learn.h3.content_length import ContentLengthTracker
from h3learn.h3.errors import (
    ErrorCode,
    H3ConnectionError,
    H3StreamError,
    H3UsageError,
    code_name,
)
from h3learn.h3.frame_parser import FrameParser, ParsedFrame
from h3learn.h3.frame_placement import check_frame_allowed
from h3learn.h3.frames import DataFrame, Frame, HeadersFrame, PushPromiseFrame, UnknownFrame
from h3learn.h3.http_events import DataReceived, HeadersReceived, StreamEnded
from h3learn.h3.http_fields import check_header_types
from h3learn.h3.message_exchange import MessageExchange, MessageInput, MessageState
from h3learn.h3.messages import CONNECT, Header, MalformedMessage
from h3learn.h3.pseudo_headers import validate_request, validate_response, validate_trailers
from h3learn.h3.stream_state import RequestStream
from h3learn.h3.stream_types import CLIENT_BIDI, STREAM_ID_STEP, StreamKind
from h3learn.qpack.decoder import DecodedFieldSection, Unblocked
from h3learn.qpack.errors import cite

if TYPE_CHECKING:
    from h3learn.h3.connection import H3Connection


def send_request(conn: H3Connection, headers: Sequence[Header], end_stream: bool = False) -> int:
    """Client: open the next request stream and send the header section on it."""
    check_can_request(conn)
    check_header_types(headers)
    head = validate_request(
        headers, enable_connect_protocol=conn.peer_settings.enable_connect_protocol
    )
    content = ContentLengthTracker.for_request(head)
    check_content(conn._next_request_stream_id, content, more=0, ending=end_stream)
    return open_request(conn, headers, head.method, end_stream, content)


def check_can_request(conn: H3Connection) -> None:
    if not conn.is_client:
        raise H3UsageError("only a client sends requests (RFC 9114 §4.1)")
    if conn.goaway_received is not None:
        raise H3UsageError("the server sent GOAWAY: no new requests (RFC 9114 §5.2)")
    conn._check_open()


def open_request(
    conn: H3Connection,
    headers: Sequence[Header],
    method: bytes,
    end_stream: bool,
    content: ContentLengthTracker | None = None,
) -> int:
    stream_id = conn._next_request_stream_id
    conn._next_request_stream_id += STREAM_ID_STEP
    stream = new_request_stream(conn, stream_id)
    stream.request_method = method
    stream.content_sent = content
    conn.trace.record(
        "stream_type_set",
        stream_id,
        {"stream_id": stream_id, "owner": "local", "stream_type": "request"},
        rfc=("9114#6.1",),
        summary=f"client opens request stream {stream_id}",
    )
    send_field_section(conn, stream_id, headers)
    stream.headers_sent = True
    if end_stream:
        end_sending(conn, stream)
    return stream_id


def send_headers(
    conn: H3Connection, stream_id: int, headers: Sequence[Header], end_stream: bool = False
) -> None:
    """Send a header section (a response, an interim response) or, after content, trailers."""
    conn._check_open()
    stream = sending_stream(conn, stream_id)
    if stream.headers_sent and stream.request_method == CONNECT:
        raise H3UsageError(f"stream {stream_id} is a CONNECT tunnel: DATA only (RFC 9114 §4.4)")
    check_not_after_trailers(stream)
    check_header_types(headers)
    content = stream.content_sent
    if stream.headers_sent:
        validate_trailers(headers)
    elif not conn.is_client:
        head = validate_response(headers)
        if not is_interim(headers):
            method = stream.request_method or b"GET"
            content = ContentLengthTracker.for_response(head, request_method=method)
    if end_stream and not stream.headers_sent and is_interim(headers):
        raise H3UsageError(without_final_response(stream_id))
    check_content(stream_id, content, more=0, ending=end_stream)
    send_field_section(conn, stream_id, headers)
    if stream.headers_sent:
        stream.trailers_sent = True
    elif conn.is_client or not is_interim(headers):
        stream.headers_sent = True
        stream.content_sent = content
    if end_stream:
        end_sending(conn, stream)


def send_data(conn: H3Connection, stream_id: int, data: bytes, end_stream: bool = False) -> None:
    """Send content (RFC 9114 §7.2.1), after the header section."""
    conn._check_open()
    stream = sending_stream(conn, stream_id)
    if not stream.headers_sent:
        raise H3UsageError(f"stream {stream_id}: DATA before HEADERS breaks RFC 9114 §4.1")
    if data or not end_stream:
        check_not_after_trailers(stream)
    check_content(stream_id, stream.content_sent, more=len(data), ending=end_stream)
    if data:
        conn._send_frame(stream_id, DataFrame(data))
        if stream.content_sent is not None:
            stream.content_sent.add(len(data))
    if end_stream:
        end_sending(conn, stream)


def check_content(
    stream_id: int, content: ContentLengthTracker | None, *, more: int, ending: bool
) -> None:
    """Refuse to send what would make this endpoint's own message malformed (RFC 9114
    §4.1.2): DATA past the content-length it announced, or an end short of it."""
    if content is None:
        return
    try:
        content.check_sending(more, ending=ending)
    except MalformedMessage as error:
        raise H3UsageError(
            f"stream {stream_id}: that would make the message malformed, {error.rule}"
            f" ({cite(error.rfc)}); the peer would reset the stream with H3_MESSAGE_ERROR"
        ) from None


def end_stream(conn: H3Connection, stream_id: int) -> None:
    """The end of the stream, with no frame: short of an announced content-length it
    would leave the message malformed (RFC 9114 §4.1.2)."""
    stream = sending_stream(conn, stream_id)
    if not stream.headers_sent:
        raise H3UsageError(without_final_response(stream_id))
    check_content(stream_id, stream.content_sent, more=0, ending=True)
    end_sending(conn, stream)


def without_final_response(stream_id: int) -> str:
    """RFC 9114 §4.1: a message is a header section (after any interim responses), then
    content and trailers; a stream ending before it is malformed for the peer."""
    return (
        f"stream {stream_id} cannot end yet: no final header section was sent on it, and a"
        " message is zero or more interim responses, then one final header section"
        " (RFC 9114 §4.1)"
    )


def end_sending(conn: H3Connection, stream: RequestStream) -> None:
    stream.end_sent = True
    conn._actions.append(SendStreamData(stream.stream_id, b"", end_stream=True))
    forget_if_done(conn, stream)


def sending_stream(conn: H3Connection, stream_id: int) -> RequestStream:
    stream = conn._requests.get(stream_id)
    if stream is None and stream_id in conn._finished_requests:
        raise H3UsageError(
            f"stream {stream_id} is finished: both sides ended it, or it was reset (then a"
            " StreamReset event said why)"
        )
    if stream is None or stream.abandoned:
        raise H3UsageError(f"stream {stream_id} is not an open request or push stream")
    if stream.stopped_by_peer is not None:
        raise H3UsageError(
            f"stream {stream_id}: the peer sent STOP_SENDING"
            f" ({code_name(stream.stopped_by_peer)}), so nothing more can be sent on it;"
            " its response may still arrive (RFC 9114 §4.1)"
        )
    if stream.end_sent:
        raise H3UsageError(f"stream {stream_id} is already closed for sending")
    return stream


def check_not_after_trailers(stream: RequestStream) -> None:
    """RFC 9114 §4.1: after the trailer section only the end of the stream may follow; a
    HEADERS or DATA frame there is a connection error for the peer (H3_FRAME_UNEXPECTED)."""
    if stream.trailers_sent:
        raise H3UsageError(
            f"stream {stream.stream_id}: the trailer section was sent, so only the end of the"
            " stream may follow (RFC 9114 §4.1)"
        )


def send_field_section(conn: H3Connection, stream_id: int, headers: Sequence[Header]) -> None:
    limit = conn.peer_settings.max_field_section_size
    if limit is not None:
        size = sum(len(name) + len(value) + 32 for name, value in headers)
        if size > limit:
            raise H3UsageError(
                f"field section of {size} bytes exceeds the peer's"
                f" SETTINGS_MAX_FIELD_SECTION_SIZE {limit} (RFC 9114 §4.2.2)"
            )
    conn._send_frame(stream_id, HeadersFrame(encode(conn, stream_id, headers)))


def encode(conn: H3Connection, stream_id: int, headers: Sequence[Header]) -> bytes:
    """QPACK-encode a field section for ``stream_id``; its inserts go on the encoder
    stream, within the flow-control credit the transport reported (RFC 9204 §2.1.3)."""
    encoder_stream, field_section = conn.encoder.encode(
        stream_id, list(headers), credit=conn._encoder_stream_credit()
    )
    if encoder_stream:
        assert conn.encoder.encoder_stream_id is not None, "initiate() first"
        conn._actions.append(SendStreamData(conn.encoder.encoder_stream_id, encoder_stream))
    return field_section


def receive_bidirectional(
    conn: H3Connection, stream_id: int, data: bytes, end_stream: bool
) -> None:
    stream = conn._requests.get(stream_id)
    if stream is None:
        # Checked first: a response already in flight when this client cancelled its
        # request still arrives, and is discarded (RFC 9114 §4.1.1), not an error.
        if stream_id in conn._finished_requests:
            return  # late data on a stream already finished or reset: discarded
        if conn.is_client or stream_id & 0x3 != CLIENT_BIDI:
            raise H3ConnectionError(
                ErrorCode.H3_STREAM_CREATION_ERROR,
                f"bidirectional stream {stream_id} opened by the server; HTTP/3 uses only"
                " client-initiated ones",
                "9114#6.1",
            )
        stream = accept_request_stream(conn, stream_id)
        if stream is None:
            return
    if stream.abandoned:
        return
    receive_frames(conn, stream, stream.parser.feed(data), end_stream)


def accept_request_stream(conn: H3Connection, stream_id: int) -> RequestStream | None:
    stream = new_request_stream(conn, stream_id)
    conn.trace.record(
        "stream_type_set",
        stream_id,
        {"stream_id": stream_id, "owner": "remote", "stream_type": "request"},
        rfc=("9114#6.1",),
        summary=f"client opened request stream {stream_id}",
    )
    if conn.goaway_sent is not None and stream_id >= conn.goaway_sent:
        # RFC 9114 §5.2: requests at or past the GOAWAY identifier are rejected unprocessed.
        error_handling.stream_error(
            conn,
            H3StreamError(
                ErrorCode.H3_REQUEST_REJECTED,
                f"request on stream {stream_id} arrived after GOAWAY {conn.goaway_sent}",
                "9114#5.2",
                stream_id=stream_id,
            ),
        )
        return None
    conn._largest_processed_request = max(conn._largest_processed_request, stream_id)
    return stream


def new_request_stream(
    conn: H3Connection, stream_id: int, push_id: int | None = None
) -> RequestStream:
    stream = RequestStream(
        stream_id=stream_id,
        exchange=MessageExchange(
            stream_id, is_push=push_id is not None, receives_request=not conn.is_client
        ),
        parser=FrameParser(record=conn.recorder.enabled),
        push_id=push_id,
    )
    conn._requests[stream_id] = stream
    return stream


def receive_frames(
    conn: H3Connection, stream: RequestStream, frames: list[ParsedFrame], end_stream: bool
) -> None:
    stream.waiting.extend(frames)
    if end_stream:
        stream.parser.eof()
        stream.end_received = True
    process_waiting(conn, stream)


def process_waiting(conn: H3Connection, stream: RequestStream) -> None:
    """Handle queued frames in order, stopping while QPACK holds a field section."""
    while stream.waiting and stream.blocked_on is None and not stream.abandoned:
        handle_request_frame(conn, stream, stream.waiting.popleft())
    if (
        stream.end_received
        and not stream.waiting
        and stream.blocked_on is None
        and not stream.abandoned
    ):
        if stream.exchange.state is not MessageState.COMPLETE:
            end_of_message(conn, stream)
            if not stream.end_reported:
                conn._events.append(StreamEnded(stream_id=stream.stream_id, push_id=stream.push_id))
        forget_if_done(conn, stream)


def end_of_message(conn: H3Connection, stream: RequestStream) -> None:
    """The stream ended: the message must be whole (RFC 9114 §4.1: a final response, say)
    and its DATA must add up to its content-length (§4.1.2), or it is malformed."""
    transition(conn, stream, MessageInput.END_OF_STREAM)
    if stream.content is not None:
        check_message(conn, stream, stream.content.finish)


def handle_request_frame(conn: H3Connection, stream: RequestStream, parsed: ParsedFrame) -> None:
    conn.trace.frame_parsed(stream.stream_id, parsed)
    frame = parsed.frame
    kind = StreamKind.PUSH if stream.push_id is not None else StreamKind.REQUEST
    check_frame_allowed(frame.frame_type, kind, sender=conn.trace.peer)
    if stream.tunnel and not isinstance(frame, DataFrame | UnknownFrame):
        raise H3ConnectionError(
            ErrorCode.H3_FRAME_UNEXPECTED,
            f"{frame.describe()} on stream {stream.stream_id}, a CONNECT tunnel, which"
            " carries only DATA frames",
            "9114#4.4",
        )
    if isinstance(frame, DataFrame):
        transition(conn, stream, MessageInput.DATA)
        if stream.content is not None:
            check_message(conn, stream, lambda: stream.content.add(len(frame.data)))  # type: ignore[union-attr]
        conn._events.append(
            DataReceived(
                stream_id=stream.stream_id,
                data=frame.data,
                push_id=stream.push_id,
                stream_ended=ends_with(conn, stream),
            )
        )
    elif isinstance(frame, HeadersFrame):
        stream.exchange.check_headers_frame()
        decode_field_section(conn, stream, parsed, frame.field_section)
    elif isinstance(frame, PushPromiseFrame):
        transition(conn, stream, MessageInput.PUSH_PROMISE)
        push.check_push_id_allowed(conn, frame.push_id, "PUSH_PROMISE", "9114#7.2.5")
        decode_field_section(conn, stream, parsed, frame.field_section)
    # Reserved and unknown frame types mean nothing (RFC 9114 §9): recorded, ignored.


def ends_with(conn: H3Connection, stream: RequestStream) -> bool:
    """Is the frame being delivered the stream's last? (Noted in ``end_reported``.)

    If so, the end of the message is checked first: a message found malformed at its end
    is reset, never reported to the application as complete (RFC 9114 §4.1.2).
    """
    ended = stream.end_received and not stream.waiting
    if ended and not stream.end_reported:
        end_of_message(conn, stream)
        stream.end_reported = True
    return ended


def decode_field_section(
    conn: H3Connection, stream: RequestStream, parsed: ParsedFrame, section: bytes
) -> None:
    decoded = conn.decoder.decode(stream.stream_id, section)
    if decoded is None:
        stream.blocked_on = parsed  # RFC 9204 §2.2.1: wait for the encoder stream
        return
    field_section_ready(conn, stream, parsed.frame, decoded)


def field_section_ready(
    conn: H3Connection, stream: RequestStream, frame: Frame, decoded: DecodedFieldSection
) -> None:
    headers = decoded.headers
    limit = conn.local_settings.max_field_section_size
    if limit is not None:
        size = sum(len(name) + len(value) + 32 for name, value in headers)
        if size > limit:
            raise H3StreamError(
                ErrorCode.H3_EXCESSIVE_LOAD,
                f"field section of {size} bytes is larger than this endpoint's"
                f" SETTINGS_MAX_FIELD_SECTION_SIZE {limit}",
                "9114#4.2.2",
                stream_id=stream.stream_id,
            )
    if isinstance(frame, PushPromiseFrame):
        push.push_promise_ready(conn, stream, frame.push_id, headers)
        return
    trailers = stream.exchange.state is not MessageState.EXPECTING_HEADERS
    interim = False
    if trailers:
        check_message(conn, stream, lambda: validate_trailers(headers))
    elif conn.is_client or stream.push_id is not None:
        head = check_message(conn, stream, lambda: validate_response(headers))
        interim = head.informational
        if not interim:
            stream.content = ContentLengthTracker.for_response(
                head, request_method=stream.request_method or b"GET"
            )
            stream.tunnel = stream.request_method == CONNECT and 200 <= head.status < 300
    else:
        request = check_message(
            conn,
            stream,
            lambda: validate_request(
                headers, enable_connect_protocol=conn.local_settings.enable_connect_protocol
            ),
        )
        stream.request_method = request.method
        stream.content = ContentLengthTracker.for_request(request)
        stream.tunnel = request.method == CONNECT
    transition(conn, stream, MessageInput.INTERIM_HEADERS if interim else MessageInput.HEADERS)
    conn._events.append(
        HeadersReceived(
            stream_id=stream.stream_id,
            headers=headers,
            interim=interim,
            trailers=trailers,
            push_id=stream.push_id,
            stream_ended=ends_with(conn, stream),
        )
    )


def check_message(conn: H3Connection, stream: RequestStream, check: Callable[[], Any]) -> Any:
    """Run a message check; a malformed message is a stream error (RFC 9114 §4.1.2)."""
    try:
        return check()
    except MalformedMessage as error:
        raise error.as_stream_error(stream.stream_id) from None


def transition(conn: H3Connection, stream: RequestStream, event: MessageInput) -> None:
    old, new = stream.exchange.receive(event)
    if event is MessageInput.INTERIM_HEADERS:
        # No state changes, but it is recorded all the same: the one place a trace shows
        # that a 1xx response was read as interim, with the final response still to come.
        summary = (
            f"stream {stream.stream_id}: an interim (1xx) response; still {old.value},"
            " the final response is to come"
        )
    elif old is not new:
        summary = f"stream {stream.stream_id}: {old.value} → {new.value} ({event.value})"
    else:
        return
    conn.trace.record(
        "stream_state_updated",
        stream.stream_id,
        {
            "stream_id": stream.stream_id,
            "old": old.value,
            "new": new.value,
            "trigger": event.value,
        },
        rfc=("9114#4.1",),
        summary=summary,
    )


def unblocked(conn: H3Connection, released: Unblocked) -> None:
    """QPACK inserts arrived: finish the field sections they were holding.

    A section that failed past QPACK's limits costs only its own stream (RFC 9204 §7.4).
    """
    for failure in released.failures:
        error_handling.decompression_failed(conn, failure)
    for decoded in released.sections:
        stream = error_handling.stream_for(conn, decoded.stream_id)
        if stream is None or stream.blocked_on is None:
            continue
        parsed, stream.blocked_on = stream.blocked_on, None
        try:
            field_section_ready(conn, stream, parsed.frame, decoded)
            process_waiting(conn, stream)
        except H3StreamError as error:
            error_handling.stream_error(conn, error)


def forget_if_done(conn: H3Connection, stream: RequestStream) -> None:
    """A stream is finished once its message is in and this side has ended its own."""
    if stream.exchange.state is MessageState.COMPLETE and stream.end_sent:
        conn._requests.pop(stream.stream_id, None)
        conn._finished_requests.add(stream.stream_id)


def is_interim(headers: Sequence[Header]) -> bool:
    """Is this response header section an interim (1xx) one? (RFC 9114 §4.1)"""
    for name, value in headers:
        if name == b":status":
            return value.startswith(b"1")
    return False
