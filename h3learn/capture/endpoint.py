"""The recording HTTP/3 endpoint of `h3learn serve`: `h3learn h3-server`'s server in a thread.

The web UI (Flask-SocketIO in threading mode) owns the main thread; the HTTP/3 server is
asyncio (aioquic over UDP, h3learn/transport/udp_server.py), so it gets a thread of its own with
its own event loop. `LiveEndpoint.start` returns once the UDP port is bound (or raises why
it could not be); `stop` closes every connection gracefully (GOAWAY, then CONNECTION_CLOSE
with H3_NO_ERROR: RFC 9114 §5.2, §5.3), which finishes every capture, and joins the thread.

Each connection is answered by `PageServer` (h3learn/page_server.py) and recorded as a capture
(`CaptureHub.recording_factory`). The certificate is made once and kept in the data
directory (h3learn/transport/certificates.py), so the Chromium command line with its SPKI
pin that the Live page shows keeps working across restarts.

Limits, all `EndpointOptions` with defaults (docs/web-api.md, "Live capture"):

    max_connections         connections at once; more are refused (CONNECTION_REFUSED,
                            RFC 9000 §20.1), each counted in the hub (`CaptureHub.refused`,
                            which the Live page shows) and said in one line to ``say``
    idle_timeout            seconds of silence before QUIC drops a connection (RFC 9000 §10.1)
    max_requests            requests per connection; the last is followed by GOAWAY
                            (RFC 9114 §5.2), later ones are rejected (H3_REQUEST_REJECTED)
    max_body_bytes          request content; larger is answered with 413 (RFC 9110 §15.5.14)
    max_field_section_size  SETTINGS_MAX_FIELD_SECTION_SIZE announced; a larger field section
                            is refused with H3_EXCESSIVE_LOAD (RFC 9114 §4.2.2)
    max_events (the hub's)  events per capture; then the connection is closed with
                            H3_EXCESSIVE_LOAD (RFC 9114 §8.1), and nothing the peer sends
                            after the close is recorded (`H3ServerProtocol`)

QUIC's own limits stay aioquic's: at most 128 streams of each kind open at once (raised as
they close, RFC 9000 §4.6) and 1 MiB of flow-control credit per stream (RFC 9000 §4.1).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from aioquic.quic.configuration import QuicConfiguration

from h3learn.capture.hub import CaptureHub
from h3learn.h3.settings import Settings
from h3learn.page_server import DEFAULT_MAX_BODY_BYTES, PageServer
from h3learn.transport.certificates import chromium_command, ensure_certificate, spki_pin
from h3learn.transport.udp_server import DEFAULT_MAX_CONNECTIONS, H3Server, serve
from h3learn.transport.udp_shared import DEFAULT_SETTINGS, quiet_aioquic_log

#: A connection sends GOAWAY after this many requests (the capture stays steppable).
DEFAULT_MAX_REQUESTS = 200
DEFAULT_MAX_FIELD_SECTION_SIZE = 64 * 1024
DEFAULT_IDLE_TIMEOUT = 30.0


class EndpointError(Exception):
    """The endpoint could not start; the message says why in one line."""


@dataclass(frozen=True, slots=True)
class EndpointOptions:
    """Where the endpoint listens and its limits (see the module docstring)."""

    host: str = "127.0.0.1"
    port: int = 4433
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT
    max_requests: int = DEFAULT_MAX_REQUESTS
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    max_field_section_size: int = DEFAULT_MAX_FIELD_SECTION_SIZE
    qpack_max_table_capacity: int = DEFAULT_SETTINGS.qpack_max_table_capacity
    qpack_blocked_streams: int = DEFAULT_SETTINGS.qpack_blocked_streams

    @property
    def settings(self) -> Settings:
        return Settings(
            qpack_max_table_capacity=self.qpack_max_table_capacity,
            qpack_blocked_streams=self.qpack_blocked_streams,
            max_field_section_size=self.max_field_section_size,
        )


class LiveEndpoint:
    """The HTTP/3 server in its own thread; `start`, then `stop` (both bounded)."""

    def __init__(
        self,
        hub: CaptureHub,
        options: EndpointOptions,
        data_dir: Path,
        *,
        say: Callable[[str], None] = lambda line: None,
    ) -> None:
        self.hub = hub
        self.options = options
        self.data_dir = data_dir
        #: Where the endpoint's console lines go (`h3learn serve` prints them): one line
        #: per connection refused at ``max_connections``; every other connection is a
        #: capture, listed on the Live page.
        self.say = say
        self.cert_path: Path | None = None
        self.key_path: Path | None = None
        self.address: tuple[str, int] | None = None
        self.server: H3Server | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._failure: BaseException | None = None

    # -- the web's side ------------------------------------------------------------------

    def start(self, timeout: float = 10.0) -> None:
        try:
            self.cert_path, self.key_path = ensure_certificate(self.data_dir)
        except OSError as error:
            raise EndpointError(
                f"cannot keep a certificate in {self.data_dir}: {error.strerror or error}"
            ) from None
        quiet_aioquic_log()
        self._thread = threading.Thread(target=self._run, name="h3learn-h3-endpoint", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout):
            raise EndpointError(f"the HTTP/3 endpoint did not start within {timeout:g} s")
        if self._failure is not None:
            self._thread.join(timeout)
            raise EndpointError(
                f"cannot listen on UDP {self.options.host} port {self.options.port}:"
                f" {getattr(self._failure, 'strerror', None) or self._failure}"
            )

    def stop(self, timeout: float = 10.0) -> None:
        """Close every connection (their captures are finished), then end the thread."""
        loop, stop, thread = self._loop, self._stop, self._thread
        if loop is not None and stop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop has just closed
                loop.call_soon_threadsafe(stop.set)
        if thread is not None:
            thread.join(timeout)

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive() and self.address is not None

    @property
    def pin(self) -> str:
        assert self.cert_path is not None, "start() first"
        return spki_pin(self.cert_path)

    def origin(self) -> str:
        """``https://localhost:4433``: the origin the certificate and pin are for."""
        assert self.address is not None, "start() first"
        return f"https://localhost:{self.address[1]}"

    def how_to_connect(self) -> dict[str, str]:
        """The command lines the Live page shows (docs/web-api.md)."""
        assert self.address is not None, "start() first"
        host, port = self.address
        target = "127.0.0.1" if host in ("0.0.0.0", "", "::") else host
        origin = self.origin()
        return {
            "origin": origin,
            "address": f"[{host}]:{port}" if ":" in host else f"{host}:{port}",
            "spki_pin": self.pin,
            "chromium": chromium_command(host, port, self.pin),
            "gtlsclient": (
                f"gtlsclient --no-quic-dump --exit-on-all-streams-close {target} {port}"
                f" {origin}/ {origin}/again"
            ),
            "niquests": (
                "import niquests\n"
                "session = niquests.Session(disable_http1=True, disable_http2=True)\n"
                f'print(session.get("{origin}/", verify=False).text)'
            ),
        }

    # -- the endpoint's thread -----------------------------------------------------------

    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as error:  # reported to start(), never lost silently
            self._failure = self._failure or error
        finally:
            self._ready.set()

    async def _main(self) -> None:
        options = self.options
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        configuration = QuicConfiguration(
            is_client=False, alpn_protocols=["h3"], idle_timeout=options.idle_timeout
        )
        assert self.cert_path is not None and self.key_path is not None
        configuration.load_cert_chain(self.cert_path, self.key_path)
        try:
            server = await serve(
                options.host,
                options.port,
                configuration=configuration,
                application_factory=lambda: PageServer(
                    max_requests=options.max_requests, max_body_bytes=options.max_body_bytes
                ),
                settings=options.settings,
                max_connections=options.max_connections,
                on_refused=self._refused,
                recording_factory=self.hub.recording_factory(),
            )
        except OSError as error:
            self._failure = error
            return
        self.server = server
        self.address = server.address
        _enlarge_receive_buffer(server)
        self._ready.set()
        try:
            await self._stop.wait()
        finally:
            await server.close()

    def _refused(self, line: str) -> None:
        """A connection over ``max_connections`` was refused (CONNECTION_REFUSED)."""
        self.hub.connection_refused()
        self.say(line)


#: Bytes the kernel may hold for the endpoint's UDP socket while Python is busy.
RECEIVE_BUFFER = 4 * 1024 * 1024


def _enlarge_receive_buffer(server: H3Server) -> None:
    """Ask for a larger UDP receive buffer than the kernel's default (some 200 KB).

    Every connection of the endpoint shares one socket, and the Python that reads it also
    records and journals every event; under a burst (fifty clients connecting at once) a
    small buffer overflows and datagrams are dropped. QUIC recovers lost data, but not a
    lost CONNECTION_CLOSE (RFC 9000 §10.2): that connection then ends only by its idle
    timeout. A larger buffer makes that rare. Best effort: the kernel may cap the size.
    """
    transport = server.quic_server._transport if server.quic_server is not None else None
    sock = transport.get_extra_info("socket") if transport is not None else None
    if sock is None:
        return
    for option in (getattr(socket, "SO_RCVBUFFORCE", None), socket.SO_RCVBUF):
        if option is None:
            continue
        try:
            sock.setsockopt(socket.SOL_SOCKET, option, RECEIVE_BUFFER)
            return
        except OSError:
            continue
