"""RFC 9204 §4.1.2: string literals, read and written by SpanReader and SpanWriter.

A string literal is an H bit (1 = Huffman-encoded, RFC 7541 Appendix B), then the length
of the octets as sent, as an N-bit prefixed integer (RFC 7541 §5.1) filling the rest of the
byte, then the octets. QPACK starts strings at several bit positions: the value of an
"Insert With Name Reference" at bit 0 (N = 7), the name of an "Insert With Literal Name"
at bit 2 (N = 5), the name of a "Literal Field Line with Literal Name" at bit 4 (N = 3).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from h3learn.wire.errors import MalformedInput, NeedMoreData
from h3learn.wire.huffman import RULE_PADDING_NOT_EOS, huffman_encode
from h3learn.wire.spans import EXPLAIN_HUFFMAN_FLAG, SpanReader, SpanWriter

RFC = "9204#4.3.3"


def write_string(text: bytes, huffman: bool | None, start_bit: int = 0) -> SpanWriter:
    """A writer holding ``start_bit`` zero bits of pattern, then the string literal."""
    writer = SpanWriter()
    if start_bit:
        writer.bits(0, start_bit, "Pattern", "Instruction pattern.", RFC)
    writer.string(text, "Name", "The field name.", RFC, huffman)
    return writer


def read_string(data: bytes, start_bit: int = 0, record: bool = True) -> tuple[bytes, bool]:
    reader = SpanReader(data, record=record)
    if start_bit:
        reader.bits(start_bit, "Pattern", "Instruction pattern.", RFC)
    value = reader.string("Name", "The field name.", RFC)
    assert reader.at_end()
    return value


# -- RFC 9204 Appendix B ------------------------------------------------------------------


def test_appendix_b3_insert_with_literal_name_strings_at_bit_2_and_bit_0() -> None:
    # "4a" = 01 (Insert With Literal Name), H=0, 5-bit length 10; "0c" = H=0, length 12.
    wire = bytes.fromhex("4a637573746f6d2d6b65790c637573746f6d2d76616c7565")
    reader = SpanReader(wire)
    assert reader.bits(2, "Pattern", "e", "9204#4.3.3") == 0b01
    assert reader.string("Name", "e", "9204#4.3.3") == (b"custom-key", False)
    assert reader.string("Value", "e", "9204#4.3.3") == (b"custom-value", False)
    assert reader.at_end()

    writer = SpanWriter()
    writer.bits(0b01, 2, "Pattern", "e", "9204#4.3.3")
    assert writer.string(b"custom-key", "Name", "e", "9204#4.3.3", huffman=False) is False
    assert writer.string(b"custom-value", "Value", "e", "9204#4.3.3", huffman=False) is False
    assert writer.unit() == wire
    assert writer.field_spans() == reader.field_spans()


def test_appendix_b2_insert_with_name_reference_value_at_bit_0() -> None:
    # "c0" = 1 (Insert With Name Reference), T=1, index 0; "0f" = H=0, length 15.
    wire = bytes.fromhex("c00f7777772e6578616d706c652e636f6d")
    reader = SpanReader(wire)
    assert reader.bits(1, "Pattern", "e", "9204#4.3.2") == 1
    assert reader.flag("T", "e", "9204#4.3.2") is True
    assert reader.integer("Name Index", "e", "9204#4.3.2") == 0
    assert reader.string("Value", "e", "9204#4.3.2") == (b"www.example.com", False)
    assert reader.at_end()


def test_huffman_string_has_h_bit_set_and_length_of_the_encoded_octets() -> None:
    writer = write_string(b"custom-key", huffman=True)
    assert writer.unit() == bytes.fromhex("8825a849e95ba97d7f")  # RFC 7541 C.4.3
    assert read_string(writer.unit()) == (b"custom-key", True)


def test_literal_name_at_bit_4_has_a_3_bit_length_prefix() -> None:
    # RFC 9204 §4.5.6: 001, N, H, 3-bit length. Length 10 overflows 3 bits: 7 then 3.
    writer = write_string(b"custom-key", huffman=False, start_bit=4)
    assert writer.unit()[:2] == bytes((0b0000_0111, 3))
    assert read_string(writer.unit(), start_bit=4) == (b"custom-key", False)
    writer = write_string(b"custom-key", huffman=True, start_bit=4)
    assert writer.unit()[:2] == bytes((0b0000_1111, 1))  # H=1, 8 bytes = 7 + 1
    assert read_string(writer.unit(), start_bit=4) == (b"custom-key", True)


# -- spans ----------------------------------------------------------------------------------


def test_spans_label_h_bit_length_and_octets() -> None:
    writer = write_string(b"no-cache", huffman=True, start_bit=2)
    spans = writer.field_spans()
    rows = [(s.name, s.offset, s.length, s.bit_offset, s.bit_length, s.value) for s in spans]
    assert rows == [
        ("Pattern", 0, 1, 0, 2, "00"),
        ("Name: H", 0, 1, 2, 1, True),
        ("Name: length", 0, 1, 3, 5, 6),
        ("Name", 1, 6, None, None, "no-cache"),
    ]
    h_span, length_span, octets_span = spans[1:]
    assert h_span.explain == EXPLAIN_HUFFMAN_FLAG
    assert h_span.rfc == length_span.rfc == "9204#4.1.2"
    assert octets_span.explain == "The field name. (Huffman-encoded)"
    assert octets_span.rfc == RFC


def test_plain_octets_are_labelled_as_sent_as_is() -> None:
    spans = write_string(b"ab", huffman=False).field_spans()
    assert spans[-1].explain == "The field name. (sent as-is)"
    assert spans[-1].value == "ab"


def test_empty_string_has_no_octets_span() -> None:
    for huffman in (False, True):
        writer = write_string(b"", huffman=huffman)
        assert writer.unit() == (b"\x80" if huffman else b"\x00")
        assert [span.name for span in writer.field_spans()] == ["Name: H", "Name: length"]
        reader = SpanReader(writer.unit())
        assert reader.string("Name", "The field name.", RFC) == (b"", huffman)
        assert reader.field_spans() == writer.field_spans()


def test_invalid_utf8_is_shown_with_escapes() -> None:
    writer = write_string(b"\xff\xfe", huffman=False)
    assert writer.field_spans()[-1].value == "\\xff\\xfe"


# -- Huffman or not -----------------------------------------------------------------------


def test_huffman_none_chooses_huffman_when_it_is_shorter() -> None:
    writer = write_string(b"www.example.com", huffman=None)
    assert writer.unit()[0] == 0x80 | 12
    assert read_string(writer.unit()) == (b"www.example.com", True)


def test_huffman_none_sends_octets_as_is_when_huffman_is_longer() -> None:
    text = b"\x00\x01\x02"
    writer = write_string(text, huffman=None)
    assert writer.unit() == b"\x03" + text
    assert read_string(writer.unit()) == (text, False)


def test_huffman_none_sends_octets_as_is_when_both_are_the_same_length() -> None:
    assert len(huffman_encode(b"&")) == 1  # '&' has an 8-bit code
    assert write_string(b"&", huffman=None).unit() == b"\x01&"


@settings(max_examples=200)
@given(text=st.binary(max_size=40) | st.text(max_size=20).map(str.encode))
def test_huffman_none_is_never_longer_than_either_form(text: bytes) -> None:
    chosen = write_string(text, huffman=None).unit()
    plain = write_string(text, huffman=False).unit()
    coded = write_string(text, huffman=True).unit()
    assert len(chosen) == min(len(plain), len(coded))
    assert chosen in (plain, coded)


# -- errors -------------------------------------------------------------------------------


@pytest.mark.parametrize("record", [True, False])
def test_huffman_string_with_bad_padding_is_malformed(record: bool) -> None:
    # H=1, length 1, then 0x00: the code for '0' (00000) padded with zeros, not ones.
    with pytest.raises(MalformedInput) as raised:
        read_string(b"\x81\x00", record=record)
    assert raised.value.rule == RULE_PADDING_NOT_EOS
    assert raised.value.rfc == "7541#5.2"


@pytest.mark.parametrize("record", [True, False])
def test_octets_sent_as_is_are_not_huffman_decoded(record: bool) -> None:
    assert read_string(b"\x01\x00", record=record) == (b"\x00", False)


@pytest.mark.parametrize("record", [True, False])
@pytest.mark.parametrize("huffman", [True, False])
def test_truncated_string_needs_more_data(record: bool, huffman: bool) -> None:
    wire = write_string(b"custom-value" * 12, huffman=huffman, start_bit=3).unit()
    for cut in range(len(wire)):
        with pytest.raises(NeedMoreData):
            read_string(wire[:cut], start_bit=3, record=record)


# -- every start bit and length ------------------------------------------------------------


@pytest.mark.parametrize("start_bit", range(8))
@pytest.mark.parametrize("record", [True, False])
def test_string_at_every_start_bit_and_length_boundary_round_trips(
    start_bit: int, record: bool
) -> None:
    """An H flag in a byte's last bit pushes the length into the next byte (8-bit prefix)."""
    for length in (0, 1, 2, 6, 7, 8, 30, 31, 126, 127, 128, 200, 254, 255, 256, 300):
        text = bytes(index % 256 for index in range(length))
        for huffman in (True, False):
            writer = write_string(text, huffman, start_bit)
            assert read_string(writer.unit(), start_bit, record=record) == (text, huffman)
            if record:
                reader = SpanReader(writer.unit())
                if start_bit:
                    reader.bits(start_bit, "Pattern", "Instruction pattern.", RFC)
                reader.string("Name", "The field name.", RFC)
                assert reader.field_spans() == writer.field_spans()


@settings(max_examples=300)
@given(
    text=st.binary(max_size=300),
    huffman=st.sampled_from([None, True, False]),
    start_bit=st.integers(min_value=0, max_value=7),
    record=st.booleans(),
)
def test_round_trip_at_any_start_bit(
    text: bytes, huffman: bool | None, start_bit: int, record: bool
) -> None:
    expected_huffman = len(huffman_encode(text)) < len(text) if huffman is None else huffman
    writer = write_string(text, huffman, start_bit)
    assert read_string(writer.unit(), start_bit, record=record) == (text, expected_huffman)
