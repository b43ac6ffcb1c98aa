"""HTTP/3 over a real QUIC connection: h3learn's H3Connection on aioquic (RFC 9114 §3.3).

RFC 9114 §3.3 puts HTTP/3 on a QUIC connection negotiated with the ALPN token "h3", and
§6 maps everything it sends onto QUIC streams (RFC 9000 §2). The sans-IO `H3Connection`
never sees QUIC; aioquic's `QuicConnection` knows nothing of HTTP/3. `H3OverQuic` sits
between them and only translates, in both directions:

    aioquic event (quic/events.py)          H3Connection call
    StreamDataReceived                  ->  receive_stream_data(stream_id, data, end_stream)
    StreamReset      (RESET_STREAM)     ->  receive_stream_reset(stream_id, error_code)
    StopSendingReceived (STOP_SENDING)  ->  receive_stop_sending(stream_id, error_code)
    ConnectionTerminated                ->  connection_closed(error_code, reason)
    HandshakeCompleted                  ->  handshake_completed(early_data_accepted)
                                            (and recorded: ALPN, cipher suite, QUIC version)

    H3Connection action (h3/actions.py)     QuicConnection call
    SendStreamData                      ->  send_stream_data(stream_id, data, end_stream)
    ResetStream                         ->  reset_stream(stream_id, error_code)
    StopSending                         ->  stop_stream(stream_id, error_code)
    CloseConnection                     ->  close(error_code=..., reason_phrase=...)

Stream IDs need no translation: `H3Connection` numbers its streams the QUIC way
(RFC 9000 §2.1: client bidirectional 0, 4, 8, ...; client unidirectional 2, 6, 10, ...;
server unidirectional 3, 7, 11, ...), and aioquic creates a locally-initiated stream the
first time data is sent on it. The adapter calls `H3Connection.initiate` when it is made,
so SETTINGS and the QPACK streams are queued at once and aioquic sends them when it can.
When it can depends on when the adapter is made: a server should make it once TLS has
agreed on "h3" (as transport/udp_server.py and transport/quic_memory_sides.py do). Made before
aioquic has read the client's transport parameters, the streams exceed the stream limits
aioquic assumes until then and wait for the end of the handshake, so SETTINGS leave one
round trip late and a peer such as nghttp3 encodes its first requests without the dynamic
table.

QUIC flow control (RFC 9000 §4) is aioquic's, but QPACK must respect it: its encoder writes
no instruction that the encoder stream's credit does not cover (RFC 9204 §2.1.3). So the
adapter tells the connection the credit (`flow_control_credit_updated`, read from aioquic
by quic_flow_control.py) after every batch of actions it hands to aioquic and before every
event it passes on, so the connection knows it before it encodes a field section.

When the recorder is enabled the adapter records what moved, so a trace shows the QUIC
layer under the HTTP/3 frames: ``transport`` events ``stream_data_sent`` /
``stream_data_received`` (``stream_id``, ``length``, ``end_stream``) and
``handshake_completed`` (``alpn``, ``cipher_suite``, ``tls_version``, ``quic_version``),
and ``send_limit_raised`` when, after the handshake, the peer raises the encoder stream's
limit or the connection's.
"""

from __future__ import annotations

import contextlib
from typing import Any

from aioquic.quic.connection import QuicConnection
from aioquic.quic.events import (
    ConnectionTerminated,
    HandshakeCompleted,
    QuicEvent,
    StopSendingReceived,
    StreamDataReceived,
    StreamReset,
)
from aioquic.quic.packet import QuicErrorCode, QuicFrameType

from h3learn.events import NullRecorder, Recorder
from h3learn.h3.actions import CloseConnection, ResetStream, SendStreamData, StopSending
from h3learn.h3.connection import H3Connection
from h3learn.h3.http_events import H3Event
from h3learn.transport.quic_flow_control import SendLimits, record_raised_limits, send_limits

#: RFC 9114 §3.1: the ALPN token that selects HTTP/3 in the TLS handshake.
H3_ALPN = "h3"


