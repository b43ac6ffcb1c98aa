"""RFC 9000 §10.1, §10.2, §19.19: how the servers' consoles name the way a connection closed.

A connection can end three ways, and `describe_close` tells them apart for the console line
of `h3learn h3-server`: an HTTP/3 error code in an application CONNECTION_CLOSE (type
0x1d), a QUIC transport error code in a transport CONNECTION_CLOSE (type 0x1c), or no code at
all, when QUIC drops a connection silent for its idle timeout (aioquic reports that as
INTERNAL_ERROR with frame type PADDING and the reason "Idle timeout").
"""

from __future__ import annotations

from aioquic.quic.events import ConnectionTerminated
from aioquic.quic.packet import QuicErrorCode, QuicFrameType

from h3learn.h3.errors import ErrorCode
from h3learn.transport.udp_shared import describe_close


def test_an_idle_timeout_is_named_as_such_not_as_a_transport_error() -> None:
    idle = ConnectionTerminated(
        error_code=QuicErrorCode.INTERNAL_ERROR,
        frame_type=QuicFrameType.PADDING,
        reason_phrase="Idle timeout",
    )
    described = describe_close(idle)
    assert described.startswith("idle timeout") and "10.1" in described
    assert "transport error" not in described


def test_a_transport_close_and_an_http3_close_name_their_codes() -> None:
    transport = ConnectionTerminated(
        error_code=QuicErrorCode.PROTOCOL_VIOLATION,
        frame_type=QuicFrameType.STREAM_BASE,
        reason_phrase="bad frame",
    )
    assert "transport error code 0xa" in describe_close(transport)
    http3 = ConnectionTerminated(
        error_code=ErrorCode.H3_NO_ERROR, frame_type=None, reason_phrase="done"
    )
    assert describe_close(http3) == "H3_NO_ERROR: done"
