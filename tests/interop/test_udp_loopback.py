"""RFC 9114 §3.3 over real UDP on loopback: ``h3learn get`` and ``h3learn h3-server``.

Both ends are h3learn's H3Connection on aioquic (h3learn/transport/udp_server.py and
udp_client.py), talking over real sockets on 127.0.0.1 and ::1. The tests check what each
side received, and that each connection's trace is written, finished and readable
(docs/events.md, "Trace files") with SETTINGS both ways (RFC 9114 §7.2.4) and the decoded
request fields (RFC 9204 §4.5).
Servers run in this process (port 0) or as an ``h3learn h3-server`` subprocess that the
test stops with SIGTERM. Every wait is bounded.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import socket
import ssl
import time
from collections.abc import AsyncIterator, Coroutine
from pathlib import Path
from typing import Any, TypeVar

import pytest
from aioquic.asyncio.protocol import QuicConnectionProtocol
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.connection import QuicConnection
from aioquic.quic.events import ConnectionTerminated, QuicEvent
from udp_helpers import (
    decoded_headers,
    finished_traces,
    free_udp_port,
    ipv6_loopback_available,
    named,
    run_h3learn,
    settings_of,
    start_server,
)

from h3learn.h3.errors import ErrorCode
from h3learn.page_server import PageServer
from h3learn.trace.store import read_trace
from h3learn.transport.certificates import ensure_certificate
from h3learn.transport.fetch_errors import FetchError
from h3learn.transport.udp_client import H3ClientProtocol, fetch
from h3learn.transport.udp_server import H3Server, serve
from h3learn.transport.udp_shared import DEFAULT_SETTINGS, ConnectionRecording
from h3learn.transport.urls import parse_url

T = TypeVar("T")


def run(coroutine: Coroutine[Any, Any, T], timeout: float = 30.0) -> T:
    """Run a test's async part with a bound on the whole of it."""

    async def bounded() -> T:
        async with asyncio.timeout(timeout):
            return await coroutine

    return asyncio.run(bounded())


@contextlib.asynccontextmanager
async def running_server(
    directory: Path, host: str = "127.0.0.1", idle_timeout: float = 10.0, **options: Any
) -> AsyncIterator[H3Server]:
    """An in-process server on a free port; closed (traces finished) on the way out."""
    cert, key = ensure_certificate(directory / "data")
    configuration = QuicConfiguration(
        is_client=False, alpn_protocols=["h3"], idle_timeout=idle_timeout
    )
    configuration.load_cert_chain(cert, key)
    server = await serve(
        host,
        0,
        configuration=configuration,
        application_factory=PageServer,
        record_dir=directory / "traces",
        **options,
    )
    try:
        yield server
    finally:
        await server.close()


def base_url(server: H3Server, name: str = "localhost") -> str:
    return f"https://{name}:{server.address[1]}"


async def open_client(
    host: str, port: int, cafile: Path
) -> tuple[asyncio.DatagramTransport, H3ClientProtocol]:
    """A client connection that stays open until the test closes it."""
    configuration = QuicConfiguration(
        is_client=True, alpn_protocols=["h3"], server_name="localhost"
    )
    configuration.load_verify_locations(str(cafile))
    quic = QuicConnection(configuration=configuration)
    recording = ConnectionRecording("held-open test client", {})
    loop = asyncio.get_running_loop()
    transport, protocol = await loop.create_datagram_endpoint(
        lambda: H3ClientProtocol(quic, recording, DEFAULT_SETTINGS), remote_addr=(host, port)
    )
    protocol.connect((host, port))
    async with asyncio.timeout(5):
        await protocol.handshake
    return transport, protocol


# -- in-process server ------------------------------------------------------------------------


