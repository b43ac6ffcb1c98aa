"""HTTP/3 on a real UDP socket (RFC 9114 §3.3, RFC 9000 §5, §10): a server and a client.

This is plumbing. aioquic's asyncio layer owns the socket and QUIC (TLS 1.3, loss
recovery, timers); `H3OverQuic` (h3learn/transport/quic.py) carries each QUIC connection's
events into h3learn's sans-IO `H3Connection` and its actions back out. What to answer is
decided by an *application* object, one per connection, that the server only hands events
to (`ServerApplication`; h3learn/h3_server.py has the one `h3learn h3-server` runs).

Server (`serve`):

- one `H3Connection` per QUIC connection (RFC 9114 §3.3: a client opens a connection per
  origin; the server keeps each one's state apart), each with its own `EventLog` whose
  clock is wall-clock milliseconds since that connection's first packet arrived;
- with a record directory, each connection's events go into their own trace, journalled
  as they happen (`LiveTrace`) and finished when the connection ends (docs/events.md,
  "Trace files"), named ``<UTC time>-<peer address>-<connection ID>.json``;
- limits: at most ``max_connections`` at once (a further client is refused with the QUIC
  transport error CONNECTION_REFUSED, RFC 9000 §20.1) and the idle timeout of the
  `QuicConfiguration` (RFC 9000 §10.1);
- a peer that breaks a rule only loses its own connection: `H3Connection` turns protocol
  errors into a CONNECTION_CLOSE (RFC 9114 §8), and anything unexpected is caught here
  and closes that one connection with H3_INTERNAL_ERROR;
- `H3Server.close` ends every connection (GOAWAY, then CONNECTION_CLOSE with H3_NO_ERROR:
  RFC 9114 §5.2, §5.3) and finishes every trace.

Client (`fetch`): requests several URLs; those of one origin share one connection (RFC 9114
§3.3), their requests in flight together on separate request streams (§4.1, §6.1). The UDP
socket is *connected*, so a closed port (an ICMP "port unreachable" from the peer) is seen
at once as "connection refused" instead of waiting for a timeout; every wait is bounded.
Both sides work over IPv4 and IPv6; nothing here picks an address other than the one given.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import secrets
import socket
import ssl
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from importlib.metadata import version as package_version
from pathlib import Path
from typing import Any, Protocol, cast
from urllib.parse import urlsplit

from aioquic.asyncio.protocol import QuicConnectionProtocol, QuicStreamHandler
from aioquic.asyncio.server import QuicServer
from aioquic.asyncio.server import serve as quic_serve
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.connection import NetworkAddress, QuicConnection
from aioquic.quic.events import (
    ConnectionTerminated,
    HandshakeCompleted,
    ProtocolNegotiated,
    QuicEvent,
)
from aioquic.quic.packet import QuicErrorCode, QuicFrameType

from h3learn.events import Event, EventLog
from h3learn.h3.connection import H3Connection, H3UsageError
from h3learn.h3.errors import ErrorCode, code_name
from h3learn.h3.http_events import (
    ConnectionTerminated as H3ConnectionTerminated,
)
from h3learn.h3.http_events import (
    DataReceived,
    H3Event,
    HeadersReceived,
    StreamEnded,
    StreamReset,
)
from h3learn.h3.settings import Settings
from h3learn.trace.store import LiveTrace, TraceFormatError
from h3learn.transport.quic import H3_ALPN, H3OverQuic, close_reason

Header = tuple[bytes, bytes]

#: What `serve` and `fetch` announce unless told otherwise (the values aioquic uses).
DEFAULT_SETTINGS = Settings(qpack_max_table_capacity=4096, qpack_blocked_streams=16)
DEFAULT_MAX_CONNECTIONS = 100
#: RFC 9000 §20.1: the transport error codes 0x0100-0x01ff carry a TLS alert.
CRYPTO_ERROR_FIRST, CRYPTO_ERROR_LAST = 0x0100, 0x01FF
USER_AGENT = f"h3learn/{package_version('h3learn')}".encode()


#: Makes the recording of a new connection from its title and metadata (peer address,
#: connection ID): how `h3learn serve` turns every connection into a capture (h3learn.capture).
RecordingFactory = Callable[[str, dict[str, Any]], "ConnectionRecording"]


class ServerApplication(Protocol):
    """What a server connection hands its events to; it answers through the H3Connection."""

    def event_received(self, h3: H3Connection, event: H3Event) -> None: ...


# -- one connection's recording -----------------------------------------------------------


class ConnectionRecording:
    """The events of one connection, stamped with wall-clock ms since it began.

    With a ``path``, every event is also appended to a journal there as it happens, and
    `finish` turns it into a native trace (at ``final_path``, or in place).

    ``max_events`` bounds the journal: once it holds that many events `limit_reached` is
    set (the server then closes the connection with H3_EXCESSIVE_LOAD, RFC 9114 §8.1), and
    the events of the close still fit in `CLOSE_MARGIN` more; anything past that is counted
    in `dropped_events`, not written.
    """

    #: Events still journalled after `max_events`, so the close that follows is recorded.
    CLOSE_MARGIN = 64

    def __init__(
        self,
        title: str,
        meta: dict[str, Any],
        path: Path | None = None,
        final_path: Path | None = None,
        *,
        max_events: int | None = None,
    ) -> None:
        self._began = time.monotonic()
        self.title = title
        self.meta = {"epoch": datetime.now(UTC).isoformat(timespec="milliseconds"), **meta}
        self.log = EventLog(clock=self._elapsed_ms)
        self.final_path = final_path if final_path is not None else path
        self.live: LiveTrace | None = None
        #: Events journalled without their labels, and whether journalling gave up.
        self.dropped_labels = 0
        self.stopped = False
        self.max_events = max_events
        #: Set once the journal holds ``max_events`` events: time to close the connection.
        self.limit_reached = False
        self.dropped_events = 0
        if path is not None:
            self.live = LiveTrace(path, title, self.meta)
            self.log.listeners.append(self._journal)

    def _elapsed_ms(self) -> float:
        return round((time.monotonic() - self._began) * 1000, 3)

    def _journal(self, event: Event) -> None:
        """Append to the journal; a failure never stops the connection.

        An event whose labels break the trace rules (a bug in the layer that made it) is
        kept without its labels, marked in its summary, so one bad span does not cost the
        rest of the capture; the first such event is reported on stderr.
        """
        if self.live is None or self.stopped:
            return
        if self.max_events is not None:
            if self.live.count >= self.max_events + self.CLOSE_MARGIN:
                self.dropped_events += 1
                return
            if self.live.count + 1 >= self.max_events:
                self.limit_reached = True
        written = event
        try:
            try:
                self.live.append(event)
            except TraceFormatError as error:
                self.dropped_labels += 1
                if self.dropped_labels == 1:
                    print(f"h3learn: warning: {error} (kept without its labels)", file=sys.stderr)
                written = replace(
                    event, fields=(), summary=f"{event.summary} [labels dropped: {error}]"
                )
                self.live.append(written)
        except (OSError, ValueError) as error:
            self.stopped = True
            self._warn(f"journal stopped at event {event.seq}: {error}")
            return
        self.journalled(written)

    def journalled(self, event: Event) -> None:
        """Called with each event as it was written to the journal (a hook for subclasses)."""

    def _warn(self, message: str) -> None:
        name = self.live.path.name if self.live is not None else "trace"
        print(f"h3learn: warning: {name}: {message}", file=sys.stderr)

    def finish(self) -> Path | None:
        """Finish the trace file (idempotent); returns its path, or None if not recording."""
        if self.live is None:
            return None
        if self.live.closed:
            return self.final_path
        try:
            path = self.live.close(self.final_path)
            if self.live.count == 0:
                path.unlink()  # nothing happened worth a trace (no HTTP/3, no transport event)
                return None
            return path
        except (OSError, ValueError) as error:
            self._warn(f"not finished (the journal stays): {error}")
            return None


def quiet_aioquic_log() -> None:
    """Keep aioquic's own log lines off the terminal: the commands report failures themselves."""
    logging.getLogger("quic").addHandler(logging.NullHandler())


