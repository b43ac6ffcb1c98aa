"""RFC 9204 §3.2: the dynamic table.

Entry sizes (§3.2.1), eviction of the oldest entries before an insert and when the capacity
drops (§3.2.2), absolute indexes that never change (§3.2.4), and the two relative ways of
counting used on the wire (§3.2.5, §3.2.6). The numbers come from the tables of RFC 9204
Appendix B, whose sizes (106, 160, 217, 215) the code must reproduce.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from h3learn.events import EventLog
from h3learn.qpack.dynamic_table import (
    ENTRY_OVERHEAD,
    DynamicTable,
    absolute_from_encoder_relative,
    absolute_from_post_base,
    absolute_from_relative,
    entry_size,
)

AUTHORITY = (b":authority", b"www.example.com")  # 10 + 15 + 32 = 57
PATH = (b":path", b"/sample/path")  # 5 + 12 + 32 = 49
CUSTOM = (b"custom-key", b"custom-value")  # 10 + 12 + 32 = 54
CUSTOM2 = (b"custom-key", b"custom-value2")  # 10 + 13 + 32 = 55


def contents(table: DynamicTable) -> list[tuple[int, bytes, bytes]]:
    return [(entry.absolute_index, entry.name, entry.value) for entry in table]


def appendix_b_table() -> DynamicTable:
    """The table of RFC 9204 Appendix B.4: capacity 220, four entries, size 217."""
    table = DynamicTable(maximum_capacity=220)
    table.set_capacity(220)
    for name, value in (AUTHORITY, PATH, CUSTOM, AUTHORITY):
        table.insert(name, value)
    return table


# -- §3.2.1: entry size ---------------------------------------------------------------------


def test_entry_size_is_name_length_plus_value_length_plus_32() -> None:
    assert ENTRY_OVERHEAD == 32
    assert entry_size(*AUTHORITY) == 57
    assert entry_size(*PATH) == 49
    assert entry_size(b"", b"") == 32


def test_entry_size_counts_bytes_not_characters() -> None:
    # §3.2.1: the lengths of the name and value as octets, before any Huffman coding.
    assert entry_size(b"x", "é".encode()) == 1 + 2 + 32


def test_table_size_is_the_sum_of_entry_sizes_as_in_appendix_b() -> None:
    table = DynamicTable(maximum_capacity=220)
    table.set_capacity(220)
    table.insert(*AUTHORITY)
    table.insert(*PATH)
    assert table.size == 106
    table.insert(*CUSTOM)
    assert table.size == 160
    table.insert(*AUTHORITY)
    assert table.size == 217


# -- §3.2.2: capacity and eviction ------------------------------------------------------------


def test_table_starts_empty_with_capacity_zero() -> None:
    table = DynamicTable(maximum_capacity=4096)
    assert table.capacity == 0
    assert table.size == 0
    assert table.insert_count == 0
    assert len(table) == 0


def test_insert_evicts_the_oldest_entry_first_as_in_appendix_b5() -> None:
    table = appendix_b_table()
    entry, evicted = table.insert(*CUSTOM2)
    assert [e.absolute_index for e in evicted] == [0]
    assert entry.absolute_index == 4
    assert table.size == 215
    assert contents(table) == [
        (1, *PATH),
        (2, *CUSTOM),
        (3, *AUTHORITY),
        (4, *CUSTOM2),
    ]


def test_insert_evicts_only_until_the_new_entry_fits() -> None:
    table = DynamicTable(maximum_capacity=200)
    table.set_capacity(200)
    for number in range(5):
        table.insert(b"n%d" % number, b"")  # 34 bytes each: 170 in all
    _, evicted = table.insert(b"x" * 30, b"")  # 62 bytes: 170 - 200 + 62 = 32 to free
    assert [e.absolute_index for e in evicted] == [0]
    assert table.size == 170 - 34 + 62


def test_entry_exactly_as_large_as_the_capacity_empties_the_table() -> None:
    table = DynamicTable(maximum_capacity=100)
    table.set_capacity(100)
    table.insert(b"a", b"b")
    _, evicted = table.insert(b"n" * 30, b"v" * 38)  # 30 + 38 + 32 = 100
    assert [e.absolute_index for e in evicted] == [0]
    assert contents(table) == [(1, b"n" * 30, b"v" * 38)]
    assert table.size == table.capacity == 100


def test_duplicate_entries_are_allowed() -> None:
    # §3.2: the table can hold the same name and value twice.
    table = appendix_b_table()
    assert contents(table)[0][1:] == contents(table)[3][1:]


def test_empty_values_are_allowed() -> None:
    table = DynamicTable(maximum_capacity=100)
    table.set_capacity(100)
    entry, _ = table.insert(b"accept", b"")
    assert table.get(0) == entry
    assert entry.size == 6 + 32


def test_lowering_the_capacity_evicts_oldest_entries_until_the_size_fits() -> None:
    table = appendix_b_table()  # 57, 49, 54, 57
    evicted = table.set_capacity(120)
    assert [e.absolute_index for e in evicted] == [0, 1]
    assert table.size == 54 + 57
    assert table.capacity == 120


def test_raising_the_capacity_evicts_nothing() -> None:
    table = appendix_b_table()
    assert table.set_capacity(220) == []
    assert table.set_capacity(100) != []
    assert table.set_capacity(220) == []


def test_capacity_zero_clears_the_table_and_can_be_restored() -> None:
    table = appendix_b_table()
    evicted = table.set_capacity(0)
    assert [e.absolute_index for e in evicted] == [0, 1, 2, 3]
    assert len(table) == 0 and table.size == 0
    table.set_capacity(220)
    entry, _ = table.insert(*PATH)
    assert entry.absolute_index == 4  # absolute indexes go on from where they were


# -- §3.2.4: absolute indexes and lookup ---------------------------------------------------


def test_absolute_indexes_count_every_insert_and_never_change() -> None:
    table = appendix_b_table()
    before = {entry.absolute_index: (entry.name, entry.value) for entry in table}
    table.insert(*CUSTOM2)  # evicts 0
    for entry in table:
        if entry.absolute_index in before:
            assert (entry.name, entry.value) == before[entry.absolute_index]
    assert table.insert_count == 5
    assert table.dropped_count == 1


def test_get_finds_entries_by_absolute_index() -> None:
    table = appendix_b_table()
    for absolute, name, value in contents(table):
        entry = table.get(absolute)
        assert entry is not None
        assert (entry.name, entry.value) == (name, value)


def test_get_of_an_evicted_entry_is_none() -> None:
    table = appendix_b_table()
    table.insert(*CUSTOM2)
    assert table.get(0) is None
    assert table.get(1) is not None


def test_get_of_an_entry_not_yet_inserted_or_negative_is_none() -> None:
    table = appendix_b_table()
    assert table.get(4) is None
    assert table.get(2**62) is None
    assert table.get(-1) is None


# -- evictions_to_fit (the encoder's question before an insert) ----------------------------


def test_evictions_to_fit_is_zero_when_the_entry_fits_in_the_free_space() -> None:
    table = appendix_b_table()  # 217 of 220
    assert table.evictions_to_fit(3) == 0


def test_evictions_to_fit_counts_the_oldest_entries_to_evict() -> None:
    table = appendix_b_table()
    assert table.evictions_to_fit(4) == 1  # 57 freed
    assert table.evictions_to_fit(entry_size(*CUSTOM2)) == 1
    assert table.evictions_to_fit(3 + 57 + 1) == 2
    assert table.evictions_to_fit(220) == 4


def test_evictions_to_fit_is_none_for_an_entry_larger_than_the_capacity() -> None:
    table = appendix_b_table()
    assert table.evictions_to_fit(221) is None
    assert DynamicTable(maximum_capacity=4096).evictions_to_fit(32) is None  # capacity 0


def test_evictions_to_fit_can_ask_about_another_capacity() -> None:
    table = appendix_b_table()
    assert table.evictions_to_fit(0, capacity=120) == 2
    assert table.evictions_to_fit(57, capacity=220) == 1
    assert table.evictions_to_fit(40, capacity=30) is None
    assert table.capacity == 220 and len(table) == 4  # asking changes nothing


def test_evictions_to_fit_agrees_with_what_insert_evicts() -> None:
    table = appendix_b_table()
    predicted = table.evictions_to_fit(entry_size(*CUSTOM2))
    _, evicted = table.insert(*CUSTOM2)
    assert predicted == len(evicted)


# -- §3.2.5 and §3.2.6: relative and post-base indexes -------------------------------------


def test_encoder_stream_relative_index_counts_back_from_the_newest_entry() -> None:
    # Appendix B.4: Duplicate (Relative Index = 2) with Insert Count 3 is absolute 0.
    assert absolute_from_encoder_relative(2, insert_count=3) == 0
    # Appendix B.5: Relative Index 1 with Insert Count 4 is absolute 2.
    assert absolute_from_encoder_relative(1, insert_count=4) == 2
    assert absolute_from_encoder_relative(0, insert_count=4) == 3


def test_field_line_relative_index_counts_back_from_base_minus_one() -> None:
    # Appendix B.4: Base 4, relative 0 is absolute 3 and relative 1 is absolute 2.
    assert absolute_from_relative(0, base=4) == 3
    assert absolute_from_relative(1, base=4) == 2


def test_post_base_index_counts_forward_from_base() -> None:
    # Appendix B.2: Base 0, post-base 0 and 1 are absolute 0 and 1.
    assert absolute_from_post_base(0, base=0) == 0
    assert absolute_from_post_base(1, base=0) == 1


def test_base_example_of_section_4_5_1_2() -> None:
    # RIC 9, Base 6: relative 1 is the fifth entry added (absolute 4), post-base 1 the
    # eighth (absolute 7).
    assert absolute_from_relative(1, base=6) == 4
    assert absolute_from_post_base(1, base=6) == 7


@given(
    insert_count=st.integers(1, 2**62),
    data=st.data(),
)
def test_encoder_relative_index_and_absolute_index_are_mirror_images(
    insert_count: int, data: st.DataObject
) -> None:
    # §3.2.5 figure: absolute n-1 is relative 0 and absolute d is relative n-d-1.
    absolute = data.draw(st.integers(0, insert_count - 1))
    relative = insert_count - 1 - absolute
    assert absolute_from_encoder_relative(relative, insert_count) == absolute


@given(base=st.integers(0, 2**62), absolute=st.integers(0, 2**62))
def test_every_absolute_index_has_exactly_one_field_line_form(base: int, absolute: int) -> None:
    # §3.2.5 and §3.2.6: below Base a relative index, at or above Base a post-base index.
    if absolute < base:
        assert absolute_from_relative(base - 1 - absolute, base) == absolute
    else:
        assert absolute_from_post_base(absolute - base, base) == absolute


# -- events -----------------------------------------------------------------------------


def test_inserts_evictions_and_capacity_changes_are_recorded_as_events() -> None:
    log = EventLog()
    table = DynamicTable(maximum_capacity=220, recorder=log.for_endpoint("client"), owner="remote")
    table.set_capacity(220)
    for name, value in (AUTHORITY, PATH, CUSTOM, AUTHORITY, CUSTOM2):
        table.insert(name, value)
    kinds = [(event.name, event.data.get("update_type")) for event in log.events]
    assert kinds == [
        ("state_updated", None),
        *[("dynamic_table_updated", "inserted")] * 4,
        ("dynamic_table_updated", "evicted"),
        ("dynamic_table_updated", "inserted"),
    ]
    evicted = log.events[5].data
    assert evicted["owner"] == "remote"
    assert [entry["index"] for entry in evicted["entries"]] == [0]
    inserted = log.events[6].data
    assert inserted["entries"] == [
        {"index": 4, "name": "custom-key", "value": "custom-value2", "size": 55}
    ]
    assert inserted["dynamic_table_size"] == 215
    assert inserted["current_insert_count"] == 5
    assert all(event.endpoint == "client" for event in log.events)


def test_to_json_lists_entries_oldest_first_with_absolute_indexes() -> None:
    table = appendix_b_table()
    state = table.to_json()
    assert state["capacity"] == 220 and state["size"] == 217 and state["insert_count"] == 4
    assert [entry["index"] for entry in state["entries"]] == [0, 1, 2, 3]


# -- a model of the table ---------------------------------------------------------------

operations = st.lists(
    st.one_of(
        st.tuples(st.just("insert"), st.binary(max_size=40), st.binary(max_size=60)),
        st.tuples(st.just("capacity"), st.integers(0, 300)),
    ),
    max_size=40,
)


@settings(max_examples=150)
@given(operations)
def test_table_behaves_like_a_fifo_list_bounded_by_its_capacity(ops: list[tuple]) -> None:
    table = DynamicTable(maximum_capacity=300)
    model: list[tuple[int, bytes, bytes]] = []
    inserted = 0
    for op in ops:
        if op[0] == "capacity":
            table.set_capacity(op[1])
        else:
            _, name, value = op
            if entry_size(name, value) > table.capacity:
                continue  # the decoder rejects these before asking the table (§3.2.2)
            model.append((inserted, name, value))
            inserted += 1
            table.insert(name, value)
        while sum(entry_size(n, v) for _, n, v in model) > table.capacity:
            model.pop(0)
        assert contents(table) == model
        assert table.size == sum(entry_size(n, v) for _, n, v in model)
        assert table.size <= table.capacity
        assert table.insert_count == inserted