def test_urls_of_one_origin_share_one_connection_and_both_traces_hold_settings_and_fields(
    tmp_path: Path,
) -> None:
    record = tmp_path / "client.json"

    async def scenario() -> tuple[list[Any], list[Path]]:
        async with running_server(tmp_path) as server:
            url = base_url(server)
            responses = await fetch(
                [f"{url}/", f"{url}/favicon.ico", f"{url}/page?x=1"],
                cafile=str(tmp_path / "data" / "cert.pem"),
                record=record,
                timeout=10,
            )
        return responses, server.traces

    responses, traces = run(scenario())
    assert [response.status for response in responses] == [200, 200, 200]
    assert [response.stream_id for response in responses] == [0, 4, 8]  # RFC 9000 §2.1
    assert b"Hello from h3learn over HTTP/3" in responses[0].body
    assert b"<code>/page?x=1</code>" in responses[2].body
    assert dict(responses[1].headers)[b"content-type"] == b"image/vnd.microsoft.icon"
    assert responses[1].body[:4] == b"\x00\x00\x01\x00"  # an ICO file's header

    assert len(traces) == 1, "three URLs of one origin, one connection"
    server_trace = read_trace(traces[0])
    assert server_trace.warnings == []
    assert server_trace.meta["peer_address"].startswith("127.0.0.1:")
    assert settings_of(server_trace, "local") == {
        "QPACK_MAX_TABLE_CAPACITY": 4096,
        "QPACK_BLOCKED_STREAMS": 16,
    }
    assert settings_of(server_trace, "remote")["QPACK_MAX_TABLE_CAPACITY"] == 4096
    paths = [fields[":path"] for fields in decoded_headers(server_trace)]
    assert paths == ["/", "/favicon.ico", "/page?x=1"]
    assert {fields["user-agent"] for fields in decoded_headers(server_trace)} == {"h3learn/0.1.0"}

    client_trace = read_trace(record)
    assert client_trace.warnings == []
    assert {event.endpoint for event in client_trace.events} == {"client"}
    sent = [
        e
        for e in named(client_trace, "frame_created")
        if e.data["frame"]["frame_type"] == "settings"
    ]
    parsed = [
        e
        for e in named(client_trace, "frame_parsed")
        if e.data["frame"]["frame_type"] == "settings"
    ]
    assert len(sent) == len(parsed) == 1
    assert settings_of(client_trace, "remote")["QPACK_BLOCKED_STREAMS"] == 16
    statuses = [fields[":status"] for fields in decoded_headers(client_trace)]
    assert statuses == ["200", "200", "200"]


def test_post_is_answered_with_the_size_of_its_content(tmp_path: Path) -> None:
    async def scenario() -> list[Any]:
        async with running_server(tmp_path) as server:
            return await fetch(
                [f"{base_url(server)}/upload"], "POST", b"x" * 5000, insecure=True, timeout=10
            )

    (response,) = run(scenario())
    assert response.status == 200
    assert response.body == b"received 5000 bytes\n"


@pytest.mark.skipif(not ipv6_loopback_available(), reason="no IPv6 loopback here")
def test_server_and_client_work_over_ipv6_loopback(tmp_path: Path) -> None:
    async def scenario() -> tuple[list[Any], list[Path]]:
        async with running_server(tmp_path, host="::1") as server:
            responses = await fetch(
                [f"{base_url(server, '[::1]')}/six"],
                cafile=str(tmp_path / "data" / "cert.pem"),
                timeout=10,
            )
        return responses, server.traces

    responses, traces = run(scenario())
    assert responses[0].status == 200
    trace = read_trace(traces[0])
    assert trace.meta["peer_address"].startswith("[::1]:")
    assert "ip6---1_" in traces[0].name
    assert decoded_headers(trace)[0][":authority"].startswith("[::1]:")


class _RawClient(QuicConnectionProtocol):
    """A QUIC client that writes whatever bytes a test wants on its streams."""

    termination: ConnectionTerminated | None = None

    def quic_event_received(self, event: QuicEvent) -> None:
        if isinstance(event, ConnectionTerminated):
            self.termination = event


@contextlib.asynccontextmanager
async def raw_client(server: H3Server) -> AsyncIterator[_RawClient]:
    """A `_RawClient` connected to ``server`` (handshake done); its socket closed after."""
    port = server.address[1]
    configuration = QuicConfiguration(is_client=True, alpn_protocols=["h3"])
    configuration.verify_mode = ssl.CERT_NONE
    quic = QuicConnection(configuration=configuration)
    loop = asyncio.get_running_loop()
    transport, raw = await loop.create_datagram_endpoint(
        lambda: _RawClient(quic), remote_addr=("127.0.0.1", port)
    )
    try:
        raw.connect(("127.0.0.1", port))
        await raw.wait_connected()
        yield raw
    finally:
        transport.close()


