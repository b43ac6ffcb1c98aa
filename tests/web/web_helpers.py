"""Helpers for the web UI tests: an app on a temporary data directory, and probe traces."""

from __future__ import annotations

from pathlib import Path

from flask import Flask

from h3learn.events import Event
from h3learn.scenarios.examples import request, respond
from h3learn.trace.store import write_trace
from h3learn.transport.memory import MemoryPair
from h3learn.web import create_app

#: A header value that would run script if the page inserted it as HTML.
XSS_PROBE = "<img src=x onerror=alert(1)>"

#: The upload limit the tests configure (small, so a test can exceed it cheaply).
UPLOAD_LIMIT = 256 * 1024


def make_app(data_dir: Path, **config: object) -> Flask:
    return create_app(
        {"DATA_DIR": str(data_dir), "UPLOAD_MAX_BYTES": UPLOAD_LIMIT, "TESTING": True} | config
    )


def probe_events() -> list[Event]:
    """A GET whose request carries the XSS probe as a header value (and the path too)."""
    pair = MemoryPair.create()
    pair.pump()
    stream_id = pair.client.send_request(
        request("/", "GET", (b"x-probe", XSS_PROBE.encode())), end_stream=True
    )
    pair.pump()
    respond(pair, stream_id, b"ok\n")
    pair.pump()
    return pair.log.events


def save_probe_trace(data_dir: Path, trace_id: str = "xss-probe") -> list[Event]:
    """The probe exchange saved as a native trace titled with the probe itself."""
    events = probe_events()
    traces = data_dir / "traces"
    traces.mkdir(parents=True, exist_ok=True)
    write_trace(traces / f"{trace_id}.json", f"title {XSS_PROBE}", events)
    return events


def probe_step(events: list[Event]) -> int:
    """The step at which the server decoded the probe's field section."""
    return next(
        e.seq
        for e in events
        if e.name == "headers_decoded" and any(h["value"] == XSS_PROBE for h in e.data["headers"])
    )
