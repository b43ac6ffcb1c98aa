"""RFC 9114 §3.3, §4.1, §6.1: an HTTP/3 client on a real UDP socket.

This is plumbing, as in the server (udp_server.py). aioquic's asyncio layer owns the socket
and QUIC (TLS 1.3, loss recovery, timers); `H3OverQuic` (h3learn/transport/quic.py)
carries the QUIC connection's events into h3learn's sans-IO `H3Connection` and its actions
back out. What both ends share, the connection's recording among it, is udp_shared.py.
The URLs are checked and split in urls.py (RFC 3986), and the one-line reasons a fetch
fails are `FetchError`s made in fetch_errors.py.

`fetch` (what ``h3learn get`` runs) requests several URLs; those of one origin share one
connection (RFC 9114 §3.3), their requests in flight together on separate request streams
(§4.1, §6.1). The UDP socket is *connected*, so a closed port (an ICMP "port unreachable"
from the peer) is seen at once as "connection refused" instead of waiting for a timeout;
every wait is bounded. It works over IPv4 and IPv6; nothing here picks an address other
than the one given.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import socket
import ssl
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aioquic.asyncio.protocol import QuicConnectionProtocol
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.connection import QuicConnection
from aioquic.quic.events import ConnectionTerminated, HandshakeCompleted, QuicEvent

from h3learn.events import Recorder
from h3learn.h3 import closure
from h3learn.h3.connection import H3Connection, H3UsageError
from h3learn.h3.errors import ErrorCode, code_name
from h3learn.h3.http_events import (
    ConnectionTerminated as H3ConnectionTerminated,
)
from h3learn.h3.http_events import (
    DataReceived,
    H3Event,
    HeadersReceived,
    SettingsReceived,
    StreamEnded,
    StreamReset,
)
from h3learn.h3.messages import MalformedMessage
from h3learn.h3.settings import Settings
from h3learn.qpack.errors import cite
from h3learn.transport.fetch_errors import FetchError, check_ca_file, connection_failure
from h3learn.transport.quic import H3_ALPN, H3OverQuic
from h3learn.transport.request_fields import check_request, request_header_section
from h3learn.transport.udp_shared import (
    DEFAULT_SETTINGS,
    ConnectionRecording,
    Header,
    RecordingFactory,
    format_address,
)
from h3learn.transport.urls import Target, parse_url

#: Seconds the client waits after the handshake for the server's SETTINGS before its
#: first request (`H3ClientProtocol.wait_for_settings`).
SETTINGS_WAIT = 0.5


@dataclass(frozen=True, slots=True)
class Response:
    """One URL's response (RFC 9114 §4.1): the final header section, content and trailers."""

    url: str
    status: int
    headers: list[Header]
    body: bytes
    trailers: list[Header] = field(default_factory=list)
    stream_id: int = 0


@dataclass(frozen=True, slots=True)
class RequestParts:
    """What every request of one `fetch` carries besides its URL."""

    method: str
    data: bytes | None
    fields: tuple[Header, ...]


@dataclass
class _Pending:
    """A request in flight, and what has come back so far."""

    target: Target
    future: asyncio.Future[Response]
    status: int | None = None
    headers: list[Header] = field(default_factory=list)
    body: bytearray = field(default_factory=bytearray)
    trailers: list[Header] = field(default_factory=list)


