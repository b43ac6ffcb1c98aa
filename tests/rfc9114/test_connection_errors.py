"""RFC 9114 §8: how the connection ends streams and itself, and every code of §8.1 in use.

(The registry itself, reserved codes and the exception classes are tested in test_errors.py;
this file tests what `H3Connection` does with them.)

A connection error closes the whole connection: one CloseConnection with the code, a
`connection_error` event naming the rule, and every later input ignored. A stream error
resets one stream (RESET_STREAM and STOP_SENDING where those directions are still open), a
`stream_error` event, and every other stream carries on. A code received that this endpoint
does not know, or one used out of its context, means no more than H3_NO_ERROR.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from h3_connection_helpers import (
    CLIENT_CONTROL,
    POST,
    REQUEST,
    RESPONSE,
    Lone,
    assert_connection_error,
    assert_stream_error,
    frame_bytes,
    pair,
    stream_header,
)

from h3learn.events import EventLog
from h3learn.h3.actions import Action, CloseConnection, ResetStream, StopSending
from h3learn.h3.connection import H3UsageError
from h3learn.h3.errors import ErrorCode, code_name, interpret_received_code, reserved_value
from h3learn.h3.frames import DataFrame, GoawayFrame, HeadersFrame, MaxPushIdFrame, SettingsFrame
from h3learn.h3.http_events import (
    ConnectionTerminated,
    DataReceived,
    HeadersReceived,
    StreamReset,
)
from h3learn.h3.stream_types import StreamType
from h3learn.qpack.encoder import Encoder

CONNECT = [(b":method", b"CONNECT"), (b":authority", b"example.com:443")]

# -- every code of §8.1, each produced by one scenario -----------------------------------------
#
# Each scenario runs an endpoint into one situation and returns what it did (its actions)
# and recorded (its log). Most codes are the connection's own verdicts on a peer's bytes;
# H3_NO_ERROR, H3_INTERNAL_ERROR, H3_REQUEST_CANCELLED, H3_CONNECT_ERROR and
# H3_VERSION_FALLBACK are the application's to choose (RFC 9114 §8.1 ties them to states
# only it can know: a graceful end, its own failure, a lost interest, a broken TCP
# connection behind CONNECT, a request it will only serve over HTTP/1.1). For those the
# scenarios check that the connection carries the application's code onto the wire and
# into the trace.

Outcome = tuple[list[Action], EventLog]


def _lone(lone: Lone) -> Outcome:
    return lone.sent + lone.conn.actions_to_send(), lone.log


def graceful_close() -> Outcome:
    lone = Lone.client()
    lone.conn.close()
    return _lone(lone)


def mismatched_push_promise() -> Outcome:
    lone = Lone.client()
    lone.conn.send_max_push_id(3)
    lone.request()
    lone.request()
    lone.feed(0, lone.push_promise(0, 0, REQUEST))
    lone.feed(4, lone.push_promise(4, 0, [*REQUEST[:3], (b":path", b"/other")]))
    return _lone(lone)


def application_failure() -> Outcome:
    lone = Lone.server()
    lone.conn.close(ErrorCode.H3_INTERNAL_ERROR, "the handler crashed")
    return _lone(lone)


def second_control_stream() -> Outcome:
    lone = Lone.server()
    lone.feed(14, stream_header(StreamType.CONTROL))
    return _lone(lone)


def closed_control_stream() -> Outcome:
    lone = Lone.server()
    lone.feed(CLIENT_CONTROL, b"", end_stream=True)
    return _lone(lone)


def data_on_control_stream() -> Outcome:
    lone = Lone.server()
    lone.control(DataFrame(b"x"))
    return _lone(lone)


def truncated_frame() -> Outcome:
    lone = Lone.server()
    lone.feed(0, lone.headers(0, POST) + b"\x00\x09abc", end_stream=True)
    return _lone(lone)


def oversized_frame() -> Outcome:
    lone = Lone.server()
    lone.feed(CLIENT_CONTROL, bytes.fromhex("800f0700 c000000040000000"))  # PRIORITY_UPDATE
    return _lone(lone)


def decreasing_max_push_id() -> Outcome:
    lone = Lone.server()
    lone.control(MaxPushIdFrame(4), MaxPushIdFrame(1))
    return _lone(lone)


def http2_setting() -> Outcome:
    return _lone(Lone.server(peer_settings=((0x04, 65535),)))


def missing_settings() -> Outcome:
    lone = Lone.server(open_peer_streams=False)
    lone.feed(CLIENT_CONTROL, stream_header(StreamType.CONTROL) + frame_bytes(GoawayFrame(0)))
    return _lone(lone)


def request_after_goaway() -> Outcome:
    lone = Lone.server()
    lone.conn.send_goaway()
    lone.feed(0, lone.headers(0, REQUEST), end_stream=True)
    return _lone(lone)


def cancelled_request() -> Outcome:
    lone = Lone.client()
    lone.conn.reset_stream(lone.request(POST, end_stream=False))
    return _lone(lone)


def incomplete_request() -> Outcome:
    lone = Lone.server()
    lone.feed(0, b"", end_stream=True)
    return _lone(lone)


def malformed_request() -> Outcome:
    lone = Lone.server()
    lone.feed(0, lone.headers(0, [*REQUEST, (b"Host", b"example.com")]), end_stream=True)
    return _lone(lone)


def broken_tunnel() -> Outcome:
    """RFC 9114 §4.4: the proxy's TCP connection was reset; it resets the CONNECT stream."""
    lone = Lone.server()
    lone.feed(0, lone.headers(0, CONNECT))
    lone.conn.send_headers(0, RESPONSE)
    lone.conn.reset_stream(0, ErrorCode.H3_CONNECT_ERROR)
    return _lone(lone)


