"""RFC 9114 §4 and RFC 9204 end to end: h3learn against aioquic over real QUIC in memory.

Every exchange runs over `QuicMemoryPair`: two aioquic QuicConnections with a real TLS 1.3
handshake, joined by an in-memory datagram pair on a virtual clock. One side (or both) is
h3learn's sans-IO H3Connection carried by `H3OverQuic`; the other is aioquic's own
H3Connection, whose QPACK is ls-qpack (through pylsqpack), an independent implementation.

Both h3learn endpoints announce QPACK_MAX_TABLE_CAPACITY 4096 and QPACK_BLOCKED_STREAMS 16,
aioquic's defaults, so each encoder may use the other's dynamic table. The tests check
what each application received and, through the trace, which frames, QPACK instructions
and table changes made it happen (docs/events.md).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from aioquic.buffer import encode_uint_var
from aioquic.h3 import events as aioquic_events
from aioquic.h3.connection import FrameType, encode_frame
from aioquic.h3.connection import H3Connection as AioquicH3Connection
from aioquic.quic.events import ConnectionTerminated, StopSendingReceived, StreamReset

from h3learn.events import Event, EventLog
from h3learn.h3 import http_events
from h3learn.h3.connection import H3Connection, H3UsageError
from h3learn.h3.errors import ErrorCode
from h3learn.h3.settings import Settings
from h3learn.trace.qlog import to_qlog_03
from h3learn.trace.store import read_trace, write_trace
from h3learn.transport.certificates import read_certificate
from h3learn.transport.quic import H3OverQuic
from h3learn.transport.quic_memory import QuicMemoryPair
from h3learn.transport.quic_memory_sides import AnyH3Event, Side
from h3learn.transport.virtual_clock import VirtualClock

Header = tuple[bytes, bytes]

SETTINGS = Settings(qpack_max_table_capacity=4096, qpack_blocked_streams=16)


def request(method: bytes = b"GET", path: bytes = b"/", *extra: Header) -> list[Header]:
    return [
        (b":method", method),
        (b":scheme", b"https"),
        (b":authority", b"localhost"),
        (b":path", path),
        (b"user-agent", b"h3learn-interop/1"),
        *extra,
    ]


RESPONSE = [(b":status", b"200"), (b"content-type", b"text/plain"), (b"server", b"test")]


# -- building pairs ------------------------------------------------------------------------


def make_pair(
    client: str, server: str, certificate_directory: Path | None = None
) -> QuicMemoryPair:
    """A connected pair; ``client`` and ``server`` are "h3learn" or "aioquic"."""
    clock = VirtualClock()
    log = EventLog(clock=clock)

    def side(name: str, kind: str) -> Side:
        if kind == "aioquic":
            return AioquicH3Connection
        return H3Connection(
            is_client=name == "client", settings=SETTINGS, recorder=log.for_endpoint(name)
        )

    pair = QuicMemoryPair.create(
        client=side("client", client),
        server=side("server", server),
        log=log,
        clock=clock,
        certificate_directory=certificate_directory,
    )
    pair.pump()
    return pair


def trace(pair: QuicMemoryPair) -> list[Event]:
    assert pair.log is not None
    return pair.log.events


def find(
    pair: QuicMemoryPair,
    endpoint: str,
    category: str,
    name: str,
    where: Callable[[Event], bool] = lambda event: True,
) -> list[Event]:
    return [
        event
        for event in trace(pair)
        if event.endpoint == endpoint
        and event.category == category
        and event.name == name
        and where(event)
    ]


def frames(pair: QuicMemoryPair, endpoint: str, name: str, frame_type: str) -> list[Event]:
    return find(
        pair, endpoint, "http3", name, lambda e: e.data["frame"]["frame_type"] == frame_type
    )


def tables_used(event: Event) -> set[str]:
    """The tables a headers_encoded / headers_decoded event's field lines refer to."""
    return {line["table"] for line in event.data["field_lines"]}


def assert_no_errors(pair: QuicMemoryPair) -> None:
    errors = [e for e in trace(pair) if e.name in ("connection_error", "stream_error")]
    assert errors == []
    for name in ("client", "server"):
        assert not any(isinstance(e, ConnectionTerminated) for e in pair.quic_events[name])