def test_a_peer_that_breaks_a_rule_loses_only_its_own_connection(tmp_path: Path) -> None:
    async def scenario() -> tuple[_RawClient, list[Any], list[Path]]:
        async with running_server(tmp_path) as server, raw_client(server) as raw:
            # RFC 9114 §6.2.1: the control stream (type 0x00) must begin with SETTINGS;
            # this one begins with a DATA frame (type 0x00, length 1).
            raw._quic.send_stream_data(2, b"\x00" + b"\x00\x01x")
            raw.transmit()
            responses = await fetch([f"{base_url(server)}/"], insecure=True, timeout=10)
            await raw.wait_closed()
        return raw, responses, server.traces

    raw, responses, traces = run(scenario())
    assert raw.termination is not None
    assert raw.termination.error_code == ErrorCode.H3_MISSING_SETTINGS
    assert responses[0].status == 200, "the other connection was served"
    errors = [
        event.data
        for path in traces
        for event in named(read_trace(path), "connection_error")
        if event.data["direction"] == "sent"
    ]
    assert [error["code_name"] for error in errors] == ["H3_MISSING_SETTINGS"]


#: A request HEADERS frame (RFC 9114 §7.2.2) whose field section (RFC 9204 §4.5) holds
#: :method GET, :scheme https, :path / (static 17, 23, 1), :authority localhost (static
#: name 0) and "X-Bad: 1", an uppercase name: malformed (RFC 9114 §4.2).
MALFORMED_FIELD_SECTION = bytes(
    [0x00, 0x00, 0xC0 | 17, 0xC0 | 23, 0xC0 | 1, 0x50, 9, *b"localhost", 0x20 | 5, *b"X-Bad"]
) + bytes([1, *b"1"])
MALFORMED_REQUEST = bytes([0x01, len(MALFORMED_FIELD_SECTION)]) + MALFORMED_FIELD_SECTION


def test_the_server_reports_each_stream_error_with_its_code_and_rule(tmp_path: Path) -> None:
    lines: list[str] = []

    async def scenario() -> None:
        async with (
            running_server(tmp_path, on_message=lines.append) as server,
            raw_client(server) as raw,
        ):
            raw._quic.send_stream_data(2, bytes([0x00, 0x04, 0x00]))  # control stream, SETTINGS
            raw._quic.send_stream_data(0, MALFORMED_REQUEST, end_stream=True)
            raw.transmit()
            deadline = time.monotonic() + 5
            while not any("resets stream 0" in line for line in lines):
                assert time.monotonic() < deadline, lines
                await asyncio.sleep(0.05)
            raw.close()

    run(scenario())
    (reset,) = [line for line in lines if "stream 0" in line]
    assert reset.startswith("the server resets stream 0 of 127.0.0.1:")
    assert "H3_MESSAGE_ERROR (RFC 9114 §4.2): field name 'X-Bad' contains uppercase" in reset


def test_a_connection_over_the_limit_is_refused(tmp_path: Path) -> None:
    async def scenario() -> str:
        async with running_server(tmp_path, max_connections=1) as server:
            transport, held = await open_client(
                "127.0.0.1", server.address[1], tmp_path / "data" / "cert.pem"
            )
            try:
                with pytest.raises(FetchError) as refused:
                    await fetch([f"{base_url(server)}/"], insecure=True, timeout=10)
            finally:
                held.close_connection()
                transport.close()
        return str(refused.value)

    message = run(scenario())
    assert "0x2" in message and "limit of 1 connections" in message  # CONNECTION_REFUSED


def test_an_idle_connection_is_closed_and_its_trace_finished(tmp_path: Path) -> None:
    async def scenario() -> list[Path]:
        async with running_server(tmp_path, idle_timeout=0.5) as server:
            transport, held = await open_client(
                "127.0.0.1", server.address[1], tmp_path / "data" / "cert.pem"
            )
            try:
                await held.request(parse_url(f"{base_url(server)}/"), "GET", None)
                deadline = time.monotonic() + 5
                while not server.traces and time.monotonic() < deadline:
                    await asyncio.sleep(0.05)
                return list(server.traces)
            finally:
                transport.close()

    traces = run(scenario())
    assert len(traces) == 1, "the server ended the idle connection by itself"
    assert read_trace(traces[0]).warnings == []


# -- h3learn h3-server and h3learn get as commands -----------------------------------------


