"""What the sans-IO HTTP/3 connection asks its QUIC transport to do (RFC 9114 §6, §8).

The connection never touches a socket. Each call that changes its state queues actions;
the transport takes them with `H3Connection.actions_to_send` and carries them out on the
QUIC connection, in order: stream data (RFC 9000 §2), RESET_STREAM and STOP_SENDING
(RFC 9000 §2.4, used for stream errors), and CONNECTION_CLOSE (RFC 9000 §10.2, used for
connection errors).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SendStreamData:
    """Write ``data`` on stream ``stream_id`` (opening it if new); end it if ``end_stream``."""

    stream_id: int
    data: bytes
    end_stream: bool = False


@dataclass(frozen=True, slots=True)
class ResetStream:
    """Abandon sending on a stream with an application error code (RESET_STREAM)."""

    stream_id: int
    error_code: int


@dataclass(frozen=True, slots=True)
class StopSending:
    """Ask the peer to stop sending on a stream (STOP_SENDING)."""

    stream_id: int
    error_code: int


@dataclass(frozen=True, slots=True)
class CloseConnection:
    """Close the QUIC connection with an application error code (CONNECTION_CLOSE)."""

    error_code: int
    reason: str


Action = SendStreamData | ResetStream | StopSending | CloseConnection
