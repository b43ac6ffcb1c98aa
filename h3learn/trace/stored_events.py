"""Stored events: the strict checks of every event and field span read from a trace file.

A trace file is untrusted input (the web UI shows traces users upload), so every stored
event is checked, key by key and type by type, before an `Event` is built from it
(docs/events.md, "Trace files", lists the keys): ``seq`` counts 0, 1, 2, ... in order,
``raw`` is hex, and every field span (its ``offset`` and ``length``, and ``bit_offset`` and
``bit_length`` if it labels bits) lies inside ``raw``. A check that fails raises
`TraceFormatError`, whose message says where and which rule:
``TraceFormatError("trace.json: event 12: 'raw' is not hex")``. The file forms that hold
these events, native traces and journals, are read and written in store.py.
"""

from __future__ import annotations

import math
import re
from typing import Any

from h3learn.events import CATEGORIES, ENDPOINTS, Event, FieldSpan
from h3learn.trace.event_data import data_problem
from h3learn.trace.json_text import UnusableJSON, check_depth, is_nested, json_kind

#: Keys `Event.to_json` writes, every one of which a stored event must have.
EVENT_KEYS = frozenset(
    {"seq", "time", "endpoint", "category", "name", "stream_id", "data", "raw", "fields"}
    | {"rfc", "summary"}
)
SPAN_KEYS = frozenset({"name", "offset", "length", "value", "explain", "rfc"})
SPAN_BIT_KEYS = frozenset({"bit_offset", "bit_length"})
SPAN_KEYS_WITH_BITS = SPAN_KEYS | SPAN_BIT_KEYS

_HEX = re.compile(r"(?:[0-9a-fA-F]{2})*")

#: An entry of an event's ``rfc``: the RFC's number, then its section or appendix, as in
#: ``9204#4.5.1`` or ``9114#A.2`` (docs/events.md).
RFC_SECTION = re.compile(r"[0-9]{3,5}#(?:[0-9]+|[A-Z])(?:\.[0-9]+)*")

#: QUIC stream IDs are 62-bit integers (RFC 9000 §2.1).
STREAM_ID_LIMIT = 2**62

#: The largest ``time`` (ms) a reader accepts: about 285,000 years, and exact as a float.
MAX_TIME = 2**53


class TraceFormatError(ValueError):
    """A trace that is not what it claims to be; the message says where and which rule.

    Every reader of a trace file raises it: store.py (native traces and journals), and the
    qlog imports for the files they read.
    """


def parse_event(obj: Any, where: str, expected_seq: int) -> Event:
    """Check one stored event (``where`` prefixes every message) and build it."""
    raw = _check_event_start(obj, where, expected_seq)
    fields = parse_spans(obj["fields"], len(raw), where)
    _check_event_end(obj, where)
    return _event(obj, raw, fields)


def parse_event_deferring_spans(obj: Any, where: str, expected_seq: int) -> Event:
    """`parse_event` except the field spans: the event comes back with ``fields=()``.

    The spans are most of a trace's size, and a viewer needs only the ones of the step it
    shows; it checks and builds them with `parse_spans(obj["fields"], len(event.raw), where)`
    when it needs them. Everything else is checked here exactly as `parse_event` does.
    """
    raw = _check_event_start(obj, where, expected_seq)
    _check_event_end(obj, where)
    return _event(obj, raw, ())


def parse_spans(spans: Any, raw_length: int, where: str) -> tuple[FieldSpan, ...]:
    """Check an event's stored ``fields`` (a list, each span inside ``raw``) and build them."""
    if type(spans) is not list:
        raise TraceFormatError(f"{where}: 'fields' is {json_kind(spans)}, not a list")
    built = []
    for number, span in enumerate(spans):
        _check_span(span, raw_length, f"{where}: field {number}")
        built.append(FieldSpan.from_json(span))
    return tuple(built)


def _check_event_start(obj: Any, where: str, expected_seq: int) -> bytes:
    """The checks of an event up to its raw bytes (returned) and the type of ``fields``.

    The type tests are written ``type(x) is int``: JSON gives exactly int, float, str, list
    and dict, and this runs for every event of a trace, so it avoids isinstance's generality.
    """
    if type(obj) is not dict:
        raise TraceFormatError(f"{where}: is {json_kind(obj)}, not an object")
    if obj.keys() != EVENT_KEYS:
        check_keys(obj, EVENT_KEYS, EVENT_KEYS, where)
    seq = obj["seq"]
    if type(seq) is not int:
        raise TraceFormatError(f"{where}: 'seq' is {json_kind(seq)}, not an integer")
    if seq != expected_seq:
        raise TraceFormatError(
            f"{where}: 'seq' is {seq}, expected {expected_seq} (seq counts 0, 1, 2, ... in order)"
        )
    time = obj["time"]
    if not (type(time) is int or (type(time) is float and math.isfinite(time))):
        raise TraceFormatError(f"{where}: 'time' is {json_kind(time)}, not a finite number")
    if not -MAX_TIME <= time <= MAX_TIME:
        raise TraceFormatError(f"{where}: 'time' {time} is not a usable time (beyond ±2^53 ms)")
    if obj["endpoint"] not in ENDPOINTS:
        raise TraceFormatError(
            f"{where}: 'endpoint' is {shown(obj['endpoint'])}, not one of {ENDPOINTS}"
        )
    category, name = obj["category"], obj["name"]
    if category not in CATEGORIES:
        raise TraceFormatError(
            f"{where}: 'category' is {shown(category)}, not one of {', '.join(CATEGORIES)}"
        )
    if type(name) is not str or not name:
        raise TraceFormatError(f"{where}: 'name' is {json_kind(name)}, not a name")
    stream_id = obj["stream_id"]
    if stream_id is not None and not (type(stream_id) is int and 0 <= stream_id < STREAM_ID_LIMIT):
        raise TraceFormatError(
            f"{where}: 'stream_id' is {shown(stream_id)}, not a stream ID (0 to 2^62 - 1,"
            " RFC 9000 §2.1) or null"
        )
    data = obj["data"]
    if type(data) is not dict:
        raise TraceFormatError(f"{where}: 'data' is {json_kind(data)}, not an object")
    problem = data_problem(category, name, data)
    if problem is not None:
        raise TraceFormatError(f"{where} ({category} {name}): {problem}")
    raw = obj["raw"]
    if type(raw) is not str or (raw and not _HEX.fullmatch(raw)):
        raise TraceFormatError(f"{where}: 'raw' is not hex")
    if type(obj["fields"]) is not list:
        raise TraceFormatError(f"{where}: 'fields' is {json_kind(obj['fields'])}, not a list")
    return bytes.fromhex(raw)


