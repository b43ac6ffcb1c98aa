"""The traces the web UI offers: the built-in examples, and traces saved in the data directory.

Trace ids appear in URLs (``/trace/<id>/step/14``), so they are checked before anything
else: only ``[A-Za-z0-9_-]``, at most 64 characters, and a saved trace's file must resolve
to ``<data dir>/traces/<id>.json`` itself, never a path outside that folder. Examples
(h3learn.scenarios.examples) are recorded once when the library is created and kept in
memory; saved traces are read from disk (strictly, through h3learn.trace.store and
h3learn.trace.load) and kept while their file is unchanged, with their `Replay` so that
stepping does not re-read them: the most recently used ones, up to `CACHE_EVENTS` events
between them (`CACHE_SIZE` traces at most); a deleted capture is dropped (`forget`), and
one being read at that moment is not kept, since its file is looked at again, under the
lock, before an entry read from it is. Uploaded files are converted to a native trace
(`write_trace`, atomic) under a fresh id.

Opening a large saved trace quickly (a 10,000-event trace is some 16 MB, most of it field
spans): a native trace is read with its field spans deferred (`parse_trace(...,
defer_spans=True)`): every other key of every event is checked at once, and the spans of
one step are checked and built the first time that step is shown (`Entry.event`); a span
that breaks a rule is then reported for that step, with the same message `read_trace`
gives. Uploads are checked completely before they are saved. The listing of saved traces
is remembered per file (modification time and size), so the trace list does not re-read
every trace each time it is shown.
"""

from __future__ import annotations

import dataclasses
import gc
import re
import secrets
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from h3learn.events import Event
from h3learn.scenarios.examples import CREATED, EXAMPLES
from h3learn.trace.json_text import UnusableJSON, parse_json, too_deep
from h3learn.trace.load import load_trace
from h3learn.trace.replay import Replay
from h3learn.trace.store import (
    DEFAULT_MAX_BYTES,
    FORMAT,
    Trace,
    now_iso,
    parse_trace,
    read_text_limited,
    write_trace,
)
from h3learn.trace.stored_events import TraceFormatError, parse_spans
from h3learn.web.present import search_text, stream_type_of, stream_types, summary_of

TRACE_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
#: A step number in a URL (more digits than this is no step of any trace).
STEP_TEXT = re.compile(r"-?[0-9]{1,12}")

#: Saved traces kept parsed in memory, the least recently used dropped first: at most
#: CACHE_SIZE of them, with at most CACHE_EVENTS events between them. A trace read from its
#: file holds some 5 KiB per event once stepped through (its deferred field spans, rows and
#: replay snapshots), so a 10,000-event capture is some 50 MiB and the events, not the
#: count, are what bounds the memory: 40,000 events are some 200 to 240 MiB. The trace
#: opened last is kept whatever its size.
CACHE_SIZE = 16
CACHE_EVENTS = 40_000


class UnknownTrace(LookupError):
    """No trace has this id (or the id is not a valid one)."""


def no_such_step(trace_id: str, count: int, step: int | str) -> str:
    """Why ``step`` (a number, or the text a URL gave) is not a step of a trace of ``count``
    events, in words."""
    if count == 0:
        return (
            f"trace {trace_id!r} has no steps: no event was recorded (a capture whose"
            " connection or server stopped before its first event keeps only its title)"
        )
    return f"trace {trace_id!r} has steps 0 to {count - 1}, not {shown_step(step)}"


def step_in_url(text: str) -> int | str:
    """A step number as a URL gives it: the number for digits (a minus sign allowed, so
    that -1 is answered as out of range), else the text itself, which is no step."""
    return int(text) if STEP_TEXT.fullmatch(text) else text


def shown_step(step: int | str) -> str:
    """A step for a message: the number, or the text quoted (at most 40 characters)."""
    return str(step) if isinstance(step, int) else repr(step[:40])


class UnreadableTrace(UnknownTrace):
    """A trace file with this id exists but cannot be shown; the message says why."""


