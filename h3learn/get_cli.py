"""``h3learn get``: fetch URLs over HTTP/3 and print each response (RFC 9114 §4.1).

    h3learn get URL [URL...] [--insecure | --cafile F] [--record FILE]
                [--method M] [--data D] [--header 'NAME: VALUE' ...] [--timeout SECONDS]

For each URL it prints the status, the response's field lines and the content. URLs of one
origin share one connection (RFC 9114 §3.3), their requests in flight together on separate
request streams. ``--record`` writes that connection's trace (every frame, SETTINGS value
and QPACK instruction, docs/events.md) as a native trace file. ``--header`` adds field
lines of one's own to every request: with the URL given twice, QPACK sends such a field as
a literal the first time, then inserts it into its dynamic table and refers to it (if the
server's SETTINGS allow a dynamic table and blocked streams, RFC 9204 §5).

The server's certificate is checked against the system's authorities unless ``--cafile``
names others (for a self-signed server, its own certificate) or ``--insecure`` switches the
check off. Failures (a bad URL, nothing listening, no answer within the timeout, a TLS
failure) are reported in one line, with exit status 1.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path

from h3learn.command_error import CommandError
from h3learn.h3.messages import Header
from h3learn.transport.fetch_errors import FetchError
from h3learn.transport.request_fields import parse_field_line
from h3learn.transport.udp_client import Response, fetch
from h3learn.transport.udp_shared import quiet_aioquic_log

#: Content shown as text is cut after this many bytes.
MAX_SHOWN_BODY = 64 * 1024


def add_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "get",
        help="fetch URLs over HTTP/3 and print the responses",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
    )
    parser.add_argument("urls", nargs="+", metavar="URL", help="https:// URLs")
    trust = parser.add_mutually_exclusive_group()
    trust.add_argument(
        "--insecure", "-k", action="store_true", help="do not check the server's certificate"
    )
    trust.add_argument(
        "--cafile", type=Path, help="trust the certificates in this PEM file (e.g. cert.pem)"
    )
    parser.add_argument("--record", type=Path, help="write the connection's trace to FILE")
    parser.add_argument("--method", "-X", help="request method (default GET, or POST with --data)")
    parser.add_argument(
        "--data", "-d", help="request content: the text itself, or @FILE for a file's bytes"
    )
    parser.add_argument(
        "--header",
        "-H",
        action="append",
        default=[],
        metavar="'NAME: VALUE'",
        help="add this field line to every request (repeat for more); the name is sent in"
        " lowercase, as RFC 9114 §4.2 requires; it replaces h3learn's user-agent or accept",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=10.0,
        help="seconds to wait for a connection and its responses (default 10)",
    )
    parser.set_defaults(run=run)


def request_content(data: str | None) -> bytes | None:
    if data is None:
        return None
    if data.startswith("@"):
        path = Path(data[1:])
        try:
            return path.read_bytes()
        except OSError as error:
            raise CommandError(f"cannot read {path}: {error.strerror or error}") from None
    return data.encode()


#: RFC 9110 §5.6.2: tchar, the characters of a token (ALPHA, DIGIT and these).
TOKEN_PUNCTUATION = "!#$%&'*+-.^_`|~"
#: RFC 9110 §9.3 (and PATCH, RFC 5789): written in capitals.
STANDARD_METHODS = ("GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH")


def check_method(method: str) -> None:
    """A method is a token (RFC 9110 §9.1, §5.6.2); the standard ones are in capitals."""
    if not method:
        raise CommandError("bad method '': a method is a token of at least one character")
    wrong = [c for c in method if not (c.isascii() and (c.isalnum() or c in TOKEN_PUNCTUATION))]
    if wrong:
        shown = ", ".join(dict.fromkeys("a space" if c == " " else repr(c) for c in wrong))
        raise CommandError(
            f"bad method {method!r}: it contains {shown}; a method is a token"
            f" (RFC 9110 §9.1, §5.6.2): letters, digits and {TOKEN_PUNCTUATION} only"
        )
    if method == "CONNECT":
        raise CommandError(
            "h3learn get does not make CONNECT requests: a CONNECT request names a host and"
            " port to tunnel to, with no URL path (RFC 9114 §4.4)"
        )
    if method.upper() != method and method.upper() in STANDARD_METHODS:
        raise CommandError(
            f"bad method {method!r}: methods are case-sensitive (RFC 9110 §9.1);"
            f" the standard one is {method.upper()}"
        )


def header_fields(header_options: list[str]) -> list[Header]:
    """The ``--header`` options as field lines (h3learn/transport/request_fields.py); the
    whole request is checked with them by `fetch`, before it connects."""
    try:
        return [parse_field_line(option) for option in header_options]
    except FetchError as error:
        raise CommandError(str(error)) from None


def run(args: argparse.Namespace) -> int:
    quiet_aioquic_log()
    data = request_content(args.data)
    method = args.method or ("POST" if data is not None else "GET")
    check_method(method)
    fields = header_fields(args.header)
    if args.timeout <= 0:
        raise CommandError("--timeout must be positive")
    if args.cafile is not None and not args.cafile.is_file():
        raise CommandError(f"cannot read the CA file {args.cafile}: no such file")
    if args.record is not None:
        check_record_path(args.record)
    try:
        responses = asyncio.run(
            fetch(
                args.urls,
                method,
                data,
                insecure=args.insecure,
                cafile=str(args.cafile) if args.cafile is not None else None,
                record=args.record,
                timeout=args.timeout,
                fields=fields,
            )
        )
    except FetchError as error:
        raise CommandError(str(error)) from None
    for number, response in enumerate(responses):
        if number:
            print()
        print_response(response)
    if args.record is not None:
        print(f"\ntrace written to {args.record}", file=sys.stderr)
    return 0


def check_record_path(record: Path) -> None:
    """Refuse, before connecting, a ``--record`` path no trace file can be written at: a
    folder, a missing folder, or a place this user may not write (the journal is written
    beside it as the connection runs, then becomes the trace)."""
    folder = record.parent
    if record.is_dir():
        raise CommandError(f"cannot record to {record}: it is a folder; name a file in it")
    if not folder.is_dir():
        raise CommandError(f"cannot record to {record}: {folder} is not a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise CommandError(f"cannot record to {record}: {folder} is not writable")
    if record.exists() and not os.access(record, os.W_OK):
        raise CommandError(f"cannot record to {record}: it is not writable")


def print_response(response: Response) -> None:
    """``== URL (stream N)``, the status line, the field lines, a blank line, the content."""
    print(f"== {response.url} (stream {response.stream_id})")
    print(f"HTTP/3 {response.status}")
    for name, value in response.headers:
        if not name.startswith(b":"):
            print(f"{_show(name)}: {_show(value)}")
    print()
    body = response.body
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        print(f"({len(body)} bytes of binary content, not shown)")
    else:
        shown = text[:MAX_SHOWN_BODY]
        sys.stdout.write(shown if shown.endswith("\n") or not shown else shown + "\n")
        if len(text) > MAX_SHOWN_BODY:
            print(f"... ({len(text) - MAX_SHOWN_BODY} more characters)")
    for name, value in response.trailers:
        print(f"{_show(name)}: {_show(value)} (trailer)")


def _show(value: bytes) -> str:
    """A field name or value for the terminal: control characters escaped (untrusted)."""
    return "".join(chr(byte) if 0x20 <= byte < 0x7F else f"\\x{byte:02x}" for byte in value)
