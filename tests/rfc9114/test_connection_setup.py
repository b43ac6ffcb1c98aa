"""RFC 9114 §6.2.1, §7.2.4: each side's control stream, and the SETTINGS frame that opens it.

Both ways of driving the connection are used: a `MemoryPair` for what an endpoint sends
when it starts, and a lone `H3Connection` fed crafted control-stream bytes for what it
accepts and refuses. Errors are checked in the actions (CloseConnection) and in the trace
(`connection_error` with its code, rule and section).
"""

from __future__ import annotations

import pytest
from h3_connection_helpers import (
    CLIENT_CONTROL,
    CLIENT_DECODER,
    CLIENT_ENCODER,
    DYNAMIC,
    REQUEST,
    SERVER_CONTROL,
    Lone,
    assert_connection_error,
    assert_frame_traced,
    assert_no_error,
    assert_trace_labelled,
    frame_bytes,
    pair,
    stream_header,
)

from h3learn.h3.actions import SendStreamData
from h3learn.h3.connection import H3Connection, H3UsageError
from h3learn.h3.errors import ErrorCode, reserved_value
from h3learn.h3.frames import (
    CancelPushFrame,
    Frame,
    GoawayFrame,
    MaxPushIdFrame,
    SettingsFrame,
    UnknownFrame,
)
from h3learn.h3.http_events import SettingsReceived
from h3learn.h3.priority_update import PriorityUpdateFrame
from h3learn.h3.settings import SettingId, Settings
from h3learn.h3.stream_types import StreamType
from h3learn.transport.memory import MemoryPair

# -- §6.2.1: each side opens a control stream and sends SETTINGS first -----------------------


def test_each_endpoint_opens_its_control_stream_with_settings_as_the_first_frame() -> None:
    memory = MemoryPair.create(client_settings=DYNAMIC)
    client_first, *_ = memory.client.actions_to_send()
    server_first, *_ = memory.server.actions_to_send()
    settings = frame_bytes(SettingsFrame(DYNAMIC.pairs()))
    assert client_first == SendStreamData(CLIENT_CONTROL, stream_header(StreamType.CONTROL))
    assert server_first == SendStreamData(SERVER_CONTROL, stream_header(StreamType.CONTROL))
    client_created = [e for e in memory.log.events if e.name == "frame_created"]
    assert client_created[0].stream_id == CLIENT_CONTROL
    assert client_created[0].raw == settings
    assert client_created[0].data["frame"]["frame_type"] == "settings"


def test_an_endpoint_opens_exactly_one_control_stream_and_both_qpack_streams() -> None:
    memory = pair()
    types = {
        e.stream_id: e.data["stream_type"]
        for e in memory.log.events
        if e.name == "stream_type_set" and e.endpoint == "client" and e.data["owner"] == "local"
    }
    assert types == {
        CLIENT_CONTROL: "control",
        CLIENT_ENCODER: "qpack_encode",
        CLIENT_DECODER: "qpack_decode",
    }


def test_settings_are_sent_without_waiting_for_anything_from_the_peer() -> None:
    """RFC 9114 §7.2.4.2: SETTINGS leave as soon as the endpoint can send."""
    connection = H3Connection(is_client=False, settings=DYNAMIC)
    connection.initiate()
    data = b"".join(
        a.data
        for a in connection.actions_to_send()
        if isinstance(a, SendStreamData) and a.stream_id == SERVER_CONTROL
    )
    assert data == stream_header(StreamType.CONTROL) + frame_bytes(SettingsFrame(DYNAMIC.pairs()))


def test_local_settings_are_in_the_trace_before_any_byte_leaves() -> None:
    memory = MemoryPair.create(client_settings=DYNAMIC)
    first = memory.log.events[0]
    assert (first.endpoint, first.name) == ("client", "parameters_set")
    assert first.data["owner"] == "local"
    assert {s["name"]: s["value"] for s in first.data["settings"]} == {
        "QPACK_MAX_TABLE_CAPACITY": 4096,
        "QPACK_BLOCKED_STREAMS": 16,
    }
    sent = [e.seq for e in memory.log.events if e.name in ("stream_type_set", "frame_created")]
    assert first.seq < min(sent)


