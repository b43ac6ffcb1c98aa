"""Comparing peers: each connection's SETTINGS and how its peer's QPACK encoder worked.

Implementations differ in how much they lean on the dynamic table (RFC 9204 §3.2):
Chromium and nghttp3 insert entries from their first request, aioquic (and niquests,
built on a fork of it) only from its second, and the project's own encoder follows its
own policy. `qpack_profile` makes that visible from a capture's events, for the
field sections *the recorded endpoint received*, so for a capture of `h3learn serve` it
describes the client's encoder (the browser's), and for a fetch by the project's client
the server's:

- ``settings``: the SETTINGS each side announced (RFC 9114 §7.2.4; RFC 9204 §5 for the
  two QPACK ones);
- ``encoder_stream``: the peer's encoder instructions (RFC 9204 §4.3) as the decoder parsed
  them: how many, their bytes, and how many entries they inserted;
- ``field_sections``: every field section decoded (RFC 9204 §4.5): how many, their encoded
  bytes, their *plain size* (the octets of every name and value, what the fields would
  take uncompressed; RFC 9114 §4.2.2 adds 32 per line to that for its size limit), and how
  each field line was represented: a reference into the dynamic table, into the static
  table, or a literal name (RFC 9204 §4.5.2-§4.5.6);
- ``decoder_stream``: what the recorded endpoint's own decoder wrote back to that encoder
  (RFC 9204 §4.4: Section Acknowledgments, Stream Cancellations, Insert Count Increments),
  the other half of the cost of the dynamic table;
- ratios: encoded size / plain size, once for the field sections alone and once with the
  encoder stream added (inserts are paid for once, then referenced);
- ``first_dynamic_section``: the 1-based number of the first field section that refers
  to the dynamic table (None if none did), which is where "from the first request" and
  "only from the second" show.

`http3_bytes_sent` adds up every byte an endpoint wrote on its streams (frames, QPACK
instructions, stream types), for comparing whole exchanges.

It reads events only (docs/events.md), so it works on live captures, saved traces and the
examples alike.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from h3learn.events import Event

#: RFC 9204 §4.3: the instructions an encoder sends on its encoder stream.
ENCODER_INSTRUCTIONS = frozenset(
    {
        "set_dynamic_table_capacity",
        "insert_with_name_reference",
        "insert_without_name_reference",
        "duplicate",
    }
)
INSERTS = ENCODER_INSTRUCTIONS - {"set_dynamic_table_capacity"}
#: RFC 9204 §4.4: the instructions a decoder sends on its decoder stream.
DECODER_INSTRUCTIONS = frozenset(
    {"section_acknowledgement", "stream_cancellation", "insert_count_increment"}
)

#: The events that record bytes an endpoint writes on a stream (docs/events.md): whole
#: frames, QPACK instructions, a unidirectional stream's type (``stream_type_set`` of a
#: stream it opened) and bytes sent deliberately by a lesson.
SENT_UNITS = frozenset({"frame_created", "instruction_created", "raw_bytes_sent"})

#: How a field line's ``table`` is counted (docs/events.md, ``headers_encoded``).
LINE_KINDS = ("dynamic", "static", "literal")


def recorded_endpoint(events: Iterable[Event]) -> str | None:
    """The endpoint whose view a one-sided capture holds (the first event's), or None."""
    for event in events:
        return event.endpoint
    return None


def _settings(event: Event) -> list[dict[str, Any]]:
    return [
        {"name": str(item.get("name")), "value": item.get("value")}
        for item in event.data.get("settings", [])
        if isinstance(item, dict)
    ]


def _octets(text: Any) -> int:
    return len(str(text if text is not None else "").encode())


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None


def qpack_profile(events: Iterable[Event], endpoint: str | None = None) -> dict[str, Any]:
    """The profile of what ``endpoint`` (default: the first event's) received; see above."""
    events = list(events)
    if endpoint is None:
        endpoint = recorded_endpoint(events)
    local_settings: list[dict[str, Any]] | None = None
    peer_settings: list[dict[str, Any]] | None = None
    instructions = instruction_bytes = inserted = 0
    acknowledgments = acknowledgment_bytes = 0
    sections = encoded = plain = 0
    lines = dict.fromkeys(LINE_KINDS, 0)
    indexed = 0
    first_dynamic: int | None = None
    first_required_insert_count: int | None = None
    blocked = 0
    for event in events:
        if event.endpoint != endpoint:
            continue
        name, data = event.name, event.data
        if name == "parameters_set":
            if data.get("owner") == "local" and local_settings is None:
                local_settings = _settings(event)
            elif data.get("owner") == "remote" and peer_settings is None:
                peer_settings = _settings(event)
        elif name == "instruction_parsed" and data.get("instruction_type") in ENCODER_INSTRUCTIONS:
            instructions += 1
            instruction_bytes += len(event.raw)
            if data.get("instruction_type") in INSERTS:
                inserted += 1
        elif name == "instruction_created" and data.get("instruction_type") in (
            DECODER_INSTRUCTIONS
        ):
            acknowledgments += 1
            acknowledgment_bytes += len(event.raw)
        elif name == "headers_decoded":
            sections += 1
            encoded += len(event.raw)
            plain += sum(
                _octets(header.get("name")) + _octets(header.get("value"))
                for header in data.get("headers", [])
                if isinstance(header, dict)
            )
            dynamic_here = False
            for line in data.get("field_lines", []):
                kind = line.get("table") if isinstance(line, dict) else None
                if kind in lines:
                    lines[kind] += 1
                if kind == "dynamic":
                    dynamic_here = True
                if isinstance(line, dict) and line.get("type") == "indexed_field_line":
                    indexed += 1
            if dynamic_here and first_dynamic is None:
                first_dynamic = sections
            if first_required_insert_count is None:
                prefix = data.get("prefix")
                if isinstance(prefix, dict):
                    first_required_insert_count = prefix.get("required_insert_count")
        elif name == "stream_state_updated" and data.get("state") == "blocked":
            blocked += event.category == "qpack"
    return {
        "endpoint": endpoint,
        "settings": {"local": local_settings, "peer": peer_settings},
        "encoder_stream": {
            "instructions": instructions,
            "bytes": instruction_bytes,
            "inserts": inserted,
        },
        "decoder_stream": {"instructions": acknowledgments, "bytes": acknowledgment_bytes},
        "field_sections": {
            "count": sections,
            "encoded_bytes": encoded,
            "plain_bytes": plain,
            "field_lines": lines,
            "indexed_lines": indexed,
            "blocked": blocked,
        },
        "ratio": _ratio(encoded, plain),
        "ratio_with_encoder_stream": _ratio(encoded + instruction_bytes, plain),
        "first_dynamic_section": first_dynamic,
        "first_section_required_insert_count": first_required_insert_count,
    }


def setting_names(profiles: Iterable[dict[str, Any]]) -> list[str]:
    """Every SETTINGS name the peers of these profiles announced, in first-seen order."""
    names: list[str] = []
    for profile in profiles:
        for item in profile["settings"]["peer"] or []:
            if item["name"] not in names:
                names.append(item["name"])
    return names


def http3_bytes_sent(events: Iterable[Event], endpoint: str) -> int:
    """Every byte ``endpoint`` wrote on its QUIC streams, from its events alone.

    Frames (type, length, payload: RFC 9114 §7.1), QPACK encoder and decoder instructions
    (RFC 9204 §4.3, §4.4) and the stream type (and push ID) opening each unidirectional
    stream it opened (RFC 9114 §6.2). Over QUIC this is what its ``stream_data_sent``
    events add up to.
    """
    total = 0
    for event in events:
        if event.endpoint != endpoint:
            continue
        if event.name in SENT_UNITS or (
            event.name == "stream_type_set" and event.data.get("owner") == "local"
        ):
            total += len(event.raw)
    return total
