"""qlog import (h3learn/trace/qlog_import.py) of what aioquic really writes.

Each test imports the qlog of a real aioquic HTTP/3 exchange run in the test process
(aioquic_pair.py): one GET over TLS 1.3 on an in-memory datagram pair.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from aioquic.quic.logger import QuicFileLogger, QuicLogger
from aioquic_pair import BODY, REQUEST, RESPONSE, run_get

from h3learn.events import Event
from h3learn.trace.qlog import to_qlog_03
from h3learn.trace.qlog_import import from_aioquic_qlog
from h3learn.trace.replay import Replay
from h3learn.trace.store import Trace, read_trace, write_trace
from h3learn.trace.stored_events import TraceFormatError


@pytest.fixture(scope="module")
def aioquic_qlog() -> dict[str, Any]:
    """QuicLogger.to_dict() of both endpoints (one logger shared by both configurations)."""
    logger = QuicLogger()
    assert run_get(logger, logger) == BODY
    document: dict[str, Any] = json.loads(json.dumps(logger.to_dict()))  # as read from a file
    return document


@pytest.fixture(scope="module")
def imported(aioquic_qlog: dict[str, Any]) -> Trace:
    return from_aioquic_qlog(aioquic_qlog)


def headers(fields: list[tuple[bytes, bytes]]) -> list[dict[str, str]]:
    return [{"name": name.decode(), "value": value.decode()} for name, value in fields]


def frames(trace: Trace, endpoint: str, name: str) -> list[dict[str, Any]]:
    return [
        event.data["frame"]
        for event in trace.events
        if event.endpoint == endpoint and event.name == name
    ]


def test_endpoints_come_from_the_vantage_points(imported: Trace) -> None:
    assert {event.endpoint for event in imported.events} == {"client", "server"}
    assert [event.seq for event in imported.events] == list(range(len(imported.events)))
    times = [event.time for event in imported.events]
    assert times == sorted(times) and 0 <= times[0] < 1000


def test_the_http3_frames_aioquic_logged(imported: Trace) -> None:
    assert frames(imported, "client", "frame_created") == [
        {"frame_type": "headers", "headers": headers(REQUEST)}
    ]
    assert frames(imported, "server", "frame_parsed") == [
        {"frame_type": "headers", "headers": headers(REQUEST)}
    ]
    assert frames(imported, "server", "frame_created") == [
        {"frame_type": "headers", "headers": headers(RESPONSE)},
        {"frame_type": "data"},
    ]
    data = [e for e in imported.events if e.endpoint == "client" and e.name == "frame_parsed"][1]
    assert (data.stream_id, data.data["length"]) == (0, len(BODY))
    assert data.summary.startswith("server → client: DATA on stream 0 (5 bytes)")


def test_stream_types_and_who_opened_them(imported: Trace) -> None:
    seen = {
        (event.endpoint, event.stream_id): (event.data["stream_type"], event.data["owner"])
        for event in imported.events
        if event.name == "stream_type_set"
    }
    assert seen[("client", 2)] == ("control", "local")
    assert seen[("server", 2)] == ("control", "remote")
    assert seen[("client", 7)] == ("qpack_encode", "remote")
    assert seen[("server", 11)] == ("qpack_decode", "local")
    values = {
        e.data["stream_type"]: e.data["stream_type_value"]
        for e in imported.events
        if e.name == "stream_type_set"
    }
    assert values == {"control": 0, "qpack_encode": 2, "qpack_decode": 3}


def test_packets_are_summaries_without_bytes(imported: Trace) -> None:
    packets = [event for event in imported.events if event.category == "transport"]
    assert {event.name for event in packets} >= {"packet_sent", "packet_received"}
    first = packets[0]
    assert (first.endpoint, first.name, first.data["packet_type"]) == (
        "client",
        "packet_sent",
        "initial",
    )
    assert "crypto" in first.data["frames"] and first.data["length"] > 100
    assert all(event.raw == b"" and event.fields == () for event in imported.events)
    assert all("no bytes" in event.summary for event in imported.events)
    assert "no bytes" in imported.meta["note"]


def test_metadata_says_where_it_came_from(imported: Trace, aioquic_qlog: dict[str, Any]) -> None:
    odcid = aioquic_qlog["traces"][0]["common_fields"]["ODCID"]
    assert imported.meta["odcid"] == odcid and imported.title == f"aioquic qlog {odcid}"
    assert imported.meta["skipped"]["recovery:metrics_updated"] > 0
    assert imported.created is not None and imported.created == imported.meta["epoch"]
    assert imported.created.startswith("20")
    assert imported.warnings == []


def test_an_imported_trace_is_a_valid_trace_file_and_replays(
    imported: Trace, tmp_path: Path
) -> None:
    write_trace(tmp_path / "imported.json", imported.title, imported.events, imported.meta)
    assert read_trace(tmp_path / "imported.json").events == imported.events
    final = Replay(imported.events).state_after(len(imported.events) - 1)
    assert final["client"]["streams"]["0"] == {"type": "request", "owner": "local", "state": "open"}
    assert final["server"]["streams"]["6"]["type"] == "qpack_encode"
    assert final["client"]["qpack"]["local_table"]["entries"] == []  # aioquic logs no QPACK


def test_an_imported_connection_close_shows_the_connection_closed(imported: Trace) -> None:
    """RFC 9000 §19.19: aioquic's qlog has no HTTP/3 close event, only the packet carrying
    CONNECTION_CLOSE, with its error space and code. The replay shows the connection
    closed there: aioquic's default application code 0, which HTTP/3 does not define,
    counts as H3_NO_ERROR (RFC 9114 §8), so the close is clean."""
    close = next(
        event
        for event in imported.events
        if event.name == "packet_sent" and "connection_close" in event.data["frames"]
    )
    assert close.data["close"] == {"error_space": "application", "error_code": 0, "reason": ""}
    replay = Replay(imported.events)
    before = replay.state_after(close.seq - 1)[close.endpoint]["connection"]
    assert before["closed"] is None
    final = replay.state_after(len(imported.events) - 1)
    closed = final[close.endpoint]["connection"]["closed"]
    assert closed["seq"] == close.seq and closed["seen_in"] == "packet"
    assert (closed["clean"], closed["code"], closed["layer"], closed["direction"]) == (
        True,
        0,
        "http3",
        "sent",
    )
    assert final["client"]["connection"]["closed"] and final["server"]["connection"]["closed"]


def test_a_connection_close_without_its_code_is_closed_but_not_known_to_be_clean(
    imported: Trace,
) -> None:
    """A qlog file that lists the CONNECTION_CLOSE frame but not its code: closed, and
    ``clean`` null (not known) rather than a guess."""
    events = [
        replace(event, data={key: value for key, value in event.data.items() if key != "close"})
        for event in imported.events
    ]
    final = Replay(events).state_after(len(events) - 1)
    closed = [final[name]["connection"]["closed"] for name in ("client", "server")]
    assert all(c is not None and c["clean"] is None and "code" not in c for c in closed)


def test_the_files_quic_file_logger_writes(tmp_path: Path) -> None:
    """QuicFileLogger writes <ODCID>.qlog per connection; each endpoint logs to its own folder."""
    client_dir, server_dir = tmp_path / "client", tmp_path / "server"
    client_dir.mkdir()
    server_dir.mkdir()
    assert run_get(QuicFileLogger(str(client_dir)), QuicFileLogger(str(server_dir))) == BODY
    (client_file,) = client_dir.glob("*.qlog")
    (server_file,) = server_dir.glob("*.qlog")
    both = from_aioquic_qlog([client_file, server_file])
    assert {event.endpoint for event in both.events} == {"client", "server"}
    assert both.meta["odcid"] == client_file.stem
    only_client = from_aioquic_qlog(client_dir)  # a folder of .qlog files
    assert {event.endpoint for event in only_client.events} == {"client"}
    assert frames(only_client, "client", "frame_parsed")[0]["headers"] == headers(RESPONSE)
    assert from_aioquic_qlog(str(server_file)).events == from_aioquic_qlog(server_dir).events


def test_our_own_03_export_imports_back(imported: Trace) -> None:
    """The 0.3 export writes aioquic's shapes, so the importer reads it like aioquic's."""
    again = from_aioquic_qlog(json.loads(json.dumps(to_qlog_03(imported))))

    def http3(events: list[Event]) -> list[tuple[str, str, Any]]:
        return sorted(
            (e.endpoint, e.name, json.dumps(e.data, sort_keys=True))
            for e in events
            if e.category == "http3"
        )

    assert http3(again.events) == http3(imported.events)


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"qlog_version": "draft-02", "traces": []}, "qlog_version 'draft-02' is not supported"),
        ({"file_schema": "urn:ietf:params:qlog:file:contained"}, "a current-draft qlog file"),
        ({"qlog_version": "0.3", "traces": {}}, "'traces' is not a list"),
        ({"qlog_version": "0.3", "traces": [{"events": []}]}, "trace 0: vantage_point type None"),
        (
            {
                "qlog_version": "0.3",
                "traces": [{"vantage_point": {"type": "network"}, "events": []}],
            },
            "vantage_point type 'network' is not 'client' or 'server'",
        ),
        (
            {
                "qlog_version": "0.3",
                "traces": [
                    {
                        "vantage_point": {"type": "client"},
                        "events": [{"name": "x", "time": 1, "data": {}}],
                    }
                ],
            },
            "trace 0: event 0: 'name' is not 'category:event'",
        ),
        (
            {
                "qlog_version": "0.3",
                "traces": [
                    {"vantage_point": {"type": "client"}, "events": [{"name": "a:b", "time": "1"}]}
                ],
            },
            "event 0: 'time' is not a number",
        ),
    ],
)
def test_files_that_are_not_aioquic_qlog_are_refused_clearly(
    document: dict[str, Any], message: str
) -> None:
    with pytest.raises(TraceFormatError, match=message):
        from_aioquic_qlog(document)


def test_a_file_that_is_not_json(tmp_path: Path) -> None:
    path = tmp_path / "broken.qlog"
    path.write_text('{"qlog_version": "0.3", ')
    with pytest.raises(TraceFormatError, match=r"broken\.qlog: not JSON"):
        from_aioquic_qlog(path)
    path.write_text("[]")
    with pytest.raises(TraceFormatError, match=r"broken\.qlog: the top level is not an object"):
        from_aioquic_qlog(path)