T = TypeVar("T")


def of_type(events: list[AnyH3Event], kind: type[T]) -> list[T]:
    return [event for event in events if isinstance(event, kind)]


def aioquic_body(events: list[AnyH3Event], stream_id: int) -> bytes:
    data = of_type(events, aioquic_events.DataReceived)
    return b"".join(event.data for event in data if event.stream_id == stream_id)


def h3learn_body(events: list[AnyH3Event], stream_id: int) -> bytes:
    data = of_type(events, http_events.DataReceived)
    return b"".join(event.data for event in data if event.stream_id == stream_id)


def stream_push_id(event: Event) -> int | None:
    """A push stream's push ID in a stream_type_set event.

    docs/events.md names the key ``push_id``; stream_types.py writes qlog's
    ``associated_push_id``. The replay layer reads either, and so does this.
    """
    value = event.data.get("push_id", event.data.get("associated_push_id"))
    assert value is None or isinstance(value, int)
    return value


def h3learn_stream_ended(events: list[AnyH3Event], stream_id: int) -> bool:
    """The end of the stream came with the last frame, or on its own (StreamEnded)."""
    for event in events:
        if isinstance(event, http_events.StreamEnded) and event.stream_id == stream_id:
            return True
        if (
            isinstance(event, (http_events.HeadersReceived, http_events.DataReceived))
            and event.stream_id == stream_id
            and event.stream_ended
        ):
            return True
    return False


# == (a) h3learn client, aioquic server ======================================================


def exchange(
    pair: QuicMemoryPair,
    headers: list[Header],
    response: list[Header] = RESPONSE,
    body: bytes = b"hello",
) -> int:
    """One request and its whole response, whichever implementation plays which side.

    Both H3Connections answer with the same calls (``send_headers``, ``send_data``); only
    opening a request differs: aioquic's needs the QUIC stream ID.
    """
    if isinstance(pair.sides["client"], H3OverQuic):
        stream_id = pair.h3learn("client").send_request(headers, end_stream=True)
    else:
        stream_id = pair.quic["client"].get_next_available_stream_id()
        pair.aioquic("client").send_headers(stream_id, headers, end_stream=True)
    received = pair.pump()["server"]
    kinds = (aioquic_events.HeadersReceived, http_events.HeadersReceived)
    assert [e.headers for e in received if isinstance(e, kinds)] == [headers]
    server = pair.sides["server"]
    responder = server.h3 if isinstance(server, H3OverQuic) else server
    responder.send_headers(stream_id, response)
    responder.send_data(stream_id, body, end_stream=True)
    pair.pump()
    return stream_id


