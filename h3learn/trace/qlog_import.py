"""qlog import: aioquic's qlog 0.3 files as h3learn traces.

aioquic's QuicLogger writes one qlog trace per connection and vantage point:
``QuicLogger.to_dict()`` holds all of them, and QuicFileLogger writes each to its own file
named after the connection's original destination connection ID (``<ODCID>.qlog``). A file
is ``{"qlog_format": "JSON", "qlog_version": "0.3", "traces": [{"common_fields": {"ODCID"},
"vantage_point": {"type": "client"}, "events": [{"time", "name", "data"}]}]}`` with times in
milliseconds since 1970.

`from_aioquic_qlog` merges the traces it is given into one h3learn trace, in time order,
with the endpoint of each event taken from its trace's vantage point:

    http:frame_created / frame_parsed   http3 frame_created / frame_parsed (frame, headers)
    http:stream_type_set                http3 stream_type_set (aioquic's type names mapped
                                        to qlog's, the opener worked out from the stream ID)
    transport:packet_sent / _received   transport packet_* with a summary of the header
    / _dropped                          and the frame types
    anything else                       counted in meta["skipped"], not imported

aioquic logs what it understood, not the bytes, so imported events have empty ``raw`` and
``fields`` (their summaries say so), and no QPACK events: the replay of an imported trace
shows streams and frames but empty dynamic tables. Times become milliseconds since the
first event; ``meta["epoch"]`` keeps the wall-clock time of that first event.

The same reader takes h3learn's own 0.3 export (`qlog.to_qlog_03`), which carries two
things aioquic's files do not: a ``title`` (the file's, and each trace's, as qlog 0.3
allows), which becomes the trace's title; and ``h3learn_order``, the order of the original
trace's events, which puts events of the two endpoints with the same time back in their
recorded order. qlog keeps no order between its traces, so without it events with the same
time are put in the order of the traces in the file, and the trace's warnings say how many
there were.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from h3learn.events import ENDPOINTS, Event
from h3learn.trace.store import DEFAULT_MAX_BYTES, Trace, load_json, read_text_limited
from h3learn.trace.stored_events import TraceFormatError

QLOG_VERSION = "0.3"
#: What the 0.3 reader cannot give (aioquic logs no bytes; h3learn's own 0.3 export does,
#: but frames are read by their meaning here, as aioquic's are).
NO_BYTES = "the qlog 0.3 reader keeps no bytes"

#: aioquic's stream type names (``new``) -> (qlog stream_type, the Stream Type value).
STREAM_TYPES = {
    "control": ("control", 0x00),
    "push": ("push", 0x01),
    "qpack_encoder": ("qpack_encode", 0x02),
    "qpack_decoder": ("qpack_decode", 0x03),
    "webtransport": ("unknown", 0x54),
    "data": ("request", None),
    "reserved": ("reserved", None),
}
PACKET_EVENTS = ("packet_sent", "packet_received", "packet_dropped")

QlogSource = dict[str, Any] | str | os.PathLike[str] | Sequence[str | os.PathLike[str]]


def from_aioquic_qlog(
    source: QlogSource, *, max_bytes: int | None = DEFAULT_MAX_BYTES, name: str = "qlog"
) -> Trace:
    """Import aioquic qlog: a parsed dict, a .qlog file, a directory of them, or a list.

    ``name`` is what messages call a parsed dict (a file is called by its name).
    """
    documents = _documents(source, max_bytes, name)
    records: list[Record] = []
    connection_ids: list[str] = []
    trace_number = 0
    titles: list[str] = []
    counts: list[int] = []
    for name, document in documents:
        qlog_traces = _traces(document, name)
        titles.append(carried_title(document, qlog_traces))
        for position, qlog_trace in enumerate(qlog_traces):
            where = f"{name}: trace {position}"
            endpoint = vantage_point(qlog_trace, where)
            common = qlog_trace.get("common_fields", {})
            if isinstance(common, dict) and isinstance(common.get("ODCID"), str):
                connection_ids.append(common["ODCID"])
            timed = _timed_events(qlog_trace, where)
            for number, (time, event) in enumerate(timed):
                records.append((time, trace_number, number, endpoint, event))
            counts.append(len(timed))
            trace_number += 1
    order = recorded_order(documents[0][1], counts) if len(documents) == 1 else None
    warnings = []
    if order is not None:
        records.sort(key=lambda record: order[record[1]][record[2]])
    else:
        records.sort(key=lambda record: record[:3])
        ties = shared_times(records)
        if ties:
            warnings.append(
                f"{ties} events happen at the same time as an event of the other endpoint;"
                " qlog keeps no order between vantage points, so those are shown in the order"
                " of the file's traces"
            )
    events, skipped = convert_in_order(records, _convert)
    unique_ids = sorted(set(connection_ids))
    own_export = order is not None or any(titles)
    meta: dict[str, Any] = {
        # h3learn's own 0.3 export carries its order or a title (qlog.to_qlog_03).
        "source": f"{'h3learn' if own_export else 'aioquic'} qlog {QLOG_VERSION}",
        "files": [name for name, _ in documents],
        "skipped": dict(sorted(skipped.items())),
        "note": f"{NO_BYTES}: every event's raw and fields are empty",
    }
    if len(unique_ids) == 1:
        meta["odcid"] = unique_ids[0]
    elif len(unique_ids) > 1:
        warnings.append(f"the traces come from {len(unique_ids)} connections: {unique_ids}")
    created = None
    start = records[0][0] if records else 0.0
    if start > 1e12:  # milliseconds since 1970, as aioquic writes them
        created = datetime.fromtimestamp(start / 1000, UTC).isoformat(timespec="milliseconds")
        meta["epoch"] = created
    title = f"aioquic qlog {unique_ids[0]}" if len(unique_ids) == 1 else "aioquic qlog"
    if len(set(titles)) == 1 and titles[0]:
        title = titles[0]
    return Trace(title=title, meta=meta, events=events, created=created, warnings=warnings)


def carried_title(document: dict[str, Any], qlog_traces: list[dict[str, Any]]) -> str:
    """The title a qlog file carries ("" if none): its own ``title``, else the one its traces
    share once the vantage point h3learn's exports add (" (client)") is taken off."""
    own = document.get("title")
    if isinstance(own, str) and own.strip():
        return own
    shared = set()
    for qlog_trace in qlog_traces:
        title = qlog_trace.get("title")
        if not isinstance(title, str):
            return ""
        point = qlog_trace.get("vantage_point")
        kind = point.get("type") if isinstance(point, dict) else None
        shared.add(title.removesuffix(f" ({kind})"))
    return shared.pop() if len(shared) == 1 and qlog_traces else ""


