"""``h3learn serve``: the web UI that replays traces step by step, and the live HTTP/3 endpoint.

    h3learn serve [--host 127.0.0.1] [--port 5000] [--data-dir ~/.local/share/h3learn]
                  [--public-url URL] [--message-queue redis://HOST:PORT/DB]
                  [--lessons-dir DIR]
                  [--h3-host 127.0.0.1] [--h3-port 4433] [--no-h3]
                  [--max-connections N] [--idle-timeout S] [--max-requests N]
                  [--max-body-bytes N] [--max-field-section-size N] [--max-events N]

The lessons (h3learn's own, or a teacher's folder: --lessons-dir) are read at start and
each recorded when first opened; a broken lesson file stops the server with its file and
line. The built-in examples are recorded at start; traces uploaded through the page are saved
in DATA_DIR/traces and listed with them. The same process runs the recording HTTP/3
endpoint (UDP, 127.0.0.1:4433 unless told otherwise, off with ``--no-h3``) in a thread of
its own: every connection to it, and every fetch made from the Live page, is a capture in
DATA_DIR/captures that the page shows as it happens (h3learn/capture, docs/web-api.md).
The certificate is made once and kept in DATA_DIR, so the printed Chromium command line
with its SPKI pin keeps working across restarts.

The web server is Werkzeug's, with Flask-SocketIO in threading mode: one process holds a
class of a few hundred students (docs/classroom.md). ``--public-url`` is the address
students reach this server at (for the classroom's join link and QR code).
``--message-queue`` lets several processes share classroom rooms through Redis; run them
behind a load balancer with sticky sessions (docs/classroom.md), each with its own
``--h3-port`` (or ``--no-h3``). SIGINT (Ctrl-C) or SIGTERM stops both servers: the web
server first, then every HTTP/3 connection is closed (GOAWAY, H3_NO_ERROR) and its
capture finished.
"""

from __future__ import annotations

import argparse
import signal
import socket
import threading
from pathlib import Path
from types import FrameType

import redis
from werkzeug.serving import LISTEN_QUEUE, get_sockaddr, make_server, select_address_family

from h3learn.capture.endpoint import (
    DEFAULT_IDLE_TIMEOUT,
    DEFAULT_MAX_FIELD_SECTION_SIZE,
    DEFAULT_MAX_REQUESTS,
    EndpointError,
    EndpointOptions,
    LiveEndpoint,
)
from h3learn.capture.hub import DEFAULT_MAX_EVENTS
from h3learn.cli_arguments import (
    http_url,
    make_folder,
    positive,
    positive_seconds,
    tcp_port,
    udp_port,
    url_host,
)
from h3learn.command_error import CommandError
from h3learn.curriculum.catalogue import default_lessons_dir
from h3learn.curriculum.source import SourceError
from h3learn.page_server import DEFAULT_MAX_BODY_BYTES
from h3learn.transport.udp_server import DEFAULT_MAX_CONNECTIONS
from h3learn.web import create_app, default_data_dir
from h3learn.web.captures import LiveService


