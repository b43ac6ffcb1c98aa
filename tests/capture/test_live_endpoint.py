"""The recording endpoint of `h3learn serve` (h3learn/capture): captures, limits, misbehaviour.

A `LiveEndpoint` runs in its thread on a free UDP port of 127.0.0.1, exactly as `h3learn
serve` runs it; the tests talk to it with the project's client (`fetch`) or a raw aioquic
client that writes bytes no conforming client would. Each limit is checked for the answer
HTTP/3 gives for it (RFC 9114 §5.2 GOAWAY, §4.2.2 H3_EXCESSIVE_LOAD, RFC 9110 §15.5.14 413,
§8.1 H3_EXCESSIVE_LOAD for a capture that is full), and for the step the capture shows.
Every wait is bounded; every endpoint is stopped by the test.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from aioquic.asyncio.protocol import QuicConnectionProtocol
from aioquic.h3.connection import H3Connection as AioquicH3
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.connection import QuicConnection
from aioquic.quic.events import ConnectionTerminated, QuicEvent, StreamReset
from aioquic.quic.packet import QuicErrorCode

from h3learn.capture.endpoint import EndpointOptions, LiveEndpoint
from h3learn.capture.fetcher import Fetcher
from h3learn.capture.hub import CaptureHub
from h3learn.h3.errors import ErrorCode
from h3learn.trace.captures import CLOSED, FAILED, CaptureStore
from h3learn.trace.store import read_trace
from h3learn.transport.fetch_errors import FetchError
from h3learn.transport.udp_client import fetch


@contextmanager
def endpoint(
    tmp_path: Path, *, max_events: int = 10_000, said: list[str] | None = None, **options: Any
) -> Iterator[LiveEndpoint]:
    """A running endpoint; ``said`` collects its console lines."""
    hub = CaptureHub(CaptureStore(tmp_path / "captures"), max_events=max_events)
    say = said.append if said is not None else lambda line: None
    live = LiveEndpoint(hub, EndpointOptions(port=0, **options), tmp_path, say=say)
    live.start()
    try:
        yield live
    finally:
        live.stop()


def origin(live: LiveEndpoint) -> str:
    assert live.address is not None
    return f"https://localhost:{live.address[1]}"


def get(live: LiveEndpoint, *paths: str, **options: Any) -> list[Any]:
    urls = [origin(live) + path for path in paths]
    return asyncio.run(fetch(urls, cafile=str(live.cert_path), timeout=10, **options))


def wait_until(condition: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def server_events(live: LiveEndpoint) -> list[Any]:
    """The events of the one server-side capture (once it has ended)."""
    store = live.hub.store
    wait_until(lambda: not live.hub.live_ids())
    (capture_id,) = [i for i in store.ids() if store.row(i)["view"] == "server"]
    return read_trace(store.path_of(capture_id)).events


def names(events: list[Any], name: str) -> list[dict[str, Any]]:
    return [event.data for event in events if event.name == name]


def test_every_connection_is_a_capture_finished_with_its_summary(tmp_path: Path) -> None:
    with endpoint(tmp_path) as live:
        hub = live.hub
        fetcher = Fetcher(hub, trusted_origin=(live.address[1], live.cert_path))  # type: ignore[index,arg-type]
        job = fetcher.start(origin(live) + "/from-the-live-page")
        assert job.done.wait(15) and job.state == "done", job.error
        assert job.status == 200
        wait_until(lambda: not hub.live_ids())
        rows = {row["view"]: row for row in hub.rows()}
    assert set(rows) == {"server", "client"}, "both ends of the fetch were recorded"
    for row in rows.values():
        assert row["state"] == CLOSED and row["closed"] == "H3_NO_ERROR"
        assert row["requests"] == 1 and row["user_agent"].startswith("h3learn/")
        assert row["error_count"] == 0 and row["events"] > 20
    assert rows["server"]["title"].startswith("Connection from 127.0.0.1:")
    assert rows["client"]["title"] == f"Readable client to 127.0.0.1:{live.address[1]}"  # type: ignore[index]
    assert job.capture_id == rows["client"]["id"]


def test_a_fetch_that_never_connected_is_a_failed_capture_not_a_closed_one(
    tmp_path: Path,
) -> None:
    """Nothing listens on UDP port 1 of 127.0.0.1: the ICMP port unreachable refuses the
    fetch before any handshake. The capture keeps what the client recorded (its SETTINGS
    and streams, queued) and ends by saying the connection was never established, not with
    an H3_NO_ERROR close that never happened; the list calls it failed."""
    hub = CaptureHub(CaptureStore(tmp_path / "captures"))
    job = Fetcher(hub, timeout=5).start("https://127.0.0.1:1/", insecure=True)
    assert job.done.wait(15) and job.state == "failed"
    assert job.error == "connection refused by 127.0.0.1:1: nothing listens on UDP port 1"
    wait_until(lambda: not hub.live_ids())
    assert job.capture_id is not None
    for row in (hub.row(job.capture_id), hub.store.row(job.capture_id)):
        assert row["state"] == FAILED
        assert row["closed"] == "never established: connection refused"
        assert row["events"] > 1 and row["error_count"] == 0
    events = read_trace(hub.store.path_of(job.capture_id)).events
    assert names(events, "parameters_set"), "what was recorded is kept"
    assert not names(events, "connection_closed") and not names(events, "connection_error")
    last = events[-1]
    assert (last.category, last.name) == ("transport", "connection_failed")
    assert last.data["cause"] == "connection refused"
    assert last.summary.startswith("client: the connection was never established")


def test_stopping_closes_open_connections_and_finishes_their_captures(tmp_path: Path) -> None:
    async def scenario(live: LiveEndpoint) -> _RawClient:
        transport, raw = await _open_raw(live, close=False)
        try:
            await asyncio.to_thread(wait_until, lambda: len(live.hub.live_ids()) == 1)
            await asyncio.to_thread(live.stop)  # while the client still answers
            async with asyncio.timeout(5):
                await raw.wait_closed()
        finally:
            transport.close()
        return raw

    with endpoint(tmp_path) as live:
        get(live, "/")
        raw = asyncio.run(scenario(live))
    assert raw.termination is not None
    assert raw.termination.error_code == ErrorCode.H3_NO_ERROR
    store = live.hub.store
    assert not live.hub.live_ids() and len(store.ids()) == 2
    for capture_id in store.ids():
        assert not store.is_journal(capture_id)
        assert store.row(capture_id)["state"] == CLOSED


def test_after_max_requests_the_server_sends_goaway_and_rejects_later_requests(
    tmp_path: Path,
) -> None:
    with endpoint(tmp_path, max_requests=2) as live:
        with pytest.raises(FetchError, match="H3_REQUEST_REJECTED"):
            get(live, "/1", "/2", "/3")
        events = server_events(live)
    goaways = [d for d in names(events, "frame_created") if d["frame"]["frame_type"] == "goaway"]
    assert goaways and goaways[0]["frame"]["id"] == 8  # RFC 9114 §5.2: after streams 0 and 4
    (rejected,) = names(events, "stream_error")
    assert rejected["code_name"] == "H3_REQUEST_REJECTED" and rejected["stream_id"] == 8
    (row,) = [row for row in live.hub.rows() if row["view"] == "server"]
    assert (row["requests"], row["rejected"]) == (2, 1), "the rejected one is counted apart"


def test_a_request_body_over_the_limit_is_answered_with_413(tmp_path: Path) -> None:
    with endpoint(tmp_path, max_body_bytes=100) as live:
        (small,) = get(live, "/", method="POST", data=b"x" * 100)
        (large,) = get(live, "/", method="POST", data=b"x" * 5000)
    assert small.status == 200 and small.body == b"received 100 bytes\n"
    assert large.status == 413
    assert b"larger than this server's limit of 100 bytes" in large.body


def test_a_field_section_over_the_announced_size_is_refused_with_h3_excessive_load(
    tmp_path: Path,
) -> None:
    """The project's client keeps to the limit, so aioquic's HTTP/3 layer breaks it here."""

    async def oversized(live: LiveEndpoint) -> int:
        transport, raw = await _open_raw(live, close=False)
        try:
            h3 = AioquicH3(raw._quic)
            stream_id = raw._quic.get_next_available_stream_id()
            headers = [
                (b":method", b"GET"),
                (b":scheme", b"https"),
                (b":authority", b"localhost"),
                (b":path", b"/" + b"a" * 400),
            ]
            h3.send_headers(stream_id, headers, end_stream=True)
            raw.transmit()
            async with asyncio.timeout(5):
                code = await raw.reset
            raw.close()  # CONNECTION_CLOSE, so the server's capture ends now
            async with asyncio.timeout(5):
                await raw.wait_closed()
            return code
        finally:
            transport.close()

    with endpoint(tmp_path, max_field_section_size=300) as live:
        code = asyncio.run(oversized(live))
        (fine,) = get(live, "/short")
        store = live.hub.store
        wait_until(lambda: not live.hub.live_ids())
        rows = [store.row(i) for i in store.ids() if store.row(i)["view"] == "server"]
    assert code == ErrorCode.H3_EXCESSIVE_LOAD
    assert fine.status == 200
    refused = [row for row in rows if row["error_count"]]
    assert len(refused) == 1
    assert "H3_EXCESSIVE_LOAD" in refused[0]["errors"][0]
    assert "SETTINGS_MAX_FIELD_SECTION_SIZE 300" in refused[0]["errors"][0]


def assert_capped(events: list[Any], max_events: int) -> None:
    """The close comes once ``max_events`` are in, and nothing the peer sent comes after it.

    The event being handled when the limit is reached is finished (a few steps: its
    request is answered or rejected whole); then the close, and after it only what the
    server itself had queued before closing.
    """
    (at,) = [n for n, event in enumerate(events) if event.name == "connection_error"]
    closing = events[at]
    assert closing.data["code_name"] == "H3_EXCESSIVE_LOAD"
    assert f"reached its limit of {max_events} events" in closing.data["rule"]
    assert max_events <= at < max_events + 20, at
    after = [(event.name, event.data.get("direction")) for event in events[at + 1 :]]
    assert all(name == "stream_data_sent" for name, _ in after), after
    assert len(events) <= max_events + 64


def test_a_full_capture_closes_its_connection_with_h3_excessive_load(tmp_path: Path) -> None:
    with endpoint(tmp_path, max_events=80) as live:
        with pytest.raises(FetchError):
            get(live, *[f"/{n}" for n in range(30)])
        events = server_events(live)
    assert_capped(events, 80)


def test_max_events_is_a_hard_cap_however_much_the_peer_keeps_sending(tmp_path: Path) -> None:
    """A client sends forty GETs in a few bursts, past GOAWAY and past the capture's limit.

    The close is decided in the middle of a burst: QUIC still delivers the rest of that
    burst after it, but the capture ends with the close (RFC 9114 §8.1), not with the
    requests nobody reads any more.
    """

    async def burst(live: LiveEndpoint) -> _RawClient:
        transport, raw = await _open_raw(live, close=False)
        try:
            h3 = AioquicH3(raw._quic)
            for n in range(40):
                stream_id = raw._quic.get_next_available_stream_id()
                h3.send_headers(stream_id, _request(f"/{n}"), end_stream=True)
                if n % 20 == 0:
                    raw.transmit()
                    await asyncio.sleep(0.05)
            raw.transmit()
            async with asyncio.timeout(5):
                await raw.wait_closed()
            return raw
        finally:
            transport.close()

    with endpoint(tmp_path, max_events=300, max_requests=5) as live:
        raw = asyncio.run(burst(live))
        events = server_events(live)
        (row,) = live.hub.rows()
    assert raw.termination is not None
    assert raw.termination.error_code == ErrorCode.H3_EXCESSIVE_LOAD
    assert_capped(events, 300)
    assert row["events"] == len(events)
    assert row["requests"] == 5 and row["rejected"] >= 1, row


def test_a_connection_over_the_limit_is_refused_counted_and_said(tmp_path: Path) -> None:
    """RFC 9000 §20.1: CONNECTION_REFUSED. The refused connection has no capture, so the
    hub counts it (the Live page shows the count) and the console gets one line for it."""

    async def refused(live: LiveEndpoint) -> ConnectionTerminated | None:
        held_transport, _held = await _open_raw(live, close=False)
        try:
            await asyncio.to_thread(wait_until, lambda: len(live.hub.live_ids()) == 1)
            with pytest.raises(ConnectionError):
                await _open_raw(live)
            await asyncio.to_thread(wait_until, lambda: live.hub.refused == 1)
            return _RawClient.last_termination
        finally:
            held_transport.close()

    said: list[str] = []
    with endpoint(tmp_path, max_connections=1, said=said) as live:
        termination = asyncio.run(refused(live))
        rows = live.hub.rows()
    assert termination is not None
    assert termination.error_code == QuicErrorCode.CONNECTION_REFUSED
    assert termination.reason_phrase == "the server is at its limit of 1 connections"
    assert len(rows) == 1, "the refused connection has no capture"
    (line,) = said
    assert line.startswith("refused the connection from 127.0.0.1:")
    assert line.endswith(
        "(CONNECTION_REFUSED, RFC 9000 §20.1): the server is at its limit of 1 connections"
    )


def _request(path: str) -> list[tuple[bytes, bytes]]:
    return [
        (b":method", b"GET"),
        (b":scheme", b"https"),
        (b":authority", b"localhost"),
        (b":path", path.encode()),
    ]


class _RawClient(QuicConnectionProtocol):
    """A QUIC client that writes whatever bytes a test wants on its streams."""

    termination: ConnectionTerminated | None = None
    #: The termination of the last client that had one (for one whose connect failed).
    last_termination: ConnectionTerminated | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: The error code of the first RESET_STREAM received.
        self.reset: asyncio.Future[int] = self._loop.create_future()

    def quic_event_received(self, event: QuicEvent) -> None:
        if isinstance(event, ConnectionTerminated):
            self.termination = event
            _RawClient.last_termination = event
        if isinstance(event, StreamReset) and not self.reset.done():
            self.reset.set_result(event.error_code)


async def _open_raw(
    live: LiveEndpoint, stream_bytes: bytes | None = None, close: bool = True
) -> tuple[asyncio.DatagramTransport, _RawClient]:
    configuration = QuicConfiguration(is_client=True, alpn_protocols=["h3"])
    configuration.verify_mode = ssl.CERT_NONE
    quic = QuicConnection(configuration=configuration)
    loop = asyncio.get_running_loop()
    assert live.address is not None
    transport, raw = await loop.create_datagram_endpoint(
        lambda: _RawClient(quic), remote_addr=("127.0.0.1", live.address[1])
    )
    raw.connect(("127.0.0.1", live.address[1]))
    async with asyncio.timeout(5):
        await raw.wait_connected()
    if stream_bytes is not None:
        quic.send_stream_data(2, stream_bytes)
        raw.transmit()
        async with asyncio.timeout(5):
            await raw.wait_closed()
    if close:
        transport.close()
    return transport, raw


def test_a_protocol_violation_closes_only_that_connection_and_is_a_step(tmp_path: Path) -> None:
    with endpoint(tmp_path) as live:
        # RFC 9114 §7.2.4: a second SETTINGS frame on the control stream.
        settings = b"\x04\x00"
        _, raw = asyncio.run(_open_raw(live, b"\x00" + settings + settings))
        (served,) = get(live, "/after")
        wait_until(lambda: not live.hub.live_ids())
        store = live.hub.store
        rows = [store.row(i) for i in store.ids()]
    assert raw.termination is not None
    assert raw.termination.error_code == ErrorCode.H3_FRAME_UNEXPECTED
    assert served.status == 200, "the server kept serving"
    (broken,) = [row for row in rows if row["error_count"]]
    assert broken["closed"] == "H3_FRAME_UNEXPECTED"
    assert "second SETTINGS" in broken["errors"][0]
