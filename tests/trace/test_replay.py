"""Replay: the state of both endpoints after every step (h3learn/trace/replay.py).

The strongest check runs the real QPACK encoder and decoder and compares what they held at
every event with what the replay rebuilds from the events alone (RFC 9204 §2.1.4 Known
Received Count, §2.2.1 blocked streams, §3.2 the tables).
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from trace_helpers import (
    http3_exchange,
    live_qpack_exchange,
    qif_requests,
    renumber,
    table_json,
    walkthrough_log,
)

from h3learn.events import ENDPOINTS, Event
from h3learn.h3.connection import H3Connection
from h3learn.h3.errors import ErrorCode
from h3learn.trace import replay as replay_module
from h3learn.trace.replay import Replay, changed_paths
from h3learn.trace.replay_qpack import Effect
from h3learn.transport.memory import MemoryPair

EXCHANGES = [
    pytest.param(256, False, frozenset(), False, id="small-table"),
    pytest.param(256, True, frozenset({3, 7}), False, id="small-table-sections-first-cancelled"),
    pytest.param(4096, True, frozenset(), False, id="large-table-sections-first"),
    pytest.param(4096, False, frozenset({5, 9}), True, id="large-table-cancelled-trailers"),
    pytest.param(256, False, frozenset({4}), True, id="small-table-cancelled-trailers"),
    # Trailers arriving while their stream's header section is blocked wait behind it.
    pytest.param(256, True, frozenset({6}), True, id="small-table-sections-first-trailers"),
]


def first(events: list[Event], **wanted: Any) -> int:
    """The position of the first event whose attributes or data match ``wanted``."""
    for position, event in enumerate(events):
        if all(getattr(event, key, event.data.get(key)) == value for key, value in wanted.items()):
            return position
    raise LookupError(wanted)


@pytest.mark.parametrize(("capacity", "sections_first", "cancel", "trailers"), EXCHANGES)
def test_tables_and_counts_equal_what_the_live_encoder_and_decoder_had(
    capacity: int, sections_first: bool, cancel: frozenset[int], trailers: bool
) -> None:
    events, live = live_qpack_exchange(
        qif_requests(), capacity, 100, sections_first, cancel, trailers
    )
    assert any(e.data.get("update_type") == "evicted" for e in events) or capacity > 256
    replay = Replay(events, snapshot_every=16)
    for step in range(len(events)):
        state = replay.state_after(step)
        client, server = state["client"]["qpack"], state["server"]["qpack"]
        where = f"step {step} ({events[step].endpoint} {events[step].name})"
        assert table_json(client["local_table"]) == live[step]["local_table"], where
        assert table_json(server["remote_table"]) == live[step]["remote_table"], where
        assert client["known_received_count"] == live[step]["known_received_count"], where
        assert server["blocked_streams"] == live[step]["blocked_streams"], where
        # The decoder records an instruction before counting it, so its count shows up in
        # the next snapshot.
        if step + 1 < len(events):
            expected = live[step + 1]["acknowledged_insert_count"]
            assert server["acknowledged_insert_count"] == expected, where


@pytest.mark.parametrize(("capacity", "sections_first", "cancel", "trailers"), EXCHANGES)
def test_unacknowledged_sections_agree_with_what_the_encoder_reports(
    capacity: int, sections_first: bool, cancel: frozenset[int], trailers: bool
) -> None:
    """The encoder's state_updated events say which streams block and how many sections wait."""
    events, _ = live_qpack_exchange(qif_requests(), capacity, 100, sections_first, cancel, trailers)
    replay = Replay(events)
    checked = 0
    for step, event in enumerate(events):
        if event.name == "state_updated" and "known_received_count" in event.data:
            qpack = replay.state_after(step)["client"]["qpack"]
            assert qpack["blocking_streams"] == event.data["blocking_streams"], step
            sections = len(qpack["unacknowledged_sections"])
            assert sections == event.data["unacknowledged_sections"], step
            checked += 1
    assert checked > 10


