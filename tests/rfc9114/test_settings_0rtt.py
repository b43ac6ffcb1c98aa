"""RFC 9114 §7.2.4.2 (and RFC 9204 §3.2.3): SETTINGS on a resumed connection with 0-RTT.

Every test runs real QUIC (aioquic, TLS 1.3 session tickets, 0-RTT packets) between two
h3learn connections in memory: a first connection gives the client a ticket and the
server's SETTINGS; a second one resumes with them. Each test is named after the rule it
checks.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from aioquic.quic.events import HandshakeCompleted, StreamDataReceived

from h3learn.events import Event, EventLog
from h3learn.h3 import http_events
from h3learn.h3.connection import H3Connection, H3UsageError
from h3learn.h3.errors import ErrorCode
from h3learn.h3.settings import Settings
from h3learn.qpack.errors import QpackErrorCode
from h3learn.transport.quic_memory import QuicMemoryPair
from h3learn.transport.resumption import Resumption, ServerTickets
from h3learn.transport.virtual_clock import VirtualClock

GET = [
    (b":method", b"GET"),
    (b":scheme", b"https"),
    (b":authority", b"localhost"),
    (b":path", b"/early"),
    (b"user-agent", b"h3learn-test"),
]
REMEMBERED = Settings(qpack_max_table_capacity=4096, qpack_blocked_streams=16)


class CarelessTickets(ServerTickets):
    """A server that breaks RFC 9114 §7.2.4.2: it accepts 0-RTT without comparing settings."""

    def accept(self, h3: H3Connection, remembered: Settings) -> bool:
        return True


@dataclass
class Resumed:
    pair: QuicMemoryPair
    client: H3Connection
    server: H3Connection
    log: EventLog

    def events(self, endpoint: str, name: str) -> list[Event]:
        return [e for e in self.log.events if e.endpoint == endpoint and e.name == name]

    def handshake(self, endpoint: str) -> HandshakeCompleted:
        (done,) = [e for e in self.pair.quic_events[endpoint] if isinstance(e, HandshakeCompleted)]
        return done

    def close_code(self) -> int | None:
        return self.client.close_code


def first_connection(server_settings: Settings, tickets: ServerTickets) -> QuicMemoryPair:
    """A whole first connection: the client leaves with a ticket and the server's SETTINGS."""
    client = H3Connection(is_client=True, settings=REMEMBERED)
    server = H3Connection(is_client=False, settings=server_settings)
    pair = QuicMemoryPair.create(client=client, server=server, server_tickets=tickets)
    pair.pump()
    resumption = pair.resumption()
    assert resumption is not None and resumption.settings == server_settings
    return pair


def resume(
    server_settings: Settings,
    *,
    remembered: Settings = REMEMBERED,
    tickets: ServerTickets | None = None,
    use_remembered: bool = True,
) -> Resumed:
    """A second connection that resumes the first; nothing has moved yet."""
    tickets = tickets if tickets is not None else ServerTickets()
    first = first_connection(remembered, tickets)
    clock = VirtualClock()
    log = EventLog(clock=clock)
    client = H3Connection(
        is_client=True,
        settings=REMEMBERED,
        remembered_settings=remembered if use_remembered else None,
        recorder=log.for_endpoint("client"),
    )
    server = H3Connection(
        is_client=False, settings=server_settings, recorder=log.for_endpoint("server")
    )
    pair = first.reconnect(client=client, server=server, log=log, clock=clock)
    return Resumed(pair, client, server, log)


def arrived_before_handshake(resumed: Resumed, stream_id: int) -> bool:
    """Did the server's QUIC deliver data of ``stream_id`` before its handshake completed?

    Only 0-RTT packets can carry stream data that early.
    """
    for event in resumed.pair.quic_events["server"]:
        if isinstance(event, HandshakeCompleted):
            return False
        if isinstance(event, StreamDataReceived) and event.stream_id == stream_id:
            return True
    raise AssertionError("the handshake never completed")


# -- 0-RTT really used --------------------------------------------------------------------


