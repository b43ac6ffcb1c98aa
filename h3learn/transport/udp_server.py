"""RFC 9114 §3.3, RFC 9000 §5, §10: an HTTP/3 server on a real UDP socket.

This is plumbing. aioquic's asyncio layer owns the socket and QUIC (TLS 1.3, loss
recovery, timers); `H3OverQuic` (h3learn/transport/quic.py) carries each QUIC connection's
events into h3learn's sans-IO `H3Connection` and its actions back out. What to answer is
decided by an *application* object, one per connection, that the server only hands events
to (`ServerApplication`; h3learn/page_server.py has the one `h3learn h3-server` and
`h3learn serve` run). The client is udp_client.py; what both share, each connection's
recording among it, is udp_shared.py.

Server (`serve`):

- one `H3Connection` per QUIC connection (RFC 9114 §3.3: a client opens a connection per
  origin; the server keeps each one's state apart), each with its own `EventLog` whose
  clock is wall-clock milliseconds since that connection's first packet arrived;
- with a record directory, each connection's events go into their own trace, journalled
  as they happen (`LiveTrace`) and finished when the connection ends (docs/events.md,
  "Trace files"), named ``<UTC time>-<peer address>-<connection ID>.json``;
- limits: at most ``max_connections`` at once (a further client is refused with the QUIC
  transport error CONNECTION_REFUSED, RFC 9000 §20.1, counted in `H3Server.refused` and
  said in one line to ``on_message`` and ``on_refused``) and the idle timeout of the
  `QuicConfiguration` (RFC 9000 §10.1);
- a peer that breaks a rule only loses its own connection: `H3Connection` turns protocol
  errors into a CONNECTION_CLOSE (RFC 9114 §8), and anything unexpected is caught here
  and closes that one connection with H3_INTERNAL_ERROR;
- `H3Server.close` ends every connection (GOAWAY, then CONNECTION_CLOSE with H3_NO_ERROR:
  RFC 9114 §5.2, §5.3) and finishes every trace.

It works over IPv4 and IPv6; nothing here picks an address other than the one given.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import sys
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol, cast

from aioquic.asyncio.protocol import QuicConnectionProtocol, QuicStreamHandler
from aioquic.asyncio.server import QuicServer
from aioquic.asyncio.server import serve as quic_serve
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.connection import NetworkAddress, QuicConnection
from aioquic.quic.events import (
    ConnectionTerminated,
    ProtocolNegotiated,
    QuicEvent,
    StopSendingReceived,
    StreamDataReceived,
    StreamReset,
)
from aioquic.quic.packet import QuicErrorCode, QuicFrameType

from h3learn.events import Event
from h3learn.h3.connection import H3Connection, H3UsageError
from h3learn.h3.errors import ErrorCode
from h3learn.h3.http_events import H3Event
from h3learn.h3.settings import Settings
from h3learn.qpack.errors import cite
from h3learn.transport.quic import H3_ALPN, H3OverQuic
from h3learn.transport.udp_shared import (
    DEFAULT_SETTINGS,
    ConnectionRecording,
    RecordingFactory,
    describe_close,
    format_address,
)

DEFAULT_MAX_CONNECTIONS = 100


class ServerApplication(Protocol):
    """What a server connection hands its events to; it answers through the H3Connection."""

    def event_received(self, h3: H3Connection, event: H3Event) -> None: ...


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
        self.recording.log.listeners.append(self._report_stream_error)
        server.connection_began(self)

    def _report_stream_error(self, event: Event) -> None:
        """One console line per stream reset (RFC 9114 §8, §4.1.1), with its code and rule.

        Connection errors end the connection and are reported with its end; a stream error
        leaves the connection open, so without this line it would leave no trace on the
        console. The HTTP/3 connection records each one as ``http3:stream_error``.
        """
        if event.category != "http3" or event.name != "stream_error":
            return
        data = event.data
        code = data.get("code_name", data.get("code"))
        rfc = data.get("rfc")
        rule = f" ({cite(rfc)})" if isinstance(rfc, str) else ""
        who = "the server resets" if data.get("direction") == "sent" else "the client reset"
        self.server.on_message(
            f"{who} stream {event.stream_id} of {self.describe_peer()}:"
            f" {code}{rule}: {data.get('rule')}"
        )

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
        if self._after_close(event):
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

    def _after_close(self, event: QuicEvent) -> bool:
        """Stream data, RESET_STREAM or STOP_SENDING that QUIC delivers after the server closed.

        Once the server has decided to close (a protocol error, a full capture, shutting
        down), HTTP/3 reads nothing more (RFC 9114 §5.2, §8), but aioquic still delivers
        the frames of the packets it had already read. They are not handed on, so the
        capture does not show the peer's traffic after the close: a capture closed at
        ``max_events`` ends with the close (and what the server had queued before it).
        """
        bridge = self.bridge
        return (
            bridge is not None
            and bridge.h3.closed
            and isinstance(event, (StreamDataReceived, StreamReset, StopSendingReceived))
        )

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
    """A connection over the limit: closed at once with CONNECTION_REFUSED (RFC 9000 §20.1).

    The server hears of it once (`H3Server.connection_refused`), with the peer's address,
    however many of its Initial packets arrive while the close goes out.
    """

    def __init__(
        self,
        quic: QuicConnection,
        stream_handler: QuicStreamHandler | None = None,
        *,
        server: H3Server,
    ) -> None:
        super().__init__(quic, stream_handler)
        self.server = server
        self.limit = server.max_connections
        self.reported = False

    def datagram_received(self, data: bytes | str, addr: NetworkAddress) -> None:
        self._quic.receive_datagram(cast(bytes, data), addr, now=self._loop.time())
        # A transport close (frame_type set) keeps its code even in Initial packets, where
        # an application close would become APPLICATION_ERROR (RFC 9000 §10.2.3).
        self._quic.close(
            error_code=QuicErrorCode.CONNECTION_REFUSED,
            frame_type=QuicFrameType.PADDING,
            reason_phrase=refusal_reason(self.limit),
        )
        if not self.reported:
            self.reported = True
            self.server.connection_refused(addr)
        self._process_events()
        self.transmit()


def refusal_reason(limit: int) -> str:
    """The reason phrase of a CONNECTION_REFUSED at ``max_connections``."""
    return f"the server is at its limit of {limit} connections"


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
    #: Called with one line for each connection that begins, ends or is refused.
    on_message: Callable[[str], None] = lambda line: None
    #: Called with the same line for each connection refused at ``max_connections``.
    on_refused: Callable[[str], None] = lambda line: None
    #: How many connections were refused at ``max_connections`` since the server started.
    refused: int = 0
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
            return _RefusingProtocol(quic, stream_handler, server=self)
        return H3ServerProtocol(quic, stream_handler, server=self)

    def connection_refused(self, peer: NetworkAddress) -> None:
        """A connection was refused with CONNECTION_REFUSED: count it, say so in one line."""
        self.refused += 1
        line = (
            f"refused the connection from {format_address(peer)} (CONNECTION_REFUSED,"
            f" RFC 9000 §20.1): {refusal_reason(self.max_connections)}"
        )
        self.on_message(line)
        self.on_refused(line)

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
    on_refused: Callable[[str], None] = lambda line: None,
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
        on_refused=on_refused,
        recording_factory=recording_factory,
    )
    server.quic_server = await quic_serve(
        host, port, configuration=configuration, create_protocol=server.create_protocol
    )
    return server