def test_entries_are_unacknowledged_while_a_section_refers_to_them() -> None:
    """RFC 9204 §2.1.1: an entry a section refers to may not be evicted until acknowledged."""
    events = walkthrough_log().events
    replay = Replay(events)
    encoded = first(events, name="headers_encoded", stream_id=4)
    acknowledged = first(events, name="state_updated", stream_id=4)
    before = replay.state_after(encoded)["client"]["qpack"]
    assert [
        (e["index"], e["unacknowledged"], e["referenced_by"])
        for e in before["local_table"]["entries"]
    ] == [
        (0, True, [4]),
        (1, True, [4]),
        (2, True, [4]),
    ]
    assert not any(e["received"] or e["evictable"] for e in before["local_table"]["entries"])
    assert before["blocking_streams"] == [4]
    after = replay.state_after(acknowledged)
    entries = after["client"]["qpack"]["local_table"]["entries"]
    assert all(e["received"] and e["evictable"] and not e["unacknowledged"] for e in entries)
    assert after["client"]["qpack"]["known_received_count"] == 3
    assert after["client"]["qpack"]["blocking_streams"] == []
    assert "client.qpack.known_received_count" in after["changed"]
    assert "client.qpack.local_table.entries.0" in after["changed"]


def test_a_step_names_exactly_what_it_changed() -> None:
    events = walkthrough_log().events
    replay = Replay(events)
    insert = first(events, name="dynamic_table_updated", endpoint="client")
    assert set(replay.state_after(insert)["changed"]) == {
        "client.qpack.local_table.entries.0",
        "client.qpack.local_table.size",
        "client.qpack.local_table.insert_count",
    }
    capacity = first(events, name="state_updated", endpoint="server")
    assert replay.state_after(capacity)["changed"] == ["server.qpack.remote_table.capacity"]
    parsed = first(events, name="instruction_parsed", endpoint="client")
    assert replay.state_after(parsed)["changed"] == []


def test_blocked_streams_appear_and_disappear() -> None:
    events = walkthrough_log(sections_first=True).events
    replay = Replay(events)
    blocked = first(events, name="stream_state_updated", state="blocked")
    unblocked = first(events, name="stream_state_updated", state="unblocked")
    state = replay.state_after(blocked)
    assert state["server"]["qpack"]["blocked_streams"] == [4]
    assert state["changed"] == ["server.qpack.blocked_streams.4"]
    assert replay.state_after(unblocked)["server"]["qpack"]["blocked_streams"] == []


def test_evicted_and_inserted_entries_are_shown_at_their_step() -> None:
    events, _ = live_qpack_exchange(qif_requests(), 256, 100, False)
    replay = Replay(events)
    eviction = first(events, name="dynamic_table_updated", update_type="evicted")
    evicted = [entry["index"] for entry in events[eviction].data["entries"]]
    table = replay.state_after(eviction)["client"]["qpack"]["local_table"]
    assert [entry["index"] for entry in table["evicted_at_this_step"]] == evicted
    assert not {entry["index"] for entry in table["entries"]} & set(evicted)
    assert table["inserted_at_this_step"] == []
    following = replay.state_after(eviction + 1)["client"]["qpack"]["local_table"]
    assert following["evicted_at_this_step"] == []
    assert [e["index"] for e in following["inserted_at_this_step"]] == [table["insert_count"]]


def test_random_access_gives_the_same_states_as_stepping_forwards() -> None:
    events, _ = live_qpack_exchange(qif_requests(count=20), 256, 100, True, frozenset({2}))
    reference = Replay(events, snapshot_every=len(events) + 1)
    expected = [reference.state_after(step) for step in range(len(events))]
    for snapshot_every in (1, 3, 64):
        replay = Replay(events, snapshot_every=snapshot_every)
        order = list(range(len(events)))
        random.Random(snapshot_every).shuffle(order)
        for step in order + order[:10]:
            assert replay.state_after(step) == expected[step], (snapshot_every, step)


def test_random_access_replays_at_most_k_events(monkeypatch: pytest.MonkeyPatch) -> None:
    events = walkthrough_log().events * 300  # about 10,000 events
    events = renumber(events)
    replay = Replay(events, snapshot_every=50)
    applied = 0
    real_apply = replay_module._State.apply

    def counting_apply(self: Any, event: Event, effect: Effect = Effect.AT_ONCE) -> None:
        nonlocal applied
        applied += 1
        real_apply(self, event, effect)

    monkeypatch.setattr(replay_module._State, "apply", counting_apply)
    for step in (len(events) - 1, 17, 5_000, 9_001, 0):
        applied = 0
        replay.state_after(step)
        assert applied <= 50, step
    applied = 0
    for step in range(100, 200):
        replay.state_after(step)
    assert applied == 100  # stepping forwards applies one event per step


