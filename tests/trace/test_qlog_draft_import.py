"""Importing current-draft qlog files (h3learn/trace/qlog_draft_import.py).

The files are what `to_qlog` writes (the contained form) and the JSON-SEQ form of the same
events (RFC 7464 records, as qlog's sequential serialisation has them).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from h3learn.events import Event, EventLog
from h3learn.qpack.encoder import Encoder
from h3learn.scenarios.examples import EXAMPLES
from h3learn.trace.load import load_trace
from h3learn.trace.qlog import to_qlog
from h3learn.trace.qlog_draft_import import RECORD_SEPARATOR, from_qlog_draft
from h3learn.trace.replay import Replay
from h3learn.trace.store import Trace, read_trace, write_trace
from h3learn.trace.stored_events import TraceFormatError
from h3learn.transport.quic_flow_control import SendLimits, record_raised_limits


def example(example_id: str) -> Trace:
    found = next(item for item in EXAMPLES if item.id == example_id)
    return Trace(title=found.title, meta={}, events=found.record(), created=None)


def draft_text(trace: Trace, *, include_bytes: bool = True) -> str:
    return json.dumps(to_qlog(trace, include_bytes=include_bytes))


def sequential_text(document: dict[str, Any], trace_number: int) -> str:
    """One trace of a contained file written as qlog's JSON-SEQ serialisation."""
    qlog_trace = dict(document["traces"][trace_number])
    events = qlog_trace.pop("events")
    header = {"file_schema": "urn:ietf:params:qlog:file:sequential", "trace": qlog_trace}
    records = [header, *events]
    return "".join(f"{RECORD_SEPARATOR}{json.dumps(record)}\n" for record in records)


def http3_frames(events: list[Event]) -> list[tuple[str, str, int | None, str, bytes]]:
    return [
        (e.endpoint, e.name, e.stream_id, e.data["frame"]["frame_type"], e.raw)
        for e in events
        if e.category == "http3" and e.name in ("frame_created", "frame_parsed")
    ]


@pytest.mark.parametrize("example_id", [item.id for item in EXAMPLES])
def test_an_exported_trace_comes_back_with_its_frames_bytes_and_qpack_state(
    example_id: str,
) -> None:
    original = example(example_id)
    imported = from_qlog_draft(draft_text(original), "export.qlog")
    # qlog has no sequence numbers: events of the two endpoints at the same time may come
    # back in another interleaving, but each endpoint's own events keep their order.
    for endpoint in ("client", "server"):
        assert [(e.category, e.name, e.data) for e in imported.events if e.endpoint == endpoint]
        assert [(e.category, e.name) for e in imported.events if e.endpoint == endpoint] == [
            (e.category, e.name) for e in original.events if e.endpoint == endpoint
        ]
    assert sorted(http3_frames(imported.events)) == sorted(http3_frames(original.events))
    # Each endpoint's state depends on its own events only, so after each of them it must
    # be the same in both traces: tables, which entries sections awaiting acknowledgment
    # still refer to (RFC 9204 §2.1.1), streams and settings.
    for endpoint in ("client", "server"):
        assert states_of(original, endpoint) == states_of(imported, endpoint)


def states_of(trace: Trace, endpoint: str) -> list[dict[str, Any]]:
    """The endpoint's replayed state after each of its own events."""
    replay = Replay(trace.events)
    return [
        {key: replay.state_after(step)[endpoint][key] for key in ("qpack", "streams", "settings")}
        for step, event in enumerate(trace.events)
        if event.endpoint == endpoint
    ]


def test_the_title_comes_back_from_the_file_or_its_traces() -> None:
    """The file's title; a one-trace JSON-SEQ file has only its trace's "<title> (server)"."""
    original = example("first-get")
    document = to_qlog(original)
    assert from_qlog_draft(json.dumps(document), "export.qlog").title == original.title
    untitled = {key: value for key, value in document.items() if key != "title"}
    assert from_qlog_draft(json.dumps(untitled), "export.qlog").title == original.title
    sequential = from_qlog_draft(sequential_text(document, 1), "server.sqlog")
    assert sequential.title == original.title
    nameless = {**untitled, "traces": [{**t, "title": None} for t in document["traces"]]}
    assert from_qlog_draft(json.dumps(nameless), "export.qlog").title == "export.qlog"


