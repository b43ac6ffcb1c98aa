"""Trace files: the native JSON trace, and the journal a capture in progress writes.

A *trace* is the ordered list of `Event`s of one exchange, with a title and some metadata.
It is stored in one of two forms (docs/events.md, "Trace files", describes both):

    native   one JSON object:
             {"format": "h3learn-trace", "version": 1, "title": ..., "created": ISO 8601,
              "meta": {...}, "events": [Event.to_json(), ...]}

    journal  JSON Lines, for a capture that is still running:
             line 1   {"format": "h3learn-trace-journal", "version": 1, "title": ...,
                       "created": ..., "meta": {...}}
             line 2+  one Event.to_json() per line, written and flushed as it happens

Three promises:

- *Writing is atomic.* `write_trace` writes a temporary file in the same directory, flushes
  it to disk (fsync) and renames it over the target (os.replace). A reader sees the old
  file or the new one, never half of one; a failed write leaves the old file as it was.
- *A crash loses at most the event being written.* `LiveTrace` appends one line per event
  and flushes it. `read_trace` reads a journal too; an unfinished last line (the process
  died while writing it) is dropped, with a warning in `Trace.warnings`.
- *Reading is strict.* Every key, type and span is checked, and the error says where:
  ``TraceFormatError("trace.json: event 12: 'raw' is not hex")``. The web UI shows traces
  users upload, so a file is treated as untrusted input (there is a size limit, too). This
  module checks a file's form and header; stored_events.py checks each event in it.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from h3learn.events import Event
from h3learn.trace.json_text import (
    NotJSON,
    UnusableJSON,
    check_depth,
    json_kind,
    parse_json,
)
from h3learn.trace.stored_events import (
    TraceFormatError,
    check_keys,
    parse_event,
    parse_event_deferring_spans,
)

FORMAT = "h3learn-trace"
JOURNAL_FORMAT = "h3learn-trace-journal"
VERSION = 1

#: `read_trace` refuses larger files unless told otherwise (a 10,000-event trace with
#: labelled bytes is a few megabytes).
DEFAULT_MAX_BYTES = 64 * 1024 * 1024

TRACE_KEYS = frozenset({"format", "version", "title", "created", "meta", "events"})
JOURNAL_KEYS = frozenset({"format", "version", "title", "created", "meta"})


@dataclass(slots=True)
class Trace:
    """A trace read from a file (or imported from qlog)."""

    title: str
    meta: dict[str, Any]
    events: list[Event]
    #: When the trace was started, ISO 8601; None if the source does not say.
    created: str | None = None
    #: Things a reader should know that did not stop the read (a torn journal line, ...).
    warnings: list[str] = field(default_factory=list)


def now_iso() -> str:
    """The current UTC time, ISO 8601 to the second."""
    return datetime.now(UTC).isoformat(timespec="seconds")


# -- writing ----------------------------------------------------------------------------


def trace_document(
    title: str,
    events: Iterable[Event],
    meta: dict[str, Any] | None = None,
    created: str | None = None,
) -> dict[str, Any]:
    """The native JSON object for a trace, after checking the events as `read_trace` would."""
    encoded = [event.to_json() for event in events]
    for position, obj in enumerate(encoded):
        parse_event(obj, f"event {position}", position)
    return {
        "format": FORMAT,
        "version": VERSION,
        "title": title,
        "created": created if created is not None else now_iso(),
        "meta": dict(meta) if meta is not None else {},
        "events": encoded,
    }


def write_trace(
    path: str | os.PathLike[str],
    title: str,
    events: Iterable[Event],
    meta: dict[str, Any] | None = None,
    *,
    created: str | None = None,
) -> None:
    """Write a native trace file atomically (see the module docstring)."""
    write_json_atomic(path, trace_document(title, events, meta, created))


def write_json_atomic(path: str | os.PathLike[str], obj: Any) -> None:
    """Write ``obj`` as JSON to ``path``: temporary file, fsync, os.replace.

    The JSON is built before any file is touched, so an object that cannot be written (a
    value JSON has no form for) fails without leaving anything behind.
    """
    target = Path(path)
    text = json.dumps(obj, ensure_ascii=False, allow_nan=False)
    directory = target.parent
    descriptor, temporary = tempfile.mkstemp(
        prefix=f".{target.name}.", suffix=".tmp", dir=directory
    )
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as stream:
            os.fchmod(stream.fileno(), 0o644)
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    _fsync_directory(directory)


def _fsync_directory(directory: Path) -> None:
    """Make the rename itself durable (POSIX); a no-op where directories cannot be opened."""
    try:
        descriptor = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)


# -- the journal of a capture in progress ---------------------------------------------


class LiveTrace:
    """A trace being recorded: a journal that grows by one flushed line per event.

    Use it as an `EventLog` listener (``log.listeners.append(live.append)``), then `close`
    it: the journal becomes a native trace, atomically. ``close()`` with no argument
    replaces the journal at ``path`` by the native trace; ``close(final_path)`` writes the
    trace there and removes the journal. At every moment the file at ``path`` is either a
    complete journal or a complete trace, and `read_trace` reads both.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        title: str,
        meta: dict[str, Any] | None = None,
        *,
        fsync: bool = False,
    ) -> None:
        self.path = Path(path)
        #: fsync after every event as well as flushing: survives power loss, costs speed.
        self.fsync = fsync
        self.count = 0
        self.closed = False
        header = {
            "format": JOURNAL_FORMAT,
            "version": VERSION,
            "title": title,
            "created": now_iso(),
            "meta": dict(meta) if meta is not None else {},
        }
        line = json.dumps(header, ensure_ascii=False, allow_nan=False)
        # "x": never overwrite an earlier capture.
        self._file = open(self.path, "x", encoding="utf-8")  # noqa: SIM115 (closed in close)
        self._write_line(line)

    def append(self, event: Event) -> None:
        """Add one event; it is on disk (flushed) when this returns."""
        if self.closed:
            raise ValueError(f"{self.path.name}: append after close")
        obj = event.to_json()
        parse_event(obj, f"{self.path.name}: event {self.count}", self.count)
        self._write_line(json.dumps(obj, ensure_ascii=False, allow_nan=False))
        self.count += 1

    def _write_line(self, line: str) -> None:
        # json.dumps escapes newlines inside strings, so every record is exactly one line.
        self._file.write(line + "\n")
        self._file.flush()
        if self.fsync:
            os.fsync(self._file.fileno())

    def close(self, final_path: str | os.PathLike[str] | None = None) -> Path:
        """Finish the capture: write the native trace (atomically) and drop the journal."""
        target = Path(final_path) if final_path is not None else self.path
        if self.closed:
            return target
        self.closed = True
        self._file.close()
        journal = read_trace(self.path, max_bytes=None)
        write_trace(target, journal.title, journal.events, journal.meta, created=journal.created)
        if target.resolve() != self.path.resolve():
            self.path.unlink()
        return target

    def __enter__(self) -> LiveTrace:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