def recorded_order(document: dict[str, Any], counts: list[int]) -> list[list[int]] | None:
    """Where each event of each trace stood in the trace h3learn exported (``order[trace]
    [n]``), from the file's ``h3learn_order``: one digit per event, in the recorded order,
    naming its trace ("0110..."). None without it, or when it does not fit the file's
    traces (an edited file): then time and the traces' order decide."""
    text = document.get("h3learn_order")
    if not isinstance(text, str) or len(text) != sum(counts) or len(counts) > 10:
        return None
    order: list[list[int]] = [[] for _ in counts]
    for position, digit in enumerate(text):
        trace = ord(digit) - ord("0")
        if not 0 <= trace < len(counts):
            return None
        order[trace].append(position)
    if [len(positions) for positions in order] != counts:
        return None
    return order


def shared_times(records: Sequence[Record]) -> int:
    """How many events share their time with an event of the other endpoint."""
    endpoints_at: dict[float, set[str]] = {}
    for time, _, _, endpoint, _ in records:
        endpoints_at.setdefault(time, set()).add(endpoint)
    return sum(1 for record in records if len(endpoints_at[record[0]]) > 1)


# -- reading and checking the files -----------------------------------------------------


def _documents(source: QlogSource, max_bytes: int | None, name: str) -> list[tuple[str, Any]]:
    if isinstance(source, dict):
        return [(name, source)]
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        paths = sorted(path.glob("*.qlog")) if path.is_dir() else [path]
        if not paths:
            raise TraceFormatError(f"{path.name}: a directory with no .qlog files")
    else:
        paths = [Path(item) for item in source]
    return [(p.name, load_json(read_text_limited(p, max_bytes), p.name)) for p in paths]


def _traces(document: Any, name: str) -> list[dict[str, Any]]:
    if not isinstance(document, dict):
        raise TraceFormatError(f"{name}: the top level is not an object")
    if "file_schema" in document:
        raise TraceFormatError(
            f"{name}: a current-draft qlog file; h3learn imports qlog 0.3, as aioquic writes it"
        )
    version = document.get("qlog_version")
    if version != QLOG_VERSION:
        raise TraceFormatError(
            f"{name}: qlog_version {version!r} is not supported (h3learn imports {QLOG_VERSION!r})"
        )
    if document.get("qlog_format", "JSON") != "JSON":
        raise TraceFormatError(f"{name}: qlog_format {document['qlog_format']!r} is not JSON")
    traces = document.get("traces")
    if not isinstance(traces, list) or not all(isinstance(t, dict) for t in traces):
        raise TraceFormatError(f"{name}: 'traces' is not a list of objects")
    return traces


