"""Helpers for the RFC 9114 §4-§8 connection tests: crafted bytes in, actions and events out.

Two ways to drive an `H3Connection`:

- `Lone`: one endpoint on its own. The test plays its peer: it opens the peer's control and
  QPACK streams, then feeds crafted bytes (frames built with h3learn.h3.frames, stream
  headers, raw bytes) and looks at what the endpoint asked QUIC to do (`sent`), what it told
  its application (`received`) and what it recorded (`log`).
- `pair()`: a client and a server wired by `MemoryPair`, for whole exchanges.

The assertions read the trace as well as the actions. A connection error is one
CloseConnection with the code, one `connection_error` event naming the code and the rule, a
ConnectionTerminated for the application, and silence afterwards. A stream error is a
STOP_SENDING (and, on a request stream, a RESET_STREAM) with the code, a `stream_error`
event, and a connection that carries on. Every byte of every event's ``raw`` must lie in a
field span (docs/events.md, "Field spans").
"""

from __future__ import annotations

from collections.abc import Sequence

from h3learn.events import Event, EventLog
from h3learn.h3.actions import Action, CloseConnection, ResetStream, SendStreamData, StopSending
from h3learn.h3.connection import H3Connection
from h3learn.h3.errors import code_name
from h3learn.h3.frames import Frame, HeadersFrame, PushPromiseFrame, SettingsFrame, serialize_frame
from h3learn.h3.http_events import ConnectionTerminated, H3Event, StreamReset
from h3learn.h3.settings import Settings
from h3learn.h3.stream_types import StreamHeader, StreamType, is_bidirectional
from h3learn.qpack.encoder import Encoder
from h3learn.transport.memory import MemoryPair
from h3learn.wire.spans import SpanWriter
from h3learn.wire.varint import parse_varint

Header = tuple[bytes, bytes]

REQUEST: list[Header] = [
    (b":method", b"GET"),
    (b":scheme", b"https"),
    (b":authority", b"example.com"),
    (b":path", b"/"),
]
POST: list[Header] = [
    (b":method", b"POST"),
    (b":scheme", b"https"),
    (b":authority", b"example.com"),
    (b":path", b"/upload"),
]
RESPONSE: list[Header] = [(b":status", b"200")]
INTERIM: list[Header] = [(b":status", b"103"), (b"link", b"</style.css>; rel=preload")]
TRAILERS: list[Header] = [(b"x-checksum", b"42")]

#: Settings that let both QPACK encoders use a dynamic table and block streams.
DYNAMIC = Settings(qpack_max_table_capacity=4096, qpack_blocked_streams=16)

#: The unidirectional streams each side opens first, in `H3Connection.initiate`'s order
#: (RFC 9000 §2.1: client-initiated ones end in 0b10, server-initiated ones in 0b11).
CLIENT_CONTROL, CLIENT_ENCODER, CLIENT_DECODER = 2, 6, 10
SERVER_CONTROL, SERVER_ENCODER, SERVER_DECODER = 3, 7, 11


def frame_bytes(*frames: Frame) -> bytes:
    """The frames serialised one after the other."""
    return b"".join(serialize_frame(frame)[0] for frame in frames)


def stream_header(stream_type: int, push_id: int | None = None) -> bytes:
    """The first bytes of a unidirectional stream (RFC 9114 §6.2)."""
    writer = SpanWriter()
    StreamHeader(stream_type, push_id).serialize(writer)
    return writer.unit()


