"""RFC 9204 §4.3: encoder instructions, sent by an encoder on its encoder stream.

They change the decoder's copy of the dynamic table. The first bits of each instruction
say which one it is:

    1 T index(6) | value          Insert with Name Reference  (§4.3.2)
    0 1 H length(5) name | value  Insert with Literal Name    (§4.3.3)
    0 0 1 capacity(5)             Set Dynamic Table Capacity  (§4.3.1)
    0 0 0 index(5)                Duplicate                   (§4.3.4)

where "value" is a string literal with an H bit and a 7-bit length prefix (§4.1.2). Name
and Duplicate indexes on the encoder stream are *relative*: 0 is the most recently inserted
entry (§3.2.5).

Each instruction is a frozen dataclass with ``serialize(writer)`` and a ``parse`` function
that dispatches on the pattern bits. Both go through the span reader/writer, so every bit
of every instruction can be labelled.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from h3learn.wire.errors import NeedMoreData
from h3learn.wire.prefixed_int import parse_prefixed_int
from h3learn.wire.spans import SpanReader, SpanWriter, display, uses_huffman

EXPLAIN_VALUE = "The field value of the new entry."
EXPLAIN_NAME = "The field name of the new entry."
EXPLAIN_T = "1: the name comes from the static table; 0: from the dynamic table."
EXPLAIN_CAPACITY = "New capacity of the dynamic table in bytes; at most the decoder's maximum."
EXPLAIN_DUPLICATE_INDEX = "Which existing entry to insert again: 0 is the newest (RFC 9204 §3.2.5)."


@dataclass(frozen=True, slots=True)
class SetDynamicTableCapacity:
    """RFC 9204 §4.3.1: ``001`` then the new capacity as a 5-bit prefixed integer."""

    capacity: int

    qlog_type = "set_dynamic_table_capacity"
    section = "9204#4.3.1"

    def serialize(self, writer: SpanWriter) -> None:
        writer.bits(
            0b001, 3, "instruction: Set Dynamic Table Capacity", "Pattern 001.", "9204#4.3.1"
        )
        writer.integer(
            self.capacity,
            "Capacity",
            EXPLAIN_CAPACITY,
            "9204#4.3.1",
        )

    def describe(self) -> str:
        return f"Set Dynamic Table Capacity {self.capacity}"

    def qlog(self) -> dict[str, Any]:
        return {"instruction_type": self.qlog_type, "capacity": self.capacity}


@dataclass(frozen=True, slots=True)
class InsertWithNameReference:
    """RFC 9204 §4.3.2: ``1 T`` and a 6-bit name index, then the value.

    ``static`` (T=1) means ``name_index`` is a static table index; otherwise it is a
    relative index into the dynamic table (0 = newest entry).
    """

    static: bool
    name_index: int
    value: bytes
    huffman: bool | None = None

    qlog_type = "insert_with_name_reference"
    section = "9204#4.3.2"

    def serialize(self, writer: SpanWriter) -> None:
        writer.bits(0b1, 1, "instruction: Insert with Name Reference", "Pattern 1.", "9204#4.3.2")
        writer.flag(
            self.static,
            "T (static)",
            EXPLAIN_T,
            "9204#4.3.2",
        )
        writer.integer(self.name_index, "Name index", explain_name_index(self.static), "9204#4.3.2")
        writer.string(self.value, "Value", EXPLAIN_VALUE, "9204#4.3.2", self.huffman)

    def describe(self) -> str:
        table = "static" if self.static else "dynamic relative"
        return (
            f"Insert with Name Reference ({table} {self.name_index}) value={display(self.value)!r}"
        )

    def qlog(self) -> dict[str, Any]:
        return {
            "instruction_type": self.qlog_type,
            "table_type": "static" if self.static else "dynamic",
            "name_index": self.name_index,
            "huffman_encoded_value": uses_huffman(self.value, self.huffman),
            "value": display(self.value),
        }


@dataclass(frozen=True, slots=True)
class InsertWithLiteralName:
    """RFC 9204 §4.3.3: ``01``, the name as a string with a 5-bit length, then the value."""

    name: bytes
    value: bytes
    name_huffman: bool | None = None
    value_huffman: bool | None = None

    qlog_type = "insert_without_name_reference"
    section = "9204#4.3.3"

    def serialize(self, writer: SpanWriter) -> None:
        writer.bits(0b01, 2, "instruction: Insert with Literal Name", "Pattern 01.", "9204#4.3.3")
        writer.string(self.name, "Name", EXPLAIN_NAME, "9204#4.3.3", self.name_huffman)
        writer.string(self.value, "Value", EXPLAIN_VALUE, "9204#4.3.3", self.value_huffman)

    def describe(self) -> str:
        return f"Insert with Literal Name {display(self.name)}: {display(self.value)!r}"

    def qlog(self) -> dict[str, Any]:
        return {
            "instruction_type": self.qlog_type,
            "huffman_encoded_name": uses_huffman(self.name, self.name_huffman),
            "name": display(self.name),
            "huffman_encoded_value": uses_huffman(self.value, self.value_huffman),
            "value": display(self.value),
        }


@dataclass(frozen=True, slots=True)
class Duplicate:
    """RFC 9204 §4.3.4: ``000`` and a 5-bit relative index of the entry to insert again."""

    index: int

    qlog_type = "duplicate"
    section = "9204#4.3.4"

    def serialize(self, writer: SpanWriter) -> None:
        writer.bits(0b000, 3, "instruction: Duplicate", "Pattern 000.", "9204#4.3.4")
        writer.integer(
            self.index,
            "Relative index",
            EXPLAIN_DUPLICATE_INDEX,
            "9204#4.3.4",
        )

    def describe(self) -> str:
        return f"Duplicate (relative {self.index})"

    def qlog(self) -> dict[str, Any]:
        return {"instruction_type": self.qlog_type, "index": self.index}


EncoderInstruction = (
    SetDynamicTableCapacity | InsertWithNameReference | InsertWithLiteralName | Duplicate
)


def explain_name_index(static: bool) -> str:
    if static:
        return "Index of the name in the static table (RFC 9204 Appendix A)."
    return "Relative index of the entry whose name is reused: 0 is the newest (RFC 9204 §3.2.5)."


# Pattern bits at the top of the first byte of each instruction.
INSERT_WITH_NAME_REFERENCE_BIT = 0b1000_0000  # 1xxxxxxx
INSERT_WITH_LITERAL_NAME_BIT = 0b0100_0000  # 01xxxxxx
SET_DYNAMIC_TABLE_CAPACITY_BIT = 0b0010_0000  # 001xxxxx


def parse_encoder_instruction(reader: SpanReader) -> EncoderInstruction:
    """Read one encoder instruction; raises NeedMoreData if it is not all there yet."""
    first = reader.peek_byte()
    if first & INSERT_WITH_NAME_REFERENCE_BIT:
        reader.bits(1, "instruction: Insert with Name Reference", "Pattern 1.", "9204#4.3.2")
        static = reader.flag(
            "T (static)",
            EXPLAIN_T,
            "9204#4.3.2",
        )
        name_index = reader.integer("Name index", explain_name_index(static), "9204#4.3.2")
        value, huffman = reader.string("Value", EXPLAIN_VALUE, "9204#4.3.2")
        return InsertWithNameReference(static, name_index, value, huffman)
    if first & INSERT_WITH_LITERAL_NAME_BIT:
        reader.bits(2, "instruction: Insert with Literal Name", "Pattern 01.", "9204#4.3.3")
        name, name_huffman = reader.string("Name", EXPLAIN_NAME, "9204#4.3.3")
        value, value_huffman = reader.string("Value", EXPLAIN_VALUE, "9204#4.3.3")
        return InsertWithLiteralName(name, value, name_huffman, value_huffman)
    if first & SET_DYNAMIC_TABLE_CAPACITY_BIT:
        reader.bits(3, "instruction: Set Dynamic Table Capacity", "Pattern 001.", "9204#4.3.1")
        capacity = reader.integer(
            "Capacity",
            EXPLAIN_CAPACITY,
            "9204#4.3.1",
        )
        return SetDynamicTableCapacity(capacity)
    reader.bits(3, "instruction: Duplicate", "Pattern 000.", "9204#4.3.4")
    index = reader.integer(
        "Relative index",
        EXPLAIN_DUPLICATE_INDEX,
        "9204#4.3.4",
    )
    return Duplicate(index)


def encoder_instruction_end(data: bytes | bytearray, position: int) -> int:
    """Where the encoder instruction that starts at ``position`` ends, read from its integers.

    Only the prefixed integers are read (the name index, the string lengths, the capacity or
    the index), never a string, so this is cheap however long the strings are. Raises
    NeedMoreData until enough has arrived to tell, MalformedInput for an unusable integer.
    A decoder waits for the whole instruction before parsing it: parsing each time a few
    more bytes arrive would decode a long name again and again (RFC 9204 §7.4).
    """
    if position >= len(data):
        raise NeedMoreData
    first = data[position]
    if first & INSERT_WITH_NAME_REFERENCE_BIT:
        _, value_start = parse_prefixed_int(data, position, 6)  # the name index
        return _string_end(data, value_start, 7)
    if first & INSERT_WITH_LITERAL_NAME_BIT:
        name_end = _string_end(data, position, 5)  # the H bit is the pattern's third bit
        return _string_end(data, name_end, 7)
    _, end = parse_prefixed_int(data, position, 5)  # a capacity or a relative index
    return end


def _string_end(data: bytes | bytearray, position: int, length_prefix_bits: int) -> int:
    """Where a string literal starting at ``position`` ends (its length, then its octets)."""
    length, octets_start = parse_prefixed_int(data, position, length_prefix_bits)
    return octets_start + length
