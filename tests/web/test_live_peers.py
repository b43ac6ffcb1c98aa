"""Live capture end to end: real HTTP/3 clients connect to `h3learn serve`, a browser watches.

One `h3learn serve` (a subprocess on free ports, stopped by its handle) serves the whole
module. Two Chromiums take part: the *peer*, launched with the SPKI pin of the kept
certificate (the Live page's command line), loads a page and /favicon.ico over HTTP/3; the
*UI*, a normal headless Chromium driven by Playwright, watches the Live page. Then
ngtcp2's gtlsclient and niquests connect, and the project's own client fetches from
ngtcp2's gtlsserver and from a server made of aioquic's own HTTP/3 (both on loopback, both
stopped by the test). Last, a capture survives ``kill -9`` and a restart. A missing tool
skips its test (fails it in CI, tests/optional_tools.py).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from optional_tools import require_tool
from serve_helpers import ServeProcess, chromium_peer_args, rows, start_serve

from h3learn.trace.store import read_trace

playwright_api = pytest.importorskip("playwright.sync_api")

TIMEOUT_MS = 20_000


def api(serve: ServeProcess, path: str, body: dict[str, Any] | None = None) -> Any:
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Content-Type": "application/json"} if body is not None else {}
    with urllib.request.urlopen(
        urllib.request.Request(serve.base_url + path, data=data, headers=headers), timeout=20
    ) as response:
        return json.load(response)


def wait_for_capture(serve: ServeProcess, test: Any, timeout: float = 20) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for row in api(serve, "/api/captures")["captures"]:
            if test(row):
                return row  # type: ignore[no-any-return]
        time.sleep(0.1)
    raise AssertionError(f"no such capture: {api(serve, '/api/captures')['captures']}")


@pytest.fixture(scope="module")
def chromium() -> str:
    return require_tool("chromium")


@pytest.fixture(scope="module")
def serve(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    server = start_serve(tmp_path_factory.mktemp("live") / "data", "--idle-timeout", "8")
    yield server
    assert server.stop() == 0, server.output()


@pytest.fixture(scope="module")
def playwright() -> Iterator[Any]:
    with playwright_api.sync_playwright() as running:
        yield running


@pytest.fixture(scope="module")
def ui(playwright: Any, chromium: str) -> Iterator[Any]:
    browser = playwright.chromium.launch(executable_path=chromium)
    yield browser
    browser.close()


@pytest.fixture
def live_page(ui: Any, serve: ServeProcess) -> Iterator[Any]:
    context = ui.new_context(viewport={"width": 1440, "height": 1000})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(serve.base_url + "/live")
    page.wait_for_function(
        "() => document.getElementById('live-status').dataset.state === 'connected'",
        timeout=TIMEOUT_MS,
    )
    yield page
    context.close()
    assert not errors, errors


def wait_for_row(page: Any, fragment: str, *, settings: str = "") -> dict[str, str]:
    page.wait_for_function(
        """([fragment, settings]) => [...document.querySelectorAll('#capture-rows tr')]
            .some(row => row.querySelector('.user-agent').textContent.includes(fragment)
                && row.textContent.includes(settings))""",
        arg=[fragment, settings],
        timeout=TIMEOUT_MS,
    )
    return next(row for row in rows(page) if fragment in row["agent"])


def test_chromium_loads_a_page_and_favicon_and_the_ui_watches_it_live(
    playwright: Any, chromium: str, serve: ServeProcess, live_page: Any
) -> None:
    peer = playwright.chromium.launch(executable_path=chromium, args=chromium_peer_args(serve))
    try:
        page = peer.new_page()
        response = page.goto(serve.origin + "/")
        assert response.status == 200
        assert "Hello from h3learn over HTTP/3" in page.content()
        icon = page.goto(serve.origin + "/favicon.ico")
        assert icon.status == 200 and icon.headers["content-type"] == "image/vnd.microsoft.icon"
        row = wait_for_row(live_page, "HeadlessChrome", settings="QPACK_MAX_TABLE_CAPACITY=65536")
        assert "live" in row["state"], "the connection is still open"
        assert "MAX_FIELD_SECTION_SIZE=262144" in row["settings"]
        assert "QPACK_BLOCKED_STREAMS=100" in row["settings"] and "H3_DATAGRAM=1" in row["settings"]
        assert row["agent"].startswith("Mozilla/5.0")
        live_page.screenshot(path="/tmp/h3learn-live-page.png", full_page=True)

        # Its step page grows while Chromium makes another request.
        step = live_page.context.new_page()
        step.goto(f"{serve.base_url}/trace/{row['id']}/step/0")
        step.wait_for_selector("#capture-banner[data-state='live']", timeout=TIMEOUT_MS)
        before = int(step.text_content("#step-count").split()[-1])
        page.goto(serve.origin + "/another")
        step.wait_for_function(
            "n => Number(document.getElementById('step-count').textContent.split(' ').pop()) > n",
            arg=before,
            timeout=TIMEOUT_MS,
        )
        step.bring_to_front()
        # "Last" shows the newest step the page knows of when it is pressed. The capture may
        # grow on in later batches (under load the one request's events arrive in several),
        # so the step to expect is the last one at the moment of the click, noted then.
        step.evaluate(
            """() => document.getElementById('last').addEventListener('click', () => {
                window.lastAtClick = Number(document.getElementById('jump').max);
            }, { capture: true })"""
        )
        step.click("#last")
        step.wait_for_function(
            "() => window.lastAtClick !== undefined && document.getElementById('step-number')"
            ".textContent === String(window.lastAtClick)",
            timeout=TIMEOUT_MS,
        )
        at_the_end = (
            "() => document.getElementById('step-number').textContent"
            " === String(Number(document.getElementById('jump').max))"
        )
        # "Follow the newest step": the page moves to each new last step by itself.
        last = int(step.text_content("#step-number"))
        step.check("#follow-capture")
        page.goto(serve.origin + "/followed")
        step.wait_for_function(
            f"() => Number(document.getElementById('step-number').textContent) > {last}",
            timeout=TIMEOUT_MS,
        )
        step.wait_for_function(at_the_end, timeout=TIMEOUT_MS)
        step.screenshot(path="/tmp/h3learn-live-capture.png", full_page=True)
    finally:
        peer.close()
    # The browser is gone: its close (or the idle timeout, 8 s) ends the connection.
    live_page.wait_for_function(
        """id => [...document.querySelectorAll('#capture-rows tr')].some(row => row.dataset.id
            === id && row.querySelector('.state-badge').textContent.startsWith('closed'))""",
        arg=row["id"],
        timeout=TIMEOUT_MS,
    )
    trace = read_trace(serve.data_dir / "captures" / f"{row['id']}.json")
    paths = [
        header["value"]
        for event in trace.events
        if event.name == "headers_decoded"
        for header in event.data["headers"]
        if header["name"] == ":path"
    ]
    assert paths[:2] == ["/", "/favicon.ico"]
    assert set(paths) >= {"/another", "/followed"}
    profile = api(serve, f"/api/captures/{row['id']}")["profile"]
    assert profile["first_dynamic_section"] == 1, "Chromium uses the dynamic table at once"


def test_gtlsclient_appears_live_with_nghttp3s_settings(
    serve: ServeProcess, live_page: Any
) -> None:
    gtlsclient = require_tool("gtlsclient")
    result = subprocess.run(
        [
            gtlsclient,
            "--no-quic-dump",
            "--exit-on-all-streams-close",
            "-q",
            "127.0.0.1",
            str(serve.h3_port),
            f"{serve.origin}/",
            f"{serve.origin}/again",
        ],
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    row = wait_for_row(live_page, "nghttp3/ngtcp2 client", settings="QPACK_BLOCKED_STREAMS=100")
    assert row["requests"] == "2"
    assert "MAX_FIELD_SECTION_SIZE=4611686018427387903" in row["settings"]


LIMITS_CLIENT = """
import asyncio, ssl, sys
from aioquic.asyncio import connect
from aioquic.asyncio.protocol import QuicConnectionProtocol
from aioquic.h3.connection import H3_ALPN, H3Connection
from aioquic.h3.events import HeadersReceived
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.events import StreamReset

