"""Open any trace: a native trace, a capture's journal, or a qlog file (0.3 or current draft).

The web UI and ``h3learn export`` accept all of them without being told which it is. The
kinds differ in their first bytes: a journal's first line is a header with
``"format": "h3learn-trace-journal"``; a native trace is an object with
``"format": "h3learn-trace"``; an aioquic qlog has ``"qlog_version"``; a current-draft qlog
has ``"file_schema"``, or starts with the record separator of its JSON-SEQ form.

A folder accepts what a single qlog file does. Its aioquic qlog 0.3 files (QuicFileLogger
writes one ``<ODCID>.qlog`` per connection) are merged into one trace; a folder whose only
qlog is a current-draft file (``*.qlog`` or ``*.sqlog``) is read as that file. Several draft
files are not merged: each counts its times from its own first event, so their events
could not be put in one order; the error says to export them one at a time.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from h3learn.trace.event_data import data_problem
from h3learn.trace.json_text import UnusableJSON, parse_json, too_deep
from h3learn.trace.qlog_draft_import import RECORD_SEPARATOR, from_qlog_draft, is_draft_qlog
from h3learn.trace.qlog_import import from_aioquic_qlog
from h3learn.trace.store import (
    DEFAULT_MAX_BYTES,
    FORMAT,
    JOURNAL_FORMAT,
    Trace,
    first_line,
    load_json,
    parse_journal,
    parse_trace,
    read_text_limited,
)
from h3learn.trace.stored_events import TraceFormatError


def load_trace(
    path: str | os.PathLike[str],
    *,
    max_bytes: int | None = DEFAULT_MAX_BYTES,
    name: str | None = None,
) -> tuple[str, Trace]:
    """``(kind, trace)`` with kind "native", "journal", "aioquic-qlog" or "qlog".

    ``name`` is what messages, warnings and ``meta["files"]`` call the file (an upload's
    own name rather than the file it was staged in); the path's last part by default.
    Raises `TraceFormatError` for a file that is none of them, OSError if it cannot be read.
    """
    source = Path(path)
    shown = name if name is not None else source.name
    try:
        kind, trace = _load(source, shown, max_bytes)
    except RecursionError:
        # A safety net: the readers check nesting where a file may nest (json_text.py).
        raise TraceFormatError(f"{shown}: {too_deep()}") from None
    if kind in ("aioquic-qlog", "qlog"):
        check_imported(trace, shown)
    return kind, trace


def check_imported(trace: Trace, name: str) -> None:
    """What a qlog import made is checked as a stored event would be (event_data.py)."""
    for event in trace.events:
        problem = data_problem(event.category, event.name, event.data)
        if problem is not None:
            raise TraceFormatError(
                f"{name}: event {event.seq} ({event.category} {event.name}): {problem}"
            )


def _load(source: Path, name: str, max_bytes: int | None) -> tuple[str, Trace]:
    if source.is_dir():
        return _load_folder(source, max_bytes)
    text = read_text_limited(source, max_bytes, name)
    if is_draft_qlog(text, None):
        return "qlog", from_qlog_draft(text, name)
    first, rest = first_line(text)
    if isinstance(first, dict) and first.get("format") == JOURNAL_FORMAT:
        return "journal", parse_journal(text, name)
    # A file written on one line (as write_trace does) was parsed whole just now.
    document = first if first is not None and not rest.strip() else load_json(text, name)
    if isinstance(document, dict) and document.get("format") == FORMAT:
        return "native", parse_trace(document, name)
    if isinstance(document, dict) and "qlog_version" in document:
        trace = from_aioquic_qlog(document, name=name)
        trace.meta["files"] = [name]
        return "aioquic-qlog", trace
    if is_draft_qlog(text, document):
        return "qlog", from_qlog_draft(text, name, document)
    raise TraceFormatError(f"{name}: neither an h3learn trace, a capture journal nor a qlog file")


def _load_folder(folder: Path, max_bytes: int | None) -> tuple[str, Trace]:
    """A folder of aioquic qlog 0.3 files (merged), or one holding a single draft qlog."""
    paths = sorted([*folder.glob("*.qlog"), *folder.glob("*.sqlog")])
    if not paths:
        raise TraceFormatError(f"{folder.name}: a folder with no .qlog or .sqlog files")
    drafts: list[tuple[Path, str]] = []
    for path in paths:
        text = read_text_limited(path, max_bytes)
        if _is_draft_file(text):
            drafts.append((path, text))
    if not drafts:
        return "aioquic-qlog", from_aioquic_qlog(paths, max_bytes=max_bytes)
    names = ", ".join(path.name for path, _ in drafts)
    if len(drafts) < len(paths):
        raise TraceFormatError(
            f"{folder.name}: holds both current-draft qlog ({names}) and qlog 0.3 files;"
            " h3learn merges only qlog 0.3 files from a folder, so export the draft file on"
            " its own or move it elsewhere"
        )
    if len(drafts) > 1:
        raise TraceFormatError(
            f"{folder.name}: {len(drafts)} current-draft qlog files ({names}); each counts"
            " its times from its own first event, so h3learn cannot merge them into one"
            " trace: export each file on its own"
        )
    path, text = drafts[0]
    return "qlog", from_qlog_draft(text, path.name)


def _is_draft_file(text: str) -> bool:
    """A current-draft qlog (JSON-SEQ, or an object with "file_schema"), not qlog 0.3."""
    if text.startswith(RECORD_SEPARATOR):
        return True
    try:
        document: Any = parse_json(text)
    except UnusableJSON:
        return False  # reported as it is read as qlog 0.3
    return is_draft_qlog(text, document)
