"""The QUIC adapter and the in-memory QUIC pair: what they translate (RFC 9114 §3.3, §5.3).

H3OverQuic makes no protocol decisions; these tests check that it hands every kind of QUIC
event to the HTTP/3 connection (connection closes by the peer, by QUIC itself) and that
recording stays off when no log is given.
"""

from __future__ import annotations

import pytest
from aioquic.h3.connection import H3Connection as AioquicH3Connection
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.connection import QuicConnection

from h3learn.events import EventLog
from h3learn.h3 import http_events
from h3learn.h3.connection import H3Connection
from h3learn.h3.errors import ErrorCode
from h3learn.h3.settings import Settings
from h3learn.transport.quic import H3OverQuic
from h3learn.transport.quic_memory import QuicMemoryPair
from h3learn.transport.virtual_clock import VirtualClock

GET = [
    (b":method", b"GET"),
    (b":scheme", b"https"),
    (b":authority", b"localhost"),
    (b":path", b"/"),
]


def test_adapter_refuses_a_server_h3_on_a_client_quic_connection() -> None:
    quic = QuicConnection(configuration=QuicConfiguration(is_client=True))
    with pytest.raises(ValueError, match="roles"):
        H3OverQuic(quic, H3Connection(is_client=False))


def test_pair_refuses_a_server_h3_on_the_client_side() -> None:
    with pytest.raises(ValueError, match="is_client"):
        QuicMemoryPair.create(client=H3Connection(is_client=False), server=AioquicH3Connection)


def test_nothing_is_recorded_without_a_log() -> None:
    """Recording off (NullRecorder everywhere): the exchange still works."""
    pair = QuicMemoryPair.create(client=H3Connection(is_client=True), server=AioquicH3Connection)
    pair.pump()
    stream_id = pair.h3learn("client").send_request(GET, end_stream=True)
    pair.pump()
    server = pair.aioquic("server")
    server.send_headers(stream_id, [(b":status", b"204")], end_stream=True)
    pair.pump()
    assert pair.log is None
    (response,) = [e for e in pair.received["client"] if isinstance(e, http_events.HeadersReceived)]
    assert response.headers == [(b":status", b"204")] and response.stream_ended


def test_peer_application_close_reaches_h3learn_with_its_code() -> None:
    """RFC 9114 §5.3: CONNECTION_CLOSE of type 0x1d carries an HTTP/3 error code."""
    clock = VirtualClock()
    log = EventLog(clock=clock)
    client = H3Connection(is_client=True, settings=Settings(), recorder=log.for_endpoint("client"))
    pair = QuicMemoryPair.create(client=client, server=AioquicH3Connection, log=log, clock=clock)
    pair.pump()
    pair.quic["server"].close(error_code=ErrorCode.H3_INTERNAL_ERROR, reason_phrase="bye")
    received = pair.pump()["client"]
    assert received == [
        http_events.ConnectionTerminated(
            error_code=ErrorCode.H3_INTERNAL_ERROR, reason="bye", by_peer=True
        )
    ]
    (error,) = [e for e in log.events if e.name == "connection_error"]
    assert error.endpoint == "client" and error.data["direction"] == "received"
    assert client.closed


def h3learn_pair() -> tuple[QuicMemoryPair, EventLog]:
    """Two h3learn endpoints over QUIC sharing one log, SETTINGS exchanged."""
    clock = VirtualClock()
    log = EventLog(clock=clock)
    pair = QuicMemoryPair.create(
        client=H3Connection(is_client=True, recorder=log.for_endpoint("client")),
        server=H3Connection(is_client=False, recorder=log.for_endpoint("server")),
        log=log,
        clock=clock,
    )
    pair.pump()
    return pair, log


def test_idle_timeout_closes_both_h3learn_endpoints_silently_as_an_idle_close() -> None:
    """RFC 9000 §10.1, RFC 9114 §5.1: after the idle timeout QUIC drops the connection
    silently: no error code, no CONNECTION_CLOSE."""
    pair, log = h3learn_pair()
    assert pair.advance(1.0) == {"client": [], "server": []}
    received = pair.advance(120.0)
    for name in ("client", "server"):
        (closed,) = received[name]
        assert isinstance(closed, http_events.ConnectionTerminated)
        assert closed.by_peer
        assert closed.reason.startswith("nothing arrived for 60 s")
        assert type(closed.error_code) is int
        assert pair.h3learn(name).closed
    assert 60.0 <= pair.now <= 122.0
    assert pair.pump() == {"client": [], "server": []}
    closes = {
        e.endpoint: e for e in log.events if e.name in ("connection_closed", "connection_error")
    }
    for name, event in sorted(closes.items()):
        assert (event.name, event.data["code_name"], event.data["code"]) == (
            "connection_closed",
            "idle timeout",
            None,
        ), name
        assert event.rfc == ("9114#5.1", "9000#10.1"), "no request was waiting: no §5.4"
    assert sorted(closes) == ["client", "server"]
    assert closes["client"].data["unanswered_requests"] == []