class Client(QuicConnectionProtocol):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.h3, self.answered, self.rejected = H3Connection(self._quic), 0, 0
    def quic_event_received(self, event):
        self.rejected += isinstance(event, StreamReset)
        for h3_event in self.h3.handle_event(event):
            self.answered += isinstance(h3_event, HeadersReceived)

def configuration():
    return QuicConfiguration(is_client=True, alpn_protocols=H3_ALPN,
                             verify_mode=ssl.CERT_NONE, server_name="localhost")

async def main(port):
    async with connect("127.0.0.1", port, configuration=configuration(),
                       create_protocol=Client) as held:
        for n in range(3):
            stream_id = held._quic.get_next_available_stream_id()
            held.h3.send_headers(stream_id, [(b":method", b"GET"), (b":scheme", b"https"),
                (b":authority", b"localhost"), (b":path", b"/%d" % n),
                (b"user-agent", b"limits-client")], end_stream=True)
        held.transmit()
        for _ in range(200):
            if held.answered + held.rejected >= 3:
                break
            await asyncio.sleep(0.05)
        print("answered", held.answered, "rejected", held.rejected)
        try:
            async with connect("127.0.0.1", port, configuration=configuration()):
                print("connected")
        except ConnectionError:
            print("refused")

asyncio.run(asyncio.wait_for(main(int(sys.argv[1])), 30))
"""


def test_the_live_page_counts_refused_connections_and_rejected_requests(
    ui: Any, tmp_path: Path
) -> None:
    """--max-connections 1 and --max-requests 2: a client holds the one connection and
    sends three requests (two answered, one rejected after GOAWAY), then a second
    connection is refused. The refused one has no capture: the console says so in a line
    and the Live page counts it; the row counts the rejected request apart."""
    server = start_serve(tmp_path / "data", "--max-connections", "1", "--max-requests", "2")
    try:
        context = ui.new_context(viewport={"width": 1440, "height": 1000})
        page = context.new_page()
        page.goto(server.base_url + "/live")
        page.wait_for_function(
            "() => document.getElementById('live-status').dataset.state === 'connected'",
            timeout=TIMEOUT_MS,
        )
        result = subprocess.run(
            [sys.executable, "-c", LIMITS_CLIENT, str(server.h3_port)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert result.returncode == 0, result.stderr[-2000:]
        assert result.stdout.split("\n")[:2] == ["answered 2 rejected 1", "refused"]
        page.wait_for_function(
            "() => !document.getElementById('refused-count').hidden", timeout=TIMEOUT_MS
        )
        assert page.text_content("#refused-count") == (
            "1 connection refused at the limit of 1 at once"
            " (CONNECTION_REFUSED, RFC 9000 §20.1): no capture"
        )
        row = wait_for_row(page, "limits-client")
        page.wait_for_function(
            "() => document.querySelector('#capture-rows .rejected') !== null",
            timeout=TIMEOUT_MS,
        )
        row = next(r for r in rows(page) if "limits-client" in r["agent"])
        assert row["requests"] == "2+ 1 rejected"
        context.close()
    finally:
        assert server.stop() == 0, server.output()
    assert "refused the connection from 127.0.0.1:" in server.output()


NIQUESTS_CLIENT = """
import sys, niquests
session = niquests.Session(disable_http1=True, disable_http2=True)
for path in ("/", "/second"):
    response = session.get(sys.argv[1] + path, verify=False, timeout=10)
    print(response.http_version, response.status_code)
