"""Events for the trace-layer tests: real QPACK exchanges, HTTP/3 events, random events.

`walkthrough_log` runs the real QPACK encoder and decoder (h3learn.walkthrough). The
HTTP/3 connection is still being written, so `http3_exchange` builds the events a request
produces by hand, exactly as docs/events.md describes them; the replay and qlog tests use
both. `events_strategy` draws random but well-formed event lists for Hypothesis.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from h3learn.events import Event, EventLog, FieldSpan
from h3learn.qpack.decoder import Decoder
from h3learn.qpack.encoder import Encoder
from h3learn.qpack.interop import parse_qif
from h3learn.walkthrough import DEFAULT_REQUESTS, Header, record_exchange

VECTORS = Path(__file__).resolve().parent.parent / "vectors"


def walkthrough_log(
    table_capacity: int = 4096, blocked_streams: int = 100, sections_first: bool = False
) -> EventLog:
    return record_exchange(DEFAULT_REQUESTS, table_capacity, blocked_streams, sections_first)


def qif_requests(name: str = "fb-req.qif", count: int = 40) -> list[list[Header]]:
    """The first ``count`` header lists of a qifs interop input (tests/vectors/qif-inputs)."""
    return [list(r) for r in parse_qif((VECTORS / "qif-inputs" / name).read_bytes())[:count]]


def live_qpack_exchange(
    requests: Sequence[Sequence[Header]],
    table_capacity: int,
    blocked_streams: int,
    sections_first: bool,
    cancel: frozenset[int] = frozenset(),
    trailers: bool = False,
) -> tuple[list[Event], list[dict[str, Any]]]:
    """The walkthrough's exchange, plus what the live encoder and decoder held at each event.

    The snapshot for an event is taken while it is being recorded: after the table change
    it reports (the table records its own changes after making them), before the effect of
    an instruction (recorded before it is carried out). Requests whose number is in
    ``cancel`` are reset by the server before their section is decoded (RFC 9204 §2.2.2.2):
    while blocked, or before it arrives. With ``trailers`` every request also carries a
    trailer section, so a stream has two sections awaiting acknowledgment at once.
    """
    log = EventLog()
    encoder = Encoder(recorder=log.for_endpoint("client"))
    decoder = Decoder(table_capacity, blocked_streams, recorder=log.for_endpoint("server"))
    snapshots: list[dict[str, Any]] = []

    def snapshot(event: Event) -> None:
        snapshots.append(
            {
                "local_table": table_json(encoder.table.to_json()),
                "known_received_count": encoder.known_received_count,
                "remote_table": table_json(decoder.table.to_json()),
                "blocked_streams": sorted(decoder.blocked_streams),
                "acknowledged_insert_count": decoder.acknowledged_insert_count,
            }
        )

    log.listeners.append(snapshot)
    encoder.encoder_stream_id = decoder.encoder_stream_id = 2
    encoder.decoder_stream_id = decoder.decoder_stream_id = 7
    encoder.apply_settings(table_capacity, blocked_streams)
    for number, headers in enumerate(requests):
        stream_id = number * 4
        instructions, section = encoder.encode(stream_id, headers)
        sections = [section]
        if trailers:
            more, trailer_section = encoder.encode(stream_id, trailer_fields(number))
            instructions += more
            sections.append(trailer_section)
        if sections_first:
            for section in sections:
                decoder.decode(stream_id, section)
            if number in cancel:
                decoder.cancel_stream(stream_id)
            decoder.feed_encoder(instructions)
        else:
            decoder.feed_encoder(instructions)
            if number in cancel:
                decoder.cancel_stream(stream_id)
            else:
                for section in sections:
                    decoder.decode(stream_id, section)
        encoder.feed_decoder(decoder.data_to_send())
    return log.events, snapshots


def trailer_fields(number: int) -> list[Header]:
    """A trailer section whose fields recur, so the encoder inserts and references them."""
    return [
        (b"x-trailer-checksum", b"abc%d" % (number % 2)),
        (b"server-timing", b"total;dur=%d" % (number % 3)),
    ]


def table_json(table: dict[str, Any]) -> dict[str, Any]:
    """The parts of a table both DynamicTable.to_json and the replay state have."""
    return {
        "capacity": table["capacity"],
        "size": table["size"],
        "insert_count": table["insert_count"],
        "entries": [
            {key: entry[key] for key in ("index", "name", "value", "size")}
            for entry in table["entries"]
        ],
    }


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


def _frame(
    endpoint: str, name: str, stream: int, raw: str, length: int, frame: dict[str, Any]
) -> Event:
    """A ``frame_created`` or ``frame_parsed`` event: ``raw`` in hex, ``length`` its payload's."""
    return _event(
        endpoint, "http3", name, stream, raw=raw, stream_id=stream, length=length, frame=frame
    )


def _stream_type(
    endpoint: str, stream: int, raw: str, owner: str, stream_type: str, value: int
) -> Event:
    """A ``stream_type_set`` event for a unidirectional stream whose type byte is ``raw``."""
    return _event(
        endpoint,
        "http3",
        "stream_type_set",
        stream,
        raw=raw,
        stream_id=stream,
        owner=owner,
        stream_type=stream_type,
        stream_type_value=value,
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
    # SETTINGS: type 0x04, length 7, then (0x01, 4096), (0x07, 16), (0x2b, 7) as varints.
    settings_frame = "04" + "07" + "015000" + "0710" + "2b07"
    headers_frame = "01" + f"{len(GET_SECTION) // 2:02x}" + GET_SECTION
    events = [
        _event(c, "http3", "parameters_set", None, owner="local", settings=CLIENT_SETTINGS),
        _event(s, "http3", "parameters_set", None, owner="local", settings=SERVER_SETTINGS),
        _stream_type(c, 2, "00", "local", "control", 0),
        _frame(
            c,
            "frame_created",
            2,
            settings_frame,
            7,
            {"frame_type": "settings", "settings": CLIENT_SETTINGS},
        ),
        _stream_type(s, 2, "00", "remote", "control", 0),
        _frame(
            s,
            "frame_parsed",
            2,
            settings_frame,
            7,
            {"frame_type": "settings", "settings": CLIENT_SETTINGS},
        ),
        _event(s, "http3", "parameters_set", None, owner="remote", settings=CLIENT_SETTINGS),
        _stream_type(s, 15, "21", "local", "reserved", 0x21),
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
        _frame(
            c, "frame_created", 0, headers_frame, len(GET_SECTION) // 2, {"frame_type": "headers"}
        ),
        _event(
            s, "http3", "stream_type_set", 0, stream_id=0, owner="remote", stream_type="request"
        ),
        _frame(
            s, "frame_parsed", 0, headers_frame, len(GET_SECTION) // 2, {"frame_type": "headers"}
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
        _frame(s, "frame_created", 0, "000568656c6c6f", 5, {"frame_type": "data"}),
        _frame(c, "frame_parsed", 0, "000568656c6c6f", 5, {"frame_type": "data"}),
        _frame(c, "frame_parsed", 3, "070104", 1, {"frame_type": "goaway", "id": 4}),
        _event(
            c,
            "http3",
            "stream_type_set",
            7,
            raw="0100",
            stream_id=7,
            owner="remote",
            stream_type="push",
            stream_type_value=1,
            push_id=0,
        ),
        _stream_type(c, 11, "4054", "remote", "unknown", 0x54),
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
