"""Argument types the subcommands share: numbers checked against the range a rule allows.

argparse calls each with the text of one option and shows the `ArgumentTypeError`'s message
after the option's name (``argument --port: 70000 is not a UDP port (0-65535, RFC 768)``),
then exits with status 2; no value out of range reaches the protocol code. `make_folder`
is the check that needs the file system: a folder option that names a file, or a place no
folder can be made, is a `CommandError` in one line.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from urllib.parse import urlsplit

from h3learn.command_error import CommandError
from h3learn.wire.varint import VARINT_MAX

#: RFC 768 and RFC 9293 §3.1: a UDP or TCP port is 16 bits.
MAX_PORT = 0xFFFF


def _whole_number(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None


def setting_value(text: str) -> int:
    """0..2^62-1: what a SETTINGS value can hold (RFC 9000 §16, RFC 9114 §7.2.4.1)."""
    value = _whole_number(text)
    if not 0 <= value <= VARINT_MAX:
        raise argparse.ArgumentTypeError(f"{text} is not between 0 and 2^62-1 (RFC 9000 §16)")
    return value


def positive(text: str) -> int:
    """A whole number of at least 1 (a count of connections, say)."""
    value = _whole_number(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive number")
    return value


def positive_seconds(text: str) -> float:
    """A finite number of seconds greater than 0 (a timeout)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text} is not a positive number of seconds")
    return value


def udp_port(text: str) -> int:
    """0..65535 (RFC 768); 0 asks the system for any free port."""
    return _port(text, "UDP", "RFC 768")


def tcp_port(text: str) -> int:
    """0..65535 (RFC 9293 §3.1); 0 asks the system for any free port."""
    return _port(text, "TCP", "RFC 9293 §3.1")


def _port(text: str, protocol: str, rfc: str) -> int:
    value = _whole_number(text)
    if not 0 <= value <= MAX_PORT:
        raise argparse.ArgumentTypeError(f"{text} is not a {protocol} port (0-65535, {rfc})")
    return value


def http_url(text: str) -> str:
    """An ``http://`` or ``https://`` URL with a host (RFC 9110 §4.2), e.g. a public address."""
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 (reading it checks the port: ValueError if it is not one)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"{text!r} is not a URL: {error}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an http:// or https:// URL with a host (RFC 9110 §4.2),"
            " e.g. http://192.0.2.10:5000"
        )
    return text


def url_host(host: str) -> str:
    """A host as written in a URL: an IPv6 address in brackets (RFC 3986 §3.2.2)."""
    return f"[{host}]" if ":" in host else host


def make_folder(option: str, folder: Path) -> None:
    """Create the folder ``option`` names (and its parents), or say in one line why not."""
    if folder.exists() and not folder.is_dir():
        raise CommandError(f"{option} {folder} is a file, not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise CommandError(
            f"{option} {folder}: cannot make this folder: {error.strerror or error}"
        ) from None


def help_description(docstring: str | None) -> str | None:
    """A module docstring as a subcommand's ``--help`` text: its usage lines and paragraphs
    as written (use with argparse.RawDescriptionHelpFormatter), without the reST quotes."""
    return docstring.replace("``", "").strip() if docstring else None
