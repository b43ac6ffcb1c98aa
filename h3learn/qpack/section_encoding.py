"""RFC 9204 §4.5: writing an encoded field section once every reference is planned.

The encoder (encoder.py) first decides, line by line, what each field line will refer to:
a `FieldLinePlan`. Only when every reference is known can the Required Insert Count be
computed (one more than the largest absolute index referenced, §4.5.1.1) and the Base be
chosen (§4.5.1.2), and only then can the relative and post-base indexes be written:

    absolute index     0   1   2   3   4   5
    Base = 3                       |
    relative index     2   1   0               entries before the Base, counted down
    post-base index                0   1   2   entries from the Base on, counted up

This module holds that second half: the choice of the Base, the five field line
representations (§4.5.2 - §4.5.6) made from the plans, and the section's event.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from h3learn.events import Recorder
from h3learn.qpack.field_lines import (
    FieldLine,
    FieldSectionPrefix,
    IndexedFieldLine,
    IndexedFieldLineWithPostBaseIndex,
    LiteralFieldLineWithLiteralName,
    LiteralFieldLineWithNameReference,
    LiteralFieldLineWithPostBaseNameReference,
    delta_from_base,
    encode_required_insert_count,
    max_entries,
)
from h3learn.qpack.recording import field_line_json, record_field_section
from h3learn.wire.prefixed_int import prefixed_int_length
from h3learn.wire.spans import SpanWriter

Header = tuple[bytes, bytes]


@dataclass(frozen=True, slots=True)
class FieldLinePlan:
    """One field line before the Base is known.

    ``kind`` is "indexed" (the whole field is a table entry) or "literal" (the value is
    sent). ``static_index`` / ``absolute_index`` say where the entry or the name comes from;
    a literal with neither sends its name too.
    """

    kind: str
    name: bytes
    value: bytes
    static_index: int | None = None
    absolute_index: int | None = None
    never_indexed: bool = False


def choose_base(plans: list[FieldLinePlan], required_insert_count: int) -> int:
    """RFC 9204 §4.5.1.2: the Base that makes the section shortest.

    A reference to entry ``a`` gets cheaper as the Base approaches it from either side
    (relative indexes count down to it, post-base indexes up to it), so the best Base lies
    at or just after some referenced entry, or at the Required Insert Count (where Delta
    Base is 0). Those few candidates are all tried.
    """
    if not required_insert_count:
        return 0
    candidates = {required_insert_count}
    for plan in plans:
        if plan.absolute_index is not None:
            candidates.update((plan.absolute_index, plan.absolute_index + 1))
    return min(
        sorted(candidates, reverse=True),
        key=lambda base: section_cost(plans, required_insert_count, base),
    )


def section_cost(plans: list[FieldLinePlan], required_insert_count: int, base: int) -> int:
    """Bytes the Base-dependent parts take: Delta Base and the dynamic indexes."""
    _, delta_base = delta_from_base(required_insert_count, base)
    cost = prefixed_int_length(delta_base, 7)
    for plan in plans:
        absolute = plan.absolute_index
        if absolute is None:
            continue
        post_base = absolute >= base
        index = absolute - base if post_base else base - 1 - absolute
        if plan.kind == "indexed":
            cost += prefixed_int_length(index, 4 if post_base else 6)
        else:
            cost += prefixed_int_length(index, 3 if post_base else 4)
    return cost


def field_line(plan: FieldLinePlan, base: int, huffman: bool | None) -> FieldLine:
    """Turn a plan into one of the five representations, now that the Base is known."""
    h = huffman
    absolute = plan.absolute_index
    if plan.kind == "indexed":
        if plan.static_index is not None:
            return IndexedFieldLine(True, plan.static_index)
        assert absolute is not None
        if absolute >= base:
            return IndexedFieldLineWithPostBaseIndex(absolute - base)
        return IndexedFieldLine(False, base - 1 - absolute)
    n = plan.never_indexed
    if plan.static_index is not None:
        return LiteralFieldLineWithNameReference(n, True, plan.static_index, plan.value, h)
    if absolute is None:
        return LiteralFieldLineWithLiteralName(n, plan.name, plan.value, h, h)
    if absolute >= base:
        return LiteralFieldLineWithPostBaseNameReference(n, absolute - base, plan.value, h)
    return LiteralFieldLineWithNameReference(n, False, base - 1 - absolute, plan.value, h)


def serialize_section(
    stream_id: int,
    headers: Sequence[Header],
    plans: list[FieldLinePlan],
    required_insert_count: int,
    base: int,
    *,
    max_table_capacity: int,
    huffman: bool | None,
    recorder: Recorder,
    note: str = "",
) -> bytes:
    """The encoded field section (RFC 9204 §4.5): the prefix, then each planned field line.

    ``huffman`` is the choice for every string: None lets the writer pick the shorter form
    (RFC 9204 §4.1.2), False never Huffman-codes. ``note`` ends the recorded summary.
    """
    record = recorder.enabled
    writer = SpanWriter(record=record)
    sign, delta_base = delta_from_base(required_insert_count, base)
    encoded_insert_count = encode_required_insert_count(required_insert_count, max_table_capacity)
    FieldSectionPrefix(encoded_insert_count, sign, delta_base).serialize(writer)
    lines = [field_line(plan, base, huffman) for plan in plans]
    lengths = []
    for line in lines:
        before = len(writer.buffer)
        line.serialize(writer)
        lengths.append(len(writer.buffer) - before)
    if record:
        _record_section(
            recorder,
            stream_id,
            headers,
            plans,
            lines,
            lengths,
            writer,
            {
                "required_insert_count": required_insert_count,
                "base": base,
                "encoded_insert_count": encoded_insert_count,
                "sign": sign,
                "delta_base": delta_base,
                "max_entries": max_entries(max_table_capacity),
            },
            note,
        )
    return writer.unit()


def _record_section(
    recorder: Recorder,
    stream_id: int,
    headers: Sequence[Header],
    plans: list[FieldLinePlan],
    lines: list[FieldLine],
    lengths: list[int],
    writer: SpanWriter,
    prefix: dict[str, Any],
    note: str,
) -> None:
    field_lines = [
        field_line_json(line, plan.name, plan.value, plan.absolute_index, plan.static_index, length)
        for plan, line, length in zip(plans, lines, lengths, strict=True)
    ]
    record_field_section(
        recorder,
        "headers_encoded",
        stream_id,
        headers,
        prefix,
        field_lines,
        writer.unit(),
        writer.field_spans(),
        note,
    )
