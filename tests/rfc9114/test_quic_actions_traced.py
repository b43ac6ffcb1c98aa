"""Every RESET_STREAM, STOP_SENDING and CONNECTION_CLOSE the connection asks of QUIC is a step.

docs/events.md: an HTTP/3 endpoint acts on streams through QUIC frames (RFC 9000 §19.4
RESET_STREAM, §19.5 STOP_SENDING, §19.19 CONNECTION_CLOSE). A learner stepping through a
trace must see each one, with its code and why it was sent. Each test drives a lone
endpoint into one situation and checks that the actions it queued and the events it
recorded match one for one.
"""

from __future__ import annotations

from h3_connection_helpers import (
    CLIENT_CONTROL,
    REQUEST,
    Lone,
    frame_bytes,
    stream_header,
)

from h3learn.h3.actions import Action, CloseConnection, ResetStream, StopSending
from h3learn.h3.errors import ErrorCode, reserved_value
from h3learn.h3.frames import GoawayFrame, SettingsFrame

STREAM_FRAMES = {ResetStream: "reset_stream", StopSending: "stop_sending"}


def assert_every_action_traced(lone: Lone) -> list[tuple[str, int, int]]:
    """The QUIC actions other than stream data, each matched in order by its event."""
    actions: list[Action] = [*lone.opening, *lone.sent]
    wanted = []
    for action in actions:
        if isinstance(action, ResetStream | StopSending):
            wanted.append((STREAM_FRAMES[type(action)], action.stream_id, action.error_code))
        elif isinstance(action, CloseConnection):
            wanted.append(("close", -1, action.error_code))
    recorded = []
    for event in lone.log.events:
        if event.name in ("reset_stream", "stop_sending") and event.data["direction"] == "sent":
            recorded.append((event.name, event.data["stream_id"], event.data["code"]))
            assert event.summary and event.data["reason"] and event.data["code_name"]
        elif event.name in ("connection_error", "connection_closed") and (
            event.data["direction"] == "sent"
        ):
            recorded.append(("close", -1, event.data["code"]))
    assert recorded == wanted
    return recorded


def test_stop_sending_on_a_reserved_stream_type_is_traced() -> None:
    lone = Lone.server()
    lone.feed(14, stream_header(reserved_value(3)) + b"ignored")
    assert assert_every_action_traced(lone) == [
        ("stop_sending", 14, ErrorCode.H3_STREAM_CREATION_ERROR)
    ]
    (event,) = lone.events("stop_sending")
    assert event.stream_id == 14 and event.rfc == ("9000#19.5", "9114#6.2.3")
    assert "STOP_SENDING on stream 14" in event.summary


def test_a_stream_error_shows_both_stream_frames() -> None:
    """RFC 9114 §8: a stream error is carried out by STOP_SENDING and RESET_STREAM."""
    lone = Lone.server()
    lone.feed(0, lone.headers(0, [*REQUEST, (b"Upper", b"case")]), end_stream=False)
    assert assert_every_action_traced(lone) == [
        ("stop_sending", 0, ErrorCode.H3_MESSAGE_ERROR),
        ("reset_stream", 0, ErrorCode.H3_MESSAGE_ERROR),
    ]
    names = [e.name for e in lone.log.events if e.stream_id == 0][-3:]
    assert names == ["stream_error", "stop_sending", "reset_stream"]


def test_answer_to_a_peer_reset_is_traced() -> None:
    """RFC 9114 §4.1.1: after the client's RESET_STREAM the server ends its half too."""
    lone = Lone.server()
    lone.feed(0, lone.headers(0, REQUEST)[:3])
    lone.reset(0, ErrorCode.H3_REQUEST_CANCELLED)
    assert assert_every_action_traced(lone) == [
        ("reset_stream", 0, ErrorCode.H3_REQUEST_INCOMPLETE)
    ]


def test_received_stop_sending_and_its_reset_stream_answer_are_traced() -> None:
    """RFC 9000 §3.5: STOP_SENDING is answered with RESET_STREAM, which copies its code."""
    lone = Lone.client()
    stream_id = lone.request(end_stream=False)
    lone.stop_sending(stream_id, ErrorCode.H3_REQUEST_REJECTED)
    assert assert_every_action_traced(lone) == [
        ("reset_stream", stream_id, ErrorCode.H3_REQUEST_REJECTED)
    ]
    (received,) = lone.events("stop_sending")
    assert received.data["direction"] == "received"
    assert received.data["code_name"] == "H3_REQUEST_REJECTED"


def test_cancelling_a_request_is_traced() -> None:
    lone = Lone.client()
    stream_id = lone.request(end_stream=False)
    lone.conn.reset_stream(stream_id)
    lone.sent += lone.conn.actions_to_send()
    assert assert_every_action_traced(lone) == [
        ("stop_sending", stream_id, ErrorCode.H3_REQUEST_CANCELLED),
        ("reset_stream", stream_id, ErrorCode.H3_REQUEST_CANCELLED),
    ]


def test_requests_rejected_by_goaway_are_traced() -> None:
    lone = Lone.client()
    for _ in range(3):
        lone.request()
    lone.control(GoawayFrame(4))
    assert assert_every_action_traced(lone) == [
        ("stop_sending", 4, ErrorCode.H3_REQUEST_CANCELLED),
        ("stop_sending", 8, ErrorCode.H3_REQUEST_CANCELLED),
    ]
    assert all("GOAWAY 4" in e.data["reason"] for e in lone.events("stop_sending"))


def test_connection_errors_and_closes_are_traced() -> None:
    lone = Lone.server()
    lone.feed(CLIENT_CONTROL, frame_bytes(SettingsFrame(())))
    assert assert_every_action_traced(lone) == [("close", -1, ErrorCode.H3_FRAME_UNEXPECTED)]

    closing = Lone.server()
    closing.conn.close()
    closing.sent += closing.conn.actions_to_send()
    assert assert_every_action_traced(closing) == [("close", -1, ErrorCode.H3_NO_ERROR)]
