"""RFC 9114 §4.6: server push, with MAX_PUSH_ID (§7.2.7), PUSH_PROMISE (§7.2.5) and
CANCEL_PUSH (§7.2.3).

A server may answer a request the client has not sent yet. It promises the response on
the request stream it relates to, then sends it on a push stream of its own:

    client ── MAX_PUSH_ID(2) ────────────────▶ server   (control stream: push IDs 0-2 allowed)
    client ◀── PUSH_PROMISE(push ID 0, request) ─ server   (on the request stream)
    client ◀── push stream: type 0x01, push ID 0, HEADERS, DATA ── server

Push IDs count up from 0, and a server may use only those the client allowed; a push ID
beyond the client's MAX_PUSH_ID is H3_ID_ERROR. Either side may cancel a push with
CANCEL_PUSH on its control stream: the client does not want it, or the server will not
send it. A push stream for a cancelled push is not read.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from h3learn.h3 import error_handling, message_sending, request_streams, unidirectional_streams
from h3learn.h3.errors import ErrorCode, H3ConnectionError, H3StreamError, H3UsageError
from h3learn.h3.frame_parser import FrameParser
from h3learn.h3.frames import CancelPushFrame, MaxPushIdFrame, PushPromiseFrame
from h3learn.h3.http_events import PushCancelled, PushPromiseReceived
from h3learn.h3.http_fields import check_header_types
from h3learn.h3.message_exchange import MessageExchange, MessageState
from h3learn.h3.messages import (
    HEAD,
    Header,
    MalformedMessage,
    UnpushableRequest,
    check_sending_size,
)
from h3learn.h3.pseudo_headers import validate_push_promise_request
from h3learn.h3.stream_state import IncomingUniStream, RequestStream
from h3learn.h3.stream_types import StreamHeader, StreamType

if TYPE_CHECKING:
    from h3learn.h3.connection import H3Connection


def send_max_push_id(conn: H3Connection, push_id: int) -> None:
    """Client: allow push IDs up to ``push_id`` (RFC 9114 §7.2.7)."""
    if not conn.is_client:
        raise H3UsageError("only a client sends MAX_PUSH_ID (RFC 9114 §7.2.7)")
    if conn.max_push_id is not None and push_id < conn.max_push_id:
        raise H3UsageError("MAX_PUSH_ID cannot decrease (RFC 9114 §7.2.7)")
    conn.max_push_id = push_id
    conn._send_control_frame(MaxPushIdFrame(push_id))


def send_push_promise(conn: H3Connection, stream_id: int, headers: Sequence[Header]) -> int:
    """Server: promise a response to ``headers`` on request stream ``stream_id``."""
    if conn.is_client:
        raise H3UsageError("only a server promises pushes (RFC 9114 §4.6)")
    if conn.max_push_id is None or conn._next_push_id > conn.max_push_id:
        raise H3UsageError(
            f"push ID {conn._next_push_id} is not allowed: the client's MAX_PUSH_ID is"
            f" {conn.max_push_id} (RFC 9114 §4.6)"
        )
    if conn.goaway_received is not None:
        # Whatever its push ID: after a GOAWAY no new push may be promised at all.
        raise H3UsageError("the client sent GOAWAY: no new pushes (RFC 9114 §5.2)")
    check_header_types(headers)
    validate_push_promise_request(headers)
    # RFC 9114 §4.2.2, §7.2.5: a PUSH_PROMISE's field section is held to the peer's limit
    # like any other, and refused before a push ID is spent on it.
    check_sending_size(
        headers, conn.peer_settings.max_field_section_size, "PUSH_PROMISE field section"
    )
    if message_sending.sending_stream(conn, stream_id).push_id is not None:
        raise H3UsageError(f"stream {stream_id} is a push stream: no PUSH_PROMISE (RFC 9114 §4.1)")
    push_id = conn._next_push_id
    conn._next_push_id += 1
    conn._send_frame(
        stream_id, PushPromiseFrame(push_id, message_sending.encode(conn, stream_id, headers))
    )
    conn._promised[push_id] = list(headers)
    return push_id


def create_push_stream(conn: H3Connection, push_id: int) -> int:
    """Server: open the push stream that fulfils ``push_id``; then send_headers on it."""
    if push_id not in conn._promised:
        raise H3UsageError(f"push ID {push_id} was never promised")
    if push_id in conn._push_streams_seen:
        raise H3UsageError(f"push ID {push_id} already has its push stream (RFC 9114 §6.2.2)")
    if push_id in conn._cancelled_pushes:
        # RFC 9114 §7.2.3: a push cancelled by either side gets no push stream (the client
        # does not want it; the server said it will not fulfil it).
        raise H3UsageError(f"push ID {push_id} was cancelled: no push stream (RFC 9114 §7.2.3)")
    conn._push_streams_seen.add(push_id)
    stream_id = unidirectional_streams.open_uni_stream(
        conn, StreamHeader(StreamType.PUSH, push_id=push_id)
    )
    stream = request_streams.new_request_stream(conn, stream_id, push_id=push_id)
    # The response answers the promised request: to HEAD it has no content (RFC 9110 §6.4.1).
    stream.request_method = promised_method(conn, push_id)
    # A push stream is unidirectional: nothing will come back on it.
    stream.end_received = True
    stream.exchange.state = MessageState.COMPLETE
    return stream_id


def cancel_push(conn: H3Connection, push_id: int, why: tuple[str, str] | None = None) -> None:
    """Either side: CANCEL_PUSH (RFC 9114 §7.2.3); ``why``: (reason, RFC) for the trace.

    Only a promised push can be cancelled. A server cancels a promise it sent; a client, a
    promise it received: a server that gets CANCEL_PUSH for a push ID no PUSH_PROMISE has
    used closes the connection with H3_ID_ERROR (§7.2.3), so the client must not send one.
    """
    if push_id not in conn._promised:
        endpoint, whose = ("client", "received") if conn.is_client else ("server", "sent")
        raise H3UsageError(
            f"push ID {push_id} is in no PUSH_PROMISE this {endpoint} has {whose}: there is no"
            " promise to cancel (RFC 9114 §7.2.3)"
        )
    conn._cancelled_pushes.add(push_id)
    conn._send_control_frame(CancelPushFrame(push_id), why)


def check_push_id_allowed(conn: H3Connection, push_id: int, what: str, rfc: str) -> None:
    """Client: a push ID the server uses must be one this client allowed (§7.2.7)."""
    if conn.max_push_id is None or push_id > conn.max_push_id:
        raise H3ConnectionError(
            ErrorCode.H3_ID_ERROR,
            f"{what} uses push ID {push_id}, but this client's MAX_PUSH_ID is"
            f" {'not sent' if conn.max_push_id is None else conn.max_push_id}",
            rfc,
        )


def push_promise_ready(
    conn: H3Connection, stream: RequestStream, push_id: int, headers: list[Header]
) -> None:
    """Client: a PUSH_PROMISE's request, decoded (§4.6, §7.2.5); checked before it is told."""
    earlier = conn._promised.get(push_id)
    if earlier is not None and earlier != headers:
        raise H3ConnectionError(
            ErrorCode.H3_GENERAL_PROTOCOL_ERROR,
            f"push ID {push_id} promised again with different request fields",
            "9114#7.2.5",
        )
    conn._promised[push_id] = headers
    try:
        validate_push_promise_request(headers)
    except UnpushableRequest as refusal:
        # RFC 9114 §4.6: a promise the client cannot use is refused with CANCEL_PUSH (once,
        # though it may be promised again), and its response must not be used: a push
        # stream already open for it is abandoned. Once its push stream has come, aborting
        # that stream is the refusal, and no CANCEL_PUSH is sent (§7.2.3: SHOULD NOT).
        if push_id in conn._push_streams_seen:
            conn._cancelled_pushes.add(push_id)
        elif push_id not in conn._cancelled_pushes:
            cancel_push(conn, push_id, (f"the promise is refused: {refusal.rule}", refusal.rfc))
        for push_stream in push_streams_for(conn, push_id):
            refuse_push_stream(conn, push_stream)
        return
    except MalformedMessage as error:
        raise error.as_stream_error(stream.stream_id) from None
    if excluded_by_own_goaway(conn, push_id):
        if push_id not in conn._cancelled_pushes:
            exclude_push(conn, push_id)
        return
    if push_id in conn._cancelled_pushes:
        # Already cancelled: by this client after an earlier promise of the same push ID on
        # another request stream (§4.6 allows that), or by the server's CANCEL_PUSH, which
        # can overtake its PUSH_PROMISE (§7.2.3). The application has been told the push
        # is off; a promise that will not be fulfilled is not announced.
        return
    for push_stream in push_streams_for(conn, push_id):
        promise_reached_push_stream(conn, push_stream)
    conn._events.append(
        PushPromiseReceived(stream_id=stream.stream_id, push_id=push_id, headers=headers)
    )