def test_request_sent_in_0rtt_is_answered() -> None:
    resumed = resume(REMEMBERED)
    stream_id = resumed.client.send_request(GET, end_stream=True)
    events = resumed.pair.pump()
    (request,) = [e for e in events["server"] if isinstance(e, http_events.HeadersReceived)]
    assert request.stream_id == stream_id and request.headers == GET
    assert arrived_before_handshake(resumed, stream_id)
    assert resumed.handshake("server").early_data_accepted
    assert resumed.handshake("client").early_data_accepted
    resumed.server.send_headers(stream_id, [(b":status", b"200")])
    resumed.server.send_data(stream_id, b"early bird", end_stream=True)
    events = resumed.pair.pump()
    (data,) = [e for e in events["client"] if isinstance(e, http_events.DataReceived)]
    assert data.data == b"early bird" and data.stream_ended
    assert resumed.client.close_code is None and resumed.server.close_code is None


def test_trace_shows_the_client_using_remembered_settings() -> None:
    """docs/events.md: parameters_restored, then each side's early_data_decision."""
    resumed = resume(REMEMBERED)
    resumed.client.send_request(GET, end_stream=True)
    resumed.pair.pump()
    (restored,) = resumed.events("client", "parameters_restored")
    assert restored.data["owner"] == "remote"
    assert {s["name"]: s["value"] for s in restored.data["settings"]} == {
        "QPACK_MAX_TABLE_CAPACITY": 4096,
        "QPACK_BLOCKED_STREAMS": 16,
    }
    (decided,) = resumed.events("server", "early_data_decision")
    assert decided.data["accepted"] is True
    (told,) = resumed.events("client", "early_data_decision")
    assert told.data["accepted"] is True
    sent = resumed.events("client", "stream_data_sent")
    assert any("0-RTT" in e.summary and e.stream_id == 0 for e in sent)
    assert restored.seq < decided.seq < told.seq


# -- the client (RFC 9114 §7.2.4.2) -----------------------------------------------------


def test_client_must_comply_with_stored_settings_when_attempting_0rtt() -> None:
    """The remembered QPACK capacity is used in 0-RTT; a remembered size limit is kept."""
    resumed = resume(REMEMBERED)
    for _ in range(3):
        resumed.client.send_request(GET, end_stream=True)
    # Nothing has moved: the server's SETTINGS cannot have arrived, yet the encoder used the
    # dynamic table that the remembered QPACK_MAX_TABLE_CAPACITY allows.
    assert not resumed.client.peer_settings_received
    capacity = [
        e
        for e in resumed.events("client", "instruction_created")
        if e.data.get("instruction_type") == "set_dynamic_table_capacity"
    ]
    assert [e.data["capacity"] for e in capacity] == [4096]
    events = resumed.pair.pump()
    requests = [e for e in events["server"] if isinstance(e, http_events.HeadersReceived)]
    assert [r.headers for r in requests] == [GET] * 3
    assert resumed.server.close_code is None

    limited = resume(Settings(), remembered=Settings(max_field_section_size=100))
    with pytest.raises(H3UsageError, match="SETTINGS_MAX_FIELD_SECTION_SIZE 100"):
        limited.client.send_request([*GET, (b"x-long", b"v" * 100)], end_stream=True)


def test_client_without_stored_settings_uses_the_defaults_in_0rtt() -> None:
    """ "... or default values if no values are stored": no dynamic table before SETTINGS."""
    resumed = resume(REMEMBERED, use_remembered=False)
    for _ in range(3):
        resumed.client.send_request(GET, end_stream=True)
    assert resumed.client.encoder.max_table_capacity == 0
    assert not resumed.events("client", "instruction_created")
    assert not resumed.events("client", "parameters_restored")
    resumed.pair.pump()
    assert resumed.server.close_code is None