def test_on_demand_a_far_step_copies_the_state_once_and_later_answers_agree(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A viewer opening a long trace at its middle: the events before it are replayed once,
    and the state is copied for that step's snapshot alone (a copy of a large state costs
    more than K events). Steps asked for afterwards, in any order, answer as before."""
    events = renumber(walkthrough_log().events * 60)
    reference = Replay(events, snapshot_every=50)
    middle = len(events) // 2
    expected = reference.state_after(middle)
    replay = Replay(events, snapshot_every=50, on_demand=True)
    copies = 0
    real_copy = replay_module._State.copy

    def counting_copy(self: Any) -> Any:
        nonlocal copies
        copies += 1
        return real_copy(self)

    monkeypatch.setattr(replay_module._State, "copy", counting_copy)
    assert replay.state_after(middle) == expected
    assert copies == 2  # the snapshot kept, and the state the answer is replayed in
    order = [0, 17, middle - 1, len(events) - 1, middle + 60, 3 * len(events) // 4, 49, 50]
    for step in order + list(range(middle - 5, middle + 5)):
        assert replay.state_after(step) == reference.state_after(step), step


def test_on_demand_stepping_back_from_a_far_step_costs_one_long_replay_then_at_most_k(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Opened at its middle, a trace stepped back through: the first step into the block
    before replays from the start, keeping a snapshot every K events; every later step
    back replays at most K events (a review found each block boundary replaying from 0)."""
    events = renumber(walkthrough_log().events * 60)
    reference = Replay(events, snapshot_every=50)
    middle = len(events) // 2
    steps = list(range(middle, middle - 400, -1))
    expected = {step: reference.state_after(step) for step in steps}
    replay = Replay(events, snapshot_every=50, on_demand=True)
    applied: list[int] = []
    real_apply = replay_module._State.apply

    def counting_apply(self: Any, event: Event, effect: Effect = Effect.AT_ONCE) -> None:
        applied[-1] += 1
        real_apply(self, event, effect)

    monkeypatch.setattr(replay_module._State, "apply", counting_apply)
    for step in steps:
        applied.append(0)
        assert replay.state_after(step) == expected[step], step
    long_ones = [count for count in applied if count > 50]
    assert len(long_ones) <= 2, applied  # the open, and the first block boundary behind it
    assert max(applied[1:]) >= middle - 100  # that boundary replayed from the start, once


def test_the_encoder_learns_the_known_received_count_without_state_updated_events() -> None:
    """A trace that reports only the instructions still gives the right count (§4.4)."""
    events, live = live_qpack_exchange(qif_requests(), 256, 100, True, frozenset({3}))
    stripped = [
        e
        for e in events
        if not (
            e.name == "state_updated"
            and e.endpoint == "client"
            and "known_received_count" in e.data
        )
    ]
    stripped = renumber(stripped)
    final = Replay(stripped).state_after(len(stripped) - 1)["client"]["qpack"]
    assert final["known_received_count"] == live[-1]["known_received_count"]
    assert final["unacknowledged_sections"] == []


def test_http3_settings_streams_and_errors() -> None:
    events = http3_exchange()
    replay = Replay(events)
    final = replay.state_after(len(events) - 1)
    server, client = final["server"], final["client"]
    assert server["settings"]["local"][1] == {
        "id": 6,
        "name": "MAX_FIELD_SECTION_SIZE",
        "value": 16384,
    }
    assert server["settings"]["remote"] == client["settings"]["local"]
    assert client["settings"]["remote"] is None
    # RFC 9204 §3.2.3: a table's maximum is its decoder's setting.
    assert server["qpack"]["local_table"]["maximum_capacity"] == 4096
    assert server["qpack"]["remote_table"]["maximum_capacity"] == 0
    assert client["qpack"]["local_table"]["maximum_capacity"] is None
    assert server["streams"] == {
        "0": {"type": "request", "owner": "remote", "state": "receiving_content"},
        "2": {"type": "control", "owner": "remote", "state": "open"},
        "15": {"type": "reserved", "owner": "local", "state": "open"},
    }
    assert client["streams"]["3"] == {"type": "unknown", "owner": "remote", "state": "open"}
    assert client["streams"]["8"]["state"] == "reset"
    assert [error["kind"] for error in client["errors"]] == ["stream_error"]
    assert server["errors"][0]["code_name"] == "H3_FRAME_UNEXPECTED"
    parameters = first(events, name="parameters_set", endpoint="server", owner="remote")
    assert replay.state_after(parameters)["changed"] == [
        "server.qpack.local_table.maximum_capacity",
        "server.settings.remote",
    ]
    state_change = first(events, name="stream_state_updated")
    assert replay.state_after(state_change)["changed"] == ["server.streams.0.state"]


