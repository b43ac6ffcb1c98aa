"""RFC 7541 §5.1: prefixed integers, with the examples of RFC 7541 Appendix C.1.

QPACK uses them unchanged (RFC 9204 §4.1.1). A value below 2^N - 1 fits the N-bit prefix;
otherwise the prefix is all ones and value - (2^N - 1) follows in 7-bit groups, least
significant first, each byte's top bit saying whether another follows. h3learn accepts
values up to 2^62 - 1 and rejects larger ones, redundant zero continuation bytes and
encodings longer than 9 continuation bytes (the limit "in octet length" of RFC 7541 §5.1).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from h3learn.wire.errors import MalformedInput, NeedMoreData
from h3learn.wire.prefixed_int import (
    MAX_CONTINUATION_BYTES,
    PREFIXED_INT_MAX,
    parse_prefixed_int,
    prefixed_int_length,
    serialize_prefixed_int,
)

PREFIX_SIZES = range(1, 9)


def unchecked_encoding(value: int, prefix_bits: int) -> bytes:
    """RFC 7541 §5.1 pseudocode, with no upper limit: builds inputs the encoder refuses."""
    limit = (1 << prefix_bits) - 1
    if value < limit:
        return bytes((value,))
    out = [limit]
    value -= limit
    while value >= 128:
        out.append(0x80 | (value & 0x7F))
        value >>= 7
    out.append(value)
    return bytes(out)


def boundary_values(prefix_bits: int) -> list[int]:
    """Values around each place where the encoding changes shape for this prefix size."""
    limit = (1 << prefix_bits) - 1
    steps = (0, 1, 127, 128, 16383, 16384)
    return sorted({0, 1, limit - 1, PREFIXED_INT_MAX} | {limit + step for step in steps})


# -- RFC 7541 Appendix C.1 ---------------------------------------------------------------


def test_c1_1_encoding_10_with_a_5_bit_prefix_is_one_byte_0a() -> None:
    assert serialize_prefixed_int(10, 5) == bytes.fromhex("0a")
    assert parse_prefixed_int(bytes.fromhex("0a"), 0, 5) == (10, 1)


def test_c1_2_encoding_1337_with_a_5_bit_prefix_is_1f_9a_0a() -> None:
    assert serialize_prefixed_int(1337, 5) == bytes.fromhex("1f9a0a")
    assert parse_prefixed_int(bytes.fromhex("1f9a0a"), 0, 5) == (1337, 3)


def test_c1_3_encoding_42_at_an_octet_boundary_is_2a() -> None:
    assert serialize_prefixed_int(42, 8) == bytes.fromhex("2a")
    assert parse_prefixed_int(bytes.fromhex("2a"), 0, 8) == (42, 1)


def test_parse_returns_the_offset_just_past_the_integer() -> None:
    data = b"\xee\xee" + bytes.fromhex("1f9a0a") + b"\xee"
    assert parse_prefixed_int(data, 2, 5) == (1337, 5)
    assert parse_prefixed_int(memoryview(data), 2, 5) == (1337, 5)
    assert parse_prefixed_int(bytearray(data), 2, 5) == (1337, 5)


# -- every prefix size --------------------------------------------------------------------


@pytest.mark.parametrize("prefix_bits", PREFIX_SIZES)
def test_values_below_2_to_the_n_minus_1_fit_in_the_prefix_byte(prefix_bits: int) -> None:
    limit = (1 << prefix_bits) - 1
    for value in range(limit):
        assert serialize_prefixed_int(value, prefix_bits) == bytes((value,))
        assert parse_prefixed_int(bytes((value,)), 0, prefix_bits) == (value, 1)


@pytest.mark.parametrize("prefix_bits", PREFIX_SIZES)
def test_value_2_to_the_n_minus_1_is_prefix_all_ones_then_a_zero_byte(prefix_bits: int) -> None:
    limit = (1 << prefix_bits) - 1
    encoded = serialize_prefixed_int(limit, prefix_bits)
    assert encoded == bytes((limit, 0x00))
    assert parse_prefixed_int(encoded, 0, prefix_bits) == (limit, 2)


@pytest.mark.parametrize("prefix_bits", PREFIX_SIZES)
def test_values_at_each_boundary_match_the_rfc_pseudocode_and_round_trip(
    prefix_bits: int,
) -> None:
    for value in boundary_values(prefix_bits):
        encoded = serialize_prefixed_int(value, prefix_bits)
        assert encoded == unchecked_encoding(value, prefix_bits)
        assert parse_prefixed_int(encoded, 0, prefix_bits) == (value, len(encoded))
        assert prefixed_int_length(value, prefix_bits) == len(encoded)


@pytest.mark.parametrize("prefix_bits", PREFIX_SIZES)
def test_continuation_bytes_set_the_top_bit_on_all_but_the_last(prefix_bits: int) -> None:
    encoded = serialize_prefixed_int(PREFIXED_INT_MAX, prefix_bits)
    assert [byte >> 7 for byte in encoded[1:]] == [1] * (len(encoded) - 2) + [0]


@pytest.mark.parametrize("prefix_bits", range(1, 8))
def test_high_bits_are_preserved_and_ignored_when_parsing(prefix_bits: int) -> None:
    limit = (1 << prefix_bits) - 1
    every_high_bit = 0xFF ^ limit
    for value in (0, limit - 1, limit, 1337):
        plain = serialize_prefixed_int(value, prefix_bits)
        marked = serialize_prefixed_int(value, prefix_bits, every_high_bit)
        assert marked[0] == plain[0] | every_high_bit
        assert marked[1:] == plain[1:]
        assert parse_prefixed_int(marked, 0, prefix_bits) == (value, len(plain))


def test_high_bits_pattern_sits_above_the_prefix() -> None:
    # QPACK "Insert With Name Reference" (RFC 9204 §4.3.2): pattern 1, T=1, 6-bit index.
    assert serialize_prefixed_int(0, 6, 0b1100_0000) == b"\xc0"
    assert serialize_prefixed_int(63, 6, 0b1000_0000) == b"\xbf\x00"


@pytest.mark.parametrize("prefix_bits", [0, 9, -1])
def test_prefix_size_outside_1_to_8_raises_value_error(prefix_bits: int) -> None:
    with pytest.raises(ValueError):
        serialize_prefixed_int(1, prefix_bits)


# -- limits and malformed encodings -------------------------------------------------------


@pytest.mark.parametrize("prefix_bits", PREFIX_SIZES)
def test_values_up_to_2_to_the_62_minus_1_are_accepted(prefix_bits: int) -> None:
    assert PREFIXED_INT_MAX == 2**62 - 1
    encoded = serialize_prefixed_int(2**62 - 1, prefix_bits)
    assert parse_prefixed_int(encoded, 0, prefix_bits) == (2**62 - 1, len(encoded))


@pytest.mark.parametrize("prefix_bits", PREFIX_SIZES)
def test_value_2_to_the_62_is_rejected_as_malformed(prefix_bits: int) -> None:
    with pytest.raises(ValueError):
        serialize_prefixed_int(2**62, prefix_bits)
    with pytest.raises(MalformedInput) as raised:
        parse_prefixed_int(unchecked_encoding(2**62, prefix_bits), 0, prefix_bits)
    assert raised.value.rfc == "9204#4.1.1"
    assert "2^62-1" in raised.value.rule


def test_enormous_value_is_rejected_before_its_encoding_ends() -> None:
    # 1f, then continuation bytes that never end: rejected once the value passes 2^62 - 1.
    data = b"\x1f" + b"\xff" * 20
    with pytest.raises(MalformedInput):
        parse_prefixed_int(data, 0, 5)


def test_negative_value_raises_value_error() -> None:
    with pytest.raises(ValueError):
        serialize_prefixed_int(-1, 5)


@pytest.mark.parametrize("padded", ["1f8000", "1f808000", "1f8a8000", "ff8000"])
def test_redundant_zero_continuation_byte_is_rejected_as_malformed(padded: str) -> None:
    prefix_bits = 8 if padded.startswith("ff") else 5
    with pytest.raises(MalformedInput) as raised:
        parse_prefixed_int(bytes.fromhex(padded), 0, prefix_bits)
    assert raised.value.rfc == "9204#7.4"
    assert "redundant zero continuation byte" in raised.value.rule


def test_single_zero_continuation_byte_is_not_padding() -> None:
    assert parse_prefixed_int(bytes.fromhex("1f00"), 0, 5) == (31, 2)
    assert parse_prefixed_int(bytes.fromhex("1f8001"), 0, 5) == (31 + 128, 3)


@pytest.mark.parametrize("prefix_bits", PREFIX_SIZES)
def test_2_to_the_62_minus_1_takes_the_most_continuation_bytes_nine(prefix_bits: int) -> None:
    assert MAX_CONTINUATION_BYTES == 9  # ceil(62 / 7)
    encoded = serialize_prefixed_int(PREFIXED_INT_MAX, prefix_bits)
    assert len(encoded) == 1 + MAX_CONTINUATION_BYTES


@pytest.mark.parametrize("prefix_bits", PREFIX_SIZES)
def test_encoding_longer_than_9_continuation_bytes_exceeds_the_octet_length_limit(
    prefix_bits: int,
) -> None:
    """RFC 7541 §5.1: a limit "in value or octet length"; zero groups that go on for ever."""
    prefix = bytes(((1 << prefix_bits) - 1,))
    with pytest.raises(NeedMoreData):
        parse_prefixed_int(prefix + b"\x80" * 8, 0, prefix_bits)
    for run in (9, 10, 10_000):
        with pytest.raises(MalformedInput) as raised:
            parse_prefixed_int(prefix + b"\x80" * run, 0, prefix_bits)
        assert raised.value.rfc == "7541#5.1"
        assert raised.value.beyond_limit
        assert "9 continuation bytes" in raised.value.rule


@settings(max_examples=400)
@given(data=st.binary(min_size=11, max_size=16), prefix_bits=st.integers(1, 8))
def test_no_integer_waits_for_more_than_10_bytes(data: bytes, prefix_bits: int) -> None:
    """RFC 7541 §5.1: 10 bytes settle it, so a stream parser never buffers an endless one."""
    try:
        _, end = parse_prefixed_int(data, 0, prefix_bits)
    except MalformedInput:
        return
    assert end <= 1 + MAX_CONTINUATION_BYTES


# -- truncated input ----------------------------------------------------------------------


@pytest.mark.parametrize("prefix_bits", PREFIX_SIZES)
def test_every_prefix_of_an_encoding_needs_more_data(prefix_bits: int) -> None:
    for value in boundary_values(prefix_bits):
        encoded = b"\x00" + serialize_prefixed_int(value, prefix_bits)
        for end in range(1, len(encoded)):  # fed one byte at a time, from offset 1
            with pytest.raises(NeedMoreData):
                parse_prefixed_int(encoded[:end], 1, prefix_bits)
        assert parse_prefixed_int(encoded, 1, prefix_bits) == (value, len(encoded))


def test_parse_past_the_end_needs_more_data() -> None:
    with pytest.raises(NeedMoreData):
        parse_prefixed_int(b"", 0, 5)
    with pytest.raises(NeedMoreData):
        parse_prefixed_int(b"\x0a", 1, 5)


# -- properties ---------------------------------------------------------------------------


@st.composite
def value_prefix_high_bits(draw: st.DrawFn) -> tuple[int, int, int]:
    prefix_bits = draw(st.integers(min_value=1, max_value=8))
    value = draw(
        st.one_of(
            st.integers(min_value=0, max_value=300),
            st.integers(min_value=0, max_value=PREFIXED_INT_MAX),
        )
    )
    high = draw(st.integers(min_value=0, max_value=(1 << (8 - prefix_bits)) - 1))
    return value, prefix_bits, high << prefix_bits


@settings(max_examples=400)
@given(case=value_prefix_high_bits(), suffix=st.binary(max_size=3))
def test_round_trip_of_value_prefix_and_high_bits(
    case: tuple[int, int, int], suffix: bytes
) -> None:
    value, prefix_bits, high_bits = case
    encoded = serialize_prefixed_int(value, prefix_bits, high_bits)
    assert encoded[0] & ~((1 << prefix_bits) - 1) == high_bits
    assert len(encoded) == prefixed_int_length(value, prefix_bits)
    assert parse_prefixed_int(encoded + suffix, 0, prefix_bits) == (value, len(encoded))


@settings(max_examples=400)
@given(data=st.binary(min_size=1, max_size=12), prefix_bits=st.integers(1, 8))
def test_any_accepted_input_is_the_unique_encoding_of_its_value(
    data: bytes, prefix_bits: int
) -> None:
    """Decoding then encoding gives back exactly the bytes consumed: no padding, no slack."""
    try:
        value, end = parse_prefixed_int(data, 0, prefix_bits)
    except (NeedMoreData, MalformedInput):
        return
    high_bits = data[0] & ~((1 << prefix_bits) - 1)
    assert serialize_prefixed_int(value, prefix_bits, high_bits) == data[:end]