def check_push_stream_opener(conn: H3Connection, stream_id: int) -> None:
    """RFC 9114 §6.2.2: only a server opens push streams; a client's is a connection error
    of type H3_STREAM_CREATION_ERROR, known from the Stream Type alone."""
    if not conn.is_client:
        raise H3ConnectionError(
            ErrorCode.H3_STREAM_CREATION_ERROR,
            f"client opened push stream {stream_id}; only servers push",
            "9114#6.2.2",
        )


def promised_method(conn: H3Connection, push_id: int) -> bytes | None:
    """The method of the request ``push_id`` promised, or None before its PUSH_PROMISE."""
    for name, value in conn._promised.get(push_id, ()):
        if name == b":method":
            return value
    return None


def push_streams_for(conn: H3Connection, push_id: int) -> list[RequestStream]:
    """Client: the push stream (at most one, §6.2.2) the server opened for ``push_id``,
    if it is still being read: not abandoned, its response not yet whole."""
    return [
        uni.request
        for uni in list(conn._incoming_uni.values())
        if uni.request is not None
        and uni.request.push_id == push_id
        and not uni.request.abandoned
        and uni.request.exchange.state is not MessageState.COMPLETE
    ]


def excluded_by_own_goaway(conn: H3Connection, push_id: int) -> bool:
    """Client: does the GOAWAY this client sent exclude ``push_id``? (RFC 9114 §5.2)"""
    return conn.is_client and conn.goaway_sent is not None and push_id >= conn.goaway_sent