def test_states_are_json_and_callers_cannot_change_the_replay() -> None:
    events = walkthrough_log().events
    replay = Replay(events)
    state = replay.state_after(10)
    json.dumps(state, allow_nan=False)
    expected = replay.state_after(11)
    mutated = replay.state_after(11)
    mutated["client"]["qpack"]["local_table"]["entries"][0]["name"] = "changed"
    mutated["client"]["qpack"]["local_table"]["entries"].clear()
    assert replay.state_after(12) != expected
    assert replay.state_after(11) == expected


def test_initial_state_and_the_edges_of_the_trace() -> None:
    replay = Replay(walkthrough_log().events)
    initial = replay.initial_state()
    assert initial["step"] is None and initial["changed"] == []
    assert initial["client"]["qpack"]["local_table"]["entries"] == []
    with pytest.raises(IndexError, match="outside the trace"):
        replay.state_after(len(replay))
    with pytest.raises(IndexError):
        replay.state_after(-1)


def test_changed_paths_names_entries_ids_and_lists() -> None:
    before = {"t": {"entries": [{"index": 1, "v": "a"}], "blocked_streams": [4], "n": 1, "l": [1]}}
    after = {"t": {"entries": [{"index": 2, "v": "b"}], "blocked_streams": [8], "n": 1, "l": [2]}}
    assert changed_paths(before, after) == [
        "t.entries.1",
        "t.entries.2",
        "t.blocked_streams.4",
        "t.blocked_streams.8",
        "t.l",
    ]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_replay_extended_piece_by_piece_answers_as_one_made_from_the_whole_trace(
    seed: int,
) -> None:
    """A live capture grows while it is viewed (Replay.extend); no answer may differ.

    The pieces are cut at random, including between a decoder instruction and the
    ``state_updated`` that reports its effect, and steps are asked for in between.
    """
    events, _ = live_qpack_exchange(qif_requests(count=12), 256, 100, True, frozenset({2}))
    whole = Replay(events)
    rng = random.Random(seed)
    growing = Replay(events[:1], snapshot_every=4, on_demand=True)
    asked: list[int] = []
    while len(growing) < len(events):
        size = rng.randint(1, 6)
        growing.extend(events[len(growing) : len(growing) + size])
        # From a decoder instruction whose report has not arrived yet, the states may differ
        # until it does (its effect is shown at the instruction meanwhile).
        settled = min(growing._waiting.values(), default=len(growing))
        for _ in range(2):
            step = rng.randrange(len(growing))
            asked.append(step)
            if step < settled:
                assert growing.state_after(step) == whole.state_after(step), step
    for step in range(len(events)):
        assert growing.state_after(step) == whole.state_after(step), step
    assert asked