def test_each_endpoint_applies_the_settings_its_peer_sent() -> None:
    memory = MemoryPair.create(
        client_settings=DYNAMIC, server_settings=Settings(max_field_section_size=900)
    )
    memory.pump()
    assert memory.server.peer_settings == DYNAMIC
    assert memory.client.peer_settings == Settings(max_field_section_size=900)
    assert memory.server.encoder.max_table_capacity == 4096
    assert memory.server.encoder.max_blocked_streams == 16
    assert SettingsReceived(settings={0x06: 900}) in memory.received["client"]
    remote = [
        e for e in memory.log.events if e.name == "parameters_set" and e.data["owner"] == "remote"
    ]
    assert [e.endpoint for e in remote] == ["server", "client"]
    assert_trace_labelled(memory.log)


def test_until_settings_arrive_the_peer_is_assumed_to_have_the_defaults() -> None:
    """RFC 9114 §7.2.4.2: requests may go before SETTINGS arrive, under the initial values."""
    memory = MemoryPair.create(server_settings=DYNAMIC)
    assert memory.client.peer_settings == Settings()
    memory.client.send_request([*REQUEST, (b"x-a", b"1")], end_stream=True)
    memory.client.send_request([*REQUEST, (b"x-a", b"1")], end_stream=True)
    assert memory.client.encoder.table.insert_count == 0, "no dynamic table before SETTINGS"
    memory.pump()
    assert memory.client.peer_settings == DYNAMIC
    assert len([e for e in memory.received["server"] if type(e).__name__ == "HeadersReceived"]) == 2


# -- the control stream as bytes on the wire ----------------------------------------------


def test_settings_frame_is_traced_with_the_bytes_received_and_every_byte_labelled() -> None:
    lone = Lone.server(open_peer_streams=False)
    grease = reserved_value(3)
    settings = frame_bytes(SettingsFrame(((SettingId.QPACK_BLOCKED_STREAMS, 8), (grease, 7))))
    lone.feed(CLIENT_CONTROL, stream_header(StreamType.CONTROL) + settings)
    event = assert_frame_traced(lone, settings, "settings")
    assert event.stream_id == CLIENT_CONTROL
    type_set = lone.events("stream_type_set")[-1]
    assert (type_set.raw, type_set.data["stream_type"]) == (b"\x00", "control")
    assert [f.name for f in event.fields] == ["Type", "Length"] + ["Identifier", "Value"] * 2
    assert_no_error(lone)


def test_the_control_stream_may_arrive_one_byte_at_a_time() -> None:
    lone = Lone.server(open_peer_streams=False)
    settings = frame_bytes(SettingsFrame(DYNAMIC.pairs()))
    events = lone.feed_bytewise(CLIENT_CONTROL, stream_header(StreamType.CONTROL) + settings)
    assert events == [SettingsReceived(settings=dict(DYNAMIC.pairs()))]
    assert lone.conn.peer_settings == DYNAMIC
    assert_frame_traced(lone, settings, "settings")
    assert_no_error(lone)


def test_a_longer_than_needed_varint_encoding_in_settings_is_accepted() -> None:
    """RFC 9000 §16 lets any integer take more bytes; the trace shows the bytes as sent."""
    lone = Lone.server(open_peer_streams=False)
    settings = bytes.fromhex("04 09 4001 80001000 07 4010")  # Type, Length, 1=4096, 7=16
    lone.feed(CLIENT_CONTROL, stream_header(StreamType.CONTROL) + settings)
    assert lone.conn.peer_settings == DYNAMIC
    assert_frame_traced(lone, settings, "settings")
    assert_no_error(lone)


@pytest.mark.parametrize(
    "first",
    [
        GoawayFrame(0),
        MaxPushIdFrame(3),
        CancelPushFrame(0),
        PriorityUpdateFrame(0, b"u=1"),
        UnknownFrame(reserved_value(5), b"padding"),
        UnknownFrame(0x2B, b"an extension frame"),
    ],
    ids=lambda frame: frame.describe(),
)
def test_first_frame_on_the_control_stream_other_than_settings_is_h3_missing_settings(
    first: Frame,
) -> None:
    """RFC 9114 §6.2.1; §9: an unknown type does not stand in for SETTINGS either."""
    lone = Lone.server(open_peer_streams=False)
    lone.feed(CLIENT_CONTROL, stream_header(StreamType.CONTROL) + frame_bytes(first))
    event = assert_connection_error(lone, ErrorCode.H3_MISSING_SETTINGS, "9114#6.2.1")
    assert "not SETTINGS" in event.data["rule"]
    assert_frame_traced(lone, frame_bytes(first), first.qlog()["frame_type"])


