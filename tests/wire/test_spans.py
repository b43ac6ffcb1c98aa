"""The span reader and writer (h3learn/wire/spans.py) that label every byte on the wire.

They read and write the primitives of RFC 7541 §5.1 (prefixed integers), RFC 9204 §4.1.2
(string literals) and RFC 9000 §16 (variable-length integers), plus bit fields and raw
bytes. What a `SpanWriter` writes a `SpanReader` must read back with the same values and
the same `FieldSpan`s, and those spans must cover every byte (every bit of a prefix byte)
exactly once, because the UI colours the bytes from them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from h3learn.events import FieldSpan
from h3learn.wire.errors import MalformedInput, NeedMoreData
from h3learn.wire.prefixed_int import PREFIXED_INT_MAX
from h3learn.wire.spans import SpanReader, SpanWriter, bit_string, display
from h3learn.wire.varint import VARINT_MAX, varint_length

RFC = "9204#4.1.1"


@dataclass(frozen=True)
class Field:
    """One field to write then read: ``kind`` names the SpanWriter/SpanReader method.

    ``value`` is what is written; ``option`` is the bit count (bits), the Huffman choice
    (string) or the forced length (varint).
    """

    kind: str
    value: Any
    option: Any = None


def write(fields: list[Field], record: bool = True) -> tuple[SpanWriter, list[Any]]:
    """Write ``fields``; return the writer and what each call returned."""
    writer = SpanWriter(record=record)
    returned: list[Any] = []
    for number, field in enumerate(fields):
        name, explain = f"Field {number}", f"Field number {number}."
        if field.kind == "bits":
            returned.append(writer.bits(field.value, field.option, name, explain, RFC))
        elif field.kind == "flag":
            returned.append(writer.flag(field.value, name, explain, RFC))
        elif field.kind == "integer":
            returned.append(writer.integer(field.value, name, explain, RFC))
        elif field.kind == "string":
            returned.append(writer.string(field.value, name, explain, RFC, field.option))
        elif field.kind == "varint":
            returned.append(writer.varint(field.value, name, explain, RFC, field.option))
        else:
            returned.append(writer.raw(field.value, name, explain, RFC))
    return writer, returned


def read(reader: SpanReader, fields: list[Field]) -> list[Any]:
    """Read ``fields`` back; a string reads as (value, whether Huffman was used)."""
    values: list[Any] = []
    for number, field in enumerate(fields):
        name, explain = f"Field {number}", f"Field number {number}."
        if field.kind == "bits":
            values.append(reader.bits(field.option, name, explain, RFC))
        elif field.kind == "flag":
            values.append(reader.flag(name, explain, RFC))
        elif field.kind == "integer":
            values.append(reader.integer(name, explain, RFC))
        elif field.kind == "string":
            values.append(reader.string(name, explain, RFC))
        elif field.kind == "varint":
            values.append(reader.varint(name, explain, RFC))
        else:
            values.append(reader.raw(len(field.value), name, explain, RFC))
    return values


def expected_values(fields: list[Field], returned: list[Any]) -> list[Any]:
    """What `read` should give back: the written values, strings with the H flag used."""
    return [
        (field.value, used) if field.kind == "string" else field.value
        for field, used in zip(fields, returned, strict=True)
    ]


def bit_coverage(spans: tuple[FieldSpan, ...], size: int) -> list[list[int]]:
    """How many spans claim each bit of each byte of a ``size``-byte unit."""
    counts = [[0] * 8 for _ in range(size)]
    for span in spans:
        assert span.length >= 1
        assert span.offset >= 0 and span.offset + span.length <= size, span
        first_bits = range(8)
        if span.bit_offset is not None:
            assert span.bit_length is not None
            first_bits = range(span.bit_offset, span.bit_offset + span.bit_length)
        for bit in first_bits:
            counts[span.offset][bit] += 1
        for index in range(span.offset + 1, span.offset + span.length):
            for bit in range(8):
                counts[index][bit] += 1
    return counts


@st.composite
def field_sequences(draw: st.DrawFn) -> list[Field]:
    """A valid sequence of fields: bit fields never cross a byte, varint and raw start on
    a byte boundary, and the last byte is complete (an integer fills a partial byte)."""
    fields: list[Field] = []
    bit = 0
    for _ in range(draw(st.integers(min_value=0, max_value=8))):
        kinds = ["bits", "flag", "integer", "string"] + (["varint", "raw"] if bit == 0 else [])
        kind = draw(st.sampled_from(kinds))
        if kind == "bits":
            count = draw(st.integers(min_value=1, max_value=8 - bit))
            value = draw(st.integers(min_value=0, max_value=(1 << count) - 1))
            fields.append(Field("bits", value, count))
            bit = (bit + count) % 8
        elif kind == "flag":
            fields.append(Field("flag", draw(st.booleans())))
            bit = (bit + 1) % 8
        elif kind == "integer":
            small = st.integers(min_value=0, max_value=400)
            value = draw(small | st.integers(min_value=0, max_value=PREFIXED_INT_MAX))
            fields.append(Field("integer", value))
            bit = 0
        elif kind == "string":
            text = draw(st.binary(max_size=12) | st.text(max_size=8).map(str.encode))
            if draw(st.booleans()):
                text *= 20  # long enough for a length with continuation bytes
            huffman = draw(st.sampled_from([None, True, False]))
            fields.append(Field("string", text, huffman))
            bit = 0
        elif kind == "varint":
            value = draw(st.integers(min_value=0, max_value=VARINT_MAX))
            forced = draw(
                st.sampled_from([None] + [n for n in (1, 2, 4, 8) if n >= varint_length(value)])
            )
            fields.append(Field("varint", value, forced))
        else:
            fields.append(Field("raw", draw(st.binary(max_size=6))))
    if bit:
        fields.append(Field("integer", draw(st.integers(min_value=0, max_value=300))))
    return fields


# -- properties of every sequence --------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(fields=field_sequences())
def test_reader_gives_back_the_writers_values_and_identical_spans(fields: list[Field]) -> None:
    writer, returned = write(fields)
    reader = SpanReader(writer.unit())
    assert read(reader, fields) == expected_values(fields, returned)
    assert reader.field_spans() == writer.field_spans()
    assert reader.at_end()
    reader.expect_end("the fields", RFC)
    assert reader.unit() == writer.unit()
    assert reader.consumed() == len(writer.unit())


@settings(max_examples=300, deadline=None)
@given(fields=field_sequences())
def test_spans_cover_every_byte_and_every_prefix_bit_exactly_once(fields: list[Field]) -> None:
    writer, _ = write(fields)
    unit = writer.unit()
    assert bit_coverage(writer.field_spans(), len(unit)) == [[1] * 8 for _ in unit]


@settings(max_examples=200, deadline=None)
@given(fields=field_sequences())
def test_without_recording_no_spans_are_built_but_the_same_values_are_read(
    fields: list[Field],
) -> None:
    recorded, returned = write(fields)
    unrecorded, returned_unrecorded = write(fields, record=False)
    assert unrecorded.unit() == recorded.unit()
    assert returned_unrecorded == returned
    assert unrecorded.spans is None
    assert unrecorded.field_spans() == ()

    reader = SpanReader(recorded.unit(), record=False)
    assert read(reader, fields) == expected_values(fields, returned)
    assert reader.spans is None
    assert reader.field_spans() == ()
    assert reader.at_end()


@settings(max_examples=150, deadline=None)
@given(fields=field_sequences())
def test_truncation_anywhere_raises_need_more_data(fields: list[Field]) -> None:
    unit = write(fields)[0].unit()
    for record in (True, False):
        for cut in range(len(unit)):
            with pytest.raises(NeedMoreData):
                read(SpanReader(unit[:cut], record=record), fields)


@settings(max_examples=100, deadline=None)
@given(fields=field_sequences(), before=st.binary(max_size=4), after=st.binary(max_size=4))
def test_spans_are_counted_from_the_reader_offset(
    fields: list[Field], before: bytes, after: bytes
) -> None:
    writer, returned = write(fields)
    reader = SpanReader(memoryview(before + writer.unit() + after), offset=len(before))
    assert read(reader, fields) == expected_values(fields, returned)
    assert reader.field_spans() == writer.field_spans()
    assert reader.unit() == writer.unit()
    assert reader.consumed() == len(writer.unit())


# -- the individual fields ----------------------------------------------------------------


def test_pattern_flag_and_integer_share_one_prefix_byte() -> None:
    # RFC 9204 §4.5.4 Literal Field Line with Name Reference: '01', N, T, 4-bit index.
    writer = SpanWriter()
    writer.bits(0b01, 2, "Pattern", "Literal with name reference.", "9204#4.5.4")
    writer.flag(False, "N", "Never indexed.", "9204#4.5.4")
    writer.flag(True, "T", "Static table.", "9204#4.5.4")
    writer.integer(1, "Name Index", "Index of :path.", "9204#4.5.4")
    assert writer.unit() == b"\x51"
    assert [(s.name, s.value, s.bit_offset, s.bit_length) for s in writer.field_spans()] == [
        ("Pattern", "01", 0, 2),
        ("N", False, 2, 1),
        ("T", True, 3, 1),
        ("Name Index", 1, 4, 4),
    ]
    assert all((span.offset, span.length) == (0, 1) for span in writer.field_spans())


def test_integer_with_continuation_bytes_spans_them_and_its_prefix_bits() -> None:
    writer = SpanWriter()
    writer.bits(0b001, 3, "Pattern", "e", RFC)
    writer.integer(1337, "Value", "e", RFC)
    assert writer.unit() == bytes.fromhex("3f9a0a")  # 001 + 1337 in a 5-bit prefix
    span = writer.field_spans()[1]
    assert (span.offset, span.length, span.value, span.bit_offset, span.bit_length) == (
        0,
        3,
        1337,
        3,
        5,
    )
    reader = SpanReader(writer.unit())
    assert reader.bits(3, "Pattern", "e", RFC) == 1
    assert reader.integer("Value", "e", RFC) == 1337


def test_integer_on_a_byte_boundary_uses_an_8_bit_prefix() -> None:
    writer = SpanWriter()
    writer.integer(254, "Value", "e", RFC)
    writer.integer(255, "Value", "e", RFC)
    assert writer.unit() == bytes.fromhex("feff00")
    assert [(s.offset, s.length, s.bit_offset, s.bit_length) for s in writer.field_spans()] == [
        (0, 1, 0, 8),
        (1, 2, 0, 8),
    ]


def test_varint_and_raw_spans_have_no_bit_range_and_show_the_value() -> None:
    writer = SpanWriter()
    writer.varint(15293, "Type", "e", "9000#16")
    writer.varint(37, "Length", "e", "9000#16", length=2)
    writer.raw(b"\xde\xad", "Payload", "e", "9114#7")
    writer.raw(b"\x01", "Opaque", "e", "9114#7", preview=lambda octets: "one")
    writer.raw(b"", "Empty", "e", "9114#7")
    assert writer.unit() == bytes.fromhex("7bbd4025dead01")
    assert [(s.offset, s.length, s.value, s.bit_offset) for s in writer.field_spans()] == [
        (0, 2, 15293, None),
        (2, 2, 37, None),
        (4, 2, "dead", None),
        (6, 1, "one", None),
    ]


def test_a_varint_explanation_says_how_its_first_two_bits_give_its_length() -> None:
    # RFC 9000 §16: 00, 01, 10, 11 -> 1, 2, 4, 8 bytes; the rest of the bits are the value.
    writer = SpanWriter()
    for value in (37, 15293, 494878333, 151288809941952652):
        writer.varint(value, "V", "A value.", "9000#16")
    writer.varint(37, "Padded", "A value.", "9000#16", length=8)
    spans = writer.field_spans()
    assert [s.length for s in spans] == [1, 2, 4, 8, 8]
    assert spans[0].explain.startswith("A value. (1-byte variable-length integer")
    assert "first two bits, 00, give its length; the other 6 bits" in spans[0].explain
    assert "first two bits, 01, give its length; the other 14 bits" in spans[1].explain
    assert "first two bits, 10, give its length; the other 30 bits" in spans[2].explain
    assert "first two bits, 11, give its length; the other 62 bits" in spans[3].explain
    assert "first two bits, 11" in spans[4].explain  # the length sent, not the shortest
    reader = SpanReader(writer.unit())
    read = [reader.varint("V", "A value.", "9000#16") for _ in spans]
    assert read == [37, 15293, 494878333, 151288809941952652, 37]
    assert [s.explain for s in reader.field_spans()] == [s.explain for s in spans]


def test_an_integer_that_overflows_its_prefix_explains_the_continuation() -> None:
    # RFC 9204 §4.1.1 (RFC 7541 §5.1): 94 in a 6-bit prefix is 63, then 31.
    writer = SpanWriter()
    writer.bits(0b11, 2, "Pattern", "e", RFC)
    writer.integer(94, "Index", "The index.", RFC)
    writer.bits(0b11, 2, "Pattern", "e", RFC)
    writer.integer(62, "Index", "The index.", RFC)
    assert writer.unit() == bytes.fromhex("ff1fFE")
    overflowing, fitting = writer.field_spans()[1], writer.field_spans()[3]
    assert "6-bit prefix is full, all ones = 63" in overflowing.explain
    assert "continues in 1 more byte, carrying 94 - 63 = 31" in overflowing.explain
    assert fitting.explain == "The index."  # fits the prefix: nothing to add
    longer = SpanWriter()
    longer.bits(0b001, 3, "Pattern", "e", RFC)
    longer.integer(1337, "Capacity", "The capacity.", RFC)
    assert "continues in 2 more bytes, carrying 1337 - 31 = 1306" in longer.field_spans()[1].explain
    reader = SpanReader(writer.unit())
    reader.bits(2, "Pattern", "e", RFC)
    assert reader.integer("Index", "The index.", RFC) == 94
    assert reader.field_spans()[1].explain == overflowing.explain


def test_bits_show_binary_digits_unless_told_otherwise() -> None:
    writer = SpanWriter()
    writer.bits(1, 3, "Pattern", "e", RFC)
    writer.bits(5, 5, "Code", "e", RFC, shown="five")
    assert writer.unit() == bytes((0b001_00101,))
    assert [span.value for span in writer.field_spans()] == ["001", "five"]
    reader = SpanReader(writer.unit())
    assert reader.bits(3, "Pattern", "e", RFC) == 1
    assert reader.bits(5, "Code", "e", RFC, shown="five") == 5
    assert reader.field_spans() == writer.field_spans()


def test_a_bit_field_cannot_cross_a_byte_boundary() -> None:
    writer = SpanWriter()
    writer.bits(0, 5, "Pattern", "e", RFC)
    with pytest.raises(ValueError):
        writer.bits(0, 4, "Too wide", "e", RFC)
    reader = SpanReader(b"\x00\x00")
    reader.bits(5, "Pattern", "e", RFC)
    with pytest.raises(ValueError):
        reader.bits(4, "Too wide", "e", RFC)


def test_a_bit_field_value_must_fit_its_width() -> None:
    with pytest.raises(ValueError):
        SpanWriter().bits(4, 2, "Pattern", "e", RFC)


def test_varint_and_raw_must_start_on_a_byte_boundary() -> None:
    writer = SpanWriter()
    writer.flag(True, "Flag", "e", RFC)
    with pytest.raises(ValueError):
        writer.varint(1, "Type", "e", "9000#16")
    with pytest.raises(ValueError):
        writer.raw(b"x", "Payload", "e", "9114#7")
    reader = SpanReader(b"\x80\x00")
    reader.flag("Flag", "e", RFC)
    with pytest.raises(ValueError):
        reader.varint("Type", "e", "9000#16")
    with pytest.raises(ValueError):
        reader.raw(1, "Payload", "e", "9114#7")


def test_a_partly_read_byte_counts_as_consumed_and_not_at_end() -> None:
    reader = SpanReader(b"\xc0")
    assert not reader.at_end()
    assert reader.flag("Flag", "e", RFC) is True
    assert reader.consumed() == 1
    assert not reader.at_end()
    with pytest.raises(MalformedInput):
        reader.expect_end("the flag", RFC)
    assert reader.bits(7, "Rest", "e", RFC) == 0b1000000
    assert reader.at_end()


def test_bytes_left_over_are_malformed() -> None:
    reader = SpanReader(b"\x25\x00")
    assert reader.varint("Type", "e", "9000#16") == 37
    with pytest.raises(MalformedInput) as raised:
        reader.expect_end("the frame", "9114#7.1")
    assert raised.value.rfc == "9114#7.1"
    assert "bytes left over after the frame" in raised.value.rule


def test_a_malformed_integer_surfaces_as_malformed_input() -> None:
    with pytest.raises(MalformedInput):
        SpanReader(bytes.fromhex("ff8000")).integer("Value", "e", RFC)
    with pytest.raises(MalformedInput):
        SpanReader(bytes.fromhex("ff8000"), record=False).integer("Value", "e", RFC)


def test_bit_string_and_display_helpers() -> None:
    assert bit_string(1, 3) == "001"
    assert bit_string(0b101, 5) == "00101"
    assert display("é".encode()) == "é"
    assert display(b"a\xff") == "a\\xff"
