"""RFC 9204 §4.3 under §2.1.1 and §2.1.3: the encoder's inserts, written only when safe.

When the strategy (encoder.py) decides to insert a field or to Duplicate an entry, the
instruction still has to pass two tests before it goes on the encoder stream:

- room (§2.1.1): the new entry must fit, evicting only *evictable* entries, those whose
  insertion the decoder has acknowledged and that no unacknowledged section refers to;
- flow control (§2.1.3): QUIC must let the encoder stream carry the whole instruction now,
  or the decoder could wait for it while the field section that needs it is delivered.

An instruction that fails either is not made, and the encoder records why
(``insert_skipped``); the field then goes as a literal. The first insert is preceded by
Set Dynamic Table Capacity (§4.3.1). Each instruction is recorded with its bytes labelled,
and the table records its own inserts and evictions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from h3learn.qpack.dynamic_table import DynamicEntry, entry_size
from h3learn.qpack.encoder_instructions import (
    Duplicate,
    EncoderInstruction,
    InsertWithLiteralName,
    InsertWithNameReference,
    SetDynamicTableCapacity,
)
from h3learn.qpack.recording import record_instruction
from h3learn.qpack.static_table import STATIC_INDEX_BY_NAME
from h3learn.wire.spans import SpanWriter, display

if TYPE_CHECKING:
    from h3learn.qpack.encoder import Encoder


def room_problem(encoder: Encoder, size: int, referenced: set[int]) -> str | None:
    """RFC 9204 §2.1.1: why ``size`` more bytes cannot be made room for (None: they can).

    Room is made by evicting the oldest entries, and only *evictable* ones may go.
    """
    capacity = encoder._target_capacity()
    evictions = encoder.table.evictions_to_fit(size, capacity)
    if evictions is None:
        return f"it is larger than the table's capacity, {capacity} bytes"
    for position, entry in enumerate(encoder.table):
        if position >= evictions:
            break
        why = not_evictable_because(encoder, entry, referenced)
        if why is not None:
            return f"it would evict [{entry.absolute_index}] {display(entry.name)}, {why}"
    return None


def not_evictable_because(
    encoder: Encoder, entry: DynamicEntry, referenced: set[int]
) -> str | None:
    """RFC 9204 §2.1.1: why ``entry`` may not be evicted now (None: it may)."""
    if entry.absolute_index >= encoder.known_received_count:
        return (
            "whose insertion the decoder has not acknowledged yet (Known Received Count"
            f" {encoder.known_received_count})"
        )
    if encoder.acknowledgments.is_referenced(entry.absolute_index):
        return "which a field section still awaiting acknowledgment refers to"
    if entry.absolute_index in referenced:
        return "which the field section being encoded refers to"
    return None


def may_make_room(
    encoder: Encoder, instruction: str, name: bytes, value: bytes, referenced: set[int]
) -> bool:
    """Can the entry (name, value) be added now? If not, the refusal is recorded."""
    problem = room_problem(encoder, entry_size(name, value), referenced)
    if problem is None:
        return True
    record_skip(encoder, instruction, name, value, problem, ("9204#2.1.1", "9204#2.1.1.1"))
    return False


def credit_covers(
    encoder: Encoder, instruction: EncoderInstruction, kind: str, name: bytes, value: bytes
) -> bool:
    """RFC 9204 §2.1.3: may ``instruction`` be written now? If not, the refusal is recorded.

    The first insert also carries Set Dynamic Table Capacity, so both must fit.
    """
    credit = encoder._credit
    if credit is None:
        return True
    size = serialized_length(instruction)
    if not encoder._capacity_sent:
        size += serialized_length(SetDynamicTableCapacity(encoder._target_capacity()))
    problem = credit.shortfall(size)
    if problem is None:
        return True
    flow_control = {
        "instruction_size": size,
        "stream_credit": credit.stream,
        "connection_credit": credit.connection,
    }
    record_skip(encoder, kind, name, value, problem, ("9204#2.1.3",), flow_control)
    return False


def record_skip(
    encoder: Encoder,
    instruction: str,
    name: bytes,
    value: bytes,
    problem: str,
    rfc: tuple[str, ...],
    extra: dict[str, int] | None = None,
) -> None:
    """Record ``insert_skipped``: the insert or Duplicate not made, and why."""
    if not encoder.recorder.enabled:
        return
    size = entry_size(name, value)
    encoder.recorder.record(
        category="qpack",
        name="insert_skipped",
        stream_id=None,
        data={
            "owner": encoder.table.owner,
            "instruction": instruction,
            "name": display(name),
            "value": display(value),
            "size": size,
            "reason": problem,
            "known_received_count": encoder.known_received_count,
            "dynamic_table_size": encoder.table.size,
            "dynamic_table_capacity": encoder._target_capacity(),
            **(extra or {}),
        },
        rfc=rfc,
        summary=(
            f"{encoder.table.owner} dynamic table: no {instruction} of {display(name)}:"
            f" {display(value) or '(empty value)'} ({size} bytes): {problem}"
        ),
    )


def try_insert(
    encoder: Encoder, name: bytes, value: bytes, referenced: set[int], encoder_stream: bytearray
) -> int | None:
    """Insert (name, value) if it can be done safely; returns its absolute index."""
    if not may_make_room(encoder, "insert", name, value, referenced):
        return None
    instruction: EncoderInstruction
    static_index = STATIC_INDEX_BY_NAME.get(name)
    newest = encoder._newest_by_name.get(name)
    if static_index is not None:
        instruction = InsertWithNameReference(True, static_index, value, encoder._h())
    elif newest is not None:
        relative_index = encoder.table.insert_count - 1 - newest
        instruction = InsertWithNameReference(False, relative_index, value, encoder._h())
    else:
        instruction = InsertWithLiteralName(name, value, encoder._h(), encoder._h())
    if not credit_covers(encoder, instruction, "insert", name, value):
        return None
    return send_insert(encoder, instruction, name, value, encoder_stream)


def try_duplicate(
    encoder: Encoder,
    absolute_index: int,
    referenced: set[int],
    encoder_stream: bytearray,
    keep: bool,
) -> int | None:
    """RFC 9204 §4.3.4: copy a draining entry to the front; returns the copy's index.

    The copy may evict the original (the decoder reads it before evicting, §3.2.2)
    unless ``keep`` says the original is about to be referenced.
    """
    entry = encoder.table.get(absolute_index)
    assert entry is not None
    protected = referenced | {absolute_index} if keep else referenced
    if not may_make_room(encoder, "duplicate", entry.name, entry.value, protected):
        return None
    duplicate = Duplicate(encoder.table.insert_count - 1 - absolute_index)
    if not credit_covers(encoder, duplicate, "duplicate", entry.name, entry.value):
        return None
    return send_insert(encoder, duplicate, entry.name, entry.value, encoder_stream)


def send_insert(
    encoder: Encoder,
    instruction: EncoderInstruction,
    name: bytes,
    value: bytes,
    encoder_stream: bytearray,
) -> int:
    """Write an insert or Duplicate that passed both tests; note the entry as the newest.

    The first one is preceded by Set Dynamic Table Capacity (RFC 9204 §4.3.1).
    """
    if not encoder._capacity_sent:
        encoder._capacity_sent = True
        capacity = encoder._target_capacity()
        send_instruction(encoder, SetDynamicTableCapacity(capacity), encoder_stream)
        encoder.table.set_capacity(capacity)
    send_instruction(encoder, instruction, encoder_stream)
    entry, evicted = encoder.table.insert(name, value)
    for old in evicted:
        if encoder._newest_by_field.get((old.name, old.value)) == old.absolute_index:
            del encoder._newest_by_field[(old.name, old.value)]
        if encoder._newest_by_name.get(old.name) == old.absolute_index:
            del encoder._newest_by_name[old.name]
    encoder._newest_by_field[(name, value)] = entry.absolute_index
    encoder._newest_by_name[name] = entry.absolute_index
    return entry.absolute_index


def send_instruction(
    encoder: Encoder, instruction: EncoderInstruction, encoder_stream: bytearray
) -> None:
    """Write one instruction on the encoder stream, spend its credit, and record it."""
    writer = SpanWriter(record=encoder.recorder.enabled)
    instruction.serialize(writer)
    encoder_stream += writer.buffer
    if encoder._credit is not None:
        encoder._credit = encoder._credit.spend(len(writer.buffer))
    if encoder.recorder.enabled:
        record_instruction(
            encoder.recorder,
            "instruction_created",
            encoder.encoder_stream_id,
            instruction,
            writer.unit(),
            writer.field_spans(),
        )


def serialized_length(instruction: EncoderInstruction) -> int:
    """How many bytes ``instruction`` takes on the encoder stream."""
    writer = SpanWriter(record=False)
    instruction.serialize(writer)
    return len(writer.buffer)
