"""`h3learn serve` as a subprocess on free ports, for tests with real peers and browsers.

The server is started with ``--port 0 --h3-port 0`` on a temporary data directory; its
first lines say where it listens (the web UI on TCP, the recording endpoint on UDP) and
give the certificate's SPKI pin. The test stops it through the handle (SIGTERM, bounded
wait; `kill` for the crash test). Every address is 127.0.0.1.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

REPO = Path(__file__).resolve().parents[2]
WEB = re.compile(r"h3learn serve: http://127\.0\.0\.1:(\d+)/")
UDP = re.compile(r"HTTP/3 on UDP 127\.0\.0\.1:(\d+)")
PIN = re.compile(r"--ignore-certificate-errors-spki-list=(\S+)")


def h3learn_command() -> list[str]:
    script = Path(sys.executable).with_name("h3learn")
    return [str(script)] if script.exists() else [sys.executable, "-m", "h3learn"]


@dataclass
class ServeProcess:
    """A running ``h3learn serve`` and what it printed."""

    process: subprocess.Popen[bytes]
    data_dir: Path
    web_port: int
    h3_port: int
    pin: str
    log_path: Path
    log_file: IO[bytes]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.web_port}"

    @property
    def origin(self) -> str:
        return f"https://localhost:{self.h3_port}"

    @property
    def cert(self) -> Path:
        return self.data_dir / "cert.pem"

    def output(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self, timeout: float = 20.0) -> int:
        """SIGTERM, then wait; returns the exit status (kills and fails if it hangs)."""
        try:
            if self.process.poll() is None:
                self.process.send_signal(signal.SIGTERM)
                try:
                    self.process.wait(timeout=timeout)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait(timeout=timeout)
                    raise AssertionError(f"serve ignored SIGTERM:\n{self.output()}") from None
            return self.process.returncode
        finally:
            self.log_file.close()

    def kill(self) -> None:
        """SIGKILL: the crash a capture must survive."""
        self.process.kill()
        self.process.wait(timeout=20)
        self.log_file.close()


def start_serve(data_dir: Path, *extra: str, log_name: str = "serve.log") -> ServeProcess:
    """Start ``h3learn serve`` on free ports; wait (bounded) until both ends listen."""
    data_dir.mkdir(parents=True, exist_ok=True)
    log_path = data_dir.parent / f"{data_dir.name}-{log_name}"
    log_file = open(log_path, "wb")  # noqa: SIM115 (closed by ServeProcess.stop)
    process = subprocess.Popen(
        [
            *h3learn_command(),
            "serve",
            "--port",
            "0",
            "--h3-port",
            "0",
            "--data-dir",
            str(data_dir),
            *extra,
        ],
        stdout=log_file,
        stderr=subprocess.STDOUT,
        cwd=REPO,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    with_h3 = "--no-h3" not in extra
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        text = log_path.read_text(errors="replace")
        web, udp, pin = WEB.search(text), UDP.search(text), PIN.search(text)
        if web and "stop with" in text and (not with_h3 or (udp and pin)):
            return ServeProcess(
                process,
                data_dir,
                int(web.group(1)),
                int(udp.group(1)) if udp else 0,
                pin.group(1) if pin else "",
                log_path,
                log_file,
            )
        if process.poll() is not None:
            break
        time.sleep(0.05)
    if process.poll() is None:
        process.kill()
        process.wait(timeout=10)
    log_file.close()
    raise AssertionError(f"h3learn serve did not start:\n{log_path.read_text(errors='replace')}")


def chromium_peer_args(serve: ServeProcess) -> list[str]:
    """What makes a Chromium speak HTTP/3 to the endpoint (the Live page's command line)."""
    return [
        "--enable-quic",
        f"--origin-to-force-quic-on=localhost:{serve.h3_port}",
        f"--ignore-certificate-errors-spki-list={serve.pin}",
        "--host-resolver-rules=MAP localhost 127.0.0.1",
    ]


def rows(page: Any) -> list[dict[str, str]]:
    """The Live page's connection rows as the browser shows them."""
    return page.eval_on_selector_all(  # type: ignore[no-any-return]
        "#capture-rows tr",
        """rows => rows.map(row => ({
            id: row.dataset.id,
            text: row.textContent,
            state: row.querySelector('.state-badge').textContent,
            agent: row.querySelector('.user-agent').textContent,
            settings: (row.querySelector('.settings') || {textContent: ''}).textContent,
            requests: row.querySelector('.requests').textContent,
            steps: row.querySelector('.steps').textContent,
        }))""",
    )