def test_second_settings_frame_is_h3_frame_unexpected() -> None:
    """RFC 9114 §7.2.4: SETTINGS is sent once, as the first frame of the control stream."""
    lone = Lone.client()
    lone.control(SettingsFrame(((SettingId.QPACK_BLOCKED_STREAMS, 1),)))
    event = assert_connection_error(lone, ErrorCode.H3_FRAME_UNEXPECTED, "9114#7.2.4")
    assert event.data["rule"] == "second SETTINGS frame on the control stream"


def test_settings_stay_as_first_received_after_a_second_settings_frame() -> None:
    lone = Lone.client(peer_settings=((SettingId.QPACK_BLOCKED_STREAMS, 3),))
    lone.control(SettingsFrame(((SettingId.QPACK_BLOCKED_STREAMS, 1),)))
    assert lone.conn.peer_settings.qpack_blocked_streams == 3


# -- §7.2.4.1: the settings themselves --------------------------------------------------------


@pytest.mark.parametrize("identifier", [0x02, 0x03, 0x04, 0x05])
def test_receiving_an_http2_setting_is_h3_settings_error(identifier: int) -> None:
    """RFC 9114 §7.2.4.1: the HTTP/2 identifiers with no HTTP/3 setting are reserved."""
    lone = Lone.server(peer_settings=((identifier, 0),))
    assert_connection_error(lone, ErrorCode.H3_SETTINGS_ERROR, "9114#7.2.4.1")
    assert lone.conn.peer_settings_received is False


def test_duplicate_setting_identifier_is_h3_settings_error() -> None:
    """RFC 9114 §7.2.4 lets a receiver (MAY) treat a repeated identifier as H3_SETTINGS_ERROR."""
    lone = Lone.server(peer_settings=((0x06, 100), (0x06, 200)))
    assert_connection_error(lone, ErrorCode.H3_SETTINGS_ERROR, "9114#7.2.4")


@pytest.mark.parametrize("setting", [SettingId.ENABLE_CONNECT_PROTOCOL, SettingId.H3_DATAGRAM])
def test_a_boolean_setting_other_than_0_or_1_is_h3_settings_error(setting: SettingId) -> None:
    lone = Lone.client(peer_settings=((setting, 2),))
    assert_connection_error(lone, ErrorCode.H3_SETTINGS_ERROR)


def test_reserved_and_unknown_setting_identifiers_are_ignored() -> None:
    """RFC 9114 §7.2.4: unknown identifiers are ignored; §7.2.4.1: reserved ones mean nothing."""
    grease, unknown = reserved_value(9), 0x2B603742
    lone = Lone.client(peer_settings=((grease, 1), (unknown, 5), (SettingId.H3_DATAGRAM, 1)))
    assert_no_error(lone)
    assert lone.conn.peer_settings == Settings(
        h3_datagram=True, ignored=((grease, 1), (unknown, 5))
    )
    remote = [e for e in lone.events("parameters_set") if e.data["owner"] == "remote"]
    names = [s["name"] for s in remote[0].data["settings"]]
    assert names == [
        "H3_DATAGRAM",
        f"reserved setting {grease:#x}",
        f"unknown setting {unknown:#x}",
    ]


def test_the_reserved_setting_zero_is_ignored_like_an_unknown_one() -> None:
    lone = Lone.client(peer_settings=((0x00, 1),))
    assert_no_error(lone)


def test_an_endpoint_does_not_send_a_field_section_larger_than_the_peer_allows() -> None:
    """RFC 9114 §4.2.2 / §7.2.4.2: nothing that the peer's settings make invalid is sent."""
    memory = pair(server_settings=Settings(max_field_section_size=200))
    with pytest.raises(H3UsageError, match="SETTINGS_MAX_FIELD_SECTION_SIZE 200"):
        memory.client.send_request([*REQUEST, (b"x-long", b"v" * 100)])
    assert memory.client.actions_to_send() == []
    # No stream ID was spent on it: one skipped would open the stream at the peer too (RFC
    # 9000 §2.1), and leave it open for good.
    assert memory.client.send_request(REQUEST, end_stream=True) == 0