class TestH3learnClientAioquicServer:
    def test_handshake_negotiates_h3_and_exchanges_settings(self) -> None:
        """RFC 9114 §3.1 (ALPN "h3"), §6.2.1 and §7.2.4: each side's SETTINGS arrive first."""
        pair = make_pair("h3learn", "aioquic")
        for endpoint in ("client", "server"):
            (handshake,) = find(pair, endpoint, "transport", "handshake_completed")
            assert handshake.data["alpn"] == "h3"
            assert handshake.data["tls_version"] == "TLS 1.3"
            assert handshake.data["cipher_suite"] in ("AES_128_GCM_SHA256", "AES_256_GCM_SHA384")
        (remote,) = find(
            pair, "client", "http3", "parameters_set", lambda e: e.data["owner"] == "remote"
        )
        announced = {setting["id"]: setting["value"] for setting in remote.data["settings"]}
        # aioquic's SETTINGS: capacity 4096, 16 blocked streams, extended CONNECT, GREASE 0x21.
        assert announced == {0x01: 4096, 0x07: 16, 0x08: 1, 0x21: 1}
        assert pair.aioquic("server").received_settings == {0x01: 4096, 0x07: 16}
        (settings,) = of_type(pair.received["client"], http_events.SettingsReceived)
        assert settings.settings[0x01] == 4096
        assert_no_errors(pair)

    def test_get_response_status_headers_and_body(self) -> None:
        """RFC 9114 §4.1: a request and a response, each one HEADERS frame (and DATA)."""
        pair = make_pair("h3learn", "aioquic")
        stream_id = exchange(pair, request())
        received = pair.received["client"]
        (headers,) = of_type(received, http_events.HeadersReceived)
        assert (headers.stream_id, headers.headers) == (stream_id, RESPONSE)
        assert h3learn_body(received, stream_id) == b"hello"
        assert h3learn_stream_ended(received, stream_id)
        assert len(frames(pair, "client", "frame_created", "headers")) == 1
        assert len(frames(pair, "client", "frame_parsed", "headers")) == 1
        (data,) = frames(pair, "client", "frame_parsed", "data")
        assert data.stream_id == stream_id and data.raw.endswith(b"hello")
        states = [e.data["new"] for e in find(pair, "client", "http3", "stream_state_updated")]
        assert states[-1] == "complete"
        assert_no_errors(pair)

    def test_post_body_reaches_aioquic_which_echoes_its_length(self) -> None:
        """RFC 9114 §4.1: content in DATA frames after the header section; Content-Length §4.1.2."""
        pair = make_pair("h3learn", "aioquic")
        client = pair.h3learn("client")
        body = bytes(range(256)) * 20  # 5120 bytes: several QUIC packets
        headers = request(b"POST", b"/upload", (b"content-length", str(len(body)).encode()))
        stream_id = client.send_request(headers)
        client.send_data(stream_id, body[:1000])
        client.send_data(stream_id, body[1000:], end_stream=True)
        received = pair.pump()["server"]
        assert aioquic_body(received, stream_id) == body
        assert of_type(received, aioquic_events.DataReceived)[-1].stream_ended
        length = str(len(aioquic_body(received, stream_id))).encode()
        server = pair.aioquic("server")
        server.send_headers(stream_id, [(b":status", b"200"), (b"content-length", b"4")])
        server.send_data(stream_id, length, end_stream=True)
        pair.pump()
        assert h3learn_body(pair.received["client"], stream_id) == b"5120"
        assert len(frames(pair, "client", "frame_created", "data")) == 2
        assert_no_errors(pair)

    def test_trailers_in_both_directions(self) -> None:
        """RFC 9114 §4.1: a HEADERS frame after the content is the trailer section."""
        pair = make_pair("h3learn", "aioquic")
        client = pair.h3learn("client")
        stream_id = client.send_request(request(b"POST", b"/trailers"))
        client.send_data(stream_id, b"payload")
        client.send_headers(stream_id, [(b"x-checksum", b"abc123")], end_stream=True)
        received = pair.pump()["server"]
        sections = of_type(received, aioquic_events.HeadersReceived)
        assert [s.headers for s in sections] == [
            request(b"POST", b"/trailers"),
            [(b"x-checksum", b"abc123")],
        ]
        assert sections[-1].stream_ended
        server = pair.aioquic("server")
        server.send_headers(stream_id, RESPONSE)
        server.send_data(stream_id, b"ok", end_stream=False)
        server.send_headers(stream_id, [(b"x-status", b"done")], end_stream=True)
        pair.pump()
        answers = of_type(pair.received["client"], http_events.HeadersReceived)
        assert [(a.headers, a.trailers) for a in answers] == [
            (RESPONSE, False),
            ([(b"x-status", b"done")], True),
        ]
        assert len(frames(pair, "client", "frame_parsed", "headers")) == 2
        assert_no_errors(pair)

    def test_dynamic_table_is_used_in_both_directions(self) -> None:
        """RFC 9204 §2.1, §2.2, §4.3, §4.4: each encoder inserts, each decoder follows."""
        pair = make_pair("h3learn", "aioquic")
        client = pair.h3learn("client")
        response = [*RESPONSE, (b"x-request-id", b"interop-response")]
        stream_ids = [
            exchange(pair, request(b"GET", f"/{n}".encode(), (b"x-trace", b"interop")), response)
            for n in range(3)
        ]
        # aioquic (ls-qpack) inserted into the table h3learn's decoder keeps (owner "remote").
        inserted = find(
            pair,
            "client",
            "qpack",
            "dynamic_table_updated",
            lambda e: e.data["owner"] == "remote" and e.data["update_type"] == "inserted",
        )
        assert inserted and len(client.decoder.table) >= 1
        names = {entry["name"] for event in inserted for entry in event.data["entries"]}
        assert names & {"server", "x-request-id", "content-type"}
        peer_instructions = find(pair, "client", "qpack", "instruction_parsed")
        assert {e.data["instruction_type"] for e in peer_instructions} >= {
            "set_dynamic_table_capacity",
            "section_acknowledgement",
        }
        decoded = find(pair, "client", "qpack", "headers_decoded")
        assert [e.stream_id for e in decoded] == stream_ids
        # aioquic's first header block uses the static table only; later ones the dynamic.
        assert "dynamic" not in tables_used(decoded[0])
        assert "dynamic" in tables_used(decoded[-1])
        for answer in of_type(pair.received["client"], http_events.HeadersReceived):
            assert answer.headers == response

        # h3learn's encoder referenced its own dynamic entries, and aioquic decoded them.
        encoded = find(pair, "client", "qpack", "headers_encoded")
        assert any("dynamic" in tables_used(e) for e in encoded)
        assert encoded[-1].data["prefix"]["required_insert_count"] > 0
        acknowledged = [
            e.data["stream_id"]
            for e in peer_instructions
            if e.data["instruction_type"] == "section_acknowledgement"
        ]
        dynamic_streams = [e.stream_id for e in encoded if "dynamic" in tables_used(e)]
        assert set(dynamic_streams) <= set(acknowledged)
        assert client.encoder.known_received_count == client.encoder.table.insert_count
        assert_no_errors(pair)

    def test_goaway_from_aioquic_server(self) -> None:
        """RFC 9114 §5.2: requests at or above the GOAWAY ID are rejected and may be retried."""
        pair = make_pair("h3learn", "aioquic")
        client = pair.h3learn("client")
        first = exchange(pair, request())
        second = client.send_request(request(b"GET", b"/late"), end_stream=True)
        pair.pump()
        # aioquic's H3Connection has no GOAWAY API: write the frame (type 0x07, one varint
        # ID) on its control stream, the way RFC 9114 §7.2.6 lays it out.
        server = pair.aioquic("server")
        control_stream = server._local_control_stream_id
        assert control_stream is not None
        goaway = encode_frame(FrameType.GOAWAY, encode_uint_var(second))
        pair.quic["server"].send_stream_data(control_stream, goaway)
        received = pair.pump()["client"]

        assert of_type(received, http_events.GoawayReceived) == [
            http_events.GoawayReceived(id=second)
        ]
        (rejected,) = of_type(received, http_events.StreamReset)
        assert (rejected.stream_id, rejected.retry_safe) == (second, True)
        (parsed,) = frames(pair, "client", "frame_parsed", "goaway")
        assert parsed.data["frame"]["id"] == second and parsed.raw == goaway
        # The client stops reading the abandoned request (STOP_SENDING, RFC 9000 §3.5).
        assert (
            StopSendingReceived(error_code=ErrorCode.H3_REQUEST_CANCELLED, stream_id=second)
            in pair.quic_events["server"]
        )
        with pytest.raises(H3UsageError):
            client.send_request(request())
        assert first < second
        assert not any(isinstance(e, ConnectionTerminated) for e in pair.quic_events["client"])

    def test_push_from_aioquic_server_after_max_push_id(self) -> None:
        """RFC 9114 §4.6: the client's MAX_PUSH_ID allows the server's PUSH_PROMISE."""
        pair = make_pair("h3learn", "aioquic")
        client = pair.h3learn("client")
        client.send_max_push_id(2)
        stream_id = client.send_request(request(), end_stream=True)
        pair.pump()
        server = pair.aioquic("server")
        promised = request(b"GET", b"/style.css")[:4]
        push_stream = server.send_push_promise(stream_id, promised)
        server.send_headers(push_stream, [(b":status", b"200"), (b"content-type", b"text/css")])
        server.send_data(push_stream, b"body{}", end_stream=True)
        server.send_headers(stream_id, RESPONSE)
        server.send_data(stream_id, b"page", end_stream=True)
        pair.pump()
        received = pair.received["client"]
        (promise,) = of_type(received, http_events.PushPromiseReceived)
        assert (promise.stream_id, promise.push_id, promise.headers) == (stream_id, 0, promised)
        pushed = [e for e in of_type(received, http_events.DataReceived) if e.push_id == 0]
        assert [e.data for e in pushed] == [b"body{}"]
        (push_type,) = find(
            pair, "client", "http3", "stream_type_set", lambda e: e.data["stream_type"] == "push"
        )
        assert push_type.stream_id == push_stream and stream_push_id(push_type) == 0
        assert_no_errors(pair)