class H3ClientProtocol(QuicConnectionProtocol):
    """The client's QUIC connection, its HTTP/3 connection, and the requests in flight."""

    def __init__(self, quic: QuicConnection, recording: ConnectionRecording, settings: Settings):
        super().__init__(quic)
        self.recording = recording
        h3 = H3Connection(
            is_client=True, settings=settings, recorder=recording.log.for_endpoint("client")
        )
        self.bridge = H3OverQuic(quic, h3, recorder=recording.log.for_endpoint("client"))
        self.handshake: asyncio.Future[None] = self._loop.create_future()
        #: Set when the server's SETTINGS arrive (see `SETTINGS_WAIT`).
        self.settings_received = asyncio.Event()
        self._pending: dict[int, _Pending] = {}

    @property
    def h3(self) -> H3Connection:
        return self.bridge.h3

    # -- requests ------------------------------------------------------------------------

    def request(
        self, target: Target, method: str, data: bytes | None, fields: Sequence[Header] = ()
    ) -> asyncio.Future[Response]:
        """Send one request on a new request stream (RFC 9114 §4.1); its response comes later.

        ``fields``: the user's own field lines (h3learn/transport/request_fields.py).
        """
        headers = request_header_section(target, method, data, fields)
        future: asyncio.Future[Response] = self._loop.create_future()
        # Credit the peer granted since the last event (RFC 9204 §2.1.3) counts too.
        self.bridge.report_flow_control_credit()
        stream_id = None
        try:
            stream_id = self.h3.send_request(headers, end_stream=data is None)
            if data is not None:
                self.h3.send_data(stream_id, data, end_stream=True)
        except (H3UsageError, MalformedMessage, ValueError) as error:
            if stream_id is not None:  # the header section is queued: cancel the request
                self.h3.reset_stream(stream_id)
                self.bridge.transmit_actions()
                self.transmit()
            future.set_exception(FetchError(f"{target.shown}: cannot send the request: {error}"))
            return future
        self._pending[stream_id] = _Pending(target, future)
        self.bridge.transmit_actions()
        self.transmit()
        return future

    async def wait_for_settings(self) -> None:
        """Give the server's SETTINGS up to `SETTINGS_WAIT` seconds to arrive.

        Until they come, the client's QPACK encoder does not know the server's table
        capacity, so it cannot use the dynamic table (RFC 9204 §3.2.3). RFC 9114 §7.2.4.2
        asks clients not to wait for SETTINGS without end, but to give them a chance to
        arrive before the first request. They usually come with the end of the handshake;
        waiting that moment makes the encoding the same every time.
        """
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(SETTINGS_WAIT):
                await self.settings_received.wait()

    def close_connection(self, failure: str | None = None) -> None:
        """Close with H3_NO_ERROR (RFC 9114 §5.3): every response is in.

        A connection whose handshake never completed was never established: there is no
        HTTP/3 connection to close, so the trace ends with ``connection_failed`` saying
        why (``failure``), not with a close that never happened; QUIC still abandons its
        attempt.
        """
        if not self.h3.closed:
            if self.bridge.handshake_done:
                self.h3.close(ErrorCode.H3_NO_ERROR, "")
            else:
                record_never_established(self.bridge.recorder, failure)
                closure.terminate(self.h3, ErrorCode.H3_NO_ERROR, "")
        self.bridge.transmit_actions()
        self.transmit()

    # -- events ----------------------------------------------------------------------------

    def quic_event_received(self, event: QuicEvent) -> None:
        if isinstance(event, HandshakeCompleted) and not self.handshake.done():
            self.handshake.set_result(None)
        if isinstance(event, ConnectionTerminated):
            self._fail_all(connection_failure(event))
        for h3_event in self.bridge.quic_event_received(event):
            self._h3_event_received(h3_event)
        self.bridge.transmit_actions()

    def error_received(self, exc: Exception) -> None:
        """An ICMP error for the connected socket, e.g. port unreachable: fail at once."""
        if self.handshake.done():
            exc = FetchError(f"the connection broke: {exc}")
        self._fail_all(exc)
        self._closed.set()

    def _fail_all(self, error: Exception) -> None:
        if not self.handshake.done():
            self.handshake.set_exception(error)
        for pending in self._pending.values():
            if not pending.future.done():
                pending.future.set_exception(error)
        self._pending.clear()

    def _h3_event_received(self, event: H3Event) -> None:
        if isinstance(event, SettingsReceived):
            self.settings_received.set()
            return
        if isinstance(event, H3ConnectionTerminated):
            # The peer's close is explained from the QUIC event (above); this is this
            # client's own close after a protocol error (RFC 9114 §8), with the rule broken.
            if not event.by_peer and event.error_code != ErrorCode.H3_NO_ERROR:
                self._fail_all(
                    FetchError(
                        f"the server broke a rule, so the client closed the connection with"
                        f" {code_name(event.error_code)}: {event.reason}"
                    )
                )
            return
        stream_id = getattr(event, "stream_id", None)
        pending = self._pending.get(stream_id) if stream_id is not None else None
        if pending is None:
            return
        ended = False
        if isinstance(event, HeadersReceived):
            if event.trailers:
                pending.trailers = list(event.headers)
            elif not event.interim:
                pending.headers = list(event.headers)
                pending.status = _status_of(event.headers)
            ended = event.stream_ended
        elif isinstance(event, DataReceived):
            pending.body += event.data
            ended = event.stream_ended
        elif isinstance(event, StreamEnded):
            ended = True
        elif isinstance(event, StreamReset):
            del self._pending[event.stream_id]
            pending.future.set_exception(
                FetchError(f"{pending.target.shown}: {self._who_reset(event)}")
            )
            return
        if ended:
            del self._pending[stream_id]  # type: ignore[arg-type]
            if pending.status is None:
                pending.future.set_exception(
                    FetchError(f"{pending.target.shown}: the stream ended without a response")
                )
            else:
                pending.future.set_result(
                    Response(
                        url=pending.target.url,
                        status=pending.status,
                        headers=pending.headers,
                        body=bytes(pending.body),
                        trailers=pending.trailers,
                        stream_id=stream_id,  # type: ignore[arg-type]
                    )
                )

    def _who_reset(self, event: StreamReset) -> str:
        """Who reset a request stream, and why: the server, or this client after the
        response broke a rule (the event names it, RFC 9114 §8)."""
        code = code_name(event.error_code)
        if not event.by_peer:
            return (
                f"the response broke a rule, so this client reset the stream with {code}"
                f" ({cite(event.rfc)}): {event.rule}"
            )
        retry = " (the request was not processed; it may be retried)" if event.retry_safe else ""
        how = f": {event.rule} ({cite(event.rfc)})" if event.rule else ""
        return f"the server ended the request with {code}{how}{retry}"

    def unfinished_responses(self) -> list[tuple[Target, int, int]]:
        """(target, status, bytes of content so far) of responses begun but not ended."""
        return [
            (pending.target, pending.status, len(pending.body))
            for pending in self._pending.values()
            if pending.status is not None
        ]


