"""RFC 9204 §3.2: the dynamic table.

The dynamic table is a first-in, first-out list of (name, value) entries that the encoder
fills through encoder instructions and both sides keep identical copies of. Its rules:

- §3.2.1: an entry's size is len(name) + len(value) + 32; the table's size is the sum.
- §3.2.2: the table starts with capacity 0. Before an entry is added, the oldest entries
  are evicted until the new one fits; an entry larger than the capacity is an error.
  Lowering the capacity evicts too. The encoder must never evict an entry that is not
  *evictable* (§2.1.1): one the decoder has not acknowledged, or one that a field section
  still awaiting acknowledgment refers to.
- §3.2.3: the capacity may never exceed the decoder's SETTINGS_QPACK_MAX_TABLE_CAPACITY.
- §3.2.4: every entry has an *absolute index*: 0 for the first entry ever inserted, 1 for
  the second, and so on; it never changes. The *insert count* is the number of inserts so
  far (so the newest entry has absolute index insert_count - 1).
- §3.2.5 and §3.2.6: instructions and field lines do not send absolute indexes but
  *relative* ones (counting back from the newest entry, or from the Base) and *post-base*
  ones (counting forward from the Base). The conversions are the three small functions at
  the end of this module.

The same class serves the encoder (``owner="local"``: the table this endpoint's encoder
fills) and the decoder (``owner="remote"``: the copy the peer's encoder fills). Every
insertion, eviction and capacity change is recorded as an event, so a learner can watch the
table change step by step.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from h3learn.events import NullRecorder, Recorder
from h3learn.wire.spans import display

#: RFC 9204 §3.2.1: bytes added to every entry's size for the implementation's bookkeeping.
ENTRY_OVERHEAD = 32


def entry_size(name: bytes, value: bytes) -> int:
    """RFC 9204 §3.2.1: the size an entry counts for in the dynamic table."""
    return len(name) + len(value) + ENTRY_OVERHEAD


@dataclass(frozen=True, slots=True)
class DynamicEntry:
    absolute_index: int
    name: bytes
    value: bytes

    @property
    def size(self) -> int:
        return entry_size(self.name, self.value)

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.absolute_index,
            "name": display(self.name),
            "value": display(self.value),
            "size": self.size,
        }


class DynamicTable:
    """One copy of a dynamic table; see the module docstring."""

    def __init__(
        self,
        maximum_capacity: int = 0,
        recorder: Recorder | None = None,
        owner: str = "local",
    ) -> None:
        #: RFC 9204 §3.2.3: the decoder's SETTINGS_QPACK_MAX_TABLE_CAPACITY.
        self.maximum_capacity = maximum_capacity
        #: RFC 9204 §3.2.2: the current capacity, set by Set Dynamic Table Capacity.
        self.capacity = 0
        #: RFC 9204 §3.2.1: the sum of the sizes of the entries present.
        self.size = 0
        #: RFC 9204 §3.2.4: the number of entries ever inserted.
        self.insert_count = 0
        self.recorder: Recorder = recorder if recorder is not None else NullRecorder()
        self.owner = owner
        self._entries: deque[DynamicEntry] = deque()  # oldest first

    # -- looking entries up ---------------------------------------------------------------

    @property
    def dropped_count(self) -> int:
        """How many entries have been evicted: the absolute index of the oldest one left."""
        return self.insert_count - len(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[DynamicEntry]:
        return iter(self._entries)

    def get(self, absolute_index: int) -> DynamicEntry | None:
        """The entry with this absolute index, or None if never inserted or evicted."""
        entries = self._entries
        position = absolute_index - self.insert_count + len(entries)
        if 0 <= position < len(entries):
            return entries[position]
        return None

    def evictions_to_fit(self, size: int, capacity: int | None = None) -> int | None:
        """How many of the oldest entries must go so ``size`` more bytes fit.

        Uses the current capacity unless another is given. None if the entry cannot fit
        even in an empty table.
        """
        capacity = self.capacity if capacity is None else capacity
        if size > capacity:
            return None
        free = capacity - self.size
        evicted = 0
        while free < size:
            free += self._entries[evicted].size
            evicted += 1
        return evicted

    # -- changing the table ---------------------------------------------------------------

    def set_capacity(self, capacity: int) -> list[DynamicEntry]:
        """RFC 9204 §3.2.2 and §4.3.1: change the capacity, evicting what no longer fits.

        The caller has checked the capacity against the maximum and, on the encoder side,
        that the evicted entries are evictable.
        """
        old = self.capacity
        self.capacity = capacity
        evicted = self._evict_until(capacity)
        if self.recorder.enabled:
            self.recorder.record(
                category="qpack",
                name="state_updated",
                stream_id=None,
                data={
                    "owner": self.owner,
                    "dynamic_table_capacity": capacity,
                    "dynamic_table_size": self.size,
                    "current_insert_count": self.insert_count,
                },
                rfc=("9204#3.2.2",),
                summary=f"{self.owner} dynamic table capacity {old} → {capacity}",
            )
        return evicted

    def insert(self, name: bytes, value: bytes) -> tuple[DynamicEntry, list[DynamicEntry]]:
        """RFC 9204 §3.2.2: evict the oldest entries until the new one fits, then add it.

        The caller has checked that the entry fits the capacity. Returns the new entry and
        the evicted ones.
        """
        size = entry_size(name, value)
        evicted = self._evict_until(self.capacity - size)
        entry = DynamicEntry(self.insert_count, name, value)
        self._entries.append(entry)
        self.size += size
        self.insert_count += 1
        if self.recorder.enabled:
            self.recorder.record(
                category="qpack",
                name="dynamic_table_updated",
                stream_id=None,
                data={
                    "owner": self.owner,
                    "update_type": "inserted",
                    "entries": [entry.to_json()],
                    "dynamic_table_size": self.size,
                    "current_insert_count": self.insert_count,
                },
                rfc=("9204#3.2.4", "9204#3.2.1"),
                summary=(
                    f"{self.owner} dynamic table: insert [{entry.absolute_index}]"
                    f" {display(name)}: {display(value)} ({size} bytes; table {self.size}"
                    f"/{self.capacity})"
                ),
            )
        return entry, evicted

    def _evict_until(self, limit: int) -> list[DynamicEntry]:
        evicted: list[DynamicEntry] = []
        while self.size > limit and self._entries:
            entry = self._entries.popleft()
            self.size -= entry.size
            evicted.append(entry)
        if evicted and self.recorder.enabled:
            indexes = ", ".join(str(entry.absolute_index) for entry in evicted)
            self.recorder.record(
                category="qpack",
                name="dynamic_table_updated",
                stream_id=None,
                data={
                    "owner": self.owner,
                    "update_type": "evicted",
                    "entries": [entry.to_json() for entry in evicted],
                    "dynamic_table_size": self.size,
                    "current_insert_count": self.insert_count,
                },
                rfc=("9204#3.2.2",),
                summary=f"{self.owner} dynamic table: evict [{indexes}] to make room",
            )
        return evicted

    def to_json(self) -> dict[str, Any]:
        return {
            "owner": self.owner,
            "capacity": self.capacity,
            "maximum_capacity": self.maximum_capacity,
            "size": self.size,
            "insert_count": self.insert_count,
            "entries": [entry.to_json() for entry in self._entries],
        }


# --- RFC 9204 §3.2.5 and §3.2.6: the three ways to count -------------------------------
#
#   absolute:            0   1   2   3   4   5        (fixed for the life of the entry)
#   encoder stream:      5   4   3   2   1   0        relative = insert_count - 1 - absolute
#   field line, Base=4:  3   2   1   0 | 0   1        relative before Base, post-base after


def absolute_from_encoder_relative(relative_index: int, insert_count: int) -> int:
    """RFC 9204 §3.2.5: on the encoder stream, relative index 0 is the newest entry."""
    return insert_count - 1 - relative_index


def absolute_from_relative(relative_index: int, base: int) -> int:
    """RFC 9204 §3.2.5: in a field line, relative index 0 is the entry just before Base."""
    return base - 1 - relative_index


def absolute_from_post_base(post_base_index: int, base: int) -> int:
    """RFC 9204 §3.2.6: post-base index 0 is the entry whose absolute index equals Base."""
    return base + post_base_index
