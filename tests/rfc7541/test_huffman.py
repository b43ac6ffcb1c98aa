"""RFC 7541 §5.2 and Appendix B: the Huffman code of string literals (RFC 9204 §4.1.2).

Checked against the examples of RFC 7541 Appendices C.4 and C.6, against the `hpack`
package's independent encoder and decoder, and against a slow bit-by-bit decoder written
here from the table. §5.2 makes three things malformed: the EOS symbol inside the string,
padding longer than 7 bits, and padding that is not the most significant bits of EOS.
"""

from __future__ import annotations

from fractions import Fraction
from itertools import pairwise

import pytest
from hpack.exceptions import HPACKDecodingError
from hpack.huffman import HuffmanEncoder
from hpack.huffman_constants import REQUEST_CODES, REQUEST_CODES_LENGTH
from hpack.huffman_table import decode_huffman
from hypothesis import given, settings
from hypothesis import strategies as st

from h3learn.wire.errors import MalformedInput
from h3learn.wire.huffman import (
    RULE_EOS,
    RULE_PADDING_NOT_EOS,
    RULE_PADDING_TOO_LONG,
    huffman_decode,
    huffman_encode,
    huffman_encoded_length,
)
from h3learn.wire.huffman_code import EOS, HUFFMAN_CODE

# RFC 7541 Appendix C.4 (requests) and C.6 (responses): (string, Huffman encoding).
APPENDIX_C_EXAMPLES = [
    (b"www.example.com", "f1e3c2e5f23a6ba0ab90f4ff"),
    (b"no-cache", "a8eb10649cbf"),
    (b"custom-key", "25a849e95ba97d7f"),
    (b"custom-value", "25a849e95bb8e8b4bf"),
    (b"302", "6402"),
    (b"private", "aec3771a4b"),
    (b"Mon, 21 Oct 2013 20:13:21 GMT", "d07abe941054d444a8200595040b8166e082a62d1bff"),
    (b"https://www.example.com", "9d29ad171863c78f0b97c8e9ae82ae43d3"),
]

hpack_encoder = HuffmanEncoder(REQUEST_CODES, REQUEST_CODES_LENGTH)


def code_bits(symbol: int) -> str:
    code, length = HUFFMAN_CODE[symbol]
    return format(code, f"0{length}b")