def add_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "serve",
        help="start the web UI (step through traces in a browser) and the live HTTP/3 endpoint",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
    )
    parser.add_argument("--host", default="127.0.0.1", help="address of the web UI")
    parser.add_argument(
        "--port", type=tcp_port, default=5000, help="TCP port of the web UI (0: any free)"
    )
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help=f"where traces, captures and the certificate are kept (default {default_data_dir()})",
    )
    parser.add_argument(
        "--public-url",
        type=http_url,
        default=None,
        help="the address students open, for the classroom join link and QR code "
        "(default: the address the teacher's browser used)",
    )
    parser.add_argument(
        "--message-queue",
        default=None,
        metavar="URL",
        help="share classroom rooms with other processes through Redis (redis://HOST:PORT/DB)",
    )
    parser.add_argument(
        "--lessons-dir",
        type=Path,
        default=None,
        help=f"a folder of lessons and rfc/ annotations (default {default_lessons_dir()})",
    )
    live = parser.add_argument_group("the recording HTTP/3 endpoint (live capture)")
    live.add_argument("--h3-host", default="127.0.0.1", help="UDP address (127.0.0.1)")
    live.add_argument("--h3-port", type=udp_port, default=4433, help="UDP port (4433; 0: any free)")
    live.add_argument("--no-h3", action="store_true", help="do not run the HTTP/3 endpoint")
    limits = [
        ("--max-connections", positive, DEFAULT_MAX_CONNECTIONS, "connections open at once"),
        ("--idle-timeout", positive_seconds, DEFAULT_IDLE_TIMEOUT, "seconds before a silent"
         " connection is dropped (RFC 9000 §10.1)"),
        ("--max-requests", positive, DEFAULT_MAX_REQUESTS, "requests per connection, then"
         " GOAWAY (RFC 9114 §5.2)"),
        ("--max-body-bytes", positive, DEFAULT_MAX_BODY_BYTES, "request content accepted;"
         " more is answered with 413"),
        ("--max-field-section-size", positive, DEFAULT_MAX_FIELD_SECTION_SIZE,
         "SETTINGS_MAX_FIELD_SECTION_SIZE announced (RFC 9114 §4.2.2)"),
        ("--max-events", positive, DEFAULT_MAX_EVENTS, "events per capture, then the"
         " connection is closed with H3_EXCESSIVE_LOAD"),
    ]  # fmt: skip
    for flag, kind, default, text in limits:
        live.add_argument(flag, type=kind, default=default, help=f"{text} (default {default})")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    data_dir = args.data_dir if args.data_dir is not None else default_data_dir()
    make_folder("--data-dir", data_dir)
    if args.message_queue is not None:
        check_message_queue(args.message_queue)
    if args.lessons_dir is not None and not args.lessons_dir.is_dir():
        raise CommandError(f"--lessons-dir {args.lessons_dir}: no such folder")
    try:
        app = create_app(
            {
                "DATA_DIR": str(data_dir),
                "MESSAGE_QUEUE": args.message_queue,
                "PUBLIC_URL": args.public_url,
                "LESSONS_DIR": args.lessons_dir,
                "LIVE_MAX_EVENTS": args.max_events,
            }
        )
    except SourceError as error:
        raise CommandError(f"a lesson file is broken: {error}") from None
    service: LiveService = app.extensions["h3learn_live"]
    endpoint = None
    if not args.no_h3:
        endpoint = LiveEndpoint(
            service.hub,
            EndpointOptions(
                host=args.h3_host,
                port=args.h3_port,
                max_connections=args.max_connections,
                idle_timeout=args.idle_timeout,
                max_requests=args.max_requests,
                max_body_bytes=args.max_body_bytes,
                max_field_section_size=args.max_field_section_size,
            ),
            data_dir,
            say=_say,
        )
        try:
            endpoint.start()
        except EndpointError as error:
            raise CommandError(str(error)) from None
        service.attach_endpoint(endpoint)
    try:
        listening = listen_tcp(args.host, args.port)
    except CommandError:
        if endpoint is not None:
            endpoint.stop()
        raise
    with listening:
        # Werkzeug serves on a copy of the socket bound here, so it never reports a bind
        # failure itself (in lines of its own, then sys.exit).
        web = make_server(args.host, args.port, app, threaded=True, fd=listening.fileno())
    if args.host.startswith("unix://"):
        # A Unix socket, for a proxy in front: it has no port, and it is not a URL.
        web_at = f"Unix socket {args.host.removeprefix('unix://')}"
        live_at = "/live on that socket"
    else:
        web_at = f"http://{url_host(args.host)}:{web.port}/"
        live_at = f"{web_at}live"
    _say(f"h3learn serve: {web_at} (data in {data_dir})")
    if args.message_queue is not None:
        _say(f"  classroom rooms shared through {args.message_queue}")
    if endpoint is not None:
        connect = endpoint.how_to_connect()
        _say(f"  HTTP/3 on UDP {connect['address']} (ALPN h3), recording every connection")
        _say(f"  live page: {live_at}")
        _say("  Chromium (trusts the kept certificate by its SPKI pin, RFC 7469 §2.4):")
        _say(f"    {connect['chromium']}")
    else:
        _say("  HTTP/3 endpoint: off (--no-h3)")
    _say("  stop with Ctrl-C (SIGINT) or SIGTERM")

    def stop(signal_number: int, frame: FrameType | None) -> None:
        # shutdown() waits for serve_forever to return, so it runs in a thread of its own.
        threading.Thread(target=web.shutdown, name="h3learn-shutdown", daemon=True).start()

    previous = {number: signal.signal(number, stop) for number in (signal.SIGINT, signal.SIGTERM)}
    try:
        web.serve_forever()
    finally:
        _say("h3learn serve: stopping")
        if endpoint is not None:
            endpoint.stop()
        service.close()
        web.server_close()
        for number, handler in previous.items():
            signal.signal(number, handler)
    captures = len(service.hub.store.ids())
    _say(f"h3learn serve: stopped; {captures} capture(s) in {service.hub.store.directory}")
    return 0


def listen_tcp(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host`` and ``port`` and listening, or a `CommandError` that
    names both and the reason (address in use, an address this machine does not have)."""
    family = select_address_family(host, port)
    if family == socket.AF_UNIX:
        # ``--host unix:///path``: Werkzeug's own rule, kept now that the socket is bound
        # here: a socket file an earlier run left behind is replaced.
        Path(host.removeprefix("unix://")).unlink(missing_ok=True)
    listening = socket.socket(family, socket.SOCK_STREAM)
    try:
        listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listening.bind(get_sockaddr(host, port, family))
        listening.listen(LISTEN_QUEUE)
    except OSError as error:
        listening.close()
        where = host if family == socket.AF_UNIX else f"TCP {host} port {port}"
        raise CommandError(f"cannot listen on {where}: {error.strerror or error}") from None
    return listening


def check_message_queue(url: str) -> None:
    """Refuse to start, with the reason, unless ``url`` is a Redis server that answers."""
    if not url.startswith(("redis://", "rediss://", "unix://")):
        raise CommandError(f"--message-queue must be a redis:// URL, not {url!r}")
    try:
        redis.Redis.from_url(url, socket_connect_timeout=5).ping()
    except (redis.RedisError, ValueError) as error:
        raise CommandError(f"cannot reach the message queue at {url}: {error}") from None


def _say(line: str) -> None:
    print(line, flush=True)