class Lone:
    """One H3Connection, fed crafted bytes by a test that plays its peer."""

    def __init__(
        self,
        *,
        is_client: bool,
        settings: Settings | None = None,
        peer_settings: Sequence[tuple[int, int]] = (),
        open_peer_streams: bool = True,
    ) -> None:
        self.log = EventLog()
        self.conn = H3Connection(
            is_client=is_client,
            settings=settings,
            recorder=self.log.for_endpoint("client" if is_client else "server"),
        )
        self.conn.initiate()
        #: What the endpoint wrote when it started (its control and QPACK streams).
        self.opening: list[Action] = self.conn.actions_to_send()
        self.sent: list[Action] = []
        self.received: list[H3Event] = []
        #: The peer's QPACK encoder; it never heard the endpoint's SETTINGS, so it uses only
        #: the static table and literals and every field section decodes at once.
        self.peer_encoder = Encoder()
        if is_client:
            self.peer_control, self.peer_encoder_stream, self.peer_decoder_stream = (
                SERVER_CONTROL,
                SERVER_ENCODER,
                SERVER_DECODER,
            )
        else:
            self.peer_control, self.peer_encoder_stream, self.peer_decoder_stream = (
                CLIENT_CONTROL,
                CLIENT_ENCODER,
                CLIENT_DECODER,
            )
        if open_peer_streams:
            self.open_peer_streams(peer_settings)

    @classmethod
    def server(
        cls,
        settings: Settings | None = None,
        peer_settings: Sequence[tuple[int, int]] = (),
        open_peer_streams: bool = True,
    ) -> Lone:
        return cls(
            is_client=False,
            settings=settings,
            peer_settings=peer_settings,
            open_peer_streams=open_peer_streams,
        )

    @classmethod
    def client(
        cls,
        settings: Settings | None = None,
        peer_settings: Sequence[tuple[int, int]] = (),
        open_peer_streams: bool = True,
    ) -> Lone:
        return cls(
            is_client=True,
            settings=settings,
            peer_settings=peer_settings,
            open_peer_streams=open_peer_streams,
        )

    def open_peer_streams(self, peer_settings: Sequence[tuple[int, int]] = ()) -> None:
        """The peer's control stream with its SETTINGS, and its two QPACK streams."""
        self.feed(
            self.peer_control,
            stream_header(StreamType.CONTROL) + frame_bytes(SettingsFrame(tuple(peer_settings))),
        )
        self.feed(self.peer_encoder_stream, stream_header(StreamType.QPACK_ENCODER))
        self.feed(self.peer_decoder_stream, stream_header(StreamType.QPACK_DECODER))

    # -- input, as QUIC would deliver it ---------------------------------------------------

    def feed(self, stream_id: int, data: bytes = b"", end_stream: bool = False) -> list[H3Event]:
        events = self.conn.receive_stream_data(stream_id, data, end_stream)
        return self._collect(events)

    def feed_bytewise(self, stream_id: int, data: bytes, end_stream: bool = False) -> list[H3Event]:
        """The same bytes, one at a time (the end of the stream comes with the last one)."""
        events: list[H3Event] = []
        for index in range(len(data)):
            last = index == len(data) - 1
            events += self.feed(stream_id, data[index : index + 1], end_stream and last)
        return events

    def control(self, *frames: Frame) -> list[H3Event]:
        """Frames on the peer's control stream."""
        return self.feed(self.peer_control, frame_bytes(*frames))

    def reset(self, stream_id: int, error_code: int) -> list[H3Event]:
        return self._collect(self.conn.receive_stream_reset(stream_id, error_code))

    def stop_sending(self, stream_id: int, error_code: int) -> list[H3Event]:
        return self._collect(self.conn.receive_stop_sending(stream_id, error_code))

    def _collect(self, events: list[H3Event]) -> list[H3Event]:
        self.received += events
        self.sent += self.conn.actions_to_send()
        return events

    # -- the peer's frames -----------------------------------------------------------------

    def field_section(self, stream_id: int, headers: Sequence[Header]) -> bytes:
        encoder_stream, section = self.peer_encoder.encode(stream_id, list(headers))
        assert encoder_stream == b"", "the peer's encoder uses no dynamic table"
        return section

    def headers(self, stream_id: int, headers: Sequence[Header]) -> bytes:
        """A HEADERS frame carrying ``headers``, encoded for ``stream_id``."""
        return frame_bytes(HeadersFrame(self.field_section(stream_id, headers)))

    def push_promise(self, stream_id: int, push_id: int, headers: Sequence[Header]) -> bytes:
        return frame_bytes(PushPromiseFrame(push_id, self.field_section(stream_id, headers)))

    # -- the endpoint's application --------------------------------------------------------

    def request(self, headers: Sequence[Header] = REQUEST, end_stream: bool = True) -> int:
        """Client: send a request; returns its stream ID."""
        stream_id = self.conn.send_request(headers, end_stream=end_stream)
        self.sent += self.conn.actions_to_send()
        return stream_id

    def take_sent(self) -> list[Action]:
        sent, self.sent = self.sent, []
        return sent

    # -- what happened ---------------------------------------------------------------------

    def events(self, name: str, category: str = "http3") -> list[Event]:
        return [e for e in self.log.events if e.name == name and e.category == category]

    def errors(self) -> list[Event]:
        return [e for e in self.log.events if e.name in ("connection_error", "stream_error")]

    def data_sent_on(self, stream_id: int) -> bytes:
        return b"".join(
            a.data for a in self.sent if isinstance(a, SendStreamData) and a.stream_id == stream_id
        )


def pair(
    client_settings: Settings | None = None, server_settings: Settings | None = None
) -> MemoryPair:
    """A client and a server that have exchanged their SETTINGS (``received`` starts empty)."""
    memory = MemoryPair.create(client_settings=client_settings, server_settings=server_settings)
    memory.pump()
    for events in memory.received.values():
        events.clear()
    return memory


# -- assertions ------------------------------------------------------------------------------


def uncovered_bytes(event: Event) -> list[int]:
    """Offsets of ``raw`` that no field span labels (docs/events.md: there must be none)."""
    covered: set[int] = set()
    for span in event.fields:
        assert span.length >= 1, (event.name, span)
        assert span.offset >= 0 and span.offset + span.length <= len(event.raw), (event.name, span)
        covered.update(range(span.offset, span.offset + span.length))
    return [offset for offset in range(len(event.raw)) if offset not in covered]


