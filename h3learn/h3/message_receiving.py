"""RFC 9114 §4.1: receiving an HTTP message on a request or push stream.

The peer's frames arrive in order, one stream's at a time:

    client ◀── [HEADERS (1xx)...] HEADERS [DATA...] [HEADERS (trailers)] ── server
    client ── HEADERS [DATA...] [HEADERS (trailers)] ──▶ server

Which frame may come next is the state table of message_exchange.py (§4.1); each change of
state is recorded (``stream_state_updated``). A header section is checked by
pseudo_headers.py (§4.2-§4.4) before the application sees it, the DATA against
Content-Length by content_length.py, and a malformed message is a stream error (§4.1.2).
A client reads a push stream (§4.6) with the same code, as a response.

QPACK may hold a field section until the encoder stream brings the inserts it refers to
(RFC 9204 §2.2.1): the stream then stops, and the frames after it wait in order
(`RequestStream.waiting`) until `unblocked` lets them through, so that the application
never sees DATA before the headers it follows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from h3learn.h3 import error_handling, push, request_streams
from h3learn.h3.content_length import ContentLengthTracker
from h3learn.h3.errors import ErrorCode, H3ConnectionError, H3StreamError
from h3learn.h3.frame_parser import ParsedFrame
from h3learn.h3.frame_placement import check_frame_allowed
from h3learn.h3.frames import DataFrame, Frame, HeadersFrame, PushPromiseFrame, UnknownFrame
from h3learn.h3.http_events import DataReceived, HeadersReceived, StreamEnded
from h3learn.h3.message_exchange import MessageInput, MessageState
from h3learn.h3.messages import CONNECT, MalformedMessage, field_section_size
from h3learn.h3.pseudo_headers import validate_request, validate_response, validate_trailers
from h3learn.h3.stream_state import RequestStream
from h3learn.h3.stream_types import StreamKind
from h3learn.qpack.decoder import DecodedFieldSection, Unblocked

if TYPE_CHECKING:
    from h3learn.h3.connection import H3Connection


def receive_bytes(conn: H3Connection, stream: RequestStream, data: bytes, end_stream: bool) -> None:
    """Bytes on a request or push stream: the frames they complete, in order, then the end.

    A broken frame (a bad Type or Length, a last frame cut short by the end of the stream)
    is a connection error, but only after the frames before it, even those QPACK still
    holds: if one of them is malformed (a stream error, §4.1.2), the stream is read no
    further and the broken frame never counts, just as when it arrives in a later packet.
    """
    frames, _ = stream.parser.feed_then_error(data)  # the error waits in the parser
    stream.waiting.extend(frames)
    if end_stream:
        stream.end_received = True
    process_waiting(conn, stream)


def process_waiting(conn: H3Connection, stream: RequestStream) -> None:
    """Handle queued frames in order, stopping while QPACK holds a field section; then the
    broken frame that came after them, if one did, and the end of the stream."""
    while stream.waiting and stream.blocked_on is None and not stream.abandoned:
        handle_request_frame(conn, stream, stream.waiting.popleft())
    if stream.waiting or stream.blocked_on is not None or stream.abandoned:
        return  # until QPACK releases the section, or for good
    if stream.parser.error is not None:
        raise stream.parser.error  # a broken frame came after the frames just handled
    if stream.end_received:
        if stream.exchange.state is not MessageState.COMPLETE:
            end_of_message(conn, stream)
            if not stream.end_reported:
                conn._events.append(StreamEnded(stream_id=stream.stream_id, push_id=stream.push_id))
        request_streams.forget_if_done(conn, stream)


def end_of_message(conn: H3Connection, stream: RequestStream) -> None:
    """The stream ended: the message must be whole (RFC 9114 §4.1: a final response, say)
    and its DATA must add up to its content-length (§4.1.2), or it is malformed. First of
    all, its last frame must be whole: one cut short by the end is H3_FRAME_ERROR (§7.1)."""
    stream.parser.eof()
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
        size = field_section_size(headers)
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
