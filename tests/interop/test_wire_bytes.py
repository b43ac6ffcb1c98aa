"""RFC 9000 §2.2, RFC 9114 §6 and §7: the bytes a trace shows are the bytes on the wire.

A trace labels the bytes of every stream; a learner trusts that those bytes are what the
endpoint really sent and received. Here an independent implementation checks that: Wireshark's
``tshark`` captures a real connection on loopback, decrypts its QUIC packets with the TLS
secrets ``h3learn h3-server --keylog`` wrote (SSLKEYLOGFILE format), and reassembles each
stream from its STREAM frames (RFC 9000 §19.8: stream id, offset, data). The clients are
ngtcp2's gtlsclient, headless Chromium and ``h3learn get`` (whose own trace is checked too).
Then, per stream and direction:

- the trace's bytes (the stream type, every frame and every QPACK instruction, in order) are
  exactly the stream's bytes on the wire, from offset 0 to the end;
- every frame tshark's own HTTP/3 dissector finds (type and payload length, §7.1) is one the
  trace shows, and its SETTINGS (§7.2.4) are the trace's. (tshark 4.0 dissects a frame only
  when one STREAM frame holds all of it; a response split over two packets it leaves out.)

tshark 4.0 does not decode QPACK, so the QPACK instructions and field sections are checked by
the byte comparison only. A missing tshark, or no permission to capture on loopback, skips the
test (fails it in CI, see tests/optional_tools.py).
"""

from __future__ import annotations

import signal
import socket
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from xml.etree import ElementTree

import pytest
from optional_tools import require_tool, skip_or_fail
from udp_helpers import (
    ServerProcess,
    chromium_command,
    chromium_path,
    finished_traces,
    free_udp_port,
    h3learn_command,
    start_server,
)

from h3learn.h3.frame_layout import FrameType
from h3learn.h3.settings import QLOG_SETTING_NAME
from h3learn.trace.store import Trace, read_trace
from h3learn.wire.varint import parse_varint

#: The events whose raw bytes are a stream's bytes, one after another (docs/events.md), in
#: each direction: the frames, the QPACK instructions, and the stream type that opens a
#: unidirectional stream (whose owner sent it). headers_encoded and headers_decoded are not
#: among them: a field section is the payload of a HEADERS frame, counted with the frame.
BYTES_EVENTS = {
    "sent": ({"frame_created", "instruction_created"}, "local"),
    "received": ({"frame_parsed", "instruction_parsed"}, "remote"),
}


@dataclass
class Direction:
    """What one direction of the connection carried, as tshark decoded it."""

    streams: dict[int, bytearray] = field(default_factory=dict)
    frames: set[tuple[int, int]] = field(default_factory=set)
    #: Each SETTINGS frame seen, as its (identifier, value) pairs: a packet that carried it
    #: and was retransmitted shows the same frame again, so this holds one member.
    settings_frames: set[tuple[tuple[int, int], ...]] = field(default_factory=set)

    @property
    def settings(self) -> list[tuple[int, int]]:
        """The SETTINGS frame (RFC 9114 §7.2.4: one per control stream)."""
        assert len(self.settings_frames) == 1, self.settings_frames
        return list(next(iter(self.settings_frames)))

    def place(self, stream_id: int, offset: int, data: bytes) -> None:
        """Put a STREAM frame's data at its offset (a retransmission lands on itself)."""
        stream = self.streams.setdefault(stream_id, bytearray())
        if offset > len(stream):
            stream.extend(bytes(offset - len(stream)))
        stream[offset : offset + len(data)] = data