def http1_only_request() -> Outcome:
    lone = Lone.server()
    lone.feed(0, lone.headers(0, REQUEST), end_stream=True)
    lone.conn.reset_stream(0, ErrorCode.H3_VERSION_FALLBACK)
    return _lone(lone)


SCENARIOS: dict[ErrorCode, Callable[[], Outcome]] = {
    ErrorCode.H3_NO_ERROR: graceful_close,
    ErrorCode.H3_GENERAL_PROTOCOL_ERROR: mismatched_push_promise,
    ErrorCode.H3_INTERNAL_ERROR: application_failure,
    ErrorCode.H3_STREAM_CREATION_ERROR: second_control_stream,
    ErrorCode.H3_CLOSED_CRITICAL_STREAM: closed_control_stream,
    ErrorCode.H3_FRAME_UNEXPECTED: data_on_control_stream,
    ErrorCode.H3_FRAME_ERROR: truncated_frame,
    ErrorCode.H3_EXCESSIVE_LOAD: oversized_frame,
    ErrorCode.H3_ID_ERROR: decreasing_max_push_id,
    ErrorCode.H3_SETTINGS_ERROR: http2_setting,
    ErrorCode.H3_MISSING_SETTINGS: missing_settings,
    ErrorCode.H3_REQUEST_REJECTED: request_after_goaway,
    ErrorCode.H3_REQUEST_CANCELLED: cancelled_request,
    ErrorCode.H3_REQUEST_INCOMPLETE: incomplete_request,
    ErrorCode.H3_MESSAGE_ERROR: malformed_request,
    ErrorCode.H3_CONNECT_ERROR: broken_tunnel,
    ErrorCode.H3_VERSION_FALLBACK: http1_only_request,
}


def codes_produced(outcome: Outcome) -> set[int]:
    """Every code the endpoint sent (close, reset, stop) and recorded as an error it sent."""
    actions, log = outcome
    sent = {a.error_code for a in actions if isinstance(a, CloseConnection | ResetStream)}
    sent |= {a.error_code for a in actions if isinstance(a, StopSending)}
    recorded = {
        e.data["code"]
        for e in log.events
        if e.name in ("connection_error", "stream_error") and e.data["direction"] == "sent"
    }
    assert recorded <= sent, "a recorded error always reaches the wire"
    return sent


@pytest.mark.parametrize("code", SCENARIOS, ids=lambda code: code.name)
def test_each_scenario_produces_its_error_code_on_the_wire_and_in_the_trace(
    code: ErrorCode,
) -> None:
    actions, log = SCENARIOS[code]()
    assert code in codes_produced((actions, log))
    recorded = [
        e for e in log.events if e.name in ("connection_error", "connection_closed", "stream_error")
    ]
    assert code in [e.data["code"] for e in recorded]


def test_every_error_code_of_section_8_1_is_produced_by_at_least_one_scenario() -> None:
    seen: set[int] = set()
    for scenario in SCENARIOS.values():
        seen |= codes_produced(scenario())
    assert set(ErrorCode) <= seen, sorted(code_name(c) for c in set(ErrorCode) - seen)


ERROR_EVENT_RFC = re.compile(r"\A9(114|204|218)#[0-9]+(\.[0-9]+)*\Z")


