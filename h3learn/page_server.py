"""RFC 9114 §4.1: the application `h3learn h3-server` and `h3learn serve` answer with.

One request and one response per request stream (RFC 9114 §4.1). What it answers:

- ``GET`` (and ``HEAD``) of any path: a small HTML page listing the request's fields, so a
  learner sees what the client sent (RFC 9114 §4.3.1 pseudo-header fields first);
- ``GET /favicon.ico``: a tiny icon (browsers ask for it by themselves);
- ``POST``: how many bytes of content arrived (RFC 9114 §4.1: the DATA frames);
- any other method: 405 with an ``allow`` field (RFC 9110 §15.5.6).

`PageServer` is sans-IO: it reads the HTTP/3 connection's events and calls its ``send_*``
methods; a transport (`h3learn.transport.udp_server`) carries the bytes, and the commands
(h3learn/h3_server.py, h3learn/capture/endpoint.py) choose its limits.
"""

from __future__ import annotations

import contextlib
import html
import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass

from h3learn.h3.connection import H3Connection, H3UsageError
from h3learn.h3.http_events import (
    DataReceived,
    H3Event,
    HeadersReceived,
    StreamEnded,
    StreamReset,
)

Header = tuple[bytes, bytes]

SERVER_NAME = b"h3learn"
#: RFC 9110 §9.1: the methods this server implements.
ALLOWED_METHODS = (b"GET", b"HEAD", b"POST")


@dataclass
class _Request:
    """A request being received on one request stream (RFC 9114 §4.1)."""

    headers: list[Header]
    #: Bytes of content received so far (the DATA frames' payloads, RFC 9114 §7.2.1).
    body_length: int = 0

    def field_value(self, name: bytes) -> bytes:
        """The value of the first field line named ``name`` (b"" if there is none)."""
        for field_name, value in self.headers:
            if field_name == name:
                return value
        return b""


@dataclass(frozen=True, slots=True)
class Response:
    """What the server answers: a status, its fields and the content."""

    status: int
    content_type: bytes
    body: bytes
    extra_headers: tuple[Header, ...] = ()

    def header_section(self) -> list[Header]:
        """The response's field section: :status first (RFC 9114 §4.3.2)."""
        return [
            (b":status", str(self.status).encode()),
            (b"server", SERVER_NAME),
            (b"content-type", self.content_type),
            (b"content-length", str(len(self.body)).encode()),
            *self.extra_headers,
        ]


#: Limits of one connection unless told otherwise (`h3learn serve` makes them options).
DEFAULT_MAX_REQUESTS = 1000
DEFAULT_MAX_BODY_BYTES = 1024 * 1024


