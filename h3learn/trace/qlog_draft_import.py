"""qlog import: current-draft qlog files (draft-ietf-quic-qlog-main-schema) as h3learn traces.

The qlog drafts after 0.3 write a file in one of two serialisations, told apart by
``file_schema``:

- ``urn:ietf:params:qlog:file:contained``: one JSON object with a ``traces`` list, each
  trace with its ``vantage_point``, ``common_fields`` and ``events`` (what `to_qlog`
  writes);
- ``urn:ietf:params:qlog:file:sequential``: JSON Text Sequences (RFC 7464): records that
  each start with the byte 0x1E; the first is the file header with one ``trace`` (no
  events), every later record is one event of that trace.

Times are milliseconds. With ``time_format`` "relative_to_epoch" (the default) an event's
``time`` is counted from ``reference_time.epoch``; with "relative_to_previous_event" from
the event before. The import counts from the first event of the file and keeps the
wall-clock epoch, when the file names one, in ``meta["epoch"]``.

What becomes an h3learn event (docs/events.md, "qlog import"):

    http3:frame_created / frame_parsed       http3 frame_*: the frame (a SETTINGS frame's
                                             settings in qlog's shape, as h3learn records
                                             them), the payload length
    http3:parameters_set / _restored         http3 parameters_*: owner and settings list
    http3:stream_type_set                    http3 stream_type_set
    qpack:*  (h3learn's private schema)      qpack events in h3learn's own shapes
    h3learn:* (h3learn's private schema)     the event as h3learn recorded it
    anything else                            counted in meta["skipped"], not imported

A qlog event carries no field spans, and only sometimes its bytes (``raw.data``). When it
does, the bytes are kept and labelled without being dissected here (the trace layer runs no
protocol code): a frame as its Type, Length and Payload (RFC 9114 §7.1), anything else as
one span that says where the bytes came from. Events without bytes have an empty ``raw``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, TypeGuard

from h3learn.events import ENDPOINTS, Event, FieldSpan
from h3learn.h3.settings import qlog_setting, setting_name
from h3learn.qpack.dynamic_table import absolute_from_post_base, absolute_from_relative
from h3learn.qpack.errors import DecompressionFailed
from h3learn.qpack.field_lines import base_from_delta
from h3learn.trace.json_text import UnusableJSON, parse_json
from h3learn.trace.qlog import H3LEARN_QPACK_EVENTS
from h3learn.trace.qlog_import import (
    Record,
    carried_title,
    checked_event,
    convert_in_order,
    usable_time,
    vantage_point,
)
from h3learn.trace.store import Trace, load_json
from h3learn.trace.stored_events import TraceFormatError

CONTAINED = "urn:ietf:params:qlog:file:contained"
SEQUENTIAL = "urn:ietf:params:qlog:file:sequential"
#: RFC 7464 §2.2: every JSON text of a sequence starts with the Record Separator.
RECORD_SEPARATOR = "\x1e"

#: http3:parameters_set fields -> setting identifiers.
PARAMETER_IDS = {
    "max_table_capacity": 0x01,
    "max_field_section_size": 0x06,
    "blocked_streams_count": 0x07,
    "extended_connect": 0x08,
    "h3_datagram": 0x33,
}
#: h3learn's own events that belong to the transport category (the rest are http3).
TRANSPORT_EVENTS = frozenset(
    {
        "stream_data_sent",
        "stream_data_received",
        "handshake_completed",
        "connection_failed",
        "datagram_sent",
        "connection_started",
        "send_limit_raised",
        "packet_sent",
        "packet_received",
        "packet_dropped",
    }
)
#: h3-events-05 header_field_type -> h3learn field line type.
FIELD_LINE_TYPES = {
    "indexed_header": "indexed_field_line",
    "literal_with_name": "literal_with_name",
    "literal_without_name": "literal_without_name",
}
#: RFC 9204 §3.2.1: an entry's size is its name and value lengths plus 32.
ENTRY_OVERHEAD = 32
NO_SPANS = "imported from qlog: the bytes are shown but were not dissected"


def is_draft_qlog(text: str, document: Any) -> bool:
    """Whether a file's text (or its parsed JSON, when it is one object) is a draft qlog."""
    if text.startswith(RECORD_SEPARATOR):
        return True
    return isinstance(document, dict) and "file_schema" in document


