"""RFC 9114 and RFC 9204 against real peers over UDP on loopback: ngtcp2/nghttp3, Chromium.

Three independent implementations talk to h3learn over real sockets on 127.0.0.1 (the
commands are those of ../shared/peers.md):

- ngtcp2's ``gtlsclient`` (QPACK by nghttp3) fetches two URLs from ``h3learn h3-server``;
- ``h3learn get`` fetches a file from ngtcp2's ``gtlsserver``;
- headless Chromium loads the page of ``h3learn h3-server``, trusting its self-signed
  certificate by the SPKI pin.

Each test checks what the peer received and, in the trace, what the peer sent: its SETTINGS
(RFC 9114 §7.2.4.1), the dynamic-table inserts its QPACK encoder made (RFC 9204 §4.3) and
the request fields h3learn's decoder recovered (RFC 9204 §4.5). A missing tool skips the
test (fails it in CI, see tests/optional_tools.py).
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
from pathlib import Path

from optional_tools import require_tool
from udp_helpers import (
    ServerProcess,
    chromium_command,
    chromium_path,
    decoded_headers,
    finished_traces,
    free_udp_port,
    named,
    received_bytes_on,
    run_h3learn,
    settings_of,
    start_server,
)

from h3learn.trace.store import Trace, read_trace
from h3learn.transport.certificates import ensure_certificate
from h3learn.transport.fetch_errors import FetchError
from h3learn.transport.udp_client import fetch

#: RFC 9000 §16: the largest varint, nghttp3's "no limit" for MAX_FIELD_SECTION_SIZE.
VARINT_MAX = (1 << 62) - 1


def trace_with_user_agent(server: ServerProcess, fragment: str) -> Trace:
    """The one finished trace whose requests came from the user agent named ``fragment``."""
    matches = [
        trace
        for trace in finished_traces(server.record_dir)
        if any(fragment in fields.get("user-agent", "") for fields in decoded_headers(trace))
    ]
    assert len(matches) == 1, f"{len(matches)} traces from {fragment}:\n{server.output()}"
    return matches[0]


def remote_inserts(trace: Trace) -> list[dict[str, object]]:
    """The entries the peer's encoder inserted into the table this endpoint decodes with."""
    return [
        entry
        for event in named(trace, "dynamic_table_updated")
        if event.data["owner"] == "remote" and event.data["update_type"] == "inserted"
        for entry in event.data["entries"]
    ]


def test_ngtcp2_client_fetches_two_urls_from_h3learn_h3_server(tmp_path: Path) -> None:
    gtlsclient = require_tool("gtlsclient")
    server = start_server(tmp_path)
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    try:
        origin = f"https://localhost:{server.port}"
        result = subprocess.run(
            [
                gtlsclient,
                "--no-quic-dump",
                "--exit-on-all-streams-close",
                "-q",
                f"--download={downloads}",
                "127.0.0.1",
                str(server.port),
                f"{origin}/",
                f"{origin}/again",
            ],
            capture_output=True,
            timeout=20,
            check=False,
        )
        assert result.returncode == 0, result.stderr[-2000:]
    finally:
        assert server.stop() == 0
    assert b"<code>/again</code>" in (downloads / "again").read_bytes()

    trace = trace_with_user_agent(server, "nghttp3/ngtcp2 client")
    settings = settings_of(trace, "remote")
    assert settings["MAX_FIELD_SECTION_SIZE"] == VARINT_MAX
    assert settings["QPACK_MAX_TABLE_CAPACITY"] == 4096
    assert settings["QPACK_BLOCKED_STREAMS"] == 100
    # nghttp3 fills the dynamic table from its first request, as soon as it has our SETTINGS.
    inserted = {(entry["name"], entry["value"]) for entry in remote_inserts(trace)}
    assert (":authority", f"localhost:{server.port}") in inserted
    assert ("user-agent", "nghttp3/ngtcp2 client") in inserted
    sections = named(trace, "headers_decoded")
    assert all(event.data["prefix"]["required_insert_count"] > 0 for event in sections)
    assert [fields[":path"] for fields in decoded_headers(trace)] == ["/", "/again"]


def gtlsserver_path() -> str:
    """gtlsserver is installed in /usr/sbin, which is not on every user's PATH."""
    if os.access("/usr/sbin/gtlsserver", os.X_OK):
        return "/usr/sbin/gtlsserver"
    return require_tool("gtlsserver")


def wait_until_listening(port: int) -> None:
    """Poll until something answers HTTP/3 on the port (a closed port refuses at once)."""
    deadline = time.monotonic() + 10
    while True:
        try:
            asyncio.run(fetch([f"https://localhost:{port}/"], insecure=True, timeout=2))
            return
        except FetchError as error:
            if "refused" not in str(error) or time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def test_h3learn_get_fetches_a_file_from_ngtcp2_server(tmp_path: Path) -> None:
    gtlsserver = gtlsserver_path()
    cert, key = ensure_certificate(tmp_path / "data")
    docroot = tmp_path / "docroot"
    docroot.mkdir()
    (docroot / "hello.txt").write_text("hello from gtlsserver\n")
    port = free_udp_port()
    command = [gtlsserver, "--no-quic-dump", "-q", "-d", str(docroot), "127.0.0.1", str(port)]
    process = subprocess.Popen(
        [*command, str(key), str(cert)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    record = tmp_path / "get.json"
    try:
        wait_until_listening(port)
        result = run_h3learn(
            "get",
            f"https://localhost:{port}/hello.txt",
            "--cafile",
            str(cert),
            "--record",
            str(record),
        )
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=10)
    assert result.returncode == 0, result.stderr
    assert "HTTP/3 200\n" in result.stdout
    assert "server: nghttp3/ngtcp2 server\n" in result.stdout
    assert result.stdout.endswith("\n\nhello from gtlsserver\n")

    trace = read_trace(record)
    assert trace.warnings == []
    settings = settings_of(trace, "remote")
    assert settings["MAX_FIELD_SECTION_SIZE"] == VARINT_MAX
    assert settings["QPACK_BLOCKED_STREAMS"] == 100
    (response,) = decoded_headers(trace)
    assert response[":status"] == "200"
    assert response["content-length"] == "22"
    assert ("server", "nghttp3/ngtcp2 server") in {
        (entry["name"], entry["value"]) for entry in remote_inserts(trace)
    }


def test_chromium_loads_the_page_of_h3learn_h3_server_over_quic(tmp_path: Path) -> None:
    chromium = chromium_path()
    server = start_server(tmp_path)
    try:
        origin = f"localhost:{server.port}"
        result = subprocess.run(
            chromium_command(chromium, server, tmp_path / "chromium-profile"),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        assert server.stop() == 0
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Hello from h3learn over HTTP/3" in result.stdout, result.stderr[-2000:]
    assert "HeadlessChrome" in result.stdout, "the page lists the request's user-agent"

    trace = trace_with_user_agent(server, "HeadlessChrome")
    settings = settings_of(trace, "remote")
    assert settings["QPACK_MAX_TABLE_CAPACITY"] == 65536
    assert settings["MAX_FIELD_SECTION_SIZE"] == 262144
    assert settings["QPACK_BLOCKED_STREAMS"] == 100
    assert settings["H3_DATAGRAM"] == 1
    (page, *_) = decoded_headers(trace)
    assert page[":method"] == "GET" and page[":path"] == "/"
    assert page[":authority"] == origin
    assert page["user-agent"].startswith("Mozilla/5.0")
    # Chromium fills the dynamic table heavily from its first request (peers.md).
    assert len(remote_inserts(trace)) >= 5
    assert received_bytes_on(trace, "qpack_encode") > 100
