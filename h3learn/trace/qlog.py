"""qlog export: a trace in the current qlog draft, and in the 0.3 form qvis and aioquic use.

qlog (draft-ietf-quic-qlog-main-schema) is the common log format of QUIC and HTTP/3
implementations. A qlog *trace* is one vantage point, so each export holds two traces, the
client's events and the server's.

`to_qlog` writes the current drafts: a ``urn:ietf:params:qlog:file:contained`` file whose
traces declare their ``event_schemas``. HTTP/3 events follow draft-ietf-quic-qlog-h3-events-13
(``http3:`` names; ``initiator`` for who set a parameter or opened a stream; frame lengths
in ``raw``). QPACK events were dropped from the HTTP/3 draft after -05 and have no schema
of their own, so they keep the -05 shapes under ``qpack:`` names and a private schema URI,
`QPACK_EVENT_SCHEMA`. qlog forbids private schemas the ``urn:ietf:params:qlog:events:``
form (draft-ietf-quic-qlog-main-schema, "Event Schema URIs"), which rules out
``urn:ietf:params:qlog:events:qpack-05``; a private schema is named by a URI with a domain
and a month-date instead. The project owns no domain yet, so the URI uses the reserved
``.invalid`` name (RFC 6761 §6.4): unmistakably private, never resolvable, and one
constant to change when the project has a home. Events with no qlog counterpart (HTTP/3
stream states and errors, transport summaries, an encoder's skipped insert) go under
``h3learn:`` names and a second private schema, `H3LEARN_EVENT_SCHEMA`.

`to_qlog_03` writes ``qlog_version`` "0.3", which qvis opens and aioquic's QuicLogger
writes: ``http:`` names with aioquic's data shapes (``{"frame": {"frame_type": "headers",
"headers": [...]}, "length": n, "stream_id": n}``, ``stream_type_set`` with ``new``), QPACK
under ``qpack:`` as above, and packets as ``transport:packet_sent`` / ``packet_received``;
and ``h3learn_order``, the trace's order of events across both endpoints, which the import
(qlog_import.py) uses to put events of the two endpoints with the same time back in order.

The table of every mapping is in docs/events.md ("qlog export").
"""

from __future__ import annotations

import copy
import hashlib
import json
from datetime import datetime
from typing import Any

from h3learn.events import ENDPOINTS, Event
from h3learn.trace.store import Trace

FILE_SCHEMA = "urn:ietf:params:qlog:file:contained"
SERIALIZATION_FORMAT = "application/qlog+json"
HTTP3_EVENT_SCHEMA = "urn:ietf:params:qlog:events:http3-13"
#: QPACK events in the shapes of draft-ietf-quic-qlog-h3-events-05 (see the module docstring).
QPACK_EVENT_SCHEMA = "https://h3learn.invalid/122026/qpack-h3-events-05"
#: h3learn's own events: HTTP/3 stream states and errors, transport summaries.
H3LEARN_EVENT_SCHEMA = "https://h3learn.invalid/122026/h3learn-events"
#: h3learn's qpack events that no qlog draft defines, exported under ``h3learn:`` names
#: (``insert_skipped``: an insert the encoder may not make, RFC 9204 §2.1.1).
H3LEARN_QPACK_EVENTS = frozenset({"insert_skipped"})
#: The qpack events draft -05 defines, exported under ``qpack:`` names.
QPACK_QLOG_EVENTS = frozenset(
    {
        "instruction_created",
        "instruction_parsed",
        "headers_encoded",
        "headers_decoded",
        "dynamic_table_updated",
        "state_updated",
        "stream_state_updated",
    }
)

#: The qlog names of settings (h3-events HTTP3SettingsName), keyed by identifier.
SETTING_NAMES = {
    0x01: "settings_qpack_max_table_capacity",
    0x06: "settings_max_field_section_size",
    0x07: "settings_qpack_blocked_streams",
    0x08: "settings_enable_connect_protocol",
    0x33: "settings_h3_datagram",
}
#: The fields of http3:parameters_set, keyed by setting identifier.
PARAMETER_NAMES = {
    0x01: "max_table_capacity",
    0x06: "max_field_section_size",
    0x07: "blocked_streams_count",
    0x08: "extended_connect",
    0x33: "h3_datagram",
}
#: RFC 9114 §7.2.4.1: identifiers HTTP/2 used, reserved in HTTP/3.
HTTP2_SETTINGS = frozenset({0x02, 0x03, 0x04, 0x05})

