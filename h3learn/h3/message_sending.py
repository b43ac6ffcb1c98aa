"""RFC 9114 §4.1: sending an HTTP message on a request stream (or, for a server, a push stream).

What this endpoint sends must itself be a valid message, so each call checks it before a
byte leaves and refuses (`H3UsageError`) what the peer would have to treat as malformed
(§4.1.2) or as a connection error:

    client:  send_request      HEADERS (the request; opens the stream, §6.1)
    server:  send_headers      HEADERS (1xx)...  HEADERS (the final response)
    both:    send_data         DATA... (within an announced content-length, §4.1.2)
             send_headers      HEADERS (trailers), then nothing but the end
             end_stream        the end of the stream, once a final header section is out

A header section is checked by pseudo_headers.py (§4.2-§4.4) and against the peer's
SETTINGS_MAX_FIELD_SECTION_SIZE (§4.2.2), then QPACK-encoded (`encode`: its inserts go on
the encoder stream, within the flow-control credit QUIC left it, RFC 9204 §2.1.3).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from h3learn.h3 import request_streams
from h3learn.h3.actions import SendStreamData
from h3learn.h3.content_length import ContentLengthTracker
from h3learn.h3.errors import H3UsageError, code_name
from h3learn.h3.frames import DataFrame, HeadersFrame
from h3learn.h3.http_fields import check_header_types
from h3learn.h3.messages import CONNECT, Header, MalformedMessage, check_sending_size
from h3learn.h3.pseudo_headers import validate_request, validate_response, validate_trailers
from h3learn.h3.stream_state import RequestStream
from h3learn.h3.stream_types import STREAM_ID_STEP
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
    # Refused before a stream ID is spent on it (a stream opened and left would be opened
    # at the peer too, RFC 9000 §2.1); the HEADERS frame below is then sent unchecked.
    check_sending_size(headers, conn.peer_settings.max_field_section_size, "field section")
    stream_id = conn._next_request_stream_id
    conn._next_request_stream_id += STREAM_ID_STEP
    stream = request_streams.new_request_stream(conn, stream_id)
    stream.request_method = method
    stream.content_sent = content
    request_streams.record_opened(conn, stream_id, owner="local")
    conn._send_frame(stream_id, HeadersFrame(encode(conn, stream_id, headers)))
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
    request_streams.forget_if_done(conn, stream)


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
    check_sending_size(headers, conn.peer_settings.max_field_section_size, "field section")
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


def is_interim(headers: Sequence[Header]) -> bool:
    """Is this response header section an interim (1xx) one? (RFC 9114 §4.1)"""
    for name, value in headers:
        if name == b":status":
            return value.startswith(b"1")
    return False
