"""Open any trace: a native trace, a capture's journal, or a qlog file (0.3 or current draft).

The web UI and ``h3learn export`` accept all of them without being told which it is. The
kinds differ in their first bytes: a journal's first line is a header with
``"format": "h3learn-trace-journal"``; a native trace is an object with
``"format": "h3learn-trace"``; an aioquic qlog has ``"qlog_version"``; a current-draft qlog
has ``"file_schema"``, or starts with the record separator of its JSON-SEQ form. A folder is
read as aioquic's QuicFileLogger output (every ``*.qlog`` in it).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from h3learn.trace.qlog_draft_import import from_qlog_draft, is_draft_qlog
from h3learn.trace.qlog_import import from_aioquic_qlog
from h3learn.trace.store import (
    DEFAULT_MAX_BYTES,
    FORMAT,
    JOURNAL_FORMAT,
    Trace,
    load_json,
    parse_journal,
    parse_trace,
    read_text_limited,
)
from h3learn.trace.stored_events import TraceFormatError


def load_trace(
    path: str | os.PathLike[str], *, max_bytes: int | None = DEFAULT_MAX_BYTES
) -> tuple[str, Trace]:
    """``(kind, trace)`` with kind "native", "journal", "aioquic-qlog" or "qlog".

    Raises `TraceFormatError` for a file that is none of them, OSError if it cannot be read.
    """
    source = Path(path)
    if source.is_dir():
        return "aioquic-qlog", from_aioquic_qlog(source, max_bytes=max_bytes)
    text = read_text_limited(source, max_bytes)
    if is_draft_qlog(text, None):
        return "qlog", from_qlog_draft(text, source.name)
    head, _, rest = text.partition("\n")
    try:
        first: Any = json.loads(head)
    except json.JSONDecodeError:
        first = None
    if isinstance(first, dict) and first.get("format") == JOURNAL_FORMAT:
        return "journal", parse_journal(text, source.name)
    # A file written on one line (as write_trace does) was parsed whole just now.
    document = first if first is not None and not rest.strip() else load_json(text, source.name)
    if isinstance(document, dict) and document.get("format") == FORMAT:
        return "native", parse_trace(document, source.name)
    if isinstance(document, dict) and "qlog_version" in document:
        trace = from_aioquic_qlog(document)
        trace.meta["files"] = [source.name]
        return "aioquic-qlog", trace
    if is_draft_qlog(text, document):
        return "qlog", from_qlog_draft(text, source.name, document)
    raise TraceFormatError(
        f"{source.name}: neither an h3learn trace, a capture journal nor a qlog file"
    )