# -- reading ---------------------------------------------------------------------------


def read_trace(path: str | os.PathLike[str], *, max_bytes: int | None = DEFAULT_MAX_BYTES) -> Trace:
    """Read a native trace or a journal, checking everything; raises `TraceFormatError`.

    OSError (a missing file, no permission) is left to the caller.
    """
    source = Path(path)
    text = read_text_limited(source, max_bytes)
    first, rest = first_line(text)
    if isinstance(first, dict) and first.get("format") == JOURNAL_FORMAT:
        return parse_journal(text, source.name)
    if first is not None and not rest.strip():
        return parse_trace(first, source.name)
    return parse_trace(load_json(text, source.name), source.name)


def first_line(text: str) -> tuple[Any, str]:
    """The first line parsed as JSON (None if it is not JSON h3learn can use), and the rest.

    A journal's first line is its header; a native trace written by `write_trace` is one line.
    """
    head, _, rest = text.partition("\n")
    try:
        return parse_json(head), rest
    except UnusableJSON:
        return None, rest


def read_text_limited(path: Path, max_bytes: int | None, name: str | None = None) -> str:
    """The file as UTF-8 text, refusing files larger than ``max_bytes``; messages call it
    ``name`` (by default the path's last part)."""
    name = name if name is not None else path.name
    if max_bytes is not None:
        size = path.stat().st_size
        if size > max_bytes:
            raise TraceFormatError(f"{name}: {size} bytes, more than the limit of {max_bytes}")
    with open(path, "rb") as stream:
        data = stream.read() if max_bytes is None else stream.read(max_bytes + 1)
    if max_bytes is not None and len(data) > max_bytes:
        raise TraceFormatError(f"{name}: more than the limit of {max_bytes} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise TraceFormatError(f"{name}: not UTF-8 text (byte {error.start})") from None


def load_json(text: str, source: str) -> Any:
    """The JSON of a file's text; `TraceFormatError` naming the file and the rule if not."""
    try:
        return parse_json(text)
    except UnusableJSON as error:
        raise TraceFormatError(f"{source}: {error}") from None


def parse_trace(obj: Any, source: str, *, defer_spans: bool = False) -> Trace:
    """Check a native trace object (already parsed from JSON) and build the `Trace`.

    ``defer_spans``: the events come back without their field spans, which the caller
    checks and builds from ``obj["events"][n]["fields"]`` when it needs them
    (`parse_event_deferring_spans`): what a viewer does to open a large trace quickly.
    """
    if not isinstance(obj, dict):
        raise TraceFormatError(f"{source}: the top level is {json_kind(obj)}, not an object")
    if obj.get("format") != FORMAT:
        if "qlog_version" in obj or "file_schema" in obj:
            raise TraceFormatError(
                f"{source}: this is a qlog file, not an h3learn trace (import it instead)"
            )
        raise TraceFormatError(f"{source}: 'format' is {obj.get('format')!r}, not {FORMAT!r}")
    _check_version(obj, source)
    check_keys(obj, TRACE_KEYS, TRACE_KEYS, source)
    title, created, meta = _check_header(obj, source)
    if created is None:
        raise TraceFormatError(f"{source}: 'created' is missing")
    events_json = obj["events"]
    if not isinstance(events_json, list):
        raise TraceFormatError(f"{source}: 'events' is {json_kind(events_json)}, not a list")
    parse = parse_event_deferring_spans if defer_spans else parse_event
    events = [
        parse(item, f"{source}: event {position}", position)
        for position, item in enumerate(events_json)
    ]
    return Trace(title=title, meta=meta, events=events, created=created)


def parse_journal(text: str, source: str) -> Trace:
    """Check a journal and build the `Trace` of every event that was completely written."""
    lines = text.split("\n")
    header = load_json(lines[0], f"{source}: line 1")
    if not isinstance(header, dict):
        raise TraceFormatError(f"{source}: line 1 is {json_kind(header)}, not a journal header")
    _check_version(header, source)
    check_keys(header, JOURNAL_KEYS - {"created"}, JOURNAL_KEYS, f"{source}: line 1")
    title, created, meta = _check_header(header, f"{source}: line 1")
    warnings = [
        f"{source}: a journal: the capture was not finished (still running, or it stopped"
        " before closing)"
    ]
    events: list[Event] = []
    last = len(lines) - 1
    for position in range(1, len(lines)):
        line = lines[position]
        number = position + 1
        if position == last and line == "":
            break  # the newline that ended the last complete line
        try:
            obj = parse_json(line)
        except UnusableJSON as error:
            if position == last and isinstance(error, NotJSON):
                warnings.append(
                    f"{source}: line {number}: dropped an unfinished event (the capture"
                    " stopped while writing it)"
                )
                break
            raise TraceFormatError(f"{source}: line {number}: {error}") from None
        events.append(parse_event(obj, f"{source}: line {number}", len(events)))
    return Trace(title=title, meta=meta, events=events, created=created, warnings=warnings)


def _check_version(obj: dict[str, Any], source: str) -> None:
    version = obj.get("version")
    if version != VERSION or isinstance(version, bool):
        raise TraceFormatError(
            f"{source}: version {version!r} is not supported (this h3learn reads {VERSION})"
        )


def _check_header(obj: dict[str, Any], source: str) -> tuple[str, str | None, dict[str, Any]]:
    title, meta, created = obj["title"], obj["meta"], obj.get("created")
    if not isinstance(title, str):
        raise TraceFormatError(f"{source}: 'title' is {json_kind(title)}, not a string")
    if not isinstance(meta, dict):
        raise TraceFormatError(f"{source}: 'meta' is {json_kind(meta)}, not an object")
    try:
        check_depth(meta)
    except UnusableJSON as error:
        raise TraceFormatError(f"{source}: 'meta': {error}") from None
    if created is not None:
        if not isinstance(created, str):
            raise TraceFormatError(f"{source}: 'created' is {json_kind(created)}, not a string")
        try:
            datetime.fromisoformat(created)
        except ValueError:
            raise TraceFormatError(f"{source}: 'created' is not an ISO 8601 time") from None
    return title, created, meta
