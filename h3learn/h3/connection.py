"""RFC 9114 §3-§8: an HTTP/3 connection, sans-IO.

`H3Connection` is one endpoint (client or server) of HTTP/3 over a QUIC connection it never
sees. The transport hands it what QUIC delivered and carries out what it asks:

    receive_stream_data(stream_id, data, end_stream)  -> list of H3Events for the application
    receive_stream_reset(stream_id, error_code)       the peer sent RESET_STREAM
    receive_stop_sending(stream_id, error_code)       the peer sent STOP_SENDING
    connection_closed(error_code, reason)             the QUIC connection went away
    flow_control_credit_updated(encoder_stream, connection)
                                                      what QUIC flow control lets it send
    actions_to_send()                                 -> what QUIC must do (actions.py)

and the application calls `send_request`, `send_headers`, `send_data`, `send_push_promise`,
`create_push_stream`, `send_max_push_id`, `cancel_push`, `send_goaway`, `reset_stream`,
`close`, and for HTTP/3's extension points `send_extension_frame` and
`open_extension_stream` (reserved "GREASE" or unknown types the peer must ignore, §9).
Everything it sends and reads is recorded as trace events (docs/events.md).

Theory of operation. This module holds the connection's state and its public methods; each
part of the protocol is a module of its own, with the section it implements, whose
functions take the connection as their first argument:

    unidirectional_streams.py  §6.2, §6.2.1, RFC 9204 §4.2: the control and QPACK streams
    request_streams.py         §6.1: the request streams, opened, accepted and forgotten
    message_sending.py         §4.1: the message this endpoint sends on one
    message_receiving.py       §4.1, RFC 9204 §2.2.1: the message it receives on one
    push.py                    §4.6, §7.2.3, §7.2.5, §7.2.7: server push
    cancellation.py            §4.1.1: RESET_STREAM and STOP_SENDING, both ways
    closure.py                 §5: GOAWAY, closing, a close this endpoint is told of
    extensions.py              §9, §6.2.3: reserved and unknown frame and stream types
    early_data.py              §7.2.4.2: remembered settings and 0-RTT
    error_handling.py          §8: the one place a broken rule is turned into its consequence
    deliberate.py              §8: the teaching facility that breaks rules on purpose
    recording.py               the trace events every part records through
    stream_state.py            what is kept about each stream

The streams (RFC 9114 §6):

- each side opens one *control stream* (§6.2.1) whose first frame is SETTINGS, and at most
  one QPACK *encoder* and one *decoder* stream (RFC 9204 §4.2; h3learn always opens both).
  These are critical: a second one is
  H3_STREAM_CREATION_ERROR, closing one is H3_CLOSED_CRITICAL_STREAM;
- requests go on client-initiated bidirectional streams (§6.1), each carrying one message
  each way, in the frame order that message_exchange.py keeps (§4.1);
- the server may push responses on *push streams* (§4.6, §6.2.2) once the client allows it
  with MAX_PUSH_ID (§7.2.7);
- unidirectional streams of reserved or unknown types are read and ignored (§6.2, §6.2.3);
  one this endpoint opened is reset when the peer asks it to stop.

Errors (§8): a broken rule raises `H3ConnectionError` or `H3StreamError` deep inside; the one
place that catches them (`error_handling.guard`, around everything the transport hands in)
records the error and closes the connection, or resets the one stream and carries on.

Settings are decided when the connection is made (they are in the trace before any byte
leaves, RFC 9114 §7.2.4.2) and sent by `initiate`.

Nothing leaves directly: every part appends what QUIC must do to one queue (`_actions`,
read by `actions_to_send`) and what the application must hear to another (`_events`,
returned by the ``receive_*`` methods), so both keep the order in which things happened.

A teaching and test facility breaks rules on purpose, so that a lesson can show how the
peer reacts (RFC 9114 §8): `send_deliberately` (any labelled unit on any of this endpoint's
streams), `open_stream_deliberately` (a second control stream, a client's push stream) and
`send_request_unchecked` / `send_headers_unchecked` (a malformed message). Only the
curriculum (lessons) and tests call them.
"""

