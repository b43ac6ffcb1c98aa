"""Servers the classroom tests start as processes: redis-server and `h3learn serve`.

Each listens on a free 127.0.0.1 port, is waited for with a bounded loop, and is stopped
by the test through its own handle (never by name).
"""

from __future__ import annotations

import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from optional_tools import require_tool


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def start(command: list[str]) -> subprocess.Popen[bytes]:
    """``command`` as a process whose output goes to a file (a pipe nobody reads fills up)."""
    output = tempfile.TemporaryFile()  # noqa: SIM115  # open while the process runs; `stop` closes it
    process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
    _outputs[process.pid] = output
    return process


#: process id -> the file its output goes to
_outputs: dict[int, IO[bytes]] = {}


def wait_until(ready: Callable[[], bool], what: str, process: subprocess.Popen[bytes]) -> None:
    """Poll ``ready`` for up to 30 s; fail with the process's output if it never is."""
    for _ in range(300):
        if process.poll() is not None:
            break
        try:
            if ready():
                return
        except OSError:
            pass
        time.sleep(0.1)
    printed = output_of(process)
    stop(process)
    raise RuntimeError(f"{what} did not start:\n{printed}")


def output_of(process: subprocess.Popen[bytes]) -> str:
    """What a process started by `start` has printed so far."""
    output = _outputs[process.pid]
    output.seek(0)
    return output.read().decode(errors="replace")


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
    output = _outputs.pop(process.pid, None)
    if output is not None:
        output.close()


@contextmanager
def redis_server() -> Iterator[str]:
    """A throwaway redis-server on 127.0.0.1 (no persistence); its redis:// URL."""
    executable = require_tool("redis-server")
    port = free_port()
    command = [executable, "--bind", "127.0.0.1", "--port", str(port), "--save", ""]
    command += ["--appendonly", "no"]
    process = start(command)

    def answers() -> bool:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as connection:
            connection.sendall(b"PING\r\n")
            return connection.recv(16).startswith(b"+PONG")

    try:
        wait_until(answers, "redis-server", process)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        stop(process)


@contextmanager
def h3learn_serve(data_dir: Path, *options: str) -> Iterator[str]:
    """`h3learn serve` as its own process on a free port; its base URL."""
    port = free_port()
    command = [sys.executable, "-m", "h3learn", "serve", "--host", "127.0.0.1"]
    # --no-h3: the classroom needs no HTTP/3 endpoint, and two processes would want one port.
    command += ["--port", str(port), "--data-dir", str(data_dir), "--no-h3", *options]
    process = start(command)
    url = f"http://127.0.0.1:{port}"

    def answers() -> bool:
        with urllib.request.urlopen(f"{url}/api/traces", timeout=2) as response:
            return bool(response.status == 200)

    try:
        wait_until(answers, "h3learn serve", process)
        yield url
    finally:
        stop(process)
