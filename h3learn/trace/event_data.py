"""The shapes of each event's ``data`` that the readers of a trace rely on.

docs/events.md lists every event name and its ``data``. The replay, the qlog exports, the
step view and the handout read those keys, so a trace file that gives one of them the
wrong type (``"settings": null``, a field line whose ``type`` is a list) is refused when
it is read, with the event and the key: ``trace.json: event 3: data 'frame.settings' is
null, not a list``. Every consumer can then trust what it reads.

Simplifications, on purpose:

- A key is optional unless a reader cannot do without it (a setting's ``id``, ``name``
  and ``value``): imported traces (qlog) carry fewer keys than recorded ones, and the
  readers fall back when a key is missing. Only a key that is present is checked.
- Keys not listed here are not checked (qlog's data is extensible, and a newer h3learn
  may add keys); nor is ``data`` of an event name not listed (a newer version's event),
  beyond being a JSON object of bounded depth (json_text.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from h3learn.trace.json_text import UnusableJSON, check_depth, json_kind


@dataclass(frozen=True, slots=True)
class Scalar:
    """A JSON scalar of one of ``types``; ``None`` stands for null.

    ``int`` excludes booleans (JSON tells them apart) but takes IntEnums: a recorded
    event is checked before it is written, with the registries' values still in it.
    """

    words: str
    types: tuple[type | None, ...]

    def accepts(self, value: Any) -> bool:
        kind = type(value)
        if kind in self.types or (value is None and None in self.types):
            return True  # the common case, first: every event of a trace is checked
        if isinstance(value, bool):
            return False
        return any(isinstance(value, each) for each in self.types if each is not None)


@dataclass(frozen=True, slots=True)
class ListOf:
    item: Shape
    words: str = "a list"


@dataclass(frozen=True, slots=True)
class Obj:
    keys: dict[str, Shape]
    #: The keys that must be there (the rest are optional).
    required: tuple[str, ...] = ()
    words: str = "an object"


Shape = Scalar | ListOf | Obj

INT = Scalar("an integer", (int,))
INT_OR_NULL = Scalar("an integer or null", (int, None))
STR = Scalar("a string", (str,))
STR_OR_NULL = Scalar("a string or null", (str, None))
BOOL = Scalar("a boolean", (bool,))

#: One SETTINGS parameter as `parameters_set` lists it (docs/events.md).
SETTING = Obj(
    {"id": INT, "name": STR, "value": INT, "qlog": Obj({"name": STR, "value": INT})},
    required=("id", "name", "value"),
)
#: One parameter of a SETTINGS frame, as qlog lists it.
FRAME_SETTING = Obj({"name": STR, "value": INT, "name_bytes": INT})
SETTINGS_DATA = Obj({"owner": STR, "settings": ListOf(SETTING)})

FIELD_LINE = Obj(
    {
        "representation": STR,
        "type": STR,
        "table": STR,
        "table_type": STR,
        "static_index": INT,
        "absolute_index": INT,
        "index": INT,
        "name_index": INT,
        "is_post_base": BOOL,
        "name": STR,
        "value": STR,
        "encoded_length": INT,
    }
)
PREFIX = Obj(
    {
        "required_insert_count": INT,
        "encoded_insert_count": INT,
        "max_entries": INT,
        "base": INT,
        "sign": BOOL,
        "delta_base": INT,
        "total_inserts": INT,
    }
)
HEADER = Obj({"name": STR, "value": STR})
FIELD_SECTION = Obj(
    {
        "stream_id": INT_OR_NULL,
        "headers": ListOf(HEADER),
        "prefix": PREFIX,
        "field_lines": ListOf(FIELD_LINE),
    }
)
INSTRUCTION = Obj(
    {
        "instruction_type": STR,
        "capacity": INT,
        "table_type": STR,
        "name_index": INT,
        "name": STR,
        "value": STR,
        "index": INT,
        "stream_id": INT_OR_NULL,
        "increment": INT,
    }
)
FRAME_EVENT = Obj(
    {
        "stream_id": INT_OR_NULL,
        "length": INT_OR_NULL,
        "frame": Obj(
            {
                "frame_type": STR,
                "settings": ListOf(FRAME_SETTING),
                "headers": ListOf(HEADER),
                "id": INT,
                "push_id": INT,
                "frame_type_bytes": INT,
            }
        ),
    }
)
ERROR_EVENT = Obj(
    {
        "stream_id": INT_OR_NULL,
        "code": INT_OR_NULL,
        "code_name": STR,
        "rule": STR,
        "rfc": STR,
        "direction": STR,
        "layer": STR,
        "reason": STR,
        "unanswered_requests": ListOf(INT),
    }
)
STREAM_DATA = Obj({"stream_id": INT_OR_NULL, "length": INT_OR_NULL, "end_stream": BOOL})

#: (category, name) -> the shape of its data.
DATA_SHAPES: dict[tuple[str, str], Obj] = {
    ("qpack", "instruction_created"): INSTRUCTION,
    ("qpack", "instruction_parsed"): INSTRUCTION,
    ("qpack", "dynamic_table_updated"): Obj(
        {
            "owner": STR,
            "update_type": STR,
            "entries": ListOf(Obj({"index": INT, "name": STR, "value": STR, "size": INT})),
            "dynamic_table_size": INT,
            "current_insert_count": INT,
        }
    ),
    ("qpack", "state_updated"): Obj(
        {
            "owner": STR,
            "dynamic_table_capacity": INT,
            "dynamic_table_size": INT,
            "current_insert_count": INT,
            "known_received_count": INT,
            "blocking_streams": ListOf(INT),
        }
    ),
    ("qpack", "headers_encoded"): FIELD_SECTION,
    ("qpack", "headers_decoded"): FIELD_SECTION,
    ("qpack", "insert_skipped"): Obj(
        {
            "owner": STR,
            "instruction": STR,
            "name": STR,
            "value": STR,
            "size": INT,
            "reason": STR,
            "known_received_count": INT,
            "dynamic_table_size": INT,
            "dynamic_table_capacity": INT,
            "instruction_size": INT,
            "stream_credit": INT,
            "connection_credit": INT,
        }
    ),
    ("qpack", "stream_state_updated"): Obj(
        {
            "stream_id": INT_OR_NULL,
            "state": STR,
            "required_insert_count": INT,
            "current_insert_count": INT,
        }
    ),
    ("http3", "parameters_set"): SETTINGS_DATA,
    ("http3", "parameters_restored"): SETTINGS_DATA,
    ("http3", "early_data_decision"): Obj(
        {"accepted": BOOL, "remembered": ListOf(SETTING), "settings": ListOf(SETTING)}
    ),
    ("http3", "stream_type_set"): Obj(
        {
            "stream_id": INT_OR_NULL,
            "owner": STR,
            "stream_type": STR,
            "stream_type_bytes": INT,
            "stream_type_value": INT,
            "associated_push_id": INT,
            "push_id": INT,
        }
    ),
    ("http3", "frame_created"): FRAME_EVENT,
    ("http3", "frame_parsed"): FRAME_EVENT,
    ("http3", "stream_state_updated"): Obj(
        {"stream_id": INT, "old": STR, "new": STR, "trigger": STR}
    ),
    ("http3", "stream_error"): ERROR_EVENT,
    ("http3", "connection_error"): ERROR_EVENT,
    ("http3", "connection_closed"): ERROR_EVENT,
    ("http3", "stop_sending"): ERROR_EVENT,
    ("http3", "reset_stream"): ERROR_EVENT,
    ("http3", "raw_bytes_sent"): Obj({"length": INT}),
    ("transport", "stream_data_sent"): STREAM_DATA,
    ("transport", "stream_data_received"): STREAM_DATA,
    ("transport", "packet_sent"): Obj(
        {
            "packet_type": STR,
            "packet_number": INT,
            "length": INT,
            "frames": ListOf(STR),
            "close": Obj({"error_space": STR, "error_code": INT, "reason": STR}),
        }
    ),
    ("transport", "handshake_completed"): Obj(
        {
            "alpn": STR_OR_NULL,
            "tls_version": STR,
            "cipher_suite": STR_OR_NULL,
            "quic_version": STR_OR_NULL,
            "early_data_accepted": BOOL,
            "session_resumed": BOOL,
        }
    ),
    ("transport", "send_limit_raised"): Obj(
        {
            "frame": STR,
            "stream_id": INT_OR_NULL,
            "previous": INT,
            "maximum": INT,
            "written": INT,
        }
    ),
    ("transport", "datagram_sent"): Obj({"length": INT, "first_packet_header": STR, "lost": BOOL}),
    ("transport", "connection_failed"): Obj({"reason": STR, "cause": STR}),
    ("transport", "connection_started"): Obj({"title": STR}),
}
DATA_SHAPES[("transport", "packet_received")] = DATA_SHAPES[("transport", "packet_sent")]
DATA_SHAPES[("transport", "packet_dropped")] = DATA_SHAPES[("transport", "packet_sent")]


def data_problem(category: str, name: str, data: dict[str, Any]) -> str | None:
    """Why an event's ``data`` cannot be used (the key and the rule), or None if it can."""
    try:
        check_depth(data)
    except UnusableJSON as error:
        return f"data: {error}"
    shape = DATA_SHAPES.get((category, name))
    found = None if shape is None else _problem(data, shape)
    if found is None:
        return None
    path, rule = found
    return f"data {path.removeprefix('.')!r} {rule}"


def _problem(value: Any, shape: Shape) -> tuple[str, str] | None:
    """Where inside ``value`` it breaks ``shape`` (a path like ``.settings[0].id``) and how.

    The path is put together only on the way back from a problem, since nearly every
    event has none.
    """
    if type(shape) is Scalar:
        return None if shape.accepts(value) else ("", _wrong(value, shape.words))
    if type(shape) is ListOf:
        if type(value) is not list:
            return "", _wrong(value, shape.words)
        for number, item in enumerate(value):
            found = _problem(item, shape.item)
            if found is not None:
                return f"[{number}]{found[0]}", found[1]
        return None
    assert type(shape) is Obj
    if type(value) is not dict:
        return "", _wrong(value, shape.words)
    for key in shape.required:
        if key not in value:
            return "", f"has no {key!r}"
    for key, inner in shape.keys.items():
        if key in value:
            item = value[key]
            if type(inner) is Scalar and type(item) in inner.types:
                continue  # the common case, without a call: a scalar of the right type
            found = _problem(item, inner)
            if found is not None:
                return f".{key}{found[0]}", found[1]
    return None


def _wrong(value: Any, words: str) -> str:
    return f"is {json_kind(value)}, not {words}"
