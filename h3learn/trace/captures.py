"""Captures: every live connection's trace, kept in the data directory.

`h3learn serve` records each HTTP/3 connection it serves, and each fetch made from the Live
page, as a *capture*. This module is where captures live on disk; it knows files and
events, nothing of sockets (the connections are h3learn.capture's business):

    DATA_DIR/captures/<id>.json        the trace: a journal while the connection runs (one
                                       flushed JSON line per event, `LiveTrace`), turned into
                                       a native trace, atomically and in place, when it ends
                                       (docs/events.md, "Trace files")
    DATA_DIR/captures/<id>.info.json   what the capture list shows without reading the
                                       trace: peer, start time, state, the title the user
                                       gave it, and the `ConnectionSummary` once it ended;
                                       every write is atomic (`write_json_atomic`)

Ids look like ``cap-20260102T030405Z-1a2b3c4d`` (UTC start time, 4 random bytes), so they
sort by age and are valid trace ids of the web UI (``[A-Za-z0-9_-]{1,64}``).

What survives what:

- *A clean stop* finishes every capture: native trace, final summary.
- *A kill (-9) or a crash* leaves the journal, whose every complete line is an event; the
  unfinished last line, if any, is dropped (`read_trace`). The next `recover` (run when
  `h3learn serve` starts) turns such a journal into a native trace marked
  ``interrupted``, with its summary. A journal whose writer (``meta.capture_pid``) is still
  running is left alone: it belongs to another live server on the same data directory.
- *A rename* only writes the info file; the trace file is never rewritten for it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import secrets
import unicodedata
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from h3learn.trace.connection_summary import ConnectionSummary
from h3learn.trace.json_text import check_depth, parse_json
from h3learn.trace.store import JOURNAL_FORMAT, read_trace, write_json_atomic, write_trace
from h3learn.trace.stored_events import TraceFormatError

CAPTURE_ID = re.compile(r"cap-[0-9]{8}T[0-9]{6}Z-[0-9a-f]{8}")
INFO_SUFFIX = ".info.json"
#: The longest title a capture may be given, and the characters it may not contain.
MAX_TITLE = 200
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")

#: The states a capture is in: its connection runs; it ended; the process stopped first;
#: it was never established (a fetch whose handshake never completed).
LIVE, CLOSED, INTERRUPTED, FAILED = "live", "closed", "interrupted", "failed"


def is_visible(character: str) -> bool:
    """Does the character show? Not a control or format character (a zero-width space, a
    soft hyphen: Unicode categories C*) and not a separator (a space: Z*)."""
    return unicodedata.category(character)[0] not in "CZ"


class UnknownCapture(LookupError):
    """No capture has this id (or it is not a capture id)."""


class CaptureError(ValueError):
    """A request about a capture that cannot be done; the message says why."""


def is_capture_id(text: str) -> bool:
    return CAPTURE_ID.fullmatch(text) is not None


def new_capture_id(when: datetime | None = None) -> str:
    when = when or datetime.now(UTC)
    return f"cap-{when.strftime('%Y%m%dT%H%M%SZ')}-{secrets.token_hex(4)}"


def _pid_alive(pid: object) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def finished_state(summary: ConnectionSummary) -> str:
    """The state of a capture whose connection ended: ``failed`` if it was never
    established (its trace ends in ``connection_failed``), else ``closed``."""
    return FAILED if summary.never_established else CLOSED


@contextlib.contextmanager
def info_rewrite(directory: Path) -> Iterator[None]:
    """Rewrite info files in ``directory`` one at a time, across threads and processes.

    An info file is rewritten by the web thread (a rename) and by the capture endpoint's
    thread (the state and summary when a connection ends), and several ``h3learn serve``
    processes may share a data directory. Each rewrite reads, changes and writes the whole
    file, so they take turns, or one would undo the other: an exclusive ``flock`` on the
    directory itself, released when its descriptor is closed.
    """
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)


class CaptureStore:
    """The captures folder: paths, info files, rename, delete, and recovery after a crash."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory.resolve()
        self.directory.mkdir(parents=True, exist_ok=True)

    # -- paths -----------------------------------------------------------------------------

    def path_of(self, capture_id: str) -> Path:
        """The trace file of a capture; `UnknownCapture` for anything but a capture id."""
        if not is_capture_id(capture_id):
            raise UnknownCapture(capture_id)
        return self.directory / f"{capture_id}.json"

    def info_path(self, capture_id: str) -> Path:
        return self.path_of(capture_id).with_name(f"{capture_id}{INFO_SUFFIX}")

    def exists(self, capture_id: str) -> bool:
        try:
            return self.path_of(capture_id).is_file()
        except UnknownCapture:
            return False

    def ids(self) -> list[str]:
        """Every capture on disk, newest first."""
        found = [
            path.stem
            for path in self.directory.glob("cap-*.json")
            if not path.name.endswith(INFO_SUFFIX) and is_capture_id(path.stem)
        ]
        return sorted(found, reverse=True)

    # -- the info file ----------------------------------------------------------------------

    def info(self, capture_id: str) -> dict[str, Any]:
        """The info file's contents ({} if it is missing or unreadable)."""
        try:
            obj = parse_json(self.info_path(capture_id).read_text(encoding="utf-8"))
            check_depth(obj)
        except (OSError, ValueError):  # UnusableJSON and UnicodeDecodeError are ValueErrors
            return {}
        return obj if isinstance(obj, dict) else {}

    def update_info(self, capture_id: str, **changes: Any) -> dict[str, Any]:
        with info_rewrite(self.directory):
            info = self.info(capture_id) | changes
            write_json_atomic(self.info_path(capture_id), info)
        return info

    def rename(self, capture_id: str, title: str) -> str:
        """Give a capture a title of its own; returns it, cleaned (`CaptureError` if empty)."""
        if not self.exists(capture_id):
            raise UnknownCapture(capture_id)
        cleaned = _CONTROL.sub(" ", title).strip()
        if not any(is_visible(character) for character in cleaned):
            raise CaptureError("a title needs at least one visible character")
        if len(cleaned) > MAX_TITLE:
            raise CaptureError(f"a title has at most {MAX_TITLE} characters, not {len(cleaned)}")
        self.update_info(capture_id, title=cleaned)
        return cleaned

    def delete(self, capture_id: str) -> None:
        path = self.path_of(capture_id)
        if not path.is_file():
            raise UnknownCapture(capture_id)
        path.unlink()
        self.info_path(capture_id).unlink(missing_ok=True)

    # -- summaries -------------------------------------------------------------------------

    def is_journal(self, capture_id: str) -> bool:
        """Whether the trace file is still a journal (its connection runs, or it was cut off)."""
        try:
            with open(self.path_of(capture_id), encoding="utf-8") as stream:
                first = stream.readline(4096)
        except OSError:
            return False
        return f'"format": "{JOURNAL_FORMAT}"' in first

    def summarize(self, capture_id: str, state: str | None) -> dict[str, Any]:
        """Read the trace, write its summary (and ``state``) into the info file; returns it.

        ``state`` None: the state of a finished connection, as the trace tells it (closed,
        or failed if it was never established).
        """
        trace = read_trace(self.path_of(capture_id), max_bytes=None)
        summary = ConnectionSummary().add_all(trace.events)
        if state is None:
            state = finished_state(summary)
        return self.update_info(
            capture_id,
            original_title=trace.title,
            peer=trace.meta.get("peer_address"),
            started=trace.meta.get("epoch") or trace.created,
            state=state,
            summary=summary.to_json(),
        )

    def row(self, capture_id: str) -> dict[str, Any]:
        """One finished capture as the list shows it (summarised first if it never was).

        A summary from before ``rejected`` was counted apart is made again: its
        ``requests`` still counted the rejected ones.
        """
        info = self.info(capture_id)
        summary = info.get("summary")
        if not isinstance(summary, dict) or "rejected" not in summary:
            try:
                info = self.summarize(capture_id, str(info.get("state") or CLOSED))
            except (OSError, TraceFormatError) as error:
                info = info | {"state": "unreadable", "error": str(error)}
        return capture_row(capture_id, info)

    # -- after a crash ---------------------------------------------------------------------

    def recover(self) -> list[str]:
        """Finish the journals a stopped process left behind; returns their ids.

        Each becomes a native trace (what was completely written) marked ``interrupted``
        in its ``meta.capture_state`` and in the info file. A journal that cannot be read
        at all is left as it is (the list shows it as unreadable).
        """
        recovered = []
        for capture_id in self.ids():
            if not self.is_journal(capture_id):
                if self.info(capture_id).get("state") == LIVE:
                    # Finished, but its info file missed the news (a rename once undid it).
                    with contextlib.suppress(OSError, TraceFormatError):
                        self.summarize(capture_id, None)
                continue
            path = self.path_of(capture_id)
            try:
                trace = read_trace(path, max_bytes=None)
            except (OSError, TraceFormatError):
                continue
            if (
                _pid_alive(trace.meta.get("capture_pid"))
                and trace.meta.get("capture_pid") != os.getpid()
            ):
                continue  # another server on this data directory is still writing it
            meta = trace.meta | {"capture_state": INTERRUPTED, "capture_warnings": trace.warnings}
            write_trace(path, trace.title, trace.events, meta, created=trace.created)
            self.summarize(capture_id, INTERRUPTED)
            recovered.append(capture_id)
        return recovered


def capture_row(capture_id: str, info: dict[str, Any]) -> dict[str, Any]:
    """The list's row from an info file (and, for a live capture, its running summary)."""
    found = info.get("summary")
    summary: dict[str, Any] = found if isinstance(found, dict) else {}
    return {
        "id": capture_id,
        "title": info.get("title") or info.get("original_title") or capture_id,
        "renamed": bool(info.get("title")),
        "peer": info.get("peer"),
        "started": info.get("started"),
        "state": info.get("state") or CLOSED,
        "error": info.get("error"),
        **{
            key: summary.get(key)
            for key in (
                "view",
                "events",
                "requests",
                "rejected",
                "user_agent",
                "server_software",
                "settings_text",
                "error_count",
                "errors",
                "closed",
            )
        },
    }