def format_address(address: Sequence[Any]) -> str:
    """``127.0.0.1:4433`` or ``[::1]:4433``."""
    host, port = str(address[0]), int(address[1])
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def trace_file_name(peer: Sequence[Any], connection_id: bytes, when: datetime) -> str:
    """``20250102T030405.678Z-127.0.0.1_51234-0a1b2c3d4e5f6a7b.json``: safe on every system.

    An IPv6 peer is written with dashes for colons (``ip6---1_51234`` for ``[::1]:51234``).
    """
    stamp = when.strftime("%Y%m%dT%H%M%S.") + f"{when.microsecond // 1000:03d}Z"
    host = str(peer[0])
    if ":" in host:
        host = "ip6-" + host.replace(":", "-")  # ::1 -> ip6---1
    host = re.sub(r"[^0-9A-Za-z.-]", "_", host)
    return f"{stamp}-{host}_{int(peer[1])}-{connection_id.hex()[:16]}.json"


# -- the server ------------------------------------------------------------------------------


class H3ServerProtocol(QuicConnectionProtocol):
    """One QUIC connection of the server, and the HTTP/3 connection on top of it."""

    def __init__(
        self,
        quic: QuicConnection,
        stream_handler: QuicStreamHandler | None = None,
        *,
        server: H3Server,
    ) -> None:
        super().__init__(quic, stream_handler)
        self.server = server
        self.peer: NetworkAddress | None = None
        self.recording: ConnectionRecording | None = None
        self.bridge: H3OverQuic | None = None
        self.application: ServerApplication | None = None
        #: How QUIC reported the end of the connection.
        self.termination: ConnectionTerminated | None = None
        self.finished = False

    def datagram_received(self, data: bytes | str, addr: NetworkAddress) -> None:
        if self.recording is None:
            self._begin(addr)
        super().datagram_received(data, addr)
        self._end_when_closing()

    def _end_when_closing(self) -> None:
        """End the connection's recording as soon as a CONNECTION_CLOSE was sent or received.

        RFC 9000 §10.2: from then on the connection only lingers (closing or draining, three
        PTOs) so that stray packets are answered or ignored; nothing more happens in HTTP/3.
        aioquic reports the end (ConnectionTerminated) only after that period, which under
        load (a PTO of seconds) kept a finished connection "live" for most of a minute. The
        event aioquic will deliver then is the one handled here, so it is handled once.
        """
        close = self._quic._close_event
        if close is not None and not self.finished:
            self.quic_event_received(close)

    def _begin(self, peer: NetworkAddress) -> None:
        """The first packet: the peer's address is known; start the recording."""
        self.peer = peer
        server = self.server
        odcid = self._quic.original_destination_connection_id
        title = f"h3learn h3-server: connection from {format_address(peer)}"
        meta = {
            "odcid": odcid.hex(),
            "peer_address": format_address(peer),
            "capture": "h3learn h3-server",
        }
        if server.recording_factory is not None:
            self.recording = server.recording_factory(title, meta)
        else:
            path = None
            if server.record_dir is not None:
                path = server.record_dir / trace_file_name(peer, odcid, datetime.now(UTC))
            self.recording = ConnectionRecording(title, meta, path)
        server.connection_began(self)

    def _start_http3(self) -> None:
        """TLS chose "h3" (RFC 9114 §3.1): start HTTP/3 on this connection.

        Not earlier: aioquic learns the client's stream limits (RFC 9000 §18.2) from the
        same ClientHello, and streams opened before them wait for the end of the handshake.
        Opened now, the control stream's SETTINGS leave in the server's first flight
        (0.5-RTT data, RFC 9001 §4.1.1), so the client has them before its first request.
        """
        assert self.recording is not None
        recorder = self.recording.log.for_endpoint("server")
        h3 = H3Connection(is_client=False, settings=self.server.settings, recorder=recorder)
        self.application = self.server.application_factory()
        self.bridge = H3OverQuic(self._quic, h3, recorder=recorder)

    def quic_event_received(self, event: QuicEvent) -> None:
        if self.finished or self.recording is None:
            return
        try:
            if isinstance(event, ProtocolNegotiated) and self.bridge is None:
                self._start_http3()
            bridge, application = self.bridge, self.application
            if bridge is not None and application is not None:
                for h3_event in bridge.quic_event_received(event):
                    application.event_received(bridge.h3, h3_event)
                if self.recording.limit_reached and not bridge.h3.closed:
                    bridge.h3.close(
                        ErrorCode.H3_EXCESSIVE_LOAD,
                        f"this connection's capture reached its limit of"
                        f" {self.recording.max_events} events",
                    )
                bridge.transmit_actions()
        except Exception:
            # A bug, not a peer's protocol error (those become CloseConnection actions):
            # close this connection only, and say why.
            print(
                f"h3learn: internal error on the connection from {self.describe_peer()}:\n"
                + traceback.format_exc(),
                file=sys.stderr,
            )
            self._quic.close(error_code=ErrorCode.H3_INTERNAL_ERROR, reason_phrase="internal error")
        if isinstance(event, ConnectionTerminated):
            self.termination = event
            self._end()

    def shut_down(self) -> None:
        """Close gracefully: GOAWAY (RFC 9114 §5.2), then CONNECTION_CLOSE (§5.3)."""
        if self.finished or self._quic._close_event is not None:
            # Already closing, or draining after the peer's close (RFC 9000 §10.2): the
            # connection ends by itself within three PTOs, and its trace with it.
            return
        if self.bridge is None:
            self.close()  # still in the handshake: a QUIC close is all there is
            return
        h3 = self.bridge.h3
        if not h3.closed:
            # The control stream may not be open yet, or a GOAWAY was already sent.
            with contextlib.suppress(H3UsageError):
                h3.send_goaway()
            # Onto the wire first: once a close is pending, aioquic sends nothing else.
            self.bridge.transmit_actions()
            self.transmit()
            # Deliberate simplification of RFC 9114 §5.2: requests in flight are not
            # waited for; the close follows the GOAWAY at once.
            h3.close(ErrorCode.H3_NO_ERROR, "server shutting down")
        self.bridge.transmit_actions()
        self.transmit()

    def _end(self) -> None:
        if self.finished:
            return
        self.finished = True
        path = self.recording.finish() if self.recording is not None else None
        self.server.connection_ended(self, path)

    def force_end(self) -> None:
        """The server is stopping and this connection did not finish closing in time."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._closed.set()
        self._end()

    def describe_peer(self) -> str:
        return format_address(self.peer) if self.peer is not None else "(unknown)"


class _RefusingProtocol(QuicConnectionProtocol):
    """A connection over the limit: closed at once with CONNECTION_REFUSED (RFC 9000 §20.1)."""

    def __init__(
        self, quic: QuicConnection, stream_handler: QuicStreamHandler | None = None, *, limit: int
    ) -> None:
        super().__init__(quic, stream_handler)
        self.limit = limit

    def datagram_received(self, data: bytes | str, addr: NetworkAddress) -> None:
        self._quic.receive_datagram(cast(bytes, data), addr, now=self._loop.time())
        # A transport close (frame_type set) keeps its code even in Initial packets, where
        # an application close would become APPLICATION_ERROR (RFC 9000 §10.2.3).
        self._quic.close(
            error_code=QuicErrorCode.CONNECTION_REFUSED,
            frame_type=QuicFrameType.PADDING,
            reason_phrase=f"the server is at its limit of {self.limit} connections",
        )
        self._process_events()
        self.transmit()


@dataclass
class H3Server:
    """A listening HTTP/3 server: its connections, its traces, and how to stop it."""

    configuration: QuicConfiguration
    application_factory: Callable[[], ServerApplication]
    settings: Settings = DEFAULT_SETTINGS
    record_dir: Path | None = None
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    #: Makes each connection's recording instead of ``record_dir`` (h3learn.capture).
    recording_factory: RecordingFactory | None = None
    #: Called with one line for each connection that begins and ends.
    on_message: Callable[[str], None] = lambda line: None
    connections: set[H3ServerProtocol] = field(default_factory=set)
    #: The finished trace files, in the order the connections ended.
    traces: list[Path] = field(default_factory=list)
    quic_server: QuicServer | None = None

    @property
    def address(self) -> tuple[str, int]:
        """The host and port actually bound (useful with port 0)."""
        assert self.quic_server is not None and self.quic_server._transport is not None
        sockname = self.quic_server._transport.get_extra_info("sockname")
        return str(sockname[0]), int(sockname[1])

    def create_protocol(
        self, quic: QuicConnection, stream_handler: QuicStreamHandler | None = None
    ) -> QuicConnectionProtocol:
        """aioquic's hook, called for every new QUIC connection."""
        if len(self.connections) >= self.max_connections:
            self.on_message(f"refused a connection: {self.max_connections} are open already")
            return _RefusingProtocol(quic, stream_handler, limit=self.max_connections)
        return H3ServerProtocol(quic, stream_handler, server=self)

    def connection_began(self, protocol: H3ServerProtocol) -> None:
        self.connections.add(protocol)
        self.on_message(f"connection from {protocol.describe_peer()}")

    def connection_ended(self, protocol: H3ServerProtocol, trace: Path | None) -> None:
        self.connections.discard(protocol)
        line = f"connection from {protocol.describe_peer()} ended"
        if protocol.termination is not None:
            line += f" ({describe_close(protocol.termination)})"
        if trace is not None:
            self.traces.append(trace)
            line += f"; trace {trace}"
        self.on_message(line)

    async def close(self, timeout: float = 2.0) -> None:
        """Stop: close every connection gracefully, finish every trace, release the port."""
        connections = list(self.connections)
        for protocol in connections:
            protocol.shut_down()
        waiting = [asyncio.ensure_future(protocol.wait_closed()) for protocol in connections]
        if waiting:
            _, pending = await asyncio.wait(waiting, timeout=timeout)
            for task in pending:
                task.cancel()
        for protocol in connections:
            protocol.force_end()
        if self.quic_server is not None:
            self.quic_server.close()


