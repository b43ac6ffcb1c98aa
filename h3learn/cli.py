"""The ``h3learn`` command line: one subcommand per capability.

Each subcommand lives in its own module and registers itself through `SUBCOMMANDS`; this
module only builds the argument parser and turns a project error into a clear message and
a non-zero exit status. Output cut short by its reader (``h3learn walkthrough | head``)
ends the command quietly, as the Python documentation's "Note on SIGPIPE" advises.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence

from h3learn import export_cli, get_cli, h3_server, lessons_cli, qif_cli, serve_cli, walkthrough
from h3learn.command_error import CommandError

#: name -> (function that adds the subcommand's arguments to its parser)
SUBCOMMANDS: dict[str, Callable[[argparse._SubParsersAction], None]] = {  # type: ignore[type-arg]
    "walkthrough": walkthrough.add_parser,
    "qif": qif_cli.add_parser,
    "export": export_cli.add_parser,
    "h3-server": h3_server.add_parser,
    "get": get_cli.add_parser,
    "serve": serve_cli.add_parser,
    "lessons": lessons_cli.add_parser,
    "rfc": lessons_cli.add_rfc_parser,
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="h3learn",
        description="Learn HTTP/3 (RFC 9114) and QPACK (RFC 9204) byte by byte.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for add_parser in SUBCOMMANDS.values():
        add_parser(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "run"):
        parser.print_help()
        return 2
    try:
        status: int = args.run(args)
        sys.stdout.flush()
    except CommandError as error:
        print(f"h3learn {args.command}: {error}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        # The reader closed the pipe: nothing more can be shown. Standard output goes to
        # the null device so that the interpreter's own flush at exit cannot fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return status


if __name__ == "__main__":
    sys.exit(main())
