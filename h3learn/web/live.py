"""The Live page, the compare page, and the captures API (docs/web-api.md, "Live capture").

    GET    /live                              how to connect, the readable client's form,
                                              the list of connections (updated over
                                              Socket.IO, h3learn/web/live_socket.py)
    GET    /compare?ids=A,B                   SETTINGS and QPACK use of two or more captures
    GET    /api/captures                      the endpoint (how to connect), every capture,
                                              and how many connections were refused
    GET    /api/captures/<id>                 one capture's row and its QPACK profile
    PATCH  /api/captures/<id>                 rename: {"title": "..."}
    DELETE /api/captures/<id>                 delete a finished capture (409 while live)
    GET    /api/captures/compare?ids=A,B      the profiles side by side
    POST   /api/captures/fetch                {"url", "insecure"?}: the readable client
                                              fetches it, recorded as a capture (202)
    GET    /api/captures/fetch/<n>            how that fetch went

A capture opens in the step view at ``/trace/<id>/step/<n>`` and downloads through
``/api/traces/<id>/download`` like any trace (h3learn/web/captures.py makes it a library
source). The numbers come from h3learn/trace (`qpack_profile`, `ConnectionSummary`);
nothing here reads protocol bytes.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, abort, current_app, jsonify, render_template, request

from h3learn.trace.captures import CaptureError, UnknownCapture, is_capture_id
from h3learn.trace.compare import qpack_profile, setting_names
from h3learn.trace.stored_events import TraceFormatError
from h3learn.transport.fetch_errors import FetchError
from h3learn.web.api import ApiError
from h3learn.web.captures import LiveService
from h3learn.web.library import Entry, UnreadableTrace
from h3learn.web.request_json import json_body

bp = Blueprint("live", __name__)


@bp.errorhandler(ApiError)
def _api_error(error: ApiError) -> tuple[Response, int]:
    return jsonify(error=error.message), error.status


#: The most captures one comparison shows side by side.
MAX_COMPARE = 8
#: The most header lines of one's own a fetch from the page may add, and their length.
MAX_FETCH_HEADER_LINES = 20
MAX_FETCH_HEADER_LINE = 8192
#: The most requests one fetch from the page sends on its connection.
MAX_FETCH_TIMES = 5


def service() -> LiveService:
    live: LiveService = current_app.extensions["h3learn_live"]
    return live


def endpoint_info() -> dict[str, Any] | None:
    """How to connect to the recording endpoint, or None when it is off."""
    endpoint = service().endpoint
    if endpoint is None or not endpoint.running:
        return None
    options = endpoint.options
    return endpoint.how_to_connect() | {
        "limits": {
            "max_connections": options.max_connections,
            "idle_timeout": options.idle_timeout,
            "max_requests": options.max_requests,
            "max_body_bytes": options.max_body_bytes,
            "max_field_section_size": options.max_field_section_size,
            "max_events": service().hub.max_events,
        }
    }


def capture_entry(capture_id: str) -> Entry:
    try:
        entry = service().entries(capture_id) if is_capture_id(capture_id) else None
    except UnreadableTrace as error:
        raise ApiError(422, str(error)) from None
    if entry is None:
        raise ApiError(404, f"no capture with id {capture_id!r}")
    return entry


def profile_of(capture_id: str) -> dict[str, Any]:
    entry = capture_entry(capture_id)
    try:
        events = entry.full_trace().events
    except TraceFormatError as error:
        raise ApiError(400, str(error)) from None
    row = service().hub.row(capture_id)
    return {"capture": row, "profile": qpack_profile(events)}


def named_ids() -> list[str]:
    """The ids the address names: ``ids=A,B`` or ``ids=A&ids=B`` (the chooser's checkboxes)."""
    return [
        part.strip()
        for value in request.args.getlist("ids")
        for part in value.split(",")
        if part.strip()
    ]


class SelectionError(ApiError):
    """Captures named for comparison that break its rule: two to `MAX_COMPARE` different ones."""

    def __init__(self, message: str) -> None:
        super().__init__(400, message)


def compare_ids(parts: list[str]) -> list[str]:
    """The different captures among ``parts`` (`named_ids`), or `SelectionError`."""
    ids = list(dict.fromkeys(parts))
    if len(ids) == 1 and len(parts) > 1:
        raise SelectionError(f"choose two different captures: only {ids[0]!r} was named")
    if len(ids) < 2:
        raise SelectionError("choose at least two captures to compare ('ids=A,B')")
    if len(ids) > MAX_COMPARE:
        raise SelectionError(f"at most {MAX_COMPARE} captures can be compared, not {len(ids)}")
    return ids


# -- pages ---------------------------------------------------------------------------------


def fetch_wait_seconds(timeout: float) -> float:
    """How long the Live page asks after a fetch before it stops. The client gives one
    address ``timeout`` seconds for connecting and all the responses (an address that
    refuses or cannot be reached is left at once, and a time-out ends the fetch), and each
    address it tried up to 1 s to close; three times the timeout and 5 s more is past the
    end of any fetch but one whose name lookup hangs."""
    return 3 * timeout + 5


@bp.get("/live")
def live_page() -> str:
    return render_template(
        "pages/live.html",
        endpoint=endpoint_info(),
        fetch_timeout=service().fetcher.timeout,
        fetch_wait_seconds=fetch_wait_seconds(service().fetcher.timeout),
        max_compare=MAX_COMPARE,
    )


@bp.get("/compare")
def compare_page() -> str | tuple[str, int]:
    """The captures side by side; with none named, or a selection that breaks the rules (one
    capture, or more than `MAX_COMPARE`), the list of captures to choose from, with the rule."""
    named = named_ids()
    if not named:
        return choose_page(named, None, 200)
    try:
        profiles = [profile_of(capture_id) for capture_id in compare_ids(named)]
    except SelectionError as error:
        return choose_page(named, error.message, error.status)
    except ApiError as error:  # a capture that is not there, or cannot be read
        return render_template("pages/compare.html", error=error.message, profiles=[]), error.status
    names = setting_names(item["profile"] for item in profiles)
    return render_template("pages/compare.html", error=None, profiles=profiles, names=names)


def choose_page(named: list[str], error: str | None, status: int) -> tuple[str, int]:
    """The captures to choose from, those named in the address ticked, and ``error`` above."""
    page = render_template(
        "pages/compare.html",
        choosing=True,
        error=error,
        captures=service().rows(),
        chosen=set(named),
        max_compare=MAX_COMPARE,
        profiles=[],
    )
    return page, status


# -- the API -------------------------------------------------------------------------------


@bp.get("/api/captures")
def list_captures() -> Response:
    live = service()
    return jsonify(endpoint=endpoint_info(), captures=live.rows(), refused=live.hub.refused)


@bp.get("/api/captures/compare")
def compare() -> Response:
    profiles = [profile_of(capture_id) for capture_id in compare_ids(named_ids())]
    return jsonify(profiles=profiles, setting_names=setting_names(p["profile"] for p in profiles))


@bp.get("/api/captures/<capture_id>")
def capture(capture_id: str) -> Response:
    return jsonify(profile_of(capture_id))


@bp.patch("/api/captures/<capture_id>")
def rename(capture_id: str) -> Response:
    body = json_body()
    title = body.get("title") if isinstance(body, dict) else None
    if not isinstance(title, str):
        raise ApiError(400, 'send {"title": "..."} as JSON')
    live = service()
    try:
        live.hub.store.rename(capture_id, title)
    except UnknownCapture:
        raise ApiError(404, f"no capture with id {capture_id!r}") from None
    except CaptureError as error:
        raise ApiError(400, str(error)) from None
    live.hub.touch(capture_id)
    return jsonify(live.hub.row(capture_id))


@bp.delete("/api/captures/<capture_id>")
def delete(capture_id: str) -> tuple[str, int]:
    live = service()
    if live.hub.live(capture_id) is not None:
        raise ApiError(
            409, "this connection is still open: its capture can be deleted once it ends"
        )
    try:
        live.hub.store.delete(capture_id)
    except UnknownCapture:
        raise ApiError(404, f"no capture with id {capture_id!r}") from None
    live.entries.forget(capture_id)
    live.hub.removed(capture_id)
    return "", 204


@bp.post("/api/captures/fetch")
def start_fetch() -> tuple[Response, int]:
    body = json_body()
    if not isinstance(body, dict) or not isinstance(body.get("url"), str):
        raise ApiError(400, 'send {"url": "https://..."} as JSON')
    header_lines = body.get("headers")
    if header_lines is None:
        header_lines = []
    problem = header_lines_problem(header_lines)
    if problem is not None:
        raise ApiError(400, problem)
    times = body.get("times", 1)
    if not (type(times) is int and 1 <= times <= MAX_FETCH_TIMES):
        raise ApiError(400, f'"times" is how many requests to send: 1 to {MAX_FETCH_TIMES}')
    try:
        job = service().fetcher.start(
            body["url"],
            insecure=bool(body.get("insecure")),
            header_lines=header_lines,
            times=times,
        )
    except FetchError as error:
        status = 429 if str(error).startswith("busy") else 400
        raise ApiError(status, str(error)) from None
    return jsonify(job.to_json()), 202


def header_lines_problem(header_lines: object) -> str | None:
    """Why a fetch's ``headers`` cannot be used, in words a person at the form can act on."""
    rule = (
        f'"headers" is a list of at most {MAX_FETCH_HEADER_LINES} "name: value" strings,'
        f" each at most {MAX_FETCH_HEADER_LINE} characters"
    )
    if not isinstance(header_lines, list) or not all(
        isinstance(line, str) for line in header_lines
    ):
        return rule
    if len(header_lines) > MAX_FETCH_HEADER_LINES:
        return f"{len(header_lines)} header lines: {rule}"
    for number, line in enumerate(header_lines, start=1):
        if len(line) > MAX_FETCH_HEADER_LINE:
            return f"header line {number} has {len(line):,} characters: {rule}"
    return None


@bp.get("/api/captures/fetch/<int:number>")
def fetch_job(number: int) -> Response:
    job = service().fetcher.job(number)
    if job is None:
        abort(404, f"no fetch number {number}")
    return jsonify(job.to_json())