def _status_of(headers: Sequence[Header]) -> int:
    for name, value in headers:
        if name == b":status":
            return int(value)
    return 0


async def fetch(
    urls: Sequence[str],
    method: str = "GET",
    data: bytes | None = None,
    *,
    insecure: bool = False,
    cafile: str | None = None,
    record: Path | RecordingFactory | None = None,
    timeout: float = 10.0,
    settings: Settings = DEFAULT_SETTINGS,
    fields: Sequence[Header] = (),
) -> list[Response]:
    """Request every URL; one connection per origin (URLs of one origin share it).

    Every request carries ``method``, ``data`` as its content, and ``fields``, the user's
    own field lines (h3learn/transport/request_fields.py).

    ``insecure`` skips the certificate check; ``cafile`` trusts the authorities (or the
    self-signed certificate) in that file instead of the system's. ``record`` writes the
    connection's trace there (one origin only), or makes its recording (a
    `RecordingFactory`, as h3learn.capture does). A request the server would find
    malformed is refused before connecting (`check_request`). Each origin gets
    ``timeout`` seconds for connecting and all its responses. Raises FetchError with a
    one-line reason.
    """
    targets = [parse_url(url) for url in urls]
    for target in targets:
        check_request(target, method, data, fields)
    #: origin -> the positions in ``urls`` of its URLs (one URL may come more than once).
    origins: dict[tuple[str, int], list[int]] = {}
    for position, target in enumerate(targets):
        origins.setdefault(target.origin, []).append(position)
    if record is not None and len(origins) > 1:
        raise FetchError("--record writes one connection's trace: give URLs of one origin")
    request = RequestParts(method, data, tuple(fields))
    responses: dict[int, Response] = {}
    for (host, port), positions in origins.items():
        # QUIC's idle timer a second later than the overall bound, so that a silent server is
        # reported as "no answer within N s" rather than by whichever timer fires first.
        configuration = QuicConfiguration(
            is_client=True, alpn_protocols=[H3_ALPN], server_name=host, idle_timeout=timeout + 1
        )
        if insecure:
            configuration.verify_mode = ssl.CERT_NONE
        elif cafile is not None:
            check_ca_file(cafile)
            configuration.load_verify_locations(cafile)
        group = [targets[position] for position in positions]
        answers = await _fetch_origin(
            host, port, group, request, configuration, record, timeout, settings
        )
        for position, response in zip(positions, answers, strict=True):
            responses[position] = response
    return [responses[position] for position in range(len(targets))]


async def _fetch_origin(
    host: str,
    port: int,
    targets: list[Target],
    request: RequestParts,
    configuration: QuicConfiguration,
    record: Path | RecordingFactory | None,
    timeout: float,
    settings: Settings,
) -> list[Response]:
    """Try each address of the host in turn until one answers (or refuses for good)."""
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_DGRAM)
    except socket.gaierror as error:
        raise FetchError(f"cannot resolve {host!r}: {error.strerror}") from None
    addresses: list[tuple[socket.AddressFamily, tuple[Any, ...]]] = []
    for info in infos:
        candidate = (info[0], info[4])
        if info[0] in (socket.AF_INET, socket.AF_INET6) and candidate not in addresses:
            addresses.append(candidate)
    refused: list[str] = []
    unreachable: list[str] = []
    for family, sockaddr in addresses:
        try:
            return await _fetch_at(
                family, sockaddr, targets, request, configuration, record, timeout, settings
            )
        except ConnectionRefusedError:
            refused.append(format_address(sockaddr))
        except OSError as error:  # no route, no such interface, ...
            unreachable.append(f"{format_address(sockaddr)} ({error.strerror or error})")
    if unreachable:
        raise FetchError(f"cannot reach {', '.join(refused + unreachable)}")
    raise FetchError(
        f"connection refused by {', '.join(refused)}: nothing listens on UDP port {port}"
    )


