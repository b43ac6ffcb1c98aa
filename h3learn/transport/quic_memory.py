"""Real QUIC with TLS 1.3 between two endpoints in one process (RFC 9000, RFC 9001, RFC 9114 §3.3).

`memory.py` plays QUIC's part perfectly; this transport runs the real thing. Each endpoint
is an aioquic `QuicConnection` with its own TLS 1.3 handshake, packet protection, ACKs and
flow control; only the network is simulated. The UDP datagrams one side produces
(`datagrams_to_send`) are handed to the other (`receive_datagram`) after a fixed one-way
delay, on a virtual clock, so the same scenario always runs the same way: no sockets, no
wall clock, no loss. Timers (ACK delay, loss detection, the closing period of RFC 9000
§10.2) fire when the virtual clock reaches them.

Each side runs HTTP/3 in one of two ways:

- h3learn's sans-IO `H3Connection`, carried by `H3OverQuic` (quic.py): pass the connection,
  or, for the server, a function that makes it (see below); or
- aioquic's own `aioquic.h3.connection.H3Connection` (pass the class: it needs the
  `QuicConnection`, which the pair makes), an independent HTTP/3 and QPACK (ls-qpack)
  implementation to test against.

The client's HTTP/3 starts at once: its control and QPACK streams are queued before its
first datagram and leave with the handshake's first flights (RFC 9114 §6.2.1). The server's
starts when its QUIC connection has read the client's first flight and TLS has selected
"h3" (aioquic's ProtocolNegotiated, RFC 9114 §3.1), as in transport/udp_server.py and
aioquic's own server: a real server has nothing to send, and no client to send it to,
before that. Its SETTINGS then leave in its first flight (0.5-RTT data, RFC 9001 §4.1.1).
A server given as a function is also made then, so even its SETTINGS are decided after the
client's first datagram has arrived (made earlier only if a resuming client's ticket asks it
to decide on 0-RTT while the ClientHello is read, which is also after that datagram).

The server uses a self-signed certificate for localhost (certificates.py): one held in
memory with an Ed25519 key (see `_in_memory_certificate` for why), or the P-256 files of a
``certificate_directory``. The client checks it against that very certificate, for the
server name "localhost" (RFC 9114 §3.1.1).

Each endpoint's QUIC grants its peer 1 MiB of flow-control credit per stream and for the
connection at the start (aioquic's defaults), and more as data is read. `ReceiveLimits`
makes that first grant smaller, so that a scenario can show a sender running out of
credit (RFC 9000 §4.1; RFC 9204 §2.1.3 for the QPACK encoder stream).

When a log is given, the pair records ``transport`` ``datagram_sent`` events (``length``
and the first packet's header form, RFC 8999 §5.1, §5.2), the adapters record stream data and
the handshake, and for an aioquic side the pair records the stream data it receives.

    clock = VirtualClock()
    log = EventLog(clock=clock)
    client = H3Connection(is_client=True, settings=..., recorder=log.for_endpoint("client"))
    pair = QuicMemoryPair.create(client=client, server=aioquic_h3.H3Connection, log=log,
                                 clock=clock)
    pair.pump()                      # the handshake, SETTINGS, QPACK streams
    stream_id = pair.h3learn("client").send_request(headers, end_stream=True)
    events = pair.pump()             # {"client": [...], "server": [...]}
"""

from __future__ import annotations

import functools
import ssl
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aioquic.h3.connection import H3Connection as AioquicH3Connection
from aioquic.h3.events import H3Event as AioquicH3Event
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.connection import QuicConnection
from aioquic.quic.events import (
    HandshakeCompleted,
    ProtocolNegotiated,
    QuicEvent,
    StreamDataReceived,
)
from aioquic.tls import SessionTicket
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

from h3learn.events import EventLog, NullRecorder, Recorder
from h3learn.h3.connection import H3Connection
from h3learn.h3.http_events import H3Event
from h3learn.transport.certificates import PrivateKey, ensure_certificate, generate_certificate
from h3learn.transport.quic import H3_ALPN, H3OverQuic, record_handshake, record_stream_data
from h3learn.transport.resumption import Resumption, ServerTickets, client_resumption

