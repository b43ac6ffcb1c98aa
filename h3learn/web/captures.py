"""Captures in the web UI: opening one in the step view while it grows, and the live service.

`CaptureEntries` is a source of the trace library (`TraceLibrary.sources`): a capture id
(``cap-...``) opens in the normal step-through view, with its bytes, state and RFC
sections, during the connection and after it. A running capture is an `Entry` over the
events the capture has so far (in memory, `LiveCapture.events`); each time it is asked for,
and each time the pump below runs, it is extended by the events that arrived since
(`Entry.extend`, which also extends its `Replay`), so opening and stepping cost no more
than for a saved trace. A finished capture is read from its file like a saved trace.

`LiveService` ties one app to one `CaptureHub`: the recording endpoint (when `h3learn serve`
runs one), the readable client's fetches, the entries, and the *pump*, a thread that waits
for the hub to report changes and then sends them to the browsers over Socket.IO
(h3learn/web/live_socket.py), at most once every ``batch_seconds`` (100 ms by default), so
a client sending hundreds of requests costs the pages ten small messages a second, not a
message per event.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from h3learn.capture.endpoint import LiveEndpoint
from h3learn.capture.fetcher import Fetcher
from h3learn.capture.hub import CaptureHub, LiveCapture
from h3learn.trace.captures import LIVE, CaptureStore, is_capture_id
from h3learn.trace.store import Trace
from h3learn.web.library import Entry, TraceLibrary, UnreadableTrace

#: Finished captures kept open after they were watched live: the most recently looked up
#: ones, at most KEEP_FINISHED of them with at most KEEP_FINISHED_EVENTS events between them
#: (the rest are read from disk, and kept by the library's cache as any saved trace). The
#: one looked up last is kept whatever its size, as the library keeps the trace it opened last.
KEEP_FINISHED = 8
KEEP_FINISHED_EVENTS = 40_000
#: A batch with more new rows than this sends only the count; pages fetch what they show.
MAX_ROWS_PER_BATCH = 500
DEFAULT_BATCH_SECONDS = 0.1

Emit = Callable[[str, dict[str, Any], str], None]


class CaptureEntries:
    """Capture ids for the trace library: live ones from memory, finished ones from disk."""

    def __init__(self, hub: CaptureHub, library: TraceLibrary) -> None:
        self.hub = hub
        self.library = library
        self._open: OrderedDict[str, tuple[Entry, LiveCapture]] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, trace_id: str) -> Entry | None:
        """The library's source: an `Entry` for a capture id, None for any other id."""
        if not is_capture_id(trace_id):
            return None
        with self._lock:
            known = self._open.get(trace_id)
            if known is None:
                capture = self.hub.live(trace_id)
                if capture is not None:
                    trace = Trace(capture.title, dict(capture.meta), [], created=capture.started)
                    known = (Entry(trace_id, "capture", trace), capture)
                    self._open[trace_id] = known
            else:
                self._open.move_to_end(trace_id)
        self._forget_finished()
        if known is None:
            store = self.hub.store
            if not store.exists(trace_id):
                return None
            try:
                entry = self.library.read_file(trace_id, store.path_of(trace_id))
            except UnreadableTrace:
                # Damaged since it was summarised: its summary is dropped, so the list
                # reads the file again and shows it as unreadable (or, mended, as it was).
                store.update_info(trace_id, summary=None)
                raise
            entry.kind = "capture"
        else:
            entry, capture = known
            self._catch_up(entry, capture)
        title = self.hub.store.info(trace_id).get("title")
        if title:
            entry.trace.title = title
        return entry

    def sync(self, capture_id: str) -> tuple[int, int, Entry] | None:
        """Bring an open capture up to date: (count before, count after, entry)."""
        with self._lock:
            known = self._open.get(capture_id)
        if known is None:
            return None
        entry, capture = known
        before = len(entry.events)
        self._catch_up(entry, capture)
        return before, len(entry.events), entry

    def _catch_up(self, entry: Entry, capture: LiveCapture) -> None:
        have, available = len(entry.events), len(capture.events)
        if available > have:
            entry.extend(capture.events[have:available], at=have)

    def _forget_finished(self) -> None:
        """Keep the finished captures looked up last, within `KEEP_FINISHED` captures and
        `KEEP_FINISHED_EVENTS` events; run at every lookup, so that captures watched live
        and finished since do not stay open."""
        with self._lock:
            finished = [
                (key, len(entry.events))
                for key, (entry, capture) in self._open.items()
                if capture.state != LIVE
            ]
            kept, events = len(finished), sum(count for _, count in finished)
            for key, count in finished[:-1]:  # the oldest first; the newest always stays
                if kept <= KEEP_FINISHED and events <= KEEP_FINISHED_EVENTS:
                    break
                del self._open[key]
                kept -= 1
                events -= count

    def forget(self, capture_id: str) -> None:
        """A deleted capture: dropped here and from the library's cache."""
        with self._lock:
            self._open.pop(capture_id, None)
        self.library.forget(capture_id)