@pytest.mark.parametrize("code", SCENARIOS, ids=lambda code: code.name)
def test_every_error_event_names_its_rule_and_its_section(code: ErrorCode) -> None:
    """The house citation format (``9114#7.2.4``) and a rule a learner can read."""
    _, log = SCENARIOS[code]()
    errors = [
        e for e in log.events if e.name in ("connection_error", "connection_closed", "stream_error")
    ]
    assert errors
    for event in errors:
        assert ERROR_EVENT_RFC.match(event.data["rfc"]), event.data
        assert event.rfc == (event.data["rfc"],)
        assert event.data["rule"] and event.data["code_name"] == code_name(event.data["code"])
        assert code_name(event.data["code"]) in event.summary


# -- connection errors ---------------------------------------------------------------------


def test_a_connection_error_closes_the_connection_once_and_ignores_all_later_input() -> None:
    lone = Lone.server()
    lone.feed(0, lone.headers(0, REQUEST))
    lone.control(DataFrame(b"x"), GoawayFrame(0))  # the GOAWAY after the error is never read
    assert_connection_error(lone, ErrorCode.H3_FRAME_UNEXPECTED)
    assert not any(type(e).__name__ == "GoawayReceived" for e in lone.received)
    assert lone.conn.goaway_received is None


def test_after_a_connection_error_the_application_can_send_nothing() -> None:
    lone = Lone.server()
    lone.feed(0, lone.headers(0, REQUEST))
    lone.control(DataFrame(b"x"))
    with pytest.raises(H3UsageError, match="closed"):
        lone.conn.send_headers(0, RESPONSE)
    with pytest.raises(H3UsageError, match="closed"):
        lone.conn.send_goaway()
    lone.conn.close()  # a second close does nothing
    assert lone.conn.actions_to_send() == []
    assert len(lone.events("connection_error")) == 1


def test_a_connection_error_reaches_the_peer_as_a_close_with_the_same_code() -> None:
    memory = pair()
    memory.client.send_request(REQUEST, end_stream=True)
    memory.pump()
    memory.server.receive_stream_data(CLIENT_CONTROL, frame_bytes(SettingsFrame()))
    memory.pump()
    assert memory.received["client"] == [
        ConnectionTerminated(
            error_code=ErrorCode.H3_FRAME_UNEXPECTED,
            reason="H3_FRAME_UNEXPECTED (RFC 9114 §7.2.4): second SETTINGS frame on the control"
            " stream",
            by_peer=True,
        )
    ]
    received = [e for e in memory.log.events if e.name == "connection_error"]
    assert [(e.endpoint, e.data["direction"]) for e in received] == [
        ("server", "sent"),
        ("client", "received"),
    ]
    with pytest.raises(H3UsageError):
        memory.client.send_request(REQUEST)


# -- stream errors ------------------------------------------------------------------------


def test_a_stream_error_resets_that_stream_and_the_others_continue() -> None:
    lone = Lone.server()
    lone.feed(4, lone.headers(4, POST))
    lone.feed(0, lone.headers(0, [*REQUEST, (b"connection", b"close")]))
    assert_stream_error(lone, 0, ErrorCode.H3_MESSAGE_ERROR)
    events = lone.feed(4, frame_bytes(DataFrame(b"still here")), end_stream=True)
    assert events == [DataReceived(stream_id=4, data=b"still here", stream_ended=True)]
    lone.conn.send_headers(4, RESPONSE, end_stream=True)
    assert lone.conn.actions_to_send()


def test_a_stream_error_ends_that_stream_at_the_peer_too_and_nothing_else() -> None:
    memory = pair()
    first = memory.client.send_request(REQUEST, end_stream=True)
    memory.pump()
    # The response as a faulty server would send it: with a connection-specific field.
    _, section = Encoder().encode(first, [(b":status", b"200"), (b"keep-alive", b"5")])
    events = memory.client.receive_stream_data(first, frame_bytes(HeadersFrame(section)))
    assert events == [StreamReset(stream_id=first, error_code=ErrorCode.H3_MESSAGE_ERROR)]
    memory.pump()  # the client's STOP_SENDING reaches the server, which stops its response
    with pytest.raises(H3UsageError, match="stream 0"):
        memory.server.send_data(first, b"more")
    assert not memory.client.closed and not memory.server.closed
    second = memory.client.send_request(REQUEST, end_stream=True)
    memory.pump()
    memory.server.send_headers(second, RESPONSE, end_stream=True)
    assert HeadersReceived(stream_id=second, headers=RESPONSE) in memory.pump()