@dataclass
class Entry:
    """One trace, ready to be listed, summarised and replayed.

    ``trace.events`` of a saved trace read with deferred spans have ``fields=()``; `event`
    gives a step in full and `full_trace` the whole trace (see the module docstring).
    """

    id: str
    kind: str  # "example" or "saved"
    trace: Trace
    description: str = ""
    source_kind: str = "native"
    #: For a trace read with deferred spans: each event's stored "fields", until built.
    deferred_spans: list[Any] | None = None
    #: The file name error messages about deferred spans start with.
    source: str = ""
    _full: dict[int, Event] = field(default_factory=dict)
    _replay: Replay | None = None
    _summaries: list[dict[str, Any]] | None = None
    _search: list[str] | None = None
    _types: dict[int, str] | None = None
    _observed: set[str] | None = None
    _streams: set[int] | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def events(self) -> list[Event]:
        """The events, without their field spans if those are deferred (see `event`)."""
        return self.trace.events

    def event(self, step: int) -> Event:
        """Event ``step`` with its field spans; `TraceFormatError` if a stored span is invalid."""
        if self.deferred_spans is None:
            return self.events[step]
        with self._lock:
            if step not in self._full:
                light = self.events[step]
                where = f"{self.source}: event {step}"
                spans = parse_spans(self.deferred_spans[step], len(light.raw), where)
                self._full[step] = dataclasses.replace(light, fields=spans)
                self.deferred_spans[step] = None
            return self._full[step]

    def full_trace(self) -> Trace:
        """The trace with every event's field spans (for downloads)."""
        if self.deferred_spans is None:
            return self.trace
        events = [self.event(step) for step in range(len(self.events))]
        return dataclasses.replace(self.trace, events=events)

    @property
    def types(self) -> dict[int, str]:
        """Each stream's type, as far as the trace says (`present.stream_types`)."""
        with self._lock:
            return self._known_types()

    def _known_types(self) -> dict[int, str]:
        """`types`, for a caller that holds the lock (a live capture's grow as it does)."""
        if self._types is None:
            self._types = stream_types(self.events)
        return self._types

    @property
    def observed(self) -> list[str]:
        """The endpoints the trace has events of (a live capture records the server only)."""
        with self._lock:
            if self._observed is None:
                self._observed = {event.endpoint for event in self.events}
            return sorted(self._observed)

    @property
    def streams(self) -> list[int]:
        """The IDs of the streams the trace has events on, in order (kept current as it grows)."""
        with self._lock:
            if self._streams is None:
                self._streams = {e.stream_id for e in self.events if e.stream_id is not None}
            return sorted(self._streams)

    def replay(self) -> Replay:
        with self._lock:
            if self._replay is None:
                self._replay = Replay(self.events, on_demand=True)
            return self._replay

    def state_after(self, step: int) -> dict[str, Any]:
        replay = self.replay()
        with self._lock:  # a Replay continues from its last answer: one caller at a time
            return replay.state_after(step)

    def summaries(self) -> list[dict[str, Any]]:
        """Every step's diagram row, made once, for a filter or a search (a page without
        either makes its own rows, `rows`); under the lock, since such requests and the live
        pump can come together, and each would otherwise make them all."""
        with self._lock:
            if self._summaries is None:
                types = self._known_types()
                self._summaries = [summary_of(event, types) for event in self.events]
            return self._summaries

    def rows(self, start: int, stop: int) -> list[dict[str, Any]]:
        """The diagram rows of steps ``start`` to ``stop - 1`` (made now unless all are)."""
        with self._lock:
            if self._summaries is not None:
                return self._summaries[start:stop]
            types = self._known_types()
            return [summary_of(event, types) for event in self.events[start:stop]]

    def search_texts(self) -> list[str]:
        with self._lock:
            if self._search is None:
                self._search = [search_text(event) for event in self.events]
            return self._search

    def extend(self, events: list[Event], at: int | None = None) -> None:
        """Append events recorded since (a live capture, h3learn/web/live.py); caches grow too.

        ``at``: the step the first of ``events`` is; those the entry already has are left
        out (the live pump and a page's request may catch up with a capture together).
        A stream whose type only now becomes known (its ``stream_type_set`` came after the
        transport's first bytes on it) has its earlier rows retyped.
        """
        with self._lock:
            if at is not None:
                have = len(self.trace.events)
                if at > have:
                    raise ValueError(f"events from step {at} cannot follow steps 0 to {have - 1}")
                events = events[have - at :]
            if not events:
                return
            self.trace.events.extend(events)
            if self._replay is not None:
                self._replay.extend(events)
            if self._types is not None:
                retyped = {}
                for stream_id, stream_type in stream_types(events).items():
                    if stream_id not in self._types:
                        self._types[stream_id] = stream_type
                        if stream_type != stream_type_of(stream_id, {}):
                            retyped[stream_id] = stream_type
                if retyped and self._summaries is not None:
                    for row in self._summaries:
                        if row["stream_id"] in retyped:
                            row["stream_type"] = retyped[row["stream_id"]]
            if self._summaries is not None:
                types = self._known_types()
                self._summaries.extend(summary_of(event, types) for event in events)
            if self._search is not None:
                self._search.extend(search_text(event) for event in events)
            if self._observed is not None:
                self._observed.update(event.endpoint for event in events)
            if self._streams is not None:
                self._streams.update(e.stream_id for e in events if e.stream_id is not None)

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

    def __init__(
        self, data_dir: Path, *, max_bytes: int, read_max_bytes: int = DEFAULT_MAX_BYTES
    ) -> None:
        self.traces_dir = (data_dir / "traces").resolve()
        self.traces_dir.mkdir(parents=True, exist_ok=True)
        #: The largest upload accepted.
        self.max_bytes = max_bytes
        #: The largest trace file read from the data directory: larger than an upload, since
        #: a live capture of 10,000 events, or a trace written here, may well be.
        self.read_max_bytes = max(read_max_bytes, max_bytes)
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
        #: The listing of each saved trace, kept longer than the entries (it is small).
        self._listings: dict[str, tuple[tuple[int, int], dict[str, Any]]] = {}
        self._lock = threading.Lock()
        #: Other places ids are looked up in before the saved traces (lessons,
        #: h3learn/web/lessons.py; live captures, h3learn/web/live.py): each answers an
        #: `Entry`, the `Path` of a trace file to read, or None if the id is not one of its own.
        self.sources: list[Callable[[str], Entry | Path | None]] = []

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
        for source in self.sources:
            found = source(trace_id)
            if isinstance(found, Entry):
                return found
            if found is not None:
                return self.read_file(trace_id, found)
        return self.read_file(trace_id, self.path_of(trace_id))

    def read_file(self, trace_id: str, path: Path) -> Entry:
        """The entry of a trace file (kept while the file is unchanged)."""
        try:
            stamp = _stamp(path)
        except OSError:
            raise UnknownTrace(trace_id) from None
        with self._lock:
            cached = self._saved.get(trace_id)
            if cached is not None and cached[0] == stamp:
                self._saved[trace_id] = self._saved.pop(trace_id)  # most recently used
                return cached[1]
        try:
            entry = self._read(trace_id, path)
        except (TraceFormatError, OSError) as error:
            raise UnreadableTrace(f"trace {trace_id!r} cannot be shown: {error}") from None
        except RecursionError:  # a safety net: the readers check nesting (json_text.py)
            raise UnreadableTrace(f"trace {trace_id!r} cannot be shown: {too_deep()}") from None
        self._remember(stamp, entry, path)
        return entry

    def _read(self, trace_id: str, path: Path) -> Entry:
        """A saved trace: a native one with its spans deferred, any other kind in full."""
        with _cyclic_gc_paused():
            text = read_text_limited(path, self.read_max_bytes)
            try:
                document = parse_json(text)
            except UnusableJSON:
                document = None  # a journal (JSON Lines), or not JSON: load_trace says which
            if isinstance(document, dict) and document.get("format") == FORMAT:
                trace = parse_trace(document, path.name, defer_spans=True)
                spans = [item["fields"] for item in document["events"]]
                return Entry(trace_id, "saved", trace, deferred_spans=spans, source=path.name)
            source_kind, trace = load_trace(path, max_bytes=self.read_max_bytes)
            return Entry(trace_id, "saved", trace, source_kind=source_kind)

    def _remember(self, stamp: tuple[int, int], entry: Entry, path: Path) -> None:
        """Keep an entry just read from ``path``, unless the file changed or went meanwhile.

        A capture deleted while it was being read has its file removed first and is then
        forgotten (`forget`); looking at the file here, under the lock, keeps such an entry
        from coming back into the cache after `forget` ran.
        """
        with self._lock:
            try:
                unchanged = _stamp(path) == stamp
            except OSError:
                unchanged = False
            if not unchanged:
                return
            self._saved.pop(entry.id, None)
            self._saved[entry.id] = (stamp, entry)
            self._listings[entry.id] = (stamp, entry.listing())
            events = sum(len(kept.events) for _, kept in self._saved.values())
            while len(self._saved) > 1 and (len(self._saved) > CACHE_SIZE or events > CACHE_EVENTS):
                _, dropped = self._saved.pop(next(iter(self._saved)))
                events -= len(dropped.events)

    def forget(self, trace_id: str) -> None:
        """Drop a trace whose file is gone (a deleted capture, h3learn/web/live.py)."""
        with self._lock:
            self._saved.pop(trace_id, None)
            self._listings.pop(trace_id, None)

    def listing(self) -> list[dict[str, Any]]:
        """Examples first, then saved traces newest first; a file that cannot be shown is
        listed with its ``problem``."""
        out = [entry.listing() for entry in self.examples.values()]
        saved: list[dict[str, Any]] = []
        for path in self.traces_dir.glob("*.json"):
            if not valid_id(path.stem) or path.stem in self.examples:
                continue
            try:
                stamp = _stamp(path)
            except OSError:
                continue
            known = self._listings.get(path.stem)
            if known is not None and known[0] == stamp:
                saved.append(known[1])
                continue
            try:
                saved.append(self.get(path.stem).listing())
            except UnreadableTrace as error:
                saved.append(_unreadable_listing(path, str(error)))
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
            # Messages, warnings and meta["files"] name the user's file, not the staging file.
            source_kind, trace = load_trace(staging, max_bytes=self.max_bytes, name=name)
        finally:
            staging.unlink(missing_ok=True)
        if not trace.events:
            # A step view needs a step; a qlog's events may all be of kinds not imported.
            raise TraceFormatError(f"{name}: no events to step through (its event list is empty)")
        meta = dict(trace.meta)
        meta.setdefault("uploaded_as", name)
        title = trace.title or name
        created = trace.created if trace.created is not None else now_iso()
        path = self.path_of(trace_id)
        write_trace(path, title, trace.events, meta, created=created)
        # What was just checked and written, kept as it is (no need to read it back).
        saved = Trace(title, meta, trace.events, created=created, warnings=trace.warnings)
        entry = Entry(trace_id, "saved", saved, source_kind=source_kind)
        self._remember(_stamp(path), entry, path)
        return entry