class LiveService:
    """One app's captures, endpoint, fetcher and pump (see the module docstring)."""

    def __init__(
        self,
        store: CaptureStore,
        library: TraceLibrary,
        *,
        max_events: int,
        batch_seconds: float = DEFAULT_BATCH_SECONDS,
        fetch_timeout: float = 10.0,
    ) -> None:
        self.hub = CaptureHub(store, max_events=max_events)
        self.entries = CaptureEntries(self.hub, library)
        library.sources.append(self.entries)
        self.fetcher = Fetcher(self.hub, timeout=fetch_timeout)
        self.endpoint: LiveEndpoint | None = None
        self.batch_seconds = batch_seconds
        #: capture id -> the Socket.IO session ids watching it (h3learn/web/live_socket.py).
        self.watchers: dict[str, set[str]] = {}
        self.watch_lock = threading.Lock()
        self._emit: Emit | None = None
        self._pump: threading.Thread | None = None
        self._stopping = threading.Event()
        #: How many batches and rows the pump sent (benchmarks/live_capture.py reads them).
        self.batches = 0
        self.rows_sent = 0

    def attach_endpoint(self, endpoint: LiveEndpoint) -> None:
        self.endpoint = endpoint
        if endpoint.address is not None and endpoint.cert_path is not None:
            self.fetcher.trusted_origin = (endpoint.address[1], endpoint.cert_path)

    def rows(self) -> list[dict[str, Any]]:
        rows = self.hub.rows()
        rows.sort(key=lambda row: (str(row.get("started") or ""), row["id"]), reverse=True)
        return rows

    # -- the pump ------------------------------------------------------------------------

    def start_pump(self, emit: Emit) -> None:
        """Start sending changes through ``emit(event, payload, room)`` (once; idempotent)."""
        with self.watch_lock:
            if self._pump is not None:
                return
            self._emit = emit
            self._pump = threading.Thread(target=self._run, name="h3learn-live-pump", daemon=True)
            self._pump.start()

    def close(self, timeout: float = 5.0) -> None:
        """Stop the pump (the endpoint is stopped by whoever started it)."""
        self._stopping.set()
        self.hub.wake()
        if self._pump is not None:
            self._pump.join(timeout)

    def _run(self) -> None:
        while not self._stopping.is_set():
            changed, removed, refused = self.hub.wait_for_changes(1.0)
            if self._stopping.is_set():
                return
            if not changed and not removed and not refused:
                continue
            began = time.monotonic()
            try:
                self.send_changes(changed, removed)
            except Exception as error:  # a bad capture must not end live updates for all
                print(f"h3learn: live updates: {error!r}")
            pause = self.batch_seconds - (time.monotonic() - began)
            if pause > 0:
                self._stopping.wait(pause)

    def send_changes(self, changed: set[str], removed: set[str]) -> None:
        """One batch: the list's changed rows (and the refused count), then new steps."""
        emit = self._emit
        if emit is None:
            return
        rows = []
        for capture_id in sorted(changed):
            if self.hub.live(capture_id) is not None or self.hub.store.exists(capture_id):
                rows.append(self.hub.row(capture_id))
        emit(
            "captures",
            {"captures": rows, "removed": sorted(removed), "refused": self.hub.refused},
            "captures",
        )
        with self.watch_lock:
            watched = [key for key in changed if self.watchers.get(key)]
        for capture_id in watched:
            synced = self.entries.sync(capture_id)
            if synced is None:
                continue
            before, after, entry = synced
            live = self.hub.live(capture_id) is not None
            new_rows = (
                entry.summaries()[before:after] if after - before <= MAX_ROWS_PER_BATCH else []
            )
            emit(
                "events",
                {
                    "capture": capture_id,
                    "from": before,
                    "count": after,
                    "state": LIVE if live else "closed",
                    "rows": new_rows,
                },
                f"capture:{capture_id}",
            )
            self.rows_sent += len(new_rows)
        self.batches += 1


def live_service(store_dir: Path, library: TraceLibrary, config: dict[str, Any]) -> LiveService:
    """The service `create_app` makes, after finishing captures a stopped process left."""
    store = CaptureStore(store_dir)
    store.recover()
    return LiveService(
        store,
        library,
        max_events=int(config.get("LIVE_MAX_EVENTS") or 10_000),
        batch_seconds=float(config.get("LIVE_BATCH_SECONDS") or DEFAULT_BATCH_SECONDS),
        fetch_timeout=float(config.get("LIVE_FETCH_TIMEOUT") or 10.0),
    )
