"""RFC 9204 §4.5: the encoded field section: a prefix, then field line representations.

An encoded field section (the payload of an HTTP/3 HEADERS or PUSH_PROMISE frame) is

    Required Insert Count (8-bit prefix)         §4.5.1.1, encoded modulo 2 * MaxEntries
    S | Delta Base (7-bit prefix)                §4.5.1.2, Base = RIC + or - Delta Base
    field line representations, one after another:

    1 T index(6)                     Indexed Field Line                          §4.5.2
    0 0 0 1 index(4)                 Indexed Field Line with Post-Base Index     §4.5.3
    0 1 N T name_index(4) | value    Literal Field Line with Name Reference      §4.5.4
    0 0 0 0 N name_index(3) | value  Literal Field Line with Post-Base Name Ref  §4.5.5
    0 0 1 N H length(3) name | value Literal Field Line with Literal Name        §4.5.6

Dynamic table references in a field section are relative to the Base: a *relative* index
counts back from Base - 1 (§3.2.5), a *post-base* index counts forward from Base (§3.2.6).
The N bit asks intermediaries never to put the field into a dynamic table (§7.1.3).

This module holds the representations and the arithmetic of the prefix; resolving
indexes against a dynamic table is field_resolution.py's job (called by decoder.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from h3learn.qpack.errors import DecompressionFailed
from h3learn.wire.errors import MalformedInput, NeedMoreData
from h3learn.wire.prefixed_int import parse_prefixed_int
from h3learn.wire.spans import SpanReader, SpanWriter, display, uses_huffman

EXPLAIN_N = "N bit: 1: this field line must stay a literal here and at every hop that forwards it."
EXPLAIN_T = "1: the index is into the static table; 0: a relative index into the dynamic table."
EXPLAIN_VALUE = "The field value, sent as a string literal."
EXPLAIN_LITERAL_NAME = "The field name, sent as a string literal."
EXPLAIN_POST_BASE = "Post-base index: 0 is the entry inserted at Base, 1 the one after it, ..."
EXPLAIN_RELATIVE_OR_STATIC = (
    "Static table index when T=1; when T=0 a relative index: 0 is the entry just before Base."
)
EXPLAIN_ENCODED_INSERT_COUNT = (
    "Required Insert Count, encoded modulo 2 * MaxEntries (plus one; 0 means no dynamic "
    "references)."
)
EXPLAIN_SIGN = "S bit: 0 means Base = Required Insert Count + Delta Base, 1 means RIC - Delta - 1."
EXPLAIN_DELTA_BASE = (
    "Delta Base: how far the Base is from the Required Insert Count: Base - RIC when S=0,"
    " RIC - Base - 1 when S=1."
)


# --- RFC 9204 §4.5.1: the prefix --------------------------------------------------------


def max_entries(max_table_capacity: int) -> int:
    """RFC 9204 §4.5.1.1: the most entries a table of that capacity can hold (32 bytes each)."""
    return max_table_capacity // 32


def encode_required_insert_count(required_insert_count: int, max_table_capacity: int) -> int:
    """RFC 9204 §4.5.1.1: 0 stays 0, anything else becomes (RIC mod 2*MaxEntries) + 1."""
    if required_insert_count == 0:
        return 0
    return required_insert_count % (2 * max_entries(max_table_capacity)) + 1


def decode_required_insert_count(
    encoded_insert_count: int, max_table_capacity: int, total_number_of_inserts: int
) -> int:
    """RFC 9204 §4.5.1.1: undo the modulo, given how many inserts the decoder has seen.

    The encoder can only reference entries at most MaxEntries ahead of what the decoder
    has, so of all the values with this remainder exactly one is plausible. A value no
    conformant encoder could produce is QPACK_DECOMPRESSION_FAILED.
    """
    if encoded_insert_count == 0:
        return 0
    entries = max_entries(max_table_capacity)
    full_range = 2 * entries
    if encoded_insert_count > full_range:
        raise DecompressionFailed(
            f"Encoded Required Insert Count {encoded_insert_count} is larger than 2 * MaxEntries"
            f" = {full_range}",
            "9204#4.5.1.1",
        )
    max_value = total_number_of_inserts + entries
    max_wrapped = (max_value // full_range) * full_range
    required_insert_count = max_wrapped + encoded_insert_count - 1
    if required_insert_count > max_value:
        if required_insert_count <= full_range:
            raise DecompressionFailed(
                f"Encoded Required Insert Count {encoded_insert_count} decodes to"
                f" {required_insert_count}, more than {max_value} (inserts received plus"
                " MaxEntries), and cannot have wrapped",
                "9204#4.5.1.1",
            )
        required_insert_count -= full_range
    if required_insert_count == 0:
        raise DecompressionFailed(
            f"Encoded Required Insert Count {encoded_insert_count} decodes to 0, which must be"
            " encoded as 0",
            "9204#4.5.1.1",
        )
    return required_insert_count


def base_from_delta(required_insert_count: int, sign: bool, delta_base: int) -> int:
    """RFC 9204 §4.5.1.2: Base from the S bit and Delta Base; a negative Base is invalid."""
    if not sign:
        return required_insert_count + delta_base
    if required_insert_count <= delta_base:
        raise DecompressionFailed(
            f"Sign bit set with Delta Base {delta_base} not below Required Insert Count"
            f" {required_insert_count}: the Base would be negative",
            "9204#4.5.1.2",
        )
    return required_insert_count - delta_base - 1


def delta_from_base(required_insert_count: int, base: int) -> tuple[bool, int]:
    """RFC 9204 §4.5.1.2: (S bit, Delta Base) that encode ``base``."""
    if base >= required_insert_count:
        return False, base - required_insert_count
    return True, required_insert_count - base - 1


@dataclass(frozen=True, slots=True)
class FieldSectionPrefix:
    """RFC 9204 §4.5.1: the two integers in front of every encoded field section."""

    encoded_insert_count: int
    sign: bool
    delta_base: int

    def serialize(self, writer: SpanWriter) -> None:
        writer.integer(
            self.encoded_insert_count,
            "Required Insert Count (encoded)",
            EXPLAIN_ENCODED_INSERT_COUNT,
            "9204#4.5.1.1",
        )
        writer.flag(self.sign, "S (sign)", EXPLAIN_SIGN, "9204#4.5.1.2")
        writer.integer(self.delta_base, "Delta Base", EXPLAIN_DELTA_BASE, "9204#4.5.1.2")

    @classmethod
    def parse(cls, reader: SpanReader) -> FieldSectionPrefix:
        encoded_insert_count = reader.integer(
            "Required Insert Count (encoded)", EXPLAIN_ENCODED_INSERT_COUNT, "9204#4.5.1.1"
        )
        sign = reader.flag("S (sign)", EXPLAIN_SIGN, "9204#4.5.1.2")
        delta_base = reader.integer("Delta Base", EXPLAIN_DELTA_BASE, "9204#4.5.1.2")
        return cls(encoded_insert_count, sign, delta_base)


# --- RFC 9204 §4.5.2 - §4.5.6: the five field line representations --------------------


@dataclass(frozen=True, slots=True)
class IndexedFieldLine:
    """RFC 9204 §4.5.2: the whole field line is a table entry (static, or before Base)."""

    static: bool
    index: int

    qlog_type = "indexed_field_line"
    section = "9204#4.5.2"

    def serialize(self, writer: SpanWriter) -> None:
        writer.bits(0b1, 1, "Indexed Field Line", "Pattern 1.", "9204#4.5.2")
        writer.flag(self.static, "T (static)", EXPLAIN_T, "9204#4.5.2")
        writer.integer(self.index, "Index", EXPLAIN_RELATIVE_OR_STATIC, "9204#4.5.2")

    def describe(self) -> str:
        where = "static" if self.static else "relative"
        return f"Indexed Field Line ({where} {self.index})"

    def qlog(self) -> dict[str, Any]:
        return {
            "type": self.qlog_type,
            "table_type": "static" if self.static else "dynamic",
            "index": self.index,
        }


@dataclass(frozen=True, slots=True)
class IndexedFieldLineWithPostBaseIndex:
    """RFC 9204 §4.5.3: the whole field line is a dynamic entry at or after Base."""

    index: int

    qlog_type = "indexed_field_line"
    section = "9204#4.5.3"

    def serialize(self, writer: SpanWriter) -> None:
        writer.bits(
            0b0001, 4, "Indexed Field Line with Post-Base Index", "Pattern 0001.", "9204#4.5.3"
        )
        writer.integer(self.index, "Post-base index", EXPLAIN_POST_BASE, "9204#4.5.3")

    def describe(self) -> str:
        return f"Indexed Field Line with Post-Base Index ({self.index})"

    def qlog(self) -> dict[str, Any]:
        return {
            "type": self.qlog_type,
            "table_type": "dynamic",
            "index": self.index,
            "is_post_base": True,
        }


@dataclass(frozen=True, slots=True)
class LiteralFieldLineWithNameReference:
    """RFC 9204 §4.5.4: the name is a table entry (static, or before Base); the value is sent."""

    never_indexed: bool
    static: bool
    name_index: int
    value: bytes
    huffman: bool | None = None

    qlog_type = "literal_with_name"
    section = "9204#4.5.4"

    def serialize(self, writer: SpanWriter) -> None:
        writer.bits(0b01, 2, "Literal Field Line with Name Reference", "Pattern 01.", "9204#4.5.4")
        writer.flag(self.never_indexed, "N (never indexed)", EXPLAIN_N, "9204#4.5.4")
        writer.flag(self.static, "T (static)", EXPLAIN_T, "9204#4.5.4")
        writer.integer(self.name_index, "Name index", EXPLAIN_RELATIVE_OR_STATIC, "9204#4.5.4")
        writer.string(self.value, "Value", EXPLAIN_VALUE, "9204#4.5.4", self.huffman)

    def describe(self) -> str:
        where = "static" if self.static else "relative"
        return (
            f"Literal Field Line with Name Reference ({where} {self.name_index})"
            f" value={display(self.value)!r}"
        )

    def qlog(self) -> dict[str, Any]:
        return {
            "type": self.qlog_type,
            "is_never_indexed": self.never_indexed,
            "table_type": "static" if self.static else "dynamic",
            "name_index": self.name_index,
            "huffman_encoded_value": uses_huffman(self.value, self.huffman),
            "value": display(self.value),
        }


@dataclass(frozen=True, slots=True)
class LiteralFieldLineWithPostBaseNameReference:
    """RFC 9204 §4.5.5: the name is a dynamic entry at or after Base; the value is sent."""

    never_indexed: bool
    name_index: int
    value: bytes
    huffman: bool | None = None

    qlog_type = "literal_with_name"
    section = "9204#4.5.5"

    def serialize(self, writer: SpanWriter) -> None:
        writer.bits(
            0b0000,
            4,
            "Literal Field Line with Post-Base Name Reference",
            "Pattern 0000.",
            "9204#4.5.5",
        )
        writer.flag(self.never_indexed, "N (never indexed)", EXPLAIN_N, "9204#4.5.5")
        writer.integer(self.name_index, "Post-base name index", EXPLAIN_POST_BASE, "9204#4.5.5")
        writer.string(self.value, "Value", EXPLAIN_VALUE, "9204#4.5.5", self.huffman)

    def describe(self) -> str:
        return (
            f"Literal Field Line with Post-Base Name Reference ({self.name_index})"
            f" value={display(self.value)!r}"
        )

    def qlog(self) -> dict[str, Any]:
        return {
            "type": self.qlog_type,
            "is_never_indexed": self.never_indexed,
            "table_type": "dynamic",
            "name_index": self.name_index,
            "is_post_base": True,
            "huffman_encoded_value": uses_huffman(self.value, self.huffman),
            "value": display(self.value),
        }


@dataclass(frozen=True, slots=True)
class LiteralFieldLineWithLiteralName:
    """RFC 9204 §4.5.6: name and value both sent as string literals."""

    never_indexed: bool
    name: bytes
    value: bytes
    name_huffman: bool | None = None
    value_huffman: bool | None = None

    qlog_type = "literal_without_name"
    section = "9204#4.5.6"

    def serialize(self, writer: SpanWriter) -> None:
        writer.bits(0b001, 3, "Literal Field Line with Literal Name", "Pattern 001.", "9204#4.5.6")
        writer.flag(self.never_indexed, "N (never indexed)", EXPLAIN_N, "9204#4.5.6")
        writer.string(self.name, "Name", EXPLAIN_LITERAL_NAME, "9204#4.5.6", self.name_huffman)
        writer.string(self.value, "Value", EXPLAIN_VALUE, "9204#4.5.6", self.value_huffman)

    def describe(self) -> str:
        return f"Literal Field Line with Literal Name {display(self.name)}: {display(self.value)!r}"

    def qlog(self) -> dict[str, Any]:
        return {
            "type": self.qlog_type,
            "is_never_indexed": self.never_indexed,
            "huffman_encoded_name": uses_huffman(self.name, self.name_huffman),
            "name": display(self.name),
            "huffman_encoded_value": uses_huffman(self.value, self.value_huffman),
            "value": display(self.value),
        }


FieldLine = (
    IndexedFieldLine
    | IndexedFieldLineWithPostBaseIndex
    | LiteralFieldLineWithNameReference
    | LiteralFieldLineWithPostBaseNameReference
    | LiteralFieldLineWithLiteralName
)

# Pattern bits at the top of a field line's first byte, tested in this order.
INDEXED_BIT = 0b1000_0000  # 1xxxxxxx
LITERAL_WITH_NAME_REFERENCE_BIT = 0b0100_0000  # 01xxxxxx
LITERAL_WITH_LITERAL_NAME_BIT = 0b0010_0000  # 001xxxxx
INDEXED_POST_BASE_BIT = 0b0001_0000  # 0001xxxx; 0000xxxx is the post-base name reference


def parse_field_line(reader: SpanReader) -> FieldLine:
    """Read one field line representation (raises NeedMoreData if it is cut short)."""
    first = reader.peek_byte()
    if first & INDEXED_BIT:
        reader.bits(1, "Indexed Field Line", "Pattern 1.", "9204#4.5.2")
        static = reader.flag("T (static)", EXPLAIN_T, "9204#4.5.2")
        index = reader.integer("Index", EXPLAIN_RELATIVE_OR_STATIC, "9204#4.5.2")
        return IndexedFieldLine(static, index)
    if first & LITERAL_WITH_NAME_REFERENCE_BIT:
        reader.bits(2, "Literal Field Line with Name Reference", "Pattern 01.", "9204#4.5.4")
        never_indexed = reader.flag("N (never indexed)", EXPLAIN_N, "9204#4.5.4")
        static = reader.flag("T (static)", EXPLAIN_T, "9204#4.5.4")
        name_index = reader.integer("Name index", EXPLAIN_RELATIVE_OR_STATIC, "9204#4.5.4")
        value, huffman = reader.string("Value", EXPLAIN_VALUE, "9204#4.5.4")
        return LiteralFieldLineWithNameReference(never_indexed, static, name_index, value, huffman)
    if first & LITERAL_WITH_LITERAL_NAME_BIT:
        reader.bits(3, "Literal Field Line with Literal Name", "Pattern 001.", "9204#4.5.6")
        never_indexed = reader.flag("N (never indexed)", EXPLAIN_N, "9204#4.5.6")
        name, name_huffman = reader.string("Name", EXPLAIN_LITERAL_NAME, "9204#4.5.6")
        value, value_huffman = reader.string("Value", EXPLAIN_VALUE, "9204#4.5.6")
        return LiteralFieldLineWithLiteralName(
            never_indexed, name, value, name_huffman, value_huffman
        )
    if first & INDEXED_POST_BASE_BIT:
        reader.bits(4, "Indexed Field Line with Post-Base Index", "Pattern 0001.", "9204#4.5.3")
        return IndexedFieldLineWithPostBaseIndex(
            reader.integer("Post-base index", EXPLAIN_POST_BASE, "9204#4.5.3")
        )
    reader.bits(
        4, "Literal Field Line with Post-Base Name Reference", "Pattern 0000.", "9204#4.5.5"
    )
    never_indexed = reader.flag("N (never indexed)", EXPLAIN_N, "9204#4.5.5")
    name_index = reader.integer("Post-base name index", EXPLAIN_POST_BASE, "9204#4.5.5")
    value, huffman = reader.string("Value", EXPLAIN_VALUE, "9204#4.5.5")
    return LiteralFieldLineWithPostBaseNameReference(never_indexed, name_index, value, huffman)


def refers_to_dynamic_table(section: bytes) -> bool:
    """Does an encoded field section declare a non-zero Required Insert Count (§4.5.1.1)?

    Read from the prefix's first integer alone, for a section that will never be decoded or
    whose Delta Base is unusable. An Encoded Insert Count that cannot be read is no section
    an encoder could be holding references for.
    """
    try:
        encoded_insert_count, _ = parse_prefixed_int(section, 0, 8)
    except (NeedMoreData, MalformedInput):
        return False
    return encoded_insert_count != 0