def goaway_sent(conn: H3Connection) -> None:
    """Client: its GOAWAY excludes the pushes at or above its push ID (RFC 9114 §5.2).

    Each one promised is cancelled with CANCEL_PUSH (§7.2.3); a push stream already open
    for one, promised or not yet, is aborted with H3_REQUEST_CANCELLED. A push whose
    response has all arrived is left alone, and a push ID no PUSH_PROMISE has named yet
    gets no CANCEL_PUSH (a server treats that as H3_ID_ERROR, §7.2.3): its promise, when
    it comes, is cancelled then.
    """
    for push_id in sorted(set(conn._promised) | conn._push_streams_seen):
        if not excluded_by_own_goaway(conn, push_id) or push_id in conn._cancelled_pushes:
            continue
        push_streams = push_streams_for(conn, push_id)
        if push_id in conn._push_streams_seen and not push_streams:
            continue  # its response has all arrived, or was abandoned: nothing to cancel
        if push_id in conn._promised:
            exclude_push(conn, push_id)
        else:
            for push_stream in push_streams:
                refuse_push_stream(conn, push_stream, excluded_by_goaway_rule(push_stream))


def exclude_push(conn: H3Connection, push_id: int) -> None:
    """Client: cancel a promised push its own GOAWAY excludes, and abort its push stream."""
    assert conn.goaway_sent is not None
    cancel_push(conn, push_id, (f"this client's GOAWAY {conn.goaway_sent} excludes it", "9114#5.2"))
    for push_stream in push_streams_for(conn, push_id):
        refuse_push_stream(conn, push_stream, excluded_by_goaway_rule(push_stream))


def excluded_by_goaway_rule(stream: RequestStream) -> tuple[str, str]:
    """Why a push stream the client's own GOAWAY excludes is aborted (RFC 9114 §5.2)."""
    return (
        f"push stream {stream.stream_id} fulfils push ID {stream.push_id}, which this"
        " client's GOAWAY excludes; its response is not used",
        "9114#5.2",
    )