# == (b) aioquic client, h3learn server ======================================================


class TestAioquicClientH3learnServer:
    def test_get_response_status_headers_and_body(self) -> None:
        """RFC 9114 §4.1: aioquic's request, h3learn's response."""
        pair = make_pair("aioquic", "h3learn")
        stream_id = exchange(pair, request())
        received = pair.received["client"]
        (headers,) = of_type(received, aioquic_events.HeadersReceived)
        assert (headers.stream_id, headers.headers) == (stream_id, RESPONSE)
        assert aioquic_body(received, stream_id) == b"hello"
        assert of_type(received, aioquic_events.DataReceived)[-1].stream_ended
        (request_type,) = find(
            pair, "server", "http3", "stream_type_set", lambda e: e.data["stream_type"] == "request"
        )
        assert request_type.stream_id == stream_id and request_type.data["owner"] == "remote"
        assert len(frames(pair, "server", "frame_created", "data")) == 1
        assert_no_errors(pair)

    def test_post_body_reaches_h3learn_which_echoes_its_length(self) -> None:
        """RFC 9114 §4.1: content arrives in DATA frames, possibly over many packets."""
        pair = make_pair("aioquic", "h3learn")
        client = pair.aioquic("client")
        body = b"0123456789" * 700
        stream_id = pair.quic["client"].get_next_available_stream_id()
        headers = request(b"POST", b"/upload", (b"content-length", str(len(body)).encode()))
        client.send_headers(stream_id, headers)
        client.send_data(stream_id, body, end_stream=True)
        received = pair.pump()["server"]
        assert h3learn_body(received, stream_id) == body
        server = pair.h3learn("server")
        length = str(len(h3learn_body(received, stream_id))).encode()
        server.send_headers(stream_id, [(b":status", b"200")])
        server.send_data(stream_id, length, end_stream=True)
        pair.pump()
        assert aioquic_body(pair.received["client"], stream_id) == b"7000"
        assert_no_errors(pair)

    def test_trailers_in_both_directions(self) -> None:
        """RFC 9114 §4.1: trailer sections from aioquic and from h3learn."""
        pair = make_pair("aioquic", "h3learn")
        client = pair.aioquic("client")
        stream_id = pair.quic["client"].get_next_available_stream_id()
        client.send_headers(stream_id, request(b"POST", b"/trailers"))
        client.send_data(stream_id, b"payload", end_stream=False)
        client.send_headers(stream_id, [(b"x-checksum", b"abc123")], end_stream=True)
        received = pair.pump()["server"]
        sections = of_type(received, http_events.HeadersReceived)
        assert [(s.headers, s.trailers) for s in sections] == [
            (request(b"POST", b"/trailers"), False),
            ([(b"x-checksum", b"abc123")], True),
        ]
        server = pair.h3learn("server")
        server.send_headers(stream_id, RESPONSE)
        server.send_data(stream_id, b"ok")
        server.send_headers(stream_id, [(b"x-status", b"done")], end_stream=True)
        pair.pump()
        answers = of_type(pair.received["client"], aioquic_events.HeadersReceived)
        assert [a.headers for a in answers] == [RESPONSE, [(b"x-status", b"done")]]
        assert answers[-1].stream_ended
        assert_no_errors(pair)

    def test_dynamic_table_is_used_in_both_directions(self) -> None:
        """RFC 9204 §2: h3learn's decoder follows ls-qpack's inserts, and the reverse."""
        pair = make_pair("aioquic", "h3learn")
        server = pair.h3learn("server")
        response = [*RESPONSE, (b"x-request-id", b"interop-response")]
        for n in range(3):
            exchange(pair, request(b"GET", f"/{n}".encode(), (b"x-trace", b"interop")), response)
        inserted = find(
            pair,
            "server",
            "qpack",
            "dynamic_table_updated",
            lambda e: e.data["owner"] == "remote" and e.data["update_type"] == "inserted",
        )
        assert inserted and len(server.decoder.table) >= 1
        decoded = find(pair, "server", "qpack", "headers_decoded")
        assert "dynamic" not in tables_used(decoded[0])
        assert "dynamic" in tables_used(decoded[-1])
        encoded = find(pair, "server", "qpack", "headers_encoded")
        assert any("dynamic" in tables_used(e) for e in encoded)
        for answer in of_type(pair.received["client"], aioquic_events.HeadersReceived):
            assert answer.headers == response
        assert server.encoder.known_received_count == server.encoder.table.insert_count > 0
        assert_no_errors(pair)

    def test_server_push_to_aioquic_client(self) -> None:
        """RFC 9114 §4.6, §7.2.5, §7.2.7: aioquic's MAX_PUSH_ID, then h3learn pushes."""
        pair = make_pair("aioquic", "h3learn")
        server = pair.h3learn("server")
        # aioquic's client sends MAX_PUSH_ID 8 with its SETTINGS.
        (max_push_id,) = frames(pair, "server", "frame_parsed", "max_push_id")
        assert max_push_id.data["frame"]["push_id"] == 8
        assert server.max_push_id == 8

        client = pair.aioquic("client")
        stream_id = pair.quic["client"].get_next_available_stream_id()
        client.send_headers(stream_id, request(), end_stream=True)
        pair.pump()
        promised = request(b"GET", b"/style.css")[:4]
        push_id = server.send_push_promise(stream_id, promised)
        push_stream = server.create_push_stream(push_id)
        server.send_headers(push_stream, [(b":status", b"200"), (b"content-type", b"text/css")])
        server.send_data(push_stream, b"body{}", end_stream=True)
        server.send_headers(stream_id, RESPONSE)
        server.send_data(stream_id, b"page", end_stream=True)
        pair.pump()

        received = pair.received["client"]
        (promise,) = of_type(received, aioquic_events.PushPromiseReceived)
        assert (promise.stream_id, promise.push_id, promise.headers) == (stream_id, 0, promised)
        pushed = [e for e in of_type(received, aioquic_events.HeadersReceived) if e.push_id == 0]
        assert [e.headers for e in pushed] == [
            [(b":status", b"200"), (b"content-type", b"text/css")]
        ]
        pushed_data = [e for e in of_type(received, aioquic_events.DataReceived) if e.push_id == 0]
        assert b"".join(e.data for e in pushed_data) == b"body{}"
        assert aioquic_body(received, stream_id) == b"page"
        (promise_frame,) = frames(pair, "server", "frame_created", "push_promise")
        assert promise_frame.stream_id == stream_id and promise_frame.data["frame"]["push_id"] == 0
        (push_type,) = find(
            pair, "server", "http3", "stream_type_set", lambda e: e.data["stream_type"] == "push"
        )
        assert push_type.stream_id == push_stream and push_type.data["owner"] == "local"
        assert_no_errors(pair)

    def test_goaway_from_h3learn_server(self) -> None:
        """RFC 9114 §5.2: after GOAWAY the server rejects new requests with H3_REQUEST_REJECTED."""
        pair = make_pair("aioquic", "h3learn")
        server = pair.h3learn("server")
        first = exchange(pair, request())
        identifier = server.send_goaway()
        assert identifier == first + 4
        pair.pump()
        (goaway,) = frames(pair, "server", "frame_created", "goaway")
        assert goaway.data["frame"]["id"] == identifier
        # aioquic 1.x reads GOAWAY but reports nothing and keeps sending requests; the
        # server then refuses the request unprocessed.
        client = pair.aioquic("client")
        late = pair.quic["client"].get_next_available_stream_id()
        assert late == identifier
        client.send_headers(late, request(b"GET", b"/late"), end_stream=True)
        pair.pump()
        (error,) = find(pair, "server", "http3", "stream_error")
        assert error.stream_id == late
        assert error.data["code"] == ErrorCode.H3_REQUEST_REJECTED
        assert (
            StreamReset(error_code=ErrorCode.H3_REQUEST_REJECTED, stream_id=late)
            in (pair.quic_events["client"])
        )
        requests = of_type(pair.received["server"], http_events.HeadersReceived)
        assert [r.stream_id for r in requests] == [first]
        assert not any(isinstance(e, ConnectionTerminated) for e in pair.quic_events["client"])


