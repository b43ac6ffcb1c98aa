"""Session tickets and the SETTINGS remembered with them: resuming with 0-RTT (RFC 9114 §7.2.4.2).

A TLS 1.3 server may give the client a session ticket after the handshake (RFC 8446 §4.6.1).
The client that shows it on its next connection resumes the session, and QUIC lets it send
application data in 0-RTT packets in its first flight (RFC 9001 §4.6). HTTP/3 adds one
thing to remember: the server's SETTINGS, which the client follows in 0-RTT before the new
connection's SETTINGS can arrive (RFC 9114 §7.2.4.2). The sans-IO `H3Connection` decides
everything about settings; this module only keeps what each side must remember and hands it
to aioquic's ticket callbacks:

- client: `Resumption` is a ticket and the server's settings on the connection that gave it
  (None when the ticket came before the SETTINGS frame: RFC 9114 §7.2.4.2 lets a client skip
  storing them then, and it falls back to the defaults). Give ``resumption.ticket`` to the
  client's QUIC configuration and ``resumption.settings`` to its `H3Connection` as
  ``remembered_settings``.
- server: `ServerTickets` is the server's memory of the tickets it issued and the SETTINGS it
  had announced on each connection ("a server can remember the settings that it
  advertised", RFC 9114 §7.2.4.2). When a client shows a ticket, the server's `H3Connection`
  decides with `accepts_early_data` whether 0-RTT may be accepted; if not, the ticket is not
  found and aioquic runs a full handshake, so 0-RTT data is refused.

aioquic accepts 0-RTT whenever it resumes a session, so refusing 0-RTT here also refuses
resumption: one full handshake more, never data the server cannot honour.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from aioquic.tls import SessionTicket, SessionTicketFetcher, SessionTicketHandler

from h3learn.h3.connection import H3Connection
from h3learn.h3.settings import Settings


@dataclass(frozen=True)
class Resumption:
    """What a client keeps from one connection to resume the next with 0-RTT."""

    ticket: SessionTicket
    #: The server's SETTINGS on the connection that issued the ticket (RFC 9114 §7.2.4.2).
    settings: Settings | None


def client_resumption(ticket: SessionTicket | None, h3: H3Connection) -> Resumption | None:
    """The ticket and, if they had arrived, the server's settings as ``h3`` received them."""
    if ticket is None:
        return None
    return Resumption(ticket, h3.peer_settings if h3.peer_settings_received else None)


@dataclass
class ServerTickets:
    """The tickets a server issued, each with the SETTINGS it announced on that connection."""

    _issued: dict[bytes, tuple[SessionTicket, Settings]] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self._issued)

    def handler_for(self, h3: H3Connection) -> SessionTicketHandler:
        """aioquic's ``session_ticket_handler`` for a connection: remember what was announced."""

        def issued(ticket: SessionTicket) -> None:
            self._issued[ticket.ticket] = (ticket, h3.local_settings)

        return issued

    def fetcher_for(self, h3: H3Connection) -> SessionTicketFetcher:
        """aioquic's ``session_ticket_fetcher``: the ticket, if 0-RTT may be accepted with it."""

        def fetch(label: bytes) -> SessionTicket | None:
            found = self._issued.get(label)
            if found is None:
                return None
            ticket, remembered = found
            return ticket if self.accept(h3, remembered) else None

        return fetch

    def accept(self, h3: H3Connection, remembered: Settings) -> bool:
        """May the connection ``h3`` accept 0-RTT from a client that remembered ``remembered``?"""
        return h3.accepts_early_data(remembered)
