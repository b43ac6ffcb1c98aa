"""Untrusted input: whatever bytes arrive, the QPACK code fails only in the ways it declares.

A decoder faces bytes from a peer it cannot trust (RFC 9204 §7). Whatever they are, the
decoder must either succeed or raise a `QpackError` (which HTTP/3 turns into a connection
error with the right code, RFC 9204 §6); the raw parsers must either succeed or raise
`NeedMoreData` (wait for more) or `MalformedInput` (a broken encoding rule). Anything else,
an IndexError, a ValueError, a RecursionError, is a bug. Hypothesis feeds random bytes and
mutations of valid input; benchmarks/fuzz_qpack.py does the same with a coverage-guided
fuzzer for longer runs.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from h3learn.events import EventLog
from h3learn.qpack.decoder import Decoder
from h3learn.qpack.decoder_instructions import parse_decoder_instruction
from h3learn.qpack.encoder_instructions import (
    Duplicate,
    InsertWithLiteralName,
    InsertWithNameReference,
    SetDynamicTableCapacity,
    parse_encoder_instruction,
)
from h3learn.qpack.errors import QpackError
from h3learn.qpack.field_lines import (
    FieldSectionPrefix,
    IndexedFieldLine,
    IndexedFieldLineWithPostBaseIndex,
    LiteralFieldLineWithLiteralName,
    LiteralFieldLineWithNameReference,
    LiteralFieldLineWithPostBaseNameReference,
    parse_field_line,
)
from h3learn.wire.errors import MalformedInput, NeedMoreData
from h3learn.wire.spans import SpanReader, SpanWriter

FUZZ = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])

#: The table every decoder under test starts with: capacity 256, five entries.
TABLE_SETUP_ENTRIES = [
    (b":authority", b"www.example.com"),
    (b"custom-key", b"custom-value"),
    (b":path", b"/"),
    (b"a", b""),
    (b"cookie", b"x=1"),
]


def wire(*units: Any) -> bytes:
    writer = SpanWriter(record=False)
    for unit in units:
        unit.serialize(writer)
    return writer.unit()


TABLE_SETUP = wire(
    SetDynamicTableCapacity(256),
    *(InsertWithLiteralName(name, value, False, False) for name, value in TABLE_SETUP_ENTRIES),
)


def new_decoder(record: bool) -> Decoder:
    recorder = EventLog().for_endpoint("server") if record else None
    decoder = Decoder(max_table_capacity=256, blocked_streams=2, recorder=recorder)
    decoder.feed_encoder(TABLE_SETUP)
    return decoder


# -- valid inputs to mutate ----------------------------------------------------------------

small = st.integers(0, 12)
text = st.binary(max_size=12)
valid_encoder_instructions = st.one_of(
    st.builds(SetDynamicTableCapacity, st.integers(0, 300)),
    st.builds(InsertWithNameReference, st.booleans(), small, text, st.booleans()),
    st.builds(InsertWithLiteralName, text, text, st.booleans(), st.booleans()),
    st.builds(Duplicate, small),
)
valid_field_lines = st.one_of(
    st.builds(IndexedFieldLine, st.booleans(), small),
    st.builds(IndexedFieldLineWithPostBaseIndex, small),
    st.builds(
        LiteralFieldLineWithNameReference, st.booleans(), st.booleans(), small, text, st.booleans()
    ),
    st.builds(LiteralFieldLineWithPostBaseNameReference, st.booleans(), small, text, st.booleans()),
    st.builds(
        LiteralFieldLineWithLiteralName, st.booleans(), text, text, st.booleans(), st.booleans()
    ),
)
encoder_streams = st.lists(valid_encoder_instructions, max_size=6).map(lambda units: wire(*units))
field_sections = st.builds(
    lambda prefix, lines: wire(prefix, *lines),
    st.builds(FieldSectionPrefix, st.integers(0, 20), st.booleans(), st.integers(0, 8)),
    st.lists(valid_field_lines, max_size=6),
)


@st.composite
def mutated(draw: st.DrawFn, valid: st.SearchStrategy[bytes]) -> bytes:
    """A valid input with a few bytes flipped, inserted, removed, or the tail cut."""
    data = bytearray(draw(valid))
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["flip", "insert", "delete", "truncate"]))
        position = draw(st.integers(0, len(data)))
        if kind == "insert" or not data:
            data.insert(position, draw(st.integers(0, 255)))
        elif kind == "flip":
            data[min(position, len(data) - 1)] ^= 1 << draw(st.integers(0, 7))
        elif kind == "delete":
            del data[min(position, len(data) - 1)]
        else:
            del data[position:]
    return bytes(data)


any_encoder_stream = st.one_of(st.binary(max_size=64), encoder_streams, mutated(encoder_streams))
any_field_section = st.one_of(st.binary(max_size=64), field_sections, mutated(field_sections))


# -- the decoder raises only QpackError ------------------------------------------------------


@FUZZ
@given(data=any_field_section, record=st.booleans())
def test_decode_of_any_bytes_succeeds_blocks_or_raises_a_qpack_error(
    data: bytes, record: bool
) -> None:
    decoder = new_decoder(record)
    try:
        result = decoder.decode(4, data)
    except QpackError:
        return
    if result is None:
        assert decoder.blocked_streams == [4]
    else:
        assert all(isinstance(n, bytes) and isinstance(v, bytes) for n, v in result.headers)


@FUZZ
@given(data=any_encoder_stream, record=st.booleans())
def test_feed_encoder_of_any_bytes_succeeds_or_raises_a_qpack_error(
    data: bytes, record: bool
) -> None:
    decoder = new_decoder(record)
    try:
        decoder.feed_encoder(data)
    except QpackError:
        return
    assert decoder.table.size <= decoder.table.capacity <= decoder.max_table_capacity


def table_after(chunks: list[bytes]) -> list[tuple[int, bytes, bytes]] | None:
    """The table after feeding ``chunks`` one after another, or None if it was refused."""
    decoder = new_decoder(record=False)
    try:
        for chunk in chunks:
            decoder.feed_encoder(chunk)
    except QpackError:
        return None
    return [(entry.absolute_index, entry.name, entry.value) for entry in decoder.table]


@FUZZ
@given(data=any_encoder_stream, cuts=st.lists(st.integers(0, 64), max_size=5))
def test_feed_encoder_split_anywhere_ends_the_same_as_whole(data: bytes, cuts: list[int]) -> None:
    points = sorted({min(cut, len(data)) for cut in cuts})
    chunks = [
        data[start:end] for start, end in zip([0, *points], [*points, len(data)], strict=True)
    ]
    assert table_after(chunks) == table_after([data])


@FUZZ
@given(encoder=any_encoder_stream, sections=st.lists(any_field_section, max_size=3))
def test_blocked_sections_resumed_by_any_encoder_bytes_raise_only_qpack_errors(
    encoder: bytes, sections: list[bytes]
) -> None:
    decoder = new_decoder(record=True)
    try:
        for number, data in enumerate(sections):
            decoder.decode(4 * number, data)
        decoder.feed_encoder(encoder)
        decoder.cancel_stream(0)
        decoder.data_to_send()
    except QpackError:
        pass


# -- the raw parsers raise only NeedMoreData or MalformedInput ------------------------------

RAW_ERRORS = (NeedMoreData, MalformedInput)


def parse_both_ways(parse: Any, data: bytes) -> None:
    """Parse recording and not recording: both must agree, failing only as declared."""
    outcomes = []
    for record in (True, False):
        reader = SpanReader(data, record=record)
        try:
            outcomes.append(parse(reader))
        except RAW_ERRORS as error:
            outcomes.append(type(error))
    assert outcomes[0] == outcomes[1]


@FUZZ
@given(any_encoder_stream)
def test_parse_encoder_instruction_raises_only_need_more_data_or_malformed(data: bytes) -> None:
    parse_both_ways(parse_encoder_instruction, data)


@FUZZ
@given(st.binary(max_size=24))
def test_parse_decoder_instruction_raises_only_need_more_data_or_malformed(data: bytes) -> None:
    parse_both_ways(parse_decoder_instruction, data)


@FUZZ
@given(st.one_of(st.binary(max_size=64), mutated(field_sections).map(lambda d: d[2:])))
def test_parse_field_line_raises_only_need_more_data_or_malformed(data: bytes) -> None:
    parse_both_ways(parse_field_line, data)


@FUZZ
@given(st.binary(max_size=24))
def test_parse_field_section_prefix_raises_only_need_more_data_or_malformed(data: bytes) -> None:
    parse_both_ways(FieldSectionPrefix.parse, data)


@FUZZ
@given(data=st.binary(max_size=40), start_bit=st.integers(0, 7))
def test_span_reader_integer_raises_only_need_more_data_or_malformed(
    data: bytes, start_bit: int
) -> None:
    def parse(reader: SpanReader) -> int:
        if start_bit:
            reader.bits(start_bit, "Pattern", "Pattern bits.", "9204#4.1.1")
        return reader.integer("Integer", "An integer.", "9204#4.1.1")

    parse_both_ways(parse, data)


@FUZZ
@given(data=st.binary(max_size=40), start_bit=st.integers(0, 6))
def test_span_reader_string_raises_only_need_more_data_or_malformed(
    data: bytes, start_bit: int
) -> None:
    # RFC 9204 §4.1.2: a string literal starts with a prefix of 2 to 8 bits.
    def parse(reader: SpanReader) -> tuple[bytes, bool]:
        if start_bit:
            reader.bits(start_bit, "Pattern", "Pattern bits.", "9204#4.1.2")
        return reader.string("String", "A string.", "9204#4.1.2")

    parse_both_ways(parse, data)


@pytest.mark.parametrize(
    "data",
    [
        b"\x1f" + b"\x80" * 2000,  # an integer that never ends
        b"\x3f" + b"\xff" * 9 + b"\x01",  # an integer far above 2^62
        b"\x5f" + b"\xff" * 8 + b"\x7f",  # a name length above 2^62
    ],
)
def test_pathological_integers_fail_as_declared(data: bytes) -> None:
    parse_both_ways(parse_encoder_instruction, data)
    decoder = new_decoder(record=False)
    with pytest.raises(QpackError):
        decoder.feed_encoder(data)
    with pytest.raises(QpackError):
        new_decoder(record=False).decode(0, b"\x00\x00" + data)
