"""RFC 9204 §4.3 and §4.4: encoder and decoder instructions, on their own.

Each instruction is checked four ways: the exact bytes of RFC 9204 Appendix B; a Hypothesis
round trip over every field (indexes up to 2^62 - 1, any bytes, either Huffman choice);
the labels (`FieldSpan`s) a parse produces, which must equal the writer's and cover every
bit of every byte exactly once; and a byte-at-a-time feed, where every strict prefix must
ask for more data and the whole must parse.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from span_checks import assert_every_bit_labelled_once

from h3learn.events import FieldSpan
from h3learn.qpack.decoder_instructions import (
    InsertCountIncrement,
    SectionAcknowledgment,
    StreamCancellation,
    parse_decoder_instruction,
)
from h3learn.qpack.encoder_instructions import (
    Duplicate,
    InsertWithLiteralName,
    InsertWithNameReference,
    SetDynamicTableCapacity,
    parse_encoder_instruction,
)
from h3learn.wire.errors import MalformedInput, NeedMoreData
from h3learn.wire.prefixed_int import PREFIXED_INT_MAX
from h3learn.wire.spans import SpanReader, SpanWriter

Parser = Callable[[SpanReader], Any]


# -- helpers --------------------------------------------------------------------------------


def serialize(instruction: Any) -> SpanWriter:
    writer = SpanWriter()
    instruction.serialize(writer)
    return writer


def assert_round_trip(instruction: Any, parse: Parser) -> bytes:
    """Serialise, parse back, compare value and labels; return the bytes."""
    writer = serialize(instruction)
    wire = writer.unit()
    reader = SpanReader(wire)
    assert parse(reader) == instruction
    assert reader.at_end()
    assert reader.field_spans() == writer.field_spans()
    assert_every_bit_labelled_once(wire, reader.field_spans())
    quiet = SpanReader(wire, record=False)
    assert parse(quiet) == instruction
    assert quiet.field_spans() == ()
    return wire


def assert_parses_only_when_complete(wire: bytes, parse: Parser, expected: Any) -> None:
    """Feed ``wire`` one byte at a time through a growing buffer."""
    buffer = bytearray()
    for byte in wire:
        with pytest.raises(NeedMoreData):
            parse(SpanReader(buffer))
        buffer.append(byte)
    reader = SpanReader(buffer)
    assert parse(reader) == expected
    assert reader.at_end()


def overflowing_integer(high_bits: int, prefix_bits: int) -> bytes:
    """A prefixed integer encoding 2^62, one more than h3learn accepts (RFC 9204 §4.1.1)."""
    limit = (1 << prefix_bits) - 1
    rest = (1 << 62) - limit
    out = bytearray((high_bits | limit,))
    while rest >= 0x80:
        out.append(0x80 | (rest & 0x7F))
        rest >>= 7
    out.append(rest)
    return bytes(out)


# -- strategies -----------------------------------------------------------------------------

indexes = st.one_of(
    st.integers(0, 300),
    st.sampled_from([2**n - 1 for n in range(1, 8)] + [2**n for n in range(1, 8)]),
    st.integers(0, PREFIXED_INT_MAX),
)
strings = st.binary(max_size=80)

encoder_instructions = st.one_of(
    st.builds(SetDynamicTableCapacity, indexes),
    st.builds(InsertWithNameReference, st.booleans(), indexes, strings, st.booleans()),
    st.builds(InsertWithLiteralName, strings, strings, st.booleans(), st.booleans()),
    st.builds(Duplicate, indexes),
)
decoder_instructions = st.one_of(
    st.builds(SectionAcknowledgment, indexes),
    st.builds(StreamCancellation, indexes),
    st.builds(InsertCountIncrement, indexes),
)


# -- RFC 9204 Appendix B: the exact bytes --------------------------------------------------

APPENDIX_B_ENCODER_STREAM = [
    # B.2
    ("3fbd01", SetDynamicTableCapacity(220)),
    (
        "c00f7777772e6578616d706c652e636f6d",
        InsertWithNameReference(True, 0, b"www.example.com", False),
    ),
    ("c10c2f73616d706c652f70617468", InsertWithNameReference(True, 1, b"/sample/path", False)),
    # B.3
    (
        "4a637573746f6d2d6b65790c637573746f6d2d76616c7565",
        InsertWithLiteralName(b"custom-key", b"custom-value", False, False),
    ),
    # B.4
    ("02", Duplicate(2)),
    # B.5
    ("810d637573746f6d2d76616c756532", InsertWithNameReference(False, 1, b"custom-value2", False)),
]

APPENDIX_B_DECODER_STREAM = [
    ("84", SectionAcknowledgment(4)),  # B.2
    ("01", InsertCountIncrement(1)),  # B.3
    ("48", StreamCancellation(8)),  # B.4
]


@pytest.mark.parametrize(("wire", "instruction"), APPENDIX_B_ENCODER_STREAM)
def test_appendix_b_encoder_instruction_parses_and_serialises_exactly(
    wire: str, instruction: Any
) -> None:
    assert serialize(instruction).unit().hex() == wire
    assert parse_encoder_instruction(SpanReader(bytes.fromhex(wire))) == instruction
    assert_round_trip(instruction, parse_encoder_instruction)
    assert_parses_only_when_complete(bytes.fromhex(wire), parse_encoder_instruction, instruction)


@pytest.mark.parametrize(("wire", "instruction"), APPENDIX_B_DECODER_STREAM)
def test_appendix_b_decoder_instruction_parses_and_serialises_exactly(
    wire: str, instruction: Any
) -> None:
    assert serialize(instruction).unit().hex() == wire
    assert_round_trip(instruction, parse_decoder_instruction)
    assert_parses_only_when_complete(bytes.fromhex(wire), parse_decoder_instruction, instruction)


def test_appendix_b_encoder_stream_parses_as_a_sequence_of_instructions() -> None:
    stream = b"".join(bytes.fromhex(wire) for wire, _ in APPENDIX_B_ENCODER_STREAM)
    position = 0
    parsed = []
    while position < len(stream):
        reader = SpanReader(stream, position)
        parsed.append(parse_encoder_instruction(reader))
        assert_every_bit_labelled_once(reader.unit(), reader.field_spans())
        position = reader.position
    assert parsed == [instruction for _, instruction in APPENDIX_B_ENCODER_STREAM]


# -- exact bytes at the prefix boundaries (RFC 7541 §5.1 as used by RFC 9204 §4.3, §4.4) ---


@pytest.mark.parametrize(
    ("instruction", "wire"),
    [
        # §4.3.1: 001 and a 5-bit prefix. 1337 is RFC 7541 C.1.2's example.
        (SetDynamicTableCapacity(0), "20"),
        (SetDynamicTableCapacity(30), "3e"),
        (SetDynamicTableCapacity(31), "3f00"),
        (SetDynamicTableCapacity(1337), "3f9a0a"),
        # §4.3.2: 1, T and a 6-bit prefix; then H and a 7-bit length.
        (InsertWithNameReference(True, 62, b"", False), "fe00"),
        (InsertWithNameReference(True, 63, b"", False), "ff0000"),
        (InsertWithNameReference(False, 0, b"a" * 127, False), "807f00" + "61" * 127),
        # §4.3.3: 01, H and a 5-bit name length.
        (InsertWithLiteralName(b"n" * 31, b"", False, False), "5f00" + "6e" * 31 + "00"),
        (InsertWithLiteralName(b"", b"", True, True), "6080"),
        # §4.3.4: 000 and a 5-bit prefix.
        (Duplicate(31), "1f00"),
        # §4.4.1: 1 and a 7-bit prefix; §4.4.2: 01 and 6 bits; §4.4.3: 00 and 6 bits.
        (SectionAcknowledgment(126), "fe"),
        (SectionAcknowledgment(127), "ff00"),
        (StreamCancellation(63), "7f00"),
        (InsertCountIncrement(63), "3f00"),
        (InsertCountIncrement(64), "3f01"),
    ],
)
def test_prefixed_integers_fill_the_prefix_then_continue(instruction: Any, wire: str) -> None:
    assert serialize(instruction).unit().hex() == wire


def test_huffman_choice_none_picks_the_shorter_form_and_the_parse_reports_it() -> None:
    # RFC 7541 C.4.1: "www.example.com" is 12 bytes Huffman-coded, 15 as-is.
    wire = serialize(InsertWithNameReference(True, 0, b"www.example.com")).unit()
    assert wire.hex() == "c08cf1e3c2e5f23a6ba0ab90f4ff"
    parsed = parse_encoder_instruction(SpanReader(wire))
    assert parsed == InsertWithNameReference(True, 0, b"www.example.com", True)


def test_huffman_value_of_insert_with_literal_name_is_decoded() -> None:
    # RFC 7541 C.4.3: "custom-key" and "custom-value" Huffman-coded.
    wire = bytes.fromhex("68" + "25a849e95ba97d7f" + "89" + "25a849e95bb8e8b4bf")
    assert parse_encoder_instruction(SpanReader(wire)) == InsertWithLiteralName(
        b"custom-key", b"custom-value", True, True
    )


# -- the first bits choose the instruction --------------------------------------------------


def first_span_name(first_byte: int, parse: Parser) -> FieldSpan:
    reader = SpanReader(bytes((first_byte,)) + b"\x00" * 64)
    with contextlib.suppress(NeedMoreData, MalformedInput):
        parse(reader)
    return reader.field_spans()[0]


@pytest.mark.parametrize("first_byte", range(256))
def test_encoder_instruction_is_chosen_by_its_pattern_bits(first_byte: int) -> None:
    # §4.3: 1 -> Insert with Name Reference, 01 -> Insert with Literal Name,
    # 001 -> Set Dynamic Table Capacity, 000 -> Duplicate.
    if first_byte >> 7 == 0b1:
        expected = ("instruction: Insert with Name Reference", 1)
    elif first_byte >> 6 == 0b01:
        expected = ("instruction: Insert with Literal Name", 2)
    elif first_byte >> 5 == 0b001:
        expected = ("instruction: Set Dynamic Table Capacity", 3)
    else:
        expected = ("instruction: Duplicate", 3)
    span = first_span_name(first_byte, parse_encoder_instruction)
    assert (span.name, span.bit_length) == expected
    assert span.bit_offset == 0


@pytest.mark.parametrize("first_byte", range(256))
def test_decoder_instruction_is_chosen_by_its_pattern_bits(first_byte: int) -> None:
    # §4.4: 1 -> Section Acknowledgment, 01 -> Stream Cancellation, 00 -> Insert Count
    # Increment.
    if first_byte >> 7 == 0b1:
        expected = SectionAcknowledgment
    elif first_byte >> 6 == 0b01:
        expected = StreamCancellation
    else:
        expected = InsertCountIncrement
    data = bytes((first_byte,)) + b"\x01"
    assert type(parse_decoder_instruction(SpanReader(data))) is expected


# -- Hypothesis: round trips, labels, byte-at-a-time ---------------------------------------


@settings(max_examples=300)
@given(encoder_instructions)
def test_encoder_instruction_round_trips_with_the_same_labels(instruction: Any) -> None:
    assert_round_trip(instruction, parse_encoder_instruction)


@settings(max_examples=200)
@given(decoder_instructions)
def test_decoder_instruction_round_trips_with_the_same_labels(instruction: Any) -> None:
    assert_round_trip(instruction, parse_decoder_instruction)


@settings(max_examples=100)
@given(encoder_instructions)
def test_encoder_instruction_needs_every_byte_before_it_parses(instruction: Any) -> None:
    wire = serialize(instruction).unit()
    assert_parses_only_when_complete(wire, parse_encoder_instruction, instruction)


@settings(max_examples=100)
@given(decoder_instructions)
def test_decoder_instruction_needs_every_byte_before_it_parses(instruction: Any) -> None:
    wire = serialize(instruction).unit()
    assert_parses_only_when_complete(wire, parse_decoder_instruction, instruction)


@settings(max_examples=50)
@given(st.lists(encoder_instructions, max_size=8))
def test_consecutive_encoder_instructions_parse_back_in_order(instructions: list[Any]) -> None:
    stream = b"".join(serialize(instruction).unit() for instruction in instructions)
    parsed = []
    position = 0
    while position < len(stream):
        reader = SpanReader(stream, position)
        parsed.append(parse_encoder_instruction(reader))
        position = reader.position
    assert parsed == instructions


# -- malformed integers --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("wire", "parse"),
    [
        (overflowing_integer(0b0010_0000, 5), parse_encoder_instruction),  # capacity
        (overflowing_integer(0b1100_0000, 6), parse_encoder_instruction),  # name index
        (overflowing_integer(0b0000_0000, 5), parse_encoder_instruction),  # duplicate
        (overflowing_integer(0b1000_0000, 7), parse_decoder_instruction),  # stream id
        (overflowing_integer(0b0000_0000, 6), parse_decoder_instruction),  # increment
    ],
)
def test_integer_of_2_to_the_62_is_malformed(wire: bytes, parse: Parser) -> None:
    with pytest.raises(MalformedInput) as caught:
        parse(SpanReader(wire))
    assert caught.value.rfc == "9204#4.1.1"


def test_largest_integer_2_to_the_62_minus_1_is_accepted() -> None:
    instruction = Duplicate(PREFIXED_INT_MAX)
    wire = assert_round_trip(instruction, parse_encoder_instruction)
    assert len(wire) == 10
