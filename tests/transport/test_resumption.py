"""Session tickets carried for 0-RTT (h3learn/transport/resumption.py, RFC 9114 §7.2.4.2).

The transport only keeps tickets and the SETTINGS remembered with them; the decisions are
the H3Connection's (tests/rfc9114/test_settings_0rtt.py). These tests check the keeping.
"""

from __future__ import annotations

import pytest
from aioquic.h3.connection import H3Connection as AioquicH3Connection

from h3learn.h3.connection import H3Connection
from h3learn.h3.settings import Settings
from h3learn.transport.quic_memory import QuicMemoryPair
from h3learn.transport.resumption import ServerTickets

SETTINGS = Settings(qpack_max_table_capacity=4096, qpack_blocked_streams=16)


def test_server_remembers_the_settings_it_announced_with_each_ticket() -> None:
    tickets = ServerTickets()
    server = H3Connection(is_client=False, settings=SETTINGS)
    pair = QuicMemoryPair.create(
        client=H3Connection(is_client=True), server=server, server_tickets=tickets
    )
    pair.pump()
    assert len(tickets) == len(pair.client_tickets) == 1
    resumption = pair.resumption()
    assert resumption is not None and resumption.settings == SETTINGS
    fetch = tickets.fetcher_for(H3Connection(is_client=False, settings=SETTINGS))
    found = fetch(resumption.ticket.ticket)
    assert found is not None and found.ticket == resumption.ticket.ticket
    assert fetch(b"a ticket this server never issued") is None


def test_a_server_whose_settings_shrank_does_not_find_the_ticket() -> None:
    """aioquic accepts 0-RTT whenever it resumes: refusing 0-RTT means a full handshake."""
    tickets = ServerTickets()
    pair = QuicMemoryPair.create(
        client=H3Connection(is_client=True),
        server=H3Connection(is_client=False, settings=SETTINGS),
        server_tickets=tickets,
    )
    pair.pump()
    resumption = pair.resumption()
    assert resumption is not None
    smaller = H3Connection(is_client=False, settings=Settings(qpack_max_table_capacity=4096))
    assert tickets.fetcher_for(smaller)(resumption.ticket.ticket) is None


def test_without_server_tickets_nothing_can_be_resumed() -> None:
    pair = QuicMemoryPair.create(
        client=H3Connection(is_client=True), server=H3Connection(is_client=False)
    )
    pair.pump()
    assert pair.client_tickets == [] and pair.resumption() is None
    with pytest.raises(ValueError, match="no session ticket"):
        pair.reconnect(client=H3Connection(is_client=True), server=H3Connection(is_client=False))


def test_only_an_h3learn_server_decides_on_0rtt() -> None:
    with pytest.raises(TypeError, match="h3learn server"):
        QuicMemoryPair.create(
            client=H3Connection(is_client=True),
            server=AioquicH3Connection,
            server_tickets=ServerTickets(),
        )