"""


def test_niquests_appears_live(serve: ServeProcess, live_page: Any) -> None:
    pytest.importorskip("niquests")
    result = subprocess.run(
        [sys.executable, "-c", NIQUESTS_CLIENT, serve.origin],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split("\n")[:2] == ["30 200", "30 200"], "both over HTTP/3"
    row = wait_for_row(live_page, "niquests")
    capture = api(serve, f"/api/captures/{row['id']}")
    assert capture["capture"]["requests"] == 2


def gtlsserver_path() -> str:
    if os.access("/usr/sbin/gtlsserver", os.X_OK):
        return "/usr/sbin/gtlsserver"
    return require_tool("gtlsserver")


def fetch_job(serve: ServeProcess, url: str) -> dict[str, Any]:
    job = api(serve, "/api/captures/fetch", {"url": url, "insecure": True})
    deadline = time.monotonic() + 30
    while job["state"] == "running" and time.monotonic() < deadline:
        time.sleep(0.1)
        job = api(serve, f"/api/captures/fetch/{job['id']}")
    return job  # type: ignore[no-any-return]


def test_the_readable_client_fetches_from_gtlsserver_through_the_live_page(
    serve: ServeProcess, live_page: Any, tmp_path: Path
) -> None:
    docroot = tmp_path / "docroot"
    docroot.mkdir()
    (docroot / "hello.txt").write_text("hello from gtlsserver\n")
    port = free_udp_port()
    key = serve.data_dir / "key.pem"
    command = [gtlsserver_path(), "--no-quic-dump", "-q", "-d", str(docroot), "127.0.0.1"]
    process = subprocess.Popen(
        [*command, str(port), str(key), str(serve.cert)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        time.sleep(0.5)
        live_page.fill("#fetch-url", f"https://localhost:{port}/hello.txt")
        live_page.check("#fetch-insecure")
        live_page.click(".fetch-headers summary")
        live_page.fill("#fetch-header-lines", "X-Lesson: qpack\n\n  accept: text/plain  ")
        assert live_page.input_value("#fetch-times") == "2"
        live_page.click("#fetch-button")
        # One fetch at a time: the button waits for this one (a second click would open a
        # second connection, whose result the page would not show).
        assert live_page.is_disabled("#fetch-button")
        live_page.wait_for_selector("#fetch-capture", timeout=TIMEOUT_MS)
        assert live_page.is_enabled("#fetch-button")
        result = live_page.text_content("#fetch-result")
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=10)
    assert "HTTP/3 200, 22 bytes" in result, result
    row = wait_for_capture(serve, lambda r: r["server_software"] == "nghttp3/ngtcp2 server")
    assert row["view"] == "client" and row["requests"] == 2 and row["error_count"] == 0
    assert "QPACK_BLOCKED_STREAMS=100" in row["settings_text"]
    # The form's header lines went into both requests, the name lowercased (RFC 9114 §4.2):
    # a literal the first time; the second refers to the entry QPACK inserted for it.
    trace = api(serve, f"/api/traces/{row['id']}/download?format=native")
    sections = [e for e in trace["events"] if e["name"] == "headers_encoded"]
    for section in sections:
        sent = [(item["name"], item["value"]) for item in section["data"]["headers"]]
        assert sent[-2:] == [("x-lesson", "qpack"), ("accept", "text/plain")]
        assert ("accept", "*/*") not in sent
    tables = [
        [line["table"] for line in section["data"]["field_lines"] if line["name"] == "x-lesson"]
        for section in sections
    ]
    assert tables == [["literal"], ["dynamic"]]


def test_the_fetch_form_refuses_a_header_line_http3_forbids_with_its_rule(
    serve: ServeProcess, live_page: Any
) -> None:
    live_page.click(".fetch-headers summary")
    live_page.fill("#fetch-header-lines", "Connection: keep-alive")
    live_page.click("#fetch-button")
    live_page.wait_for_selector("#fetch-result.error", timeout=TIMEOUT_MS)
    result = live_page.text_content("#fetch-result")
    assert result == (
        "Could not fetch: bad header 'Connection: keep-alive': connection-specific field"
        " 'connection' (RFC 9114 §4.2)"
    )


def free_udp_port() -> int:
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class AioquicServer:
    """A server made of aioquic's own HTTP/3 layer, on loopback, in a thread of its own."""

    def __init__(self, cert: Path, key: Path) -> None:
        self.cert, self.key = cert, key
        self.port = 0
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread = threading.Thread(target=lambda: asyncio.run(self._main()), daemon=True)

    def __enter__(self) -> AioquicServer:
        self._thread.start()
        assert self._ready.wait(10), "aioquic's server did not start"
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._loop is not None and self._stop is not None
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)

    async def _main(self) -> None:
        from aioquic.asyncio import QuicConnectionProtocol, serve
        from aioquic.h3.connection import H3Connection
        from aioquic.h3.events import HeadersReceived
        from aioquic.quic.configuration import QuicConfiguration
        from aioquic.quic.events import ProtocolNegotiated

        class Protocol(QuicConnectionProtocol):
            h3: H3Connection | None = None

            def quic_event_received(self, event: Any) -> None:
                if isinstance(event, ProtocolNegotiated):
                    self.h3 = H3Connection(self._quic)
                if self.h3 is None:
                    return
                for h3_event in self.h3.handle_event(event):
                    if isinstance(h3_event, HeadersReceived) and h3_event.stream_ended:
                        body = b"hello from aioquic\n"
                        self.h3.send_headers(
                            h3_event.stream_id,
                            [
                                (b":status", b"200"),
                                (b"server", b"aioquic-h3"),
                                (b"content-length", str(len(body)).encode()),
                            ],
                        )
                        self.h3.send_data(h3_event.stream_id, body, end_stream=True)
                self.transmit()

        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        configuration = QuicConfiguration(is_client=False, alpn_protocols=["h3"])
        configuration.load_cert_chain(self.cert, self.key)
        server = await serve("127.0.0.1", 0, configuration=configuration, create_protocol=Protocol)
        self.port = server._transport.get_extra_info("sockname")[1]  # type: ignore[union-attr]
        self._ready.set()
        await self._stop.wait()
        server.close()