def test_a_decoder_instruction_the_encoder_refuses_changes_nothing() -> None:
    """RFC 9204 §4.4.3: an Insert Count Increment past the inserts sent is a connection
    error of type QPACK_DECODER_STREAM_ERROR, and the encoder never applies it; the replay
    must not show a Known Received Count or received entries the encoder never had."""
    from h3learn.curriculum.violations import deliberate_instruction
    from h3learn.h3.settings import Settings
    from h3learn.qpack.decoder_instructions import InsertCountIncrement
    from h3learn.transport.memory import MemoryPair

    settings = Settings(qpack_max_table_capacity=4096, qpack_blocked_streams=16)
    pair = MemoryPair.create(client_settings=settings, server_settings=settings)
    pair.pump()
    headers = [(b":method", b"GET"), (b":scheme", b"https"), (b":authority", b"a.example")]
    headers += [(b":path", b"/"), (b"user-agent", b"demo")]
    pair.client.send_request(headers, end_stream=True)  # seen once: inserted next time
    pair.pump()
    pair.hold("client", pair.client.encoder.encoder_stream_id)  # the server sees no inserts
    pair.client.send_request(headers, end_stream=True)
    pair.pump()
    inserted = pair.client.encoder.table.insert_count
    assert inserted > 0
    server = pair.server
    wrong = InsertCountIncrement(inserted + 2)
    increment = deliberate_instruction(
        wrong, "an Insert Count Increment past the inserts", encoder_side=False
    )
    server.send_deliberately(server.decoder.decoder_stream_id, increment)
    pair.pump()
    events = pair.log.events
    refused = first(events, endpoint="client", name="instruction_parsed")
    assert events[refused + 1].name == "connection_error"
    replay = Replay(events)
    for step in (refused, len(events) - 1):
        qpack = replay.state_after(step)["client"]["qpack"]
        assert qpack["known_received_count"] == pair.client.encoder.known_received_count == 0
        assert not any(entry["received"] for entry in qpack["local_table"]["entries"])
        # Nor is the wrong increment the server's own count: it was sent by hand.
        sent = replay.state_after(step)["server"]["qpack"]["acknowledged_insert_count"]
        assert sent == server.decoder.acknowledged_insert_count
    assert replay.state_after(refused)["changed"] == []


def test_a_maximum_capacity_left_at_its_default_is_zero_once_settings_are_known() -> None:
    """RFC 9204 §5: SETTINGS without SETTINGS_QPACK_MAX_TABLE_CAPACITY mean 0; the maximum
    is unknown ("—") only until the SETTINGS arrive."""
    from h3learn.transport.memory import MemoryPair

    pair = MemoryPair.create()
    pair.pump()
    replay = Replay(pair.log.events)
    assert replay.initial_state()["client"]["qpack"]["local_table"]["maximum_capacity"] is None
    last = replay.state_after(len(replay) - 1)
    for endpoint in ("client", "server"):
        for table in ("local_table", "remote_table"):
            assert last[endpoint]["qpack"][table]["maximum_capacity"] == 0


# -- the connection as a whole: GOAWAY, server push, the close (RFC 9114 §5.2, §4.6, §5.3) --

REQUEST = [
    (b":method", b"GET"),
    (b":scheme", b"https"),
    (b":authority", b"a.example"),
    (b":path", b"/"),
]
PUSHED = [*REQUEST[:3], (b":path", b"/style.css")]
RESPONSE = [(b":status", b"200")]


def live_connection(conn: H3Connection) -> dict[str, Any]:
    """What an H3Connection holds of the connection, in the shape of the replay's."""
    own_push_streams = {
        stream_id: stream.exchange.state.value
        for stream_id, stream in conn._requests.items()
        if stream.push_id is not None and not conn.is_client
    }
    return {
        "goaway": {"sent": conn.goaway_sent, "received": conn.goaway_received},
        "max_push_id": conn.max_push_id,
        "promised": sorted(conn._promised),
        "cancelled": sorted(conn._cancelled_pushes),
        "closed": conn.close_code if conn.closed else None,
        "push_streams": own_push_streams,
    }


def replayed_connection(
    name: str, endpoint: dict[str, Any], live: dict[str, Any]
) -> dict[str, Any]:
    """The replay's endpoint in the shape of `live_connection` (the live one has no sides)."""
    state = endpoint["connection"]
    closed = state["closed"]
    return {
        "goaway": state["goaway"],
        "max_push_id": state["max_push_id"]["sent" if name == "client" else "received"],
        "promised": sorted(
            {*state["pushes_promised"]["sent"], *state["pushes_promised"]["received"]}
        ),
        "cancelled": sorted(
            {*state["pushes_cancelled"]["sent"], *state["pushes_cancelled"]["received"]}
        ),
        "closed": None if closed is None else closed["code"],
        "push_streams": {
            stream_id: endpoint["streams"][str(stream_id)]["state"]
            for stream_id in live["push_streams"]
        },
    }