def pack(bits: str) -> bytes:
    """A string of '0'/'1' (a multiple of 8 long) as bytes."""
    assert len(bits) % 8 == 0
    return int(bits, 2).to_bytes(len(bits) // 8, "big") if bits else b""


SYMBOL_OF_CODE = {code_bits(symbol): symbol for symbol in range(257)}


def reference_decode(data: bytes) -> bytes:
    """RFC 7541 §5.2 read literally: match codes bit by bit, then judge what is left."""
    out = bytearray()
    pending = ""
    for bit in "".join(format(byte, "08b") for byte in data):
        pending += bit
        if pending in SYMBOL_OF_CODE:
            if SYMBOL_OF_CODE[pending] == EOS:
                raise MalformedInput(RULE_EOS, "7541#5.2")
            out.append(SYMBOL_OF_CODE[pending])
            pending = ""
    if pending != "1" * len(pending):
        raise MalformedInput(RULE_PADDING_NOT_EOS, "7541#5.2")
    if len(pending) > 7:
        raise MalformedInput(RULE_PADDING_TOO_LONG, "7541#5.2")
    return bytes(out)


def decode_outcome(decode: object, data: bytes) -> bytes | str:
    """The decoded bytes, or the rule broken."""
    try:
        return decode(data)  # type: ignore[operator, no-any-return]
    except MalformedInput as error:
        return error.rule


# -- RFC 7541 Appendix C -------------------------------------------------------------------


@pytest.mark.parametrize(("text", "encoded"), APPENDIX_C_EXAMPLES)
def test_appendix_c_strings_encode_to_the_rfc_bytes(text: bytes, encoded: str) -> None:
    assert huffman_encode(text).hex() == encoded
    assert huffman_encoded_length(text) == len(encoded) // 2


@pytest.mark.parametrize(("text", "encoded"), APPENDIX_C_EXAMPLES)
def test_appendix_c_bytes_decode_to_the_rfc_strings(text: bytes, encoded: str) -> None:
    assert huffman_decode(bytes.fromhex(encoded)) == text
    assert huffman_decode(memoryview(bytes.fromhex(encoded))) == text


def test_empty_string_encodes_to_nothing_and_decodes_back() -> None:
    assert huffman_encode(b"") == b""
    assert huffman_encoded_length(b"") == 0
    assert huffman_decode(b"") == b""


# -- the three malformed encodings of §5.2 ---------------------------------------------------


@pytest.mark.parametrize(
    "bits",
    [
        code_bits(EOS) + "11",  # EOS alone, padded with ones
        code_bits(ord("a")) + code_bits(EOS) + "1" * 13,  # after a symbol
        code_bits(EOS) + code_bits(ord("0")) + "1" * 5,  # followed by more symbols
    ],
)
def test_eos_symbol_inside_the_string_is_malformed(bits: str) -> None:
    with pytest.raises(MalformedInput) as raised:
        huffman_decode(pack(bits))
    assert raised.value.rule == RULE_EOS
    assert raised.value.rfc == "7541#5.2"


@pytest.mark.parametrize(
    "bits",
    [
        "1" * 8,  # a whole byte of padding and nothing else
        code_bits(ord("0")) + "1" * 11,  # 5-bit symbol then 11 bits of ones
        code_bits(ord("a")) + "1" * 27,  # 29 ones: one bit short of EOS
    ],
)
def test_padding_longer_than_7_bits_is_malformed(bits: str) -> None:
    with pytest.raises(MalformedInput) as raised:
        huffman_decode(pack(bits))
    assert raised.value.rule == RULE_PADDING_TOO_LONG
    assert raised.value.rfc == "7541#5.2"


@pytest.mark.parametrize(
    "bits",
    [
        code_bits(ord("0")) + "000",  # zero padding
        code_bits(ord("0")) + "110",  # ones, then a zero
        code_bits(ord("a")) + "1" * 10 + "0",  # too long and not all ones
    ],
)
def test_padding_that_is_not_all_ones_is_malformed(bits: str) -> None:
    with pytest.raises(MalformedInput) as raised:
        huffman_decode(pack(bits))
    assert raised.value.rule == RULE_PADDING_NOT_EOS
    assert raised.value.rfc == "7541#5.2"


def test_padding_of_up_to_7_ones_is_accepted() -> None:
    assert huffman_decode(pack(code_bits(ord("0")) + "111")) == b"0"
    assert huffman_decode(pack(code_bits(ord("0")) * 3 + "1")) == b"000"
    assert huffman_decode(pack(code_bits(ord("&")))) == b"&"  # 8-bit code, no padding


# -- the code table (Appendix B) ----------------------------------------------------------


def test_table_has_256_byte_symbols_and_eos() -> None:
    assert len(HUFFMAN_CODE) == 257
    assert EOS == 256


def test_every_code_fits_its_length_of_5_to_30_bits() -> None:
    for code, length in HUFFMAN_CODE:
        assert 5 <= length <= 30
        assert 0 <= code < 1 << length


def test_code_is_prefix_free() -> None:
    codes = sorted(code_bits(symbol) for symbol in range(257))
    for shorter, longer in pairwise(codes):
        assert not longer.startswith(shorter), (shorter, longer)


def test_kraft_sum_is_exactly_one_so_every_bit_string_is_covered() -> None:
    assert sum(Fraction(1, 1 << length) for _, length in HUFFMAN_CODE) == 1


def test_eos_is_thirty_ones() -> None:
    assert HUFFMAN_CODE[EOS] == ((1 << 30) - 1, 30)


def test_table_matches_the_hpack_package_table() -> None:
    assert [code for code, _ in HUFFMAN_CODE] == list(REQUEST_CODES)
    assert [length for _, length in HUFFMAN_CODE] == list(REQUEST_CODES_LENGTH)


# -- cross-checks and round trips -----------------------------------------------------------


def test_every_single_byte_round_trips() -> None:
    for byte in range(256):
        text = bytes((byte,))
        encoded = huffman_encode(text)
        assert len(encoded) == (HUFFMAN_CODE[byte][1] + 7) // 8
        assert huffman_decode(encoded) == text


@settings(max_examples=300)
@given(text=st.binary(max_size=64))
def test_encoding_matches_the_hpack_encoder(text: bytes) -> None:
    assert huffman_encode(text) == hpack_encoder.encode(text)


@settings(max_examples=200)
@given(text=st.binary(max_size=48) | st.text(max_size=24).map(str.encode))
def test_round_trip_and_encoded_length(text: bytes) -> None:
    encoded = huffman_encode(text)
    assert huffman_encoded_length(text) == len(encoded)
    assert huffman_decode(encoded) == text
    assert decode_huffman(encoded) == text


@settings(max_examples=500)
@given(data=st.binary(max_size=10))
def test_decoding_arbitrary_bytes_agrees_with_hpack_and_the_reference(data: bytes) -> None:
    outcome = decode_outcome(huffman_decode, data)
    assert outcome == decode_outcome(reference_decode, data)
    try:
        expected = decode_huffman(data)
    except HPACKDecodingError:
        assert isinstance(outcome, str), "hpack rejects what h3learn accepts"
    else:
        assert outcome == expected


@settings(max_examples=300)
@given(text=st.binary(max_size=20), tail=st.sampled_from(["", "0", "1" * 8, "0" * 9]))
def test_decoded_input_is_the_only_encoding_of_its_value(text: bytes, tail: str) -> None:
    """What decodes re-encodes to the same bytes; appended junk bits break a rule."""
    bits = "".join(code_bits(byte) for byte in text) + tail
    bits += "1" * (-len(bits) % 8)
    data = pack(bits)
    outcome = decode_outcome(huffman_decode, data)
    assert outcome == decode_outcome(reference_decode, data)
    if isinstance(outcome, bytes):
        assert huffman_encode(outcome) == data
    else:
        assert tail != "", "an exact encoding must decode"
