"""Helpers for tests over real UDP on loopback: an ``h3learn h3-server`` subprocess, traces.

Every address here is 127.0.0.1 or ::1. A server started by a test is stopped by that test
through the handle `start_server` returns (SIGTERM, then a bounded wait); every wait is
bounded so that a hung peer fails the test instead of hanging the suite.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from optional_tools import require_tool

from h3learn.events import Event
from h3learn.trace.store import FORMAT, Trace, read_trace
from h3learn.transport.certificates import spki_pin

REPO = Path(__file__).resolve().parents[2]
LISTENING = re.compile(r"HTTP/3 on UDP \[?([0-9a-f.:]+)\]?:(\d+)")


def h3learn_command() -> list[str]:
    """The installed ``h3learn`` script next to this Python, or ``python -m h3learn``."""
    script = Path(sys.executable).with_name("h3learn")
    return [str(script)] if script.exists() else [sys.executable, "-m", "h3learn"]


def run_h3learn(*arguments: str, timeout: float = 30.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*h3learn_command(), *arguments],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO,
        check=False,
    )


@dataclass
class ServerProcess:
    """An ``h3learn h3-server`` subprocess and where it keeps its files."""

    process: subprocess.Popen[bytes]
    host: str
    port: int
    record_dir: Path
    data_dir: Path
    log_path: Path
    log_file: IO[bytes]
    terminated: bool = False

    @property
    def cert(self) -> Path:
        return self.data_dir / "cert.pem"

    def output(self) -> str:
        return self.log_path.read_text(errors="replace")

    def terminate(self) -> None:
        """Send SIGTERM, once (a second one during the exit would kill it)."""
        if not self.terminated and self.process.poll() is None:
            self.terminated = True
            self.process.send_signal(signal.SIGTERM)

    def stop(self, timeout: float = 10.0) -> int:
        """SIGTERM, then wait; returns the exit status (kills and fails if it hangs)."""
        try:
            if self.process.poll() is None:
                self.terminate()
                try:
                    self.process.wait(timeout=timeout)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait(timeout=timeout)
                    raise AssertionError(
                        f"h3-server ignored SIGTERM for {timeout} s:\n{self.output()}"
                    ) from None
            return self.process.returncode
        finally:
            self.log_file.close()


def start_server(directory: Path, *extra: str, host: str = "127.0.0.1") -> ServerProcess:
    """Start ``h3learn h3-server`` on a free port of ``host``; wait until it listens."""
    record_dir, data_dir = directory / "traces", directory / "data"
    log_path = directory / "server.log"
    log_file = open(log_path, "wb")  # noqa: SIM115 (closed by ServerProcess.stop)
    process = subprocess.Popen(
        [
            *h3learn_command(),
            "h3-server",
            "--host",
            host,
            "--port",
            "0",
            "--data-dir",
            str(data_dir),
            "--record-dir",
            str(record_dir),
            *extra,
        ],
        stdout=log_file,
        stderr=subprocess.STDOUT,
        cwd=REPO,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        match = LISTENING.search(log_path.read_text(errors="replace"))
        if match:
            return ServerProcess(
                process, host, int(match.group(2)), record_dir, data_dir, log_path, log_file
            )
        if process.poll() is not None:
            break
        time.sleep(0.05)
    if process.poll() is None:
        process.kill()
        process.wait(timeout=10)
    log_file.close()
    raise AssertionError(f"h3-server did not start:\n{log_path.read_text(errors='replace')}")


def chromium_path() -> str:
    """The browser binary itself (peers.md), not Debian's /usr/bin/chromium wrapper script."""
    found = require_tool("chromium")
    binary = "/usr/lib/chromium/chromium"
    return binary if os.access(binary, os.X_OK) else found


def chromium_command(chromium: str, server: ServerProcess, profile: Path) -> list[str]:
    """Headless Chromium loading the server's page over QUIC, trusting its SPKI pin (peers.md)."""
    origin = f"localhost:{server.port}"
    return [
        chromium,
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--enable-quic",
        f"--origin-to-force-quic-on={origin}",
        f"--ignore-certificate-errors-spki-list={spki_pin(server.cert)}",
        "--host-resolver-rules=MAP localhost 127.0.0.1",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        "--dump-dom",
        f"https://{origin}/",
    ]


def free_udp_port(host: str = "127.0.0.1") -> int:
    """A UDP port nothing listens on right now (the kernel's choice)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_DGRAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def ipv6_loopback_available() -> bool:
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_DGRAM) as sock:
            sock.bind(("::1", 0))
    except OSError:
        return False
    return True


def finished_traces(record_dir: Path) -> list[Trace]:
    """Every trace in the folder, each checked to be a finished native trace."""
    traces = []
    for path in sorted(record_dir.glob("*.json")):
        first_line = path.read_text().partition("\n")[0]
        assert f'"format": "{FORMAT}"' in first_line, f"{path.name} is still a journal"
        trace = read_trace(path)
        assert trace.warnings == [], trace.warnings
        traces.append(trace)
    return traces


# -- reading traces ---------------------------------------------------------------------------


def named(trace: Trace, name: str, endpoint: str | None = None) -> list[Event]:
    return [
        event
        for event in trace.events
        if event.name == name and (endpoint is None or event.endpoint == endpoint)
    ]


def settings_of(trace: Trace, owner: str) -> dict[str, int]:
    """The SETTINGS an endpoint's `parameters_set` reports (owner local or remote)."""
    for event in named(trace, "parameters_set"):
        if event.data["owner"] == owner:
            return {item["name"]: item["value"] for item in event.data["settings"]}
    raise AssertionError(f"no parameters_set with owner {owner}")


def decoded_headers(trace: Trace) -> list[dict[str, str]]:
    """Each decoded field section as a dict (the last value of a repeated name wins)."""
    return [
        {item["name"]: item["value"] for item in event.data["headers"]}
        for event in named(trace, "headers_decoded")
    ]


def received_bytes_on(trace: Trace, stream_type: str) -> int:
    """Bytes received on the peer's unidirectional stream(s) of this type."""
    streams = {
        event.stream_id
        for event in named(trace, "stream_type_set")
        if event.data.get("owner") == "remote" and event.data.get("stream_type") == stream_type
    }
    return sum(
        event.data["length"]
        for event in named(trace, "stream_data_received")
        if event.stream_id in streams
    )
