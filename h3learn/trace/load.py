"""Open any trace: a native trace, a capture's journal, or an aioquic qlog (0.3) file.

The web UI and ``h3learn export`` accept all three without being told which it is. The
kinds differ in their first bytes: a journal's first line is a header with
``"format": "h3learn-trace-journal"``; a native trace is an object with
``"format": "h3learn-trace"``; an aioquic qlog has ``"qlog_version"``. A folder is read as
aioquic's QuicFileLogger output (every ``*.qlog`` in it).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from h3learn.trace.qlog_import import from_aioquic_qlog
from h3learn.trace.store import (
    DEFAULT_MAX_BYTES,
    FORMAT,
    JOURNAL_FORMAT,
    Trace,
    TraceFormatError,
    load_json,
    parse_journal,
    parse_trace,
    read_text_limited,
)


def load_trace(
    path: str | os.PathLike[str], *, max_bytes: int | None = DEFAULT_MAX_BYTES
) -> tuple[str, Trace]:
    """``(kind, trace)`` with kind "native", "journal" or "aioquic-qlog".

    Raises `TraceFormatError` for a file that is none of them, OSError if it cannot be read.
    """
    source = Path(path)
    if source.is_dir():
        return "aioquic-qlog", from_aioquic_qlog(source, max_bytes=max_bytes)
    text = read_text_limited(source, max_bytes)
    head = text.partition("\n")[0]
    try:
        first: Any = json.loads(head)
    except json.JSONDecodeError:
        first = None
    if isinstance(first, dict) and first.get("format") == JOURNAL_FORMAT:
        return "journal", parse_journal(text, source.name)
    document = load_json(text, source.name)
    if isinstance(document, dict) and document.get("format") == FORMAT:
        return "native", parse_trace(document, source.name)
    if isinstance(document, dict) and "qlog_version" in document:
        trace = from_aioquic_qlog(document)
        trace.meta["files"] = [source.name]
        return "aioquic-qlog", trace
    if isinstance(document, dict) and "file_schema" in document:
        raise TraceFormatError(
            f"{source.name}: a current-draft qlog file; h3learn imports qlog 0.3 (aioquic's)"
        )
    raise TraceFormatError(
        f"{source.name}: neither an h3learn trace, a capture journal nor an aioquic qlog file"
    )