def test_h3learn_get_against_h3learn_h3_server_and_sigterm_finishes_the_traces(
    tmp_path: Path,
) -> None:
    server = start_server(tmp_path)
    try:
        url = f"https://localhost:{server.port}"
        record = tmp_path / "get.json"
        result = run_h3learn(
            "get",
            f"{url}/",
            f"{url}/second",
            f"{url}/",
            "--cafile",
            str(server.cert),
            "--record",
            str(record),
            "-H",
            "X-Lesson: qpack",
            "-H",
            "Accept: text/html",
        )
        assert result.returncode == 0, result.stderr
        assert f"== {url}/ (stream 0)\nHTTP/3 200\n" in result.stdout
        assert f"== {url}/second (stream 4)\nHTTP/3 200\n" in result.stdout
        assert f"== {url}/ (stream 8)\nHTTP/3 200\n" in result.stdout, "a URL given twice"
        assert "<code>/second</code>" in result.stdout

        # Without --cafile the self-signed certificate is refused (RFC 9114 §3.1.1).
        untrusted = run_h3learn("get", f"{url}/")
        assert untrusted.returncode == 1
        assert "TLS handshake failed" in untrusted.stderr
        assert untrusted.stderr.count("\n") == 1, "one clear line"
    finally:
        assert server.stop() == 0
    output = server.output()
    assert "Chromium" in output and "--ignore-certificate-errors-spki-list=" in output
    assert "stopped; 2 trace(s) written" in output

    traces = finished_traces(server.record_dir)
    served = [trace for trace in traces if decoded_headers(trace)]
    assert len(served) == 1
    trace = served[0]
    assert settings_of(trace, "remote") == {
        "QPACK_MAX_TABLE_CAPACITY": 4096,
        "QPACK_BLOCKED_STREAMS": 16,
    }
    kinds = {
        (event.name, event.data["frame"]["frame_type"])
        for event in trace.events
        if event.name in ("frame_created", "frame_parsed")
    }
    assert {("frame_created", "settings"), ("frame_parsed", "settings")} <= kinds
    assert [fields[":path"] for fields in decoded_headers(trace)] == ["/", "/second", "/"]
    # --header: the name in lowercase (RFC 9114 §4.2), and Accept replaced h3learn's own.
    for event in named(trace, "headers_decoded"):
        lines = [(item["name"], item["value"]) for item in event.data["headers"]]
        assert [line for line in lines if line[0] in ("x-lesson", "accept")] == [
            ("x-lesson", "qpack"),
            ("accept", "text/html"),
        ]
    client = read_trace(record)
    assert [fields[":status"] for fields in decoded_headers(client)] == ["200"] * 3


def test_sigterm_closes_open_connections_with_goaway_and_finishes_their_traces(
    tmp_path: Path,
) -> None:
    server = start_server(tmp_path)

    async def scenario() -> tuple[H3ClientProtocol, Any]:
        transport, held = await open_client("127.0.0.1", server.port, server.cert)
        try:
            url = f"https://localhost:{server.port}/held"
            response = await held.request(parse_url(url), "GET", None)
            server.terminate()
            async with asyncio.timeout(10):
                await held.wait_closed()
            return held, response
        finally:
            transport.close()

    try:
        held, response = run(scenario())
    finally:
        status = server.stop()
    assert status == 0
    assert response.status == 200
    assert held.h3.goaway_received == 4, "RFC 9114 §5.2: stream 0 was processed, 4 was not"
    (trace,) = finished_traces(server.record_dir)
    goaways = [
        event
        for event in named(trace, "frame_created")
        if event.data["frame"]["frame_type"] == "goaway"
    ]
    assert len(goaways) == 1


def test_get_reports_each_failure_in_one_line_with_exit_status_1(tmp_path: Path) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as silent:
        silent.bind(("127.0.0.1", 0))  # receives, never answers
        silent_port = silent.getsockname()[1]
        closed_port = free_udp_port()
        cases = {
            "bad URL": (["http://localhost/"], "needs an https URL"),
            "bad port": (["https://localhost:99999/"], "bad URL"),
            "refused": ([f"https://127.0.0.1:{closed_port}/"], "connection refused"),
            "timeout": (
                [f"https://127.0.0.1:{silent_port}/", "--timeout", "1"],
                "no answer from 127.0.0.1",
            ),
        }
        for case, (arguments, expected) in cases.items():
            started = time.monotonic()
            result = run_h3learn("get", *arguments)
            assert result.returncode == 1, case
            assert re.fullmatch(r"h3learn get: [^\n]+\n", result.stderr), (case, result.stderr)
            assert expected in result.stderr, (case, result.stderr)
            assert time.monotonic() - started < 8, case