@contextmanager
def _cyclic_gc_paused() -> Iterator[None]:
    """Python's cycle collector kept away from a trace while it is being read.

    A 10,000-event trace is over a million new objects (dicts, lists, strings), none of them
    in a reference cycle. While they pile up the collector would scan the growing heap
    several times, for cycles that are not there, so it is off during the read.

    Afterwards it scans them once or twice as they age (some 70 and 150 ms for such a
    trace). They are not moved out of its view (``gc.freeze``): that moves everything alive
    at that moment, running connections and their captures too (an `H3Connection`, its
    QUIC connection and its recording refer to each other), and what is frozen is never
    collected, so a capture whose connection ran during a read stayed in memory for good
    once it ended (tests/web/test_library.py).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _unreadable_listing(path: Path, problem: str) -> dict[str, Any]:
    """A saved file that cannot be shown is listed with the reason, not left out."""
    return {
        "id": path.stem,
        "title": path.name,
        "kind": "saved",
        "description": "",
        "created": None,
        "events": 0,
        "problem": problem,
    }


def _stamp(path: Path) -> tuple[int, int]:
    """What says a file changed: its modification time and size."""
    stat = path.stat()
    return (stat.st_mtime_ns, stat.st_size)


def _display_name(filename: str) -> str:
    """The last part of a browser-supplied file name, for display only (never a path)."""
    return re.split(r"[\\/]", filename)[-1][:200]
