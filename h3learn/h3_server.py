"""``h3learn h3-server``: a small HTTP/3 server on UDP that records every connection.

    h3learn h3-server --host 127.0.0.1 --port 4433 [--cert F --key F] [--record-dir DIR]
                      [--data-dir DIR] [--keylog FILE]
                      [--qpack-max-table-capacity N] [--qpack-blocked-streams N]

It is the live end of h3learn: point Chromium, ngtcp2's client or ``h3learn get`` at it and
every frame, SETTINGS value, QPACK instruction and dynamic-table change of each connection
lands in its own trace file in DIR (written as it happens, finished when the connection
ends; docs/events.md, "Trace files").

What it answers (RFC 9114 §4.1: one request and one response per request stream):

- ``GET`` (and ``HEAD``) of any path: a small HTML page listing the request's fields, so a
  learner sees what the client sent (RFC 9114 §4.3.1 pseudo-header fields first);
- ``GET /favicon.ico``: a tiny icon (browsers ask for it by themselves);
- ``POST``: how many bytes of content arrived (RFC 9114 §4.1: the DATA frames);
- any other method: 405 with an ``allow`` field (RFC 9110 §15.5.6).

The answering is `PageServer`, a sans-IO class that reads the HTTP/3 connection's events
and calls its ``send_*`` methods; `h3learn.transport.udp_server` carries the bytes. Without
``--cert`` the server makes a self-signed certificate once (h3learn.transport.certificates)
and prints the Chromium command line with its SPKI pin. SIGINT or SIGTERM stops it: every
connection is closed with H3_NO_ERROR (RFC 9114 §5.2, §5.3) and its trace finished.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import html
import os
import shlex
import signal
import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from aioquic.quic.configuration import QuicConfiguration

from h3learn.cli_arguments import (
    make_folder,
    positive,
    positive_seconds,
    setting_value,
    udp_port,
)
from h3learn.command_error import CommandError
from h3learn.h3.connection import H3Connection, H3UsageError
from h3learn.h3.http_events import (
    DataReceived,
    H3Event,
    HeadersReceived,
    StreamEnded,
    StreamReset,
)
from h3learn.h3.settings import Settings
from h3learn.transport.certificates import check_key_pair, ensure_certificate, spki_pin
from h3learn.transport.udp_server import DEFAULT_MAX_CONNECTIONS, H3Server, serve
from h3learn.transport.udp_shared import DEFAULT_SETTINGS, quiet_aioquic_log

Header = tuple[bytes, bytes]

SERVER_NAME = b"h3learn"
#: RFC 9110 §9.1: the methods this server implements.
ALLOWED_METHODS = (b"GET", b"HEAD", b"POST")


# -- the application: requests in, responses out (sans-IO) -------------------------------


@dataclass
class _Request:
    """A request being received on one request stream (RFC 9114 §4.1)."""

    headers: list[Header]
    #: Bytes of content received so far (the DATA frames' payloads, RFC 9114 §7.2.1).
    body_length: int = 0

    def field_value(self, name: bytes) -> bytes:
        """The value of the first field line named ``name`` (b"" if there is none)."""
        for field_name, value in self.headers:
            if field_name == name:
                return value
        return b""


@dataclass(frozen=True, slots=True)
class Response:
    """What the server answers: a status, its fields and the content."""

    status: int
    content_type: bytes
    body: bytes
    extra_headers: tuple[Header, ...] = ()

    def header_section(self) -> list[Header]:
        """The response's field section: :status first (RFC 9114 §4.3.2)."""
        return [
            (b":status", str(self.status).encode()),
            (b"server", SERVER_NAME),
            (b"content-type", self.content_type),
            (b"content-length", str(len(self.body)).encode()),
            *self.extra_headers,
        ]


#: Limits of one connection unless told otherwise (`h3learn serve` makes them options).
DEFAULT_MAX_REQUESTS = 1000
DEFAULT_MAX_BODY_BYTES = 1024 * 1024