def test_a_skipped_insert_comes_back_as_a_qpack_event() -> None:
    """h3learn:insert_skipped (RFC 9204 §2.1.1) is one of h3learn's qpack events."""
    log = EventLog()
    encoder = Encoder(log.for_endpoint("client"))
    encoder.apply_settings(64, 0)
    with pytest.raises(ValueError):
        encoder.insert(b"x-too-big", b"z" * 40)
    original = Trace(title="skipped", meta={}, events=log.events, created=None)
    imported = from_qlog_draft(draft_text(original), "export.qlog")
    [skipped] = [e for e in imported.events if e.name == "insert_skipped"]
    assert skipped.category == "qpack"
    assert skipped.data == log.events[-1].data


def test_a_raised_send_limit_comes_back_as_a_transport_event() -> None:
    """h3learn:send_limit_raised (RFC 9000 §4.2) is recorded by the QUIC transports."""
    log = EventLog()
    record_raised_limits(
        log.for_endpoint("client"),
        "client",
        6,
        SendLimits(64, 53, 1000, 200),
        SendLimits(128, 53, 1000, 200),
    )
    original = Trace(title="raised", meta={}, events=log.events, created=None)
    imported = from_qlog_draft(draft_text(original), "export.qlog")
    [raised] = imported.events
    assert (raised.category, raised.name, raised.stream_id) == ("transport", "send_limit_raised", 6)
    assert raised.data == log.events[0].data


def test_settings_get_their_identifiers_back() -> None:
    imported = from_qlog_draft(draft_text(example("dynamic-table")), "export.qlog")
    local = next(e for e in imported.events if e.name == "parameters_set")
    assert local.data == {
        "owner": "local",
        "settings": [
            {
                "id": 0x01,
                "name": "QPACK_MAX_TABLE_CAPACITY",
                "value": 4096,
                "qlog": {"name": "settings_qpack_max_table_capacity", "value": 4096},
            },
            {
                "id": 0x07,
                "name": "QPACK_BLOCKED_STREAMS",
                "value": 16,
                "qlog": {"name": "settings_qpack_blocked_streams", "value": 16},
            },
        ],
    }
    frame = next(e for e in imported.events if e.data.get("frame", {}).get("settings"))
    assert frame.data["frame"]["settings"] == [
        {"name": "settings_qpack_max_table_capacity", "value": 4096},
        {"name": "settings_qpack_blocked_streams", "value": 16},
    ]


def test_frame_bytes_are_labelled_type_length_payload() -> None:
    imported = from_qlog_draft(draft_text(example("first-get")), "export.qlog")
    headers = next(
        e for e in imported.events if e.data.get("frame", {}).get("frame_type") == "headers"
    )
    names = [span.name for span in headers.fields]
    assert names == ["Type", "Length", "Frame Payload"]
    assert headers.fields[0].value == 0x01
    assert headers.fields[1].value == len(headers.raw) - 2 == headers.data["length"]
    covered = sum(span.length for span in headers.fields)
    assert covered == len(headers.raw)


def test_without_bytes_the_events_say_so() -> None:
    imported = from_qlog_draft(draft_text(example("first-get"), include_bytes=False), "q")
    frames = [e for e in imported.events if e.name == "frame_parsed"]
    assert frames and all(e.raw == b"" and e.fields == () for e in frames)
    assert all(e.summary.endswith("[no bytes in the qlog file]") for e in frames)


