"""Events for the trace-layer tests: real QPACK exchanges, HTTP/3 events, random events.

`walkthrough_log` runs the real QPACK encoder and decoder (h3learn.walkthrough). The
HTTP/3 connection is still being written, so `http3_exchange` builds the events a request
produces by hand, exactly as docs/events.md describes them; the replay and qlog tests use
both. `events_strategy` draws random but well-formed event lists for Hypothesis.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from hypothesis import strategies as st

from h3learn.events import Event, EventLog, FieldSpan
from h3learn.walkthrough import DEFAULT_REQUESTS, record_exchange


def walkthrough_log(
    table_capacity: int = 4096, blocked_streams: int = 100, sections_first: bool = False
) -> EventLog:
    return record_exchange(DEFAULT_REQUESTS, table_capacity, blocked_streams, sections_first)


def renumber(events: list[Event]) -> list[Event]:
    """The same events with seq 0, 1, 2, ... (after joining lists)."""
    return [replace(event, seq=position) for position, event in enumerate(events)]


def _event(endpoint: str, category: str, name: str, stream: int | None, **data: Any) -> Event:
    raw = bytes.fromhex(data.pop("raw", ""))
    summary = data.pop("summary", f"{endpoint} {name}")
    return Event(
        seq=0,
        time=0.0,
        endpoint=endpoint,
        category=category,
        name=name,
        stream_id=stream,
        data=data,
        raw=raw,
        fields=(
            (FieldSpan(name="Type", offset=0, length=1, value=raw[0], explain="", rfc="9114#7.1"),)
            if raw
            else ()
        ),
        summary=summary,
    )


CLIENT_SETTINGS = [
    {"id": 0x01, "name": "QPACK_MAX_TABLE_CAPACITY", "value": 4096},
    {"id": 0x07, "name": "QPACK_BLOCKED_STREAMS", "value": 16},
    {"id": 0x2B, "name": "unknown 0x2b", "value": 7},
]
SERVER_SETTINGS = [
    {"id": 0x01, "name": "QPACK_MAX_TABLE_CAPACITY", "value": 0},
    {"id": 0x06, "name": "MAX_FIELD_SECTION_SIZE", "value": 16384},
    {"id": 0x21, "name": "reserved 0x21", "value": 1},
]
GET_HEADERS = [
    {"name": ":method", "value": "GET"},
    {"name": ":scheme", "value": "https"},
    {"name": ":authority", "value": "example.org"},
    {"name": ":path", "value": "/"},
]
#: A QPACK field section with only static references: :method GET, :scheme https, :path /
#: and a literal :authority (RFC 9204 §4.5); the HEADERS frame wraps it.
GET_SECTION = "0000d1d7c1508b2f91d35d055c87a7ed4dbf"


def http3_exchange() -> list[Event]:
    """The HTTP/3 events of one GET, both endpoints, in the order a real exchange logs them."""
    c, s = "client", "server"
    settings_frame = "04" + "0a" + "0140100710" + "2b07"  # type, length, pairs (not checked)
    headers_frame = "01" + f"{len(GET_SECTION) // 2:02x}" + GET_SECTION
    events = [
        _event(c, "http3", "parameters_set", None, owner="local", settings=CLIENT_SETTINGS),
        _event(s, "http3", "parameters_set", None, owner="local", settings=SERVER_SETTINGS),
        _event(
            c,
            "http3",
            "stream_type_set",
            2,
            raw="00",
            stream_id=2,
            owner="local",
            stream_type="control",
            stream_type_value=0,
        ),
        _event(
            c,
            "http3",
            "frame_created",
            2,
            raw=settings_frame,
            stream_id=2,
            length=10,
            frame={"frame_type": "settings", "settings": CLIENT_SETTINGS},
        ),
        _event(
            s,
            "http3",
            "stream_type_set",
            2,
            raw="00",
            stream_id=2,
            owner="remote",
            stream_type="control",
            stream_type_value=0,
        ),
        _event(
            s,
            "http3",
            "frame_parsed",
            2,
            raw=settings_frame,
            stream_id=2,
            length=10,
            frame={"frame_type": "settings", "settings": CLIENT_SETTINGS},
        ),
        _event(s, "http3", "parameters_set", None, owner="remote", settings=CLIENT_SETTINGS),
        _event(
            s,
            "http3",
            "stream_type_set",
            15,
            raw="21",
            stream_id=15,
            owner="local",
            stream_type="reserved",
            stream_type_value=0x21,
        ),
        _event(
            c,
            "qpack",
            "headers_encoded",
            0,
            raw=GET_SECTION,
            stream_id=0,
            headers=GET_HEADERS,
            prefix={"required_insert_count": 0, "base": 0},
            field_lines=[],
        ),
        _event(c, "http3", "stream_type_set", 0, stream_id=0, owner="local", stream_type="request"),
        _event(
            c,
            "http3",
            "frame_created",
            0,
            raw=headers_frame,
            stream_id=0,
            length=len(GET_SECTION) // 2,
            frame={"frame_type": "headers"},
        ),
        _event(
            s, "http3", "stream_type_set", 0, stream_id=0, owner="remote", stream_type="request"
        ),
        _event(
            s,
            "http3",
            "frame_parsed",
            0,
            raw=headers_frame,
            stream_id=0,
            length=len(GET_SECTION) // 2,
            frame={"frame_type": "headers"},
        ),
        _event(
            s,
            "qpack",
            "headers_decoded",
            0,
            raw=GET_SECTION,
            stream_id=0,
            headers=GET_HEADERS,
            prefix={"required_insert_count": 0, "base": 0},
            field_lines=[],
        ),
        _event(
            s,
            "http3",
            "stream_state_updated",
            0,
            stream_id=0,
            old="expecting_headers",
            new="receiving_content",
            trigger="headers",
        ),
        _event(
            s,
            "http3",
            "frame_created",
            0,
            raw="000568656c6c6f",
            stream_id=0,
            length=5,
            frame={"frame_type": "data"},
        ),
        _event(
            c,
            "http3",
            "frame_parsed",
            0,
            raw="000568656c6c6f",
            stream_id=0,
            length=5,
            frame={"frame_type": "data"},
        ),
        _event(
            c,
            "http3",
            "frame_parsed",
            3,
            raw="0701",
            stream_id=3,
            length=1,
            frame={"frame_type": "goaway", "id": 4},
        ),
        _event(
            c,
            "http3",
            "stream_error",
            8,
            stream_id=8,
            code=0x010C,
            code_name="H3_REQUEST_CANCELLED",
            rule="the server refused stream 8",
            rfc="9114#4.1.1",
            direction="received",
        ),
        _event(
            s,
            "http3",
            "connection_error",
            None,
            code=0x0105,
            code_name="H3_FRAME_UNEXPECTED",
            rule="DATA on the control stream",
            rfc="9114#7.2.1",
            direction="sent",
        ),
        _event(c, "transport", "stream_data_sent", 0, stream_id=0, length=21, end_stream=True),
    ]
    return [replace(event, seq=n, time=float(n)) for n, event in enumerate(events)]


# -- random events for Hypothesis ------------------------------------------------------

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**62), max_value=2**62)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
json_values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)


@st.composite
def spans_for(draw: st.DrawFn, raw: bytes) -> tuple[FieldSpan, ...]:
    """Spans that lie inside ``raw`` (bit ranges inside their first byte)."""
    spans = []
    for _ in range(draw(st.integers(0, 4)) if raw else 0):
        offset = draw(st.integers(0, len(raw) - 1))
        length = draw(st.integers(1, len(raw) - offset))
        bit_offset = draw(st.none() | st.integers(0, 7))
        bit_length = None if bit_offset is None else draw(st.integers(1, 8 - bit_offset))
        spans.append(
            FieldSpan(
                name=draw(st.text(max_size=10)),
                offset=offset,
                length=length,
                value=draw(json_values),
                explain=draw(st.text(max_size=20)),
                rfc=draw(st.sampled_from(["9204#4.5.1", "9114#7.2.4", ""])),
                bit_offset=bit_offset,
                bit_length=bit_length,
            )
        )
    return tuple(spans)


@st.composite
def one_event(draw: st.DrawFn, seq: int) -> Event:
    raw = draw(st.binary(max_size=12))
    return Event(
        seq=seq,
        time=draw(st.floats(min_value=0, max_value=1e13, allow_nan=False) | st.integers(0, 2**40)),
        endpoint=draw(st.sampled_from(["client", "server"])),
        category=draw(st.sampled_from(["qpack", "http3", "transport"])),
        name=draw(st.text(min_size=1, max_size=20)),
        stream_id=draw(st.none() | st.integers(0, 2**62 - 1)),
        data=draw(st.dictionaries(st.text(max_size=8), json_values, max_size=5)),
        raw=raw,
        fields=draw(spans_for(raw)),
        rfc=tuple(draw(st.lists(st.sampled_from(["9204#4.3.2", "9114#7.2.4"]), max_size=3))),
        summary=draw(st.text(max_size=30)),
    )


@st.composite
def events_strategy(draw: st.DrawFn, max_size: int = 8) -> list[Event]:
    count = draw(st.integers(0, max_size))
    return [draw(one_event(seq)) for seq in range(count)]