class PageServer:
    """Answers the requests of one HTTP/3 connection; knows nothing of sockets.

    The transport calls `event_received` with every event the connection returns. A
    request is answered once its stream has ended (the whole message is in, RFC 9114 §4.1),
    with a HEADERS frame and, unless the method is HEAD, one DATA frame.

    Two limits, each answered the way HTTP/3 provides for it:

    - ``max_requests`` per connection: with the last one accepted the server sends GOAWAY
      (RFC 9114 §5.2), so the client opens a new connection for more; a request sent
      anyway is rejected unprocessed with H3_REQUEST_REJECTED (done by `H3Connection`);
    - ``max_body_bytes`` of request content: a larger request (by its content-length, or
      as its DATA arrives) is answered at once with 413 Content Too Large (RFC 9110
      §15.5.14), before the rest of its content (RFC 9114 §4.1 allows a response before
      the request is complete); what still arrives on that stream is ignored.
    """

    def __init__(
        self,
        log: Callable[[str], None] = lambda line: None,
        *,
        max_requests: int = DEFAULT_MAX_REQUESTS,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    ) -> None:
        self._requests: dict[int, _Request] = {}
        #: Called with one line per response sent ("GET / → 200, stream 0").
        self.log = log
        self.max_requests = max_requests
        self.max_body_bytes = max_body_bytes
        #: How many responses were sent, and how many requests were accepted.
        self.answered = 0
        self.accepted = 0

    def event_received(self, h3: H3Connection, event: H3Event) -> None:
        if isinstance(event, HeadersReceived):
            if event.push_id is not None or event.interim:
                return
            if event.trailers:
                request = self._requests.get(event.stream_id)
            else:
                request = self._requests[event.stream_id] = _Request(list(event.headers))
                self._accepted(h3)
                if _declared_length(request) > self.max_body_bytes:
                    self._answer(h3, event.stream_id, self._too_large(request))
                    return
            if request is not None and event.stream_ended:
                self._answer(h3, event.stream_id)
        elif isinstance(event, DataReceived):
            request = self._requests.get(event.stream_id)
            if request is None:
                return
            request.body_length += len(event.data)
            if request.body_length > self.max_body_bytes:
                self._answer(h3, event.stream_id, self._too_large(request))
            elif event.stream_ended:
                self._answer(h3, event.stream_id)
        elif isinstance(event, StreamEnded):
            if event.stream_id in self._requests:
                self._answer(h3, event.stream_id)
        elif isinstance(event, StreamReset):
            self._requests.pop(event.stream_id, None)

    def _accepted(self, h3: H3Connection) -> None:
        """Count a new request; the last one allowed is followed by GOAWAY (RFC 9114 §5.2)."""
        self.accepted += 1
        if self.accepted == self.max_requests:
            with contextlib.suppress(H3UsageError):
                h3.send_goaway()
            self.log(f"GOAWAY after {self.accepted} requests (the limit of this connection)")

    def _too_large(self, request: _Request) -> Response:
        size = max(request.body_length, _declared_length(request))
        return Response(
            413,
            b"text/plain; charset=utf-8",
            f"the request content ({size} bytes so far) is larger than this server's limit of"
            f" {self.max_body_bytes} bytes (RFC 9110 §15.5.14)\n".encode(),
        )

    def _answer(self, h3: H3Connection, stream_id: int, response: Response | None = None) -> None:
        request = self._requests.pop(stream_id)
        if response is None:
            response = respond(request)
        head_only = request.field_value(b":method") == b"HEAD"
        try:
            h3.send_headers(stream_id, response.header_section(), end_stream=head_only)
            if not head_only:
                h3.send_data(stream_id, response.body, end_stream=True)
        except H3UsageError:
            return  # the stream was reset or the connection closed meanwhile
        self.answered += 1
        self.log(
            f"{_text(request.field_value(b':method'))} {_text(request.field_value(b':path'))}"
            f" → {response.status} ({len(response.body)} bytes, stream {stream_id})"
        )


def _declared_length(request: _Request) -> int:
    """The content-length a request announced (RFC 9110 §8.6), or 0."""
    text = request.field_value(b"content-length")
    return int(text) if text.isdigit() else 0


def respond(request: _Request) -> Response:
    """The response to a complete request: the whole of this server's behaviour."""
    method = request.field_value(b":method")
    path = request.field_value(b":path")
    if method not in ALLOWED_METHODS:
        return Response(
            405,
            b"text/plain; charset=utf-8",
            f"method {method.decode('latin-1')} is not supported here\n".encode(),
            ((b"allow", b", ".join(ALLOWED_METHODS)),),
        )
    if method == b"POST":
        return Response(
            200,
            b"text/plain; charset=utf-8",
            f"received {request.body_length} bytes\n".encode(),
        )
    if path.split(b"?")[0] == b"/favicon.ico":
        return Response(200, b"image/vnd.microsoft.icon", FAVICON)
    return Response(200, b"text/html; charset=utf-8", page(request))


