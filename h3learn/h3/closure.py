"""RFC 9114 §5: connection closure: GOAWAY (§5.2), an immediate close (§5.3), and a close
this endpoint is told of (§5.1 idle, §5.4 by QUIC or the peer).

A graceful shutdown (§5.2) begins with GOAWAY on the control stream. A server's carries the
lowest request stream ID it will not process; a client's the lowest push ID it does not
want. Both endpoints keep what is below it and refuse anything new at or above it, and a
later GOAWAY may lower the identifier, never raise it:

    server ── GOAWAY(8) ──▶ client     requests on streams 0 and 4 are still answered;
                                       one on stream 8 or later was not processed, and may
                                       be retried on another connection (it is "rejected")

An immediate close (§5.3) is QUIC's CONNECTION_CLOSE with an HTTP/3 error code: `close`
when the application asks, `terminate` after a connection error (error_handling.py).
When the QUIC connection ends without a word from HTTP/3 (the peer closed it, QUIC found
a transport error, or nothing arrived for the idle timeout), `connection_closed` records
which, and on a client lists the requests whose fate is unknown (§5.4).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from h3learn.h3 import error_handling, push
from h3learn.h3.actions import CloseConnection
from h3learn.h3.errors import (
    ErrorCode,
    H3ConnectionError,
    H3StreamError,
    H3UsageError,
    code_name,
    interpret_received_code,
    registered_code,
    transport_code_name,
)
from h3learn.h3.frames import GoawayFrame
from h3learn.h3.http_events import ConnectionTerminated, GoawayReceived, H3Event, StreamReset
from h3learn.h3.stream_state import RequestStream
from h3learn.h3.stream_types import CLIENT_BIDI, STREAM_ID_STEP

if TYPE_CHECKING:
    from h3learn.h3.connection import H3Connection

#: RFC 9114 §5.2: the largest GOAWAY identifiers, for "stop sending new requests / pushes".
MAX_CLIENT_BIDI_STREAM_ID = (1 << 62) - 4
MAX_PUSH_ID_VALUE = (1 << 62) - 1


def send_goaway(conn: H3Connection, identifier: int | None = None) -> int:
    """Start a graceful shutdown; returns the identifier sent.

    A server sends the lowest request stream ID it will not process (by default the one
    after the last request it accepted); a client sends a push ID (by default the next
    one not yet promised). Later GOAWAYs may lower the identifier, never raise it.
    """
    if identifier is None:
        if conn.is_client:
            identifier = max(conn._promised, default=-1) + 1
        elif conn._largest_processed_request < 0:
            identifier = 0  # no request processed yet: RFC 9114 §5.2 allows zero
        else:
            identifier = conn._largest_processed_request + STREAM_ID_STEP
    if not conn.is_client and identifier % STREAM_ID_STEP != CLIENT_BIDI:
        raise H3UsageError(
            f"a server's GOAWAY carries a client-initiated bidirectional stream ID, not"
            f" {identifier} (RFC 9114 §7.2.6)"
        )
    if conn.goaway_sent is not None and identifier > conn.goaway_sent:
        raise H3UsageError("a GOAWAY identifier may never increase (RFC 9114 §5.2)")
    excluded = [] if conn.is_client else requests_from(conn, identifier)
    answered = [stream.stream_id for stream in excluded if stream.headers_sent]
    if answered:
        raise H3UsageError(
            f"the response on stream {answered[0]} has begun, so its request was processed:"
            f" a GOAWAY cannot exclude it with {identifier} (RFC 9114 §5.2)"
        )
    conn.goaway_sent = identifier
    conn._send_control_frame(GoawayFrame(identifier))
    if conn.is_client:
        push.goaway_sent(conn)  # RFC 9114 §5.2: the pushes it excludes are cancelled
    for stream in excluded:
        # RFC 9114 §5.2: requests the GOAWAY excludes are cancelled explicitly, as
        # rejected (never processed), so that the client may retry them elsewhere.
        error_handling.stream_error(
            conn,
            H3StreamError(
                ErrorCode.H3_REQUEST_REJECTED,
                f"GOAWAY {identifier} excludes the request on stream {stream.stream_id},"
                " which will not be processed",
                "9114#5.2",
                stream_id=stream.stream_id,
            ),
        )
    return identifier


def requests_from(conn: H3Connection, identifier: int) -> list[RequestStream]:
    """Server: the open request streams at or past a GOAWAY identifier."""
    return [
        stream
        for stream in conn._requests.values()
        if stream.push_id is None and stream.stream_id >= identifier and not stream.abandoned
    ]


def goaway_received(conn: H3Connection, identifier: int) -> None:
    """The peer's GOAWAY (RFC 9114 §5.2, §7.2.6): nothing new at or past ``identifier``."""
    if conn.is_client and identifier % STREAM_ID_STEP != CLIENT_BIDI:
        raise H3ConnectionError(
            ErrorCode.H3_ID_ERROR,
            f"GOAWAY carries {identifier}, which is not a client-initiated bidirectional stream ID",
            "9114#7.2.6",
        )
    if conn.goaway_received is not None and identifier > conn.goaway_received:
        raise H3ConnectionError(
            ErrorCode.H3_ID_ERROR,
            f"GOAWAY {identifier} is larger than the previous GOAWAY {conn.goaway_received}",
            "9114#5.2",
        )
    conn.goaway_received = identifier
    conn._events.append(GoawayReceived(id=identifier))
    if conn.is_client:
        # RFC 9114 §5.2: requests at or past the identifier will not be processed; the
        # application may retry them on another connection.
        # Streams already reset were reported then; they are not reported twice.
        rejected = [
            s for s in conn._requests.values() if s.stream_id >= identifier and not s.abandoned
        ]
        for stream in rejected:
            error_handling.abandon(
                conn,
                stream,
                ErrorCode.H3_REQUEST_CANCELLED,
                f"the server's GOAWAY {identifier} says this request will not be processed",
            )
            conn._events.append(
                StreamReset(
                    stream_id=stream.stream_id,
                    error_code=ErrorCode.H3_REQUEST_REJECTED,
                    retry_safe=True,
                    rule=f"its GOAWAY {identifier} excludes this request",
                    rfc="9114#5.2",
                )
            )


