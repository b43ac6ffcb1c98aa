"""Output cut short by its reader ends the command quietly (Python docs, "Note on SIGPIPE").

``h3learn walkthrough | head`` closes the pipe after a few lines; the command must stop
without a BrokenPipeError traceback, with a non-zero status.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _read_a_little_then_close(argv: list[str], cwd: Path) -> tuple[int, str]:
    env = os.environ | {"PYTHONPATH": str(REPO)}
    process = subprocess.Popen(
        [sys.executable, "-m", "h3learn", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        env=env,
    )
    assert process.stdout is not None and process.stderr is not None
    # The smallest pipe Linux allows (a page), so that the command cannot write all it has
    # (the walkthrough is some 24 KB) before the pipe is closed, and must meet its end.
    fcntl.fcntl(process.stdout.fileno(), fcntl.F_SETPIPE_SZ, 4096)
    process.stdout.read(200)
    process.stdout.close()
    error = process.stderr.read().decode()
    return process.wait(timeout=60), error


def test_walkthrough_to_a_closed_pipe_ends_without_a_traceback(tmp_path: Path) -> None:
    status, error = _read_a_little_then_close(["walkthrough"], tmp_path)
    assert error == "" and status != 0


def test_export_to_a_closed_pipe_ends_without_a_traceback(tmp_path: Path) -> None:
    trace = tmp_path / "trace.json"
    lesson = ["lessons", "record", "05-the-dynamic-table", "-o", str(trace)]
    subprocess.run([sys.executable, "-m", "h3learn", *lesson], check=True, cwd=tmp_path,
                   env=os.environ | {"PYTHONPATH": str(REPO)}, capture_output=True)  # fmt: skip
    argv = ["export", str(trace), "--format", "qlog", "-o", "-"]
    status, error = _read_a_little_then_close(argv, tmp_path)
    assert error == "" and status != 0