def page(request: _Request) -> bytes:
    """The HTML page: the request's field lines, escaped (they are untrusted input)."""
    rows = "\n".join(
        f"<tr><th>{_text(name)}</th><td>{_text(value)}</td></tr>" for name, value in request.headers
    )
    return (
        "<!doctype html>\n"
        '<html lang="en"><head><meta charset="utf-8"><title>h3learn</title></head>\n'
        "<body><h1>Hello from h3learn over HTTP/3</h1>\n"
        f"<p>Your {_text(request.field_value(b':method'))} request for"
        f" <code>{_text(request.field_value(b':path'))}</code> arrived in these field lines"
        " (RFC 9114 §4.3.1: pseudo-header fields first):</p>\n"
        f'<table id="request-fields">\n{rows}\n</table>\n'
        "</body></html>\n"
    ).encode()


def _text(value: bytes) -> str:
    return html.escape(value.decode("utf-8", errors="replace"))


def _favicon() -> bytes:
    """A 16x16 icon: an ICO file (one directory entry) holding a PNG image."""
    width = height = 16
    teal = b"\x00\x80\x80\xff"
    rows = b"".join(b"\x00" + teal * width for _ in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    png = (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(rows, 9))
        + chunk(b"IEND", b"")
    )
    icon_dir = struct.pack("<HHH", 0, 1, 1)  # reserved, type 1 = icon, one image
    entry = struct.pack("<BBBBHHII", width, height, 0, 0, 1, 32, len(png), 6 + 16)
    return icon_dir + entry + png


FAVICON = _favicon()


# -- the command line ----------------------------------------------------------------------


def add_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "h3-server",
        help="run an HTTP/3 server on UDP that records one trace per connection",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    parser.add_argument("--port", type=udp_port, default=4433, help="UDP port (4433; 0: any free)")
    parser.add_argument("--cert", type=Path, help="certificate chain (PEM); needs --key")
    parser.add_argument("--key", type=Path, help="private key (PEM) of --cert")
    parser.add_argument(
        "--data-dir",
        type=Path,
        help="where the self-signed certificate is kept without --cert"
        " (default $XDG_DATA_HOME/h3learn or ~/.local/share/h3learn)",
    )
    parser.add_argument("--record-dir", type=Path, help="write one trace per connection here")
    parser.add_argument(
        "--keylog", type=Path, help="append TLS secrets here (SSLKEYLOGFILE format, for tshark)"
    )
    parser.add_argument(
        "--qpack-max-table-capacity",
        type=setting_value,
        default=DEFAULT_SETTINGS.qpack_max_table_capacity,
        help="SETTINGS_QPACK_MAX_TABLE_CAPACITY the server announces (RFC 9204 §5; default"
        f" {DEFAULT_SETTINGS.qpack_max_table_capacity})",
    )
    parser.add_argument(
        "--qpack-blocked-streams",
        type=setting_value,
        default=DEFAULT_SETTINGS.qpack_blocked_streams,
        help="SETTINGS_QPACK_BLOCKED_STREAMS the server announces (RFC 9204 §5; default"
        f" {DEFAULT_SETTINGS.qpack_blocked_streams})",
    )
    parser.add_argument(
        "--max-connections",
        type=positive,
        default=DEFAULT_MAX_CONNECTIONS,
        help=f"connections open at once; more are refused (default {DEFAULT_MAX_CONNECTIONS})",
    )
    parser.add_argument(
        "--idle-timeout",
        type=positive_seconds,
        default=30.0,
        help="seconds of silence before a connection is dropped (RFC 9000 §10.1; default 30)",
    )
    parser.set_defaults(run=run)