#: A qlog event ready to convert: (time in ms, trace number, position in its trace,
#: endpoint, {"name", "data"}), in the order the trace should have.
Record = tuple[float, int, int, str, dict[str, Any]]


def convert_in_order(
    records: Sequence[Record], convert: Callable[[int, float, str, dict[str, Any]], Event | None]
) -> tuple[list[Event], Counter[str]]:
    """The records as events (seq from 0, time from the first record), and the names of
    those ``convert`` left out, counted."""
    start = records[0][0] if records else 0.0
    events: list[Event] = []
    skipped: Counter[str] = Counter()
    for time, _, _, endpoint, event in records:
        converted = convert(len(events), time - start, endpoint, event)
        if converted is None:
            skipped[event["name"]] += 1
        else:
            events.append(converted)
    return events, skipped


def vantage_point(qlog_trace: dict[str, Any], where: str) -> str:
    """The endpoint a qlog trace was written by; only "client" and "server" are imported."""
    vantage_point = qlog_trace.get("vantage_point")
    kind = vantage_point.get("type") if isinstance(vantage_point, dict) else None
    if kind not in ENDPOINTS:
        raise TraceFormatError(f"{where}: vantage_point type {kind!r} is not 'client' or 'server'")
    return str(kind)


def _timed_events(qlog_trace: dict[str, Any], where: str) -> list[tuple[float, dict[str, Any]]]:
    """Each event with its time in ms since 1970 (or the trace's own zero)."""
    events = qlog_trace.get("events")
    if not isinstance(events, list):
        raise TraceFormatError(f"{where}: 'events' is not a list")
    common = qlog_trace.get("common_fields")
    common = common if isinstance(common, dict) else {}
    time_format = common.get("time_format", "absolute")
    reference = common.get("reference_time", 0)
    if not isinstance(reference, int | float) or isinstance(reference, bool):
        raise TraceFormatError(f"{where}: 'reference_time' is not a number")
    reference = usable_time(reference, where, "reference_time")
    timed = []
    previous = reference
    for number, event in enumerate(events):
        event_where = f"{where}: event {number}"
        name, time, data = checked_event(event, event_where)
        if time_format == "delta":
            previous += time
            time = previous
        elif time_format == "relative":
            time = reference + time
        timed.append((usable_time(time, event_where), {"name": name, "data": data}))
    return timed


#: The latest time h3learn can show, in ms since 1970: the end of the year 9999, the last
#: a date can name (Python's datetime). Times in a qlog file count from 1970 or from a
#: reference time; either way a usable one is far below this.
MAX_TIME_MS = 253_402_300_799_999


def usable_time(time: float, where: str, what: str = "time") -> float:
    """A time in ms as a float, or `TraceFormatError` if it is not finite or beyond
    `MAX_TIME_MS` either side of 1970 (it could not be shown as a date)."""
    try:
        value = float(time)
    except OverflowError:
        value = math.inf
    if not math.isfinite(value) or abs(value) > MAX_TIME_MS:
        shown = time if isinstance(time, float) or abs(time) < 10**30 else "a huge number"
        raise TraceFormatError(
            f"{where}: {what} {shown} is not a usable time (it must be a finite number of"
            " ms within the years 1970 ± 8000)"
        )
    return value


def checked_event(event: Any, where: str) -> tuple[str, float, dict[str, Any]]:
    """A qlog event's ``name`` ("category:event"), ``time`` and ``data``, each checked."""
    if not isinstance(event, dict):
        raise TraceFormatError(f"{where}: not an object")
    name, time, data = event.get("name"), event.get("time"), event.get("data", {})
    if not isinstance(name, str) or ":" not in name:
        raise TraceFormatError(f"{where}: 'name' is not 'category:event'")
    if not isinstance(time, int | float) or isinstance(time, bool):
        raise TraceFormatError(f"{where}: 'time' is not a number")
    if not isinstance(data, dict):
        raise TraceFormatError(f"{where}: 'data' is not an object")
    return name, usable_time(time, where), data


# -- one event --------------------------------------------------------------------------


def _convert(seq: int, time: float, endpoint: str, event: dict[str, Any]) -> Event | None:
    category, _, name = event["name"].partition(":")
    data: dict[str, Any] = event["data"]
    if category == "http" and name in ("frame_created", "frame_parsed"):
        return _frame(seq, time, endpoint, name, data)
    if category == "http" and name == "stream_type_set":
        return _stream_type(seq, time, endpoint, data)
    if category == "transport" and name in PACKET_EVENTS:
        return _packet(seq, time, endpoint, name, data)
    return None


