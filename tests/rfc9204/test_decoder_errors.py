"""RFC 9204 §6: every rule whose breach the decoder must treat as a connection error.

One test per rule that names QPACK_DECOMPRESSION_FAILED (a field section it cannot
interpret) or QPACK_ENCODER_STREAM_ERROR (an encoder instruction it cannot interpret),
named after the rule. Each checks the exception class, its registered code (§8.3), the
section it cites, and that the message says which rule broke and where, e.g.
``QPACK_DECOMPRESSION_FAILED (RFC 9204 §3.1): field line refers to static index 99; ...``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from h3learn.events import EventLog
from h3learn.qpack.decoder import Decoder
from h3learn.qpack.encoder_instructions import (
    Duplicate,
    InsertWithLiteralName,
    InsertWithNameReference,
    SetDynamicTableCapacity,
)
from h3learn.qpack.errors import (
    DecoderStreamError,
    DecompressionFailed,
    EncoderStreamError,
    QpackError,
    QpackErrorCode,
)
from h3learn.qpack.field_lines import (
    FieldSectionPrefix,
    IndexedFieldLine,
    IndexedFieldLineWithPostBaseIndex,
    LiteralFieldLineWithNameReference,
    LiteralFieldLineWithPostBaseNameReference,
    delta_from_base,
    encode_required_insert_count,
)
from h3learn.wire.spans import SpanWriter

# -- helpers --------------------------------------------------------------------------------


def wire(*units: Any) -> bytes:
    writer = SpanWriter(record=False)
    for unit in units:
        unit.serialize(writer)
    return writer.unit()


def section(required_insert_count: int, base: int, *lines: Any, capacity: int = 4096) -> bytes:
    sign, delta_base = delta_from_base(required_insert_count, base)
    encoded = encode_required_insert_count(required_insert_count, capacity)
    return wire(FieldSectionPrefix(encoded, sign, delta_base), *lines)


def insert(name: bytes, value: bytes) -> InsertWithLiteralName:
    return InsertWithLiteralName(name, value, False, False)


def decoder_with(*entries: tuple[bytes, bytes], capacity: int = 4096, blocked: int = 0) -> Decoder:
    decoder = Decoder(max_table_capacity=capacity, blocked_streams=blocked)
    decoder.feed_encoder(
        wire(SetDynamicTableCapacity(capacity), *(insert(n, v) for n, v in entries))
    )
    return decoder


def prefixed_integer_of_2_to_the_62(high_bits: int, prefix_bits: int) -> bytes:
    """One more than the largest integer h3learn accepts (RFC 9204 §4.1.1)."""
    limit = (1 << prefix_bits) - 1
    rest = (1 << 62) - limit
    out = bytearray((high_bits | limit,))
    while rest >= 0x80:
        out.append(0x80 | (rest & 0x7F))
        rest >>= 7
    out.append(rest)
    return bytes(out)


def assert_fails(
    action: Callable[[], object],
    error_class: type[QpackError],
    rfc: str,
    *phrases: str,
) -> QpackError:
    """``action`` raises ``error_class`` citing ``rfc``, with a message naming the rule."""
    with pytest.raises(QpackError) as caught:
        action()
    error = caught.value
    assert type(error) is error_class
    code_name, code = {
        DecompressionFailed: ("QPACK_DECOMPRESSION_FAILED", 0x0200),
        EncoderStreamError: ("QPACK_ENCODER_STREAM_ERROR", 0x0201),
    }[error_class]
    assert error.code == code
    assert error.rfc == rfc
    number, section_number = rfc.split("#")
    message = str(error)
    assert message.startswith(f"{code_name} (RFC {number} §{section_number}): "), message
    for phrase in phrases:
        assert phrase in message, message
    return error


# -- §6 and §8.3: the codes ----------------------------------------------------------------


def test_error_codes_are_those_registered_in_section_8_3() -> None:
    assert QpackErrorCode.QPACK_DECOMPRESSION_FAILED == 0x0200
    assert QpackErrorCode.QPACK_ENCODER_STREAM_ERROR == 0x0201
    assert QpackErrorCode.QPACK_DECODER_STREAM_ERROR == 0x0202
    assert DecompressionFailed.code == 0x0200
    assert EncoderStreamError.code == 0x0201
    assert DecoderStreamError.code == 0x0202


# -- §3.1: invalid static index ---------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "index"),
    [
        (IndexedFieldLine(True, 99), 99),
        (IndexedFieldLine(True, 2**62 - 1), 2**62 - 1),
        (LiteralFieldLineWithNameReference(False, True, 99, b"v", False), 99),
    ],
)
def test_invalid_static_index_in_a_field_line_is_decompression_failed(
    line: Any, index: int
) -> None:
    decoder = Decoder()
    data = section(0, 0, IndexedFieldLine(True, 98), line, capacity=0)
    assert_fails(
        lambda: decoder.decode(0, data), DecompressionFailed, "9204#3.1", f"static index {index}"
    )


def test_invalid_static_index_on_the_encoder_stream_is_encoder_stream_error() -> None:
    decoder = decoder_with()
    data = wire(InsertWithNameReference(True, 99, b"v", False))
    assert_fails(
        lambda: decoder.feed_encoder(data), EncoderStreamError, "9204#3.1", "static index 99"
    )


# -- §2.2.3: invalid references ----------------------------------------------------------


@pytest.mark.parametrize(
    ("required_insert_count", "base", "line", "absolute"),
    [
        # Base 2 but Required Insert Count 1: relative 0 is absolute 1, not below 1.
        (1, 2, IndexedFieldLine(False, 0), 1),
        (1, 2, LiteralFieldLineWithNameReference(False, False, 0, b"v", False), 1),
        # Base 0: post-base 1 is absolute 1, not below 1.
        (1, 0, IndexedFieldLineWithPostBaseIndex(1), 1),
        (1, 0, LiteralFieldLineWithPostBaseNameReference(False, 1, b"v", False), 1),
        # Relative index past the Base: absolute -1.
        (1, 1, IndexedFieldLine(False, 1), -1),
    ],
)
def test_reference_at_or_above_the_required_insert_count_is_decompression_failed(
    required_insert_count: int, base: int, line: Any, absolute: int
) -> None:
    decoder = decoder_with((b"a", b"1"), (b"b", b"2"))
    data = section(required_insert_count, base, line)
    assert_fails(
        lambda: decoder.decode(0, data),
        DecompressionFailed,
        "9204#2.2.3",
        f"absolute index {absolute}",
        f"Required Insert Count {required_insert_count}",
    )


@pytest.mark.parametrize(
    ("base", "line"),
    [
        (1, IndexedFieldLine(False, 0)),
        (1, LiteralFieldLineWithNameReference(False, False, 0, b"v", False)),
        (0, IndexedFieldLineWithPostBaseIndex(0)),
        (0, LiteralFieldLineWithPostBaseNameReference(False, 0, b"v", False)),
    ],
)
def test_reference_to_an_evicted_entry_in_a_field_line_is_decompression_failed(
    base: int, line: Any
) -> None:
    # 100 bytes hold one 72-byte entry: the second insert evicts absolute 0.
    decoder = decoder_with((b"n" * 20, b"v" * 20), (b"m" * 20, b"w" * 20), capacity=100)
    data = section(1, base, line, capacity=100)
    assert_fails(
        lambda: decoder.decode(0, data),
        DecompressionFailed,
        "9204#2.2.3",
        "dynamic entry 0",
        "evicted",
    )


@pytest.mark.parametrize(
    "instruction",
    [Duplicate(1), InsertWithNameReference(False, 1, b"v", False)],
)
def test_reference_to_an_evicted_entry_on_the_encoder_stream_is_encoder_stream_error(
    instruction: Any,
) -> None:
    decoder = decoder_with((b"n" * 20, b"v" * 20), (b"m" * 20, b"w" * 20), capacity=100)
    data = wire(instruction)
    assert_fails(
        lambda: decoder.feed_encoder(data),
        EncoderStreamError,
        "9204#2.2.3",
        "relative index 1 (absolute 0)",
        "not in the dynamic table",
    )


@pytest.mark.parametrize(
    "instruction", [Duplicate(0), InsertWithNameReference(False, 0, b"v", False), Duplicate(5)]
)
def test_reference_to_an_entry_never_inserted_on_the_encoder_stream_is_encoder_stream_error(
    instruction: Any,
) -> None:
    decoder = decoder_with()
    assert_fails(
        lambda: decoder.feed_encoder(wire(instruction)),
        EncoderStreamError,
        "9204#2.2.3",
        "not in the dynamic table",
    )


# -- §4.5.1.1: impossible Encoded Required Insert Count -------------------------------------


def test_encoded_insert_count_above_twice_max_entries_is_decompression_failed() -> None:
    decoder = decoder_with(capacity=100)  # MaxEntries 3: at most 6
    assert_fails(
        lambda: decoder.decode(0, b"\x07\x00"),
        DecompressionFailed,
        "9204#4.5.1.1",
        "Encoded Required Insert Count 7",
        "2 * MaxEntries = 6",
    )


def test_non_zero_encoded_insert_count_without_a_dynamic_table_is_decompression_failed() -> None:
    assert_fails(
        lambda: Decoder(max_table_capacity=0).decode(0, b"\x01\x00"),
        DecompressionFailed,
        "9204#4.5.1.1",
        "2 * MaxEntries = 0",
    )


def test_encoded_insert_count_beyond_what_the_encoder_can_have_is_decompression_failed() -> None:
    # No inserts yet, MaxEntries 3: encoded 5 would be 4, more than 0 + 3, and cannot be a
    # wrapped value either.
    decoder = decoder_with(capacity=100, blocked=10)
    assert_fails(
        lambda: decoder.decode(0, b"\x05\x00"),
        DecompressionFailed,
        "9204#4.5.1.1",
        "cannot have wrapped",
    )


def test_encoded_insert_count_that_decodes_to_zero_is_decompression_failed() -> None:
    decoder = decoder_with(capacity=100, blocked=10)
    assert_fails(
        lambda: decoder.decode(0, b"\x01\x00"),
        DecompressionFailed,
        "9204#4.5.1.1",
        "decodes to 0",
    )


# -- §4.5.1.2: negative Base ---------------------------------------------------------------


@pytest.mark.parametrize(("delta_base", "prefix"), [(2, "0382"), (3, "0383"), (0, "0080")])
def test_sign_bit_with_delta_base_not_below_the_required_insert_count_is_decompression_failed(
    delta_base: int, prefix: str
) -> None:
    decoder = decoder_with((b"a", b"1"), (b"b", b"2"))  # "03" is Required Insert Count 2
    assert_fails(
        lambda: decoder.decode(0, bytes.fromhex(prefix) + b"\xd1"),
        DecompressionFailed,
        "9204#4.5.1.2",
        f"Delta Base {delta_base}",
        "negative",
    )


def test_negative_base_of_a_blocked_section_fails_by_the_time_it_is_decoded() -> None:
    decoder = decoder_with(blocked=1)
    with pytest.raises(DecompressionFailed) as caught:
        decoder.decode(0, bytes.fromhex("0282") + b"\x10")  # RIC 1, Base 1 - 2 - 1
        decoder.feed_encoder(wire(insert(b"a", b"1")))
    assert caught.value.rfc == "9204#4.5.1.2"


# -- §4.3.1, §3.2.2, §3.2.3: capacity and inserts -----------------------------------------


def test_capacity_above_the_maximum_is_encoder_stream_error() -> None:
    decoder = Decoder(max_table_capacity=220)
    assert_fails(
        lambda: decoder.feed_encoder(wire(SetDynamicTableCapacity(221))),
        EncoderStreamError,
        "9204#4.3.1",
        "Set Dynamic Table Capacity 221 exceeds the maximum 220",
    )


@pytest.mark.parametrize(
    "instruction",
    [
        InsertWithLiteralName(b"n" * 20, b"v" * 13, False, False),  # 65 bytes
        InsertWithNameReference(True, 0, b"v" * 23, False),  # :authority: 10 + 23 + 32
        InsertWithNameReference(False, 0, b"v" * 32, False),  # "a": 1 + 32 + 32
    ],
)
def test_insert_larger_than_the_capacity_is_encoder_stream_error(instruction: Any) -> None:
    decoder = decoder_with((b"a", b"1"), capacity=64)
    assert_fails(
        lambda: decoder.feed_encoder(wire(instruction)),
        EncoderStreamError,
        "9204#3.2.2",
        "65 bytes is larger than the table capacity 64",
    )


@pytest.mark.parametrize("maximum", [4096, 0])
def test_insert_while_the_capacity_is_zero_is_encoder_stream_error(maximum: int) -> None:
    # §3.2.2: the table starts at capacity 0, so an insert before Set Dynamic Table
    # Capacity cannot fit; with a maximum of 0 (§3.2.3) nothing ever can.
    decoder = Decoder(max_table_capacity=maximum)
    assert_fails(
        lambda: decoder.feed_encoder(wire(insert(b"a", b"1"))),
        EncoderStreamError,
        "9204#3.2.2",
        "larger than the table capacity 0",
    )


def test_insert_after_the_capacity_is_set_back_to_zero_is_encoder_stream_error() -> None:
    decoder = decoder_with((b"a", b"1"))
    decoder.feed_encoder(wire(SetDynamicTableCapacity(0)))
    assert_fails(
        lambda: decoder.feed_encoder(wire(Duplicate(0))),
        EncoderStreamError,
        "9204#2.2.3",
    )


# -- §2.1.2: blocked streams ---------------------------------------------------------------


@pytest.mark.parametrize("allowed", [0, 1, 3])
def test_more_blocked_streams_than_advertised_is_decompression_failed(allowed: int) -> None:
    decoder = decoder_with(blocked=allowed)
    needs_one_insert = section(1, 0, IndexedFieldLineWithPostBaseIndex(0))
    for stream_number in range(allowed):
        assert decoder.decode(4 * stream_number, needs_one_insert) is None
    assert_fails(
        lambda: decoder.decode(4 * allowed, needs_one_insert),
        DecompressionFailed,
        "9204#2.1.2",
        f"more than the {allowed} this decoder allows",
        "SETTINGS_QPACK_BLOCKED_STREAMS",
    )


# -- §2.2.1: Required Insert Count larger than needed --------------------------------------


@pytest.mark.parametrize(
    ("required_insert_count", "lines", "largest"),
    [
        (2, [IndexedFieldLine(False, 1)], 0),  # only absolute 0 is used
        (1, [IndexedFieldLine(True, 17)], -1),  # no dynamic reference at all
        (2, [], -1),
    ],
)
def test_required_insert_count_larger_than_needed_is_decompression_failed(
    required_insert_count: int, lines: list[Any], largest: int
) -> None:
    # The RFC allows (MAY) treating this as an error; h3learn does.
    decoder = decoder_with((b"a", b"1"), (b"b", b"2"))
    data = section(required_insert_count, 2, *lines)
    assert_fails(
        lambda: decoder.decode(0, data),
        DecompressionFailed,
        "9204#2.2.1",
        f"Required Insert Count is {required_insert_count}, more than this section needs",
        (
            "refers to no dynamic entry, so it needs 0"
            if largest < 0
            else f"largest dynamic reference is {largest}, so it needs {largest + 1}"
        ),
        "MAY",
    )


# -- truncated field sections ----------------------------------------------------------------


@pytest.mark.parametrize("data", ["", "00", "ff", "00ff"])
def test_field_section_ending_inside_its_prefix_is_decompression_failed(data: str) -> None:
    assert_fails(
        lambda: Decoder().decode(0, bytes.fromhex(data)),
        DecompressionFailed,
        "9204#4.5.1",
        "ends inside its prefix",
    )


@pytest.mark.parametrize(
    "data",
    [
        "000051",  # Literal with Name Reference, no value
        "0000510b2f696e646578",  # value cut short
        "0000ff",  # index continues past the end
        "0000d126",  # literal name: 6 bytes announced, none sent
    ],
)
def test_field_section_ending_inside_a_field_line_is_decompression_failed(data: str) -> None:
    assert_fails(
        lambda: Decoder().decode(0, bytes.fromhex(data)),
        DecompressionFailed,
        "9204#4.5",
        "ends inside a field line",
    )


# -- malformed strings and integers (RFC 7541 §5.1, §5.2, RFC 9204 §4.1.1) ---------------------

MALFORMED_HUFFMAN = [
    ("ff", "Huffman padding is longer than 7 bits"),
    ("18", "Huffman padding is not the most significant bits of EOS"),
    ("ffffffff", "Huffman-encoded string contains the EOS symbol"),
]


@pytest.mark.parametrize(("octets", "rule"), MALFORMED_HUFFMAN)
@pytest.mark.parametrize("where", ["value", "name"])
def test_malformed_huffman_in_a_field_section_is_decompression_failed(
    octets: str, rule: str, where: str
) -> None:
    length = len(octets) // 2
    if where == "value":  # Literal with static name 1, H=1 value
        line = bytes((0x51, 0x80 | length)) + bytes.fromhex(octets)
    else:  # Literal with Literal Name, H=1 name, then an empty value
        line = bytes((0x28 | length,)) + bytes.fromhex(octets) + b"\x00"
    for recorder in (None, EventLog().for_endpoint("client")):
        decoder = Decoder(recorder=recorder)
        assert_fails(
            lambda decoder=decoder: decoder.decode(0, b"\x00\x00" + line),
            DecompressionFailed,
            "7541#5.2",
            rule,
        )


@pytest.mark.parametrize(("octets", "rule"), MALFORMED_HUFFMAN)
@pytest.mark.parametrize("where", ["value", "name"])
def test_malformed_huffman_on_the_encoder_stream_is_encoder_stream_error(
    octets: str, rule: str, where: str
) -> None:
    length = len(octets) // 2
    if where == "value":  # Insert with static name 0, H=1 value
        instruction = bytes((0xC0, 0x80 | length)) + bytes.fromhex(octets)
    else:  # Insert with Literal Name, H=1 name, empty value
        instruction = bytes((0x60 | length,)) + bytes.fromhex(octets) + b"\x00"
    decoder = decoder_with()
    assert_fails(lambda: decoder.feed_encoder(instruction), EncoderStreamError, "7541#5.2", rule)


@pytest.mark.parametrize(
    "data",
    [
        prefixed_integer_of_2_to_the_62(0x00, 8) + b"\x00",  # Required Insert Count
        b"\x00" + prefixed_integer_of_2_to_the_62(0x00, 7),  # Delta Base
        b"\x00\x00" + prefixed_integer_of_2_to_the_62(0xC0, 6),  # static index
        b"\x00\x00" + prefixed_integer_of_2_to_the_62(0x50, 4),  # name index
        b"\x00\x00\x51" + prefixed_integer_of_2_to_the_62(0x00, 7),  # value length
    ],
)
def test_integer_of_2_to_the_62_in_a_field_section_is_decompression_failed(data: bytes) -> None:
    assert_fails(
        lambda: Decoder().decode(0, data),
        DecompressionFailed,
        "9204#4.1.1",
        "exceeds 2^62-1",
    )


@pytest.mark.parametrize(
    "data",
    [
        prefixed_integer_of_2_to_the_62(0x20, 5),  # capacity
        prefixed_integer_of_2_to_the_62(0xC0, 6),  # name index
        prefixed_integer_of_2_to_the_62(0x00, 5),  # duplicate index
        b"\xc0" + prefixed_integer_of_2_to_the_62(0x00, 7),  # value length
        prefixed_integer_of_2_to_the_62(0x40, 5),  # name length
    ],
)
def test_integer_of_2_to_the_62_on_the_encoder_stream_is_encoder_stream_error(
    data: bytes,
) -> None:
    decoder = decoder_with()
    assert_fails(
        lambda: decoder.feed_encoder(data), EncoderStreamError, "9204#4.1.1", "exceeds 2^62-1"
    )


def test_integer_padded_with_a_zero_continuation_byte_is_rejected() -> None:
    # RFC 7541 §5.1: 31 is "1f 00"; "1f 80 00" sends the same value with a useless byte,
    # which h3learn refuses as an implementation limit (RFC 9204 §7.4).
    assert_fails(
        lambda: Decoder().decode(0, bytes.fromhex("0000ff8000")),
        DecompressionFailed,
        "9204#7.4",
        "redundant zero continuation byte",
    )
    assert_fails(
        lambda: decoder_with().feed_encoder(bytes.fromhex("3f8000")),
        EncoderStreamError,
        "9204#7.4",
        "redundant zero continuation byte",
    )


def test_integer_longer_than_9_continuation_bytes_fails_where_it_was_read() -> None:
    """RFC 7541 §5.1 (limit in octet length): a field section loses only its stream (§7.4);
    on the encoder stream it is QPACK_ENCODER_STREAM_ERROR, whatever the buffer limit."""
    error = assert_fails(
        lambda: Decoder().decode(4, bytes.fromhex("0000ff") + b"\x80" * 9),
        DecompressionFailed,
        "7541#5.1",
        "9 continuation bytes",
    )
    assert isinstance(error, DecompressionFailed)
    assert error.beyond_limit and error.stream_id == 4
    decoder = decoder_with()
    assert decoder.feed_encoder(b"\x3f" + b"\x80" * 8).sections == []  # may still be 2^62-1
    assert_fails(
        lambda: decoder.feed_encoder(b"\x80"),
        EncoderStreamError,
        "7541#5.1",
        "9 continuation bytes",
    )


# -- §7.4: an unfinished instruction larger than any legal one --------------------------------


def test_oversized_unfinished_encoder_instruction_is_encoder_stream_error() -> None:
    decoder = decoder_with(capacity=100)
    # Insert with Literal Name announcing a 10,000-byte name: no entry that large can ever
    # fit a table of at most 100 bytes, so the decoder stops buffering it.
    header = wire(InsertWithLiteralName(b"x" * 10_000, b"", False, False))[:3]
    decoder.feed_encoder(header + b"x" * 400)  # still within what h3learn buffers
    assert_fails(
        lambda: decoder.feed_encoder(b"x" * 100),
        EncoderStreamError,
        "9204#7.4",
        "unfinished encoder instruction",
    )


def test_unfinished_instruction_that_could_still_fit_is_buffered() -> None:
    decoder = decoder_with(capacity=100)
    instruction = wire(InsertWithLiteralName(b"n" * 30, b"v" * 38, False, False))  # 100
    for byte in instruction[:-1]:
        assert decoder.feed_encoder(bytes((byte,))).sections == []
    assert decoder.table.insert_count == 0
    decoder.feed_encoder(instruction[-1:])
    assert decoder.table.insert_count == 1


def test_an_instruction_arriving_a_byte_at_a_time_is_parsed_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """RFC 9204 §7.4: the decoder reads an instruction's lengths, waits for all of it, and
    only then parses it. Parsing at every byte would Huffman-decode a long name again each
    time, work that grows with the square of the instruction's size."""
    from h3learn.qpack import decoder as decoder_module

    parsed = []
    parse = decoder_module.parse_encoder_instruction

    def counting_parse(reader: Any) -> Any:
        parsed.append(reader.position)
        return parse(reader)

    monkeypatch.setattr(decoder_module, "parse_encoder_instruction", counting_parse)
    decoder = decoder_with(capacity=4096)
    parsed.clear()
    instruction = wire(InsertWithLiteralName(b"n" * 1000, b"v" * 1000, True, True))
    for byte in instruction:
        decoder.feed_encoder(bytes((byte,)))
    assert decoder.table.insert_count == 1
    assert len(parsed) == 1
