"""RFC 9114 §4.1: what ``h3learn h3-server`` answers, without a socket (h3learn/page_server.py).

`PageServer` only reads an H3Connection's events and calls its ``send_*`` methods, so it is
tested over the in-memory ideal streams: a request is answered once its stream has ended,
with one HEADERS frame and (except for HEAD, RFC 9110 §9.3.2) one DATA frame.
"""

from __future__ import annotations

from h3learn.h3.http_events import DataReceived, HeadersReceived, StreamEnded
from h3learn.h3.settings import Settings
from h3learn.page_server import FAVICON, PageServer
from h3learn.transport.memory import MemoryPair

Header = tuple[bytes, bytes]
SETTINGS = Settings(qpack_max_table_capacity=4096, qpack_blocked_streams=16)


def exchange(
    method: bytes, path: bytes, body: bytes | None = None
) -> tuple[dict[bytes, bytes], bytes]:
    """Send one request through a PageServer; returns the response's fields and content."""
    pair = MemoryPair.create(client_settings=SETTINGS, server_settings=SETTINGS)
    application = PageServer()
    pair.pump()
    headers: list[Header] = [
        (b":method", method),
        (b":scheme", b"https"),
        (b":authority", b"localhost"),
        (b":path", path),
    ]
    if body is not None:
        headers.append((b"content-length", str(len(body)).encode()))
    stream_id = pair.client.send_request(headers, end_stream=body is None)
    if body is not None:
        pair.client.send_data(stream_id, body, end_stream=True)
    handled = 0
    for _ in range(10):  # deliver, let the server answer, deliver the answer
        pair.pump()
        arrived = pair.received["server"][handled:]
        handled += len(arrived)
        for event in arrived:
            application.event_received(pair.server, event)
        if not arrived:
            break
    fields: dict[bytes, bytes] = {}
    content = bytearray()
    ended = False
    for event in pair.received["client"]:
        if isinstance(event, HeadersReceived) and event.stream_id == stream_id:
            fields = dict(event.headers)
            ended = ended or event.stream_ended
        elif isinstance(event, DataReceived) and event.stream_id == stream_id:
            content += event.data
            ended = ended or event.stream_ended
        elif isinstance(event, StreamEnded) and event.stream_id == stream_id:
            ended = True
    assert ended, "the response stream was ended"
    assert application.answered == 1
    return fields, bytes(content)


def test_get_is_answered_with_a_page_listing_the_request_fields_escaped() -> None:
    fields, content = exchange(b"GET", b"/<b>")
    assert fields[b":status"] == b"200"
    assert fields[b"content-type"] == b"text/html; charset=utf-8"
    assert fields[b"content-length"] == str(len(content)).encode()
    assert b"<code>/&lt;b&gt;</code>" in content
    assert b"<tr><th>:authority</th><td>localhost</td></tr>" in content


def test_head_gets_the_fields_of_its_page_and_no_content() -> None:
    fields, content = exchange(b"HEAD", b"/")
    assert fields[b":status"] == b"200"
    assert fields[b"content-type"] == b"text/html; charset=utf-8"
    assert int(fields[b"content-length"]) > 0, "the size the page would have (RFC 9110 §9.3.2)"
    assert content == b""


def test_favicon_is_a_tiny_icon() -> None:
    fields, content = exchange(b"GET", b"/favicon.ico")
    assert fields[b"content-type"] == b"image/vnd.microsoft.icon"
    assert content == FAVICON and len(content) < 200


def test_post_is_answered_with_the_size_of_its_content() -> None:
    fields, content = exchange(b"POST", b"/form", b"a" * 1234)
    assert fields[b":status"] == b"200"
    assert content == b"received 1234 bytes\n"


def test_other_methods_get_405_with_allow() -> None:
    fields, _ = exchange(b"DELETE", b"/")
    assert fields[b":status"] == b"405"
    assert fields[b"allow"] == b"GET, HEAD, POST"
