"""RFC 9204 §2.1, §3.2 and RFC 9114 §7.2.4: what one endpoint knows, as the replay keeps it.

`EndpointState` is one endpoint's view at a step of a trace: its two copies of a dynamic
table (RFC 9204 §3.2: ``local``, its encoder's, and ``remote``, its decoder's, each a
`TableState`), the encoder's Known Received Count (RFC 9204 §2.1.4) and the field sections
still awaiting their Section Acknowledgment (`UnacknowledgedSection`, RFC 9204 §2.1.1), the
streams its decoder holds blocked (RFC 9204 §2.2.1), the SETTINGS each side sent (RFC 9114
§7.2.4), its streams, its errors, and what it knows of the connection as a whole
(`ConnectionState`: GOAWAY, RFC 9114 §5.2; server push, §4.6; the close, §5.3). The rules
that change these records, one per event, are in replay_qpack.py, replay_http3.py and
replay_connection.py; replay.py applies them.

`endpoint_json` gives the record's JSON form, the answer's ``client`` and ``server``, and
adds what is derived rather than recorded (replay.py's docstring, "Derived"): the marks
``unacknowledged``, ``referenced_by``, ``received`` and ``evictable`` on each entry of the
encoder's table (RFC 9204 §2.1.1), and each table's ``maximum_capacity``, its decoder's
SETTINGS_QPACK_MAX_TABLE_CAPACITY (RFC 9204 §3.2.3).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, TypeGuard

#: SETTINGS_QPACK_MAX_TABLE_CAPACITY (RFC 9204 §5): the maximum for the peer's encoder.
QPACK_MAX_TABLE_CAPACITY = 0x01


@dataclass(frozen=True, slots=True)
class UnacknowledgedSection:
    """A field section the encoder sent that still awaits its Section Acknowledgment."""

    stream_id: int
    required_insert_count: int
    references: tuple[int, ...]


@dataclass(slots=True)
class TableState:
    """One copy of a dynamic table (RFC 9204 §3.2): ``local`` (our encoder's) or ``remote``."""

    owner: str
    capacity: int = 0
    size: int = 0
    insert_count: int = 0
    #: absolute index -> {index, name, value, size}; oldest first.
    entries: dict[int, dict[str, Any]] = field(default_factory=dict)
    inserted: list[dict[str, Any]] = field(default_factory=list)
    evicted: list[dict[str, Any]] = field(default_factory=list)

    def copy(self) -> TableState:
        # Entry dicts are never changed once stored, so sharing them is safe.
        return TableState(
            self.owner, self.capacity, self.size, self.insert_count, dict(self.entries)
        )


#: The two directions of a control frame: this endpoint's own, and the peer's.
DIRECTIONS = ("sent", "received")


@dataclass(frozen=True, slots=True)
class PushIdHistory:
    """The push IDs seen, as an immutable chain: the newest, and the history before it.

    The replay copies an endpoint's state at every snapshot; a chain is shared by those
    copies instead of copied, so a trace of many pushes costs memory and time in
    proportion to its pushes (a list or a set copied into each snapshot would cost their
    square).
    """

    push_id: int
    earlier: PushIdHistory | None = None

    @staticmethod
    def add(history: PushIdHistory | None, push_id: int) -> PushIdHistory:
        return PushIdHistory(push_id, history)

    @staticmethod
    def in_order(history: PushIdHistory | None) -> list[int]:
        """Oldest first, each once."""
        newest_first = []
        while history is not None:
            newest_first.append(history.push_id)
            history = history.earlier
        return list(dict.fromkeys(reversed(newest_first)))


@dataclass(slots=True)
class ConnectionState:
    """RFC 9114 §5.2, §5.3 and §4.6: what one endpoint knows of the connection as a whole.

    Each record is keyed by direction, ``sent`` (frames this endpoint created) and
    ``received`` (frames it parsed): the identifier of the latest GOAWAY (§5.2, §7.2.6; it
    may not increase), the latest MAX_PUSH_ID (§7.2.7; it may not decrease; a client sends
    it, a server receives it), the push IDs promised by PUSH_PROMISE (§7.2.5) and those cancelled by
    CANCEL_PUSH (§7.2.3), in order, each once. ``closed`` is the event that ended the
    connection (§5.3, §8): a clean close or a connection error, None while it is open.
    """

    goaway: dict[str, int | None] = field(default_factory=lambda: dict.fromkeys(DIRECTIONS))
    max_push_id: dict[str, int | None] = field(default_factory=lambda: dict.fromkeys(DIRECTIONS))
    pushes_promised: dict[str, PushIdHistory | None] = field(
        default_factory=lambda: dict.fromkeys(DIRECTIONS)
    )
    pushes_cancelled: dict[str, PushIdHistory | None] = field(
        default_factory=lambda: dict.fromkeys(DIRECTIONS)
    )
    closed: dict[str, Any] | None = None

    def copy(self) -> ConnectionState:
        return ConnectionState(
            dict(self.goaway),
            dict(self.max_push_id),
            dict(self.pushes_promised),  # the histories are shared: never changed in place
            dict(self.pushes_cancelled),
            self.closed,  # replaced, never changed in place
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "goaway": dict(self.goaway),
            "max_push_id": dict(self.max_push_id),
            "pushes_promised": {
                side: PushIdHistory.in_order(ids) for side, ids in self.pushes_promised.items()
            },
            "pushes_cancelled": {
                side: PushIdHistory.in_order(ids) for side, ids in self.pushes_cancelled.items()
            },
            "closed": copy.deepcopy(self.closed),
        }


@dataclass(slots=True)
class EndpointState:
    """What one endpoint knows."""

    name: str
    local: TableState = field(default_factory=lambda: TableState("local"))
    remote: TableState = field(default_factory=lambda: TableState("remote"))
    #: RFC 9204 §2.1.4: inserts this endpoint's encoder knows the peer's decoder has.
    known_received_count: int = 0
    #: The decoder side of the same count: inserts this endpoint's decoder has announced.
    acknowledged_insert_count: int = 0
    unacknowledged: dict[int, list[UnacknowledgedSection]] = field(default_factory=dict)
    #: Streams this endpoint's decoder holds blocked -> their Required Insert Count.
    blocked: dict[int, int] = field(default_factory=dict)
    #: The Required Insert Count of the last section decoded on each stream.
    decoded: dict[int, int] = field(default_factory=dict)
    #: A decoder instruction the encoder has parsed; its effect comes with state_updated.
    pending: dict[str, Any] | None = None
    settings: dict[str, list[dict[str, Any]] | None] = field(
        default_factory=lambda: {"local": None, "remote": None}
    )
    streams: dict[int, dict[str, Any]] = field(default_factory=dict)
    errors: list[dict[str, Any]] = field(default_factory=list)
    connection: ConnectionState = field(default_factory=ConnectionState)

    def copy(self) -> EndpointState:
        return EndpointState(
            name=self.name,
            local=self.local.copy(),
            remote=self.remote.copy(),
            known_received_count=self.known_received_count,
            acknowledged_insert_count=self.acknowledged_insert_count,
            unacknowledged={stream: list(s) for stream, s in self.unacknowledged.items()},
            blocked=dict(self.blocked),
            decoded=dict(self.decoded),
            pending=self.pending,
            settings=dict(self.settings),
            streams={stream: dict(info) for stream, info in self.streams.items()},
            errors=list(self.errors),
            connection=self.connection.copy(),
        )

    def table(self, owner: Any) -> TableState | None:
        return self.local if owner == "local" else self.remote if owner == "remote" else None


def endpoint_json(ep: EndpointState) -> dict[str, Any]:
    sections = [s for stream_sections in ep.unacknowledged.values() for s in stream_sections]
    referenced_by: dict[int, list[int]] = {}
    for section in sections:
        for index in section.references:
            streams = referenced_by.setdefault(index, [])
            if section.stream_id not in streams:
                streams.append(section.stream_id)
    local_entries = []
    for index, entry in ep.local.entries.items():
        streams = sorted(referenced_by.get(index, []))
        received = index < ep.known_received_count
        local_entries.append(
            dict(entry)
            | {
                "unacknowledged": bool(streams),
                "referenced_by": streams,
                "received": received,
                "evictable": received and not streams,
            }
        )
    return {
        "qpack": {
            "local_table": _table_json(ep.local, local_entries, _max_capacity(ep, "remote")),
            "remote_table": _table_json(
                ep.remote, [dict(e) for e in ep.remote.entries.values()], _max_capacity(ep, "local")
            ),
            "known_received_count": ep.known_received_count,
            "acknowledged_insert_count": ep.acknowledged_insert_count,
            "blocked_streams": sorted(ep.blocked),
            "blocking_streams": sorted(
                {s.stream_id for s in sections if s.required_insert_count > ep.known_received_count}
            ),
            "unacknowledged_sections": [
                {
                    "stream_id": s.stream_id,
                    "required_insert_count": s.required_insert_count,
                    "references": list(s.references),
                }
                for s in sections
            ],
        },
        "settings": copy.deepcopy(ep.settings),
        "streams": {str(stream): dict(info) for stream, info in sorted(ep.streams.items())},
        "errors": copy.deepcopy(ep.errors),
        "connection": ep.connection.to_json(),
    }


def _table_json(
    table: TableState, entries: list[dict[str, Any]], maximum: int | None
) -> dict[str, Any]:
    return {
        "owner": table.owner,
        "capacity": table.capacity,
        "maximum_capacity": maximum,
        "size": table.size,
        "insert_count": table.insert_count,
        "entries": entries,
        "evicted_at_this_step": [dict(entry) for entry in table.evicted],
        "inserted_at_this_step": [dict(entry) for entry in table.inserted],
    }


def _max_capacity(ep: EndpointState, whose_settings: str) -> int | None:
    """RFC 9204 §3.2.3: a table's maximum is its decoder's SETTINGS_QPACK_MAX_TABLE_CAPACITY."""
    settings = ep.settings[whose_settings]
    if settings is None:
        return None  # not known yet
    for setting in settings:
        if setting.get("id") == QPACK_MAX_TABLE_CAPACITY and is_int(setting.get("value")):
            value: int = setting["value"]
            return value
    return 0  # left at its default (RFC 9204 §5)


def is_int(value: Any) -> TypeGuard[int]:
    """An integer from a file: JSON's true and false are not numbers here."""
    return isinstance(value, int) and not isinstance(value, bool)
