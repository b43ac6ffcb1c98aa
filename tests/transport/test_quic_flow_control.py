"""QUIC flow control read from aioquic, and QPACK's encoder kept within it (RFC 9204 §2.1.3).

transport/quic_flow_control.py reads private attributes of aioquic (aioquic publishes no
"credit left"). The first tests fail loudly, naming the attribute, if aioquic renames one
or changes what it counts; the others run real QUIC in memory with a server that grants
the client 64 bytes per stream, and check that the client's QPACK encoder never writes an
instruction that the encoder stream's credit does not cover.
"""

from __future__ import annotations

from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.connection import QuicConnection

from h3learn.events import Event, EventLog
from h3learn.h3.connection import H3Connection
from h3learn.h3.http_events import HeadersReceived
from h3learn.h3.settings import Settings
from h3learn.transport.quic import H3OverQuic
from h3learn.transport.quic_flow_control import send_limits
from h3learn.transport.quic_memory import QuicMemoryPair
from h3learn.transport.quic_memory_configuration import ReceiveLimits
from h3learn.transport.virtual_clock import VirtualClock

Header = tuple[bytes, bytes]

DYNAMIC = Settings(qpack_max_table_capacity=4096, qpack_blocked_streams=16)
FIELDS: list[Header] = [
    (b":method", b"GET"),
    (b":scheme", b"https"),
    (b":authority", b"localhost"),
    (b":path", b"/"),
    (b"user-agent", b"h3learn/0.1 (learning HTTP/3)"),
    (b"accept-language", b"en-GB,en;q=0.8"),
    (b"x-learner", b"student-42"),
]
CLIENT_ENCODER_STREAM = 6


# -- what is read from aioquic ----------------------------------------------------------------


def test_aioquic_still_keeps_the_flow_control_state_that_is_read_from_it() -> None:
    """quic_flow_control.py reads these names; a failure here says which one changed."""
    quic = QuicConnection(configuration=QuicConfiguration(is_client=True))
    for name in ("_streams", "_remote_max_data", "_remote_max_data_used"):
        assert hasattr(quic, name), f"aioquic's QuicConnection no longer has {name}"
    assert isinstance(quic._streams, dict), "QuicConnection._streams is no longer a dict"
    assert isinstance(quic._remote_max_data, int) and isinstance(quic._remote_max_data_used, int)
    quic.send_stream_data(2, b"12345")  # a client unidirectional stream, created by writing
    stream = quic._streams[2]
    sender = stream.sender
    for name in ("_buffer_stop", "highest_offset", "buffer_is_empty"):
        assert hasattr(sender, name), f"aioquic's QuicStreamSender no longer has {name}"
    assert hasattr(stream, "max_stream_data_remote"), "QuicStream.max_stream_data_remote is gone"
    assert sender._buffer_stop == 5, "QuicStreamSender._buffer_stop no longer counts writes"
    assert (sender.highest_offset, sender.buffer_is_empty) == (0, False), "nothing sent yet"


def limited_pair(log: EventLog | None = None, max_data: int | None = None) -> QuicMemoryPair:
    """An h3learn client and server over QUIC; the server grants 64 bytes per stream."""
    clock = VirtualClock()
    log = log if log is not None else EventLog(clock=clock)
    client = H3Connection(is_client=True, settings=DYNAMIC, recorder=log.for_endpoint("client"))
    server = H3Connection(is_client=False, settings=DYNAMIC, recorder=log.for_endpoint("server"))
    pair = QuicMemoryPair.create(
        client=client,
        server=server,
        log=log,
        clock=clock,
        limits={"server": ReceiveLimits(max_stream_data=64, max_data=max_data)},
    )
    pair.pump()
    return pair


def written_by_client(log: EventLog, stream_id: int | None = None) -> int:
    return sum(
        e.data["length"]
        for e in log.events
        if e.endpoint == "client"
        and e.name == "stream_data_sent"
        and stream_id in (None, e.stream_id)
    )


def test_the_credit_is_the_peers_limit_less_every_byte_written_sent_or_not() -> None:
    """RFC 9000 §4.1: the limits are absolute; bytes waiting in aioquic count as written."""
    log = EventLog()
    pair = limited_pair(log, max_data=1000)
    quic = pair.quic["client"]
    limits = send_limits(quic, CLIENT_ENCODER_STREAM)
    assert (limits.stream_limit, limits.stream_written) == (64, 1)  # the stream type
    assert limits.connection_limit == 1000
    assert limits.connection_written == written_by_client(log)
    # A request handed to aioquic but not sent yet (no datagram has been made) is counted.
    pair.h3learn("client").send_request(FIELDS, end_stream=True)
    adapter = pair.sides["client"]
    assert isinstance(adapter, H3OverQuic)
    adapter.transmit_actions()
    assert quic._remote_max_data_used == limits.connection_written, "nothing sent yet"
    waiting = send_limits(quic, CLIENT_ENCODER_STREAM)
    assert waiting.connection_written == written_by_client(log) > limits.connection_written
    assert waiting.connection_credit == 1000 - written_by_client(log)
    pair.pump()
    assert send_limits(quic, CLIENT_ENCODER_STREAM).connection_written == written_by_client(log)
    assert send_limits(quic, 1000).stream_credit == 0, "a stream aioquic does not have"


# -- RFC 9204 §2.1.3 over real QUIC -------------------------------------------------------------


def client_events(log: EventLog, name: str) -> list[Event]:
    return [e for e in log.events if e.endpoint == "client" and e.name == name]


def test_over_quic_an_insert_the_encoder_stream_credit_does_not_cover_is_left_out() -> None:
    """RFC 9204 §2.1.3: the encoder writes no instruction the credit does not cover whole;
    the fields go as literals, and the inserts follow once the peer grants more credit."""
    log = EventLog()
    pair = limited_pair(log)
    client = pair.h3learn("client")
    for _ in range(3):
        client.send_request(FIELDS, end_stream=True)
        pair.pump()
    skipped = [e for e in client_events(log, "insert_skipped") if e.rfc == ("9204#2.1.3",)]
    assert skipped, "the second request's inserts do not all fit in 64 bytes"
    first_skip = skipped[0]
    written_before = sum(
        len(e.raw)
        for e in client_events(log, "instruction_created")
        if e.seq < first_skip.seq and e.stream_id == CLIENT_ENCODER_STREAM
    )
    stream_type = 1
    assert first_skip.data["stream_credit"] == 64 - stream_type - written_before
    assert first_skip.data["instruction_size"] > first_skip.data["stream_credit"]
    # Never more on the encoder stream than the limit known when it was written.
    (raised, *_) = client_events(log, "send_limit_raised")
    assert raised.data["frame"] == "MAX_STREAM_DATA" and raised.stream_id == CLIENT_ENCODER_STREAM
    assert (raised.data["previous"], raised.data["maximum"]) == (64, 128)
    before_raise = [
        e
        for e in client_events(log, "stream_data_sent")
        if e.stream_id == CLIENT_ENCODER_STREAM and e.seq < raised.seq
    ]
    assert sum(e.data["length"] for e in before_raise) <= 64
    # The entries left out were inserted later, once the credit was there.
    inserted = {e.data["entries"][0]["name"] for e in client_events(log, "dynamic_table_updated")}
    assert {e.data["name"] for e in skipped} <= inserted
    # And the server decoded every request as sent.
    received = [e for e in pair.received["server"] if isinstance(e, HeadersReceived)]
    assert [e.headers for e in received] == [FIELDS] * 3
