"""Replay: the state of both endpoints after any step of a trace, rebuilt from its events.

A learner steps through a trace forwards and backwards; at every step the UI shows what
each endpoint knows (RFC 9204 §2 and §3.2 for QPACK, RFC 9114 §6 and §7.2.4 for HTTP/3)
and highlights what the step changed. `Replay(events).state_after(step)` answers with a
JSON-able dict. It is a pure function of the events: no encoder, decoder or connection is
run, so it works the same on lessons, live captures and imported qlog files.

What each event contributes (docs/events.md lists the events):

    qpack dynamic_table_updated   entries inserted into / evicted from the local or remote
                                  table; its size and insert count
    qpack state_updated           a table's capacity; the encoder's Known Received Count,
                                  and the decoder instruction (parsed just before) that
                                  acknowledged or cancelled its field sections
    qpack headers_encoded         a field section with dynamic references now awaits its
                                  Section Acknowledgment (RFC 9204 §2.1.1, §4.4.1)
    qpack instruction_created     the decoder's own Section Acknowledgment, Insert Count
                                  Increment or Stream Cancellation (what it told the peer)
    qpack stream_state_updated    a stream blocked on / unblocked from inserts (RFC 9204 §2.2.1)
    http3 parameters_set          local or remote SETTINGS
    http3 parameters_restored     a resuming client's remembered copy of the server's
                                  SETTINGS, in force until the new ones arrive (RFC 9114
                                  §7.2.4.2)
    http3 early_data_decision     on the client: the server settings in force once 0-RTT
                                  was accepted (the remembered ones) or refused (defaults)
    http3 stream_type_set         a stream's type and who opened it
    http3 stream_state_updated    a request or push stream's state (RFC 9114 §4.1)
    http3 frame_*                 a stream seen for the first time (type from its ID)
    http3 stream/connection_error the error list (a stream error also resets the stream)
    http3 reset_stream            this endpoint abandoned sending on a stream: "reset"
    http3 stop_sending            a stream the endpoint asked the peer to stop sending on
                                  ("stop_sending sent") or was asked to ("... received")
    transport connection_started  a new connection begins (a lesson in several parts): the
                                  endpoint starts again from nothing

Derived, beyond what one event says: each entry of an encoder's table is marked
``unacknowledged`` while a field section that refers to it awaits acknowledgment (with the
streams in ``referenced_by``), ``received`` once its absolute index is below the Known
Received Count, and ``evictable`` when both allow it (RFC 9204 §2.1.1). Not derivable from
events, so not shown: which entries an encoder considers *draining* (its own policy,
RFC 9204 §2.1.1.1), bytes in flight that neither side has read yet, and anything a trace imported
from qlog lacks (aioquic logs no QPACK events, so its tables stay empty).

The answer is ``{"step", "client", "server", "changed"}``; each endpoint has ``qpack``
(``local_table`` and ``remote_table``, ``known_received_count``, ``blocked_streams``, ...),
``settings`` (``local``, ``remote``), ``streams`` (keyed by stream ID as a string, since JSON
keys are strings) and ``errors``. ``changed`` lists what differs from the state before the
step, as dotted paths (`changed_paths`); comparing states, rather than having each rule
report what it touched, also catches what a step changes indirectly (a higher Known
Received Count makes entries ``received`` and streams stop ``blocking``).

Random access is O(K): a copy of the state is kept every K steps (``snapshot_every``), and
`state_after` replays at most K events from the nearest one (plus building the answer,
which is proportional to the state's size). Stepping forwards one step at a time
continues from the previous answer instead. The copies are all made by the constructor,
or with ``on_demand`` the first time a step beyond them is asked for: a viewer that opens
a long trace at step N then replays N events once, not the whole trace first.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from h3learn.events import ENDPOINTS, Event

#: SETTINGS_QPACK_MAX_TABLE_CAPACITY (RFC 9204 §5): the maximum for the peer's encoder.
QPACK_MAX_TABLE_CAPACITY = 0x01

#: Stream ID bits (RFC 9000 §2.1): who opened the stream, and whether it is one-way.
SERVER_INITIATED_BIT = 0x01
UNIDIRECTIONAL_BIT = 0x02


@dataclass(frozen=True, slots=True)
class _Section:
    """A field section the encoder sent that still awaits its Section Acknowledgment."""

    stream_id: int
    required_insert_count: int
    references: tuple[int, ...]


@dataclass(slots=True)
class _Table:
    """One copy of a dynamic table (RFC 9204 §3.2): ``local`` (our encoder's) or ``remote``."""

    owner: str
    capacity: int = 0
    size: int = 0
    insert_count: int = 0
    #: absolute index -> {index, name, value, size}; oldest first.
    entries: dict[int, dict[str, Any]] = field(default_factory=dict)
    inserted: list[dict[str, Any]] = field(default_factory=list)
    evicted: list[dict[str, Any]] = field(default_factory=list)

    def copy(self) -> _Table:
        # Entry dicts are never changed once stored, so sharing them is safe.
        return _Table(self.owner, self.capacity, self.size, self.insert_count, dict(self.entries))


@dataclass(slots=True)
class _Endpoint:
    """What one endpoint knows."""

    name: str
    local: _Table = field(default_factory=lambda: _Table("local"))
    remote: _Table = field(default_factory=lambda: _Table("remote"))
    #: RFC 9204 §2.1.4: inserts this endpoint's encoder knows the peer's decoder has.
    known_received_count: int = 0
    #: The decoder side of the same count: inserts this endpoint's decoder has announced.
    acknowledged_insert_count: int = 0
    unacknowledged: dict[int, list[_Section]] = field(default_factory=dict)
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

    def copy(self) -> _Endpoint:
        return _Endpoint(
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
        )

    def table(self, owner: Any) -> _Table | None:
        return self.local if owner == "local" else self.remote if owner == "remote" else None


class _State:
    """Both endpoints, and the rules by which each event changes them."""

    def __init__(self, endpoints: dict[str, _Endpoint] | None = None) -> None:
        self.endpoints = endpoints or {name: _Endpoint(name) for name in ENDPOINTS}

    def copy(self) -> _State:
        return _State({name: ep.copy() for name, ep in self.endpoints.items()})

    def apply(self, event: Event, reported_later: bool = False) -> None:
        """Apply one event. ``reported_later``: see `_instruction_parsed`."""
        for endpoint in self.endpoints.values():
            for table in (endpoint.local, endpoint.remote):
                table.inserted, table.evicted = [], []
        ep = self.endpoints[event.endpoint]
        if (event.category, event.name) == ("qpack", "instruction_parsed"):
            _instruction_parsed(ep, event, reported_later)
            return
        handler = _HANDLERS.get((event.category, event.name))
        if handler is not None:
            handler(ep, event)

    def to_json(self) -> dict[str, Any]:
        return {name: _endpoint_json(ep) for name, ep in self.endpoints.items()}


# -- QPACK (RFC 9204) -----------------------------------------------------------------


def _dynamic_table_updated(ep: _Endpoint, event: Event) -> None:
    """RFC 9204 §3.2.2 and §3.2.4: entries inserted (newest last) or evicted (oldest first)."""
    data = event.data
    table = ep.table(data.get("owner"))
    if table is None:
        return
    for entry in _list(data.get("entries")):
        index = entry.get("index") if isinstance(entry, dict) else None
        if not _is_int(index):
            continue
        if data.get("update_type") == "inserted":
            stored = {key: entry.get(key) for key in ("index", "name", "value", "size")}
            table.entries[index] = stored
            table.inserted.append(dict(stored))
            table.insert_count = max(table.insert_count, index + 1)
        elif data.get("update_type") == "evicted":
            table.evicted.append(dict(table.entries.pop(index, entry)))
    table.size = sum(_int_or_zero(entry.get("size")) for entry in table.entries.values())
    _set_int(table, "size", data.get("dynamic_table_size"))
    _set_int(table, "insert_count", data.get("current_insert_count"))


def _state_updated(ep: _Endpoint, event: Event) -> None:
    """RFC 9204 §3.2.2, §2.1.4: a table's capacity, or what the encoder learnt from the decoder."""
    data = event.data
    table = ep.table(data.get("owner"))
    if table is None:
        return
    _set_int(table, "capacity", data.get("dynamic_table_capacity"))
    _set_int(table, "size", data.get("dynamic_table_size"))
    _set_int(table, "insert_count", data.get("current_insert_count"))
    if ep.pending is not None:
        _decoder_instruction_effect(ep, ep.pending)
        ep.pending = None
    _set_int(ep, "known_received_count", data.get("known_received_count"))


def _instruction_parsed(ep: _Endpoint, event: Event, reported_later: bool) -> None:
    """An encoder reads a decoder instruction.

    h3learn's encoder records the instruction, then carries it out, then reports the new
    state (a state_updated event): the change is shown at that report, as it happened.
    Traces without the report (``reported_later`` false) show the change here instead.
    """
    if event.data.get("instruction_type") not in DECODER_INSTRUCTIONS:
        return
    if reported_later:
        ep.pending = dict(event.data)
    else:
        _decoder_instruction_effect(ep, event.data)


def _decoder_instruction_effect(ep: _Endpoint, instruction: dict[str, Any]) -> None:
    """RFC 9204 §4.4: what a decoder instruction does to the encoder that reads it."""
    kind, stream = instruction.get("instruction_type"), instruction.get("stream_id")
    if kind == "section_acknowledgement" and _is_int(stream) and ep.unacknowledged.get(stream):
        section = ep.unacknowledged[stream].pop(0)  # RFC 9204 §4.4.1: the oldest one
        ep.known_received_count = max(ep.known_received_count, section.required_insert_count)
    elif kind == "stream_cancellation" and _is_int(stream):
        ep.unacknowledged.pop(stream, None)  # RFC 9204 §4.4.2: all of them
    elif kind == "insert_count_increment" and _is_int(instruction.get("increment")):
        ep.known_received_count += instruction["increment"]  # RFC 9204 §4.4.3
    if _is_int(stream) and stream in ep.unacknowledged and not ep.unacknowledged[stream]:
        del ep.unacknowledged[stream]


def _instruction_created(ep: _Endpoint, event: Event) -> None:
    """RFC 9204 §4.4: a decoder's own instructions, what it has told the peer's encoder."""
    kind, stream = event.data.get("instruction_type"), event.data.get("stream_id")
    if kind == "section_acknowledgement" and _is_int(stream):
        ep.acknowledged_insert_count = max(ep.acknowledged_insert_count, ep.decoded.get(stream, 0))
    elif kind == "insert_count_increment" and _is_int(event.data.get("increment")):
        ep.acknowledged_insert_count += event.data["increment"]
    elif kind == "stream_cancellation" and _is_int(stream):
        ep.blocked.pop(stream, None)


def _headers_encoded(ep: _Endpoint, event: Event) -> None:
    """RFC 9204 §2.1.1, §4.4.1: a section with dynamic references awaits acknowledgment."""
    required = _dict(event.data.get("prefix")).get("required_insert_count")
    stream = event.data.get("stream_id", event.stream_id)
    if not (_is_int(required) and required > 0 and _is_int(stream)):
        return  # Required Insert Count 0: the decoder will not acknowledge it
    references = {
        line["absolute_index"]
        for line in _list(event.data.get("field_lines"))
        if isinstance(line, dict) and _is_int(line.get("absolute_index"))
    }
    section = _Section(stream, required, tuple(sorted(references)))
    ep.unacknowledged.setdefault(stream, []).append(section)


def _headers_decoded(ep: _Endpoint, event: Event) -> None:
    required = _dict(event.data.get("prefix")).get("required_insert_count")
    stream = event.data.get("stream_id", event.stream_id)
    if _is_int(required) and _is_int(stream):
        ep.decoded[stream] = required


def _qpack_stream_state_updated(ep: _Endpoint, event: Event) -> None:
    """RFC 9204 §2.2.1: a stream waits for inserts, or has them."""
    stream, state = event.data.get("stream_id", event.stream_id), event.data.get("state")
    if not _is_int(stream):
        return
    if state == "blocked":
        ep.blocked[stream] = _int_or_zero(event.data.get("required_insert_count"))
    elif state == "unblocked":
        ep.blocked.pop(stream, None)


# -- HTTP/3 (RFC 9114) ----------------------------------------------------------------


def _parameters_set(ep: _Endpoint, event: Event) -> None:
    """RFC 9114 §7.2.4: the SETTINGS this endpoint sends (local) or received (remote)."""
    owner = _owner(event.data)
    settings = event.data.get("settings")
    if owner is not None and isinstance(settings, list):
        ep.settings[owner] = [dict(item) for item in settings if isinstance(item, dict)]


def _settings_in_force(ep: _Endpoint, event: Event) -> None:
    """RFC 9114 §7.2.4.2: the server settings a resuming client follows before SETTINGS."""
    if event.name == "early_data_decision" and ep.name != "client":
        return  # the server's decision changes nothing it knows
    settings = event.data.get("settings")
    if isinstance(settings, list):
        ep.settings["remote"] = [dict(item) for item in settings if isinstance(item, dict)]


def _stream_frame(ep: _Endpoint, event: Event) -> None:
    """RFC 9000 §3.5: RESET_STREAM ends a sending half; STOP_SENDING asks for that."""
    stream = event.data.get("stream_id", event.stream_id)
    if not _is_int(stream):
        return
    info = _stream(ep, stream)
    if event.name == "reset_stream":
        info["state"] = "reset"
    elif info["state"] != "reset":
        info["state"] = f"stop_sending {event.data.get('direction', 'sent')}"


def _stream_type_set(ep: _Endpoint, event: Event) -> None:
    """RFC 9114 §6.1 and §6.2: what a stream carries."""
    stream = event.data.get("stream_id", event.stream_id)
    if not _is_int(stream):
        return
    info = _stream(ep, stream)
    info["type"] = event.data.get("stream_type", info["type"])
    info["owner"] = _owner(event.data) or info["owner"]
    push_id = event.data.get("push_id", event.data.get("associated_push_id"))
    if push_id is not None:
        info["push_id"] = push_id


def _frame(ep: _Endpoint, event: Event) -> None:
    stream = event.data.get("stream_id", event.stream_id)
    if _is_int(stream):
        _stream(ep, stream)


def _http3_stream_state_updated(ep: _Endpoint, event: Event) -> None:
    """RFC 9114 §4.1: a request or push stream moves in its state table."""
    stream = event.data.get("stream_id", event.stream_id)
    if _is_int(stream) and "new" in event.data:
        _stream(ep, stream)["state"] = event.data["new"]


def _error(ep: _Endpoint, event: Event) -> None:
    """RFC 9114 §8: a stream error resets one stream; a connection error ends everything."""
    ep.errors.append({"seq": event.seq, "kind": event.name, **copy.deepcopy(event.data)})
    stream = event.data.get("stream_id", event.stream_id)
    if event.name == "stream_error" and _is_int(stream):
        _stream(ep, stream)["state"] = "reset"


def _stream(ep: _Endpoint, stream: int) -> dict[str, Any]:
    """The stream's entry, created on first sight with what its ID says (RFC 9000 §2.1)."""
    if stream not in ep.streams:
        opener = "server" if stream & SERVER_INITIATED_BIT else "client"
        one_way = bool(stream & UNIDIRECTIONAL_BIT)
        ep.streams[stream] = {
            "type": "request" if opener == "client" and not one_way else "unknown",
            "owner": "local" if opener == ep.name else "remote",
            "state": "open",
        }
    return ep.streams[stream]


def _connection_started(ep: _Endpoint, event: Event) -> None:
    """A new connection in the same trace: everything this endpoint knew is gone."""
    fresh = _Endpoint(ep.name)
    for name in ep.__dataclass_fields__:
        setattr(ep, name, getattr(fresh, name))


DECODER_INSTRUCTIONS = ("section_acknowledgement", "stream_cancellation", "insert_count_increment")

_HANDLERS: dict[tuple[str, str], Callable[[_Endpoint, Event], None]] = {
    ("qpack", "dynamic_table_updated"): _dynamic_table_updated,
    ("qpack", "state_updated"): _state_updated,
    ("qpack", "instruction_created"): _instruction_created,
    ("qpack", "headers_encoded"): _headers_encoded,
    ("qpack", "headers_decoded"): _headers_decoded,
    ("qpack", "stream_state_updated"): _qpack_stream_state_updated,
    ("http3", "parameters_set"): _parameters_set,
    ("http3", "parameters_restored"): _settings_in_force,
    ("http3", "early_data_decision"): _settings_in_force,
    ("http3", "reset_stream"): _stream_frame,
    ("http3", "stop_sending"): _stream_frame,
    ("http3", "stream_type_set"): _stream_type_set,
    ("http3", "frame_created"): _frame,
    ("http3", "frame_parsed"): _frame,
    ("http3", "stream_state_updated"): _http3_stream_state_updated,
    ("http3", "stream_error"): _error,
    ("http3", "connection_error"): _error,
    ("transport", "connection_started"): _connection_started,
}


def _endpoint_json(ep: _Endpoint) -> dict[str, Any]:
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
    }