def _frame(seq: int, time: float, endpoint: str, name: str, data: dict[str, Any]) -> Event:
    frame = _dict(data.get("frame"))
    stream_id = data.get("stream_id") if _is_int(data.get("stream_id")) else None
    frame_type = str(frame.get("frame_type", "unknown"))
    peer = "server" if endpoint == "client" else "client"
    arrow = f"{endpoint} → {peer}" if name == "frame_created" else f"{peer} → {endpoint}"
    details = ""
    headers = frame.get("headers")
    if isinstance(headers, list):
        shown = [f"{h.get('name')}: {h.get('value')}" for h in headers[:4] if isinstance(h, dict)]
        more = ", ..." if len(headers) > 4 else ""
        details = f" ({', '.join(shown)}{more})"
    elif frame_type == "data" and _is_int(data.get("length")):
        details = f" ({data['length']} bytes)"
    return Event(
        seq=seq,
        time=time,
        endpoint=endpoint,
        category="http3",
        name=name,
        stream_id=stream_id,
        data={"stream_id": stream_id, "length": data.get("length"), "frame": dict(frame)},
        rfc=("9114#7.2",),
        summary=f"{arrow}: {frame_type.upper()} on stream {stream_id}{details} [{NO_BYTES}]",
    )


def _stream_type(seq: int, time: float, endpoint: str, data: dict[str, Any]) -> Event:
    stream_id = data.get("stream_id") if _is_int(data.get("stream_id")) else None
    stream_type, value = STREAM_TYPES.get(str(data.get("new")), ("unknown", None))
    opener = "server" if stream_id is not None and stream_id & 0x01 else "client"
    owner = "local" if opener == endpoint else "remote"
    out: dict[str, Any] = {"stream_id": stream_id, "owner": owner, "stream_type": stream_type}
    if value is not None:
        out["stream_type_value"] = value
    if _is_int(data.get("associated_push_id")):
        out["push_id"] = data["associated_push_id"]
    verb = "opens" if owner == "local" else "sees the peer open"
    return Event(
        seq=seq,
        time=time,
        endpoint=endpoint,
        category="http3",
        name="stream_type_set",
        stream_id=stream_id,
        data=out,
        rfc=("9114#6.2",),
        summary=f"{endpoint} {verb} stream {stream_id}: {stream_type} [{NO_BYTES}]",
    )


def _packet(seq: int, time: float, endpoint: str, name: str, data: dict[str, Any]) -> Event:
    header, raw, frames = _dict(data.get("header")), _dict(data.get("raw")), data.get("frames")
    frames = frames if isinstance(frames, list) else []
    out: dict[str, Any] = {
        key: header[key] for key in ("packet_type", "packet_number") if key in header
    }
    if "length" in raw:
        out["length"] = raw["length"]
    out["frames"] = [f.get("frame_type") for f in frames if isinstance(f, dict)]
    close = _connection_close(frames)
    if close:
        out["close"] = close
    if "trigger" in data:
        out["trigger"] = data["trigger"]
    what = {"packet_sent": "sends", "packet_received": "receives", "packet_dropped": "drops"}[name]
    packet = f"{out.get('packet_type', 'a')} packet {out.get('packet_number', '')}".strip()
    size = f" ({out['length']} bytes)" if "length" in out else ""
    contents = f": {_runs(out['frames'])}" if out["frames"] else ""
    because = f" ({out['trigger']})" if "trigger" in out else ""
    return Event(
        seq=seq,
        time=time,
        endpoint=endpoint,
        category="transport",
        name=name,
        stream_id=None,
        data=out,
        rfc=("9000#17",),
        summary=f"{endpoint} {what} {packet}{size}{contents}{because} [{NO_BYTES}]",
    )


def _connection_close(frames: list[Any]) -> dict[str, Any]:
    """What a packet's CONNECTION_CLOSE frame says (RFC 9000 §19.19), as far as it is usable:
    its error space (``transport``, type 0x1c, or ``application``, 0x1d), code and reason."""
    for frame in frames:
        if isinstance(frame, dict) and frame.get("frame_type") == "connection_close":
            kept: dict[str, Any] = {}
            if frame.get("error_space") in ("transport", "application"):
                kept["error_space"] = frame["error_space"]
            code = frame.get("error_code")
            if isinstance(code, int) and not isinstance(code, bool) and 0 <= code < 1 << 62:
                kept["error_code"] = code
            if isinstance(frame.get("reason"), str):
                kept["reason"] = frame["reason"]
            return kept
    return {}


def _runs(items: list[Any]) -> str:
    """``ack, stream ×3, padding``: repeated neighbours counted, not listed."""
    parts: list[str] = []
    count = 0
    for position, item in enumerate(items):
        count += 1
        if position + 1 == len(items) or items[position + 1] != item:
            parts.append(f"{item} ×{count}" if count > 1 else str(item))
            count = 0
    return ", ".join(parts)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