def test_the_peers_connection_close_is_reported_when_it_arrives_not_after_draining() -> None:
    """RFC 9000 §10.2: the receiver drains for three PTOs; the close happened on arrival."""
    pair, log = h3learn_pair()
    pair.h3learn("server").close(ErrorCode.H3_NO_ERROR, "maintenance")
    pair.pump()
    sent, received = [e for e in log.events if e.name == "connection_closed"]
    assert (sent.endpoint, received.endpoint) == ("server", "client")
    assert received.time - sent.time == pair.one_way_delay * 1000
    terminated = [
        e for e in pair.received["client"] if isinstance(e, http_events.ConnectionTerminated)
    ]
    assert terminated == [
        http_events.ConnectionTerminated(
            error_code=ErrorCode.H3_NO_ERROR, reason="maintenance", by_peer=True
        )
    ], "reported once, though aioquic reports it again after draining"


def test_a_disconnected_network_loses_every_datagram_until_the_idle_timeout() -> None:
    """RFC 9114 §5.4: the network fails; each side's QUIC gives up after its idle timeout,
    and the client names the request that may or may not have been processed."""
    pair, log = h3learn_pair()
    stream_id = pair.h3learn("client").send_request(GET, end_stream=True)
    pair.pump()
    pair.disconnect()
    pair.h3learn("server").send_headers(stream_id, [(b":status", b"204")], end_stream=True)
    pair.advance(120.0)
    lost = [e for e in log.events if e.name == "datagram_sent" and e.data.get("lost")]
    assert lost and all(e.endpoint == "server" for e in lost)
    assert "lost: the network is down" in lost[0].summary
    assert not [e for e in pair.received["client"] if isinstance(e, http_events.HeadersReceived)]
    closes = {e.endpoint: e for e in log.events if e.name == "connection_closed"}
    assert (
        closes["client"].data["code_name"] == closes["server"].data["code_name"] == "idle timeout"
    )
    assert closes["client"].data["unanswered_requests"] == [stream_id]
    assert closes["client"].rfc == ("9114#5.1", "9000#10.1", "9114#5.4")


def test_a_datagram_cites_the_invariant_layout_of_its_first_packets_header() -> None:
    """RFC 8999 §5.1 for a long header (the handshake), §5.2 for a short one (1-RTT)."""
    pair, log = h3learn_pair()
    pair.h3learn("client").send_request(GET, end_stream=True)
    pair.pump()
    datagrams = [e for e in log.events if e.name == "datagram_sent"]
    forms = {e.data["first_packet_header"]: e.rfc for e in datagrams}
    assert "8999#5.1" in forms["long"] and "8999#5.2" not in forms["long"]
    assert "8999#5.2" in forms["short"] and "8999#5.1" not in forms["short"]


def first_datagram_arrival(pair: QuicMemoryPair, log: EventLog) -> tuple[int, float]:
    """The seq of the client's first datagram, and when (ms) it reaches the server."""
    first = next(e for e in log.events if e.name == "datagram_sent")
    assert first.endpoint == "client"
    return first.seq, first.time + pair.one_way_delay * 1000


@pytest.mark.parametrize("given", ["a function", "a connection"])
def test_the_server_starts_http3_only_after_the_clients_first_datagram_arrives(
    given: str,
) -> None:
    """RFC 9114 §3.1, §6.2.1: a server has no connection, and nothing to send on one, until
    the client's first flight (its ClientHello, offering "h3") has reached it. Its control
    and QPACK streams and its SETTINGS then leave in its first flight (RFC 9001 §4.1.1).
    Given as a function, the server is made then, so its SETTINGS are decided then too;
    given as a connection, it was made (and decided them) before, but opens nothing."""
    clock = VirtualClock()
    log = EventLog(clock=clock)

    def make_server() -> H3Connection:
        return H3Connection(is_client=False, recorder=log.for_endpoint("server"))

    pair = QuicMemoryPair.create(
        client=H3Connection(is_client=True, recorder=log.for_endpoint("client")),
        server=make_server if given == "a function" else make_server(),
        log=log,
        clock=clock,
    )
    if given == "a function":
        with pytest.raises(LookupError, match="has not started"):
            pair.h3learn("server")
    pair.pump()
    first_seq, arrival = first_datagram_arrival(pair, log)
    server_http3 = [e for e in log.events if e.endpoint == "server" and e.category == "http3"]
    if given == "a connection":
        made, *server_http3 = server_http3
        assert (made.name, made.data["owner"]) == ("parameters_set", "local")
    assert server_http3, "the server did start"
    early = [e.summary for e in server_http3 if e.seq < first_seq or e.time < arrival]
    assert early == [], "server HTTP/3 before the client's first datagram reached it"
    server_datagrams = [
        e for e in log.events if e.endpoint == "server" and e.name == "datagram_sent"
    ]
    settings_sent = next(e for e in server_http3 if e.name == "frame_created")
    assert settings_sent.data["frame"]["frame_type"] == "settings"
    assert settings_sent.seq < server_datagrams[0].seq, "SETTINGS leave in its first flight"
    assert pair.h3learn("server").peer_settings_received