class H3OverQuic:
    """Carries one H3Connection over one aioquic QuicConnection (RFC 9114 §3.3, RFC 9000 §2)."""

    def __init__(
        self, quic: QuicConnection, h3: H3Connection, recorder: Recorder | None = None
    ) -> None:
        if quic.configuration.is_client != h3.is_client:
            raise ValueError("the QUIC connection and the HTTP/3 connection disagree on roles")
        self.quic = quic
        self.h3 = h3
        self.recorder: Recorder = recorder if recorder is not None else NullRecorder()
        self.handshake_done = False
        #: The encoder stream's and the connection's limits when last reported (from the
        #: handshake on: raises before it are the first limits, not news).
        self._limits: SendLimits | None = None
        #: What `report_flow_control_credit` last told the connection, and whether the
        #: handshake was done then (a report that would repeat it is skipped).
        self._last_report: tuple[SendLimits, bool] | None = None
        h3.initiate()
        self.transmit_actions()

    def report_flow_control_credit(self) -> None:
        """Tell the HTTP/3 connection what QUIC flow control lets it send now (RFC 9204 §2.1.3).

        Called after every batch of actions and before every event; a caller about to send
        a request outside those (transport/udp_client.py) calls it first.
        """
        stream_id = self.h3.encoder.encoder_stream_id
        if stream_id is None:
            return
        limits = send_limits(self.quic, stream_id)
        if (limits, self.handshake_done) == self._last_report:
            return  # the connection knows this credit already, and no limit was raised
        self._last_report = (limits, self.handshake_done)
        if self.handshake_done:
            if self._limits is not None:
                record_raised_limits(self.recorder, self.endpoint, stream_id, self._limits, limits)
            self._limits = limits
        self.h3.flow_control_credit_updated(
            encoder_stream=limits.stream_credit, connection=limits.connection_credit
        )

    @property
    def endpoint(self) -> str:
        return "client" if self.h3.is_client else "server"

    # -- QUIC -> HTTP/3 ------------------------------------------------------------------

    def quic_event_received(self, event: QuicEvent) -> list[H3Event]:
        """Hand one aioquic event to the HTTP/3 connection; returns what it meant.

        Call `transmit_actions` afterwards: the HTTP/3 connection may have answered (a
        QPACK Section Acknowledgment, a stream error).
        """
        self.report_flow_control_credit()
        if isinstance(event, StreamDataReceived):
            record_stream_data(
                self.recorder,
                self.endpoint,
                "received",
                event.stream_id,
                len(event.data),
                event.end_stream,
            )
            return self.h3.receive_stream_data(event.stream_id, event.data, event.end_stream)
        if isinstance(event, StreamReset):
            return self.h3.receive_stream_reset(event.stream_id, event.error_code)
        if isinstance(event, StopSendingReceived):
            return self.h3.receive_stop_sending(event.stream_id, event.error_code)
        if isinstance(event, ConnectionTerminated):
            # int(): for closes it makes itself, aioquic gives its own QuicErrorCode enum.
            if is_idle_timeout(event):
                return self.h3.connection_closed(
                    int(event.error_code), idle_timeout=agreed_idle_timeout(self.quic)
                )
            return self.h3.connection_closed(
                int(event.error_code), close_reason(event), transport=event.frame_type is not None
            )
        if isinstance(event, HandshakeCompleted):
            self.handshake_done = True
            record_handshake(self.recorder, self.endpoint, self.quic, event)
            self.h3.handshake_completed(early_data_accepted=event.early_data_accepted)
        # Connection IDs, pings, datagrams and ALPN alone mean nothing to HTTP/3 here.
        return []

    # -- HTTP/3 -> QUIC ------------------------------------------------------------------

    def _sends_early_data(self) -> bool:
        """Does data handed to QUIC now leave in 0-RTT packets (RFC 9001 §4.6.1)?

        Before the handshake ends, a client resuming with a ticket that allows early
        data sends stream data under the 0-RTT keys.
        """
        if not self.h3.is_client or self.handshake_done:
            return False
        ticket = self.quic.configuration.session_ticket
        return ticket is not None and ticket.max_early_data_size is not None

    def transmit_actions(self) -> None:
        """Carry out, in order, everything the HTTP/3 connection has asked QUIC to do."""
        for action in self.h3.actions_to_send():
            if isinstance(action, SendStreamData):
                self.quic.send_stream_data(action.stream_id, action.data, action.end_stream)
                record_stream_data(
                    self.recorder,
                    self.endpoint,
                    "sent",
                    action.stream_id,
                    len(action.data),
                    action.end_stream,
                    early=self._sends_early_data(),
                )
            elif isinstance(action, ResetStream):
                self.quic.reset_stream(action.stream_id, action.error_code)
            elif isinstance(action, StopSending):
                # aioquic forgets a stream once both directions are finished (and refuses
                # to stop it); a STOP_SENDING for it would have nothing left to stop.
                with contextlib.suppress(ValueError):
                    self.quic.stop_stream(action.stream_id, action.error_code)
            elif isinstance(action, CloseConnection):
                self.quic.close(error_code=action.error_code, reason_phrase=action.reason)
        self.report_flow_control_credit()


