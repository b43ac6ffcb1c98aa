"""What the browser is sent about an event: summaries for the diagram, and one step in full.

The page renders these answers as they are (no protocol logic in JavaScript), so every
judgement is made here, from the recorded events alone:

- which way a step goes on the sequence diagram: ``sent`` (a unit written to the wire:
  ``frame_created``, ``instruction_created``, ``raw_bytes_sent``, the type of a stream this
  endpoint opened; or what QUIC carried out: ``datagram_sent``, ``stream_data_sent``),
  ``received`` (the peer's unit read: ``frame_parsed``, ``instruction_parsed``, a peer's
  stream type; QUIC's ``stream_data_received``), or ``local`` (a change inside one
  endpoint: a table update, a field section encoded or decoded, a stream state);
- why a step shows no bytes (``bytes_note``): a change inside one endpoint has none,
  QUIC's own steps record only sizes, because the datagrams are encrypted (RFC 9001 §5)
  and the HTTP/3 and QPACK bytes they carry are steps of their own, a frame sent or
  received in a trace imported from qlog may come without its bytes, and a lesson's
  deliberate end of a stream sends only QUIC's FIN;
- the type of the stream it belongs to (``control``, ``request``, ``qpack_encode``, ...),
  which colours it, from the trace's ``stream_type_set`` events (RFC 9114 §6.2) or else
  from the stream ID (RFC 9000 §2.1: client- and server-initiated bidirectional streams
  are request streams);
- the byte view: each byte of ``raw`` as hex, ASCII and bits, with the field spans
  (docs/events.md, "Field spans") that cover it, and for prefix bytes which field owns
  each bit;
- which field spans are Huffman-coded strings (their value is already the decoded text),
  and for a field section the Required Insert Count / Base / absolute index arithmetic
  written out (prefix_math.py);
- the RFC sections as links to the official text.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from h3learn.curriculum.rfc_toc import TITLES, label, url
from h3learn.events import Event, FieldSpan
from h3learn.web.prefix_math import section_arithmetic

#: RFC 9000 §2.1: bit 0x02 of a stream ID marks a unidirectional stream.
UNIDIRECTIONAL_BIT = 0x02

SENT_NAMES = frozenset(
    {"frame_created", "instruction_created", "raw_bytes_sent", "datagram_sent", "stream_data_sent"}
)
RECEIVED_NAMES = frozenset({"frame_parsed", "instruction_parsed", "stream_data_received"})

#: What the byte view says of a step without bytes (see the module docstring).
NO_BYTES_LOCAL = "No bytes on the wire at this step: it is a change inside one endpoint."
NO_BYTES_IMPORTED = (
    "This trace holds no bytes for this step: it was imported from qlog, and the file gave"
    " none for it (the qlog 0.3 reader keeps none at all)."
)
NO_BYTES_FIN = (
    "No bytes at this step: only the end of the stream was sent, QUIC's FIN flag (RFC 9000"
    " §19.8), which carries no HTTP/3 bytes."
)
NO_BYTES_NONE = "No bytes were recorded for this step."
NO_BYTES_QUIC = (
    "QUIC's own step: {length} bytes, recorded by their size only. On the wire they travel"
    " encrypted in QUIC packets (RFC 9001 §5); the HTTP/3 and QPACK bytes inside are shown"
    " at their own steps."
)

#: How many bits a byte has; a prefix byte's fields are drawn bit by bit.
BITS_PER_BYTE = 8


def rfc_link(section: str) -> dict[str, str]:
    """``"9114#7.2.4"`` -> label, title and the official URL of that section."""
    return {
        "section": section,
        "label": label(section),
        "title": TITLES.get(section, ""),
        "url": url(section),
    }


def stream_types(events: Sequence[Event]) -> dict[int, str]:
    """Stream ID -> its type, as the first ``stream_type_set`` about it says."""
    types: dict[int, str] = {}
    for event in events:
        if event.name == "stream_type_set" and event.stream_id is not None:
            stream_type = event.data.get("stream_type")
            if isinstance(stream_type, str):
                types.setdefault(event.stream_id, stream_type)
    return types


def stream_type_of(stream_id: int | None, types: dict[int, str]) -> str:
    if stream_id is None:
        return "connection"
    if stream_id in types:
        return types[stream_id]
    return "unknown" if stream_id & UNIDIRECTIONAL_BIT else "request"


def direction_of(event: Event) -> str:
    """``sent``, ``received`` or ``local``: see the module docstring."""
    if event.name in SENT_NAMES:
        return "sent"
    if event.name in RECEIVED_NAMES:
        return "received"
    if event.name == "stream_type_set" and event.raw:
        # Who opened the stream is its data's owner; a file without one draws no arrow.
        owner = event.data.get("owner")
        return "sent" if owner == "local" else "received" if owner == "remote" else "local"
    return "local"


def _no_bytes_note(event: Event, direction: str, imported: bool) -> str:
    """Why a step shows no bytes (see the module docstring)."""
    if direction == "local":
        return NO_BYTES_LOCAL
    if event.category == "transport":
        return NO_BYTES_QUIC.format(length=event.data.get("length", "its"))
    if imported:
        return NO_BYTES_IMPORTED
    if event.name == "raw_bytes_sent":
        return NO_BYTES_FIN  # a lesson's deliberate end of a stream, with nothing before it
    return NO_BYTES_NONE


def summary_of(event: Event, types: dict[int, str]) -> dict[str, Any]:
    """One row of the sequence diagram."""
    return {
        "seq": event.seq,
        "time": event.time,
        "endpoint": event.endpoint,
        "category": event.category,
        "name": event.name,
        "stream_id": event.stream_id,
        "stream_type": stream_type_of(event.stream_id, types),
        "direction": direction_of(event),
        "summary": event.summary,
    }


def search_text(event: Event) -> str:
    """What a search in summaries and headers looks through, lower-cased."""
    parts = [event.summary, event.name]
    headers = event.data.get("headers")
    if isinstance(headers, list):
        for header in headers:
            if isinstance(header, dict):
                parts.append(f"{header.get('name', '')}: {header.get('value', '')}")
    return "\n".join(parts).lower()


def value_text(value: Any) -> str:
    """A field's decoded value as the page prints it."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _field_json(index: int, span: FieldSpan, raw: bytes) -> dict[str, Any]:
    out = span.to_json()
    out["index"] = index
    out["value_text"] = value_text(span.value)
    out["rfc_link"] = rfc_link(span.rfc) if span.rfc else None
    last = span.offset + span.length - 1
    where = f"byte {span.offset}" if span.length == 1 else f"bytes {span.offset}–{last}"
    if span.bit_offset is not None and span.bit_length is not None:
        first_bit = span.bit_offset
        last_bit = span.bit_offset + span.bit_length - 1
        bits = f"{raw[span.offset]:08b}"[first_bit : last_bit + 1] if span.offset < len(raw) else ""
        out["bits"] = bits
        bit_range = f"bit {first_bit}" if first_bit == last_bit else f"bits {first_bit}–{last_bit}"
        out["where"] = f"{bit_range} of {where}"
    else:
        out["bits"] = None
        out["where"] = where
    return out


