"""qlog export (h3learn/trace/qlog.py): the current drafts, and the 0.3 form aioquic writes.

The shapes are checked against the drafts' definitions (draft-ietf-quic-qlog-main-schema,
draft-ietf-quic-qlog-h3-events-13, and -05 for QPACK), and the 0.3 HTTP/3 shapes against
what aioquic's own QuicLoggerTrace produces for the same frames.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from aioquic.quic.logger import QuicLoggerTrace
from trace_helpers import GET_HEADERS, http3_exchange, renumber, walkthrough_log

from h3learn.events import EventLog
from h3learn.qpack.encoder import Encoder
from h3learn.trace.qlog import (
    H3LEARN_EVENT_SCHEMA,
    HTTP3_EVENT_SCHEMA,
    QPACK_EVENT_SCHEMA,
    odcid,
    to_qlog,
    to_qlog_03,
)
from h3learn.trace.store import Trace

#: Which event schema each name prefix belongs to (current drafts).
NAMESPACES = {
    "http3": HTTP3_EVENT_SCHEMA,
    "qpack": QPACK_EVENT_SCHEMA,
    "h3learn": H3LEARN_EVENT_SCHEMA,
}


@pytest.fixture
def trace() -> Trace:
    events = renumber(http3_exchange() + walkthrough_log(sections_first=True).events)
    return Trace("a GET and a page load", {"lesson": "first"}, events, "2026-12-01T10:00:00+00:00")


def named(qlog_trace: dict[str, Any], name: str) -> list[dict[str, Any]]:
    return [event["data"] for event in qlog_trace["events"] if event["name"] == name]


def by_endpoint(qlog: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {entry["vantage_point"]["type"]: entry for entry in qlog["traces"]}


# -- the current drafts ------------------------------------------------------------------


def test_the_file_has_the_main_schema_fields(trace: Trace) -> None:
    qlog = to_qlog(trace)
    assert qlog["file_schema"] == "urn:ietf:params:qlog:file:contained"
    assert qlog["serialization_format"] == "application/qlog+json"
    assert qlog["title"] == trace.title
    assert json.dumps(qlog, allow_nan=False).startswith('{"file_schema"')


def test_one_trace_per_vantage_point_with_every_event_of_that_endpoint(trace: Trace) -> None:
    traces = by_endpoint(to_qlog(trace))
    assert sorted(traces) == ["client", "server"]
    for endpoint, entry in traces.items():
        mine = [event for event in trace.events if event.endpoint == endpoint]
        assert [event["time"] for event in entry["events"]] == [event.time for event in mine]
        assert entry["common_fields"]["time_format"] == "relative_to_epoch"
        assert entry["common_fields"]["reference_time"] == {
            "clock_type": "monotonic",
            "epoch": "unknown",
        }


def test_every_event_name_belongs_to_a_declared_schema(trace: Trace) -> None:
    for entry in to_qlog(trace)["traces"]:
        assert entry["event_schemas"][:2] == [HTTP3_EVENT_SCHEMA, QPACK_EVENT_SCHEMA]
        for event in entry["events"]:
            assert set(event) == {"time", "name", "data"}
            assert isinstance(event["time"], float) and isinstance(event["data"], dict)
            namespace, _, name = event["name"].partition(":")
            assert name and NAMESPACES[namespace] in entry["event_schemas"], event["name"]


def test_private_schemas_do_not_claim_the_ietf_namespace() -> None:
    """Main schema, "Event Schema URIs": private schemas MUST NOT use urn:ietf:params:qlog."""
    for uri in (QPACK_EVENT_SCHEMA, H3LEARN_EVENT_SCHEMA):
        assert not uri.startswith("urn:ietf:")
        assert uri.startswith("https://") and ".invalid/" in uri


def test_http3_frames_have_the_h3_events_13_shape(trace: Trace) -> None:
    traces = by_endpoint(to_qlog(trace))
    settings_frame = named(traces["client"], "http3:frame_created")[0]
    assert settings_frame == {
        "stream_id": 2,
        "frame": {
            "frame_type": "settings",
            "settings": [
                {"name": "settings_qpack_max_table_capacity", "value": 4096},
                {"name": "settings_qpack_blocked_streams", "value": 16},
                {"name": "unknown", "name_bytes": 0x2B, "value": 7},
            ],
            "raw": {"length": 9, "payload_length": 7, "data": "0407015000071" + "02b07"},
        },
    }
    headers = named(traces["server"], "http3:frame_parsed")[1]
    assert headers["frame"]["frame_type"] == "headers"
    assert headers["frame"]["headers"] == GET_HEADERS  # found in the qpack headers_decoded
    assert headers["frame"]["raw"]["payload_length"] == headers["frame"]["raw"]["length"] - 2
    goaway = named(traces["client"], "http3:frame_parsed")[1]
    assert goaway["frame"] == {
        "frame_type": "goaway",
        "id": 4,
        "raw": {"length": 3, "payload_length": 1, "data": "070104"},
    }


def test_reserved_settings_and_parameters(trace: Trace) -> None:
    server = by_endpoint(to_qlog(trace))["server"]
    local, remote = named(server, "http3:parameters_set")
    assert local == {
        "initiator": "local",
        "max_table_capacity": 0,
        "max_field_section_size": 16384,
        "setting_0x21": 1,
    }
    assert remote["initiator"] == "remote" and remote["blocked_streams_count"] == 16


def test_stream_types(trace: Trace) -> None:
    client = named(by_endpoint(to_qlog(trace))["client"], "http3:stream_type_set")
    assert client[0] == {"stream_id": 2, "initiator": "local", "stream_type": "control"}
    assert {
        "stream_id": 7,
        "initiator": "remote",
        "stream_type": "push",
        "associated_push_id": 0,
    } in client
    assert {
        "stream_id": 11,
        "initiator": "remote",
        "stream_type": "unknown",
        "stream_type_bytes": 0x54,
    } in client


def test_qpack_events_have_the_h3_events_05_shapes(trace: Trace) -> None:
    client = by_endpoint(to_qlog(trace))["client"]
    instruction = named(client, "qpack:instruction_created")[1]
    assert instruction["instruction"]["instruction_type"] == "insert_with_name_reference"
    assert instruction["raw"]["length"] == len(bytes.fromhex(instruction["raw"]["data"]))
    encoded = next(
        data for data in named(client, "qpack:headers_encoded") if data["stream_id"] == 4
    )
    assert set(encoded) == {"stream_id", "headers", "block_prefix", "header_block", "raw"}
    assert encoded["block_prefix"] == {
        "required_insert_count": 3,
        "sign_bit": False,
        "delta_base": 0,
    }
    types = {line["header_field_type"] for line in encoded["header_block"]}
    assert types <= {"indexed_header", "literal_with_name", "literal_without_name"}
    indexed = [line for line in encoded["header_block"] if line.get("table_type") == "dynamic"]
    assert indexed and all("index" in line for line in indexed)
    inserted = named(client, "qpack:dynamic_table_updated")[0]
    assert inserted == {
        "owner": "local",
        "update_type": "inserted",
        "entries": [{"index": 0, "name": ":authority", "value": "www.example.org"}],
    }
    acknowledged = [
        data for data in named(client, "qpack:state_updated") if "known_received_count" in data
    ]
    assert acknowledged[0] == {
        "owner": "local",
        "known_received_count": 3,
        "current_insert_count": 3,
    }
    server = by_endpoint(to_qlog(trace))["server"]
    assert named(server, "qpack:stream_state_updated")[0] == {"stream_id": 4, "state": "blocked"}


def test_events_without_a_qlog_counterpart_use_the_h3learn_namespace(trace: Trace) -> None:
    traces = by_endpoint(to_qlog(trace))
    assert named(traces["server"], "h3learn:stream_state_updated")[0]["new"] == "receiving_content"
    assert named(traces["client"], "h3learn:stream_error")[0]["code_name"] == "H3_REQUEST_CANCELLED"
    assert named(traces["client"], "h3learn:stream_data_sent") == [
        {"stream_id": 0, "length": 21, "end_stream": True}
    ]
    assert H3LEARN_EVENT_SCHEMA in traces["client"]["event_schemas"]
    qpack_only = Trace("qpack", {}, walkthrough_log().events, None)
    for entry in to_qlog(qpack_only)["traces"]:
        assert H3LEARN_EVENT_SCHEMA not in entry["event_schemas"]


def test_a_skipped_insert_has_no_qpack_draft_event_so_it_is_an_h3learn_one() -> None:
    log = EventLog()
    encoder = Encoder(log.for_endpoint("client"))
    encoder.apply_settings(64, 0)
    with pytest.raises(ValueError):
        encoder.insert(b"x-too-big", b"z" * 40)  # 81 bytes: larger than the table
    skipped = Trace("skipped", {}, log.events, None)
    for export in (to_qlog(skipped), to_qlog_03(skipped)):
        client = export["traces"][0]
        [data] = named(client, "h3learn:insert_skipped")
        assert data["reason"] == "it is larger than the table's capacity, 64 bytes"
        assert not named(client, "qpack:insert_skipped")


def test_bytes_can_be_left_out(trace: Trace) -> None:
    text = json.dumps(to_qlog(trace, include_bytes=False))
    assert '"data": "' not in text and '"length": 9' in text


def test_a_known_epoch_gives_system_time(trace: Trace) -> None:
    trace.meta["epoch"] = "2026-12-01T10:00:00+00:00"
    for entry in to_qlog(trace)["traces"]:
        assert entry["common_fields"]["reference_time"] == {
            "clock_type": "system",
            "epoch": "2026-12-01T10:00:00+00:00",
        }
    assert to_qlog_03(trace)["traces"][0]["common_fields"]["reference_time"] == 1796119200000.0


# -- qlog 0.3 (qvis, aioquic) ------------------------------------------------------------


def test_the_03_file_has_aioquics_top_level(trace: Trace) -> None:
    qlog = to_qlog_03(trace)
    assert (qlog["qlog_format"], qlog["qlog_version"]) == ("JSON", "0.3")
    traces = by_endpoint(qlog)
    assert sorted(traces) == ["client", "server"]
    ids = {entry["common_fields"]["ODCID"] for entry in qlog["traces"]}
    assert ids == {odcid(trace)} and len(odcid(trace)) == 16
    for entry in qlog["traces"]:
        assert entry["common_fields"]["time_format"] == "relative"
        for event in entry["events"]:
            assert set(event) == {"time", "name", "data"}
            assert event["name"].split(":")[0] in {"http", "qpack", "transport", "h3learn"}


def test_03_frames_match_what_aioquic_logs(trace: Trace) -> None:
    logger = QuicLoggerTrace(is_client=True, odcid=b"\x00")
    client = by_endpoint(to_qlog_03(trace))["client"]
    headers = next(
        data
        for data in named(client, "http:frame_created")
        if data["frame"]["frame_type"] == "headers"
    )
    expected = logger.encode_http3_headers_frame(
        length=headers["length"],
        headers=[(h["name"].encode(), h["value"].encode()) for h in GET_HEADERS],
        stream_id=0,
    )
    assert headers == expected
    data = next(d for d in named(client, "http:frame_parsed") if d["frame"]["frame_type"] == "data")
    assert data == logger.encode_http3_data_frame(length=5, stream_id=0)


def test_03_stream_types_use_aioquics_names(trace: Trace) -> None:
    client = named(by_endpoint(to_qlog_03(trace))["client"], "http:stream_type_set")
    assert client[0] == {"new": "control", "stream_id": 2, "owner": "local"}
    assert {"new": "push", "stream_id": 7, "owner": "remote", "associated_push_id": 0} in client
    assert {"new": "unknown", "stream_id": 11, "owner": "remote"} in client
    assert {"new": "data", "stream_id": 0, "owner": "local"} in client


def test_03_transport_events(trace: Trace) -> None:
    client = by_endpoint(to_qlog_03(trace))["client"]
    assert named(client, "transport:data_moved") == [
        {"stream_id": 0, "length": 21, "from": "application", "to": "transport"}
    ]
