"""``h3learn export``: write a trace as a native trace file, current-draft qlog, or qlog 0.3.

    h3learn export TRACE --format {native,qlog,qlog-0.3} -o OUT

TRACE may be any of these; which one is worked out from the file itself:

  - a native h3learn trace (.json), or the journal of a capture that did not finish;
  - a qlog file: aioquic's qlog 0.3, or the current draft (contained JSON or JSON-SEQ);
  - a folder: its aioquic qlog 0.3 files (*.qlog, one per connection) merged into one
    trace, or its one current-draft qlog file (several draft files cannot be merged).

``-o -`` writes to standard output. Files are written atomically: OUT is either left as it
was or replaced by the complete export. ``qlog-0.3`` is the form qvis opens.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from h3learn.cli_arguments import help_description, positive
from h3learn.command_error import CommandError
from h3learn.trace.load import load_trace
from h3learn.trace.qlog import to_qlog, to_qlog_03
from h3learn.trace.store import DEFAULT_MAX_BYTES, Trace, trace_document, write_json_atomic
from h3learn.trace.stored_events import TraceFormatError

#: --format -> what to write.
FORMATS: dict[str, Callable[[Trace, bool], dict[str, Any]]] = {
    "native": lambda trace, _: trace_document(trace.title, trace.events, trace.meta, trace.created),
    "qlog": lambda trace, include_bytes: to_qlog(trace, include_bytes=include_bytes),
    "qlog-0.3": lambda trace, include_bytes: to_qlog_03(trace, include_bytes=include_bytes),
}


def add_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "export",
        help="write a trace as an h3learn trace, qlog, or qlog 0.3 (qvis)",
        description=help_description(__doc__),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "trace",
        type=Path,
        help="a native trace, a capture journal, a qlog file (0.3 or current draft),"
        " or a folder of them (see above)",
    )
    parser.add_argument(
        "--format",
        choices=sorted(FORMATS),
        required=True,
        dest="format",
        help="native: h3learn's own trace; qlog: the current qlog draft; qlog-0.3: what qvis opens",
    )
    parser.add_argument(
        "-o", "--output", required=True, help="the file to write, or - for standard output"
    )
    parser.add_argument(
        "--no-bytes", action="store_true", help="qlog: leave the raw bytes (hex) out"
    )
    parser.add_argument(
        "--max-bytes",
        type=positive,
        default=DEFAULT_MAX_BYTES,
        help=f"refuse input files larger than this (default {DEFAULT_MAX_BYTES})",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    try:
        kind, trace = load_trace(args.trace, max_bytes=args.max_bytes)
    except TraceFormatError as error:
        raise CommandError(str(error)) from None
    except OSError as error:
        raise CommandError(f"cannot read {args.trace}: {error.strerror or error}") from None
    for warning in trace.warnings:
        print(f"h3learn export: warning: {warning}", file=sys.stderr)
    try:
        document = FORMATS[args.format](trace, not args.no_bytes)
    except TraceFormatError as error:
        raise CommandError(str(error)) from None
    if args.output == "-":
        json.dump(document, sys.stdout, ensure_ascii=False, allow_nan=False)
        sys.stdout.write("\n")
        return 0
    try:
        write_json_atomic(args.output, document)
    except OSError as error:
        raise CommandError(f"cannot write {args.output}: {error.strerror or error}") from None
    print(f"{args.output}: {len(trace.events)} events from the {kind} trace, as {args.format}")
    return 0
