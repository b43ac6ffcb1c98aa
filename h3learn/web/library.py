"""The traces the web UI offers: the built-in examples, and traces saved in the data directory.

Trace ids appear in URLs (``/trace/<id>/step/14``), so they are checked before anything
else: only ``[A-Za-z0-9_-]``, at most 64 characters, and a saved trace's file must resolve
to ``<data dir>/traces/<id>.json`` itself, never a path outside that folder. Examples
(h3learn.scenarios.examples) are recorded once when the library is created and kept in
memory; saved traces are read from disk (strictly, through h3learn.trace.load) and kept
while their file is unchanged, with their `Replay` so that stepping does not re-read them.
Uploaded files are converted to a native trace (`write_trace`, atomic) under a fresh id.
"""

from __future__ import annotations

import re
import secrets
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from h3learn.events import Event
from h3learn.scenarios.examples import CREATED, EXAMPLES
from h3learn.trace.load import load_trace
from h3learn.trace.replay import Replay
from h3learn.trace.store import Trace, TraceFormatError, write_trace
from h3learn.web.present import search_text, stream_types, summary_of

TRACE_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")

#: Saved traces kept parsed in memory (the least recently used one is dropped first).
CACHE_SIZE = 16


class UnknownTrace(LookupError):
    """No trace has this id (or the id is not a valid one)."""


@dataclass
class Entry:
    """One trace, ready to be listed, summarised and replayed."""

    id: str
    kind: str  # "example" or "saved"
    trace: Trace
    description: str = ""
    source_kind: str = "native"
    _replay: Replay | None = None
    _summaries: list[dict[str, Any]] | None = None
    _search: list[str] | None = None
    _types: dict[int, str] | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def events(self) -> list[Event]:
        return self.trace.events

    @property
    def types(self) -> dict[int, str]:
        if self._types is None:
            self._types = stream_types(self.events)
        return self._types

    def replay(self) -> Replay:
        with self._lock:
            if self._replay is None:
                self._replay = Replay(self.events)
            return self._replay

    def state_after(self, step: int) -> dict[str, Any]:
        replay = self.replay()
        with self._lock:  # a Replay continues from its last answer: one caller at a time
            return replay.state_after(step)

    def summaries(self) -> list[dict[str, Any]]:
        if self._summaries is None:
            types = self.types
            self._summaries = [summary_of(event, types) for event in self.events]
        return self._summaries

    def search_texts(self) -> list[str]:
        if self._search is None:
            self._search = [search_text(event) for event in self.events]
        return self._search

    def listing(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.trace.title,
            "kind": self.kind,
            "description": self.description,
            "created": self.trace.created,
            "events": len(self.events),
        }


def valid_id(trace_id: str) -> bool:
    return TRACE_ID.fullmatch(trace_id) is not None


class TraceLibrary:
    """Examples and saved traces, looked up by id."""

    def __init__(self, data_dir: Path, *, max_bytes: int) -> None:
        self.traces_dir = (data_dir / "traces").resolve()
        self.traces_dir.mkdir(parents=True, exist_ok=True)
        self.max_bytes = max_bytes
        self.examples: dict[str, Entry] = {}
        for example in EXAMPLES:
            trace = Trace(
                title=example.title,
                meta={"source": "h3learn.scenarios.examples", "example": example.id},
                events=example.record(),
                created=CREATED,
            )
            self.examples[example.id] = Entry(
                example.id, "example", trace, description=example.description
            )
        self._saved: dict[str, tuple[tuple[int, int], Entry]] = {}
        self._lock = threading.Lock()

    def path_of(self, trace_id: str) -> Path:
        """The file of a saved trace; `UnknownTrace` for an id that could escape the folder."""
        if not valid_id(trace_id):
            raise UnknownTrace(trace_id)
        path = (self.traces_dir / f"{trace_id}.json").resolve()
        if path.parent != self.traces_dir:
            raise UnknownTrace(trace_id)
        return path

    def get(self, trace_id: str) -> Entry:
        if not valid_id(trace_id):
            raise UnknownTrace(trace_id)
        if trace_id in self.examples:
            return self.examples[trace_id]
        path = self.path_of(trace_id)
        try:
            stat = path.stat()
        except OSError:
            raise UnknownTrace(trace_id) from None
        stamp = (stat.st_mtime_ns, stat.st_size)
        with self._lock:
            cached = self._saved.get(trace_id)
            if cached is not None and cached[0] == stamp:
                self._saved[trace_id] = self._saved.pop(trace_id)  # most recently used
                return cached[1]
        try:
            source_kind, trace = load_trace(path, max_bytes=self.max_bytes)
        except (TraceFormatError, OSError):
            raise UnknownTrace(trace_id) from None
        entry = Entry(trace_id, "saved", trace, source_kind=source_kind)
        with self._lock:
            self._saved[trace_id] = (stamp, entry)
            while len(self._saved) > CACHE_SIZE:
                self._saved.pop(next(iter(self._saved)))
        return entry

    def listing(self) -> list[dict[str, Any]]:
        """Examples first, then saved traces newest first; unreadable files are left out."""
        out = [entry.listing() for entry in self.examples.values()]
        saved: list[dict[str, Any]] = []
        for path in self.traces_dir.glob("*.json"):
            if not valid_id(path.stem) or path.stem in self.examples:
                continue
            try:
                saved.append(self.get(path.stem).listing())
            except UnknownTrace:
                continue
        saved.sort(key=lambda item: (item["created"] or "", item["id"]), reverse=True)
        return out + saved

    def save_upload(self, data: bytes, filename: str) -> Entry:
        """Check an uploaded file (any kind `load_trace` reads) and save it as a native trace.

        Raises `TraceFormatError` with the reason when the file is not a trace.
        """
        if len(data) > self.max_bytes:
            raise TraceFormatError(
                f"{filename}: {len(data)} bytes, more than the limit of {self.max_bytes}"
            )
        trace_id = f"upload-{secrets.token_hex(6)}"
        staging = self.traces_dir / f".{trace_id}.upload"
        name = _display_name(filename) or "upload"
        try:
            staging.write_bytes(data)
            source_kind, trace = load_trace(staging, max_bytes=self.max_bytes)
        except TraceFormatError as error:
            # The messages name the file read: say the user's name, not the staging file.
            raise TraceFormatError(str(error).replace(staging.name, name)) from None
        finally:
            staging.unlink(missing_ok=True)
        meta = dict(trace.meta)
        meta.setdefault("uploaded_as", name)
        title = trace.title or name
        write_trace(self.path_of(trace_id), title, trace.events, meta, created=trace.created)
        entry = self.get(trace_id)
        entry.source_kind = source_kind
        entry.trace.warnings.extend(trace.warnings)
        return entry


def _display_name(filename: str) -> str:
    """The last part of a browser-supplied file name, for display only (never a path)."""
    return re.split(r"[\\/]", filename)[-1][:200]