def test_client_must_comply_with_new_settings_once_provided() -> None:
    """A server that accepted 0-RTT may raise limits; from its SETTINGS on they apply."""
    raised = Settings(
        qpack_max_table_capacity=4096, qpack_blocked_streams=100, enable_connect_protocol=True
    )
    resumed = resume(raised)
    resumed.pair.pump()
    assert resumed.handshake("server").early_data_accepted
    assert resumed.client.close_code is None
    assert resumed.client.peer_settings == raised
    assert resumed.client.encoder.max_blocked_streams == 100
    tunnel = [
        (b":method", b"CONNECT"),
        (b":protocol", b"websocket"),
        (b":scheme", b"https"),
        (b":authority", b"localhost"),
        (b":path", b"/chat"),
    ]
    resumed.client.send_request(tunnel)  # RFC 9220: allowed only by the new SETTINGS


def test_client_stores_no_settings_when_the_ticket_came_first() -> None:
    """ "MAY opt not to store settings ... if the session ticket is received before SETTINGS"."""
    from h3learn.transport.resumption import client_resumption

    resumption = first_connection(REMEMBERED, ServerTickets()).resumption()
    assert resumption is not None
    fresh = H3Connection(is_client=True)
    assert client_resumption(resumption.ticket, fresh) == Resumption(resumption.ticket, None)
    assert client_resumption(None, fresh) is None


# -- the server (RFC 9114 §7.2.4.2) -----------------------------------------------------


@pytest.mark.parametrize(
    "current",
    [
        Settings(qpack_max_table_capacity=4096, qpack_blocked_streams=8),
        Settings(qpack_max_table_capacity=2048, qpack_blocked_streams=16),
        Settings(qpack_max_table_capacity=4096, qpack_blocked_streams=16, max_field_section_size=9),
    ],
    ids=["fewer blocked streams", "smaller table", "a size limit"],
)
def test_server_that_cannot_honour_remembered_settings_must_not_accept_0rtt(
    current: Settings,
) -> None:
    resumed = resume(current)
    resumed.pair.pump()
    assert not resumed.handshake("server").early_data_accepted
    assert not resumed.handshake("client").early_data_accepted
    (decided,) = resumed.events("server", "early_data_decision")
    assert decided.data["accepted"] is False and decided.data["rfc"] == "9114#7.2.4.2"
    # Nothing was sent in 0-RTT beyond the critical streams: the connection carries on,
    # from the defaults, then the server's SETTINGS (RFC 9114 §7.2.4.2, 1-RTT).
    assert resumed.client.close_code is None
    assert resumed.client.peer_settings == current
    (told,) = resumed.events("client", "early_data_decision")
    assert told.data["accepted"] is False
    assert [s["value"] for s in told.data["settings"]] == []  # the defaults, before SETTINGS


def test_server_may_accept_0rtt_with_settings_that_reduce_nothing() -> None:
    current = Settings(qpack_max_table_capacity=4096, qpack_blocked_streams=32, h3_datagram=True)
    resumed = resume(current)
    resumed.pair.pump()
    assert resumed.handshake("server").early_data_accepted
    assert resumed.client.close_code is None


def test_server_accepting_0rtt_must_include_all_non_default_settings() -> None:
    current = Settings(
        qpack_max_table_capacity=4096, qpack_blocked_streams=16, max_field_section_size=65536
    )
    resumed = resume(current, remembered=current)
    resumed.pair.pump()
    assert resumed.handshake("server").early_data_accepted
    (settings,) = [
        e
        for e in resumed.events("server", "frame_created")
        if e.data["frame"]["frame_type"] == "settings"
    ]
    announced = {item["name"] for item in settings.data["frame"]["settings"]}
    assert announced == {
        "settings_qpack_max_table_capacity",
        "settings_max_field_section_size",
        "settings_qpack_blocked_streams",
    }