#: aioquic's names for stream types in 0.3 ``stream_type_set`` (``new``).
STREAM_TYPES_03 = {
    "control": "control",
    "push": "push",
    "qpack_encode": "qpack_encoder",
    "qpack_decode": "qpack_decoder",
    "request": "data",
    "reserved": "reserved",
}

#: h3learn field line types -> h3-events-05 header_field_type.
HEADER_FIELD_TYPES = {
    "indexed_field_line": "indexed_header",
    "literal_with_name": "literal_with_name",
    "literal_without_name": "literal_without_name",
}
#: Keys of an h3-events-05 header block representation, copied when present.
REPRESENTATION_KEYS = (
    "table_type",
    "index",
    "is_post_base",
    "name_index",
    "huffman_encoded_name",
    "name",
    "huffman_encoded_value",
    "value",
)
#: Keys of h3-events-05 qpack events that h3learn's data shares.
STATE_KEYS = (
    "owner",
    "dynamic_table_capacity",
    "dynamic_table_size",
    "known_received_count",
    "current_insert_count",
)


def to_qlog(trace: Trace, *, include_bytes: bool = True) -> dict[str, Any]:
    """The trace as a current-draft qlog file (a JSON-able dict); see the module docstring."""
    exporter = _Exporter(trace, include_bytes)
    epoch = trace.meta.get("epoch")
    reference_time = (
        {"clock_type": "system", "epoch": epoch}
        if isinstance(epoch, str)
        else {"clock_type": "monotonic", "epoch": "unknown"}
    )
    traces = []
    for endpoint in ENDPOINTS:
        events = [exporter.current(event) for event in exporter.events_of(endpoint)]
        schemas = [HTTP3_EVENT_SCHEMA, QPACK_EVENT_SCHEMA]
        if any(event["name"].startswith("h3learn:") for event in events):
            schemas.append(H3LEARN_EVENT_SCHEMA)
        traces.append(
            {
                "title": f"{trace.title} ({endpoint})",
                "vantage_point": {"name": "h3learn", "type": endpoint},
                "event_schemas": schemas,
                "common_fields": {
                    "time_format": "relative_to_epoch",
                    "reference_time": reference_time,
                },
                "events": events,
            }
        )
    return {
        "file_schema": FILE_SCHEMA,
        "serialization_format": SERIALIZATION_FORMAT,
        "title": trace.title,
        "description": "exported by h3learn from a trace of HTTP/3 and QPACK events",
        "traces": traces,
    }


def to_qlog_03(trace: Trace, *, include_bytes: bool = True) -> dict[str, Any]:
    """The trace as qlog 0.3 (what qvis opens and aioquic writes); see the module docstring."""
    exporter = _Exporter(trace, include_bytes)
    common = {
        "ODCID": odcid(trace),
        "reference_time": _epoch_milliseconds(trace.meta.get("epoch")),
        "time_format": "relative",
    }
    traces = [
        {
            "title": f"{trace.title} ({endpoint})",
            "common_fields": dict(common),
            "vantage_point": {"name": "h3learn", "type": endpoint},
            "events": [exporter.draft_03(event) for event in exporter.events_of(endpoint)],
        }
        for endpoint in ENDPOINTS
    ]
    # qlog keeps no order between traces: events of both endpoints at the same time would
    # come back client first. One digit per event, in the trace's order, names its trace.
    order = "".join(str(ENDPOINTS.index(event.endpoint)) for event in trace.events)
    return {
        "qlog_format": "JSON",
        "qlog_version": "0.3",
        "title": trace.title,
        "traces": traces,
        "h3learn_order": order,
    }


def odcid(trace: Trace) -> str:
    """The connection ID qvis groups both traces by: the real one if known, else a stand-in."""
    known = trace.meta.get("odcid")
    if isinstance(known, str) and known:
        return known
    seed = json.dumps([trace.title, trace.created], ensure_ascii=False).encode()
    return hashlib.sha256(seed).hexdigest()[:16]


