"""RFC 9114 §6.1: request streams, one HTTP message exchange on each.

A client opens a bidirectional stream for every request (§6.1: client-initiated only) and
sends its message; the server answers on the same stream, and both sides then close it:

    client ── HEADERS [DATA...] [HEADERS (trailers)] ──▶ server
    client ◀── [HEADERS (1xx)...] HEADERS [DATA...] [HEADERS (trailers)] ── server

This module keeps the streams themselves: a `RequestStream` made for each (for a push
stream too, §4.6), a bidirectional stream the peer opens accepted (or refused: one the
server opened is H3_STREAM_CREATION_ERROR, one past a GOAWAY is rejected, §5.2), and a
stream forgotten once both messages are done. The messages on them are sent by
message_sending.py and received by message_receiving.py, in the frame order of
message_exchange.py (§4.1).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from h3learn.h3 import error_handling, message_receiving
from h3learn.h3.errors import ErrorCode, H3ConnectionError, H3StreamError
from h3learn.h3.frame_parser import FrameParser
from h3learn.h3.message_exchange import MessageExchange, MessageState
from h3learn.h3.stream_state import RequestStream
from h3learn.h3.stream_types import CLIENT_BIDI

if TYPE_CHECKING:
    from h3learn.h3.connection import H3Connection


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
            raise unopened_bidirectional_stream(conn, stream_id)
        stream = accept_request_stream(conn, stream_id)
        if stream is None:
            return
    if stream.abandoned:
        return
    message_receiving.receive_bytes(conn, stream, data, end_stream)


def unopened_bidirectional_stream(conn: H3Connection, stream_id: int) -> H3ConnectionError:
    """RFC 9114 §6.1: data on a bidirectional stream that no request opened."""
    if stream_id & 0x3 == CLIENT_BIDI:
        rule = (
            f"data on bidirectional stream {stream_id}, which is client-initiated but this"
            " client never opened it; a server opens no bidirectional streams"
        )
    elif conn.is_client:
        rule = (
            f"bidirectional stream {stream_id} opened by the server; HTTP/3 uses only"
            " client-initiated ones"
        )
    else:
        rule = (
            f"data on bidirectional stream {stream_id}, which is server-initiated but this"
            " server opens none; HTTP/3 uses only client-initiated ones"
        )
    return H3ConnectionError(ErrorCode.H3_STREAM_CREATION_ERROR, rule, "9114#6.1")


def accept_request_stream(conn: H3Connection, stream_id: int) -> RequestStream | None:
    stream = new_request_stream(conn, stream_id)
    record_opened(conn, stream_id, owner="remote")
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


def record_opened(conn: H3Connection, stream_id: int, *, owner: str) -> None:
    """Record a request stream opened (§6.1): by this client ("local"), or by the peer."""
    opens = "opens" if owner == "local" else "opened"
    conn.trace.record(
        "stream_type_set",
        stream_id,
        {"stream_id": stream_id, "owner": owner, "stream_type": "request"},
        rfc=("9114#6.1",),
        summary=f"client {opens} request stream {stream_id}",
    )


def forget_if_done(conn: H3Connection, stream: RequestStream) -> None:
    """A stream is finished once its message is in and this side has ended its own."""
    if stream.exchange.state is MessageState.COMPLETE and stream.end_sent:
        conn._requests.pop(stream.stream_id, None)
        conn._finished_requests.add(stream.stream_id)