from __future__ import annotations

from collections.abc import Sequence

from h3learn.events import NullRecorder, Recorder
from h3learn.h3 import (
    cancellation,
    closure,
    deliberate,
    early_data,
    error_handling,
    extensions,
    message_sending,
    push,
    request_streams,
    unidirectional_streams,
)
from h3learn.h3.actions import Action, SendStreamData
from h3learn.h3.deliberate import DeliberateUnit
from h3learn.h3.errors import ErrorCode, H3UsageError
from h3learn.h3.frame_parser import FrameParser
from h3learn.h3.frames import Frame
from h3learn.h3.http_events import H3Event
from h3learn.h3.recording import ConnectionTrace, settings_json
from h3learn.h3.settings import Settings
from h3learn.h3.stream_state import IncomingUniStream, RequestStream
from h3learn.h3.stream_types import (
    CLIENT_BIDI,
    CLIENT_UNI,
    SERVER_UNI,
    StreamHeader,
    is_bidirectional,
)
from h3learn.qpack.decoder import Decoder
from h3learn.qpack.encoder import Encoder
from h3learn.qpack.flow_control import EncoderStreamCredit
from h3learn.wire.spans import SpanWriter

#: The public API; the other modules of this package are its parts.
__all__ = ["DeliberateUnit", "H3Connection", "H3UsageError"]

Header = tuple[bytes, bytes]


