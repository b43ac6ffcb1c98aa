"""RFC 9204 §4.5.1: the prefix of an encoded field section.

Two integers: the Required Insert Count, sent modulo twice the most entries the table can
hold (§4.5.1.1), and the Base, sent as a sign bit and a Delta Base relative to it
(§4.5.1.2). The examples are the RFC's own; the window in which the modulo can be undone
is derived below from the table's limits, and Hypothesis checks every value in it.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from h3learn.events import FieldSpan
from h3learn.qpack.errors import DecompressionFailed, QpackErrorCode
from h3learn.qpack.field_lines import (
    FieldSectionPrefix,
    base_from_delta,
    decode_required_insert_count,
    delta_from_base,
    encode_required_insert_count,
    max_entries,
)
from h3learn.wire.errors import NeedMoreData
from h3learn.wire.prefixed_int import PREFIXED_INT_MAX
from h3learn.wire.spans import SpanReader, SpanWriter

# -- helpers --------------------------------------------------------------------------------


def assert_every_bit_labelled_once(raw: bytes, spans: tuple[FieldSpan, ...]) -> None:
    """Every bit of ``raw`` belongs to exactly one span (docs/events.md, "Field spans")."""
    owners = [[0] * 8 for _ in raw]
    for span in spans:
        for position in range(span.offset, span.offset + span.length):
            if position == span.offset and span.bit_offset is not None:
                assert span.bit_length is not None
                bits = range(span.bit_offset, span.bit_offset + span.bit_length)
            else:
                bits = range(8)
            for bit in bits:
                owners[position][bit] += 1
    assert all(counts == [1] * 8 for counts in owners), owners


def serialize(prefix: FieldSectionPrefix) -> SpanWriter:
    writer = SpanWriter()
    prefix.serialize(writer)
    return writer


# -- §4.5.1.1: MaxEntries ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("capacity", "entries"), [(0, 0), (31, 0), (32, 1), (100, 3), (220, 6), (4096, 128)]
)
def test_max_entries_is_the_capacity_divided_by_32_rounded_down(
    capacity: int, entries: int
) -> None:
    assert max_entries(capacity) == entries


# -- §4.5.1.1: encoding the Required Insert Count -----------------------------------------


def test_required_insert_count_zero_is_encoded_as_zero() -> None:
    assert encode_required_insert_count(0, 100) == 0
    assert decode_required_insert_count(0, 100, total_number_of_inserts=10) == 0


def test_rfc_example_table_of_100_bytes_encodes_modulo_6() -> None:
    # 100 bytes hold at most 3 entries: the count is sent modulo 2 * 3 = 6, plus one.
    assert [encode_required_insert_count(ric, 100) for ric in range(1, 14)] == [
        2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6, 1, 2,
    ]  # fmt: skip


def test_rfc_example_ten_inserts_received_and_encoded_4_means_9() -> None:
    assert decode_required_insert_count(4, 100, total_number_of_inserts=10) == 9
    assert encode_required_insert_count(9, 100) == 4


def test_appendix_b_prefixes_decode_to_the_counts_the_rfc_shows() -> None:
    # Table capacity 220: MaxEntries 6, modulo 12. B.2 "03" with 2 inserts is 2; B.4 "05"
    # with 4 inserts (the Duplicate having arrived) is 4.
    assert decode_required_insert_count(3, 220, total_number_of_inserts=2) == 2
    assert decode_required_insert_count(5, 220, total_number_of_inserts=4) == 4
    # A decoder still at 3 inserts reads the same "05" as 4: the section is blocked.
    assert decode_required_insert_count(5, 220, total_number_of_inserts=3) == 4


def test_each_encoded_value_names_one_count_in_the_window_after_ten_inserts() -> None:
    # MaxEntries 3, 10 inserts received: the window is 8..13 (see below), and the six
    # encoded values 1..6 cover it, wrapping around at 12.
    decoded = {
        encoded: decode_required_insert_count(encoded, 100, total_number_of_inserts=10)
        for encoded in range(1, 7)
    }
    assert decoded == {1: 12, 2: 13, 3: 8, 4: 9, 5: 10, 6: 11}


def test_wrap_around_on_a_long_lived_connection() -> None:
    # 4096 bytes: MaxEntries 128, modulo 256. After 1000 inserts an encoder 100 entries
    # ahead (count 1100) sends 1100 % 256 + 1 = 77, which is below the decoder's own
    # 1000 % 256 + 1 = 233: the decoder must see that the encoder wrapped once more.
    assert encode_required_insert_count(1100, 4096) == 77
    assert decode_required_insert_count(77, 4096, total_number_of_inserts=1000) == 1100
    # And a section needing only count 900 (the decoder is ahead) comes back as 900.
    assert (
        decode_required_insert_count(
            encode_required_insert_count(900, 4096), 4096, total_number_of_inserts=1000
        )
        == 900
    )


# The window. An entry the section refers to, absolute index RIC - 1, must still be in the
# decoder's table, which holds at most MaxEntries entries, the newest being
# TotalNumberOfInserts - 1: so RIC - 1 >= TotalNumberOfInserts - MaxEntries. And the
# encoder cannot be more than MaxEntries inserts ahead of the decoder: the entries the
# decoder has not acknowledged cannot be evicted (§2.1.1), so the encoder's table, which
# holds at most MaxEntries, holds all of them: RIC <= TotalNumberOfInserts + MaxEntries.
# Hence, with RIC >= 1 because 0 is sent as 0:
#
#     max(1, TotalNumberOfInserts - MaxEntries + 1) <= RIC <= TotalNumberOfInserts + MaxEntries
#
# 2 * MaxEntries consecutive values at most: each has a distinct residue modulo 2 * MaxEntries.


def window(capacity: int, total: int) -> range:
    entries = max_entries(capacity)
    return range(max(1, total - entries + 1), total + entries + 1)


@settings(max_examples=500)
@given(capacity=st.integers(32, 2**20), total=st.integers(0, 2**40), data=st.data())
def test_decode_undoes_encode_for_every_count_in_the_window(
    capacity: int, total: int, data: st.DataObject
) -> None:
    legal = window(capacity, total)
    required_insert_count = data.draw(st.integers(legal.start, legal.stop - 1))
    encoded = encode_required_insert_count(required_insert_count, capacity)
    assert 1 <= encoded <= 2 * max_entries(capacity)
    assert decode_required_insert_count(encoded, capacity, total) == required_insert_count


@settings(max_examples=300)
@given(capacity=st.integers(32, 2**12), total=st.integers(0, 2**20), data=st.data())
def test_every_encoded_value_decodes_into_the_window_or_fails(
    capacity: int, total: int, data: st.DataObject
) -> None:
    full_range = 2 * max_entries(capacity)
    encoded = data.draw(st.integers(1, full_range))
    try:
        decoded = decode_required_insert_count(encoded, capacity, total)
    except DecompressionFailed as error:
        # Only possible near the start, where the window is cut short by RIC >= 1.
        assert total < max_entries(capacity)
        assert error.rfc == "9204#4.5.1.1"
        return
    assert decoded in window(capacity, total)
    assert encode_required_insert_count(decoded, capacity) == encoded


@pytest.mark.parametrize(
    ("encoded", "capacity", "total", "why"),
    [
        (7, 100, 10, "larger than 2 * MaxEntries"),
        (1, 0, 0, "larger than 2 * MaxEntries"),  # no dynamic table: only 0 is possible
        (1, 31, 5, "larger than 2 * MaxEntries"),
        (5, 100, 0, "cannot have wrapped"),  # would be 4, but the encoder has at most 3
        (1, 100, 0, "must be encoded as 0"),  # would be 0
    ],
)
def test_encoded_insert_count_no_conformant_encoder_produces_fails(
    encoded: int, capacity: int, total: int, why: str
) -> None:
    with pytest.raises(DecompressionFailed) as caught:
        decode_required_insert_count(encoded, capacity, total)
    assert caught.value.code == QpackErrorCode.QPACK_DECOMPRESSION_FAILED
    assert caught.value.rfc == "9204#4.5.1.1"
    assert why in str(caught.value)


# -- §4.5.1.2: Base ---------------------------------------------------------------------


def test_rfc_example_ric_9_sign_1_delta_2_is_base_6() -> None:
    assert base_from_delta(9, sign=True, delta_base=2) == 6
    assert delta_from_base(9, 6) == (True, 2)


def test_sign_0_adds_delta_base_to_the_required_insert_count() -> None:
    assert base_from_delta(9, sign=False, delta_base=2) == 11
    assert delta_from_base(9, 11) == (False, 2)


def test_base_equal_to_the_required_insert_count_is_sign_0_delta_0() -> None:
    assert delta_from_base(4, 4) == (False, 0)
    assert base_from_delta(4, sign=False, delta_base=0) == 4


def test_appendix_b2_base_0_below_ric_2_is_sign_1_delta_1() -> None:
    assert delta_from_base(2, 0) == (True, 1)


@pytest.mark.parametrize(("ric", "delta"), [(9, 9), (9, 10), (1, 1), (0, 0), (0, 5)])
def test_sign_1_with_delta_base_not_below_the_count_is_invalid(ric: int, delta: int) -> None:
    with pytest.raises(DecompressionFailed) as caught:
        base_from_delta(ric, sign=True, delta_base=delta)
    assert caught.value.rfc == "9204#4.5.1.2"
    assert "negative" in str(caught.value)


@given(ric=st.integers(0, 2**62), base=st.integers(0, 2**62))
def test_base_survives_the_sign_and_delta_encoding(ric: int, base: int) -> None:
    sign, delta = delta_from_base(ric, base)
    assert delta >= 0
    assert base_from_delta(ric, sign, delta) == base


# -- §4.5.1: the two integers on the wire -------------------------------------------------


@pytest.mark.parametrize(
    ("wire", "prefix"),
    [
        ("0000", FieldSectionPrefix(0, False, 0)),  # Appendix B.1
        ("0381", FieldSectionPrefix(3, True, 1)),  # Appendix B.2
        ("0500", FieldSectionPrefix(5, False, 0)),  # Appendix B.4
        ("ff00ff00", FieldSectionPrefix(255, True, 127)),  # both prefixes full
        ("fe7f00", FieldSectionPrefix(254, False, 127)),
    ],
)
def test_prefix_bytes_match_the_rfc_layout(wire: str, prefix: FieldSectionPrefix) -> None:
    assert serialize(prefix).unit().hex() == wire
    reader = SpanReader(bytes.fromhex(wire))
    assert FieldSectionPrefix.parse(reader) == prefix
    assert reader.at_end()


def test_prefix_labels_the_sign_bit_inside_the_delta_base_byte() -> None:
    reader = SpanReader(bytes.fromhex("0381"))
    FieldSectionPrefix.parse(reader)
    spans = [(s.name, s.offset, s.bit_offset, s.bit_length, s.value) for s in reader.field_spans()]
    assert spans == [
        ("Required Insert Count (encoded)", 0, 0, 8, 3),
        ("S (sign)", 1, 0, 1, True),
        ("Delta Base", 1, 1, 7, 1),
    ]


prefixes = st.builds(
    FieldSectionPrefix,
    st.one_of(st.integers(0, 300), st.integers(0, PREFIXED_INT_MAX)),
    st.booleans(),
    st.one_of(st.integers(0, 300), st.integers(0, PREFIXED_INT_MAX)),
)


@settings(max_examples=300)
@given(prefixes)
def test_prefix_round_trips_with_the_same_labels_covering_every_bit(
    prefix: FieldSectionPrefix,
) -> None:
    writer = serialize(prefix)
    wire = writer.unit()
    reader = SpanReader(wire)
    assert FieldSectionPrefix.parse(reader) == prefix
    assert reader.at_end()
    assert reader.field_spans() == writer.field_spans()
    assert_every_bit_labelled_once(wire, reader.field_spans())
    assert FieldSectionPrefix.parse(SpanReader(wire, record=False)) == prefix


@settings(max_examples=100)
@given(prefixes)
def test_prefix_needs_every_byte_before_it_parses(prefix: FieldSectionPrefix) -> None:
    wire = serialize(prefix).unit()
    buffer = bytearray()
    for byte in wire:
        with pytest.raises(NeedMoreData):
            FieldSectionPrefix.parse(SpanReader(buffer))
        buffer.append(byte)
    assert FieldSectionPrefix.parse(SpanReader(buffer)) == prefix
