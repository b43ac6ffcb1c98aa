"""MemoryPair: two H3Connections over ideal in-memory streams (h3learn/transport/memory.py).

What the transport promises: every action reaches the other side in order; `hold` keeps one
stream's bytes back until `release`; the virtual clock stamps every event; and the same
scenario always gives the same trace, byte for byte, in this process or any other (whatever
Python's hash seed).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from h3learn.events import EventLog
from h3learn.h3.errors import ErrorCode
from h3learn.h3.http_events import DataReceived, HeadersReceived, StreamEnded
from h3learn.h3.settings import Settings
from h3learn.transport.memory import MemoryPair

REQUEST = [
    (b":method", b"GET"),
    (b":scheme", b"https"),
    (b":authority", b"a.example"),
    (b":path", b"/"),
]
POST = [(b":method", b"POST"), *REQUEST[1:3], (b":path", b"/form")]
DYNAMIC = Settings(qpack_max_table_capacity=4096, qpack_blocked_streams=8)
CLIENT_ENCODER = 6


def scenario() -> str:
    """A busy exchange: QPACK both ways, a blocked stream, push, trailers, an error, GOAWAY.

    Returns the trace as JSON text.
    """
    pair = MemoryPair.create(client_settings=DYNAMIC, server_settings=DYNAMIC)
    pair.pump()
    pair.client.send_max_push_id(3)
    cookie = (b"cookie", b"session=0123456789abcdef0123")
    first = pair.client.send_request([*REQUEST, (b"user-agent", b"h3learn"), cookie], True)
    pair.advance(1.5)
    pair.pump()
    promised = pair.server.send_push_promise(first, [*REQUEST[:3], (b":path", b"/app.css")])
    push_stream = pair.server.create_push_stream(promised)
    pair.server.send_headers(push_stream, [(b":status", b"200"), (b"content-type", b"text/css")])
    pair.server.send_data(push_stream, b"body{}", end_stream=True)
    pair.server.send_headers(first, [(b":status", b"200"), (b"server", b"h3learn")])
    pair.server.send_data(first, b"<html>", end_stream=True)
    pair.advance(2.25)
    pair.pump()
    pair.hold("client", CLIENT_ENCODER)
    second = pair.client.send_request([*POST, (b"user-agent", b"h3learn"), cookie])
    pair.client.send_data(second, b"a=1")
    pair.client.send_headers(second, [(b"x-trailer", b"done")], end_stream=True)
    pair.pump()
    pair.advance(10)
    pair.release("client", CLIENT_ENCODER)
    pair.server.send_headers(second, [(b":status", b"204"), (b"server", b"h3learn")], True)
    third = pair.client.send_request([*REQUEST, (b"x-third", b"3")], True)
    pair.pump()
    pair.server.reset_stream(third, ErrorCode.H3_REQUEST_CANCELLED)
    pair.server.send_goaway()
    pair.pump()
    pair.server.close()
    pair.pump()
    return json.dumps([event.to_json() for event in pair.log.events], sort_keys=False)


def test_the_same_scenario_gives_a_byte_identical_trace_twice() -> None:
    first, second = scenario(), scenario()
    assert first == second
    events = json.loads(first)
    names = {(e["category"], e["name"]) for e in events}
    assert ("qpack", "stream_state_updated") in names, "the scenario blocks a stream"
    assert ("http3", "stream_error") in names and ("http3", "connection_closed") in names
    assert [e["seq"] for e in events] == list(range(len(events)))


def test_the_trace_does_not_depend_on_the_hash_seed() -> None:
    """Nothing in the trace may follow the iteration order of a set of str or bytes."""
    here = Path(__file__).resolve().parent
    code = (
        f"import sys; sys.path.insert(0, {str(here)!r}); import test_memory;"
        " print(test_memory.scenario())"
    )
    outputs = []
    for seed in ("1", "2"):
        environment = {**os.environ, "PYTHONHASHSEED": seed}
        result = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            env=environment,
            check=True,
            timeout=60,
        )
        outputs.append(result.stdout)
    assert outputs[0] == outputs[1]
    assert outputs[0].decode().strip() == scenario()


def test_the_virtual_clock_stamps_every_event() -> None:
    pair = MemoryPair.create()
    pair.pump()
    pair.advance(7.5)
    pair.client.send_request(REQUEST, end_stream=True)
    pair.pump()
    times = [e.time for e in pair.log.events]
    assert times[0] == 0.0 and times[-1] == 7.5
    assert times == sorted(times)


def test_advance_refuses_a_log_that_keeps_its_own_clock() -> None:
    pair = MemoryPair.create(log=EventLog(clock=lambda: 42.0))
    with pytest.raises(ValueError, match="own clock"):
        pair.advance(1)
    assert {e.time for e in pair.log.events} == {42.0}


def test_hold_keeps_back_one_stream_until_release_and_then_delivers_it_in_order() -> None:
    pair = MemoryPair.create()
    pair.pump()
    stream_id = pair.client.send_request(POST)
    pair.hold("client", stream_id)
    pair.client.send_data(stream_id, b"one ")
    pair.client.send_data(stream_id, b"two")
    assert pair.pump() == []
    assert pair.release("client", stream_id) == [
        HeadersReceived(stream_id=0, headers=POST),
        DataReceived(stream_id=0, data=b"one "),
        DataReceived(stream_id=0, data=b"two"),
    ]
    pair.client.send_data(stream_id, b"three", end_stream=True)
    assert pair.pump() == [
        DataReceived(stream_id=0, data=b"three"),
        StreamEnded(stream_id=0),
    ], "a released stream is no longer held"


def test_holding_one_stream_lets_the_others_through() -> None:
    pair = MemoryPair.create()
    pair.pump()
    held = pair.client.send_request(REQUEST, end_stream=True)
    pair.hold("client", held)
    free = pair.client.send_request(REQUEST, end_stream=True)
    # The first request's frames were already queued when the hold began: held too.
    events = pair.pump()
    assert [e.stream_id for e in events if isinstance(e, HeadersReceived)] == [free]


def test_pump_refuses_to_run_forever() -> None:
    pair = MemoryPair.create()
    with pytest.raises(RuntimeError, match="still talking"):
        pair.pump(max_rounds=2)


def test_a_close_reaches_the_peer() -> None:
    pair = MemoryPair.create()
    pair.pump()
    pair.client.close(ErrorCode.H3_NO_ERROR, "done")
    pair.pump()
    assert pair.server.closed and pair.server.close_code == ErrorCode.H3_NO_ERROR