def _check_event_end(obj: dict[str, Any], where: str) -> None:
    rfc = obj["rfc"]
    if type(rfc) is not list or not all(type(section) is str for section in rfc):
        raise TraceFormatError(f"{where}: 'rfc' is not a list of sections")
    for section in rfc:
        if not RFC_SECTION.fullmatch(section):
            raise TraceFormatError(
                f"{where}: 'rfc' entry {shown(section)} is not a section written like"
                " '9114#7.2.4' (RFC number, '#', section or appendix)"
            )
    if type(obj["summary"]) is not str:
        raise TraceFormatError(f"{where}: 'summary' is {json_kind(obj['summary'])}, not a string")


def _event(obj: dict[str, Any], raw: bytes, fields: tuple[FieldSpan, ...]) -> Event:
    """The `Event` of a checked object (what ``Event.from_json`` builds, without re-reading)."""
    return Event(
        seq=obj["seq"],
        time=obj["time"],
        endpoint=obj["endpoint"],
        category=obj["category"],
        name=obj["name"],
        stream_id=obj["stream_id"],
        data=obj["data"],
        raw=raw,
        fields=fields,
        rfc=tuple(obj["rfc"]),
        summary=obj["summary"],
    )


def _check_span(span: Any, raw_length: int, where: str) -> None:
    if type(span) is not dict:
        raise TraceFormatError(f"{where}: is {json_kind(span)}, not an object")
    keys = span.keys()
    if keys != SPAN_KEYS and keys != SPAN_KEYS_WITH_BITS:
        check_keys(span, SPAN_KEYS, SPAN_KEYS_WITH_BITS, where)
    name, offset, length = span["name"], span["offset"], span["length"]
    if type(name) is not str:
        raise TraceFormatError(f"{where}: 'name' is {json_kind(name)}, not a string")
    if not (type(offset) is int and offset >= 0 and type(length) is int and length >= 1):
        where = f"{where} ({name!r})"
        raise TraceFormatError(f"{where}: offset and length must be integers, length >= 1")
    if offset + length > raw_length:
        where = f"{where} ({name!r})"
        raise TraceFormatError(
            f"{where}: bytes {offset}..{offset + length - 1} lie outside raw ({raw_length} bytes)"
        )
    if type(span["explain"]) is not str or type(span["rfc"]) is not str:
        where = f"{where} ({name!r})"
        for key in ("explain", "rfc"):
            if not isinstance(span[key], str):
                raise TraceFormatError(f"{where}: '{key}' is {json_kind(span[key])}, not a string")
    if is_nested(span["value"]):
        try:
            check_depth(span["value"])
        except UnusableJSON as error:
            raise TraceFormatError(f"{where} ({name!r}): 'value': {error}") from None
    if "bit_offset" in span or "bit_length" in span:
        where = f"{where} ({name!r})"
        if "bit_offset" not in span or "bit_length" not in span:
            raise TraceFormatError(f"{where}: 'bit_offset' and 'bit_length' come together")
        bit_offset, bit_length = span["bit_offset"], span["bit_length"]
        if not (type(bit_offset) is int and type(bit_length) is int) or not (
            0 <= bit_offset <= 7 and 1 <= bit_length <= 8 - bit_offset
        ):
            raise TraceFormatError(f"{where}: bits {bit_offset}+{bit_length} are not inside a byte")


def check_keys(
    obj: dict[str, Any], required: frozenset[str], allowed: frozenset[str], where: str
) -> None:
    """Every ``required`` key is in ``obj``, and no key outside ``allowed``."""
    missing = sorted(required - obj.keys())
    if missing:
        raise TraceFormatError(f"{where}: {', '.join(repr(key) for key in missing)} missing")
    unknown = sorted(obj.keys() - allowed)
    if unknown:
        raise TraceFormatError(f"{where}: unknown {', '.join(repr(key) for key in unknown)}")


def shown(value: Any) -> str:
    """A value for an error message: short text and numbers as they are, else their kind.

    A hostile file's values may be megabytes long or nested a thousand deep; an error
    message quotes neither.
    """
    if (type(value) is str and len(value) <= 40) or (type(value) is int and abs(value) < 2**100):
        return repr(value)
    return json_kind(value) if type(value) is not str else "a long string"
