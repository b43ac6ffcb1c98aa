"""The captures of one `h3learn serve` process: live ones in memory, all of them on disk.

Every connection the recording endpoint serves (h3learn/capture/endpoint.py) and every
fetch made from the Live page (h3learn/capture/fetcher.py) is recorded through a
`CaptureRecording`, which the transport (h3learn/transport/udp_server.py and
udp_client.py) makes through the hub's recording factories. A recording

- journals each event as it happens (the crash-safe journal of `ConnectionRecording`, in
  the captures folder of h3learn/trace/captures.py),
- keeps the events as written in `LiveCapture.events`, so the web UI reads a running
  capture from memory, not from disk, and
- keeps a running `ConnectionSummary` for the list of captures.

Two threads meet here: the asyncio thread of the endpoint appends, the web's threads read.
Appending to a list and reading its length or a slice are atomic in CPython, and each
`LiveCapture` has a lock for the rest. The web does not poll each capture: `wait_for_changes`
blocks until something changed and then says which captures (that is where the batching of
h3learn/web/live.py starts). The hub also counts the connections the endpoint refused at its
limit (`refused`): they have no capture, so the list would not show them otherwise.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from h3learn.events import Event
from h3learn.trace.captures import (
    LIVE,
    CaptureStore,
    capture_row,
    finished_state,
    new_capture_id,
)
from h3learn.trace.connection_summary import ConnectionSummary
from h3learn.transport.udp_shared import ConnectionRecording, RecordingFactory

#: Events one capture may hold before its connection is closed (H3_EXCESSIVE_LOAD).
DEFAULT_MAX_EVENTS = 10_000


@dataclass
class LiveCapture:
    """A capture whose connection is still running."""

    id: str
    title: str
    peer: str | None
    started: str
    meta: dict[str, Any] = field(default_factory=dict)
    #: The events as written to the journal, in order (only ever appended to).
    events: list[Event] = field(default_factory=list)
    summary: ConnectionSummary = field(default_factory=ConnectionSummary)
    state: str = LIVE
    lock: threading.Lock = field(default_factory=threading.Lock)

    def row(self, title: str | None = None) -> dict[str, Any]:
        """The list's row; ``title`` is one the user gave it (the info file's)."""
        with self.lock:
            summary = self.summary.to_json()
        info = {
            "title": title,
            "original_title": self.title,
            "peer": self.peer,
            "started": self.started,
            "state": self.state,
            "summary": summary,
        }
        return capture_row(self.id, info)


class CaptureRecording(ConnectionRecording):
    """One connection's recording, journalled as a capture and visible while it runs."""

    def __init__(self, hub: CaptureHub, capture_id: str, title: str, meta: dict[str, Any]) -> None:
        epoch = datetime.now(UTC).isoformat(timespec="milliseconds")
        meta = meta | {"capture_id": capture_id, "capture_pid": os.getpid(), "epoch": epoch}
        self.hub = hub
        self.capture = LiveCapture(capture_id, title, meta.get("peer_address"), epoch, meta)
        # The hub lists the capture as live before its journal exists: once the file is in
        # the captures folder, a list made from the folder alone would show the journal as
        # a finished capture ("closed", no events) until the hub knew of it.
        hub.began(self.capture)
        try:
            super().__init__(title, meta, hub.store.path_of(capture_id), max_events=hub.max_events)
        except BaseException:
            hub.ended(self, None)
            raise
        self.capture.meta = self.meta

    def journalled(self, event: Event) -> None:
        capture = self.capture
        capture.events.append(event)
        with capture.lock:
            capture.summary.add(event)
        self.hub.touch(capture.id)

    def finish(self) -> Path | None:
        was_open = self.live is not None and not self.live.closed
        path = super().finish()
        if was_open:
            self.hub.ended(self, path)
        return path


