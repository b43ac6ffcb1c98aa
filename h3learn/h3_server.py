"""``h3learn h3-server``: a small HTTP/3 server on UDP that records every connection.

    h3learn h3-server --host 127.0.0.1 --port 4433 [--cert F --key F] [--record-dir DIR]
                      [--data-dir DIR] [--keylog FILE] [--max-connections N]
                      [--idle-timeout SECONDS]
                      [--qpack-max-table-capacity N] [--qpack-blocked-streams N]

It is the live end of h3learn: point Chromium, ngtcp2's client or ``h3learn get`` at it and
every frame, SETTINGS value, QPACK instruction and dynamic-table change of each connection
lands in its own trace file in DIR (written as it happens, finished when the connection
ends; docs/events.md, "Trace files").

Each connection's requests are answered by `PageServer` (h3learn/page_server.py: a GET
gets a page listing its request's fields, a POST the size of its content), and
`h3learn.transport.udp_server` carries the bytes. Without ``--cert`` the server makes a
self-signed certificate once (h3learn.transport.certificates) and prints the Chromium
command line with its SPKI pin. SIGINT or SIGTERM stops it: every connection is closed
with H3_NO_ERROR (RFC 9114 §5.2, §5.3) and its trace finished.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
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
from h3learn.h3.settings import Settings
from h3learn.page_server import PageServer
from h3learn.transport.certificates import (
    check_key_pair,
    chromium_command,
    ensure_certificate,
    spki_pin,
)
from h3learn.transport.udp_server import DEFAULT_MAX_CONNECTIONS, H3Server, serve
from h3learn.transport.udp_shared import DEFAULT_SETTINGS, quiet_aioquic_log

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
