"""What the list of captures shows about one connection, read from its events alone.

A capture is one HTTP/3 connection seen from one endpoint: the server `h3learn serve` runs
(a browser, ngtcp2 or niquests connected to it) or the project's own client (a fetch from
the Live page). `ConnectionSummary` is fed the events one at a time, while the connection
runs or when a saved capture is read again, and answers:

- ``view``: whose events these are (``server`` or ``client``);
- ``requests``: request streams opened (RFC 9114 §6.1: every client-initiated
  bidirectional stream carries one request), counted in the events of ``view`` (a trace
  of both endpoints, such as an example, would otherwise count each twice), less those
  the server rejected unprocessed, which are ``rejected``: reset with H3_REQUEST_REJECTED
  (RFC 9114 §4.1.1), e.g. a request that came after the server's GOAWAY (§5.2). So
  ``requests`` counts what the server took on, ``requests + rejected`` what was sent;
- ``user_agent``: the ``user-agent`` field of the first request (RFC 9110 §10.1.5), as the
  server's QPACK decoder recovered it (or as this client's encoder sent it), and
  ``server_software``: the ``server`` field of the first response (RFC 9110 §10.2.4);
- ``peer_settings``: the SETTINGS the peer announced (RFC 9114 §7.2.4);
- ``errors``: stream and connection errors, each as one line (``H3_FRAME_UNEXPECTED: ...``);
- ``closed``: how the connection ended (a ``connection_closed`` or ``connection_error``;
  ``idle timeout`` when QUIC dropped a silent connection, which is not counted as an error;
  ``never established: connection refused`` and the like after a ``connection_failed``,
  a client whose handshake never completed: see `never_established`).

Nothing here parses bytes: headers come from ``headers_decoded`` / ``headers_encoded``
events, SETTINGS from ``parameters_set`` (docs/events.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from h3learn.events import Event
from h3learn.h3.errors import ErrorCode

#: ``closed`` of a connection whose handshake never completed starts with this.
NEVER_ESTABLISHED = "never established"
#: At most this many error lines are kept (the count goes on).
MAX_ERROR_LINES = 20


def _is_request_section(event: Event) -> bool:
    """A request's field section, from the endpoint's own point of view."""
    return (event.endpoint, event.name) in (
        ("server", "headers_decoded"),
        ("client", "headers_encoded"),
    )


def _is_response_section(event: Event) -> bool:
    return (event.endpoint, event.name) in (
        ("client", "headers_decoded"),
        ("server", "headers_encoded"),
    )


def header_value(event: Event, name: str) -> str | None:
    """The value of the first field line called ``name`` in a headers event, or None."""
    headers = event.data.get("headers")
    if not isinstance(headers, list):
        return None
    for header in headers:
        if isinstance(header, dict) and header.get("name") == name:
            value = header.get("value")
            return value if isinstance(value, str) else None
    return None


@dataclass
class ConnectionSummary:
    """The running summary of one connection's events; see the module docstring."""

    view: str | None = None
    events: int = 0
    requests: int = 0
    rejected: int = 0
    user_agent: str | None = None
    server_software: str | None = None
    peer_settings: list[dict[str, Any]] | None = None
    error_count: int = 0
    errors: list[str] = field(default_factory=list)
    #: ``code_name`` of the close, once the connection has ended (None while it runs).
    closed: str | None = None
    #: The request streams counted in ``requests`` (a rejection moves one to ``rejected``).
    _request_streams: set[int] = field(default_factory=set, repr=False)

    def add(self, event: Event) -> None:
        """Take one more event into account."""
        self.events += 1
        if self.view is None:
            self.view = event.endpoint
        name = event.name
        if name == "stream_type_set" and event.data.get("stream_type") == "request":
            if event.endpoint == self.view and event.stream_id is not None:
                self.requests += event.stream_id not in self._request_streams
                self._request_streams.add(event.stream_id)
        elif name in ("headers_decoded", "headers_encoded"):
            if self.user_agent is None and _is_request_section(event):
                self.user_agent = header_value(event, "user-agent")
            if self.server_software is None and _is_response_section(event):
                self.server_software = header_value(event, "server")
        elif name == "parameters_set" and event.data.get("owner") == "remote":
            if self.peer_settings is None:
                self.peer_settings = [
                    {"name": str(item.get("name")), "value": item.get("value")}
                    for item in event.data.get("settings", [])
                    if isinstance(item, dict)
                ]
        elif name == "connection_error" and _idle_timeout(event):
            self.closed = "idle timeout"
        elif name in ("stream_error", "connection_error"):
            rejected = self._rejected_request(event) if name == "stream_error" else None
            if rejected is not None:
                self._request_streams.discard(rejected)
                self.requests -= 1
                self.rejected += 1
            self.error_count += 1
            if len(self.errors) < MAX_ERROR_LINES:
                self.errors.append(_error_line(event))
            if name == "connection_error":
                self.closed = str(event.data.get("code_name", "error"))
        elif name == "connection_closed":
            self.closed = str(event.data.get("code_name", "closed"))
        elif name == "connection_failed":
            self.closed = f"{NEVER_ESTABLISHED}: {event.data.get('cause', 'no handshake')}"

    def _rejected_request(self, event: Event) -> int | None:
        """The counted request a ``stream_error`` rejects unprocessed (RFC 9114 §4.1.1)."""
        data = event.data
        stream_id = event.stream_id
        if event.endpoint != self.view or stream_id not in self._request_streams:
            return None
        if data.get("code") == ErrorCode.H3_REQUEST_REJECTED:
            return stream_id
        return stream_id if data.get("code_name") == "H3_REQUEST_REJECTED" else None

    @property
    def never_established(self) -> bool:
        """The connection's handshake never completed (the trace ends in ``connection_failed``)."""
        return (self.closed or "").startswith(NEVER_ESTABLISHED)

    def add_all(self, events: list[Event]) -> ConnectionSummary:
        for event in events:
            self.add(event)
        return self

    def settings_text(self) -> str:
        """``QPACK_MAX_TABLE_CAPACITY=65536, ...`` (empty until the peer's SETTINGS came)."""
        return ", ".join(f"{item['name']}={item['value']}" for item in self.peer_settings or [])

    def to_json(self) -> dict[str, Any]:
        return {
            "view": self.view,
            "events": self.events,
            "requests": self.requests,
            "rejected": self.rejected,
            "user_agent": self.user_agent,
            "server_software": self.server_software,
            "peer_settings": self.peer_settings,
            "settings_text": self.settings_text(),
            "error_count": self.error_count,
            "errors": list(self.errors),
            "closed": self.closed,
        }


def _idle_timeout(event: Event) -> bool:
    """QUIC dropped a silent connection (RFC 9000 §10.1): an ending, not a broken rule.

    aioquic reports it as a close with INTERNAL_ERROR and the reason "Idle timeout"; the
    trace keeps what QUIC said, the list calls it what it is.
    """
    return event.data.get("layer") == "quic" and event.data.get("rule") == "Idle timeout"


def _error_line(event: Event) -> str:
    data = event.data
    where = f"stream {event.stream_id}: " if event.stream_id is not None else ""
    rule = data.get("rule") or ""
    return f"{where}{data.get('code_name', 'error')}" + (f": {rule}" if rule else "")
