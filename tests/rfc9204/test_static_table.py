"""RFC 9204 §3.1 and Appendix A: the static table.

Ninety-nine entries, numbered from 0 (QPACK, unlike HPACK, starts at 0), each a name and a
possibly empty value. The spot checks below are read off Appendix A; the cross-check asks
pylsqpack (ls-qpack, an independent implementation) to encode every entry: with no dynamic
table it can only answer with an Indexed Field Line, T=1, carrying the entry's index.
"""

from __future__ import annotations

import pylsqpack
import pytest

from h3learn.qpack.static_table import (
    STATIC_INDEX_BY_FIELD,
    STATIC_INDEX_BY_NAME,
    STATIC_TABLE,
    STATIC_TABLE_SIZE,
    static_entry,
)
from h3learn.wire.prefixed_int import parse_prefixed_int

#: RFC 9204 §4.5.2: the first two bits of an Indexed Field Line that refers to the static
#: table: the pattern 1, then T=1.
INDEXED_STATIC_PATTERN = 0b11
#: The Index of an Indexed Field Line fills the remaining six bits of the first byte.
INDEX_PREFIX_BITS = 6


def test_static_table_has_99_entries() -> None:
    assert STATIC_TABLE_SIZE == 99
    assert len(STATIC_TABLE) == 99


def test_static_table_indexes_are_explicit_and_run_from_0_to_98() -> None:
    assert [index for index, _, _ in STATIC_TABLE] == list(range(99))


@pytest.mark.parametrize(
    ("index", "name", "value"),
    [
        (0, b":authority", b""),
        (1, b":path", b"/"),
        (15, b":method", b"CONNECT"),
        (17, b":method", b"GET"),
        (25, b":status", b"200"),
        (31, b"accept-encoding", b"gzip, deflate, br"),
        (63, b":status", b"100"),
        (72, b"accept-language", b""),
        (85, b"content-security-policy", b"script-src 'none'; object-src 'none'; base-uri 'none'"),
        (95, b"user-agent", b""),
        (98, b"x-frame-options", b"sameorigin"),
    ],
)
def test_static_table_entries_match_appendix_a(index: int, name: bytes, value: bytes) -> None:
    assert static_entry(index) == (name, value)


def test_static_table_names_are_lowercase_and_values_may_be_empty() -> None:
    # RFC 9204 §3.1: every entry has a name and a value; values can be empty.
    for _, name, _ in STATIC_TABLE:
        assert name and name == name.lower()
    assert sum(1 for _, _, value in STATIC_TABLE if value == b"") == 21


def test_static_table_holds_no_pair_twice() -> None:
    pairs = [(name, value) for _, name, value in STATIC_TABLE]
    assert len(set(pairs)) == len(pairs)


@pytest.mark.parametrize("index", [-1, 99, 100, 2**62 - 1])
def test_static_index_outside_0_to_98_has_no_entry(index: int) -> None:
    assert static_entry(index) is None


def test_lookup_by_field_finds_the_index_of_each_pair() -> None:
    for index, name, value in STATIC_TABLE:
        assert STATIC_INDEX_BY_FIELD[(name, value)] == index


def test_lookup_by_name_finds_the_lowest_index_with_that_name() -> None:
    assert STATIC_INDEX_BY_NAME[b":method"] == 15
    assert STATIC_INDEX_BY_NAME[b":status"] == 24  # 24-28 come before 63-71
    assert STATIC_INDEX_BY_NAME[b"x-frame-options"] == 97
    for name, index in STATIC_INDEX_BY_NAME.items():
        assert STATIC_TABLE[index][1] == name
        assert all(entry_name != name for _, entry_name, _ in STATIC_TABLE[:index])


@pytest.mark.parametrize("index", range(99))
def test_pylsqpack_encodes_each_entry_as_an_indexed_static_field_line(index: int) -> None:
    _, name, value = STATIC_TABLE[index]
    encoder_stream, field_section = pylsqpack.Encoder().encode(0, [(name, value)])
    assert encoder_stream == b""
    # Prefix 00 00: Required Insert Count 0, Base 0 (RFC 9204 §4.5.1).
    assert field_section[:2] == b"\x00\x00"
    first = field_section[2]
    assert first >> INDEX_PREFIX_BITS == INDEXED_STATIC_PATTERN
    decoded_index, end = parse_prefixed_int(field_section, 2, INDEX_PREFIX_BITS)
    assert end == len(field_section)
    assert decoded_index == index