ENDPOINTS = ("client", "server")

#: Where the endpoints pretend to be. No socket is ever opened.
ADDRESSES = {"client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 4433)}

#: An endpoint: h3learn's connection, a function that makes one when the pair starts that
#: side's HTTP/3, or aioquic's H3Connection class (built by the pair).
Side = H3Connection | Callable[[], H3Connection] | type[AioquicH3Connection]
AnyH3Event = H3Event | AioquicH3Event

#: RFC 8999 §5.1: the most significant bit of a QUIC packet's first byte is the header form.
HEADER_FORM_BIT = 0x80


@dataclass
class VirtualClock:
    """Seconds since the start of the exchange; calling it gives milliseconds (for EventLog)."""

    seconds: float = 0.0

    def __call__(self) -> float:
        return round(self.seconds * 1000.0, 3)


@dataclass(frozen=True, slots=True)
class ReceiveLimits:
    """The flow-control credit one endpoint's QUIC grants its peer at the start.

    Announced as transport parameters (RFC 9000 §18.2): ``max_data`` as initial_max_data,
    for the whole connection; ``max_stream_data`` as initial_max_stream_data_bidi_local,
    _bidi_remote and _uni, for every stream (aioquic takes one value for the three).
    None keeps aioquic's default, 1 MiB. The endpoint raises both as it reads (aioquic
    doubles a limit once the peer has used half of it).
    """

    max_data: int | None = None
    max_stream_data: int | None = None

    def apply(self, configuration: QuicConfiguration) -> None:
        if self.max_data is not None:
            configuration.max_data = self.max_data
        if self.max_stream_data is not None:
            configuration.max_stream_data = self.max_stream_data


@dataclass
class _Datagram:
    arrival: float
    receiver: str
    data: bytes


@dataclass
class _NotStarted:
    """A side whose HTTP/3 has not started yet (the server's, until "h3" is agreed)."""

    side: Side
    #: Its h3learn connection once made: given as it is, or made early (`connection`).
    made: H3Connection | None = None

    def __post_init__(self) -> None:
        if isinstance(self.side, H3Connection):
            self.made = self.side

    @property
    def runs_aioquic(self) -> bool:
        return isinstance(self.side, type)

    def connection(self) -> H3Connection:
        """The h3learn connection, made now if it was given as a function."""
        if self.made is None:
            side = self.side
            if isinstance(side, type):
                raise TypeError("this side runs aioquic's H3Connection")
            self.made = side if isinstance(side, H3Connection) else side()
        return self.made


@functools.cache
def _in_memory_certificate() -> tuple[x509.Certificate, PrivateKey]:
    """One certificate per process, when no directory is given (none is written to disk).

    Its key is Ed25519, not the P-256 of the files `ensure_certificate` writes: an ECDSA
    signature's DER encoding is 70 to 72 bytes long at random, and one byte more or less
    in the server's CertificateVerify (RFC 8446 §4.4.3) changes the congestion window, the
    pacing and so the moment ACKs go out. Ed25519 signatures are always 64 bytes, so the
    same scenario gives the same datagrams, sizes and times, run after run.
    """
    return generate_certificate(key=ed25519.Ed25519PrivateKey.generate())


def _configurations(
    certificate_directory: Path | None,
) -> tuple[QuicConfiguration, QuicConfiguration]:
    client = QuicConfiguration(alpn_protocols=[H3_ALPN], is_client=True, server_name="localhost")
    client.verify_mode = ssl.CERT_REQUIRED
    server = QuicConfiguration(alpn_protocols=[H3_ALPN], is_client=False)
    if certificate_directory is None:
        certificate, key = _in_memory_certificate()
        server.certificate = certificate
        server.private_key = key
        client.load_verify_locations(cadata=certificate.public_bytes(serialization.Encoding.PEM))
    else:
        cert_path, key_path = ensure_certificate(certificate_directory)
        server.load_cert_chain(cert_path, key_path)
        client.load_verify_locations(cafile=str(cert_path))
    return client, server


@dataclass
class QuicMemoryPair:
    """A client and a server talking QUIC to each other through memory."""

    quic: dict[str, QuicConnection]
    #: Each side's HTTP/3 once started: an `H3OverQuic` adapter, or aioquic's H3Connection.
    sides: dict[str, H3OverQuic | AioquicH3Connection]
    clock: VirtualClock
    log: EventLog | None
    one_way_delay: float
    #: HTTP/3 events each side's application received, in order.
    received: dict[str, list[AnyH3Event]] = field(
        default_factory=lambda: {name: [] for name in ENDPOINTS}
    )
    #: Every QUIC event each side's QuicConnection produced, in order.
    quic_events: dict[str, list[QuicEvent]] = field(
        default_factory=lambda: {name: [] for name in ENDPOINTS}
    )
    #: Session tickets the server gave the client (RFC 8446 §4.6.1), oldest first.
    client_tickets: list[SessionTicket] = field(default_factory=list)
    #: The server's memory of the tickets it issued, if it issues any.
    server_tickets: ServerTickets | None = None
    #: Sides whose HTTP/3 waits for the handshake to select "h3": the server's at first.
    _not_started: dict[str, _NotStarted] = field(default_factory=dict)
    _in_flight: deque[_Datagram] = field(default_factory=deque)
    #: Sides that know where to send: the client from `connect`, the server once the
    #: client's first datagram has told it the client's address.
    _has_peer_address: set[str] = field(default_factory=lambda: {"client"})
    #: False once `disconnect` has cut the network: every datagram is lost.
    network_up: bool = True

    @classmethod
    def create(
        cls,
        *,
        client: Side,
        server: Side,
        log: EventLog | None = None,
        clock: VirtualClock | None = None,
        certificate_directory: Path | None = None,
        one_way_delay: float = 0.005,
        resume: Resumption | None = None,
        server_tickets: ServerTickets | None = None,
        limits: dict[str, ReceiveLimits] | None = None,
    ) -> QuicMemoryPair:
        """Two QUIC endpoints, the client's first flight already queued; then call `pump`.

        The client's HTTP/3 starts now; the server's once its QUIC connection has read the
        client's first flight and agreed on "h3" (see the module docstring). ``server``
        may be a function that makes the server's H3Connection: it is called then, so the
        server decides its SETTINGS only once a client has arrived.

        ``log`` receives the transport events (give it the log the h3learn connections
        record into, so everything shares one order). ``certificate_directory`` makes the
        server use (and keep) ``cert.pem`` / ``key.pem`` there instead of a certificate
        held in memory.

        Resuming (RFC 9114 §7.2.4.2, resumption.py): ``server_tickets`` is the server's
        memory of the tickets it issued, shared by the pairs that play one server; with it
        an h3learn server issues tickets and decides on 0-RTT. ``resume`` is what a client
        kept from an earlier pair (`resumption`): its ticket is shown in the handshake and
        what the client sends before the handshake ends goes out as 0-RTT. Give
        ``resume.settings`` to the client's H3Connection as ``remembered_settings``.

        ``limits`` ("client", "server" -> `ReceiveLimits`): the flow-control credit that
        side grants its peer at the start, when not aioquic's default.
        """
        clock = clock if clock is not None else VirtualClock()
        client_configuration, server_configuration = _configurations(certificate_directory)
        for name, configuration in (
            ("client", client_configuration),
            ("server", server_configuration),
        ):
            (limits or {}).get(name, ReceiveLimits()).apply(configuration)
        if resume is not None:
            client_configuration.session_ticket = resume.ticket
        for name, side in (("client", client), ("server", server)):
            if isinstance(side, H3Connection):
                _check_role(name, side)
        waiting = _NotStarted(server)
        tickets: list[SessionTicket] = []
        client_quic = QuicConnection(
            configuration=client_configuration, session_ticket_handler=tickets.append
        )
        server_quic = QuicConnection(
            configuration=server_configuration,
            original_destination_connection_id=client_quic.original_destination_connection_id,
            **_server_ticket_callbacks(server_tickets, waiting),
        )
        client_quic.connect(ADDRESSES["server"], now=clock.seconds)
        quic = {"client": client_quic, "server": server_quic}
        return cls(
            quic=quic,
            sides={"client": _start(client_quic, _NotStarted(client), "client", log)},
            clock=clock,
            log=log,
            one_way_delay=one_way_delay,
            client_tickets=tickets,
            server_tickets=server_tickets,
            _not_started={"server": waiting},
        )

    # -- the sides ---------------------------------------------------------------------------

    def h3learn(self, name: str) -> H3Connection:
        """The h3learn H3Connection of side ``name`` (TypeError if that side is aioquic's).

        Before the server's HTTP/3 has started, the server's connection exists only if it
        was given as one (or made early to decide on 0-RTT); otherwise `NotStartedError`.
        """
        waiting = self._not_started.get(name)
        if waiting is not None:
            if waiting.runs_aioquic:
                raise TypeError(f"the {name} side runs aioquic's H3Connection")
            if waiting.made is None:
                raise NotStartedError(name)
            return waiting.made
        side = self.sides[name]
        if not isinstance(side, H3OverQuic):
            raise TypeError(f"the {name} side runs aioquic's H3Connection")
        return side.h3

    def aioquic(self, name: str) -> AioquicH3Connection:
        """aioquic's H3Connection of side ``name`` (TypeError if that side is h3learn's)."""
        waiting = self._not_started.get(name)
        if waiting is not None:
            if not waiting.runs_aioquic:
                raise TypeError(f"the {name} side runs h3learn's H3Connection")
            raise NotStartedError(name)
        side = self.sides[name]
        if isinstance(side, H3OverQuic):
            raise TypeError(f"the {name} side runs h3learn's H3Connection")
        return side

    def resumption(self) -> Resumption | None:
        """What the client keeps to resume: the newest ticket, and the server's SETTINGS."""
        ticket = self.client_tickets[-1] if self.client_tickets else None
        side = self.sides["client"]
        if not isinstance(side, H3OverQuic):
            return None if ticket is None else Resumption(ticket, None)
        return client_resumption(ticket, side.h3)

    def reconnect(
        self,
        *,
        client: Side,
        server: Side,
        log: EventLog | None = None,
        clock: VirtualClock | None = None,
    ) -> QuicMemoryPair:
        """A new pair between the same client and server that resumes this connection.

        The client shows the newest ticket it got here, so what it sends before the
        handshake ends goes in 0-RTT. Build ``client`` with ``remembered_settings`` from
        `resumption` (or without, to start from the defaults).
        """
        resumption = self.resumption()
        if resumption is None:
            raise ValueError("the server issued no session ticket (pass server_tickets)")
        return QuicMemoryPair.create(
            client=client,
            server=server,
            log=log,
            clock=clock,
            one_way_delay=self.one_way_delay,
            resume=resumption,
            server_tickets=self.server_tickets,
        )

    @property
    def now(self) -> float:
        return self.clock.seconds

    def disconnect(self) -> None:
        """The network between the endpoints fails: every datagram from now on is lost.

        Neither endpoint is told (RFC 9114 §5.4: a change in network topology can end a
        connection without warning). Each side's QUIC goes on sending, retransmitting and
        probing, recorded as lost datagrams, until its idle timeout (RFC 9000 §10.1) drops
        the connection; `advance` past it to see that. What was in flight is lost too.
        """
        self.network_up = False
        self._in_flight.clear()

    # -- running -----------------------------------------------------------------------------

    def pump(
        self, quiet_after: float = 1.0, max_steps: int = 10_000
    ) -> dict[str, list[AnyH3Event]]:
        """Run until nothing is in flight and no timer is due within ``quiet_after`` seconds.

        Timers further away (the idle timeout of RFC 9000 §10.1) are left alone. Returns
        the HTTP/3 events each side received meanwhile.
        """
        return self._run(lambda: self.now + quiet_after, deliver_all=True, max_steps=max_steps)

    def advance(self, seconds: float, max_steps: int = 10_000) -> dict[str, list[AnyH3Event]]:
        """Let ``seconds`` of virtual time pass, firing every timer and delivery due in it."""
        until = self.now + seconds
        delivered = self._run(lambda: until, deliver_all=False, max_steps=max_steps)
        self.clock.seconds = max(self.clock.seconds, until)
        return delivered

    def _run(
        self, horizon: Callable[[], float], deliver_all: bool, max_steps: int
    ) -> dict[str, list[AnyH3Event]]:
        delivered: dict[str, list[AnyH3Event]] = {name: [] for name in ENDPOINTS}
        for _ in range(max_steps):
            self._process_events(delivered)
            self._collect_datagrams()
            limit = horizon()
            next_time = self._next_timer()
            if next_time is not None and next_time > limit:
                next_time = None
            if self._in_flight and (deliver_all or self._in_flight[0].arrival <= limit):
                arrival = self._in_flight[0].arrival
                next_time = arrival if next_time is None else min(next_time, arrival)
            if next_time is None:
                return delivered
            self.clock.seconds = max(self.clock.seconds, next_time)
            self._deliver_due()
            self._fire_timers()
        raise RuntimeError(f"the endpoints were still busy after {max_steps} steps")

    def _collect_datagrams(self) -> None:
        for name in ENDPOINTS:
            if name not in self._has_peer_address:
                continue
            receiver = "server" if name == "client" else "client"
            for data, _address in self.quic[name].datagrams_to_send(now=self.now):
                self._record_datagram(name, data)
                if self.network_up:
                    arrival = self.now + self.one_way_delay
                    self._in_flight.append(_Datagram(arrival, receiver, data))

    def _next_timer(self) -> float | None:
        timers = [t for t in (self.quic[name].get_timer() for name in ENDPOINTS) if t is not None]
        return min(timers, default=None)

    def _deliver_due(self) -> None:
        while self._in_flight and self._in_flight[0].arrival <= self.now:
            datagram = self._in_flight.popleft()
            sender = "server" if datagram.receiver == "client" else "client"
            self.quic[datagram.receiver].receive_datagram(
                datagram.data, ADDRESSES[sender], now=self.now
            )
            self._has_peer_address.add(datagram.receiver)

    def _fire_timers(self) -> None:
        for name in ENDPOINTS:
            timer = self.quic[name].get_timer()
            if timer is not None and timer <= self.now:
                self.quic[name].handle_timer(now=self.now)

    def _process_events(self, delivered: dict[str, list[AnyH3Event]]) -> None:
        """Hand each side's QUIC events to its HTTP/3, and its answers back to QUIC.

        A side whose HTTP/3 has not started starts it when TLS has selected "h3"; the QUIC
        events before that one (connection IDs issued) mean nothing to HTTP/3.
        """
        for name in ENDPOINTS:
            quic = self.quic[name]
            side = self.sides.get(name)
            event = quic.next_event()
            while event is not None:
                self.quic_events[name].append(event)
                if side is None and isinstance(event, ProtocolNegotiated):
                    side = self._start_http3(name)
                events: list[AnyH3Event] = []
                if isinstance(side, H3OverQuic):
                    events.extend(side.quic_event_received(event))
                elif side is not None:
                    self._record_aioquic_event(name, event)
                    events.extend(side.handle_event(event))
                delivered[name].extend(events)
                self.received[name].extend(events)
                event = quic.next_event()
            if isinstance(side, H3OverQuic):
                self._report_close_at_once(name, side, delivered)
                side.transmit_actions()

    def _start_http3(self, name: str) -> H3OverQuic | AioquicH3Connection:
        """TLS selected "h3" (RFC 9114 §3.1): start this side's HTTP/3 on its connection.

        Not earlier: until QUIC has read the peer's transport parameters (in the same
        ClientHello) it assumes no stream may be opened, and streams opened before then
        would wait for the end of the handshake (quic.py).
        """
        waiting = self._not_started.pop(name)
        self.sides[name] = _start(self.quic[name], waiting, name, self.log)
        return self.sides[name]

    def _report_close_at_once(
        self, name: str, side: H3OverQuic, delivered: dict[str, list[AnyH3Event]]
    ) -> None:
        """Tell HTTP/3 of the peer's CONNECTION_CLOSE when it arrives.

        RFC 9000 §10.2: the receiver of a CONNECTION_CLOSE only drains from then on; aioquic
        reports the end (ConnectionTerminated) after that period, three PTOs later, which
        would stamp the close long after it happened. It keeps the event it will report in
        a private attribute as soon as the frame is read; handed over now, it is handled
        once (a closed H3Connection ignores the second). transport/udp_server.py does the same.
        """
        close = self.quic[name]._close_event
        if close is not None and not side.h3.closed:
            events = side.quic_event_received(close)
            delivered[name].extend(events)
            self.received[name].extend(events)

    # -- recording ---------------------------------------------------------------------------

    def _record_datagram(self, name: str, data: bytes) -> None:
        recorder = _recorder(self.log, name)
        if not recorder.enabled:
            return
        header_form = "long" if data[0] & HEADER_FORM_BIT else "short"
        peer = "server" if name == "client" else "client"
        facts: dict[str, Any] = {"length": len(data), "first_packet_header": header_form}
        lost = ""
        if not self.network_up:
            facts["lost"] = True
            lost = ", lost: the network is down"
        recorder.record(
            category="transport",
            name="datagram_sent",
            stream_id=None,
            data=facts,
            # RFC 8999 §5.1 or §5.2: the invariant layout of the first packet's header.
            rfc=("9000#12.2", "8999#5.1" if header_form == "long" else "8999#5.2"),
            summary=(
                f"{name} → {peer}: UDP datagram of {len(data)} bytes ({header_form} header{lost})"
            ),
        )

    def _record_aioquic_event(self, name: str, event: QuicEvent) -> None:
        """Record what an aioquic side's QUIC delivered (its own HTTP/3 records nothing here)."""
        recorder = _recorder(self.log, name)
        if isinstance(event, StreamDataReceived):
            record_stream_data(
                recorder, name, "received", event.stream_id, len(event.data), event.end_stream
            )
        elif isinstance(event, HandshakeCompleted):
            record_handshake(recorder, name, self.quic[name], event)


class NotStartedError(LookupError):
    """A side's HTTP/3 was asked for before it started (the server's, before "h3" is agreed)."""

    def __init__(self, name: str) -> None:
        super().__init__(
            f"the {name}'s HTTP/3 has not started: the client's first flight has not"
            f" reached it yet (pump first)"
        )


def _check_role(name: str, h3: H3Connection) -> None:
    if h3.is_client != (name == "client"):
        raise ValueError(f"the {name} side's H3Connection has is_client={h3.is_client}")


def _start(
    quic: QuicConnection, waiting: _NotStarted, name: str, log: EventLog | None
) -> H3OverQuic | AioquicH3Connection:
    """Start one side's HTTP/3 on its QUIC connection (its control and QPACK streams)."""
    side = waiting.side
    if isinstance(side, type):
        aioquic_h3: AioquicH3Connection = side(quic)
        return aioquic_h3
    h3 = waiting.connection()
    _check_role(name, h3)
    return H3OverQuic(quic, h3, _recorder(log, name))


def _server_ticket_callbacks(tickets: ServerTickets | None, server: _NotStarted) -> dict[str, Any]:
    """aioquic's ticket callbacks for an h3learn server that remembers its tickets.

    aioquic asks for a ticket while it reads the ClientHello, before the server's HTTP/3
    starts; a server given as a function is then made at that moment, to decide on 0-RTT.
    """
    if tickets is None:
        return {}
    if server.runs_aioquic:
        raise TypeError("server_tickets needs an h3learn server: it decides on 0-RTT")

    def issued(ticket: SessionTicket) -> None:
        tickets.handler_for(server.connection())(ticket)

    def fetch(label: bytes) -> SessionTicket | None:
        return tickets.fetcher_for(server.connection())(label)

    return {"session_ticket_handler": issued, "session_ticket_fetcher": fetch}


def _recorder(log: EventLog | None, name: str) -> Recorder:
    return NullRecorder() if log is None else log.for_endpoint(name)