def test_the_readable_client_fetches_from_aioquics_own_http3_server(serve: ServeProcess) -> None:
    with AioquicServer(serve.cert, serve.data_dir / "key.pem") as server:
        job = fetch_job(serve, f"https://localhost:{server.port}/")
    assert job["state"] == "done", job
    assert job["status"] == 200 and job["body_bytes"] == len(b"hello from aioquic\n")
    row = wait_for_capture(serve, lambda r: r["id"] == job["capture"] and r["state"] != "live")
    assert row["server_software"] == "aioquic-h3"
    assert "QPACK_MAX_TABLE_CAPACITY=4096" in row["settings_text"]


def test_a_capture_survives_kill_9_and_a_restart(
    playwright: Any, chromium: str, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    first = start_serve(data)
    peer = playwright.chromium.launch(executable_path=chromium, args=chromium_peer_args(first))
    try:
        page = peer.new_page()
        assert page.goto(first.origin + "/").status == 200
        row = wait_for_capture(first, lambda r: r["state"] == "live" and r["requests"] >= 1)
        time.sleep(0.3)
        first.kill()
    finally:
        peer.close()
    journal = data / "captures" / f"{row['id']}.json"
    kept = read_trace(journal)
    assert kept.warnings and len(kept.events) >= row["events"]
    second = start_serve(data, "--no-h3", log_name="again.log")
    try:
        (after,) = api(second, "/api/captures")["captures"]
        assert after["id"] == row["id"] and after["state"] == "interrupted"
        assert after["events"] == len(kept.events) and after["requests"] >= 1
        step = api(second, f"/api/traces/{row['id']}/steps/{after['events'] - 1}")
        assert step["count"] == len(kept.events)
    finally:
        assert second.stop() == 0


def test_the_live_page_with_its_endpoint_fits_375_pixels(ui: Any, serve: ServeProcess) -> None:
    """WCAG 1.4.10: the SPKI pin and the commands (long words without spaces) wrap."""
    context = ui.new_context(viewport={"width": 375, "height": 800})
    try:
        page = context.new_page()
        page.goto(serve.base_url + "/live")
        assert page.locator("#spki-pin").is_visible()
        # The connections table is drawn from /api/captures: measure once it is there.
        page.wait_for_function("() => document.getElementById('capture-count').textContent")
        widths = page.evaluate(
            "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
        )
        assert widths[0] <= widths[1], widths
    finally:
        context.close()
