"""RFC 9114 §3.3: each connection's recording, and the rest the UDP server and client share.

h3learn runs HTTP/3 on a real UDP socket as a server (udp_server.py) and as a client
(udp_client.py), one `H3Connection` per QUIC connection (RFC 9114 §3.3: a client opens a
connection per origin; the server keeps each one's state apart). Each connection's events go
into their own `ConnectionRecording`: an `EventLog` whose clock is wall-clock milliseconds
since the connection began and, given a path, a journal written as they happen (`LiveTrace`)
and finished into a trace when the connection ends (docs/events.md, "Trace files"). Besides
that, both ends announce the same SETTINGS unless told otherwise, write an address the same
way (IPv4 or IPv6) and describe how a connection was closed the same way.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from aioquic.quic.events import ConnectionTerminated

from h3learn.events import Event, EventLog
from h3learn.h3.errors import code_name
from h3learn.h3.settings import Settings
from h3learn.trace.store import LiveTrace
from h3learn.trace.stored_events import TraceFormatError
from h3learn.transport.quic import close_reason, is_idle_timeout

Header = tuple[bytes, bytes]

#: What `serve` and `fetch` announce unless told otherwise (the values aioquic uses).
DEFAULT_SETTINGS = Settings(qpack_max_table_capacity=4096, qpack_blocked_streams=16)

#: Makes the recording of a new connection from its title and metadata (peer address,
#: connection ID): how `h3learn serve` turns every connection into a capture (h3learn.capture).
RecordingFactory = Callable[[str, dict[str, Any]], "ConnectionRecording"]


# -- one connection's recording -----------------------------------------------------------


class ConnectionRecording:
    """The events of one connection, stamped with wall-clock ms since it began.

    With a ``path``, every event is also appended to a journal there as it happens, and
    `finish` turns it into a native trace (at ``final_path``, or in place).

    ``max_events`` bounds the journal: once it holds that many events `limit_reached` is
    set (the server then closes the connection with H3_EXCESSIVE_LOAD, RFC 9114 §8.1). What
    the packet being handled then still causes, and the close, fit in `CLOSE_MARGIN` more;
    the server hands nothing the peer sends after its close to HTTP/3, so nothing more is
    recorded (transport/udp_server.py). Anything past the margin is counted in
    `dropped_events`, not written.
    """

    #: Events still journalled after `max_events`: the rest of the event being handled
    #: (one QUIC event, a few HTTP/3 steps) and the close that follows.
    CLOSE_MARGIN = 64

    def __init__(
        self,
        title: str,
        meta: dict[str, Any],
        path: Path | None = None,
        final_path: Path | None = None,
        *,
        max_events: int | None = None,
    ) -> None:
        self._began = time.monotonic()
        self.title = title
        self.meta = {"epoch": datetime.now(UTC).isoformat(timespec="milliseconds"), **meta}
        self.log = EventLog(clock=self._elapsed_ms)
        self.final_path = final_path if final_path is not None else path
        self.live: LiveTrace | None = None
        #: Events journalled without their labels, and whether journalling gave up.
        self.dropped_labels = 0
        self.stopped = False
        self.max_events = max_events
        #: Set once the journal holds ``max_events`` events: time to close the connection.
        self.limit_reached = False
        self.dropped_events = 0
        if path is not None:
            self.live = LiveTrace(path, title, self.meta)
            self.log.listeners.append(self._journal)

    def _elapsed_ms(self) -> float:
        return round((time.monotonic() - self._began) * 1000, 3)

    def _journal(self, event: Event) -> None:
        """Append to the journal; a failure never stops the connection.

        An event whose labels break the trace rules (a bug in the layer that made it) is
        kept without its labels, marked in its summary, so one bad span does not cost the
        rest of the capture; the first such event is reported on stderr.
        """
        if self.live is None or self.stopped:
            return
        if self.max_events is not None:
            if self.live.count >= self.max_events + self.CLOSE_MARGIN:
                self.dropped_events += 1
                return
            if self.live.count + 1 >= self.max_events:
                self.limit_reached = True
        written = event
        try:
            try:
                self.live.append(event)
            except TraceFormatError as error:
                self.dropped_labels += 1
                if self.dropped_labels == 1:
                    print(f"h3learn: warning: {error} (kept without its labels)", file=sys.stderr)
                written = replace(
                    event, fields=(), summary=f"{event.summary} [labels dropped: {error}]"
                )
                self.live.append(written)
        except (OSError, ValueError) as error:
            self.stopped = True
            self._warn(f"journal stopped at event {event.seq}: {error}")
            return
        self.journalled(written)

    def journalled(self, event: Event) -> None:
        """Called with each event as it was written to the journal (a hook for subclasses)."""

    def _warn(self, message: str) -> None:
        name = self.live.path.name if self.live is not None else "trace"
        print(f"h3learn: warning: {name}: {message}", file=sys.stderr)

    def finish(self) -> Path | None:
        """Finish the trace file (idempotent); returns its path, or None if not recording."""
        if self.live is None:
            return None
        if self.live.closed:
            return self.final_path
        try:
            path = self.live.close(self.final_path)
            if self.live.count == 0:
                path.unlink()  # nothing happened worth a trace (no HTTP/3, no transport event)
                return None
            return path
        except (OSError, ValueError) as error:
            self._warn(f"not finished (the journal stays): {error}")
            return None


def quiet_aioquic_log() -> None:
    """Keep aioquic's own log lines off the terminal: the commands report failures themselves."""
    logging.getLogger("quic").addHandler(logging.NullHandler())


def format_address(address: Sequence[Any]) -> str:
    """``127.0.0.1:4433`` or ``[::1]:4433``."""
    host, port = str(address[0]), int(address[1])
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def describe_close(event: ConnectionTerminated) -> str:
    """How a connection was closed: an HTTP/3 code, QUIC's own (RFC 9000 §19.19), or no
    code at all: dropped after its idle timeout (RFC 9000 §10.1)."""
    if is_idle_timeout(event):
        return "idle timeout: nothing arrived for the agreed time (RFC 9000 §10.1)"
    if event.frame_type is None:
        reason = f": {event.reason_phrase}" if event.reason_phrase else ""
        return f"{code_name(event.error_code)}{reason}"
    return close_reason(event)
