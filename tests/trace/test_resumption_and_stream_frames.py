"""Replay and qlog export of the resumption events and the stream frames (docs/events.md).

``parameters_restored`` and ``early_data_decision`` (RFC 9114 §7.2.4.2) come from a real
resumed QUIC connection in memory whose client sends its request in 0-RTT;
``stop_sending`` and ``reset_stream`` (RFC 9000 §19.4, §19.5) from a server that stops a
reserved stream and answers a malformed request with a stream error.
"""

from __future__ import annotations

import pytest

from h3learn.events import EventLog
from h3learn.h3.connection import H3Connection
from h3learn.h3.errors import reserved_value
from h3learn.h3.settings import Settings
from h3learn.h3.stream_types import StreamHeader
from h3learn.trace.qlog import to_qlog, to_qlog_03
from h3learn.trace.replay import Replay
from h3learn.trace.store import Trace
from h3learn.transport.memory import MemoryPair
from h3learn.transport.quic_memory import QuicMemoryPair
from h3learn.transport.resumption import ServerTickets
from h3learn.transport.virtual_clock import VirtualClock
from h3learn.wire.spans import SpanWriter

SETTINGS = Settings(qpack_max_table_capacity=4096, qpack_blocked_streams=16)
GET = [(b":method", b"GET"), (b":scheme", b"https"), (b":authority", b"a"), (b":path", b"/")]


@pytest.fixture(scope="module")
def resumed() -> Trace:
    tickets = ServerTickets()
    first = QuicMemoryPair.create(
        client=H3Connection(is_client=True, settings=SETTINGS),
        server=H3Connection(is_client=False, settings=SETTINGS),
        server_tickets=tickets,
    )
    first.pump()
    resumption = first.resumption()
    assert resumption is not None
    clock = VirtualClock()
    log = EventLog(clock=clock)
    client = H3Connection(
        is_client=True,
        settings=SETTINGS,
        remembered_settings=resumption.settings,
        recorder=log.for_endpoint("client"),
    )
    server = H3Connection(is_client=False, settings=SETTINGS, recorder=log.for_endpoint("server"))
    pair = first.reconnect(client=client, server=server, log=log, clock=clock)
    client.send_request(GET, end_stream=True)
    pair.pump()
    return Trace("resumed", {}, log.events, None)


@pytest.fixture(scope="module")
def stopped() -> Trace:
    memory = MemoryPair.create(client_settings=Settings(), server_settings=Settings())
    memory.pump()
    writer = SpanWriter(record=False)
    StreamHeader(reserved_value(2)).serialize(writer)
    server = memory.server
    server.receive_stream_data(14, writer.unit() + b"grease")
    server.receive_stream_data(0, b"\x01\x02\x00\x00")  # HEADERS with no fields at all
    return Trace("stopped", {}, memory.log.events, None)


def position(trace: Trace, endpoint: str, name: str) -> int:
    return next(
        index
        for index, event in enumerate(trace.events)
        if event.endpoint == endpoint and event.name == name
    )


def test_replay_shows_the_remembered_settings_before_the_servers_arrive(resumed: Trace) -> None:
    replay = Replay(resumed.events)
    step = position(resumed, "client", "parameters_restored")
    before = replay.state_after(step - 1)["client"]["settings"]["remote"]
    after = replay.state_after(step)
    assert before is None
    assert {s["name"]: s["value"] for s in after["client"]["settings"]["remote"]} == {
        "QPACK_MAX_TABLE_CAPACITY": 4096,
        "QPACK_BLOCKED_STREAMS": 16,
    }
    assert "client.settings.remote" in after["changed"]


def test_qlog_exports_parameters_restored(resumed: Trace) -> None:
    (client,) = [t for t in to_qlog(resumed)["traces"] if t["vantage_point"]["type"] == "client"]
    (restored,) = [e["data"] for e in client["events"] if e["name"] == "http3:parameters_restored"]
    assert restored == {"max_table_capacity": 4096, "blocked_streams_count": 16}
    decisions = [e for e in client["events"] if e["name"] == "h3learn:early_data_decision"]
    assert [d["data"]["accepted"] for d in decisions] == [True]
    (client_03,) = [
        t for t in to_qlog_03(resumed)["traces"] if t["vantage_point"]["type"] == "client"
    ]
    names = {e["name"] for e in client_03["events"]}
    assert "http:parameters_restored" in names


def test_replay_marks_stopped_and_reset_streams(stopped: Trace) -> None:
    replay = Replay(stopped.events)
    stop = position(stopped, "server", "stop_sending")
    state = replay.state_after(stop)
    assert state["server"]["streams"]["14"]["state"] == "stop_sending sent"
    assert "server.streams.14.state" in state["changed"]
    reset = max(i for i, e in enumerate(stopped.events) if e.name == "reset_stream")
    assert replay.state_after(reset)["server"]["streams"]["0"]["state"] == "reset"


def test_qlog_exports_stream_frames_in_the_h3learn_namespace(stopped: Trace) -> None:
    (server,) = [t for t in to_qlog(stopped)["traces"] if t["vantage_point"]["type"] == "server"]
    frames = [
        (e["name"], e["data"]["stream_id"], e["data"]["code_name"])
        for e in server["events"]
        if e["name"] in ("h3learn:stop_sending", "h3learn:reset_stream")
    ]
    assert frames == [
        ("h3learn:stop_sending", 14, "H3_STREAM_CREATION_ERROR"),
        ("h3learn:stop_sending", 0, "H3_MESSAGE_ERROR"),
        ("h3learn:reset_stream", 0, "H3_MESSAGE_ERROR"),
    ]