def promise_reached_push_stream(conn: H3Connection, stream: RequestStream) -> None:
    """Client: a push stream that came before its PUSH_PROMISE learns the promised request
    (RFC 9114 §4.6), whose method decides whether the response may have content.

    Deliberate simplification of RFC 9114 §4.6, which lets a client buffer a push stream
    until its promise arrives: h3learn reads it at once, as a response to GET. A promise
    of HEAD that arrives later makes DATA already read malformed (RFC 9110 §6.4.1), and
    a Content-Length no longer needs DATA to match; a push stream that already ended was
    checked as a response to GET.
    """
    if stream.request_method is not None or stream.abandoned:
        return
    assert stream.push_id is not None
    stream.request_method = promised_method(conn, stream.push_id)
    if stream.content is None or stream.exchange.state is MessageState.COMPLETE:
        return
    if stream.request_method == HEAD:
        try:
            stream.content = stream.content.as_response_to_head()
        except MalformedMessage as error:
            error_handling.stream_error(conn, error.as_stream_error(stream.stream_id))


def push_stream_opened(conn: H3Connection, stream: IncomingUniStream, header: StreamHeader) -> None:
    """Client: the server opened a push stream for ``header.push_id`` (§6.2.2)."""
    check_push_stream_opener(conn, stream.stream_id)
    push_id = header.push_id
    assert push_id is not None
    check_push_id_allowed(conn, push_id, f"push stream {stream.stream_id}", "9114#4.6")
    if push_id in conn._push_streams_seen:
        raise H3ConnectionError(
            ErrorCode.H3_ID_ERROR,
            f"push ID {push_id} used by a second push stream ({stream.stream_id})",
            "9114#6.2.2",
        )
    conn._push_streams_seen.add(push_id)
    stream.request = RequestStream(
        stream_id=stream.stream_id,
        exchange=MessageExchange(stream.stream_id, is_push=True),
        parser=FrameParser(record=conn.recorder.enabled),
        push_id=push_id,
        end_sent=True,
        request_method=promised_method(conn, push_id),
    )
    if excluded_by_own_goaway(conn, push_id):
        refuse_push_stream(conn, stream.request, excluded_by_goaway_rule(stream.request))
    elif push_id in conn._cancelled_pushes:
        refuse_push_stream(conn, stream.request)


def refuse_push_stream(
    conn: H3Connection, stream: RequestStream, why: tuple[str, str] | None = None
) -> None:
    """RFC 9114 §7.2.3: a push stream for a cancelled push is not read (aborted with
    H3_REQUEST_CANCELLED); ``why``: (rule, RFC section) when it is not that one."""
    rule, rfc = why or (
        f"push stream {stream.stream_id} fulfils push ID {stream.push_id}, which was"
        " cancelled; its response is not used",
        "9114#7.2.3",
    )
    error_handling.stream_error(
        conn,
        H3StreamError(ErrorCode.H3_REQUEST_CANCELLED, rule, rfc, stream_id=stream.stream_id),
    )


def max_push_id_received(conn: H3Connection, push_id: int) -> None:
    """Server: the client allows push IDs up to ``push_id`` (§7.2.7)."""
    if conn.max_push_id is not None and push_id < conn.max_push_id:
        raise H3ConnectionError(
            ErrorCode.H3_ID_ERROR,
            f"MAX_PUSH_ID {push_id} is smaller than the previous {conn.max_push_id}",
            "9114#7.2.7",
        )
    conn.max_push_id = push_id


def cancel_push_received(conn: H3Connection, push_id: int) -> None:
    """The peer's CANCEL_PUSH (§7.2.3): the push will not be used, or not sent.

    A server whose push stream for it is still sending cuts it off with RESET_STREAM
    H3_REQUEST_CANCELLED, as §7.2.3 asks (SHOULD): the client does not want the rest.
    """
    if conn.is_client:
        check_push_id_allowed(conn, push_id, "CANCEL_PUSH", "9114#7.2.3")
    elif push_id not in conn._promised:
        raise H3ConnectionError(
            ErrorCode.H3_ID_ERROR,
            f"CANCEL_PUSH for push ID {push_id}, which no PUSH_PROMISE has used",
            "9114#7.2.3",
        )
    conn._cancelled_pushes.add(push_id)
    if not conn.is_client:
        sending = [s for s in conn._requests.values() if s.push_id == push_id and not s.end_sent]
        for stream in sending:
            why = f"the client cancelled push {push_id} (CANCEL_PUSH) while its stream was open"
            conn.trace.stream_error(
                stream.stream_id, ErrorCode.H3_REQUEST_CANCELLED, why, "9114#7.2.3", "sent"
            )
            error_handling.abandon(conn, stream, ErrorCode.H3_REQUEST_CANCELLED, why, "9114#7.2.3")
    conn._events.append(PushCancelled(push_id=push_id))
