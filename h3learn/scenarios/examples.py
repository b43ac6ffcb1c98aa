"""The built-in example traces the web UI offers at once (RFC 9114 §4.1, RFC 9204 §2).

Each example is a short scripted exchange between a client and a server over the in-memory
transport (`h3learn.transport.memory.MemoryPair`): ideal, in-order streams and a virtual
clock, so an example gives the same trace, byte for byte, every time it is generated.

    first-get           A first GET: the client announces no dynamic table (QPACK capacity
                        0, the default of RFC 9204 §5), so both field sections use only the
                        static table and literals (RFC 9204 §3.1).
    dynamic-table       The dynamic table fills: both sides allow 4096 bytes; several
                        requests share fields, which the encoder inserts once and then
                        references (RFC 9204 §3.2, §4.3).
    blocked-stream      A blocked stream: the client's QPACK encoder stream is held back, so
                        the request's field section arrives before the inserts it refers to
                        and the server must wait (RFC 9204 §2.2.1) until they are released.
    post-with-trailers  POST with trailers: HEADERS, DATA, DATA and a trailer section on one
                        request stream (RFC 9114 §4.1).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from h3learn.events import Event
from h3learn.h3.http_events import HeadersReceived
from h3learn.h3.settings import Settings
from h3learn.transport.memory import MemoryPair

Header = tuple[bytes, bytes]

#: Fixed creation time, so that a regenerated example is identical to the last one.
CREATED = "2026-01-01T00:00:00+00:00"

#: Room for a dynamic table and a few blocked streams (RFC 9204 §5).
DYNAMIC = Settings(qpack_max_table_capacity=4096, qpack_blocked_streams=16)


@dataclass(frozen=True, slots=True)
class Example:
    """One built-in example: an id for URLs, a title, a sentence, and how to record it."""

    id: str
    title: str
    description: str
    record: Callable[[], list[Event]]


def request(path: str, method: str = "GET", *extra: Header) -> list[Header]:
    """A request header section for https://www.example.org<path>."""
    return [
        (b":method", method.encode()),
        (b":scheme", b"https"),
        (b":authority", b"www.example.org"),
        (b":path", path.encode()),
        (b"user-agent", b"h3learn/0.1 (learning HTTP/3)"),
        *extra,
    ]


def respond(pair: MemoryPair, stream_id: int, body: bytes, *extra: Header) -> None:
    """The server answers a request with 200, a content-type and ``body``."""
    headers = [(b":status", b"200"), (b"content-type", b"text/plain"), *extra]
    pair.server.send_headers(stream_id, headers)
    pair.server.send_data(stream_id, body, end_stream=True)


def requests_received(pair: MemoryPair) -> list[int]:
    """Streams on which the server has received a request's header section."""
    return [
        event.stream_id
        for event in pair.received["server"]
        if isinstance(event, HeadersReceived) and not event.trailers
    ]


def first_get() -> list[Event]:
    pair = MemoryPair.create()
    pair.pump()
    pair.advance(10)
    stream_id = pair.client.send_request(request("/", "GET", (b"accept", b"text/html")), True)
    pair.pump()
    pair.advance(10)
    respond(pair, stream_id, b"Hello, HTTP/3!\n")
    pair.pump()
    return pair.log.events


def dynamic_table() -> list[Event]:
    pair = MemoryPair.create(client_settings=DYNAMIC, server_settings=DYNAMIC)
    pair.pump()
    answered: set[int] = set()
    for path, accept in (
        ("/", b"text/html"),
        ("/style.css", b"text/css,*/*;q=0.1"),
        ("/app.js", b"*/*"),
        ("/logo.png", b"image/avif,image/webp,*/*"),
    ):
        pair.advance(10)
        extra = [(b"accept", accept), (b"accept-language", b"en-GB,en;q=0.8")]
        if path != "/":
            extra.append((b"referer", b"https://www.example.org/"))
        pair.client.send_request(request(path, "GET", *extra), end_stream=True)
        pair.pump()
        for stream_id in requests_received(pair):
            if stream_id not in answered:
                answered.add(stream_id)
                pair.advance(5)
                respond(pair, stream_id, f"contents of {path}\n".encode())
                pair.pump()
    return pair.log.events


def blocked_stream() -> list[Event]:
    pair = MemoryPair.create(client_settings=DYNAMIC, server_settings=DYNAMIC)
    pair.pump()
    # A first request teaches the encoder which fields repeat; it inserts them next time.
    pair.advance(10)
    extra = ((b"accept", b"text/html"), (b"accept-language", b"en-GB,en;q=0.8"))
    first = pair.client.send_request(request("/", "GET", *extra), end_stream=True)
    pair.pump()
    respond(pair, first, b"The first page.\n")
    pair.pump()
    # The second request's inserts travel on the encoder stream, which is held back: its
    # field section (Required Insert Count > 0) reaches the server first.
    encoder_stream = pair.client.encoder.encoder_stream_id
    assert encoder_stream is not None
    pair.advance(10)
    pair.hold("client", encoder_stream)
    second = pair.client.send_request(request("/next", "GET", *extra), end_stream=True)
    pair.pump()
    pair.advance(20)
    pair.release("client", encoder_stream)
    pair.advance(10)
    respond(pair, second, b"Worth the wait.\n")
    pair.pump()
    return pair.log.events


def post_with_trailers() -> list[Event]:
    pair = MemoryPair.create(client_settings=DYNAMIC, server_settings=DYNAMIC)
    pair.pump()
    pair.advance(10)
    headers = request("/upload", "POST", (b"content-type", b"text/plain"), (b"te", b"trailers"))
    stream_id = pair.client.send_request(headers)
    pair.client.send_data(stream_id, b"first part of the upload, ")
    pair.pump()
    pair.advance(5)
    pair.client.send_data(stream_id, b"and the rest.\n")
    pair.client.send_headers(stream_id, [(b"x-checksum", b"sha256=2c26b46b")], end_stream=True)
    pair.pump()
    pair.advance(10)
    respond(pair, stream_id, b"stored\n", (b"location", b"/upload/1"))
    pair.pump()
    return pair.log.events


EXAMPLES: tuple[Example, ...] = (
    Example(
        "first-get",
        "A first GET",
        "SETTINGS both ways, one request and its response, QPACK with the static table only.",
        first_get,
    ),
    Example(
        "dynamic-table",
        "The dynamic table fills",
        "Four requests share fields: the encoder inserts them once and references them after.",
        dynamic_table,
    ),
    Example(
        "blocked-stream",
        "A blocked stream",
        "The field section overtakes the encoder stream, so the server's decoder must wait.",
        blocked_stream,
    ),
    Example(
        "post-with-trailers",
        "POST with trailers",
        "A request body in two DATA frames followed by a trailer section.",
        post_with_trailers,
    ),
)