def _epoch_milliseconds(epoch: Any) -> float:
    """qlog 0.3 ``reference_time``: the ms since 1970 at which time 0 was (0 if unknown)."""
    if isinstance(epoch, str):
        try:
            return datetime.fromisoformat(epoch).timestamp() * 1000
        except ValueError:
            pass
    return 0.0


class _Exporter:
    """The per-event mappings, and what they look up across the trace."""

    def __init__(self, trace: Trace, include_bytes: bool) -> None:
        self.trace = trace
        self.include_bytes = include_bytes
        #: RFC 9114 §4.2 / §7.2.2: a HEADERS frame's payload is a QPACK field section; the
        #: headers it stands for are in the qpack headers_* event with the same bytes.
        self.sections: dict[tuple[str, int | None, bytes], list[Any]] = {}
        for event in trace.events:
            if event.category == "qpack" and event.name in ("headers_encoded", "headers_decoded"):
                key = (event.endpoint, event.stream_id, event.raw)
                self.sections[key] = copy.deepcopy(event.data.get("headers", []))

    def events_of(self, endpoint: str) -> list[Event]:
        return [event for event in self.trace.events if event.endpoint == endpoint]

    # -- the current drafts -------------------------------------------------------------

    def current(self, event: Event) -> dict[str, Any]:
        data = event.data
        name: str
        if event.category == "http3" and event.name in ("frame_created", "frame_parsed"):
            name = f"http3:{event.name}"
            frame = self.frame(event, draft_03=False)
            frame["raw"] = self.raw_info(event, payload_length=self.payload_length(event))
            out = {"stream_id": self.stream_id(event), "frame": frame}
        elif event.category == "http3" and event.name == "parameters_set":
            name, out = "http3:parameters_set", self.parameters(data, "initiator")
        elif event.category == "http3" and event.name == "parameters_restored":
            name, out = "http3:parameters_restored", self.parameters(data, None)
        elif event.category == "http3" and event.name == "stream_type_set":
            name, out = "http3:stream_type_set", self.stream_type(event)
        elif event.category == "qpack" and event.name in QPACK_QLOG_EVENTS:
            name, out = f"qpack:{event.name}", self.qpack(event)
        else:
            name, out = f"h3learn:{event.name}", copy.deepcopy(data)
        return {"time": event.time, "name": name, "data": out}

    def stream_type(self, event: Event) -> dict[str, Any]:
        data = event.data
        out: dict[str, Any] = {"stream_id": self.stream_id(event)}
        if data.get("owner") in ("local", "remote"):
            out["initiator"] = data["owner"]
        stream_type = data.get("stream_type", "unknown")
        out["stream_type"] = stream_type
        value = data.get("stream_type_value", data.get("stream_type_bytes"))
        if stream_type == "unknown" and value is not None:
            out["stream_type_bytes"] = value
        push_id = data.get("push_id", data.get("associated_push_id"))
        if push_id is not None:
            out["associated_push_id"] = push_id
        return out

    # -- qlog 0.3 (aioquic's shapes) ----------------------------------------------------

    def draft_03(self, event: Event) -> dict[str, Any]:
        data = event.data
        name: str
        if event.category == "http3" and event.name in ("frame_created", "frame_parsed"):
            name = f"http:{event.name}"
            out = {
                "frame": self.frame(event, draft_03=True),
                "length": self.payload_length(event),
                "stream_id": self.stream_id(event),
            }
        elif event.category == "http3" and event.name == "parameters_set":
            name, out = "http:parameters_set", self.parameters(data, "owner", draft_03=True)
        elif event.category == "http3" and event.name == "parameters_restored":
            name, out = "http:parameters_restored", self.parameters(data, None, draft_03=True)
        elif event.category == "http3" and event.name == "stream_type_set":
            current = self.stream_type(event)
            out = {"new": STREAM_TYPES_03.get(current["stream_type"], "unknown")}
            out["stream_id"] = current["stream_id"]
            if "initiator" in current:
                out["owner"] = current["initiator"]
            if "associated_push_id" in current:
                out["associated_push_id"] = current["associated_push_id"]
            name = "http:stream_type_set"
        elif event.category == "qpack" and event.name in QPACK_QLOG_EVENTS:
            name, out = f"qpack:{event.name}", self.qpack(event)
        elif event.category == "transport" and event.name in ("packet_sent", "packet_received"):
            name, out = f"transport:{event.name}", _packet_03(data)
        elif event.category == "transport" and event.name.startswith("stream_data_"):
            sent = event.name == "stream_data_sent"
            name = "transport:data_moved"
            out = {
                "stream_id": self.stream_id(event),
                "length": data.get("length"),
                "from": "application" if sent else "transport",
                "to": "transport" if sent else "application",
            }
        else:
            name, out = f"h3learn:{event.name}", copy.deepcopy(data)
        return {"time": event.time, "name": name, "data": out}

    # -- shared pieces -----------------------------------------------------------------

    def stream_id(self, event: Event) -> Any:
        return event.data.get("stream_id", event.stream_id)

    def frame(self, event: Event, draft_03: bool) -> dict[str, Any]:
        """A frame's qlog form: frame_type, plus what that frame type carries."""
        frame = event.data.get("frame")
        frame = frame if isinstance(frame, dict) else {}
        frame_type = frame.get("frame_type", "unknown")
        out: dict[str, Any] = {"frame_type": frame_type}
        if frame_type in ("headers", "push_promise"):
            headers = frame.get("headers")
            if not isinstance(headers, list):
                headers = self.section_headers(event)
            out["headers"] = copy.deepcopy(headers)
        if frame_type == "settings":
            out["settings"] = [
                _setting(item) for item in frame.get("settings", []) if isinstance(item, dict)
            ]
        for key in ("push_id", "id", "priority_field_value", "origin_entries"):
            if key in frame:
                out[key] = copy.deepcopy(frame[key])
        if frame_type == "priority_update" and "stream_id" in frame:
            out["stream_id"] = frame["stream_id"]
        if frame_type in ("reserved", "unknown"):
            value = frame.get("frame_type_bytes", frame.get("frame_type_value"))
            if value is not None:
                out["frame_type_value" if draft_03 else "frame_type_bytes"] = value
        return out

    def section_headers(self, event: Event) -> list[Any]:
        """The headers of the field section a HEADERS or PUSH_PROMISE frame carries."""
        for (endpoint, stream_id, raw), headers in self.sections.items():
            mine = endpoint == event.endpoint and stream_id == event.stream_id
            if mine and raw and event.raw.endswith(raw):
                return headers
        return []

    def payload_length(self, event: Event) -> Any:
        """RFC 9114 §7.1: the Length field, as the frame recorded it or read from its bytes.

        (A reserved or unknown frame whose payload was discarded unread has only its Type
        and Length in ``raw``; its recorded frame still says how long the payload was.)
        """
        recorded = _frame_raw(event).get("payload_length")
        if isinstance(recorded, int) and not isinstance(recorded, bool):
            return recorded
        header = _frame_header_length(event.raw)
        if header is not None:
            return len(event.raw) - header
        return event.data.get("length")

    def raw_info(self, event: Event, payload_length: Any = None) -> dict[str, Any]:
        """qlog RawInfo: the unit's length, and its bytes as hex."""
        info: dict[str, Any] = {}
        recorded = _frame_raw(event).get("length")
        if isinstance(recorded, int) and not isinstance(recorded, bool):
            info["length"] = recorded
        elif event.raw:
            info["length"] = len(event.raw)
        if payload_length is not None:
            info["payload_length"] = payload_length
        if event.raw and self.include_bytes:
            info["data"] = event.raw.hex()
        return info

    def parameters(
        self, data: dict[str, Any], owner_key: str | None, draft_03: bool = False
    ) -> dict[str, Any]:
        """http3:parameters_set / _restored: one field per setting (others ``setting_0x..``).

        ``owner_key`` names who set them (``parameters_restored`` has no such field).
        """
        out: dict[str, Any] = {}
        if owner_key is not None and data.get("owner") in ("local", "remote"):
            out[owner_key] = data["owner"]
        for item in data.get("settings", []):
            if not isinstance(item, dict) or not isinstance(item.get("id"), int):
                continue
            identifier = item["id"]
            key = PARAMETER_NAMES.get(identifier, f"setting_{identifier:#x}")
            if draft_03 and identifier == 0x06:
                key = "max_header_list_size"  # its name before h3-events-04
            out[key] = item.get("value")
        return out

    def qpack(self, event: Event) -> dict[str, Any]:
        """A qpack event in the shapes of draft-ietf-quic-qlog-h3-events-05."""
        data = event.data
        if event.name in ("instruction_created", "instruction_parsed"):
            return {"instruction": copy.deepcopy(data), "raw": self.raw_info(event)}
        if event.name in ("headers_encoded", "headers_decoded"):
            prefix = data.get("prefix", {})
            return {
                "stream_id": data.get("stream_id", event.stream_id),
                "headers": copy.deepcopy(data.get("headers", [])),
                "block_prefix": {
                    "required_insert_count": prefix.get("required_insert_count"),
                    "sign_bit": prefix.get("sign"),
                    "delta_base": prefix.get("delta_base"),
                },
                "header_block": [
                    _representation(line)
                    for line in data.get("field_lines", [])
                    if isinstance(line, dict)
                ],
                "raw": self.raw_info(event),
            }
        if event.name == "dynamic_table_updated":
            return {
                "owner": data.get("owner"),
                "update_type": data.get("update_type"),
                "entries": [
                    {key: entry.get(key) for key in ("index", "name", "value")}
                    for entry in data.get("entries", [])
                    if isinstance(entry, dict)
                ],
            }
        if event.name == "state_updated":
            return {key: data[key] for key in STATE_KEYS if key in data}
        if event.name == "stream_state_updated":
            return {"stream_id": data.get("stream_id", event.stream_id), "state": data.get("state")}
        return copy.deepcopy(data)


