"""``h3learn qif``: the offline QPACK interop harness (RFC 9204 §4.3-§4.5 on files).

    h3learn qif encode INPUT.qif OUTPUT --table-capacity C --blocked-streams B --immediate-ack 1
    h3learn qif decode INPUT OUTPUT.qif --table-capacity C --blocked-streams B

``encode`` turns header lists into the interop record format (stream 0: the encoder stream;
stream N: the N-th field section); ``decode`` reads such a file, resuming blocked sections
as encoder-stream records arrive, and writes the header lists back as a .qif. Both exit
non-zero with one clear line when the input is malformed.

A .qif file is UTF-8 text: header blocks of ``name<TAB>value`` lines, separated by empty
lines, with ``#`` comment lines. `read_qif_file` refuses anything else (a line without a
tab, bytes that are not UTF-8, a file with no header block), naming the file and the line,
so a trace or a binary file given by mistake is not read as header names.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from h3learn.cli_arguments import setting_value
from h3learn.command_error import CommandError
from h3learn.qpack.errors import QpackError
from h3learn.qpack.interop import (
    Header,
    decode_records,
    encode_qif,
    parse_qif,
    serialize_qif,
)


def add_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    qif = subparsers.add_parser(
        "qif",
        help="encode or decode QPACK interop files",
        description="The QPACK offline interop harness (qpackers/qifs formats).",
    )
    actions = qif.add_subparsers(dest="qif_command", metavar="ACTION", required=True)

    encode = actions.add_parser("encode", help=".qif header lists -> encoded records")
    encode.add_argument("input", type=Path, help="a .qif file")
    encode.add_argument("output", type=Path, help="the record file to write")
    add_table_arguments(encode)
    encode.add_argument(
        "--immediate-ack",
        type=int,
        choices=(0, 1),
        default=1,
        help="1: the decoder acknowledges every section at once; 0: never (default 1)",
    )
    encode.set_defaults(run=run_encode)

    decode = actions.add_parser("decode", help="encoded records -> .qif header lists")
    decode.add_argument("input", type=Path, help="a record file")
    decode.add_argument("output", type=Path, help="the .qif file to write")
    add_table_arguments(decode)
    decode.set_defaults(run=run_decode)


def add_table_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--table-capacity",
        type=setting_value,
        required=True,
        help="SETTINGS_QPACK_MAX_TABLE_CAPACITY of the decoder, in bytes",
    )
    parser.add_argument(
        "--blocked-streams",
        type=setting_value,
        required=True,
        help="SETTINGS_QPACK_BLOCKED_STREAMS of the decoder",
    )


def read_input(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as error:
        raise CommandError(f"cannot read {path}: {error.strerror}") from None


def read_qif_file(path: Path) -> list[list[Header]]:
    """The header blocks of the .qif file at ``path``; `CommandError` if it is not one."""
    data = read_input(path)
    for number, line in enumerate(data.split(b"\n"), start=1):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError:
            raise CommandError(
                f"{path}:{number}: not UTF-8 text; a .qif file holds header lines 'name<TAB>value'"
            ) from None
        if line and not line.startswith(b"#") and b"\t" not in line:
            raise CommandError(
                f"{path}:{number}: no tab in this line; a .qif header line is"
                " 'name<TAB>value' (blocks separated by empty lines, '#' comments)"
            )
    sections = parse_qif(data)
    if not sections:
        raise CommandError(f"{path}: no header block; an empty .qif file has nothing to send")
    return sections


def write_output(path: Path, data: bytes) -> None:
    try:
        path.write_bytes(data)
    except OSError as error:
        raise CommandError(f"cannot write {path}: {error.strerror}") from None


def run_encode(args: argparse.Namespace) -> int:
    sections = read_qif_file(args.input)
    try:
        records = encode_qif(
            sections, args.table_capacity, args.blocked_streams, bool(args.immediate_ack)
        )
    except (ValueError, QpackError) as error:
        raise CommandError(f"{args.input}: {error}") from None
    write_output(args.output, records)
    return 0


def run_decode(args: argparse.Namespace) -> int:
    data = read_input(args.input)
    try:
        sections = decode_records(data, args.table_capacity, args.blocked_streams)
    except (ValueError, QpackError) as error:
        raise CommandError(f"{args.input}: {error}") from None
    write_output(args.output, serialize_qif(sections))
    return 0