class CaptureHub:
    """The captures folder, the live captures, and who wants to hear of their changes."""

    def __init__(self, store: CaptureStore, *, max_events: int = DEFAULT_MAX_EVENTS) -> None:
        self.store = store
        self.max_events = max_events
        self._live: dict[str, LiveCapture] = {}
        self._lock = threading.Lock()
        self._changed: set[str] = set()
        self._removed: set[str] = set()
        self._wakeup = threading.Condition(self._lock)
        #: Connections the endpoint refused at its limit (CONNECTION_REFUSED) since it began.
        self.refused = 0
        self._refused_changed = False

    # -- the transport's side -----------------------------------------------------------

    def recording_factory(self) -> RecordingFactory:
        """What `serve` and `fetch` call for each new connection."""

        def make(title: str, meta: dict[str, Any]) -> ConnectionRecording:
            return CaptureRecording(self, new_capture_id(), capture_title(title, meta), meta)

        return make

    def began(self, capture: LiveCapture) -> None:
        """A connection began: its capture is live (before its journal is written)."""
        self.store.update_info(
            capture.id,
            original_title=capture.title,
            peer=capture.peer,
            started=capture.started,
            state=LIVE,
        )
        with self._lock:
            self._live[capture.id] = capture
        self.touch(capture.id)

    def ended(self, recording: CaptureRecording, path: Path | None) -> None:
        """The connection ended: its trace is final (or, with no event at all, gone).

        A connection that was never established (its trace ends in ``connection_failed``)
        ends as ``failed``, not ``closed``; its events are kept all the same.
        """
        capture = recording.capture
        with capture.lock:
            summary = capture.summary.to_json()
            state = finished_state(capture.summary)
        if path is None:
            self.store.info_path(capture.id).unlink(missing_ok=True)
        else:
            self.store.update_info(capture.id, state=state, summary=summary)
        with self._lock:
            capture.state = state
            self._live.pop(capture.id, None)
            if path is None:
                self._removed.add(capture.id)
            self._changed.add(capture.id)
            self._wakeup.notify_all()

    def connection_refused(self) -> None:
        """The endpoint refused a connection at ``max_connections``: no capture, one more here."""
        with self._lock:
            self.refused += 1
            self._refused_changed = True
            self._wakeup.notify_all()

    def touch(self, capture_id: str) -> None:
        with self._lock:
            self._changed.add(capture_id)
            self._wakeup.notify_all()

    # -- the web's side -----------------------------------------------------------------

    def live(self, capture_id: str) -> LiveCapture | None:
        with self._lock:
            return self._live.get(capture_id)

    def live_ids(self) -> list[str]:
        with self._lock:
            return list(self._live)

    def removed(self, capture_id: str) -> None:
        """A capture was deleted (by the user): tell whoever lists them."""
        with self._lock:
            self._removed.add(capture_id)
            self._wakeup.notify_all()

    def wait_for_changes(self, timeout: float) -> tuple[set[str], set[str], bool]:
        """Block until something changed (or ``timeout``).

        Returns the ids of the captures changed and removed, and whether `refused` grew.
        """
        deadline = time.monotonic() + timeout
        with self._lock:
            while not self._changed and not self._removed and not self._refused_changed:
                left = deadline - time.monotonic()
                if left <= 0 or not self._wakeup.wait(left):
                    break
            changed, removed, refused = self._changed, self._removed, self._refused_changed
            self._changed, self._removed, self._refused_changed = set(), set(), False
        return changed - removed, removed, refused

    def wake(self) -> None:
        """Wake `wait_for_changes` (when the web stops)."""
        with self._lock:
            self._wakeup.notify_all()

    def row(self, capture_id: str) -> dict[str, Any]:
        capture = self.live(capture_id)
        if capture is None:
            return self.store.row(capture_id)
        return capture.row(self.store.info(capture_id).get("title"))

    def rows(self) -> list[dict[str, Any]]:
        """Every capture, newest first: live ones as they are, finished ones from disk."""
        return [self.row(capture_id) for capture_id in self._ids()]

    def _ids(self) -> list[str]:
        ids = set(self.store.ids()) | set(self.live_ids())
        return sorted(ids, reverse=True)


def capture_title(title: str, meta: dict[str, Any]) -> str:
    """A capture's first title: who connected, or whom the readable client fetched from."""
    peer = meta.get("peer_address")
    if peer is None:
        return title
    if meta.get("capture") == "h3learn h3-server":
        return f"Connection from {peer}"
    return f"Readable client to {peer}"