class PageServer:
    """Answers the requests of one HTTP/3 connection; knows nothing of sockets.

    The transport calls `event_received` with every event the connection returns. A
    request is answered once its stream has ended (the whole message is in, RFC 9114 §4.1),
    with a HEADERS frame and, unless the method is HEAD, one DATA frame.

    Two limits, each answered the way HTTP/3 provides for it:

    - ``max_requests`` per connection: with the last one accepted the server sends GOAWAY
      (RFC 9114 §5.2), so the client opens a new connection for more; a request sent
      anyway is rejected unprocessed with H3_REQUEST_REJECTED (done by `H3Connection`);
    - ``max_body_bytes`` of request content: a larger request (by its content-length, or
      as its DATA arrives) is answered at once with 413 Content Too Large (RFC 9110
      §15.5.14), before the rest of its content (RFC 9114 §4.1 allows a response before
      the request is complete); what still arrives on that stream is ignored.
    """

    def __init__(
        self,
        log: Callable[[str], None] = lambda line: None,
        *,
        max_requests: int = DEFAULT_MAX_REQUESTS,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    ) -> None:
        self._requests: dict[int, _Request] = {}
        #: Called with one line per response sent ("GET / → 200, stream 0").
        self.log = log
        self.max_requests = max_requests
        self.max_body_bytes = max_body_bytes
        #: How many responses were sent, and how many requests were accepted.
        self.answered = 0
        self.accepted = 0

    def event_received(self, h3: H3Connection, event: H3Event) -> None:
        if isinstance(event, HeadersReceived):
            if event.push_id is not None or event.interim:
                return
            if event.trailers:
                request = self._requests.get(event.stream_id)
            else:
                request = self._requests[event.stream_id] = _Request(list(event.headers))
                self._accepted(h3)
                if _declared_length(request) > self.max_body_bytes:
                    self._answer(h3, event.stream_id, self._too_large(request))
                    return
            if request is not None and event.stream_ended:
                self._answer(h3, event.stream_id)
        elif isinstance(event, DataReceived):
            request = self._requests.get(event.stream_id)
            if request is None:
                return
            request.body_length += len(event.data)
            if request.body_length > self.max_body_bytes:
                self._answer(h3, event.stream_id, self._too_large(request))
            elif event.stream_ended:
                self._answer(h3, event.stream_id)
        elif isinstance(event, StreamEnded):
            if event.stream_id in self._requests:
                self._answer(h3, event.stream_id)
        elif isinstance(event, StreamReset):
            self._requests.pop(event.stream_id, None)

    def _accepted(self, h3: H3Connection) -> None:
        """Count a new request; the last one allowed is followed by GOAWAY (RFC 9114 §5.2)."""
        self.accepted += 1
        if self.accepted == self.max_requests:
            with contextlib.suppress(H3UsageError):
                h3.send_goaway()
            self.log(f"GOAWAY after {self.accepted} requests (the limit of this connection)")

    def _too_large(self, request: _Request) -> Response:
        size = max(request.body_length, _declared_length(request))
        return Response(
            413,
            b"text/plain; charset=utf-8",
            f"the request content ({size} bytes so far) is larger than this server's limit of"
            f" {self.max_body_bytes} bytes (RFC 9110 §15.5.14)\n".encode(),
        )

    def _answer(self, h3: H3Connection, stream_id: int, response: Response | None = None) -> None:
        request = self._requests.pop(stream_id)
        if response is None:
            response = respond(request)
        head_only = request.field_value(b":method") == b"HEAD"
        try:
            h3.send_headers(stream_id, response.header_section(), end_stream=head_only)
            if not head_only:
                h3.send_data(stream_id, response.body, end_stream=True)
        except H3UsageError:
            return  # the stream was reset or the connection closed meanwhile
        self.answered += 1
        self.log(
            f"{_text(request.field_value(b':method'))} {_text(request.field_value(b':path'))}"
            f" → {response.status} ({len(response.body)} bytes, stream {stream_id})"
        )


def _declared_length(request: _Request) -> int:
    """The content-length a request announced (RFC 9110 §8.6), or 0."""
    text = request.field_value(b"content-length")
    return int(text) if text.isdigit() else 0


def respond(request: _Request) -> Response:
    """The response to a complete request: the whole of this server's behaviour."""
    method = request.field_value(b":method")
    path = request.field_value(b":path")
    if method not in ALLOWED_METHODS:
        return Response(
            405,
            b"text/plain; charset=utf-8",
            f"method {method.decode('latin-1')} is not supported here\n".encode(),
            ((b"allow", b", ".join(ALLOWED_METHODS)),),
        )
    if method == b"POST":
        return Response(
            200,
            b"text/plain; charset=utf-8",
            f"received {request.body_length} bytes\n".encode(),
        )
    if path.split(b"?")[0] == b"/favicon.ico":
        return Response(200, b"image/vnd.microsoft.icon", FAVICON)
    return Response(200, b"text/html; charset=utf-8", page(request))


def page(request: _Request) -> bytes:
    """The HTML page: the request's field lines, escaped (they are untrusted input)."""
    rows = "\n".join(
        f"<tr><th>{_text(name)}</th><td>{_text(value)}</td></tr>" for name, value in request.headers
    )
    return (
        "<!doctype html>\n"
        '<html lang="en"><head><meta charset="utf-8"><title>h3learn</title></head>\n'
        "<body><h1>Hello from h3learn over HTTP/3</h1>\n"
        f"<p>Your {_text(request.field_value(b':method'))} request for"
        f" <code>{_text(request.field_value(b':path'))}</code> arrived in these field lines"
        " (RFC 9114 §4.3.1: pseudo-header fields first):</p>\n"
        f'<table id="request-fields">\n{rows}\n</table>\n'
        "</body></html>\n"
    ).encode()


def _text(value: bytes) -> str:
    return html.escape(value.decode("utf-8", errors="replace"))


def _favicon() -> bytes:
    """A 16x16 icon: an ICO file (one directory entry) holding a PNG image."""
    width = height = 16
    teal = b"\x00\x80\x80\xff"
    rows = b"".join(b"\x00" + teal * width for _ in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    png = (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(rows, 9))
        + chunk(b"IEND", b"")
    )
    icon_dir = struct.pack("<HHH", 0, 1, 1)  # reserved, type 1 = icon, one image
    entry = struct.pack("<BBBBHHII", width, height, 0, 0, 1, 32, len(png), 6 + 16)
    return icon_dir + entry + png


FAVICON = _favicon()
