"""RFC 9114 §4.1.1: cancelling a request or push stream; the peer's RESET_STREAM and STOP_SENDING.

Either endpoint may give up on a request: it resets its sending side (RESET_STREAM,
RFC 9000 §19.4) and asks the peer to stop sending (STOP_SENDING, RFC 9000 §19.5), with
H3_REQUEST_CANCELLED, or, on a server that has not processed the request at all,
H3_REQUEST_REJECTED, which tells the client the request is safe to retry.

What arrives from the peer:

- RESET_STREAM on a request or push stream ends the exchange: this endpoint ends its own
  half too, and the QPACK decoder cancels what it held for the stream (RFC 9204 §4.4.2);
- STOP_SENDING is answered with RESET_STREAM carrying its error code (RFC 9000 §3.5); on a
  server it means the client cancelled the request (or push), which ends both directions,
  while on a client the response may still come (a server that needs no more of the request
  stops it with H3_NO_ERROR, RFC 9114 §4.1);
- either one on a critical stream is a connection error (RFC 9114 §6.2.1).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from h3learn.h3 import error_handling, extensions, request_streams
from h3learn.h3.errors import ErrorCode, H3ConnectionError, H3UsageError
from h3learn.h3.http_events import StreamReset
from h3learn.h3.message_exchange import MessageState
from h3learn.h3.stream_state import RequestStream
from h3learn.h3.stream_types import is_request_stream

if TYPE_CHECKING:
    from h3learn.h3.connection import H3Connection


def reset_stream(
    conn: H3Connection, stream_id: int, error_code: int = ErrorCode.H3_REQUEST_CANCELLED
) -> None:
    """Cancel a request or push (RFC 9114 §4.1.1): reset sending, stop receiving."""
    stream = error_handling.stream_for(conn, stream_id)
    if error_code == ErrorCode.H3_REQUEST_REJECTED:
        # RFC 9114 §4.1.1: "rejected" promises the request was never processed. A client
        # never says so (it answers a server's STOP_SENDING in stop_sending_received,
        # below), and a server may not once it has begun to answer (the rule GOAWAY
        # follows too, §5.2).
        if conn.is_client:
            raise H3UsageError("a client does not use H3_REQUEST_REJECTED (RFC 9114 §4.1.1)")
        if stream is not None and stream.headers_sent:
            raise H3UsageError(
                f"the response on stream {stream_id} has begun, so its request was processed:"
                " H3_REQUEST_CANCELLED, not H3_REQUEST_REJECTED (RFC 9114 §4.1.1)"
            )
    if stream is not None and not stream.abandoned:
        why = (
            "the server rejects the request before processing any of it"
            if error_code == ErrorCode.H3_REQUEST_REJECTED
            else "the application cancelled the stream"
        )
        conn.trace.stream_error(stream_id, error_code, why, "9114#4.1.1", "sent")
        error_handling.abandon(conn, stream, error_code, why, "9114#4.1.1")
        conn._flush_decoder_stream()  # RFC 9204 §4.4.2: the Stream Cancellation, now


def stream_reset_received(conn: H3Connection, stream_id: int, error_code: int) -> None:
    """RFC 9114 §4.1.1: the peer cancelled its side of a request or push stream."""
    stream = error_handling.stream_for(conn, stream_id)
    if stream is not None and not stream.abandoned:
        stream.abandoned = True
        rejected = error_code == ErrorCode.H3_REQUEST_REJECTED
        conn.trace.stream_error(
            stream_id,
            error_code,
            "the server did not process the request, so it may be retried"
            if rejected
            else "peer reset the stream",
            "9114#4.1.1",
            "received",
        )
        # Recorded after the reset that causes it (RFC 9204 §4.4.2).
        error_handling.cancel_qpack_references(conn, stream)
        end_own_half(conn, stream)
        conn._events.append(
            StreamReset(
                stream_id=stream_id,
                error_code=error_code,
                retry_safe=error_code == ErrorCode.H3_REQUEST_REJECTED,
                rule="it sent RESET_STREAM",
                rfc="9000#19.4",
            )
        )
    elif stream is None and unseen_request_stream(conn, stream_id):
        # Reset before any of its bytes arrived (they may have been lost): a section on it
        # may still refer to the dynamic table, so the encoder is owed a Stream Cancellation
        # (RFC 9204 §2.2.2.2), and bytes that still come are not read.
        conn.trace.stream_error(
            stream_id,
            error_code,
            "peer reset the stream before any of it arrived",
            "9114#4.1.1",
            "received",
        )
        conn.decoder.cancel_stream(stream_id)
        conn._finished_requests.add(stream_id)
    elif stream is None:
        extensions.ignored_stream_reset(conn, stream_id, error_code)


def unseen_request_stream(conn: H3Connection, stream_id: int) -> bool:
    """Server: is this a request stream the client opened whose bytes have not arrived?"""
    return (
        not conn.is_client
        and is_request_stream(stream_id)
        and stream_id not in conn._requests
        and stream_id not in conn._finished_requests
    )


def end_own_half(conn: H3Connection, stream: RequestStream) -> None:
    """After the peer's RESET_STREAM the exchange is over: reset this side's half too.

    RFC 9114 §4.1.1 cancels a request in both directions; left open, this half would
    never end. A request cut off before its header section is H3_REQUEST_INCOMPLETE
    (RFC 9114 §4.1); anything else is H3_REQUEST_CANCELLED.
    """
    if not stream.end_sent:
        incomplete = not conn.is_client and stream.exchange.state is (
            MessageState.EXPECTING_HEADERS
        )
        code = ErrorCode.H3_REQUEST_INCOMPLETE if incomplete else ErrorCode.H3_REQUEST_CANCELLED
        error_handling.send_reset_stream(
            conn,
            stream.stream_id,
            code,
            "the peer reset the stream, so this side ends its half too",
        )
        stream.end_sent = True
    conn._requests.pop(stream.stream_id, None)
    conn._finished_requests.add(stream.stream_id)


def stop_sending_received(conn: H3Connection, stream_id: int, error_code: int) -> None:
    """RFC 9000 §3.5: the peer stopped reading a stream this endpoint writes."""
    if stream_id in (
        conn.control_stream_id,
        conn.encoder.encoder_stream_id,
        conn.decoder.decoder_stream_id,
    ):
        raise H3ConnectionError(
            ErrorCode.H3_CLOSED_CRITICAL_STREAM,
            f"peer asked to stop critical stream {stream_id} (STOP_SENDING)",
            "9114#6.2.1",
        )
    stream = conn._requests.get(stream_id)
    if stream is not None and not stream.abandoned and not conn.is_client:
        # RFC 9114 §4.1.1: a client that stops reading the response (or a push stream) has
        # cancelled the request: the server stops both directions and tells its application,
        # which can no longer answer.
        conn.trace.stream_error(
            stream_id,
            error_code,
            "the client cancelled the request: its STOP_SENDING says it will not read the response",
            "9114#4.1.1",
            "received",
        )
        why = "the peer sent STOP_SENDING: it cancelled the request and will not read a response"
        error_handling.abandon(conn, stream, error_code, why, "9114#4.1.1")
        conn._events.append(
            StreamReset(
                stream_id=stream_id,
                error_code=error_code,
                rule="it sent STOP_SENDING: it will not read what this endpoint sends",
                rfc="9114#4.1.1",
            )
        )
    elif stream is not None and not stream.end_sent:
        # A server that needs no more of the request (RFC 9114 §4.1, H3_NO_ERROR) or will not
        # read it: stop sending it. The response may still come, so the exchange goes on.
        stream.end_sent = True
        stream.stopped_by_peer = error_code
        # RFC 9000 §3.5: STOP_SENDING is answered with RESET_STREAM, with its error code.
        error_handling.send_reset_stream(
            conn,
            stream_id,
            error_code,
            "the peer sent STOP_SENDING, which is answered with RESET_STREAM",
            rfc="9000#3.5",
        )
        request_streams.forget_if_done(conn, stream)
    elif stream_id in conn._extension_streams:
        extensions.reset_extension_stream(conn, stream_id, error_code)
