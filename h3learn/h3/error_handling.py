"""RFC 9114 §8: error handling, the one place a broken rule is turned into its consequence.

A rule is checked where it applies, deep inside frame parsing, the message state table or
QPACK, and a broken one raises `H3ConnectionError` or `H3StreamError` (errors.py) or a QPACK
error. Nothing catches them there. The connection reads everything the transport hands it
inside `guard`, which records the error and then either

- closes the connection (a *connection error*, RFC 9114 §8): CONNECTION_CLOSE with the code;
  a QPACK error becomes the connection error RFC 9204 §6 names, or
- ends the one stream (a *stream error*): `abandon` asks the peer to stop sending
  (STOP_SENDING, RFC 9000 §3.5) and stops this side's own sending (RESET_STREAM), and the
  rest of the connection carries on.

`send_stop_sending` and `send_reset_stream` are what QUIC is asked to do to one stream
(RFC 9000 §19.5, §19.4), recorded with the rule that led to them.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from h3learn.h3 import closure
from h3learn.h3.actions import ResetStream, StopSending
from h3learn.h3.errors import H3ConnectionError, H3Error, H3StreamError, code_name
from h3learn.h3.frames import HeadersFrame, PushPromiseFrame
from h3learn.h3.http_events import StreamReset
from h3learn.h3.stream_state import RequestStream
from h3learn.h3.stream_types import is_bidirectional
from h3learn.qpack.errors import DecompressionFailed, QpackError

if TYPE_CHECKING:
    from h3learn.h3.connection import H3Connection


@contextmanager
def guard(conn: H3Connection) -> Iterator[None]:
    """Run what the peer's bytes ask for; a broken rule ends a stream or the connection."""
    try:
        yield
    except H3StreamError as error:
        stream_error(conn, error)
    except H3ConnectionError as error:
        connection_error(conn, error)
    except DecompressionFailed as error:
        decompression_failed(conn, error)
    except QpackError as error:
        connection_error(conn, H3ConnectionError.from_qpack(error))


def decompression_failed(conn: H3Connection, error: DecompressionFailed) -> None:
    """A field section QPACK could not decode: its stream, or the whole connection."""
    if error.beyond_limit and error.stream_id is not None:
        # RFC 9204 §7.4: a field section past this endpoint's limits costs its stream.
        code, rule, rfc, stream_id = error.code, error.rule, error.rfc, error.stream_id
        stream_error(conn, H3StreamError(code, rule, rfc, stream_id=stream_id))
    else:
        connection_error(conn, H3ConnectionError.from_qpack(error))


def connection_error(conn: H3Connection, error: H3Error) -> None:
    """Record the error this endpoint found, and close the connection with its code."""
    conn.trace.record(
        "connection_error",
        None,
        {
            "code": error.code,
            "code_name": code_name(error.code),
            "rule": error.rule,
            "rfc": error.rfc,
            "direction": "sent",
        },
        rfc=(error.rfc,),
        summary=f"{conn.trace.me} closes the connection: {error}",
    )
    closure.terminate(conn, error.code, str(error))


def stream_error(conn: H3Connection, error: H3StreamError) -> None:
    """Record the error, end the one stream both ways, and tell the application."""
    conn.trace.stream_error(error.stream_id, error.code, error.rule, error.rfc, "sent")
    stream = stream_for(conn, error.stream_id)
    if stream is not None:
        abandon(conn, stream, error.code, error.rule, error.rfc)
    else:
        send_stop_sending(conn, error.stream_id, error.code, error.rule, error.rfc)
        if is_bidirectional(error.stream_id):
            send_reset_stream(conn, error.stream_id, error.code, error.rule, error.rfc)
    conn._events.append(
        StreamReset(
            stream_id=error.stream_id,
            error_code=error.code,
            by_peer=False,
            rule=error.rule,
            rfc=error.rfc,
        )
    )


def send_stop_sending(
    conn: H3Connection, stream_id: int, code: int, why: str, rfc: str = "9114#8"
) -> None:
    """Ask QUIC to send STOP_SENDING: the peer should stop sending on ``stream_id``."""
    conn._actions.append(StopSending(stream_id, code))
    conn.trace.stream_frame("stop_sending", stream_id, code, why, rfc, "sent")


def send_reset_stream(
    conn: H3Connection, stream_id: int, code: int, why: str, rfc: str = "9114#8"
) -> None:
    """Ask QUIC to send RESET_STREAM: this endpoint abandons sending on ``stream_id``."""
    conn._actions.append(ResetStream(stream_id, code))
    conn.trace.stream_frame("reset_stream", stream_id, code, why, rfc, "sent")


def stream_for(conn: H3Connection, stream_id: int) -> RequestStream | None:
    """The request stream, or (on a client) the incoming push stream, with this ID."""
    stream = conn._requests.get(stream_id)
    if stream is None and stream_id in conn._incoming_uni:
        stream = conn._incoming_uni[stream_id].request
    return stream


def cancel_qpack_references(conn: H3Connection, stream: RequestStream) -> None:
    """RFC 9204 §2.2.2.2: the stream will not be read on; the decoder decides whether the
    encoder is owed a Stream Cancellation, from what arrived: whether the stream ended, and
    the field sections of frames that arrived but were never decoded."""
    unread = [
        parsed.frame.field_section
        for parsed in stream.waiting
        if isinstance(parsed.frame, HeadersFrame | PushPromiseFrame)
    ]
    conn.decoder.cancel_stream(
        stream.stream_id, end_received=stream.end_received, unread_sections=unread
    )


def abandon(
    conn: H3Connection, stream: RequestStream, error_code: int, why: str, rfc: str = "9114#8"
) -> None:
    """Stop both directions of a stream after a stream error or cancellation.

    ``rfc`` is the rule that led to it, recorded with the STOP_SENDING and RESET_STREAM.
    """
    if stream.abandoned:
        return
    stream.abandoned = True
    cancel_qpack_references(conn, stream)
    if not stream.end_received:
        send_stop_sending(conn, stream.stream_id, error_code, why, rfc)
    if not stream.end_sent:
        send_reset_stream(conn, stream.stream_id, error_code, why, rfc)
        stream.end_sent = True
    conn._requests.pop(stream.stream_id, None)
    conn._finished_requests.add(stream.stream_id)