def from_qlog_draft(text: str, name: str, document: Any = None) -> Trace:
    """Import a current-draft qlog file (either serialisation); see the module docstring.

    ``document`` is the file already parsed as one JSON object, when the caller has it.
    """
    if text.startswith(RECORD_SEPARATOR):
        header, qlog_traces = _sequential(text, name)
    else:
        header, qlog_traces = _contained(text if document is None else document, name)
    records: list[Record] = []
    epoch: str | None = None
    for number, qlog_trace in enumerate(qlog_traces):
        where = f"{name}: trace {number}"
        endpoint = vantage_point(qlog_trace, where)
        trace_epoch, timed = _timed_events(qlog_trace, where)
        epoch = epoch or trace_epoch
        for position, (time, event) in enumerate(timed):
            records.append((time, number, position, endpoint, event))
    records.sort(key=lambda r: (r[0], ENDPOINTS.index(r[3]), r[1], r[2]))
    events, skipped = convert_in_order(records, _convert)
    meta: dict[str, Any] = {
        "source": "qlog (current draft)",
        "files": [name],
        "skipped": dict(sorted(skipped.items())),
        "note": "qlog has no field spans: bytes, where the file has them, are labelled coarsely",
    }
    if epoch is not None:
        meta["epoch"] = epoch
    warnings = []
    ties = _shared_times(records)
    if ties:
        warnings.append(
            f"{ties} events happen at the same time as an event of the other endpoint; qlog"
            " keeps no order between vantage points, so those are shown client first"
        )
    title = carried_title(header, qlog_traces) or name
    return Trace(title=title, meta=meta, events=events, created=epoch, warnings=warnings)


def _shared_times(records: list[Record]) -> int:
    """How many events share their time with an event of the other endpoint."""
    endpoints_at: dict[float, set[str]] = {}
    for time, _, _, endpoint, _ in records:
        endpoints_at.setdefault(time, set()).add(endpoint)
    return sum(1 for record in records if len(endpoints_at[record[0]]) > 1)


# -- the two serialisations -------------------------------------------------------------


