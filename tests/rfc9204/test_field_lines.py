"""RFC 9204 §4.5.2 - §4.5.6: the five field line representations, on their own.

As for the instructions: the exact bytes of RFC 9204 Appendix B, a Hypothesis round trip
over every field (N and T bits, indexes up to 2^62 - 1, any bytes, either Huffman choice),
labels equal on both sides and covering every bit exactly once, and a byte-at-a-time feed
in which every strict prefix asks for more data. Resolving the indexes against a table is
the decoder's business (test_decoder.py).
"""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from span_checks import assert_every_bit_labelled_once

from h3learn.qpack.field_lines import (
    IndexedFieldLine,
    IndexedFieldLineWithPostBaseIndex,
    LiteralFieldLineWithLiteralName,
    LiteralFieldLineWithNameReference,
    LiteralFieldLineWithPostBaseNameReference,
    parse_field_line,
)
from h3learn.wire.errors import MalformedInput, NeedMoreData
from h3learn.wire.huffman import RULE_EOS, RULE_PADDING_NOT_EOS, RULE_PADDING_TOO_LONG
from h3learn.wire.prefixed_int import PREFIXED_INT_MAX
from h3learn.wire.spans import SpanReader, SpanWriter

# -- helpers --------------------------------------------------------------------------------


def serialize(line: Any) -> SpanWriter:
    writer = SpanWriter()
    line.serialize(writer)
    return writer


def parse(wire: bytes | bytearray, record: bool = True) -> tuple[Any, SpanReader]:
    reader = SpanReader(wire, record=record)
    return parse_field_line(reader), reader


# -- strategies -----------------------------------------------------------------------------

indexes = st.one_of(
    st.integers(0, 300),
    st.sampled_from([2**n - 1 for n in range(1, 8)] + [2**n for n in range(1, 8)]),
    st.integers(0, PREFIXED_INT_MAX),
)

strings = st.binary(max_size=80)

field_lines = st.one_of(
    st.builds(IndexedFieldLine, st.booleans(), indexes),
    st.builds(IndexedFieldLineWithPostBaseIndex, indexes),
    st.builds(
        LiteralFieldLineWithNameReference,
        st.booleans(),
        st.booleans(),
        indexes,
        strings,
        st.booleans(),
    ),
    st.builds(
        LiteralFieldLineWithPostBaseNameReference, st.booleans(), indexes, strings, st.booleans()
    ),
    st.builds(
        LiteralFieldLineWithLiteralName,
        st.booleans(),
        strings,
        strings,
        st.booleans(),
        st.booleans(),
    ),
)


# -- RFC 9204 Appendix B ------------------------------------------------------------------

APPENDIX_B_FIELD_LINES = [
    # B.1: :path=/index.html, static name 1.
    (
        "510b2f696e6465782e68746d6c",
        LiteralFieldLineWithNameReference(False, True, 1, b"/index.html", False),
    ),
    # B.2: post-base 0 and 1.
    ("10", IndexedFieldLineWithPostBaseIndex(0)),
    ("11", IndexedFieldLineWithPostBaseIndex(1)),
    # B.4: dynamic relative 0, static 1, dynamic relative 1.
    ("80", IndexedFieldLine(False, 0)),
    ("c1", IndexedFieldLine(True, 1)),
    ("81", IndexedFieldLine(False, 1)),
]


@pytest.mark.parametrize(("wire", "line"), APPENDIX_B_FIELD_LINES)
def test_appendix_b_field_line_parses_and_serialises_exactly(wire: str, line: Any) -> None:
    assert serialize(line).unit().hex() == wire
    parsed, reader = parse(bytes.fromhex(wire))
    assert parsed == line
    assert reader.at_end()


# -- the bit layout of each representation --------------------------------------------------


@pytest.mark.parametrize(
    ("line", "wire"),
    [
        # §4.5.2: 1 T Index(6+)
        (IndexedFieldLine(True, 17), "d1"),
        (IndexedFieldLine(False, 62), "be"),
        (IndexedFieldLine(True, 63), "ff00"),
        (IndexedFieldLine(True, 98), "ff23"),
        # §4.5.3: 0001 Index(4+)
        (IndexedFieldLineWithPostBaseIndex(14), "1e"),
        (IndexedFieldLineWithPostBaseIndex(15), "1f00"),
        # §4.5.4: 01 N T NameIndex(4+), then H and a 7-bit length
        (LiteralFieldLineWithNameReference(False, True, 15, b"", False), "5f0000"),
        (LiteralFieldLineWithNameReference(True, True, 1, b"", False), "7100"),
        (LiteralFieldLineWithNameReference(True, False, 1, b"", True), "6180"),
        # §4.5.5: 0000 N NameIndex(3+)
        (LiteralFieldLineWithPostBaseNameReference(False, 6, b"", False), "0600"),
        (LiteralFieldLineWithPostBaseNameReference(False, 7, b"", False), "070000"),
        (LiteralFieldLineWithPostBaseNameReference(True, 0, b"a", False), "080161"),
        # §4.5.6: 001 N H NameLen(3+)
        (LiteralFieldLineWithLiteralName(False, b"abcdef", b"", False, False), "2661626364656600"),
        (
            LiteralFieldLineWithLiteralName(False, b"abcdefg", b"", False, False),
            "27006162636465666700",
        ),
        (LiteralFieldLineWithLiteralName(True, b"", b"", True, False), "3800"),
    ],
)
def test_field_line_bits_match_the_rfc_figure(line: Any, wire: str) -> None:
    assert serialize(line).unit().hex() == wire
    assert parse(bytes.fromhex(wire))[0] == line