class H3Connection:
    """One endpoint of an HTTP/3 connection; see the module docstring."""

    def __init__(
        self,
        *,
        is_client: bool,
        settings: Settings | None = None,
        recorder: Recorder | None = None,
        remembered_settings: Settings | None = None,
    ) -> None:
        """``remembered_settings`` (a client resuming a connection, for 0-RTT): the SETTINGS
        the server announced on the connection that gave the session ticket
        (RFC 9114 §7.2.4.2). They are in force at once, so what is sent before the server's
        SETTINGS arrive complies with them; see `handshake_completed`.
        """
        if remembered_settings is not None and not is_client:
            raise H3UsageError("only a client remembers the peer's settings (RFC 9114 §7.2.4.2)")
        self.is_client = is_client
        self.recorder: Recorder = recorder if recorder is not None else NullRecorder()
        #: How this endpoint records what it does (recording.py).
        self.trace = ConnectionTrace(self.recorder, is_client=is_client)
        #: What this endpoint announces (RFC 9114 §7.2.4); decided now, sent by `initiate`.
        self.local_settings = settings if settings is not None else Settings()
        #: The peer's settings: the defaults until its SETTINGS frame arrives (§7.2.4.2).
        self.peer_settings = Settings()
        self.peer_settings_received = False
        self.encoder = Encoder(recorder=self.recorder)
        self.decoder = Decoder(
            self.local_settings.qpack_max_table_capacity,
            self.local_settings.qpack_blocked_streams,
            recorder=self.recorder,
        )
        self.closed = False
        self.close_code: int | None = None
        #: RFC 9114 §7.2.4.2: what a resuming client remembered, and whether the server
        #: accepted its 0-RTT data (None until the transport says).
        self.remembered_settings = remembered_settings
        self.early_data_accepted: bool | None = None

        own_uni = CLIENT_UNI if is_client else SERVER_UNI
        self._next_uni_stream_id = own_uni
        self._next_request_stream_id = CLIENT_BIDI
        self.control_stream_id: int | None = None
        self.peer_control_stream_id: int | None = None
        self.peer_encoder_stream_id: int | None = None
        self.peer_decoder_stream_id: int | None = None
        self._peer_control_parser = FrameParser(record=self.recorder.enabled)
        self._peer_control_frames = 0

        self._requests: dict[int, RequestStream] = {}
        self._finished_requests: set[int] = set()
        self._incoming_uni: dict[int, IncomingUniStream] = {}
        #: Streams of reserved or unknown types this endpoint opened and has not ended,
        #: with their type (RFC 9114 §6.2.3, §9).
        self._extension_streams: dict[int, int] = {}
        self._actions: list[Action] = []
        self._events: list[H3Event] = []
        #: RFC 9204 §2.1.3: the flow-control credit the transport last reported, for the
        #: bytes it had been handed by then (None: the transport has no flow control).
        self._reported_credit: EncoderStreamCredit | None = None

        # Server push (RFC 9114 §4.6): the client's limit, and the IDs seen so far.
        self.max_push_id: int | None = None  # the latest MAX_PUSH_ID sent (client) or received
        self._next_push_id = 0
        self._promised: dict[int, list[Header]] = {}
        self._push_streams_seen: set[int] = set()
        self._cancelled_pushes: set[int] = set()

        # Graceful shutdown (RFC 9114 §5.2).
        self.goaway_sent: int | None = None
        self.goaway_received: int | None = None
        self._largest_processed_request = -1

        self.trace.record(
            "parameters_set",
            None,
            {"owner": "local", "settings": settings_json(self.local_settings)},
            summary=f"{self.trace.me}: local SETTINGS decided: {self.local_settings.describe()}",
            rfc=("9114#7.2.4",),
        )
        if remembered_settings is not None:
            early_data.restore_settings(self, remembered_settings)

    # == the application's side: start-up and requests (message_sending.py) ================

    def initiate(self) -> None:
        """Open the control stream with SETTINGS, and the two QPACK streams."""
        unidirectional_streams.initiate(self)

    def send_request(self, headers: Sequence[Header], end_stream: bool = False) -> int:
        """Client: open the next request stream and send the header section on it."""
        return message_sending.send_request(self, headers, end_stream)

    def send_headers(
        self, stream_id: int, headers: Sequence[Header], end_stream: bool = False
    ) -> None:
        """Send a header section (a response, an interim response) or, after content, trailers."""
        message_sending.send_headers(self, stream_id, headers, end_stream)

    def send_data(self, stream_id: int, data: bytes, end_stream: bool = False) -> None:
        """Send content (RFC 9114 §7.2.1), after the header section."""
        message_sending.send_data(self, stream_id, data, end_stream)

    def end_stream(self, stream_id: int) -> None:
        """Close the sending side of a request or push stream cleanly."""
        message_sending.end_stream(self, stream_id)

    # -- server push (push.py) -------------------------------------------------------------

    def send_max_push_id(self, push_id: int) -> None:
        """Client: allow push IDs up to ``push_id`` (RFC 9114 §7.2.7)."""
        push.send_max_push_id(self, push_id)

    def send_push_promise(self, stream_id: int, headers: Sequence[Header]) -> int:
        """Server: promise a response to ``headers`` on request stream ``stream_id``."""
        return push.send_push_promise(self, stream_id, headers)

    def create_push_stream(self, push_id: int) -> int:
        """Server: open the push stream that fulfils ``push_id``; then send_headers on it."""
        return push.create_push_stream(self, push_id)

    def cancel_push(self, push_id: int) -> None:
        """Either side: CANCEL_PUSH (RFC 9114 §7.2.3)."""
        push.cancel_push(self, push_id)

    # -- cancelling and closing (cancellation.py, closure.py) ------------------------------

    def reset_stream(
        self, stream_id: int, error_code: int = ErrorCode.H3_REQUEST_CANCELLED
    ) -> None:
        """Cancel a request or push (RFC 9114 §4.1.1): reset sending, stop receiving."""
        cancellation.reset_stream(self, stream_id, error_code)

    def send_goaway(self, identifier: int | None = None) -> int:
        """Start a graceful shutdown; returns the identifier sent."""
        return closure.send_goaway(self, identifier)

    def close(self, error_code: int = ErrorCode.H3_NO_ERROR, reason: str = "") -> None:
        """Close the connection (RFC 9114 §5.3)."""
        closure.close(self, error_code, reason)

    # -- extension points (extensions.py) --------------------------------------------------

    def send_extension_frame(self, stream_id: int, frame_type: int, payload: bytes = b"") -> None:
        """Send a frame of a reserved or unknown type, which the peer must ignore (RFC 9114 §9)."""
        extensions.send_extension_frame(self, stream_id, frame_type, payload)

    def open_extension_stream(
        self, stream_type: int, payload: bytes = b"", end_stream: bool = False
    ) -> int:
        """Open a unidirectional stream of a reserved or unknown type (RFC 9114 §6.2.3, §9)."""
        return extensions.open_extension_stream(self, stream_type, payload, end_stream)

    # == the transport's side: what QUIC delivered =========================================

    def receive_stream_data(
        self, stream_id: int, data: bytes, end_stream: bool = False
    ) -> list[H3Event]:
        """Bytes QUIC delivered on a stream, in order; returns what they meant."""
        if not self.closed:
            with error_handling.guard(self):
                if is_bidirectional(stream_id):
                    request_streams.receive_bidirectional(self, stream_id, data, end_stream)
                else:
                    unidirectional_streams.receive_unidirectional(self, stream_id, data, end_stream)
            self._flush_decoder_stream()
        return self._take_events()

    def receive_stream_reset(self, stream_id: int, error_code: int) -> list[H3Event]:
        """The peer sent RESET_STREAM: it abandoned sending on ``stream_id``."""
        if not self.closed:
            with error_handling.guard(self):
                unidirectional_streams.check_critical_closed(self, stream_id, "reset")
                cancellation.stream_reset_received(self, stream_id, error_code)
            self._flush_decoder_stream()
        return self._take_events()

    def receive_stop_sending(self, stream_id: int, error_code: int) -> list[H3Event]:
        """The peer sent STOP_SENDING: stop writing on ``stream_id``."""
        if not self.closed:
            self.trace.stream_frame(
                "stop_sending",
                stream_id,
                error_code,
                "the peer asks this endpoint to stop sending",
                "9000#3.5",
                "received",
            )
            with error_handling.guard(self):
                cancellation.stop_sending_received(self, stream_id, error_code)
        return self._take_events()

    def connection_closed(
        self,
        error_code: int,
        reason: str = "",
        *,
        transport: bool = False,
        idle_timeout: float | None = None,
    ) -> list[H3Event]:
        """The QUIC connection ended: the peer closed it, or QUIC itself did."""
        return closure.connection_closed(
            self, error_code, reason, transport=transport, idle_timeout=idle_timeout
        )

    def actions_to_send(self) -> list[Action]:
        """What the transport must do now, in order (and forget)."""
        actions, self._actions = self._actions, []
        return actions

    # -- resumption and 0-RTT (early_data.py) ----------------------------------------------

    def accepts_early_data(self, remembered: Settings) -> bool:
        """Server: may 0-RTT data be accepted from a client that remembered ``remembered``?"""
        return early_data.accepts_early_data(self, remembered)

    def handshake_completed(self, *, early_data_accepted: bool) -> None:
        """The QUIC handshake finished; ``early_data_accepted``: the server took 0-RTT data."""
        early_data.handshake_completed(self, early_data_accepted=early_data_accepted)

    # -- flow control (QUIC's, RFC 9000 §4; what QPACK must respect, RFC 9204 §2.1.3) ------

    def flow_control_credit_updated(self, *, encoder_stream: int, connection: int) -> None:
        """The transport says how many more bytes QUIC flow control lets it send.

        ``encoder_stream``: on this endpoint's QPACK encoder stream (the peer's
        MAX_STREAM_DATA for it less what was written on it); ``connection``: on all streams
        together (the peer's MAX_DATA less what was written on every stream), RFC 9000 §4.1.
        Both count what the transport had been handed from `actions_to_send` when it asked
        QUIC; what this connection queued since is taken off here. The encoder then writes
        no instruction the credit does not cover (RFC 9204 §2.1.3). A transport without
        flow control (transport/memory.py) never calls this, and nothing is held back.
        """
        self._reported_credit = EncoderStreamCredit(encoder_stream, connection)

    def _encoder_stream_credit(self) -> EncoderStreamCredit | None:
        """The credit now: the last report less the stream data queued since."""
        reported = self._reported_credit
        if reported is None:
            return None
        queued = [action for action in self._actions if isinstance(action, SendStreamData)]
        on_encoder_stream = sum(
            len(action.data)
            for action in queued
            if action.stream_id == self.encoder.encoder_stream_id
        )
        return EncoderStreamCredit(
            reported.stream - on_encoder_stream,
            reported.connection - sum(len(action.data) for action in queued),
        )

    # -- what every part uses: sending frames, the queues ----------------------------------

    def _send_frame(self, stream_id: int, frame: Frame, why: tuple[str, str] | None = None) -> None:
        """Queue ``frame`` on ``stream_id`` and record it; ``why``: (reason, RFC section) when
        the frame is this endpoint's reaction to something (e.g. a refused promise)."""
        writer = SpanWriter(record=self.recorder.enabled)
        frame.serialize(writer)
        self._actions.append(SendStreamData(stream_id, writer.unit()))
        if self.recorder.enabled:
            data = {"stream_id": stream_id, "length": frame.payload_length(), "frame": frame.qlog()}
            summary = f"{self.trace.arrow}: {frame.describe()} on stream {stream_id}"
            rfc: tuple[str, ...] = (frame.section,)
            if why is not None:
                data["reason"] = why[0]
                summary += f": {why[0]}"
                rfc += (why[1],)
            self.trace.record(
                "frame_created",
                stream_id,
                data,
                raw=writer.unit(),
                fields=writer.field_spans(),
                rfc=rfc,
                summary=summary,
            )

    def _send_control_frame(self, frame: Frame, why: tuple[str, str] | None = None) -> None:
        self._check_open()
        assert self.control_stream_id is not None, "initiate() first"
        self._send_frame(self.control_stream_id, frame, why)

    def _flush_decoder_stream(self) -> None:
        """Send what the QPACK decoder has to say (acknowledgments, RFC 9204 §4.4)."""
        if self.decoder.decoder_stream_id is None:
            return
        data = self.decoder.data_to_send()
        if data and not self.closed:
            self._actions.append(SendStreamData(self.decoder.decoder_stream_id, data))

    def _check_open(self) -> None:
        if self.closed:
            raise H3UsageError("the connection is closed")

    def _take_events(self) -> list[H3Event]:
        events, self._events = self._events, []
        return events

    # -- teaching and test facility: breaking a rule on purpose (deliberate.py) ------------

    def send_deliberately(
        self, stream_id: int, unit: DeliberateUnit, end_stream: bool = False
    ) -> None:
        """Teaching facility: put ``unit`` on stream ``stream_id`` as it is, unchecked."""
        deliberate.send_deliberately(self, stream_id, unit, end_stream)

    def open_stream_deliberately(self, header: StreamHeader) -> int:
        """Teaching facility: open a unidirectional stream of any type (a second control stream)."""
        return deliberate.open_stream_deliberately(self, header)

    def send_request_unchecked(self, headers: Sequence[Header], end_stream: bool = False) -> int:
        """Teaching facility: a request whose header section is sent as given, even malformed."""
        return deliberate.send_request_unchecked(self, headers, end_stream)

    def send_headers_unchecked(
        self, stream_id: int, headers: Sequence[Header], end_stream: bool = False
    ) -> None:
        """Teaching facility: a response or trailer section sent as given, even malformed."""
        deliberate.send_headers_unchecked(self, stream_id, headers, end_stream)
