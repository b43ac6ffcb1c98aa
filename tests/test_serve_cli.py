"""``h3learn serve`` refuses, in one line naming what is wrong, a set-up it cannot run.

A data folder that is a file or cannot be made, and a web address it cannot listen on (a
port in use, an address this machine does not have), each end the command with status 1
before anything is served. The address it prints is one a browser can open: an IPv6
address in brackets (RFC 3986 §3.2.2).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from h3learn.cli import main

REPO = Path(__file__).resolve().parents[1]


def failure(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """Run ``h3learn serve --no-h3 ARGV``; assert status 1 and one prefixed line."""
    assert main(["serve", "--no-h3", *argv]) == 1
    captured = capsys.readouterr()
    assert "h3learn serve: http" not in captured.out, "it must not start serving"
    assert captured.err.count("\n") == 1, captured.err
    assert captured.err.startswith("h3learn serve: ")
    return captured.err.strip()


def test_a_web_port_in_use_names_the_host_port_and_reason(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        error = failure(capsys, "--data-dir", str(tmp_path), "--port", str(port))
    assert (
        error
        == f"h3learn serve: cannot listen on TCP 127.0.0.1 port {port}: Address already in use"
    )


def test_an_address_this_machine_does_not_have_is_named(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # 192.0.2.0/24 is TEST-NET-1 (RFC 5737): no machine has it.
    error = failure(capsys, "--data-dir", str(tmp_path), "--host", "192.0.2.1", "--port", "0")
    assert error.startswith("h3learn serve: cannot listen on TCP 192.0.2.1 port 0: ")


def test_a_data_dir_that_is_a_file_is_named_as_such(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    a_file = tmp_path / "trace.json"
    a_file.write_text("{}\n")
    error = failure(capsys, "--data-dir", str(a_file))
    assert error == f"h3learn serve: --data-dir {a_file} is a file, not a folder"


def test_a_data_dir_that_cannot_be_made_says_why(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    a_file = tmp_path / "trace.json"
    a_file.write_text("{}\n")
    inside = a_file / "data"
    error = failure(capsys, "--data-dir", str(inside))
    assert error.startswith(f"h3learn serve: --data-dir {inside}: cannot make this folder: ")


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        return False
    return True


@pytest.mark.skipif(not _ipv6_loopback(), reason="no IPv6 loopback here")
def test_an_ipv6_web_address_is_printed_in_brackets_rfc3986_section_3_2_2(
    tmp_path: Path,
) -> None:
    command = [sys.executable, "-m", "h3learn", "serve", "--no-h3", "--host", "::1"]
    command += ["--port", "0", "--data-dir", str(tmp_path)]
    env = os.environ | {"PYTHONPATH": str(REPO)}
    process = subprocess.Popen(command, stdout=subprocess.PIPE, cwd=tmp_path, env=env)
    try:
        assert process.stdout is not None
        first = process.stdout.readline().decode()
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=30)
    assert first.startswith("h3learn serve: http://[::1]:"), first


def test_a_unix_socket_left_by_an_earlier_run_is_replaced(tmp_path: Path) -> None:
    """``--host unix:///path`` (for a proxy in front): as when Werkzeug bound it itself, a
    socket file left behind is replaced, and the banner names the socket, not a URL."""
    path = tmp_path / "web.sock"
    with socket.socket(socket.AF_UNIX) as leftover:
        leftover.bind(str(path))  # what a killed run leaves: the file, nobody listening
    command = [sys.executable, "-m", "h3learn", "serve", "--no-h3", "--host", f"unix://{path}"]
    command += ["--data-dir", str(tmp_path / "data")]
    env = os.environ | {"PYTHONPATH": str(REPO)}
    process = subprocess.Popen(command, stdout=subprocess.PIPE, cwd=tmp_path, env=env)
    try:
        assert process.stdout is not None
        first = process.stdout.readline().decode()
        with socket.socket(socket.AF_UNIX) as client:
            client.connect(str(path))
            client.sendall(b"GET / HTTP/1.0\r\n\r\n")
            answer = client.recv(64)
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=30)
    assert first.startswith(f"h3learn serve: Unix socket {path} (data in "), first
    assert answer.startswith(b"HTTP/1.") and b" 200 " in answer.split(b"\r\n")[0]
