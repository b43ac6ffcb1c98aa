"""RFC 9000 §16: QUIC variable-length integers, with the examples of RFC 9000 Appendix A.1.

The two most significant bits of the first byte give the length (1, 2, 4 or 8 bytes); the
remaining bits, in network byte order, are the value. Any value may be sent in a longer form
than it needs, and a reader must wait (`NeedMoreData`) while the integer is incomplete.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from h3learn.wire.errors import NeedMoreData
from h3learn.wire.varint import VARINT_MAX, parse_varint, serialize_varint, varint_length

# RFC 9000 Appendix A.1: (encoding, value). The last one is 37 sent in two bytes.
APPENDIX_A1_EXAMPLES = [
    ("c2197c5eff14e88c", 151288809941952652),
    ("9d7f3e7d", 494878333),
    ("7bbd", 15293),
    ("25", 37),
    ("4025", 37),
]

# (largest value, length in bytes) for each of the four forms.
FORMS = [(63, 1), (16383, 2), (1073741823, 4), (4611686018427387903, 8)]

values = st.integers(min_value=0, max_value=VARINT_MAX)


@pytest.mark.parametrize(("encoding", "value"), APPENDIX_A1_EXAMPLES)
def test_appendix_a1_examples_decode_to_their_values(encoding: str, value: int) -> None:
    data = bytes.fromhex(encoding)
    assert parse_varint(data) == (value, len(data))


@pytest.mark.parametrize(("encoding", "value"), APPENDIX_A1_EXAMPLES[:4])
def test_appendix_a1_examples_are_the_shortest_encodings(encoding: str, value: int) -> None:
    assert serialize_varint(value).hex() == encoding


def test_appendix_a1_two_byte_37_is_written_when_two_bytes_are_forced() -> None:
    assert serialize_varint(37, 2) == bytes.fromhex("4025")


@pytest.mark.parametrize(("largest", "length"), FORMS)
def test_two_length_bits_select_1_2_4_or_8_bytes(largest: int, length: int) -> None:
    encoded = serialize_varint(largest)
    assert len(encoded) == length
    assert encoded[0] >> 6 == [1, 2, 4, 8].index(length)
    assert parse_varint(encoded) == (largest, length)


@pytest.mark.parametrize(("largest", "length"), FORMS[:3])
def test_one_above_a_forms_largest_value_needs_the_next_form(largest: int, length: int) -> None:
    assert varint_length(largest) == length
    assert varint_length(largest + 1) == length * 2
    assert len(serialize_varint(largest + 1)) == length * 2


def test_largest_value_is_2_to_the_62_minus_1() -> None:
    assert VARINT_MAX == 2**62 - 1
    assert serialize_varint(VARINT_MAX) == b"\xff" * 8
    assert parse_varint(b"\xff" * 8) == (VARINT_MAX, 8)


@pytest.mark.parametrize("value", [-1, VARINT_MAX + 1, 2**64])
def test_value_outside_0_to_2_to_the_62_minus_1_raises_value_error(value: int) -> None:
    with pytest.raises(ValueError):
        serialize_varint(value)
    with pytest.raises(ValueError):
        varint_length(value)


@pytest.mark.parametrize("length", [1, 2, 4, 8])
def test_zero_may_be_written_in_every_length(length: int) -> None:
    encoded = serialize_varint(0, length)
    assert encoded == bytes(((length.bit_length() - 1) << 6,)) + bytes(length - 1)
    assert parse_varint(encoded) == (0, length)


@pytest.mark.parametrize(("largest", "length"), FORMS)
def test_forced_length_at_least_the_shortest_is_honoured(largest: int, length: int) -> None:
    for forced in (1, 2, 4, 8):
        if forced < length:
            with pytest.raises(ValueError):
                serialize_varint(largest, forced)
        else:
            encoded = serialize_varint(largest, forced)
            assert len(encoded) == forced
            assert parse_varint(encoded) == (largest, forced)


@pytest.mark.parametrize("length", [0, 3, 5, 16])
def test_forced_length_other_than_1_2_4_8_raises_value_error(length: int) -> None:
    with pytest.raises(ValueError):
        serialize_varint(1, length)


@pytest.mark.parametrize(("encoding", "value"), APPENDIX_A1_EXAMPLES)
def test_truncation_at_every_cut_point_raises_need_more_data(encoding: str, value: int) -> None:
    data = bytes.fromhex(encoding)
    for cut in range(len(data)):
        with pytest.raises(NeedMoreData):
            parse_varint(data[:cut])
    assert parse_varint(data) == (value, len(data))


def test_parse_at_an_offset_returns_the_length_used_not_the_end() -> None:
    data = b"\xaa\xbb" + bytes.fromhex("9d7f3e7d") + b"\x0c"
    assert parse_varint(data, 2) == (494878333, 4)
    assert parse_varint(memoryview(data), 2) == (494878333, 4)
    assert parse_varint(bytearray(data), 6) == (0x0C, 1)


def test_parse_at_or_past_the_end_raises_need_more_data() -> None:
    with pytest.raises(NeedMoreData):
        parse_varint(b"")
    with pytest.raises(NeedMoreData):
        parse_varint(b"\x25", 1)
    with pytest.raises(NeedMoreData):
        parse_varint(b"\x00\x40", 1)  # a 2-byte integer starts at offset 1, one byte left


@settings(max_examples=300)
@given(value=values, prefix=st.binary(max_size=3), suffix=st.binary(max_size=3))
def test_round_trip_of_shortest_encoding(value: int, prefix: bytes, suffix: bytes) -> None:
    encoded = serialize_varint(value)
    assert len(encoded) == varint_length(value)
    assert parse_varint(prefix + encoded + suffix, len(prefix)) == (value, len(encoded))


@settings(max_examples=300)
@given(value=values, length=st.sampled_from([1, 2, 4, 8]))
def test_round_trip_of_any_length_that_fits(value: int, length: int) -> None:
    if length < varint_length(value):
        with pytest.raises(ValueError):
            serialize_varint(value, length)
        return
    encoded = serialize_varint(value, length)
    assert len(encoded) == length
    assert parse_varint(encoded) == (value, length)
    for cut in range(length):
        with pytest.raises(NeedMoreData):
            parse_varint(encoded[:cut])
