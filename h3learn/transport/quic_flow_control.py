"""QUIC flow control as aioquic keeps it (RFC 9000 §4.1), for QPACK's encoder (RFC 9204 §2.1.3).

A QUIC sender may write only as far as the peer allows, on each stream (the peer's
MAX_STREAM_DATA for it) and on all streams together (MAX_DATA). aioquic enforces both
limits by holding back what does not fit; it does not publish how much room is left. The
QPACK encoder needs exactly that number, so that it never starts an encoder-stream
instruction the credit does not cover (RFC 9204 §2.1.3). `send_limits` reads it from
aioquic's state; `H3OverQuic` (quic.py) hands it to `H3Connection.flow_control_credit_updated`
and records, with `record_raised_limits`, when the peer raises one of the two limits that
matter to the encoder.

aioquic's private names read here (tests/transport/test_quic_flow_control.py fails loudly
if one changes or stops meaning what it meant):

    QuicConnection._streams               stream ID -> QuicStream, every stream not yet
                                          discarded
    QuicConnection._remote_max_data       the peer's limit for the connection (MAX_DATA)
    QuicConnection._remote_max_data_used  stream bytes sent against it, counted as STREAM
                                          frames are written into packets
    QuicStreamSender._buffer_stop         the offset after the last byte written to a stream

and public ones: QuicStream.max_stream_data_remote (the peer's MAX_STREAM_DATA for the
stream), QuicStreamSender.highest_offset (the end of what was sent) and .buffer_is_empty.
"""

from __future__ import annotations

from dataclasses import dataclass

from aioquic.quic.connection import QuicConnection
from aioquic.quic.stream import QuicStream

from h3learn.events import Recorder


@dataclass(frozen=True, slots=True)
class SendLimits:
    """One stream's and the connection's flow-control limits, and what was written against them.

    ``written`` counts every byte handed to QUIC, sent or still waiting for credit, so a
    byte waiting is not counted as room. A limit is an absolute offset (RFC 9000 §4.1):
    the stream may reach byte ``stream_limit``; all streams together ``connection_limit``.
    """

    stream_limit: int
    stream_written: int
    connection_limit: int
    connection_written: int

    @property
    def stream_credit(self) -> int:
        return self.stream_limit - self.stream_written

    @property
    def connection_credit(self) -> int:
        return self.connection_limit - self.connection_written


def _unsent(stream: QuicStream) -> int:
    """Bytes written to the stream that QUIC has not sent yet (0 once it was reset: its
    final size is then what was sent, RFC 9000 §4.5)."""
    sender = stream.sender
    if sender.buffer_is_empty:
        return 0
    return max(0, sender._buffer_stop - sender.highest_offset)


def send_limits(quic: QuicConnection, stream_id: int) -> SendLimits:
    """The limits for stream ``stream_id`` and the connection, and the bytes written.

    A stream aioquic no longer has (finished and discarded) may carry nothing more.
    """
    streams: dict[int, QuicStream] = quic._streams
    # Called before every event and after every batch of actions, over every open stream:
    # streams with nothing waiting (most of them) are passed over without a call.
    unsent = sum(
        _unsent(stream) for stream in streams.values() if not stream.sender.buffer_is_empty
    )
    connection_written = quic._remote_max_data_used + unsent
    stream = streams.get(stream_id)
    if stream is None:
        stream_limit = stream_written = 0
    else:
        stream_limit, stream_written = stream.max_stream_data_remote, stream.sender._buffer_stop
    return SendLimits(stream_limit, stream_written, quic._remote_max_data, connection_written)


def record_raised_limits(
    recorder: Recorder, endpoint: str, stream_id: int, before: SendLimits, now: SendLimits
) -> None:
    """Record ``send_limit_raised`` for each of the two limits the peer has raised since
    ``before`` (RFC 9000 §4.2): the stream's (MAX_STREAM_DATA), the connection's (MAX_DATA)."""
    if not recorder.enabled:
        return
    peer = "server" if endpoint == "client" else "client"
    raised = (
        ("MAX_STREAM_DATA", stream_id, before.stream_limit, now.stream_limit),
        ("MAX_DATA", None, before.connection_limit, now.connection_limit),
    )
    for frame, on_stream, previous, maximum in raised:
        if maximum <= previous:
            continue
        where = "the connection" if on_stream is None else f"QUIC stream {on_stream}"
        recorder.record(
            category="transport",
            name="send_limit_raised",
            stream_id=on_stream,
            data={
                "frame": frame,
                "stream_id": on_stream,
                "previous": previous,
                "maximum": maximum,
                "written": now.connection_written if on_stream is None else now.stream_written,
            },
            rfc=("9000#4.1", "9000#4.2"),
            summary=(
                f"{endpoint}: the {peer}'s {frame} lets {where} reach byte {maximum}"
                f" (was {previous})"
            ),
        )