def test_the_sequential_serialisation_is_read_as_one_trace() -> None:
    original = example("first-get")
    document = to_qlog(original)
    imported = from_qlog_draft(sequential_text(document, 1), "server.sqlog")
    server_events = [e for e in original.events if e.endpoint == "server"]
    assert {e.endpoint for e in imported.events} == {"server"}
    assert http3_frames(imported.events) == http3_frames(server_events)


def test_times_relative_to_the_previous_event_add_up() -> None:
    document = {
        "file_schema": "urn:ietf:params:qlog:file:contained",
        "traces": [
            {
                "vantage_point": {"type": "client"},
                "common_fields": {
                    "time_format": "relative_to_previous_event",
                    "reference_time": {"clock_type": "system", "epoch": "2026-12-02T10:00:00Z"},
                },
                "events": [
                    {"time": 5, "name": "http3:stream_type_set", "data": {"stream_id": 2}},
                    {"time": 2.5, "name": "http3:stream_type_set", "data": {"stream_id": 6}},
                    {"time": 1, "name": "quic:packet_sent", "data": {}},
                ],
            }
        ],
    }
    imported = from_qlog_draft(json.dumps(document), "delta.qlog")
    assert [e.time for e in imported.events] == [0.0, 2.5]
    assert imported.meta["skipped"] == {"quic:packet_sent": 1}
    assert imported.meta["epoch"] == "2026-12-02T10:00:00Z"


def test_load_trace_tells_both_serialisations_apart(tmp_path: Path) -> None:
    trace = example("first-get")
    contained = tmp_path / "contained.qlog"
    contained.write_text(draft_text(trace))
    sequential = tmp_path / "client.sqlog"
    sequential.write_text(sequential_text(to_qlog(trace), 0))
    assert load_trace(contained)[0] == "qlog"
    kind, imported = load_trace(sequential)
    assert kind == "qlog" and {e.endpoint for e in imported.events} == {"client"}


def test_an_imported_trace_is_a_valid_native_trace(tmp_path: Path) -> None:
    imported = from_qlog_draft(draft_text(example("blocked-stream")), "export.qlog")
    path = tmp_path / "imported.json"
    write_trace(path, imported.title, imported.events, imported.meta)
    assert read_trace(path).events == imported.events


CONTAINED = "urn:ietf:params:qlog:file:contained"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "not JSON"),
        (json.dumps({"file_schema": "urn:example:other"}), "file_schema 'urn:example:other'"),
        (json.dumps({"file_schema": CONTAINED, "traces": {}}), "'traces' is not a list"),
        (
            json.dumps({"file_schema": CONTAINED, "traces": [{"vantage_point": {"type": "x"}}]}),
            "vantage_point type 'x' is not 'client' or 'server'",
        ),
        (
            json.dumps(
                {
                    "file_schema": CONTAINED,
                    "traces": [{"vantage_point": {"type": "client"}, "events": [{"time": "1"}]}],
                }
            ),
            "event 0: 'name' is not 'category:event'",
        ),
        (
            json.dumps(
                {
                    "file_schema": CONTAINED,
                    "traces": [
                        {
                            "vantage_point": {"type": "client"},
                            "common_fields": {"reference_time": {"epoch": "yesterday"}},
                            "events": [],
                        }
                    ],
                }
            ),
            "epoch 'yesterday' is no date",
        ),
        (f"{RECORD_SEPARATOR}{{}}\n", "the first record is not a"),
        (f'{RECORD_SEPARATOR}{{"file_schema": "x"}}\n{RECORD_SEPARATOR}[', "record 1: not JSON"),
    ],
)
def test_a_broken_file_is_one_clear_error(text: str, message: str) -> None:
    with pytest.raises(TraceFormatError, match=message):
        from_qlog_draft(text, "broken.qlog")


def test_events_at_the_same_time_on_both_sides_are_flagged() -> None:
    imported = from_qlog_draft(draft_text(example("first-get")), "export.qlog")
    assert len(imported.warnings) == 1
    assert "qlog keeps no order between vantage points" in imported.warnings[0]