def is_idle_timeout(event: ConnectionTerminated) -> bool:
    """Did QUIC drop the connection because nothing arrived for its idle timeout?

    RFC 9000 §10.1: the connection is then closed silently, with no CONNECTION_CLOSE and so
    no error code. aioquic still reports it as a ConnectionTerminated, made up by itself
    with the transport code INTERNAL_ERROR, the frame type PADDING and the reason
    "Idle timeout"; the three together mean an idle timeout.
    """
    return (
        event.error_code == QuicErrorCode.INTERNAL_ERROR
        and event.frame_type == QuicFrameType.PADDING
        and event.reason_phrase == "Idle timeout"
    )


def agreed_idle_timeout(quic: QuicConnection) -> float:
    """The idle timeout in force: the smaller of the two endpoints' max_idle_timeout
    transport parameters (RFC 9000 §10.1)."""
    local = quic.configuration.idle_timeout
    # aioquic keeps the peer's max_idle_timeout in a private attribute.
    remote: float | None = quic._remote_max_idle_timeout
    return local if remote is None else min(local, remote)


def close_reason(event: ConnectionTerminated) -> str:
    """The reason phrase, saying so when QUIC itself (not HTTP/3) closed the connection.

    aioquic reports a transport close (CONNECTION_CLOSE type 0x1c, whose code is a QUIC
    transport error code, RFC 9000 §20.1) with the frame type that caused it, and an
    application close (type 0x1d, which carries HTTP/3 error codes) with none
    (RFC 9000 §19.19). An idle timeout is told apart before (`is_idle_timeout`).
    """
    if event.frame_type is None:
        return event.reason_phrase
    return (
        f"closed by QUIC, not HTTP/3 (transport error code {event.error_code:#x},"
        f" RFC 9000 §20.1): {event.reason_phrase}"
    )


# -- recording (docs/events.md, category "transport") ------------------------------------


def _peer(endpoint: str) -> str:
    return "server" if endpoint == "client" else "client"


def record_stream_data(
    recorder: Recorder,
    endpoint: str,
    direction: str,
    stream_id: int,
    length: int,
    end_stream: bool,
    *,
    early: bool = False,
) -> None:
    """Record ``stream_data_sent`` or ``stream_data_received`` (``direction``).

    ``early``: sent before the handshake ended, in 0-RTT (said in the summary).
    """
    if not recorder.enabled:
        return
    fin = ", end of stream" if end_stream else ""
    if early:
        fin += ", in 0-RTT before the handshake ends"
    if direction == "sent":
        summary = f"{endpoint} → {_peer(endpoint)}: QUIC stream {stream_id}, {length} bytes{fin}"
    else:
        summary = f"{endpoint} receives QUIC stream {stream_id}: {length} bytes{fin}"
    recorder.record(
        category="transport",
        name=f"stream_data_{direction}",
        stream_id=stream_id,
        data={"stream_id": stream_id, "length": length, "end_stream": end_stream},
        rfc=("9000#2.2",),
        summary=summary,
    )


def record_handshake(
    recorder: Recorder, endpoint: str, quic: QuicConnection, event: HandshakeCompleted
) -> None:
    """Record ``handshake_completed``: what TLS 1.3 inside QUIC agreed (RFC 9001 §4.1)."""
    if not recorder.enabled:
        return
    data: dict[str, Any] = {
        "alpn": event.alpn_protocol,
        # RFC 9001 §4.2: QUIC is used with TLS 1.3 only.
        "tls_version": "TLS 1.3",
        "cipher_suite": None,
        # aioquic keeps the negotiated version only in a private attribute.
        "quic_version": None if quic._version is None else f"{quic._version:#010x}",
        "early_data_accepted": event.early_data_accepted,
        "session_resumed": event.session_resumed,
    }
    key_schedule = quic.tls.key_schedule
    if key_schedule is not None:
        data["cipher_suite"] = key_schedule.cipher_suite.name
    recorder.record(
        category="transport",
        name="handshake_completed",
        stream_id=None,
        data=data,
        rfc=("9001#4.1", "9114#3.2"),
        summary=(
            f"{endpoint}: QUIC handshake complete, ALPN {event.alpn_protocol!r},"
            f" {data['tls_version']} {data['cipher_suite']}"
        ),
    )
