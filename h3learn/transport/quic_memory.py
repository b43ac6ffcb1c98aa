"""RFC 9000, RFC 9001, RFC 9114 §3.3: real QUIC with TLS 1.3 between two endpoints in one process.

`memory.py` plays QUIC's part perfectly; this transport runs the real thing. Each endpoint
is an aioquic `QuicConnection` with its own TLS 1.3 handshake, packet protection, ACKs and
flow control; only the network is simulated. `QuicMemoryPair` is the loop that runs them,
and its parts are modules of their own:

    virtual_clock.py               the clock every timer and event reads (RFC 9000 §10.1)
    virtual_network.py             the datagrams in flight, with a fixed one-way delay;
                                   ``datagram_sent`` events (RFC 9000 §12.2, RFC 8999 §5)
    quic_memory_sides.py           each side's HTTP/3, h3learn's or aioquic's, and when it
                                   starts (RFC 9114 §3.1, §6.2.1)
    quic_memory_configuration.py   ALPN, the certificate, the flow-control credit each
                                   side grants (RFC 9001 §4, RFC 9000 §18.2)

The UDP datagrams one side produces (`datagrams_to_send`) are handed to the other
(`receive_datagram`) after a fixed one-way delay, on a virtual clock, so the same scenario
always runs the same way: no sockets, no wall clock, no loss. Timers (ACK delay, loss
detection, the closing period of RFC 9000 §10.2) fire when the virtual clock reaches them.

The client's HTTP/3 starts at once; the server's when its QUIC connection has read the
client's first flight and TLS has selected "h3" (quic_memory_sides.py).

When a log is given, the network records ``transport`` ``datagram_sent`` events (``length``
and the first packet's header form, RFC 8999 §5.1, §5.2), the adapters record stream data and
the handshake, and for an aioquic side the pair records the stream data it receives and the
handshake (quic_memory_sides.py).

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

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from aioquic.h3.connection import H3Connection as AioquicH3Connection
from aioquic.quic.connection import QuicConnection
from aioquic.quic.events import ProtocolNegotiated, QuicEvent
from aioquic.tls import SessionTicket

from h3learn.events import ENDPOINTS, EventLog, NullRecorder, Recorder
from h3learn.h3.connection import H3Connection
from h3learn.transport.quic import H3OverQuic
from h3learn.transport.quic_memory_configuration import ReceiveLimits, configurations
from h3learn.transport.quic_memory_sides import (
    AnyH3Event,
    NotStarted,
    NotStartedError,
    Side,
    check_role,
    hand_over,
    report_close_at_once,
    server_ticket_callbacks,
    start,
)
from h3learn.transport.resumption import Resumption, ServerTickets, client_resumption
from h3learn.transport.virtual_clock import VirtualClock
from h3learn.transport.virtual_network import ADDRESSES, VirtualNetwork


@dataclass
class QuicMemoryPair:
    """A client and a server talking QUIC to each other through memory."""

    quic: dict[str, QuicConnection]
    #: Each side's HTTP/3 once started: an `H3OverQuic` adapter, or aioquic's H3Connection.
    sides: dict[str, H3OverQuic | AioquicH3Connection]
    clock: VirtualClock
    log: EventLog | None
    #: The datagrams between the two sides (virtual_network.py).
    network: VirtualNetwork
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
    _not_started: dict[str, NotStarted] = field(default_factory=dict)

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
        client_configuration, server_configuration = configurations(
            certificate_directory, limits, resume
        )
        for name, side in (("client", client), ("server", server)):
            if isinstance(side, H3Connection):
                check_role(name, side)
        waiting = NotStarted(server)
        tickets: list[SessionTicket] = []
        client_quic = QuicConnection(
            configuration=client_configuration, session_ticket_handler=tickets.append
        )
        server_quic = QuicConnection(
            configuration=server_configuration,
            original_destination_connection_id=client_quic.original_destination_connection_id,
            **server_ticket_callbacks(server_tickets, waiting),
        )
        client_quic.connect(ADDRESSES["server"], now=clock.seconds)
        quic = {"client": client_quic, "server": server_quic}
        recorders = {name: _recorder(log, name) for name in ENDPOINTS}
        return cls(
            quic=quic,
            sides={"client": start(client_quic, NotStarted(client), "client", recorders["client"])},
            clock=clock,
            log=log,
            network=VirtualNetwork(one_way_delay, recorders),
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
            one_way_delay=self.network.one_way_delay,
            resume=resumption,
            server_tickets=self.server_tickets,
        )

    @property
    def now(self) -> float:
        return self.clock.seconds

    @property
    def one_way_delay(self) -> float:
        """Seconds a datagram takes from one side to the other."""
        return self.network.one_way_delay

    def disconnect(self) -> None:
        """The network between the endpoints fails: every datagram from now on is lost.

        Neither endpoint is told (RFC 9114 §5.4: a change in network topology can end a
        connection without warning). Each side's QUIC goes on sending, retransmitting and
        probing, recorded as lost datagrams, until its idle timeout (RFC 9000 §10.1) drops
        the connection; `advance` past it to see that. What was in flight is lost too.
        """
        self.network.disconnect()

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
            self.network.collect(self.quic, self.now)
            limit = horizon()
            next_time = self._next_timer()
            if next_time is not None and next_time > limit:
                next_time = None
            arrival = self.network.next_arrival()
            if arrival is not None and (deliver_all or arrival <= limit):
                next_time = arrival if next_time is None else min(next_time, arrival)
            if next_time is None:
                return delivered
            self.clock.seconds = max(self.clock.seconds, next_time)
            self.network.deliver_due(self.quic, self.now)
            self._fire_timers()
        raise RuntimeError(f"the endpoints were still busy after {max_steps} steps")

    def _next_timer(self) -> float | None:
        timers = [t for t in (self.quic[name].get_timer() for name in ENDPOINTS) if t is not None]
        return min(timers, default=None)

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
                if side is not None:
                    recorder = _recorder(self.log, name)
                    self._receive(delivered, name, hand_over(side, event, name, quic, recorder))
                event = quic.next_event()
            if isinstance(side, H3OverQuic):
                self._receive(delivered, name, report_close_at_once(quic, side))
                side.transmit_actions()

    def _receive(
        self, delivered: dict[str, list[AnyH3Event]], name: str, events: list[AnyH3Event]
    ) -> None:
        """What a side's application received: for this run's answer, and kept."""
        delivered[name].extend(events)
        self.received[name].extend(events)

    def _start_http3(self, name: str) -> H3OverQuic | AioquicH3Connection:
        """TLS selected "h3" (RFC 9114 §3.1): start this side's HTTP/3 on its connection.

        Not earlier: until QUIC has read the peer's transport parameters (in the same
        ClientHello) it assumes no stream may be opened, and streams opened before then
        would wait for the end of the handshake (quic.py).
        """
        waiting = self._not_started.pop(name)
        self.sides[name] = start(self.quic[name], waiting, name, _recorder(self.log, name))
        return self.sides[name]


def _recorder(log: EventLog | None, name: str) -> Recorder:
    return NullRecorder() if log is None else log.for_endpoint(name)