def _contained(source: Any, name: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The top-level object and the traces of a contained file (from its text, or the
    object already parsed from it)."""
    document = source
    if isinstance(source, str):
        document = load_json(source, name)
    if not isinstance(document, dict):
        raise TraceFormatError(f"{name}: the top level is not an object")
    schema = document.get("file_schema")
    if schema != CONTAINED:
        raise TraceFormatError(f"{name}: file_schema {schema!r} is not {CONTAINED!r}")
    traces = document.get("traces")
    if not isinstance(traces, list) or not all(isinstance(item, dict) for item in traces):
        raise TraceFormatError(f"{name}: 'traces' is not a list of objects")
    return document, traces


def _sequential(text: str, name: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """RFC 7464 records: a header naming one trace, then that trace's events. Returns the
    header and the trace."""
    records = []
    for number, piece in enumerate(text.split(RECORD_SEPARATOR)[1:]):
        try:
            records.append(parse_json(piece))
        except UnusableJSON as error:
            raise TraceFormatError(f"{name}: record {number}: {error}") from None
    header = records[0] if records else None
    if not isinstance(header, dict) or header.get("file_schema") != SEQUENTIAL:
        raise TraceFormatError(f"{name}: the first record is not a {SEQUENTIAL!r} header")
    qlog_trace = header.get("trace")
    if not isinstance(qlog_trace, dict):
        raise TraceFormatError(f"{name}: the header has no 'trace' object")
    return header, [{**qlog_trace, "events": records[1:]}]


# -- one trace ---------------------------------------------------------------------------


def _timed_events(
    qlog_trace: dict[str, Any], where: str
) -> tuple[str | None, list[tuple[float, dict[str, Any]]]]:
    """The trace's epoch (if it names one) and each event with its time in milliseconds."""
    common = _dict(qlog_trace.get("common_fields"))
    time_format = common.get("time_format", "relative_to_epoch")
    if time_format not in ("relative_to_epoch", "relative_to_previous_event"):
        raise TraceFormatError(f"{where}: time_format {time_format!r} is not supported")
    epoch = _dict(common.get("reference_time")).get("epoch")
    offset = 0.0
    if isinstance(epoch, str) and epoch != "unknown":
        try:
            offset = datetime.fromisoformat(epoch.replace("Z", "+00:00")).timestamp() * 1000
        except ValueError:
            raise TraceFormatError(f"{where}: reference_time epoch {epoch!r} is no date") from None
    else:
        epoch = None
    events = qlog_trace.get("events")
    if not isinstance(events, list):
        raise TraceFormatError(f"{where}: 'events' is not a list")
    timed = []
    previous = 0.0
    for number, event in enumerate(events):
        event_where = f"{where}: event {number}"
        name, time, data = checked_event(event, event_where)
        previous = previous + time if time_format == "relative_to_previous_event" else time
        timed.append((usable_time(offset + previous, event_where), {"name": name, "data": data}))
    return epoch, timed


# -- one event ---------------------------------------------------------------------------


def _convert(seq: int, time: float, endpoint: str, event: dict[str, Any]) -> Event | None:
    schema, _, name = event["name"].partition(":")
    data: dict[str, Any] = event["data"]
    if schema == "http3" and name in ("frame_created", "frame_parsed"):
        return _frame(seq, time, endpoint, name, data)
    if schema == "http3" and name in ("parameters_set", "parameters_restored"):
        return _parameters(seq, time, endpoint, name, data)
    if schema == "http3" and name == "stream_type_set":
        return _stream_type(seq, time, endpoint, data)
    if schema == "qpack":
        return _qpack(seq, time, endpoint, name, data)
    if schema == "h3learn":
        if name in TRANSPORT_EVENTS:
            category = "transport"
        elif name in H3LEARN_QPACK_EVENTS:
            category = "qpack"
        else:
            category = "http3"
        stream_id = _int_or_none(data.get("stream_id"))
        summary = f"{endpoint}: {name.replace('_', ' ')}" + _on(stream_id)
        return _event(seq, time, endpoint, category, name, stream_id, dict(data), summary)
    return None


def _frame(seq: int, time: float, endpoint: str, name: str, data: dict[str, Any]) -> Event:
    stream_id = _int_or_none(data.get("stream_id"))
    frame = dict(_dict(data.get("frame")))
    raw_info = _dict(frame.pop("raw", data.get("raw")))
    frame_type = str(frame.get("frame_type", "unknown"))
    raw = _hex(raw_info.get("data"))
    fields = _frame_spans(raw)
    out = {"stream_id": stream_id, "length": raw_info.get("payload_length"), "frame": frame}
    peer = "server" if endpoint == "client" else "client"
    arrow = f"{endpoint} → {peer}" if name == "frame_created" else f"{peer} → {endpoint}"
    summary = f"{arrow}: {frame_type.upper()}{_on(stream_id)}"
    return _event(seq, time, endpoint, "http3", name, stream_id, out, summary, raw, fields)


def _parameters(seq: int, time: float, endpoint: str, name: str, data: dict[str, Any]) -> Event:
    settings = []
    for key, value in data.items():
        identifier = PARAMETER_IDS.get(key)
        if identifier is None and key.startswith("setting_0x"):
            identifier = _int_from_hex(key.removeprefix("setting_"))
        if identifier is not None:
            settings.append(_named(identifier, value))
    out: dict[str, Any] = {"settings": settings}
    if name == "parameters_restored":
        out["owner"] = "remote"
    elif data.get("initiator") in ("local", "remote"):
        out["owner"] = data["initiator"]
    listed = ", ".join(f"{item['name']}={item['value']}" for item in settings) or "defaults"
    whose = {"local": "its own", "remote": "the peer's"}.get(out.get("owner", ""), "")
    summary = f"{endpoint} {name.replace('_', ' ')}: {whose} SETTINGS ({listed})"
    return _event(seq, time, endpoint, "http3", name, None, out, summary)


def _stream_type(seq: int, time: float, endpoint: str, data: dict[str, Any]) -> Event:
    stream_id = _int_or_none(data.get("stream_id"))
    stream_type = str(data.get("stream_type", "unknown"))
    out: dict[str, Any] = {"stream_id": stream_id, "stream_type": stream_type}
    if data.get("initiator") in ("local", "remote"):
        out["owner"] = data["initiator"]
    for key in ("stream_type_bytes", "associated_push_id"):
        if key in data:
            out[key] = data[key]
    verb = "sees the peer open" if out.get("owner") == "remote" else "opens"
    summary = f"{endpoint} {verb} stream {stream_id}: {stream_type}"
    return _event(seq, time, endpoint, "http3", "stream_type_set", stream_id, out, summary)


def _qpack(seq: int, time: float, endpoint: str, name: str, data: dict[str, Any]) -> Event:
    """h3learn's qpack events back from the h3-events-05 shapes `to_qlog` gives them."""
    stream_id = _int_or_none(data.get("stream_id"))
    raw = _hex(_dict(data.get("raw")).get("data"))
    out: dict[str, Any]
    if name in ("instruction_created", "instruction_parsed"):
        out = dict(_dict(data.get("instruction")))
        what = str(out.get("instruction_type", "instruction")).replace("_", " ")
    elif name in ("headers_encoded", "headers_decoded"):
        prefix = _dict(data.get("block_prefix"))
        base = _base(prefix)
        out = {
            "stream_id": stream_id,
            "headers": list(_list(data.get("headers"))),
            "prefix": {
                "required_insert_count": prefix.get("required_insert_count"),
                "sign": prefix.get("sign_bit"),
                "delta_base": prefix.get("delta_base"),
            },
            "field_lines": [_field_line(line, base) for line in _list(data.get("header_block"))],
        }
        if base is not None:
            out["prefix"]["base"] = base
        what = f"field section of {len(out['headers'])} fields"
    elif name == "dynamic_table_updated":
        out = dict(data)
        out["entries"] = [_entry(entry) for entry in _list(data.get("entries"))]
        what = f"{data.get('update_type', 'updated')}: {len(out['entries'])} entries"
    else:
        out = dict(data)
        what = name.replace("_", " ")
    fields = (_one_span(raw, f"QPACK {name}"),) if raw else ()
    summary = f"{endpoint} {name.replace('_', ' ')}: {what}{_on(stream_id)}"
    return _event(seq, time, endpoint, "qpack", name, stream_id, out, summary, raw, fields)


# -- pieces ------------------------------------------------------------------------------


def _event(
    seq: int,
    time: float,
    endpoint: str,
    category: str,
    name: str,
    stream_id: int | None,
    data: dict[str, Any],
    summary: str,
    raw: bytes = b"",
    fields: tuple[FieldSpan, ...] = (),
) -> Event:
    if not raw:
        summary += " [no bytes in the qlog file]"
    return Event(
        seq=seq,
        time=time,
        endpoint=endpoint,
        category=category,
        name=name,
        stream_id=stream_id,
        data=data,
        raw=raw,
        fields=fields,
        summary=summary,
    )


def _frame_spans(raw: bytes) -> tuple[FieldSpan, ...]:
    """RFC 9114 §7.1: Type (i), Length (i), then the payload; one span if that does not fit."""
    if not raw:
        return ()
    type_size = 1 << (raw[0] >> 6)  # RFC 9000 §16: the two top bits give the varint's size
    length_size = 1 << (raw[type_size] >> 6) if type_size < len(raw) else 0
    header = type_size + length_size
    if not length_size or header > len(raw):
        return (_one_span(raw, "HTTP/3 frame"),)
    length = _varint(raw[type_size:header])
    if header + length != len(raw):
        return (_one_span(raw, "HTTP/3 frame"),)
    spans = [
        FieldSpan("Type", 0, type_size, _varint(raw[:type_size]), "the frame type", "9114#7.1"),
        FieldSpan("Length", type_size, length_size, length, "payload bytes", "9114#7.1"),
    ]
    if length:
        spans.append(FieldSpan("Frame Payload", header, length, None, NO_SPANS, "9114#7.1"))
    return tuple(spans)


def _one_span(raw: bytes, name: str) -> FieldSpan:
    return FieldSpan(name, 0, len(raw), None, NO_SPANS, "")


def _varint(data: bytes) -> int:
    """RFC 9000 §16: the value of a variable-length integer, without its two size bits."""
    return int.from_bytes(data, "big") & ((1 << (8 * len(data) - 2)) - 1)


def _named(identifier: int, value: Any) -> dict[str, Any]:
    """A setting as h3learn records it (h3learn.h3.recording.settings_json)."""
    named: dict[str, Any] = {"id": identifier, "name": setting_name(identifier), "value": value}
    if _int_or_none(value) is not None:
        named["qlog"] = qlog_setting(identifier, value)
    return named


def _base(prefix: dict[str, Any]) -> int | None:
    """RFC 9204 §4.5.1.2: the Base, from the Required Insert Count, sign bit and Delta Base
    (None when the file leaves them out or they give no valid Base)."""
    required = _int_or_none(prefix.get("required_insert_count"))
    delta = _int_or_none(prefix.get("delta_base"))
    sign = prefix.get("sign_bit")
    if required is None or delta is None or not isinstance(sign, bool):
        return None
    try:
        return base_from_delta(required, sign, delta)
    except DecompressionFailed:  # a negative Base
        return None


def _field_line(line: Any, base: int | None) -> dict[str, Any]:
    """A field line as h3learn records it, with the table and absolute index worked out
    again from its relative or post-base index (RFC 9204 §3.2.5, §3.2.6): the replay needs
    them to know which entries a section awaiting acknowledgment still refers to."""
    out = dict(_dict(line))
    kind = out.pop("header_field_type", None)
    out["type"] = FIELD_LINE_TYPES.get(str(kind), kind)
    if "preserve_literal" in out:
        out["is_never_indexed"] = out.pop("preserve_literal")
    index = _int_or_none(out.get("index", out.get("name_index")))
    table = out.get("table_type")
    if out["type"] == "literal_without_name" or index is None:
        out.setdefault("table", "literal")
    elif table == "static":
        out.setdefault("table", "static")
        out.setdefault("static_index", index)
    elif table == "dynamic" and base is not None:
        out.setdefault("table", "dynamic")
        post_base = out.get("is_post_base") is True
        absolute = (
            absolute_from_post_base(index, base)
            if post_base
            else absolute_from_relative(index, base)
        )
        out.setdefault("absolute_index", absolute)
    return out


def _entry(entry: Any) -> dict[str, Any]:
    """A dynamic table entry with its size, which h3-events-05 leaves out (RFC 9204 §3.2.1)."""
    out = dict(_dict(entry))
    name, value = out.get("name"), out.get("value")
    if isinstance(name, str) and isinstance(value, str):
        out["size"] = len(_octets(name)) + len(_octets(value)) + ENTRY_OVERHEAD
    return out


def _octets(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def _hex(value: Any) -> bytes:
    if not isinstance(value, str):
        return b""
    try:
        return bytes.fromhex(value)
    except ValueError:
        return b""


def _int_from_hex(text: str) -> int | None:
    try:
        return int(text, 16)
    except ValueError:
        return None


def _on(stream_id: int | None) -> str:
    return f" on stream {stream_id}" if stream_id is not None else ""


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _is_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
