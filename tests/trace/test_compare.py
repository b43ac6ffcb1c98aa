"""Comparing peers (h3learn/trace/compare.py) and the list's summary (connection_summary.py).

The QPACK profile is checked against the examples, whose encoders' choices are known: in
the dynamic-table example the client's first request uses the static table only and the
later ones refer to the entries it inserted (RFC 9204 §4.3, §4.5); the first GET never
inserts anything.
"""

from __future__ import annotations

from h3learn.scenarios.examples import EXAMPLES
from h3learn.trace.compare import http3_bytes_sent, qpack_profile, setting_names
from h3learn.trace.connection_summary import ConnectionSummary


def example(example_id: str) -> list:  # type: ignore[type-arg]
    return next(e for e in EXAMPLES if e.id == example_id).record()


def test_profile_of_a_peer_that_uses_the_dynamic_table_from_its_second_request() -> None:
    events = example("dynamic-table")
    profile = qpack_profile(events, "server")
    sections = [e for e in events if e.endpoint == "server" and e.name == "headers_decoded"]
    instructions = [
        e
        for e in events
        if e.endpoint == "server"
        and e.name == "instruction_parsed"
        and e.data["instruction_type"] != "section_acknowledgement"
    ]
    assert profile["field_sections"]["count"] == len(sections) == 4
    assert profile["encoder_stream"]["instructions"] == len(instructions)
    assert profile["encoder_stream"]["bytes"] == sum(len(e.raw) for e in instructions)
    assert profile["encoder_stream"]["inserts"] == len(instructions) - 1  # one capacity
    first_dynamic = next(
        n
        for n, e in enumerate(sections, 1)
        if any(line["table"] == "dynamic" for line in e.data["field_lines"])
    )
    assert profile["first_dynamic_section"] == first_dynamic == 2
    assert profile["first_section_required_insert_count"] == 0
    encoded = sum(len(e.raw) for e in sections)
    plain = sum(
        len(h["name"].encode()) + len(h["value"].encode())
        for e in sections
        for h in e.data["headers"]
    )
    assert profile["field_sections"]["encoded_bytes"] == encoded
    assert profile["field_sections"]["plain_bytes"] == plain
    assert profile["ratio"] == round(encoded / plain, 3)
    lines = profile["field_sections"]["field_lines"]
    assert lines["dynamic"] > 0 and sum(lines.values()) == sum(
        len(e.data["field_lines"]) for e in sections
    )
    assert profile["settings"]["peer"][0] == {"name": "QPACK_MAX_TABLE_CAPACITY", "value": 4096}


def test_the_decoder_stream_counts_what_the_recorded_endpoints_decoder_sent_back() -> None:
    """RFC 9204 §4.4: acknowledgments are the price of the peer encoder's dynamic table."""
    events = example("dynamic-table")
    sent = [
        e
        for e in events
        if e.endpoint == "server"
        and e.name == "instruction_created"
        and e.data["instruction_type"] in ("section_acknowledgement", "insert_count_increment")
    ]
    profile = qpack_profile(events, "server")
    assert sent and profile["decoder_stream"] == {
        "instructions": len(sent),
        "bytes": sum(len(e.raw) for e in sent),
    }
    assert qpack_profile(example("first-get"), "server")["decoder_stream"]["bytes"] == 0


def test_bytes_sent_are_the_bytes_the_peer_read() -> None:
    """Everything one endpoint writes arrives whole at the other (in-memory streams): its
    frames, instructions and stream types, counted from the receiver's events instead."""
    events = example("dynamic-table")
    for sender, receiver in (("client", "server"), ("server", "client")):
        read = sum(
            len(e.raw)
            for e in events
            if e.endpoint == receiver
            and (
                e.name in ("frame_parsed", "instruction_parsed")
                or (e.name == "stream_type_set" and e.data["owner"] == "remote")
            )
        )
        assert http3_bytes_sent(events, sender) == read > 0


def test_profile_of_a_peer_that_never_uses_the_dynamic_table() -> None:
    profile = qpack_profile(example("first-get"), "server")
    assert profile["encoder_stream"] == {"instructions": 0, "bytes": 0, "inserts": 0}
    assert profile["first_dynamic_section"] is None
    assert profile["field_sections"]["field_lines"]["dynamic"] == 0
    assert profile["ratio_with_encoder_stream"] == profile["ratio"]


def test_profile_defaults_to_the_first_events_endpoint_and_survives_an_empty_trace() -> None:
    assert qpack_profile(example("first-get"))["endpoint"] == "client"
    empty = qpack_profile([])
    assert empty["ratio"] is None and empty["field_sections"]["count"] == 0


def test_setting_names_lists_every_peers_settings_once_in_order() -> None:
    profiles = [qpack_profile(example(name), "server") for name in ("first-get", "dynamic-table")]
    names = setting_names(profiles)
    assert len(names) == len(set(names)) and "QPACK_MAX_TABLE_CAPACITY" in names


def test_connection_summary_reads_requests_agent_settings_and_errors() -> None:
    events = example("dynamic-table")
    summary = ConnectionSummary().add_all(events)
    assert summary.view == "client"
    assert summary.requests == 4
    assert summary.user_agent == "h3learn/0.1 (learning HTTP/3)"
    assert summary.peer_settings is not None
    assert summary.settings_text().startswith("QPACK_MAX_TABLE_CAPACITY=4096")
    assert summary.error_count == 0 and summary.closed is None
    server_only = ConnectionSummary().add_all([e for e in events if e.endpoint == "server"])
    assert server_only.requests == 4 and server_only.view == "server"