def close(conn: H3Connection, error_code: int = ErrorCode.H3_NO_ERROR, reason: str = "") -> None:
    """Close the connection (RFC 9114 §5.3)."""
    if conn.closed:
        return
    rule = reason or "the application closed the connection"
    conn.trace.record(
        "connection_closed" if error_code == ErrorCode.H3_NO_ERROR else "connection_error",
        None,
        {
            "code": error_code,
            "code_name": code_name(error_code),
            "rule": rule,
            "rfc": "9114#5.3",
            "direction": "sent",
        },
        rfc=("9114#5.3",),
        summary=f"{conn.trace.me} closes the connection: {code_name(error_code)}: {rule}",
    )
    terminate(conn, error_code, reason)


def terminate(conn: H3Connection, error_code: int, reason: str) -> None:
    """Ask QUIC for CONNECTION_CLOSE and tell the application; nothing more is read."""
    conn.closed = True
    conn.close_code = error_code
    conn._actions.append(CloseConnection(error_code, reason))
    conn._events.append(ConnectionTerminated(error_code=error_code, reason=reason, by_peer=False))


def connection_closed(
    conn: H3Connection,
    error_code: int,
    reason: str = "",
    *,
    transport: bool = False,
    idle_timeout: float | None = None,
) -> list[H3Event]:
    """The QUIC connection ended: the peer closed it, or QUIC itself did.

    ``transport`` says the code is a QUIC transport error code (RFC 9000 §20.1: a
    CONNECTION_CLOSE of type 0x1c, a TLS failure) rather than an HTTP/3 one (type 0x1d,
    RFC 9114 §8). A close with no error is recorded as ``connection_closed``, anything
    else as ``connection_error``. ``idle_timeout`` (seconds) says QUIC dropped the
    connection because nothing arrived for that long (RFC 9114 §5.1, RFC 9000 §10.1):
    nothing was sent or received, so ``error_code`` (whatever the QUIC stack reports)
    means nothing; it is recorded as ``connection_closed`` with ``code_name`` "idle
    timeout".

    A client lists the requests still waiting for their response (``unanswered_requests``):
    any of them might have been processed, so none is known to be safe to retry
    (RFC 9114 §5.4). Those a GOAWAY excluded were reported as rejected when it came.
    """
    if not conn.closed:
        conn.closed = True
        conn.close_code = error_code
        data, sections, summary = describe_close(conn, error_code, reason, transport, idle_timeout)
        if conn.is_client:
            unanswered = sorted(s.stream_id for s in conn._requests.values() if s.push_id is None)
            data["unanswered_requests"] = unanswered
            if unanswered:
                sections += ("9114#5.4",)
                streams = ", ".join(str(stream_id) for stream_id in unanswered)
                summary += (
                    f"; no response came on stream {streams}, which may have been processed"
                    " or not: it is not known to be safe to retry"
                )
        clean = idle_timeout is not None or (
            error_code == 0 if transport else closes_without_error(error_code)
        )
        conn.trace.record(
            "connection_closed" if clean else "connection_error",
            None,
            data,
            rfc=sections,
            summary=summary,
        )
        conn._events.append(
            ConnectionTerminated(error_code=error_code, reason=data["rule"], by_peer=True)
        )
    return conn._take_events()


def describe_close(
    conn: H3Connection, error_code: int, reason: str, transport: bool, idle_timeout: float | None
) -> tuple[dict[str, Any], tuple[str, ...], str]:
    """The data, sections and summary of a close this endpoint was told of."""
    if idle_timeout is not None:
        rule = reason or (
            f"nothing arrived for {idle_timeout:g} s, the idle timeout both endpoints agreed"
            " on; no CONNECTION_CLOSE is sent"
        )
        data = {
            "code": None,
            "code_name": "idle timeout",
            "layer": "quic",
            "rule": rule,
            "rfc": "9000#10.1",
            "direction": "received",
            "idle_timeout_ms": round(idle_timeout * 1000),
        }
        summary = f"{conn.trace.me}: QUIC dropped the idle connection: {rule}"
        return data, ("9114#5.1", "9000#10.1"), summary
    name = transport_code_name(error_code) if transport else code_name(error_code)
    who = "QUIC closed the connection" if transport else "peer closed the connection"
    sections: tuple[str, ...] = ("9000#10.2",) if transport else ("9114#5.3",)
    shown = name
    if not transport and registered_code(error_code) is None:
        # RFC 9114 §8: a code this endpoint does not know counts as H3_NO_ERROR.
        shown += ", which counts as H3_NO_ERROR"
        sections += ("9114#8",)
    data = {
        "code": error_code,
        "code_name": name,
        "layer": "quic" if transport else "http3",
        "rule": reason,
        "rfc": "9000#20.1" if transport else "9114#8",
        "direction": "received",
    }
    summary = f"{conn.trace.me}: {who}: {shown}" + (f" ({reason})" if reason else "")
    return data, sections, summary


def closes_without_error(error_code: int) -> bool:
    """An HTTP/3 close that reports no error: H3_NO_ERROR, or a code this endpoint does not
    know, which RFC 9114 §8 makes equivalent to it (aioquic's default close sends 0x0)."""
    return interpret_received_code(error_code) is ErrorCode.H3_NO_ERROR