async def serve(
    host: str,
    port: int,
    *,
    configuration: QuicConfiguration,
    application_factory: Callable[[], ServerApplication],
    settings: Settings = DEFAULT_SETTINGS,
    record_dir: Path | None = None,
    max_connections: int = DEFAULT_MAX_CONNECTIONS,
    on_message: Callable[[str], None] = lambda line: None,
    recording_factory: RecordingFactory | None = None,
) -> H3Server:
    """Listen for HTTP/3 on UDP ``host``:``port`` (port 0: any free port, see `address`)."""
    if configuration.alpn_protocols is None:
        configuration.alpn_protocols = [H3_ALPN]
    if record_dir is not None:
        record_dir.mkdir(parents=True, exist_ok=True)
    server = H3Server(
        configuration=configuration,
        application_factory=application_factory,
        settings=settings,
        record_dir=record_dir,
        max_connections=max_connections,
        on_message=on_message,
        recording_factory=recording_factory,
    )
    server.quic_server = await quic_serve(
        host, port, configuration=configuration, create_protocol=server.create_protocol
    )
    return server


# -- the client ------------------------------------------------------------------------------


class FetchError(Exception):
    """A request could not be made or answered; the message says why, in one line."""


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
class Target:
    """A URL split into what an HTTP/3 request needs (RFC 9114 §3.1, §4.3.1)."""

    url: str
    host: str
    port: int
    authority: str
    path: str

    @property
    def origin(self) -> tuple[str, int]:
        return self.host, self.port


