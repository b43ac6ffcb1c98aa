"""Argument types the subcommands share: numbers checked against the range a rule allows.

argparse calls each with the text of one option and shows the `ArgumentTypeError`'s message
after the option's name (``argument --port: 70000 is not a UDP port (0-65535, RFC 768)``),
then exits with status 2; no value out of range reaches the protocol code.
"""

from __future__ import annotations

import argparse
import math

from h3learn.wire.varint import VARINT_MAX

#: RFC 768: a UDP port is 16 bits.
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
    value = _whole_number(text)
    if not 0 <= value <= MAX_PORT:
        raise argparse.ArgumentTypeError(f"{text} is not a UDP port (0-65535, RFC 768)")
    return value


def help_description(docstring: str | None) -> str | None:
    """A module docstring as a subcommand's ``--help`` text: its usage lines and paragraphs
    as written (use with argparse.RawDescriptionHelpFormatter), without the reST quotes."""
    return docstring.replace("``", "").strip() if docstring else None