def _table_json(
    table: _Table, entries: list[dict[str, Any]], maximum: int | None
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


def _max_capacity(ep: _Endpoint, whose_settings: str) -> int | None:
    """RFC 9204 §3.2.3: a table's maximum is its decoder's SETTINGS_QPACK_MAX_TABLE_CAPACITY."""
    for setting in ep.settings[whose_settings] or []:
        if setting.get("id") == QPACK_MAX_TABLE_CAPACITY and _is_int(setting.get("value")):
            value: int = setting["value"]
            return value
    return None


class Replay:
    """Random access to the state after every step of a trace; see the module docstring."""

    def __init__(
        self, events: Sequence[Event], snapshot_every: int = 64, *, on_demand: bool = False
    ) -> None:
        """``on_demand``: take the snapshots when first needed rather than all now."""
        if snapshot_every < 1:
            raise ValueError("snapshot_every must be at least 1")
        self.events = list(events)
        self.snapshot_every = snapshot_every
        #: _snapshots[j] is the state before event j * snapshot_every.
        self._snapshots: list[_State] = []
        #: The state after the first _ahead_count events: where the next snapshot comes from.
        self._ahead = _State()
        self._ahead_count = 0
        self._reported_later: set[int] = set()
        self._waiting: dict[str, int] = {}
        _scan_reported_later(self.events, 0, self._waiting, self._reported_later)
        #: The state after the step last asked for, to continue from when stepping on.
        self._cursor: tuple[int, _State] | None = None
        if self.events and not on_demand:
            self._snapshot((len(self.events) - 1) // snapshot_every)

    def __len__(self) -> int:
        return len(self.events)

    def extend(self, events: Sequence[Event]) -> None:
        """Append events recorded after these: a live capture that grows while it is viewed.

        Every answer given so far stays true, with one exception: a decoder instruction
        among the last events whose effect the encoder reports in an event that only now
        arrived (`_scan_reported_later`) moves to that event. The snapshots and the cursor
        from that instruction on are then dropped, and rebuilt when next asked for.
        """
        start = len(self.events)
        self.events.extend(events)
        changed = _scan_reported_later(self.events, start, self._waiting, self._reported_later)
        if changed is None:
            return
        del self._snapshots[changed // self.snapshot_every + 1 :]
        if self._ahead_count > changed:
            self._ahead = self._snapshots[-1].copy()
            self._ahead_count = (len(self._snapshots) - 1) * self.snapshot_every
        if self._cursor is not None and self._cursor[0] >= changed:
            self._cursor = None

    def initial_state(self) -> dict[str, Any]:
        """Both endpoints before the first event."""
        return {"step": None, **_State().to_json(), "changed": []}

    def state_after(self, step: int) -> dict[str, Any]:
        """The state once event ``step`` (0-based) has happened, and what the step changed."""
        if not 0 <= step < len(self.events):
            raise IndexError(f"step {step} is outside the trace (0..{len(self.events) - 1})")
        start, state = self._start_for(step)
        for position in range(start, step):
            state.apply(self.events[position], position in self._reported_later)
        before = state.to_json()
        state.apply(self.events[step], step in self._reported_later)
        after = state.to_json()
        self._cursor = (step, state)
        return {"step": step, **after, "changed": changed_paths(before, after)}

    def _start_for(self, step: int) -> tuple[int, _State]:
        """Where to replay from: the last answer if it is close behind, else a snapshot."""
        snapshot = step // self.snapshot_every
        if self._cursor is not None:
            cursor_step, cursor_state = self._cursor
            if snapshot * self.snapshot_every <= cursor_step < step:
                self._cursor = None
                return cursor_step + 1, cursor_state
        return snapshot * self.snapshot_every, self._snapshot(snapshot).copy()

    def _snapshot(self, number: int) -> _State:
        """The state before event ``number * snapshot_every``, replaying up to it if need be."""
        while len(self._snapshots) <= number:
            start = len(self._snapshots) * self.snapshot_every
            for position in range(self._ahead_count, start):
                self._ahead.apply(self.events[position], position in self._reported_later)
            self._ahead_count = max(self._ahead_count, start)
            self._snapshots.append(self._ahead.copy())
        return self._snapshots[number]


def _scan_reported_later(
    events: Sequence[Event], start: int, waiting: dict[str, int], reported: set[int]
) -> int | None:
    """Find the decoder instructions parsed by an encoder whose effect its next event reports.

    Scans ``events`` from ``start``, adding their positions to ``reported``; ``waiting``
    (endpoint -> position of its last such instruction still unanswered) carries over from
    one call to the next. Returns the earliest position before ``start`` newly added, if any.
    """
    earliest: int | None = None
    for position in range(start, len(events)):
        event = events[position]
        if event.endpoint not in ENDPOINTS:
            raise ValueError(f"event {position}: endpoint {event.endpoint!r}")
        earlier = waiting.pop(event.endpoint, None)
        if earlier is not None and (event.category, event.name) == ("qpack", "state_updated"):
            reported.add(earlier)
            if earlier < start and (earliest is None or earlier < earliest):
                earliest = earlier
        if (event.category, event.name) == ("qpack", "instruction_parsed") and (
            event.data.get("instruction_type") in DECODER_INSTRUCTIONS
        ):
            waiting[event.endpoint] = position
    return earliest


# -- what a step changed ----------------------------------------------------------------

#: Lists of entries, compared entry by entry (keyed by absolute index).
ENTRY_LISTS = ("entries",)
#: Lists of stream IDs, compared element by element.
ID_LISTS = ("blocked_streams", "blocking_streams")
#: What belongs to the step itself rather than to the state.
STEP_ONLY = ("evicted_at_this_step", "inserted_at_this_step")


def changed_paths(before: Any, after: Any, path: str = "") -> list[str]:
    """Dotted paths of what differs between two states, e.g. ``client.qpack.local_table.size``.

    Entries are named by absolute index (``...local_table.entries.3``), stream IDs in
    ``blocked_streams`` by their value (``server.qpack.blocked_streams.4``), streams by ID
    (``server.streams.4.state``, or ``server.streams.4`` for a new stream); any other list
    that changed is named as a whole (``client.settings.remote``).
    """
    if before == after:
        return []
    name = path.rsplit(".", 1)[-1]
    if isinstance(before, dict) and isinstance(after, dict):
        changed = []
        for key in [*before, *(key for key in after if key not in before)]:
            if key in STEP_ONLY:
                continue
            child = f"{path}.{key}" if path else str(key)
            if key in before and key in after:
                changed += changed_paths(before[key], after[key], child)
            else:
                changed.append(child)
        return changed
    if name in ENTRY_LISTS and isinstance(before, list) and isinstance(after, list):
        old = {entry["index"]: entry for entry in before}
        new = {entry["index"]: entry for entry in after}
        keys = sorted(old.keys() | new.keys())
        return [f"{path}.{key}" for key in keys if old.get(key) != new.get(key)]
    if name in ID_LISTS and isinstance(before, list) and isinstance(after, list):
        return [f"{path}.{key}" for key in sorted(set(before) ^ set(after))]
    return [path]


# -- small helpers for data that came from a file -----------------------------------------


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _int_or_zero(value: Any) -> int:
    return value if _is_int(value) else 0


def _set_int(target: Any, attribute: str, value: Any) -> None:
    """Set ``target.attribute`` to ``value`` if the event gave an integer for it."""
    if _is_int(value):
        setattr(target, attribute, value)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _owner(data: dict[str, Any]) -> str | None:
    """``owner`` (docs/events.md), or qlog's newer ``initiator``: "local" or "remote"."""
    owner = data.get("owner", data.get("initiator"))
    if owner == "received":
        owner = "remote"
    return owner if owner in ("local", "remote") else None
