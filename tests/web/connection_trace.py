"""A trace with the connection-wide state of RFC 9114 §4.6, §5.2 and §5.3, for the web tests.

The client allows pushes (MAX_PUSH_ID), the server promises two, the client cancels one, the
server fulfils the other on its push stream, sends GOAWAY and closes the connection cleanly.
"""

from __future__ import annotations

from pathlib import Path

from h3learn.events import Event
from h3learn.h3.errors import ErrorCode
from h3learn.scenarios.examples import request, respond
from h3learn.trace.store import write_trace
from h3learn.transport.memory import MemoryPair

TRACE_ID = "goaway-and-push"
GOAWAY_ID = 4


def connection_events() -> list[Event]:
    pair = MemoryPair.create()
    pair.pump()
    pair.client.send_max_push_id(3)
    stream_id = pair.client.send_request(request("/"), end_stream=True)
    pair.pump()
    promised = pair.server.send_push_promise(stream_id, request("/style.css")[:4])
    refused = pair.server.send_push_promise(stream_id, request("/a.js")[:4])
    pair.pump()
    pair.client.cancel_push(refused)
    push_stream = pair.server.create_push_stream(promised)
    respond(pair, push_stream, b"body {}\n")
    respond(pair, stream_id, b"ok\n")
    pair.pump()
    pair.server.send_goaway(GOAWAY_ID)
    pair.pump()
    pair.server.close(ErrorCode.H3_NO_ERROR, "shutting down")
    pair.pump()
    return pair.log.events


def save_connection_trace(data_dir: Path) -> list[Event]:
    events = connection_events()
    traces = data_dir / "traces"
    traces.mkdir(parents=True, exist_ok=True)
    write_trace(traces / f"{TRACE_ID}.json", "GOAWAY, push and a clean close", events)
    return events


def step_of(events: list[Event], endpoint: str, name: str, frame_type: str | None = None) -> int:
    """The first step of ``endpoint`` named ``name`` (carrying a ``frame_type`` frame)."""
    for event in events:
        carried = event.data.get("frame")
        if (event.endpoint, event.name) == (endpoint, name) and (
            frame_type is None
            or (isinstance(carried, dict) and carried["frame_type"] == frame_type)
        ):
            return event.seq
    raise LookupError((endpoint, name, frame_type))
