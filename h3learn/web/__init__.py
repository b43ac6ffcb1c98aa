"""The web UI: a Flask app that replays any trace step by step, beside its bytes and state.

`create_app` builds the app (the Flask tutorial's factory pattern); `socketio` is bound to
it with ``init_app`` in ``threading`` mode, pinned so that an eventlet or gevent that
arrives as someone's dependency cannot change the server silently (docs/architecture.md).
The page connects to Socket.IO for live updates (live capture uses it later); classroom
mode (h3learn/web/classroom) has its own namespace, /classroom.

Configuration keys (``create_app({...})``):

    DATA_DIR            the data directory; traces are saved in DATA_DIR/traces
                        (default ~/.local/share/h3learn, or $XDG_DATA_HOME/h3learn)
    UPLOAD_MAX_BYTES    the largest upload accepted (default 16 MiB); also MAX_CONTENT_LENGTH
    TRACE_MAX_BYTES     the largest trace file read from DATA_DIR (default 64 MiB): saved
                        traces and captures may be larger than an upload
    SOCKETIO_CLIENT     path of socket.io.min.js (default: web/node_modules, from npm ci)
    MESSAGE_QUEUE, PUBLIC_URL, CLASSROOM_*   classroom mode (h3learn/web/classroom)
    LESSONS_DIR         the lessons and their RFC annotations (default: those h3learn
                        carries, h3learn.curriculum.catalogue.default_lessons_dir)
    LIVE_MAX_EVENTS     events per capture before its connection is closed (10,000)
    LIVE_BATCH_SECONDS  live updates are sent at most this often (0.1)
    LIVE_FETCH_TIMEOUT  seconds a fetch by the readable client may take (10)

Live capture (h3learn/web/live.py, captures.py, live_socket.py) keeps its captures in
DATA_DIR/captures; `h3learn serve` attaches the recording HTTP/3 endpoint to it.

Every response carries a Content-Security-Policy that allows scripts, styles and
connections from this origin only, and no inline script or style at all; the page inserts
trace data with ``textContent``, never as HTML.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from flask import Flask, Response, render_template, request
from flask_socketio import SocketIO  # type: ignore[import-untyped]  # no stubs published
from werkzeug.exceptions import HTTPException

from h3learn.curriculum.catalogue import Curriculum, default_lessons_dir
from h3learn.trace.store import DEFAULT_MAX_BYTES
from h3learn.web import api, classroom, lessons, live, live_socket, pages, rfc_reader
from h3learn.web.captures import live_service
from h3learn.web.library import TraceLibrary

socketio = SocketIO()

DEFAULT_UPLOAD_MAX_BYTES = 16 * 1024 * 1024

CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    )
)


def default_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "h3learn"


def create_app(config: dict[str, Any] | None = None) -> Flask:
    app = Flask(__name__)
    app.config.update(
        DATA_DIR=str(default_data_dir()),
        UPLOAD_MAX_BYTES=DEFAULT_UPLOAD_MAX_BYTES,
        TRACE_MAX_BYTES=DEFAULT_MAX_BYTES,
        SOCKETIO_CLIENT=None,
        LESSONS_DIR=None,
    )
    if config:
        app.config.update(config)
    app.config["MAX_CONTENT_LENGTH"] = app.config["UPLOAD_MAX_BYTES"] + 64 * 1024  # form overhead
    library = TraceLibrary(
        Path(app.config["DATA_DIR"]),
        max_bytes=app.config["UPLOAD_MAX_BYTES"],
        read_max_bytes=app.config["TRACE_MAX_BYTES"],
    )
    app.extensions["h3learn_library"] = library
    curriculum = Curriculum.open(Path(app.config["LESSONS_DIR"] or default_lessons_dir()))
    app.extensions["h3learn_curriculum"] = curriculum
    lessons.install(curriculum, library)
    app.extensions["h3learn_live"] = live_service(
        Path(app.config["DATA_DIR"]) / "captures", library, app.config
    )
    app.register_blueprint(api.bp)
    app.register_blueprint(pages.bp)
    app.register_blueprint(lessons.bp)
    app.register_blueprint(rfc_reader.bp)
    app.register_blueprint(live.bp)
    classroom.init_app(app, socketio, library, curriculum)
    app.register_error_handler(HTTPException, _http_error)
    app.after_request(_security_headers)
    # message_queue is passed every time: SocketIO keeps its options between init_app calls.
    socketio.init_app(app, async_mode="threading", message_queue=app.config["MESSAGE_QUEUE"])
    return app


def _http_error(error: HTTPException) -> Any:
    """JSON under /api/; elsewhere a page with the site's top bar that says what went
    wrong and where to go (redirects, such as a missing trailing slash, pass as they are)."""
    if request.path.startswith("/api/"):
        return api.json_http_error(error)
    if error.code is None or error.code < 400:
        return error
    return render_template("pages/error.html", error=error), error.code


def _security_headers(response: Response) -> Response:
    response.headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "same-origin"
    return response


def _connected() -> None:
    """A page connected; it is told which version it talks to (live events come later)."""
    sid = getattr(request, "sid", None)
    socketio.emit("hello", {"server": "h3learn", "live": False}, to=sid)


socketio.on_event("connect", _connected)
classroom.register_events(socketio)
live_socket.register(socketio)