def test_server_refusing_0rtt_after_requests_were_sent_in_it() -> None:
    """RFC 9001 §4.6.2: refused 0-RTT data is lost; the client may retry the requests."""
    resumed = resume(Settings(qpack_max_table_capacity=4096))
    stream_id = resumed.client.send_request(GET, end_stream=True)
    events = resumed.pair.pump()
    assert not resumed.handshake("client").early_data_accepted
    resets = [e for e in events["client"] if isinstance(e, http_events.StreamReset)]
    assert [(r.stream_id, r.retry_safe) for r in resets] == [(stream_id, True)]
    assert resumed.client.close_code == ErrorCode.H3_NO_ERROR
    requests = [e for e in events["server"] if isinstance(e, http_events.HeadersReceived)]
    assert requests == []


# -- the client checks a server that accepted 0-RTT (RFC 9114 §7.2.4.2) --------------------


@pytest.mark.parametrize(
    ("remembered", "announced"),
    [
        (REMEMBERED, Settings(qpack_max_table_capacity=4096, qpack_blocked_streams=8)),
        (
            Settings(max_field_section_size=1000),
            Settings(max_field_section_size=999),
        ),
        (Settings(), Settings(max_field_section_size=1 << 20)),
        (Settings(enable_connect_protocol=True), Settings(enable_connect_protocol=False)),
        (Settings(h3_datagram=True), Settings(h3_datagram=False)),
    ],
    ids=[
        "fewer blocked streams",
        "smaller field sections",
        "a limit where there was none",
        "extended CONNECT off",
        "datagrams off",
    ],
)
def test_incompatible_settings_after_accepted_0rtt_must_be_h3_settings_error(
    remembered: Settings, announced: Settings
) -> None:
    resumed = resume(announced, remembered=remembered, tickets=CarelessTickets())
    resumed.pair.pump()
    assert resumed.handshake("client").early_data_accepted
    assert resumed.client.close_code == ErrorCode.H3_SETTINGS_ERROR
    (error,) = resumed.events("client", "connection_error")
    assert error.data["rfc"] == "9114#7.2.4.2" and error.data["direction"] == "sent"
    assert "accepted 0-RTT" in error.data["rule"]


def test_omitting_a_remembered_non_default_setting_must_be_h3_settings_error() -> None:
    """Leaving out MAX_FIELD_SECTION_SIZE means "unlimited", a larger limit: still an error."""
    resumed = resume(
        Settings(), remembered=Settings(max_field_section_size=1000), tickets=CarelessTickets()
    )
    resumed.pair.pump()
    assert resumed.client.close_code == ErrorCode.H3_SETTINGS_ERROR
    (error,) = resumed.events("client", "connection_error")
    assert "leave out MAX_FIELD_SECTION_SIZE" in error.data["rule"]


def test_omitting_a_remembered_reserved_setting_is_not_an_error() -> None:
    """ "apart from reserved setting identifiers": GREASE values are never remembered."""
    grease = Settings(qpack_max_table_capacity=4096, qpack_blocked_streams=16, ignored=((0x21, 7),))
    resumed = resume(REMEMBERED, remembered=grease, tickets=CarelessTickets())
    resumed.pair.pump()
    assert resumed.handshake("client").early_data_accepted
    assert resumed.client.close_code is None


@pytest.mark.parametrize(
    "announced",
    [
        Settings(qpack_max_table_capacity=8192, qpack_blocked_streams=16),
        Settings(qpack_blocked_streams=16),
    ],
    ids=["a larger capacity", "no capacity at all"],
)
def test_changed_remembered_table_capacity_is_qpack_decoder_stream_error(
    announced: Settings,
) -> None:
    """RFC 9204 §3.2.3: a remembered non-zero capacity must come back exactly."""
    resumed = resume(announced, tickets=CarelessTickets())
    resumed.pair.pump()
    assert resumed.client.close_code == QpackErrorCode.QPACK_DECODER_STREAM_ERROR
    (error,) = resumed.events("client", "connection_error")
    assert error.data["rfc"] == "9204#3.2.3"


def test_remembered_settings_are_a_client_matter() -> None:
    with pytest.raises(H3UsageError, match="only a client"):
        H3Connection(is_client=False, remembered_settings=REMEMBERED)
    with pytest.raises(H3UsageError, match="only a server"):
        H3Connection(is_client=True).accepts_early_data(REMEMBERED)