def default_data_dir() -> Path:
    """$XDG_DATA_HOME/h3learn, or ~/.local/share/h3learn."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "h3learn"


def chromium_command(host: str, port: int, pin: str) -> str:
    """The command line that makes Chromium load this server over QUIC (docs: peers)."""
    target = host if host not in ("0.0.0.0", "::", "") else "127.0.0.1"
    if ":" in target:
        target = f"[{target}]"
    origin = f"localhost:{port}"
    arguments = [
        "/usr/lib/chromium/chromium",
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--enable-quic",
        f"--origin-to-force-quic-on={origin}",
        f"--ignore-certificate-errors-spki-list={pin}",
        f"--host-resolver-rules=MAP localhost {target}",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
    ]
    quoted = " ".join(shlex.quote(argument) for argument in arguments)
    return f'{quoted} --user-data-dir="$(mktemp -d)" --dump-dom https://{origin}/'


def server_configuration(args: argparse.Namespace) -> tuple[QuicConfiguration, Path]:
    """TLS and QUIC settings from the arguments; returns them and the certificate's path."""
    if (args.cert is None) != (args.key is None):
        raise CommandError("--cert and --key go together")
    if args.cert is not None:
        cert_path, key_path = args.cert, args.key
    else:
        directory = args.data_dir if args.data_dir is not None else default_data_dir()
        make_folder("--data-dir", directory)
        try:
            cert_path, key_path = ensure_certificate(directory)
        except OSError as error:
            raise CommandError(
                f"cannot keep a certificate in {directory}: {error.strerror or error}"
            ) from None
    configuration = QuicConfiguration(
        is_client=False, alpn_protocols=["h3"], idle_timeout=args.idle_timeout
    )
    try:
        configuration.load_cert_chain(cert_path, key_path)
    except (OSError, ValueError) as error:
        raise CommandError(f"cannot load {cert_path} / {key_path}: {error}") from None
    mismatch = check_key_pair(cert_path, key_path)
    if mismatch is not None:
        raise CommandError(mismatch)
    return configuration, cert_path


def run(args: argparse.Namespace) -> int:
    quiet_aioquic_log()
    configuration, cert_path = server_configuration(args)
    if args.record_dir is not None:
        make_folder("--record-dir", args.record_dir)
    settings = Settings(
        qpack_max_table_capacity=args.qpack_max_table_capacity,
        qpack_blocked_streams=args.qpack_blocked_streams,
    )
    keylog = None
    if args.keylog is not None:
        try:
            keylog = open(args.keylog, "a", encoding="ascii", buffering=1)  # noqa: SIM115
        except OSError as error:
            raise CommandError(f"cannot write {args.keylog}: {error.strerror}") from None
        configuration.secrets_log_file = keylog
    try:
        return asyncio.run(_serve_until_signal(args, configuration, settings, cert_path))
    finally:
        if keylog is not None:
            keylog.close()


def _say(line: str) -> None:
    print(line, flush=True)


async def _serve_until_signal(
    args: argparse.Namespace, configuration: QuicConfiguration, settings: Settings, cert: Path
) -> int:
    try:
        server: H3Server = await serve(
            args.host,
            args.port,
            configuration=configuration,
            application_factory=lambda: PageServer(log=lambda line: _say(f"  {line}")),
            settings=settings,
            record_dir=args.record_dir,
            max_connections=args.max_connections,
            on_message=_say,
        )
    except OSError as error:
        raise CommandError(
            f"cannot listen on UDP {args.host} port {args.port}: {error.strerror or error}"
        ) from None
    host, port = server.address
    shown = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    _say(f"h3learn h3-server: HTTP/3 on UDP {shown} (ALPN h3)")
    _say(f"  SETTINGS: {settings.describe()}")
    _say(f"  certificate: {cert}")
    if args.record_dir is not None:
        _say(f"  traces: {args.record_dir}/ (one per connection)")
    if args.cert is None:
        _say("  Chromium (trusts this certificate by its SPKI pin, RFC 7469 §2.4):")
        _say(f"    {chromium_command(host, port, spki_pin(cert))}")
    _say("  stop with Ctrl-C (SIGINT) or SIGTERM")

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signal_number in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signal_number, stop.set)
    try:
        await stop.wait()
        _say("h3learn h3-server: stopping")
    finally:
        # The handlers stay while closing, so a second signal cannot cut the traces short;
        # the close itself is bounded (H3Server.close).
        await server.close()
        for signal_number in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signal_number)
    _say(f"h3learn h3-server: stopped; {len(server.traces)} trace(s) written")
    return 0