def byte_rows(raw: bytes, fields: Sequence[FieldSpan]) -> list[dict[str, Any]]:
    """Each byte with its hex, ASCII, bits, covering fields and (prefix bytes) bit owners."""
    rows: list[dict[str, Any]] = []
    for offset, byte in enumerate(raw):
        covering = [i for i, s in enumerate(fields) if s.offset <= offset < s.offset + s.length]
        bit_owner: list[int | None] | None = None
        split = [
            i for i in covering if fields[i].offset == offset and fields[i].bit_offset is not None
        ]
        # A byte is drawn bit by bit when fields share it (a whole-byte span needs no split).
        if any((fields[i].bit_length or BITS_PER_BYTE) < BITS_PER_BYTE for i in split):
            bit_owner = [None] * BITS_PER_BYTE
            for i in split:
                start = fields[i].bit_offset or 0
                for bit in range(start, start + (fields[i].bit_length or 0)):
                    if 0 <= bit < BITS_PER_BYTE:
                        bit_owner[bit] = i
        rows.append(
            {
                "offset": offset,
                "hex": f"{byte:02x}",
                "ascii": chr(byte) if 0x20 <= byte < 0x7F else ".",
                "bits": f"{byte:08b}",
                "fields": covering,
                "bit_fields": bit_owner,
            }
        )
    return rows


#: RFC 9204 §4.1.2 (RFC 7541 §5.2): a string literal is recorded as three spans, "<name>: H"
#: (the Huffman flag), "<name>: length" and "<name>" (the octets, with the decoded text as
#: their value); see h3learn/wire/spans.py.
HUFFMAN_FLAG_SUFFIX = ": H"


def huffman_notes(fields: Sequence[FieldSpan]) -> list[str | None]:
    """For each span: a note if it is a Huffman-coded string literal's octets, else None."""
    flags: dict[str, bool] = {}
    notes: list[str | None] = []
    for span in fields:
        notes.append(None)
        if span.name.endswith(HUFFMAN_FLAG_SUFFIX) and isinstance(span.value, bool):
            flags[span.name.removesuffix(HUFFMAN_FLAG_SUFFIX)] = span.value
        elif flags.pop(span.name, False):
            text = value_text(span.value)
            notes[-1] = (
                f"Huffman-coded (RFC 7541 Appendix B): these {span.length} bytes decode to "
                f"the {len(text)} characters shown."
            )
    return notes


def imported_from_qlog(meta: dict[str, Any]) -> bool:
    """Was the trace read from a qlog file? Its importers name the form in ``meta["source"]``
    ("aioquic qlog 0.3", "h3learn qlog 0.3", "qlog (current draft)": docs/events.md)."""
    source = meta.get("source")
    return isinstance(source, str) and " qlog " in f" {source} "


def step_event(event: Event, types: dict[int, str], *, imported: bool = False) -> dict[str, Any]:
    """Everything the page shows about one event; ``imported``: the trace came from qlog."""
    out = summary_of(event, types)
    out["data"] = event.data
    out["raw"] = event.raw.hex()
    out["length"] = len(event.raw)
    if not event.raw:
        out["bytes_note"] = _no_bytes_note(event, out["direction"], imported)
    out["fields"] = [_field_json(i, span, event.raw) for i, span in enumerate(event.fields)]
    for field, note in zip(out["fields"], huffman_notes(event.fields), strict=True):
        field["huffman"] = note is not None
        field["note"] = note
    calculation = section_arithmetic(event.name, event.data)
    if calculation is not None:
        for line in calculation["lines"]:
            line["rfc"] = rfc_link(line["rfc"])
    out["calculation"] = calculation
    out["bytes"] = byte_rows(event.raw, event.fields)
    sections = list(event.rfc)
    for span in event.fields:
        if span.rfc and span.rfc not in sections:
            sections.append(span.rfc)
    out["rfc"] = [rfc_link(section) for section in event.rfc]
    out["field_rfc"] = [rfc_link(section) for section in sections if section not in event.rfc]
    return out