# == both directions: a full table ===========================================================

#: 150 distinct fields of 58 to 60 bytes each: about 9 KB, twice a 4096-byte table.
FIELD_POOL = [(b"x-h%d" % k, b"value-%d-abcdefghij" % k) for k in range(150)]


@pytest.mark.parametrize("h3learn_side", ["client", "server"])
def test_dynamic_table_fills_evicts_and_duplicates_both_ways(h3learn_side: str) -> None:
    """RFC 9204 §2.1.1, §3.2.2, §4.3.4: with eviction and Duplicate, every field still arrives."""
    rng = random.Random(9204)
    pair = (
        make_pair("h3learn", "aioquic")
        if h3learn_side == "client"
        else make_pair("aioquic", "h3learn")
    )
    for n in range(150):
        fields = [rng.choice(FIELD_POOL) for _ in range(rng.randrange(1, 10))]
        sent_request = request(b"GET", f"/{n}".encode(), *fields)
        sent_response = [(b":status", b"200"), *reversed(fields)]
        if h3learn_side == "client":
            stream_id = pair.h3learn("client").send_request(sent_request, end_stream=True)
            got = of_type(pair.pump()["server"], aioquic_events.HeadersReceived)
            assert [g.headers for g in got] == [sent_request]
            pair.aioquic("server").send_headers(stream_id, sent_response, end_stream=True)
            answers = of_type(pair.pump()["client"], http_events.HeadersReceived)
            assert [a.headers for a in answers] == [sent_response]
        else:
            stream_id = pair.quic["client"].get_next_available_stream_id()
            pair.aioquic("client").send_headers(stream_id, sent_request, end_stream=True)
            requests = of_type(pair.pump()["server"], http_events.HeadersReceived)
            assert [r.headers for r in requests] == [sent_request]
            pair.h3learn("server").send_headers(stream_id, sent_response, end_stream=True)
            got = of_type(pair.pump()["client"], aioquic_events.HeadersReceived)
            assert [g.headers for g in got] == [sent_response]

    def count(name: str, key: str, value: str) -> int:
        return len(find(pair, h3learn_side, "qpack", name, lambda e: e.data.get(key) == value))

    # Both tables filled up and evicted their oldest entries ...
    evicted_owners = {
        event.data["owner"]
        for event in find(pair, h3learn_side, "qpack", "dynamic_table_updated")
        if event.data["update_type"] == "evicted"
    }
    assert evicted_owners == {"local", "remote"}
    # ... and both encoders re-inserted draining entries with Duplicate (RFC 9204 §4.3.4).
    assert count("instruction_created", "instruction_type", "duplicate") > 0
    assert count("instruction_parsed", "instruction_type", "duplicate") > 0
    assert_no_errors(pair)