def _setting(item: dict[str, Any]) -> dict[str, Any]:
    """h3-events HTTP3Setting: a known name, "reserved", or "unknown" with the identifier.

    A SETTINGS frame recorded by H3Connection already holds its settings in this shape
    (h3learn.h3.settings.qlog_setting); an item with an ``id`` is converted.
    """
    identifier = item.get("id")
    if identifier is None and isinstance(item.get("name"), str):
        return dict(item)
    if identifier in SETTING_NAMES:
        return {"name": SETTING_NAMES[identifier], "value": item.get("value")}
    if isinstance(identifier, int) and (
        identifier in HTTP2_SETTINGS or (identifier >= 0x21 and (identifier - 0x21) % 0x1F == 0)
    ):
        return {"name": "reserved", "value": item.get("value")}
    return {"name": "unknown", "name_bytes": identifier, "value": item.get("value")}


def _representation(line: dict[str, Any]) -> dict[str, Any]:
    """An h3learn field line as an h3-events-05 header block representation."""
    out: dict[str, Any] = {
        "header_field_type": HEADER_FIELD_TYPES.get(line.get("type", ""), line.get("type"))
    }
    for key in REPRESENTATION_KEYS:
        if key in line:
            out[key] = line[key]
    if "is_never_indexed" in line:
        out["preserve_literal"] = line["is_never_indexed"]
    return out