@dataclass
class Capture:
    """A tshark capture of one server port on loopback, started before the client runs."""

    process: subprocess.Popen[bytes]
    path: Path
    log: Path

    def stop(self) -> None:
        """SIGINT (tshark then writes out what it has), then a bounded wait."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=15)
                raise AssertionError("tshark ignored SIGINT for 15 s") from None


def start_capture(tshark: str, port: int, directory: Path) -> Capture:
    """Capture ``port`` on loopback; return once packets really reach the capture file.

    tshark says "Capturing on" a little before packets are written: a client started then
    may lose its first flight, and without the ClientHello no packet can be decrypted. So
    the capture also takes a second, idle port, and datagrams sent there (nobody listens;
    the server never sees them) show when the file starts to grow.
    """
    path, log = directory / "capture.pcapng", directory / "tshark.log"
    probe_port = free_udp_port()
    with open(log, "wb") as output:
        process = subprocess.Popen(
            [tshark, "-i", "lo", "-f", f"udp port {port} or udp port {probe_port}", "-w", path],
            stdout=subprocess.DEVNULL,
            stderr=output,
        )
    capture = Capture(process, path, log)
    deadline = time.monotonic() + 20
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        while time.monotonic() < deadline:
            said = log.read_text(errors="replace")
            if process.poll() is not None:
                skip_or_fail(f"tshark cannot capture on loopback here: {said.strip()[-300:]}")
            if "Capturing on" in said:
                size = path.stat().st_size if path.exists() else 0
                probe.sendto(b"probe", ("127.0.0.1", probe_port))
                time.sleep(0.05)
                if size and path.stat().st_size > size:
                    return capture
            else:
                time.sleep(0.05)
    capture.stop()
    raise AssertionError(f"tshark did not start capturing:\n{log.read_text(errors='replace')}")


def dissect(
    tshark: str, capture: Path, keylog: Path, server_port: int, client_port: int
) -> dict[str, Direction]:
    """Each direction's streams, HTTP/3 frames and SETTINGS, from tshark's PDML output.

    Only the packets between the two ports count: Chromium may open a second connection.
    A retransmitted STREAM frame lands on its own bytes, and its HTTP/3 frames and SETTINGS,
    dissected again, are the same members of their sets.
    """
    result = subprocess.run(
        [tshark, "-r", str(capture), "-o", f"tls.keylog_file:{keylog}", "-T", "pdml"],
        capture_output=True,
        timeout=60,
        check=True,
    )
    directions = {"client": Direction(), "server": Direction()}
    for packet in ElementTree.fromstring(result.stdout).iter("packet"):
        udp = packet.find("proto[@name='udp']")
        assert udp is not None
        ports = (int(_field(udp, "udp.srcport")), int(_field(udp, "udp.dstport")))
        if ports not in ((server_port, client_port), (client_port, server_port)):
            continue
        direction = directions["server" if ports[0] == server_port else "client"]
        for quic in packet.iterfind("proto[@name='quic']"):
            for frame in quic.iter("field"):
                if frame.get("name") != "quic.frame":
                    continue
                data = frame.find("field[@name='quic.stream_data']")
                if data is None:
                    continue
                offset = frame.find("field[@name='quic.stream.offset']")
                direction.place(
                    int(_field(frame, "quic.stream.stream_id")),
                    0 if offset is None else int(offset.get("show", "0")),
                    bytes.fromhex(data.get("value", "")),
                )
        for http3 in packet.iterfind("proto[@name='http3']"):
            types = [
                int(item.get("show", ""))
                for item in http3.iter("field")
                if item.get("name") == "http3.frame_type"
            ]
            lengths = [
                int(item.get("show", ""))
                for item in http3.iter("field")
                if item.get("name") == "http3.frame_length"
            ]
            direction.frames.update(zip(types, lengths, strict=True))
            settings = tuple(
                (
                    int(_field(setting, "http3.settings.id")),
                    int(_field(setting, "http3.settings.value")),
                )
                for setting in http3.iter("field")
                if setting.get("name") == "http3.settings"
            )
            if settings:
                direction.settings_frames.add(settings)
    return directions


def _field(element: ElementTree.Element, name: str) -> str:
    found = element.find(f".//field[@name='{name}']")
    assert found is not None, f"tshark gave no {name}"
    return found.get("show", "")


def stream_bytes(trace: Trace, endpoint: str, direction: str) -> dict[int, bytes]:
    """The bytes an endpoint's trace shows on each stream it sent or received on."""
    names, opener = BYTES_EVENTS[direction]
    streams: dict[int, bytearray] = {}
    for event in trace.events:
        if event.endpoint != endpoint or event.stream_id is None or not event.raw:
            continue
        opens = event.name == "stream_type_set" and event.data.get("owner") == opener
        if event.name in names or opens:
            streams.setdefault(event.stream_id, bytearray()).extend(event.raw)
    return {stream_id: bytes(data) for stream_id, data in streams.items()}


def trace_frames(trace: Trace, endpoint: str, name: str) -> set[tuple[int, int]]:
    """(frame type, payload length) of the frames an endpoint's trace created or parsed."""
    return {
        (parse_varint(event.raw, 0)[0], event.data["length"])
        for event in trace.events
        if event.endpoint == endpoint and event.name == name
    }


#: A registered setting's identifier by its qlog name. Reserved (GREASE) settings are traced
#: without their identifier; their bytes are still compared with the rest of the stream.
SETTING_BY_QLOG_NAME = {name: int(setting) for setting, name in QLOG_SETTING_NAME.items()}


def trace_settings(trace: Trace, endpoint: str, name: str) -> list[tuple[int, int]]:
    """(identifier, value) of each registered setting in the SETTINGS frames traced."""
    return [
        (SETTING_BY_QLOG_NAME[item["name"]], item["value"])
        for event in trace.events
        if event.endpoint == endpoint
        and event.name == name
        and event.data["frame"]["frame_type"] == "settings"
        for item in event.data["frame"]["settings"]
        if item["name"] in SETTING_BY_QLOG_NAME
    ]


def registered(settings: list[tuple[int, int]]) -> list[tuple[int, int]]:
    return [
        (identifier, value)
        for identifier, value in settings
        if identifier in SETTING_BY_QLOG_NAME.values()
    ]