def assert_trace_labelled(log: EventLog) -> None:
    """Every byte of every event's ``raw`` lies in a field span."""
    for event in log.events:
        assert uncovered_bytes(event) == [], (event.seq, event.name, event.summary)


def assert_frame_traced(lone: Lone, raw: bytes, frame_type: str) -> Event:
    """A frame_parsed event recorded exactly ``raw``, the bytes fed, with every byte labelled."""
    matching = [e for e in lone.events("frame_parsed") if e.raw == raw]
    assert matching, f"no frame_parsed event with raw {raw.hex()}"
    event = matching[0]
    assert event.data["frame"]["frame_type"] == frame_type
    assert uncovered_bytes(event) == []
    # docs/events.md: ``length`` is the payload's, the Length field (RFC 9114 §7.1).
    _, type_size = parse_varint(raw, 0)
    length, length_size = parse_varint(raw, type_size)
    assert event.data["length"] == length == len(raw) - type_size - length_size
    return event


def assert_connection_error(lone: Lone, code: int, rfc: str | None = None) -> Event:
    """The endpoint closed the connection with ``code``, recorded why, then went quiet."""
    closes = [a for a in lone.sent if isinstance(a, CloseConnection)]
    assert [c.error_code for c in closes] == [code], (closes, lone.errors())
    assert lone.conn.closed and lone.conn.close_code == code
    errors = lone.events("connection_error")
    assert len(errors) == 1, errors
    event = errors[0]
    assert event.data["code"] == code
    assert event.data["code_name"] == code_name(code)
    assert event.data["direction"] == "sent"
    assert event.data["rule"], "the event says which rule broke"
    if rfc is not None:
        assert event.data["rfc"] == rfc, event.data
    assert closes[0].reason.startswith(code_name(code)), closes[0].reason
    terminated = [e for e in lone.received if isinstance(e, ConnectionTerminated)]
    assert terminated == [
        ConnectionTerminated(error_code=code, reason=closes[0].reason, by_peer=False)
    ]
    assert not any(e.name == "stream_error" for e in lone.errors())
    assert_ignores_later_input(lone)
    assert_trace_labelled(lone.log)
    return event


def assert_ignores_later_input(lone: Lone) -> None:
    """RFC 9114 §8: after a connection error nothing more is read, sent or recorded."""
    events_before = len(lone.log.events)
    later = [
        lone.conn.receive_stream_data(0, b"\x00\x01", True),
        lone.conn.receive_stream_data(lone.peer_control, b"\x00\x00"),
        lone.conn.receive_stream_reset(4, 0x010C),
        lone.conn.receive_stop_sending(0, 0x010C),
        lone.conn.connection_closed(0x0100),
    ]
    assert later == [[]] * len(later)
    assert lone.conn.actions_to_send() == []
    assert len(lone.log.events) == events_before


def assert_stream_error(
    lone: Lone,
    stream_id: int,
    code: int,
    rfc: str | None = None,
    *,
    reset: bool = True,
    stop: bool = True,
) -> Event:
    """The endpoint ended the one stream with ``code``, recorded why, and carries on.

    ``reset``: it still had its sending side open, so RESET_STREAM goes out (a request
    stream only); ``stop``: it had not read the stream's end, so STOP_SENDING goes out.
    """
    assert not lone.conn.closed, lone.errors()
    assert not any(isinstance(a, CloseConnection) for a in lone.sent)
    on_stream = [
        a
        for a in lone.sent
        if isinstance(a, ResetStream | StopSending) and a.stream_id == stream_id
    ]
    expected: list[Action] = []
    if stop:
        expected.append(StopSending(stream_id, code))
    if reset and is_bidirectional(stream_id):
        expected.append(ResetStream(stream_id, code))
    assert on_stream == expected, on_stream
    errors = [e for e in lone.events("stream_error") if e.stream_id == stream_id]
    assert len(errors) == 1, errors
    event = errors[0]
    assert event.data["code"] == code
    assert event.data["code_name"] == code_name(code)
    assert event.data["direction"] == "sent"
    assert event.data["stream_id"] == stream_id
    assert event.data["rule"]
    if rfc is not None:
        assert event.data["rfc"] == rfc, event.data
    assert StreamReset(stream_id=stream_id, error_code=code) in lone.received
    assert not lone.events("connection_error")
    assert_trace_labelled(lone.log)
    return event


def assert_no_error(lone: Lone) -> None:
    assert not lone.conn.closed
    assert lone.errors() == [], [e.summary for e in lone.errors()]
    assert not any(isinstance(a, CloseConnection | ResetStream) for a in lone.sent), lone.sent
    assert_trace_labelled(lone.log)