def parse_url(url: str) -> Target:
    """Check an https URL and split it; raises FetchError saying what is wrong."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:
        raise FetchError(f"bad URL {url!r}: {error}") from None
    if parts.scheme != "https":
        raise FetchError(
            f"bad URL {url!r}: HTTP/3 needs an https URL (RFC 9114 §3.1), not {parts.scheme!r}"
            if parts.scheme
            else f"bad URL {url!r}: it needs the https:// scheme"
        )
    host = parts.hostname
    if not host:
        raise FetchError(f"bad URL {url!r}: no host")
    if parts.username is not None or parts.password is not None:
        raise FetchError(f"bad URL {url!r}: user information is not allowed (RFC 9110 §4.2.4)")
    port = 443 if port is None else port
    if port == 0:
        raise FetchError(f"bad URL {url!r}: port 0")
    shown_host = f"[{host}]" if ":" in host else host
    authority = shown_host if port == 443 else f"{shown_host}:{port}"
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    return Target(url=url, host=host, port=port, authority=authority, path=path)


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
        self._pending: dict[int, _Pending] = {}

    @property
    def h3(self) -> H3Connection:
        return self.bridge.h3

    # -- requests ------------------------------------------------------------------------

    def request(self, target: Target, method: str, data: bytes | None) -> asyncio.Future[Response]:
        """Send one request on a new request stream (RFC 9114 §4.1); its response comes later."""
        headers: list[Header] = [
            (b":method", method.encode()),
            (b":scheme", b"https"),
            (b":authority", target.authority.encode()),
            (b":path", target.path.encode()),
            (b"user-agent", USER_AGENT),
            (b"accept", b"*/*"),
        ]
        if data is not None:
            headers.append((b"content-length", str(len(data)).encode()))
        future: asyncio.Future[Response] = self._loop.create_future()
        # Credit the peer granted since the last event (RFC 9204 §2.1.3) counts too.
        self.bridge.report_flow_control_credit()
        try:
            stream_id = self.h3.send_request(headers, end_stream=data is None)
            if data is not None:
                self.h3.send_data(stream_id, data, end_stream=True)
        except (H3UsageError, ValueError) as error:
            future.set_exception(FetchError(f"{target.url}: cannot send the request: {error}"))
            return future
        self._pending[stream_id] = _Pending(target, future)
        self.bridge.transmit_actions()
        self.transmit()
        return future

    def close_connection(self) -> None:
        """Close with H3_NO_ERROR (RFC 9114 §5.3): every response is in."""
        if not self.h3.closed:
            self.h3.close(ErrorCode.H3_NO_ERROR, "")
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
                FetchError(
                    f"{pending.target.url}: the stream was reset with"
                    f" {code_name(event.error_code)}"
                    + (
                        " (the request was not processed; it may be retried)"
                        if event.retry_safe
                        else ""
                    )
                )
            )
            return
        if ended:
            del self._pending[stream_id]  # type: ignore[arg-type]
            if pending.status is None:
                pending.future.set_exception(
                    FetchError(f"{pending.target.url}: the stream ended without a response")
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


def _status_of(headers: Sequence[Header]) -> int:
    for name, value in headers:
        if name == b":status":
            return int(value)
    return 0


def describe_close(event: ConnectionTerminated) -> str:
    """How a connection was closed: an HTTP/3 code, or QUIC's own (RFC 9000 §19.19)."""
    if event.frame_type is None:
        reason = f": {event.reason_phrase}" if event.reason_phrase else ""
        return f"{code_name(event.error_code)}{reason}"
    return close_reason(event)


