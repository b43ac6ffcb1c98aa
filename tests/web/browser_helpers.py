"""Helpers for the browser tests: the app served on a free loopback port, and Chromium."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from flask import Flask
from optional_tools import require_tool
from werkzeug.serving import make_server


@contextmanager
def served(app: Flask) -> Iterator[str]:
    """``app`` on Werkzeug's threaded server at 127.0.0.1 (a free port); its base URL."""
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(timeout=10)


@contextmanager
def chromium() -> Iterator[Any]:
    """Debian's Chromium driven by Playwright (skipped, or failed in CI, when missing)."""
    from playwright.sync_api import sync_playwright

    executable = require_tool("chromium")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable)
        try:
            yield launched
        finally:
            launched.close()


def wait_for_step(page: Any, step: int) -> None:
    """Wait until the step page has drawn ``step`` (``#stepper[data-shown]``, set by step.js
    once the step is shown: the page opens with its number already in the heading) and the
    diagram marks its row."""
    page.wait_for_function(
        "step => document.getElementById('stepper').dataset.shown === String(step)"
        " && document.querySelector('.row.current')?.dataset.seq === String(step)",
        arg=step,
    )


def settled_step(page: Any, quiet_ms: int = 400, tries: int = 25) -> int:
    """The step the page shows once it has stopped moving: the same for ``quiet_ms``.

    Pausing stops the timer of play, not a step already being fetched; that one still lands
    after the pause. Reading the step at once could name the one before it.
    """
    shown = page.evaluate("() => document.getElementById('stepper').dataset.shown")
    for _ in range(tries):
        page.wait_for_timeout(quiet_ms)
        again = page.evaluate("() => document.getElementById('stepper').dataset.shown")
        if again == shown:
            return int(shown)
        shown = again
    raise AssertionError(f"the page kept moving, still at step {shown}")
