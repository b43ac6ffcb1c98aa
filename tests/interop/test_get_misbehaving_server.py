"""``h3learn get`` against a server that misbehaves on purpose: what the client reports.

The server here is aioquic with no HTTP/3 layer: it writes raw bytes on its streams
(SETTINGS on its control stream, RFC 9114 §6.2.1, then whatever the test wants on the
request stream). The client must say what happened: a response that started but whose
stream never ended (RFC 9114 §4.1), a reset by the server (its RESET_STREAM and code), or
a reset by the client itself because the response broke a rule (RFC 9114 §8, with the
rule and its section). Everything runs on loopback; each test closes its server.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aioquic.asyncio.protocol import QuicConnectionProtocol
from aioquic.asyncio.server import serve
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.events import QuicEvent, StreamDataReceived

from h3learn.h3.errors import ErrorCode
from h3learn.transport.certificates import ensure_certificate
from h3learn.transport.fetch_errors import FetchError
from h3learn.transport.udp_client import fetch

#: RFC 9114 §7.2.4: a control stream (type 0x00) with an empty SETTINGS frame (0x04).
CONTROL_STREAM = bytes([0x00, 0x04, 0x00])
#: RFC 9204 §4.5.1-§4.5.2: Required Insert Count 0, Base 0, then static index 25
#: (":status 200") as an indexed field line (0b11 + 6-bit index).
STATUS_200 = bytes([0x00, 0x00, 0xC0 | 25])
#: A literal field line with a literal name (RFC 9204 §4.5.6): "X-Bad: 1", an uppercase
#: name, which RFC 9114 §4.2 makes malformed.
UPPERCASE_FIELD = bytes([0x20 | 5]) + b"X-Bad" + bytes([1]) + b"1"


def frame(frame_type: int, payload: bytes) -> bytes:
    """RFC 9114 §7.1 with one-byte type and length (enough for these small frames)."""
    return bytes([frame_type, len(payload)]) + payload


HEADERS_200 = frame(0x01, STATUS_200)
DATA_HELLO = frame(0x00, b"hello")


class _MisbehavingServer(QuicConnectionProtocol):
    """Answers each complete request the way ``mode`` says."""

    mode = ""

    def quic_event_received(self, event: QuicEvent) -> None:
        quic = self._quic
        if isinstance(event, StreamDataReceived) and event.stream_id % 4 == 0 and event.end_stream:
            quic.send_stream_data(quic.get_next_available_stream_id(True), CONTROL_STREAM)
            if self.mode == "no end":
                quic.send_stream_data(event.stream_id, HEADERS_200 + DATA_HELLO)
            elif self.mode == "reset":
                quic.reset_stream(event.stream_id, ErrorCode.H3_MESSAGE_ERROR)
            elif self.mode == "malformed":
                response = frame(0x01, STATUS_200 + UPPERCASE_FIELD) + DATA_HELLO
                quic.send_stream_data(event.stream_id, response, end_stream=True)
            self.transmit()


@contextlib.asynccontextmanager
async def misbehaving_server(directory: Path, mode: str) -> AsyncIterator[int]:
    cert, key = ensure_certificate(directory)
    configuration = QuicConfiguration(is_client=False, alpn_protocols=["h3"], idle_timeout=5)
    configuration.load_cert_chain(cert, key)

    class Server(_MisbehavingServer):
        pass

    Server.mode = mode
    server = await serve("127.0.0.1", 0, configuration=configuration, create_protocol=Server)
    try:
        assert server._transport is not None
        yield int(server._transport.get_extra_info("sockname")[1])
    finally:
        server.close()


def fetch_error(directory: Path, mode: str, timeout: float = 5.0) -> str:
    async def scenario() -> str:
        async with misbehaving_server(directory, mode) as port:
            with pytest.raises(FetchError) as error:
                await fetch([f"https://localhost:{port}/"], insecure=True, timeout=timeout)
        return str(error.value)

    async def bounded() -> str:
        async with asyncio.timeout(30):
            return await scenario()

    return asyncio.run(bounded())


def test_a_response_whose_stream_never_ends_is_reported_as_started(tmp_path: Path) -> None:
    message = fetch_error(tmp_path, "no end", timeout=1.5)
    assert "the response started (status 200, 5 bytes of content)" in message
    assert "did not end within 1.5 s" in message
    assert "is an HTTP/3 server listening" not in message


def test_a_reset_by_the_server_names_the_server_and_its_code(tmp_path: Path) -> None:
    message = fetch_error(tmp_path, "reset")
    assert "the server ended the request with H3_MESSAGE_ERROR" in message, message
    assert "it sent RESET_STREAM (RFC 9000 §19.4)" in message, message


def test_a_reset_by_this_client_names_the_rule_the_response_broke(tmp_path: Path) -> None:
    message = fetch_error(tmp_path, "malformed")
    assert "this client reset the stream with H3_MESSAGE_ERROR (RFC 9114 §4.2)" in message, message
    assert "uppercase" in message.lower() or "lowercase" in message.lower(), message
