"""RFC 9204 §2.1: what the encoder remembers of the fields it has encoded, for its strategy.

RFC 9204 leaves it to the encoder which fields to insert into the dynamic table (§2.1). An
insert pays off only if the field is sent again while the entry is still in the table, so
this encoder judges a field by its recent past (encoder.py, step 4 of the strategy):

- a field seen *recently* (within about two tables' worth of fields) is likely to come
  again: the same user agent, the same host;
- a name whose values were repeats most of the time so far (``accept``, not ``:path``)
  is likely to repeat its next value too.

`FieldHistory` keeps both, counted in entry sizes (RFC 9204 §3.2.1) so that a field's
weight matches the room it would take in the table.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from h3learn.qpack.dynamic_table import entry_size

Header = tuple[bytes, bytes]

#: How far back "seen recently" reaches: a field is recent while fewer than RECENT_SHARE
#: times the capacity worth of fields (counted by entry size) have been encoded since it was
#: last seen (a first-in, first-out table holding all of them would have evicted it by then).
RECENT_SHARE = 2.0
#: ... but at least this many bytes, so that a small table still looks a few sections back.
MINIMUM_RECENT_WINDOW = 1024
#: When a section may block, a field not seen recently is inserted anyway if at least this
#: share of its name's earlier values were repeats of recent values.
REPEATING_NAME_SHARE = 0.8


@dataclass(slots=True)
class RecentFields:
    """The fields encoded lately, for the "seen recently" test of the strategy.

    Each field is stamped with a running total of the entry sizes (RFC 9204 §3.2.1) of all
    the fields encoded before it. A field is *recent* while fewer than ``window`` bytes of
    fields have been encoded since it was last seen.
    """

    window: int = 0
    seen_bytes: int = 0
    last_seen: dict[Header, int] = field(default_factory=dict)
    order: deque[tuple[Header, int]] = field(default_factory=deque)

    def __contains__(self, header: Header) -> bool:
        stamp = self.last_seen.get(header)
        return stamp is not None and self.seen_bytes - stamp < self.window

    def add(self, header: Header) -> None:
        self.last_seen[header] = self.seen_bytes
        self.order.append((header, self.seen_bytes))
        self.seen_bytes += entry_size(*header)
        while self.order and self.seen_bytes - self.order[0][1] >= self.window:
            old, stamp = self.order.popleft()
            if self.last_seen.get(old) == stamp:
                del self.last_seen[old]


@dataclass(slots=True)
class NameStatistics:
    """How often a name's values were repeats of values seen recently."""

    sightings: int = 0
    repeats: int = 0


class FieldHistory:
    """The recent fields, and how often each name's values were repeats."""

    def __init__(self) -> None:
        self.recent = RecentFields()
        self.name_statistics: dict[bytes, NameStatistics] = {}

    def set_window(self, capacity: int) -> None:
        """Size "recently" for a table of ``capacity`` bytes (see RECENT_SHARE)."""
        self.recent.window = max(int(RECENT_SHARE * capacity), MINIMUM_RECENT_WINDOW)

    def remember(self, name: bytes, value: bytes) -> None:
        """Note a field the encoder has just encoded."""
        statistics = self.name_statistics.get(name)
        if statistics is None:
            statistics = self.name_statistics[name] = NameStatistics()
        statistics.sightings += 1
        if (name, value) in self.recent:
            statistics.repeats += 1
        self.recent.add((name, value))

    def is_recent(self, name: bytes, value: bytes) -> bool:
        return (name, value) in self.recent

    def values_usually_repeat(self, name: bytes) -> bool:
        """Were at least REPEATING_NAME_SHARE of the name's values so far recent repeats?"""
        statistics = self.name_statistics.get(name)
        if statistics is None or not statistics.sightings:
            return False
        return statistics.repeats >= REPEATING_NAME_SHARE * statistics.sightings

    def name_seen(self, name: bytes) -> bool:
        statistics = self.name_statistics.get(name)
        return statistics is not None and statistics.sightings > 0
