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
    http3 frame_*                 a stream seen for the first time (type from its ID); a
                                  GOAWAY, MAX_PUSH_ID, PUSH_PROMISE or CANCEL_PUSH sent or
                                  received (RFC 9114 §5.2, §4.6), in ``connection``
    http3 stream/connection_error the error list (a stream error also resets the stream; a
                                  connection error closes the connection)
    http3 connection_closed       the connection closed without an error (RFC 9114 §5.3)
    http3 reset_stream            this endpoint abandoned sending on a stream: "reset"
    http3 stop_sending            a stream the endpoint asked the peer to stop sending on
                                  ("stop_sending sent") or was asked to ("... received")
    transport connection_started  a new connection begins (a lesson in several parts): the
                                  endpoint starts again from nothing

The rule for each event is in replay_qpack.py (RFC 9204), replay_http3.py (RFC 9114's
streams and settings) or replay_connection.py (RFC 9114's connection-wide state), and
`_HANDLERS` below says which; the records they change, and the JSON the UI gets of them,
are in replay_state.py. This module applies the rules in order and answers any step.

Derived, beyond what one event says (`endpoint_json`): each entry of an encoder's table is marked
``unacknowledged`` while a field section that refers to it awaits acknowledgment (with the
streams in ``referenced_by``), ``received`` once its absolute index is below the Known
Received Count, and ``evictable`` when both allow it (RFC 9204 §2.1.1). Not derivable from
events, so not shown: which entries an encoder considers *draining* (its own policy,
RFC 9204 §2.1.1.1), bytes in flight that neither side has read yet, and anything a trace imported
from qlog lacks (aioquic logs no QPACK events, so its tables stay empty).

The answer is ``{"step", "client", "server", "changed"}``; each endpoint has ``qpack``
(``local_table`` and ``remote_table``, ``known_received_count``, ``blocked_streams``, ...),
``settings`` (``local``, ``remote``), ``streams`` (keyed by stream ID as a string, since JSON
keys are strings), ``errors`` and ``connection`` (``goaway``, ``max_push_id``,
``pushes_promised`` and ``pushes_cancelled``, each ``sent`` and ``received``, and
``closed``). ``changed`` lists what differs from the state before the
step, as dotted paths (`changed_paths`); comparing states, rather than having each rule
report what it touched, also catches what a step changes indirectly (a higher Known
Received Count makes entries ``received`` and streams stop ``blocking``).

Random access is O(K): a copy of the state is kept every K steps (``snapshot_every``), and
`state_after` replays at most K events from the nearest one (plus building the answer,
which is proportional to the state's size). Stepping forwards one step at a time
continues from the previous answer instead. The copies are all made by the constructor,
or with ``on_demand`` only where a step is asked for: a viewer that opens a long trace at
step N replays N events once and copies the state once, not the whole trace first, nor
N / K copies on the way (a copy of a state with a thousand streams costs more than
replaying K events). An earlier step with no copy near it is replayed from the nearest
copy before it, keeping one every K events on the way; from then on, steps there cost at
most K events again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from h3learn.events import ENDPOINTS, Event
from h3learn.trace import replay_connection as connection
from h3learn.trace import replay_http3 as http3
from h3learn.trace import replay_qpack as qpack
from h3learn.trace.replay_qpack import INSTRUCTION_EFFECT_SHOWN_BY, Effect
from h3learn.trace.replay_state import EndpointState, endpoint_json


class _State:
    """Both endpoints, and the rules by which each event changes them."""

    def __init__(self, endpoints: dict[str, EndpointState] | None = None) -> None:
        self.endpoints = endpoints or {name: EndpointState(name) for name in ENDPOINTS}

    def copy(self) -> _State:
        return _State({name: ep.copy() for name, ep in self.endpoints.items()})

    def apply(self, event: Event, effect: Effect = Effect.AT_ONCE) -> None:
        """Apply one event. ``effect``: see `replay_qpack.instruction_parsed`."""
        for endpoint in self.endpoints.values():
            for table in (endpoint.local, endpoint.remote):
                table.inserted, table.evicted = [], []
        ep = self.endpoints[event.endpoint]
        if (event.category, event.name) == ("qpack", "instruction_parsed"):
            qpack.instruction_parsed(ep, event, effect)
            return
        handler = _HANDLERS.get((event.category, event.name))
        if handler is not None:
            handler(ep, event)

    def to_json(self) -> dict[str, Any]:
        return {name: endpoint_json(ep) for name, ep in self.endpoints.items()}


def _frame(ep: EndpointState, event: Event) -> None:
    """A frame: its stream, and what it says of the connection (RFC 9114 §5.2, §4.6)."""
    http3.frame(ep, event)
    connection.frame(ep, event)


def _connection_error(ep: EndpointState, event: Event) -> None:
    """RFC 9114 §8: an error in the list, and the connection closed with its code."""
    http3.error(ep, event)
    connection.closed(ep, event)


#: What each event does to the endpoint that recorded it (the module docstring lists them).
_HANDLERS: dict[tuple[str, str], Callable[[EndpointState, Event], None]] = {
    ("qpack", "dynamic_table_updated"): qpack.dynamic_table_updated,
    ("qpack", "state_updated"): qpack.state_updated,
    ("qpack", "instruction_created"): qpack.instruction_created,
    ("qpack", "headers_encoded"): qpack.headers_encoded,
    ("qpack", "headers_decoded"): qpack.headers_decoded,
    ("qpack", "stream_state_updated"): qpack.stream_state_updated,
    ("http3", "parameters_set"): http3.parameters_set,
    ("http3", "parameters_restored"): http3.settings_in_force,
    ("http3", "early_data_decision"): http3.settings_in_force,
    ("http3", "reset_stream"): http3.stream_frame,
    ("http3", "stop_sending"): http3.stream_frame,
    ("http3", "stream_type_set"): http3.stream_type_set,
    ("http3", "frame_created"): _frame,
    ("http3", "frame_parsed"): _frame,
    ("http3", "stream_state_updated"): http3.stream_state_updated,
    ("http3", "stream_error"): http3.error,
    ("http3", "connection_error"): _connection_error,
    ("http3", "connection_closed"): connection.closed,
    ("transport", "connection_started"): http3.connection_started,
    ("transport", "packet_sent"): connection.packet,
    ("transport", "packet_received"): connection.packet,
}


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
        #: _snapshots[j] is the state before event j * snapshot_every (each made when first
        #: needed; the constructor makes them all unless ``on_demand``).
        self._snapshots: dict[int, _State] = {0: _State()}
        #: The state after the first _ahead_count events: where the next snapshot comes from.
        self._ahead = _State()
        self._ahead_count = 0
        #: When the decoder instructions that do not take effect at once do (`Effect`).
        self._effects: dict[int, Effect] = {}
        self._waiting: dict[str, int] = {}
        _scan_instruction_effects(self.events, 0, self._waiting, self._effects)
        #: The state after the step last asked for, to continue from when stepping on.
        self._cursor: tuple[int, _State] | None = None
        if self.events and not on_demand:
            for number in range((len(self.events) - 1) // snapshot_every + 1):
                self._snapshot(number)

    def __len__(self) -> int:
        return len(self.events)

    def extend(self, events: Sequence[Event]) -> None:
        """Append events recorded after these: a live capture that grows while it is viewed.

        Every answer given so far stays true, with one exception: a decoder instruction
        among the last events whose effect the encoder reports in an event that only now
        arrived (`_scan_instruction_effects`) moves to that event, or has none. The
        snapshots and the cursor from that instruction on are then dropped, and rebuilt
        when next asked for.
        """
        start = len(self.events)
        self.events.extend(events)
        changed = _scan_instruction_effects(self.events, start, self._waiting, self._effects)
        if changed is None:
            return
        kept = changed // self.snapshot_every
        self._snapshots = {j: state for j, state in self._snapshots.items() if j <= kept}
        if self._ahead_count > changed:
            last = max(self._snapshots)
            self._ahead = self._snapshots[last].copy()
            self._ahead_count = last * self.snapshot_every
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
            state.apply(self.events[position], self._effect(position))
        before = state.to_json()
        state.apply(self.events[step], self._effect(step))
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

    def _effect(self, position: int) -> Effect:
        return self._effects.get(position, Effect.AT_ONCE)

    def _snapshot(self, number: int) -> _State:
        """The state before event ``number * snapshot_every``, replaying up to it if need be.

        Forwards, from the state replayed furthest, copying it only here. Backwards (that
        state is past this one), from the nearest snapshot before it, keeping a copy at
        every ``snapshot_every`` events on the way: a learner who opened a trace at its
        middle and steps back meets one long replay, then steps of at most K events.
        """
        found = self._snapshots.get(number)
        if found is not None:
            return found
        every = self.snapshot_every
        start = number * every
        if self._ahead_count <= start:
            for position in range(self._ahead_count, start):
                self._ahead.apply(self.events[position], self._effect(position))
            self._ahead_count = start
            self._snapshots[number] = self._ahead.copy()
            return self._snapshots[number]
        nearest = max(j for j in self._snapshots if j < number)
        state = self._snapshots[nearest].copy()
        for position in range(nearest * every, start):
            if position % every == 0 and position // every not in self._snapshots:
                self._snapshots[position // every] = state.copy()
            state.apply(self.events[position], self._effect(position))
        self._snapshots[number] = state
        return state


def _scan_instruction_effects(
    events: Sequence[Event], start: int, waiting: dict[str, int], effects: dict[int, Effect]
) -> int | None:
    """Find when the decoder instructions an encoder parsed took effect, from its next event.

    That event is a state_updated reporting the effect (`Effect.AT_REPORT`), or the
    connection error the instruction caused, which it then never had (`Effect.NONE`); any
    other (a trace without reports) leaves it at once. Scans ``events`` from ``start``,
    noting positions in ``effects``; ``waiting`` (endpoint -> position of its last such
    instruction still unanswered) carries over from one call to the next. Returns the
    earliest position before ``start`` newly noted, if any.
    """
    earliest: int | None = None
    for position in range(start, len(events)):
        event = events[position]
        if event.endpoint not in ENDPOINTS:
            raise ValueError(f"event {position}: endpoint {event.endpoint!r}")
        earlier = waiting.pop(event.endpoint, None)
        effect = INSTRUCTION_EFFECT_SHOWN_BY.get((event.category, event.name))
        if earlier is not None and effect is not None:
            effects[earlier] = effect
            if earlier < start and (earliest is None or earlier < earliest):
                earliest = earlier
        if (event.category, event.name) == ("qpack", "instruction_parsed") and (
            event.data.get("instruction_type") in qpack.DECODER_INSTRUCTIONS
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