# == (c) h3learn on both sides ==============================================================


def h3learn_scenario() -> QuicMemoryPair:
    """A GET, a POST with trailers and a push, then a clean close."""
    pair = make_pair("h3learn", "h3learn")
    client, server = pair.h3learn("client"), pair.h3learn("server")
    client.send_max_push_id(4)
    get = client.send_request(request(), end_stream=True)
    pair.pump()
    push_id = server.send_push_promise(get, request(b"GET", b"/app.js")[:4])
    push_stream = server.create_push_stream(push_id)
    server.send_headers(push_stream, [(b":status", b"200")])
    server.send_data(push_stream, b"console.log(1)", end_stream=True)
    server.send_headers(get, RESPONSE)
    server.send_data(get, b"x" * 3000, end_stream=True)
    pair.pump()
    post = client.send_request(request(b"POST", b"/form"))
    client.send_data(post, b"a=1&b=2")
    client.send_headers(post, [(b"x-checksum", b"f00d")], end_stream=True)
    pair.pump()
    server.send_headers(post, RESPONSE, end_stream=True)
    pair.pump()
    client.close()
    pair.pump()
    return pair


def comparable(event: Event) -> tuple[Any, ...]:
    return (event.endpoint, event.category, event.name, event.stream_id, event.data, event.raw)