def connection_failure(event: ConnectionTerminated) -> FetchError:
    """A one-line explanation of why QUIC closed the connection."""
    code = event.error_code
    if event.frame_type is not None and CRYPTO_ERROR_FIRST <= code <= CRYPTO_ERROR_LAST:
        alert = code - CRYPTO_ERROR_FIRST
        return FetchError(
            f"TLS handshake failed (alert {alert}, RFC 9001 §4.8): {event.reason_phrase}"
        )
    if event.frame_type is None:
        return FetchError(f"the server closed the connection with {describe_close(event)}")
    return FetchError(f"the connection ended: {close_reason(event)}")


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
) -> list[Response]:
    """Request every URL; one connection per origin (URLs of one origin share it).

    ``insecure`` skips the certificate check; ``cafile`` trusts the authorities (or the
    self-signed certificate) in that file instead of the system's. ``record`` writes the
    connection's trace there (one origin only), or makes its recording (a
    `RecordingFactory`, as h3learn.capture does). Each origin gets ``timeout`` seconds for
    connecting and all its responses. Raises FetchError with a one-line reason.
    """
    targets = [parse_url(url) for url in urls]
    origins: dict[tuple[str, int], list[Target]] = {}
    for target in targets:
        origins.setdefault(target.origin, []).append(target)
    if record is not None and len(origins) > 1:
        raise FetchError("--record writes one connection's trace: give URLs of one origin")
    responses: dict[str, Response] = {}
    for (host, port), group in origins.items():
        # QUIC's idle timer a second later than the overall bound, so that a silent server is
        # reported as "no answer within N s" rather than by whichever timer fires first.
        configuration = QuicConfiguration(
            is_client=True, alpn_protocols=[H3_ALPN], server_name=host, idle_timeout=timeout + 1
        )
        if insecure:
            configuration.verify_mode = ssl.CERT_NONE
        elif cafile is not None:
            try:
                configuration.load_verify_locations(cafile)
            except (OSError, ValueError) as error:
                raise FetchError(f"cannot read the CA file {cafile}: {error}") from None
        for response in await _fetch_origin(
            host, port, group, method, data, configuration, record, timeout, settings
        ):
            responses[response.url] = response
    return [responses[target.url] for target in targets]


async def _fetch_origin(
    host: str,
    port: int,
    targets: list[Target],
    method: str,
    data: bytes | None,
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
                family, sockaddr, targets, method, data, configuration, record, timeout, settings
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
    method: str,
    data: bytes | None,
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
    try:
        protocol.connect(sockaddr)
        async with asyncio.timeout(timeout):
            await protocol.handshake
            futures = [protocol.request(target, method, data) for target in targets]
            return list(await asyncio.gather(*futures))
    except TimeoutError:
        raise FetchError(
            f"no answer from {peer} within {timeout:g} s (is an HTTP/3 server listening there?)"
        ) from None
    finally:
        protocol.close_connection()
        try:
            async with asyncio.timeout(1.0):
                await protocol.wait_closed()
        except TimeoutError:
            pass
        transport.close()
        recording.finish()
