"""The README's start command, scripts/run: what it hands to the `h3learn` command.

With no arguments or with options only it starts the web UI (`h3learn serve`, so
`scripts/run --port 8000` works); a command name goes to `h3learn` itself. Checked with
`--help`, which answers and exits without starting anything.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_script(*arguments: str) -> str:
    done = subprocess.run(
        [str(ROOT / "scripts" / "run"), *arguments],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout


def test_options_alone_go_to_serve() -> None:
    assert run_script("--help").startswith("usage: h3learn serve ")


def test_a_command_name_goes_to_h3learn() -> None:
    assert run_script("lessons", "--help").startswith("usage: h3learn lessons ")
