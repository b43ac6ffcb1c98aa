"""RFC 9000 §16 as RFC 9114 §7.1 uses it: the variable-length integer fields of HTTP/3.

Every number HTTP/3 itself puts on the wire (a frame's Type and Length, a push ID, a setting,
a stream type) is a QUIC variable-length integer. RFC 9000 §16 lets a sender use a longer
encoding than the value needs (the Length 1 may be sent as ``01``, ``40 01``, ``80 00 00 01``
or ``c0 00 00 00 00 00 00 01``), and RFC 9114 does not forbid it. A receiver must accept all
of them, and this project keeps the length each one was sent with, so that serialising a
parsed frame gives back exactly the bytes that were received.

The helpers here read and write one such field through a `SpanReader` / `SpanWriter` and,
when the encoding is longer than needed, add a sentence saying so to the field's label.
"""

from __future__ import annotations

from collections.abc import Sequence

from h3learn.wire.spans import SpanReader, SpanWriter
from h3learn.wire.varint import parse_varint, varint_length

#: How many bytes each variable-length integer of a unit took, in wire order; None when
#: every one used its shortest form.
VarintLengths = tuple[int, ...] | None


def encoding_note(value: int, length: int) -> str:
    """An extra sentence for a field label when ``value`` was sent in more bytes than needed."""
    shortest = varint_length(value)
    if length == shortest:
        return ""
    return f" Sent in {length} bytes where {shortest} would do: RFC 9000 §16 allows a longer form."


def peek_varint(reader: SpanReader) -> tuple[int, int]:
    """The value and encoded length of the integer at the reader's position, not consumed.

    Raises `NeedMoreData` if the data ends inside it.
    """
    return parse_varint(reader.data, reader.position)


def read_varint(reader: SpanReader, name: str, explain: str, rfc: str) -> tuple[int, int]:
    """Read one integer field; returns (value, the number of bytes it took)."""
    value, length = peek_varint(reader)
    reader.varint(name, explain + encoding_note(value, length) if reader.recording else "", rfc)
    return value, length


def write_varint(
    writer: SpanWriter, value: int, name: str, explain: str, rfc: str, length: int | None
) -> None:
    """Write one integer field, in ``length`` bytes or (None) the shortest form."""
    used = varint_length(value) if length is None else length
    note = explain + encoding_note(value, used) if writer.recording else ""
    # int(): an IntEnum member (FrameType.DATA) is labelled as the plain number it is.
    writer.varint(int(value), name, note, rfc, used)


def encoded_size(value: int, length: int | None) -> int:
    """Bytes the field will take: ``length`` if given, else the shortest form's size."""
    return varint_length(value) if length is None else length


def lengths_to_write(varint_lengths: VarintLengths, count: int) -> list[int | None]:
    """The length to write each of ``count`` integers with (None: the shortest form)."""
    if varint_lengths is None:
        return [None] * count
    if len(varint_lengths) != count:
        raise ValueError(
            f"varint_lengths has {len(varint_lengths)} entries, this unit has {count} integers"
        )
    return list(varint_lengths)


def lengths_as_received(values: Sequence[int], lengths: Sequence[int]) -> VarintLengths:
    """What to store after parsing: None if every integer was minimal, else every length."""
    for value, length in zip(values, lengths, strict=True):
        if length != varint_length(value):
            return tuple(lengths)
    return None