class TestH3learnBothSides:
    def test_trace_shows_quic_under_every_frame(self) -> None:
        """RFC 9114 §6: frames travel on QUIC streams; the trace shows both layers."""
        pair = h3learn_scenario()
        events = trace(pair)
        for endpoint in ("client", "server"):
            assert find(pair, endpoint, "transport", "handshake_completed")
            assert find(pair, endpoint, "transport", "datagram_sent")
        for index, event in enumerate(events):
            if event.name == "frame_created":
                # The adapter writes the frame's bytes on the same stream, as one write.
                later = [
                    e
                    for e in events[index:]
                    if e.name == "stream_data_sent"
                    and (e.endpoint, e.stream_id) == (event.endpoint, event.stream_id)
                ]
                assert any(e.data["length"] == len(event.raw) for e in later), event.summary
            if event.name in ("frame_parsed", "instruction_parsed"):
                earlier = [
                    e
                    for e in events[:index]
                    if e.name == "stream_data_received"
                    and (e.endpoint, e.stream_id) == (event.endpoint, event.stream_id)
                ]
                assert earlier, event.summary
        assert [e.time for e in events] == sorted(e.time for e in events)
        closed = of_type(pair.received["server"], http_events.ConnectionTerminated)
        assert closed == [
            http_events.ConnectionTerminated(
                error_code=ErrorCode.H3_NO_ERROR, reason="", by_peer=True
            )
        ]
        assert not find(pair, "client", "http3", "stream_error")

    def test_same_scenario_gives_the_same_events_twice(self) -> None:
        """A lesson is reproducible: HTTP/3 and QPACK events match, name and data."""
        first, second = h3learn_scenario(), h3learn_scenario()
        for category in ("http3", "qpack", "transport"):
            one = [comparable(e) for e in trace(first) if e.category == category]
            two = [comparable(e) for e in trace(second) if e.category == category]
            assert one and one == two, category
        assert [e.time for e in trace(first)] == [e.time for e in trace(second)]
        assert first.received == second.received

    def test_quic_trace_is_stored_and_exported_like_any_other(self, tmp_path: Path) -> None:
        """docs/events.md: transport stream data becomes qlog 0.3 ``transport:data_moved``."""
        pair = h3learn_scenario()
        path = tmp_path / "quic.json"
        write_trace(path, "h3learn over QUIC in memory", trace(pair))
        stored = read_trace(path)
        assert [e.to_json() for e in stored.events] == [e.to_json() for e in trace(pair)]
        exported = to_qlog_03(stored)
        names = {event["name"] for one in exported["traces"] for event in one["events"]}
        assert {"transport:data_moved", "http:frame_parsed", "qpack:headers_decoded"} <= names


# == the certificate on disk ==================================================================


def test_pair_with_certificate_files_verifies_the_p256_certificate(tmp_path: Path) -> None:
    """RFC 9114 §3.1.1: the client checks the server's certificate for "localhost"."""
    pair = make_pair("h3learn", "aioquic", certificate_directory=tmp_path)
    assert find(pair, "client", "transport", "handshake_completed")
    assert read_certificate(tmp_path / "cert.pem").signature_algorithm_oid.dotted_string == (
        "1.2.840.10045.4.3.2"  # ecdsa-with-SHA256
    )
    assert_no_errors(pair)
