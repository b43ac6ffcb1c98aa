"""RFC 9114 §3.1, §6.2.1: each side's HTTP/3 in the in-memory QUIC pair, and when it starts.

A side runs HTTP/3 in one of two ways:

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

Once started, a side is handed every QUIC event its connection produces (`hand_over`): an
h3learn side through its adapter, which records what moved; an aioquic side directly,
recorded here (it records nothing of its own).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aioquic.h3.connection import H3Connection as AioquicH3Connection
from aioquic.h3.events import H3Event as AioquicH3Event
from aioquic.quic.connection import QuicConnection
from aioquic.quic.events import HandshakeCompleted, QuicEvent, StreamDataReceived
from aioquic.tls import SessionTicket

from h3learn.events import Recorder
from h3learn.h3.connection import H3Connection
from h3learn.h3.http_events import H3Event
from h3learn.transport.quic import H3OverQuic, record_handshake, record_stream_data
from h3learn.transport.resumption import ServerTickets

#: An endpoint: h3learn's connection, a function that makes one when the pair starts that
#: side's HTTP/3, or aioquic's H3Connection class (built by the pair).
Side = H3Connection | Callable[[], H3Connection] | type[AioquicH3Connection]
AnyH3Event = H3Event | AioquicH3Event


@dataclass
class NotStarted:
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


class NotStartedError(LookupError):
    """A side's HTTP/3 was asked for before it started (the server's, before "h3" is agreed)."""

    def __init__(self, name: str) -> None:
        super().__init__(
            f"the {name}'s HTTP/3 has not started: the client's first flight has not"
            f" reached it yet (pump first)"
        )


def check_role(name: str, h3: H3Connection) -> None:
    if h3.is_client != (name == "client"):
        raise ValueError(f"the {name} side's H3Connection has is_client={h3.is_client}")


def start(
    quic: QuicConnection, waiting: NotStarted, name: str, recorder: Recorder
) -> H3OverQuic | AioquicH3Connection:
    """Start one side's HTTP/3 on its QUIC connection (its control and QPACK streams)."""
    side = waiting.side
    if isinstance(side, type):
        aioquic_h3: AioquicH3Connection = side(quic)
        return aioquic_h3
    h3 = waiting.connection()
    check_role(name, h3)
    return H3OverQuic(quic, h3, recorder)


def hand_over(
    side: H3OverQuic | AioquicH3Connection,
    event: QuicEvent,
    name: str,
    quic: QuicConnection,
    recorder: Recorder,
) -> list[AnyH3Event]:
    """Give a QUIC event to the side's HTTP/3; the HTTP/3 events it produced."""
    if isinstance(side, H3OverQuic):
        return list(side.quic_event_received(event))
    record_aioquic_event(recorder, name, quic, event)
    return list(side.handle_event(event))


def report_close_at_once(quic: QuicConnection, side: H3OverQuic) -> list[AnyH3Event]:
    """Tell HTTP/3 of the peer's CONNECTION_CLOSE when it arrives.

    RFC 9000 §10.2: the receiver of a CONNECTION_CLOSE only drains from then on; aioquic
    reports the end (ConnectionTerminated) after that period, three PTOs later, which
    would stamp the close long after it happened. It keeps the event it will report in
    a private attribute as soon as the frame is read; handed over now, it is handled
    once (a closed H3Connection ignores the second). transport/udp_server.py does the same.
    """
    close = quic._close_event
    if close is not None and not side.h3.closed:
        return list(side.quic_event_received(close))
    return []


def record_aioquic_event(
    recorder: Recorder, name: str, quic: QuicConnection, event: QuicEvent
) -> None:
    """Record what an aioquic side's QUIC delivered (its own HTTP/3 records nothing here)."""
    if isinstance(event, StreamDataReceived):
        record_stream_data(
            recorder, name, "received", event.stream_id, len(event.data), event.end_stream
        )
    elif isinstance(event, HandshakeCompleted):
        record_handshake(recorder, name, quic, event)


def server_ticket_callbacks(tickets: ServerTickets | None, server: NotStarted) -> dict[str, Any]:
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