def test_goaway_push_ids_and_the_close_equal_what_the_live_connections_had() -> None:
    """RFC 9114 §5.2, §7.2.3, §7.2.5, §7.2.7, §5.3: checked after every exchange."""
    memory = MemoryPair.create()
    checks: list[tuple[int, dict[str, dict[str, Any]]]] = []

    def exchanged() -> None:
        memory.pump()
        live = {name: live_connection(memory.endpoint(name)) for name in ENDPOINTS}
        checks.append((len(memory.log.events) - 1, live))

    client, server = memory.client, memory.server
    exchanged()
    client.send_max_push_id(2)
    first_request = client.send_request(REQUEST, end_stream=True)
    second_request = client.send_request(REQUEST, end_stream=True)
    exchanged()
    promised = server.send_push_promise(first_request, PUSHED)
    refused = server.send_push_promise(first_request, [*PUSHED[:3], (b":path", b"/a.js")])
    exchanged()
    client.cancel_push(refused)
    push_stream = server.create_push_stream(promised)
    exchanged()
    server.send_headers(push_stream, RESPONSE)
    exchanged()
    server.send_data(push_stream, b"body", end_stream=True)
    client.send_max_push_id(5)
    exchanged()
    cancelled = server.send_push_promise(second_request, [*PUSHED[:3], (b":path", b"/b.js")])
    server.cancel_push(cancelled)
    server.send_goaway(8)
    exchanged()
    server.send_goaway(4)  # excludes the second request
    client.send_goaway(3)
    exchanged()
    server.send_headers(first_request, RESPONSE, end_stream=True)
    exchanged()
    server.close(ErrorCode.H3_NO_ERROR, "done")
    exchanged()

    replay = Replay(memory.log.events)
    for step, live in checks:
        state = replay.state_after(step)
        for name in ENDPOINTS:
            assert replayed_connection(name, state[name], live[name]) == live[name], (step, name)
    # Asked backwards, from a snapshot at every step: no earlier state shares the push IDs
    # that later steps added (they are kept in dicts, changed in place).
    backwards = Replay(memory.log.events, snapshot_every=1)
    backwards.state_after(len(backwards) - 1)
    for step, live in reversed(checks):
        state = backwards.state_after(step)
        for name in ENDPOINTS:
            assert replayed_connection(name, state[name], live[name]) == live[name], (step, name)
    final = replay.state_after(len(replay) - 1)
    assert final["server"]["connection"]["goaway"] == {"sent": 4, "received": 3}
    assert final["client"]["connection"]["pushes_cancelled"] == {"sent": [1], "received": [2]}
    assert final["server"]["connection"]["closed"] == {
        "seq": final["server"]["connection"]["closed"]["seq"],
        "clean": True,
        "code": ErrorCode.H3_NO_ERROR,
        "code_name": "H3_NO_ERROR",
        "rule": "done",
        "direction": "sent",
    }
    assert final["client"]["connection"]["closed"]["direction"] == "received"
    # The client's view of the push stream ends as the server's always was.
    assert final["client"]["streams"][str(push_stream)]["state"] == "complete"
    assert final["server"]["streams"][str(push_stream)]["state"] == "complete"


def test_a_step_sending_or_reading_goaway_names_it_in_changed() -> None:
    """As in lesson 11, a GOAWAY is a change on both sides (RFC 9114 §5.2), and so is a
    clean close (RFC 9114 §5.3), which the error list does not show."""
    memory = MemoryPair.create()
    memory.pump()
    memory.client.send_request(REQUEST, end_stream=True)
    memory.server.send_goaway(4)
    memory.pump()
    events = list(memory.log.events)
    replay = Replay(events)
    sent = first(events, name="frame_created", endpoint="server", stream_id=3, length=1)
    read = first(events, name="frame_parsed", endpoint="client", stream_id=3, length=1)
    assert replay.state_after(sent)["changed"] == ["server.connection.goaway.sent"]
    assert replay.state_after(read)["changed"][0] == "client.connection.goaway.received"
    memory.client.close()
    memory.pump()
    replay.extend(memory.log.events[len(events) :])
    closing = first(memory.log.events, name="connection_closed", endpoint="client")
    assert replay.state_after(closing)["changed"] == ["client.connection.closed"]