def _packet_03(data: dict[str, Any]) -> dict[str, Any]:
    """A transport packet summary in the 0.3 shape qvis draws its sequence diagram from."""
    header = {key: data[key] for key in ("packet_type", "packet_number") if key in data}
    found = data.get("close")
    close: dict[str, Any] = found if isinstance(found, dict) else {}
    frames = [
        {"frame_type": frame_type} | (close if frame_type == "connection_close" else {})
        for frame_type in data.get("frames", [])
    ]
    out: dict[str, Any] = {"header": header, "frames": frames}
    if "length" in data:
        out["raw"] = {"length": data["length"]}
    return out


def _frame_raw(event: Event) -> dict[str, Any]:
    """The RawInfo a frame event's ``data.frame`` carries, or {} (other events, odd files)."""
    frame = event.data.get("frame")
    raw = frame.get("raw") if isinstance(frame, dict) else None
    return raw if isinstance(raw, dict) else {}


def _frame_header_length(raw: bytes) -> int | None:
    """RFC 9114 §7.1: the bytes of a frame's Type and Length fields (two varints, RFC 9000 §16)."""
    position = 0
    for _ in range(2):
        if position >= len(raw):
            return None
        position += 1 << (raw[position] >> 6)  # the two top bits give the varint's size
    return position if position <= len(raw) else None
