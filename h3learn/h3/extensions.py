"""RFC 9114 §9: extension points, frames and streams of reserved or unknown types.

HTTP/3 grows by new frame types, stream types and settings. A peer that does not know one
must ignore it (§9): an unknown frame is skipped (§7.2.8), an unknown stream is read and
discarded (§6.2.3). Reserved values (``0x1f * N + 0x21``, "GREASE") exist so that peers are
kept honest about this: an endpoint sends them now and then, and nothing may break.

This endpoint sends such frames (`send_extension_frame`) and opens such streams
(`open_extension_stream`); one of its streams that the peer asks to stop is reset, a
reserved one with a reserved error code (§6.2.3). A reset of the peer's stream of that kind
is noted and otherwise ignored.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from h3learn.events import FieldSpan
from h3learn.h3 import error_handling, message_sending, unidirectional_streams
from h3learn.h3.actions import SendStreamData
from h3learn.h3.errors import H3UsageError, is_reserved
from h3learn.h3.frame_layout import frame_type_name, is_extension_frame_type
from h3learn.h3.frames import UnknownFrame
from h3learn.h3.stream_types import StreamHeader, known_stream_type, stream_type_section

if TYPE_CHECKING:
    from h3learn.h3.connection import H3Connection


def send_extension_frame(
    conn: H3Connection, stream_id: int, frame_type: int, payload: bytes = b""
) -> None:
    """Send a frame of a reserved or unknown type, which the peer must ignore (RFC 9114 §9).

    Reserved types (``0x1f * N + 0x21``, §7.2.8) exist for this: sending them now and
    then ("GREASE") keeps peers honest about ignoring what they do not know. Allowed on
    the control stream and on a request or push stream still open for sending.
    """
    conn._check_open()
    if not is_extension_frame_type(frame_type):
        raise H3UsageError(
            f"{frame_type_name(frame_type)} is not a reserved or unknown frame type"
            " (RFC 9114 §7.2.8)"
        )
    if stream_id != conn.control_stream_id:
        message_sending.sending_stream(conn, stream_id)
    conn._send_frame(stream_id, UnknownFrame(frame_type, payload))


def open_extension_stream(
    conn: H3Connection, stream_type: int, payload: bytes = b"", end_stream: bool = False
) -> int:
    """Open a unidirectional stream of a reserved or unknown type (RFC 9114 §6.2.3, §9).

    The payload has no structure. The peer reads the type and ignores the rest; if it
    asks this endpoint to stop (STOP_SENDING), `receive_stop_sending` resets the stream.
    """
    conn._check_open()
    if known_stream_type(stream_type) is not None:
        raise H3UsageError(f"stream type {stream_type:#x} is registered (RFC 9114 §6.2)")
    stream_id = unidirectional_streams.open_uni_stream(conn, StreamHeader(stream_type))
    if payload or end_stream:
        conn._actions.append(SendStreamData(stream_id, payload, end_stream=end_stream))
    if not end_stream:
        conn._extension_streams[stream_id] = stream_type
    if payload and conn.recorder.enabled:
        section = stream_type_section(stream_type)
        conn.trace.record(
            "raw_bytes_sent",
            stream_id,
            {"length": len(payload)},
            raw=payload,
            fields=(
                FieldSpan(
                    name="Stream Data",
                    offset=0,
                    length=len(payload),
                    value=payload.hex(" "),
                    explain="What follows the Stream Type of a reserved or unknown stream:"
                    " any bytes the sender likes, which the receiver discards.",
                    rfc=section,
                ),
            ),
            rfc=(section,),
            summary=f"{conn.trace.arrow}: {len(payload)} bytes on stream {stream_id}, which"
            " the peer will ignore",
        )
    return stream_id


def ignored_stream_reset(conn: H3Connection, stream_id: int, error_code: int) -> None:
    """The peer reset a stream of a reserved or unknown type: noted, nothing else.

    The code may be a reserved one, which means nothing; an unknown code counts as
    H3_NO_ERROR (RFC 9114 §8).
    """
    uni = conn._incoming_uni.get(stream_id)
    if uni is None or uni.header is None or uni.reset:
        return
    stream_type = uni.header.stream_type
    if known_stream_type(stream_type) is not None:
        return
    uni.reset = True
    conn.trace.stream_error(
        stream_id,
        error_code,
        f"the peer reset its {uni.header.describe()}, which this endpoint ignores",
        stream_type_section(stream_type),
        "received",
    )


def reset_extension_stream(conn: H3Connection, stream_id: int, stop_code: int) -> None:
    """Answer STOP_SENDING on a stream of a reserved or unknown type with RESET_STREAM.

    RFC 9000 §3.5 suggests copying the STOP_SENDING code. A reserved stream, though, is
    reset with H3_NO_ERROR or a reserved error code (RFC 9114 §6.2.3); this endpoint
    reuses the stream's own type value, which the same ``0x1f * N + 0x21`` formula
    reserves among the error codes (§8.1).
    """
    stream_type = conn._extension_streams.pop(stream_id)
    if is_reserved(stream_type):
        error_handling.send_reset_stream(
            conn,
            stream_id,
            stream_type,
            "the peer stopped reading this reserved stream; it is reset with a reserved"
            " error code, which means nothing",
            rfc="9114#6.2.3",
        )
    else:
        error_handling.send_reset_stream(
            conn,
            stream_id,
            stop_code,
            "the peer sent STOP_SENDING, which is answered with RESET_STREAM",
            rfc="9000#3.5",
        )