async def _fetch_at(
    family: socket.AddressFamily,
    sockaddr: tuple[Any, ...],
    targets: list[Target],
    request: RequestParts,
    configuration: QuicConfiguration,
    record: Path | RecordingFactory | None,
    timeout: float,
    settings: Settings,
) -> list[Response]:
    loop = asyncio.get_running_loop()
    peer = format_address(sockaddr)
    sock = socket.socket(family, socket.SOCK_DGRAM)
    try:
        sock.setblocking(False)
        sock.connect(sockaddr)  # a connected socket hears ICMP errors (RFC 1122 §4.1.3.3)
    except OSError:
        sock.close()
        raise
    quic = QuicConnection(configuration=configuration)
    title = f"h3learn get: connection to {peer}"
    meta = {
        "odcid": quic.original_destination_connection_id.hex(),
        "peer_address": peer,
        "capture": "h3learn get",
    }
    if callable(record):
        recording = record(title, meta)
    else:
        journal = None
        if record is not None:
            journal = record.parent / f".{record.name}.{secrets.token_hex(4)}.journal"
        recording = ConnectionRecording(title, meta, journal, record)
    transport, protocol = await loop.create_datagram_endpoint(
        lambda: H3ClientProtocol(quic, recording, settings), sock=sock
    )
    failure = "the fetch stopped before the handshake completed"
    try:
        protocol.connect(sockaddr)
        async with asyncio.timeout(timeout):
            await protocol.handshake
            await protocol.wait_for_settings()
            futures = [
                protocol.request(target, request.method, request.data, request.fields)
                for target in targets
            ]
            return list(await asyncio.gather(*futures))
    except TimeoutError:
        error = _timed_out(protocol, peer, timeout)
        failure = str(error)
        raise error from None
    except ConnectionRefusedError:
        failure = f"connection refused by {peer}: nothing listens on UDP port {sockaddr[1]}"
        raise
    except (OSError, FetchError) as error:
        failure = str(error) if isinstance(error, FetchError) else _unreachable(peer, error)
        raise
    finally:
        protocol.close_connection(failure)
        try:
            async with asyncio.timeout(1.0):
                await protocol.wait_closed()
        except TimeoutError:
            pass
        transport.close()
        recording.finish()


def _unreachable(peer: str, error: OSError) -> str:
    return f"cannot reach {peer}: {error.strerror or error}"


def record_never_established(recorder: Recorder, reason: str | None) -> None:
    """Record ``connection_failed``: the QUIC handshake never completed (RFC 9001 §4.1)."""
    reason = reason or "the handshake did not complete"
    recorder.record(
        category="transport",
        name="connection_failed",
        stream_id=None,
        data={"reason": reason, "cause": _cause(reason)},
        rfc=("9001#4.1",),
        summary=(
            f"client: the connection was never established ({reason}): no handshake, so there is"
            " no HTTP/3 connection to close"
        ),
    )


def _cause(reason: str) -> str:
    """A few words for the list of captures: ``connection refused``, ``no answer``, ..."""
    for start, cause in (
        ("connection refused", "connection refused"),
        ("no answer", "no answer"),
        ("cannot reach", "unreachable"),
    ):
        if reason.startswith(start):
            return cause
    return "no handshake"


def _timed_out(protocol: H3ClientProtocol, peer: str, timeout: float) -> FetchError:
    """Why nothing (or not everything) came back in time, as far as the client can tell."""
    if not protocol.bridge.handshake_done:
        return FetchError(
            f"no answer from {peer} within {timeout:g} s (is an HTTP/3 server listening there?)"
        )
    unfinished = protocol.unfinished_responses()
    if unfinished:
        target, status, length = unfinished[0]
        return FetchError(
            f"{target.shown}: the response started (status {status}, {length} bytes of content)"
            f" but its stream did not end within {timeout:g} s (RFC 9114 §4.1: a response"
            " ends with its stream)"
        )
    return FetchError(
        f"the connection to {peer} was made, but no response arrived within {timeout:g} s"
    )