def test_n_bit_is_reported_in_each_literal_representation() -> None:
    for line in (
        LiteralFieldLineWithNameReference(True, True, 1, b"v", False),
        LiteralFieldLineWithPostBaseNameReference(True, 0, b"v", False),
        LiteralFieldLineWithLiteralName(True, b"n", b"v", False, False),
    ):
        parsed, reader = parse(serialize(line).unit())
        assert parsed.never_indexed is True
        n_spans = [span for span in reader.field_spans() if span.name == "N (never indexed)"]
        assert len(n_spans) == 1 and n_spans[0].value is True


def test_huffman_value_is_decoded_and_reported() -> None:
    # RFC 7541 C.4.1: "www.example.com" Huffman-coded; static name 0 is :authority.
    wire = bytes.fromhex("508cf1e3c2e5f23a6ba0ab90f4ff")
    assert parse(wire)[0] == LiteralFieldLineWithNameReference(
        False, True, 0, b"www.example.com", True
    )


def test_huffman_choice_none_picks_the_shorter_form() -> None:
    line = LiteralFieldLineWithLiteralName(False, b"custom-key", b"custom-value")
    parsed, _ = parse(serialize(line).unit())
    assert (parsed.name_huffman, parsed.value_huffman) == (True, True)
    assert parse(serialize(LiteralFieldLineWithNameReference(False, True, 5, b"\x00")).unit())[
        0
    ] == LiteralFieldLineWithNameReference(False, True, 5, b"\x00", False)


# -- the first bits choose the representation -----------------------------------------------


@pytest.mark.parametrize("first_byte", range(256))
def test_field_line_is_chosen_by_its_pattern_bits(first_byte: int) -> None:
    # §4.5: 1 -> Indexed; 01 -> Literal with Name Reference; 001 -> Literal with Literal
    # Name; 0001 -> Indexed with Post-Base Index; 0000 -> Literal with Post-Base Name Ref.
    if first_byte >> 7 == 0b1:
        expected = ("Indexed Field Line", 1)
    elif first_byte >> 6 == 0b01:
        expected = ("Literal Field Line with Name Reference", 2)
    elif first_byte >> 5 == 0b001:
        expected = ("Literal Field Line with Literal Name", 3)
    elif first_byte >> 4 == 0b0001:
        expected = ("Indexed Field Line with Post-Base Index", 4)
    else:
        expected = ("Literal Field Line with Post-Base Name Reference", 4)
    reader = SpanReader(bytes((first_byte,)) + b"\x00" * 16)
    with contextlib.suppress(NeedMoreData, MalformedInput):
        parse_field_line(reader)
    span = reader.field_spans()[0]
    assert (span.name, span.bit_offset, span.bit_length) == (expected[0], 0, expected[1])


# -- Hypothesis: round trips, labels, byte-at-a-time ---------------------------------------


@settings(max_examples=400)
@given(field_lines)
def test_field_line_round_trips_with_the_same_labels_covering_every_bit(line: Any) -> None:
    writer = serialize(line)
    wire = writer.unit()
    parsed, reader = parse(wire)
    assert parsed == line
    assert reader.at_end()
    assert reader.field_spans() == writer.field_spans()
    assert_every_bit_labelled_once(wire, reader.field_spans())
    quiet, quiet_reader = parse(wire, record=False)
    assert quiet == line
    assert quiet_reader.at_end()


@settings(max_examples=150)
@given(field_lines)
def test_field_line_needs_every_byte_before_it_parses(line: Any) -> None:
    wire = serialize(line).unit()
    buffer = bytearray()
    for byte in wire:
        with pytest.raises(NeedMoreData):
            parse_field_line(SpanReader(buffer))
        with pytest.raises(NeedMoreData):
            parse_field_line(SpanReader(buffer, record=False))
        buffer.append(byte)
    assert parse(buffer)[0] == line


@settings(max_examples=50)
@given(st.lists(field_lines, max_size=10))
def test_consecutive_field_lines_parse_back_in_order(lines: list[Any]) -> None:
    wire = b"".join(serialize(line).unit() for line in lines)
    reader = SpanReader(wire)
    parsed = []
    while not reader.at_end():
        parsed.append(parse_field_line(reader))
    assert parsed == lines
    assert_every_bit_labelled_once(wire, reader.field_spans())


# -- malformed strings and integers inside a field line ----------------------------------


@pytest.mark.parametrize(
    ("wire", "rule"),
    [
        # Literal with static name 1, Huffman value of one byte 0xff: 8 bits of padding.
        ("5181ff", RULE_PADDING_TOO_LONG),
        # "a" is 00011 (5 bits); then 000 padding that is not all ones.
        ("518118", RULE_PADDING_NOT_EOS),
        # 30 ones are EOS itself, inside the string.
        ("5184ffffffff", RULE_EOS),
        # The same rules for a Huffman name of a Literal with Literal Name (H at bit 4).
        ("39ff00", RULE_PADDING_TOO_LONG),
    ],
)
def test_malformed_huffman_string_in_a_field_line_is_malformed_input(wire: str, rule: str) -> None:
    for record in (True, False):
        with pytest.raises(MalformedInput) as caught:
            parse(bytes.fromhex(wire), record=record)
        assert caught.value.rule == rule
        assert caught.value.rfc == "7541#5.2"


def test_index_of_2_to_the_62_is_malformed_input() -> None:
    # Indexed Field Line, T=1: 6-bit prefix all ones, then 2^62 - 63 in 7-bit groups.
    rest = (1 << 62) - 63
    wire = bytearray((0xFF,))
    while rest >= 0x80:
        wire.append(0x80 | (rest & 0x7F))
        rest >>= 7
    wire.append(rest)
    with pytest.raises(MalformedInput) as caught:
        parse(bytes(wire))
    assert caught.value.rfc == "9204#4.1.1"