def check_endpoint(trace: Trace, endpoint: str, wire: dict[str, Direction]) -> None:
    """One endpoint's trace against the wire: its sent and received bytes, frames, SETTINGS."""
    peer = "server" if endpoint == "client" else "client"
    outgoing, incoming = wire[endpoint], wire[peer]
    sent, received = (
        stream_bytes(trace, endpoint, "sent"),
        stream_bytes(trace, endpoint, "received"),
    )
    assert sent, "the trace shows no bytes sent"
    for stream_id, data in sent.items():
        assert bytes(outgoing.streams.get(stream_id, b"")) == data, f"{endpoint} stream {stream_id}"
    for stream_id, data in received.items():
        assert bytes(incoming.streams.get(stream_id, b"")) == data, f"{peer} stream {stream_id}"
    # Every stream on the wire that carried bytes is in the trace, whole.
    assert set(outgoing.streams) == set(sent)
    assert set(incoming.streams) == set(received)
    for name, found in (("frame_created", outgoing.frames), ("frame_parsed", incoming.frames)):
        assert not found - trace_frames(trace, endpoint, name), f"frames {name} lacks"
        assert {FrameType.SETTINGS, FrameType.HEADERS} <= {frame_type for frame_type, _ in found}
    assert trace_settings(trace, endpoint, "frame_created") == registered(outgoing.settings)
    assert trace_settings(trace, endpoint, "frame_parsed") == registered(incoming.settings)


@pytest.fixture
def tshark() -> str:
    return require_tool("tshark")


@dataclass
class Recording:
    """What one run left: the server's traces and tshark's capture of the server's port."""

    tshark: str
    traces: list[Trace]
    capture: Path
    keylog: Path
    server_port: int

    def wire(self, server_trace: Trace) -> dict[str, Direction]:
        """The capture's view of the connection ``server_trace`` recorded."""
        client_port = int(str(server_trace.meta["peer_address"]).rpartition(":")[2])
        return dissect(self.tshark, self.capture, self.keylog, self.server_port, client_port)


def run_with_capture(
    tshark: str, tmp_path: Path, client: Callable[[ServerProcess], list[str]]
) -> Recording:
    """Start h3-server and a capture of its port, run the client's command, stop both."""
    keylog = tmp_path / "keys.log"
    server = start_server(tmp_path, "--keylog", str(keylog))
    try:
        capture = start_capture(tshark, server.port, tmp_path)
        try:
            result = subprocess.run(client(server), capture_output=True, timeout=60, check=False)
            assert result.returncode == 0, result.stderr[-2000:]
            time.sleep(0.5)  # the last ACKs and CONNECTION_CLOSE reach the capture
        finally:
            capture.stop()
    finally:
        assert server.stop() == 0
    traces = finished_traces(server.record_dir)
    return Recording(tshark, traces, capture.path, keylog, server.port)


def test_ngtcp2_connection_trace_matches_the_wire(tshark: str, tmp_path: Path) -> None:
    gtlsclient = require_tool("gtlsclient")
    recording = run_with_capture(
        tshark,
        tmp_path,
        lambda server: [
            gtlsclient,
            "--no-quic-dump",
            "--no-http-dump",
            "--exit-on-all-streams-close",
            "127.0.0.1",
            str(server.port),
            f"https://localhost:{server.port}/",
            f"https://localhost:{server.port}/again",
        ],
    )
    (trace,) = recording.traces
    check_endpoint(trace, "server", recording.wire(trace))
    # nghttp3 filled the dynamic table: the encoder stream's instructions were compared too.
    assert any(event.name == "instruction_parsed" for event in trace.events)


def test_chromium_connection_trace_matches_the_wire(tshark: str, tmp_path: Path) -> None:
    chromium = chromium_path()
    recording = run_with_capture(
        tshark,
        tmp_path,
        lambda server: chromium_command(chromium, server, tmp_path / "chromium-profile"),
    )
    with_requests = [
        trace
        for trace in recording.traces
        if any(event.name == "headers_decoded" for event in trace.events)
    ]
    assert with_requests, "Chromium's page load is in a trace"
    for trace in with_requests:
        check_endpoint(trace, "server", recording.wire(trace))
    # Chromium's table inserts, PRIORITY_UPDATE and GREASE frame (peers.md) were compared too.
    assert any(event.name == "instruction_parsed" for event in with_requests[0].events)


def test_h3learn_get_traces_of_both_endpoints_match_the_wire(tshark: str, tmp_path: Path) -> None:
    client_trace = tmp_path / "client.json"
    recording = run_with_capture(
        tshark,
        tmp_path,
        lambda server: [
            *h3learn_command(),
            "get",
            "--insecure",
            "--record",
            str(client_trace),
            f"https://127.0.0.1:{server.port}/",
            f"https://127.0.0.1:{server.port}/second",
        ],
    )
    (server_trace,) = recording.traces
    wire = recording.wire(server_trace)
    check_endpoint(server_trace, "server", wire)
    check_endpoint(read_trace(client_trace), "client", wire)