# -- §8: codes this endpoint does not know mean H3_NO_ERROR ---------------------------------

UNKNOWN_CODES: list[int] = [reserved_value(0), reserved_value(12345), 0x0111, 0x7FFF]
#: A known code used where it means nothing: "use of an error code in an unexpected context".
OUT_OF_CONTEXT: list[int] = [ErrorCode.H3_SETTINGS_ERROR, ErrorCode.H3_MISSING_SETTINGS]


def outcome_of_reset(code: int) -> tuple[list[object], list[Action], bool]:
    lone = Lone.server()
    lone.feed(0, lone.headers(0, POST))
    events = lone.reset(0, code)
    return [type(e) for e in events], lone.take_sent(), lone.conn.closed


@pytest.mark.parametrize("code", UNKNOWN_CODES + OUT_OF_CONTEXT, ids=hex)
def test_a_stream_reset_with_an_unknown_code_is_treated_as_h3_no_error(code: int) -> None:
    assert outcome_of_reset(code) == outcome_of_reset(ErrorCode.H3_NO_ERROR)
    assert interpret_received_code(code) in (ErrorCode.H3_NO_ERROR, code)


@pytest.mark.parametrize("code", UNKNOWN_CODES, ids=hex)
def test_an_unknown_code_is_traced_by_its_value_and_never_made_retry_safe(code: int) -> None:
    lone = Lone.client()
    lone.request()
    assert lone.reset(0, code) == [StreamReset(stream_id=0, error_code=code, retry_safe=False)]
    event = lone.events("stream_error")[0]
    assert event.data["code"] == code
    assert event.data["code_name"] == code_name(code)
    assert interpret_received_code(code) is ErrorCode.H3_NO_ERROR


@pytest.mark.parametrize("code", UNKNOWN_CODES, ids=hex)
def test_stop_sending_with_an_unknown_code_is_treated_as_h3_no_error(code: int) -> None:
    def outcome(code: int) -> tuple[list[object], list[Action]]:
        lone = Lone.client()
        stream_id = lone.request(POST, end_stream=False)
        lone.take_sent()
        events = lone.stop_sending(stream_id, code)
        return [type(e) for e in events], lone.take_sent()

    # The same reaction, except that the RESET_STREAM answering it copies its code
    # (RFC 9000 §3.5).
    assert outcome(code) == ([], [ResetStream(0, code)])
    assert outcome(ErrorCode.H3_NO_ERROR) == ([], [ResetStream(0, ErrorCode.H3_NO_ERROR)])


@pytest.mark.parametrize("code", [0x0, *UNKNOWN_CODES], ids=hex)
def test_a_connection_closed_with_an_unknown_code_ends_like_h3_no_error(code: int) -> None:
    lone = Lone.client()
    lone.request()
    events = lone.conn.connection_closed(code, "")
    assert events == [ConnectionTerminated(error_code=code, reason="", by_peer=True)]
    assert lone.conn.actions_to_send() == [], "nothing is sent back"
    # RFC 9114 §8: treated as H3_NO_ERROR, so an ordinary close, not an error (aioquic's
    # default close sends 0x0, which HTTP/3 does not define).
    assert lone.events("connection_error") == []
    event = lone.events("connection_closed")[0]
    assert (event.data["direction"], event.data["code_name"]) == ("received", code_name(code))
    assert "which counts as H3_NO_ERROR" in event.summary and "9114#8" in event.rfc


@pytest.mark.parametrize(
    ("code", "event_name", "shown"),
    [
        (0x00, "connection_closed", "QUIC NO_ERROR"),
        (0x01, "connection_error", "QUIC INTERNAL_ERROR"),
        (0x12A, "connection_error", "QUIC CRYPTO_ERROR (TLS alert 42)"),
    ],
)
def test_a_close_by_quic_itself_is_named_from_the_quic_transport_registry(
    code: int, event_name: str, shown: str
) -> None:
    """RFC 9000 §20.1: a transport close carries QUIC's codes, not HTTP/3's (RFC 9114 §8)."""
    lone = Lone.client()
    events = lone.conn.connection_closed(code, "handshake failed", transport=True)
    assert events == [
        ConnectionTerminated(error_code=code, reason="handshake failed", by_peer=True)
    ]
    (event,) = lone.events(event_name)
    assert (event.data["layer"], event.data["code_name"]) == ("quic", shown)
    assert shown in event.summary and "QUIC closed the connection" in event.summary
