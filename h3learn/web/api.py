"""The JSON API the page is built from (documented in docs/web-api.md).

    GET  /api/traces                          the examples and saved traces
    POST /api/traces                          upload a trace (multipart field "file")
    GET  /api/traces/<id>                     title, meta, count, and a page of summaries
    GET  /api/traces/<id>/events              a page of summaries, filtered (and located)
    GET  /api/traces/<id>/steps/<n>           one step: the event in full, the state after it
    GET  /api/traces/<id>/download?format=F   native, qlog or qlog-0.3, as an attachment

Every error is ``{"error": "..."}`` with a 4xx status. Nothing here parses protocol bytes:
the events come from h3learn.trace, the state from `Replay`, the views from present.py.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Callable
from typing import Any

from flask import Blueprint, Response, current_app, jsonify, request
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge

from h3learn.events import CATEGORIES
from h3learn.trace.qlog import to_qlog, to_qlog_03
from h3learn.trace.store import Trace, trace_document
from h3learn.trace.stored_events import TraceFormatError
from h3learn.web.library import (
    Entry,
    TraceLibrary,
    UnknownTrace,
    UnreadableTrace,
    no_such_step,
    step_in_url,
)
from h3learn.web.present import imported_from_qlog, step_event
from h3learn.web.rfc_reader import annotate
from h3learn.web.step_answers import StepAnswers

bp = Blueprint("api", __name__, url_prefix="/api")

#: Step answers, kept as JSON text (step_answers.py).
STEP_ANSWERS = StepAnswers()

#: Summaries per page unless ``limit`` says otherwise, and the most one request may ask for.
DEFAULT_PAGE = 500
MAX_PAGE = 2000

DIRECTIONS = ("sent", "received", "local")
#: What a ``stream`` argument that names no stream is told to do instead.
HOW_TO_TYPE = "type stream numbers separated by commas, or none for the steps on no stream"
ENDPOINT_NAMES = ("client", "server")

#: ?format= -> (the document, the file name's ending).
DOWNLOADS: dict[str, tuple[Callable[[Trace], dict[str, Any]], str]] = {
    "native": (
        lambda trace: trace_document(trace.title, trace.events, trace.meta, trace.created),
        ".json",
    ),
    "qlog": (lambda trace: to_qlog(trace), ".qlog"),
    "qlog-0.3": (lambda trace: to_qlog_03(trace), "-0.3.qlog"),
}


class ApiError(Exception):
    """A request the API refuses; becomes ``{"error": message, **details}`` with ``status``."""

    def __init__(self, status: int, message: str, **details: Any) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.details = details


@bp.errorhandler(ApiError)
def _api_error(error: ApiError) -> tuple[Response, int]:
    return jsonify(error=error.message, **error.details), error.status


@bp.errorhandler(RequestEntityTooLarge)
def _too_large(error: RequestEntityTooLarge) -> tuple[Response, int]:
    # The request (the file and its multipart wrapping) exceeded MAX_CONTENT_LENGTH, which
    # is the file's limit plus room for the wrapping: the limit a user can act on is the file's.
    limit = current_app.config["UPLOAD_MAX_BYTES"]
    return jsonify(error=f"the upload is larger than the limit of {limit_in_words(limit)}"), 413


def limit_in_words(limit: int) -> str:
    """16777216 -> "16777216 bytes (16 MiB)": the upload limit, the same in every message."""
    if limit % 2**20 == 0:
        return f"{limit} bytes ({limit // 2**20} MiB)"
    return f"{limit} bytes"


def json_http_error(error: HTTPException) -> tuple[Response, int]:
    """Any other HTTP error under /api/ as JSON (registered on the app by create_app)."""
    return jsonify(error=error.description or error.name), error.code or 500


def library() -> TraceLibrary:
    lib: TraceLibrary = current_app.extensions["h3learn_library"]
    return lib


def entry_or_404(trace_id: str) -> Entry:
    try:
        return library().get(trace_id)
    except UnreadableTrace as error:
        raise ApiError(422, str(error)) from None
    except UnknownTrace:
        raise ApiError(404, f"no trace with id {trace_id!r}") from None


def int_arg(name: str, default: int, low: int, high: int) -> int:
    text = request.args.get(name)
    if text is None:
        return default
    try:
        value = int(text)
    except ValueError:
        raise ApiError(400, f"{name!r} must be an integer, not {text!r}") from None
    if not low <= value <= high:
        raise ApiError(400, f"{name!r} must be between {low} and {high}, not {value}")
    return value


def choice_arg(name: str, choices: tuple[str, ...]) -> set[str] | None:
    """A comma-separated subset of ``choices`` ("none": the empty set), None when absent."""
    text = request.args.get(name)
    if not text:
        return None
    if text == "none":
        return set()
    picked = set(text.split(","))
    unknown = picked - set(choices)
    if unknown:
        raise ApiError(400, f"{name!r}: unknown {sorted(unknown)}; choose from {list(choices)}")
    return picked


def streams_arg(entry: Entry, shown: list[dict[str, Any]]) -> set[int | None] | None:
    """``stream``: comma-separated stream IDs, ``none`` for events on no stream; None if absent.

    Text that is not a stream ID, or the ID of a stream the trace does not have, is a 400
    whose message a person can act on: what was wrong, and the streams there are. Those are
    the streams of the ``shown`` rows (a lesson's page names none past a question not yet
    answered); a stream that only appears after them is not wrong, it matches no row yet.
    """
    text = request.args.get("stream", "").strip()
    if not text:
        return None
    picked: set[int | None] = set()
    for part in text.split(","):
        part = part.strip()
        if part == "none":
            picked.add(None)
        elif part.isascii() and part.isdigit():
            picked.add(int(part))
        elif part:
            raise _no_such_stream(entry, shown, f"{part[:40]!r} is not a stream ID: {HOW_TO_TYPE}")
    if not picked:
        raise _no_such_stream(entry, shown, f"{text[:40]!r} names no stream: {HOW_TO_TYPE}")
    unknown = sorted(s for s in picked if s is not None and s not in entry.streams)
    if unknown:
        missing = "stream" if len(unknown) == 1 else "streams"
        raise _no_such_stream(entry, shown, f"this trace has no {missing} {in_words(unknown)}")
    return picked


#: A message lists at most this many stream IDs (a busy capture has hundreds).
STREAMS_NAMED = 12


def _no_such_stream(entry: Entry, shown: list[dict[str, Any]], what: str) -> ApiError:
    """The 400 for a bad ``stream``: what was wrong; the streams of the rows ``shown``."""
    there = sorted({row["stream_id"] for row in shown if row["stream_id"] is not None})
    before = f" before step {len(shown)}" if len(shown) < len(entry.events) else ""
    if not there:
        choices = f"the trace has no streams{before}, only steps on none"
    elif len(there) == 1:
        choices = f"the trace's one stream{before} is {there[0]}"
    elif len(there) <= STREAMS_NAMED:
        choices = f"the trace's streams{before} are {in_words(there)}"
    else:
        first = ", ".join(str(s) for s in there[: STREAMS_NAMED - 1])
        choices = f"the trace's streams{before} are {first}, …, {there[-1]} ({len(there)} streams)"
    return ApiError(400, f"{what}; {choices}", argument="stream", streams=there)


def in_words(numbers: list[int]) -> str:
    """[0, 2, 3] -> "0, 2 and 3"."""
    text = [str(n) for n in numbers]
    return text[0] if len(text) == 1 else f"{', '.join(text[:-1])} and {text[-1]}"


def page_of(entry: Entry) -> dict[str, Any]:
    """The summaries ``offset`` .. ``offset + limit`` of those matching the filters, among
    the steps before ``until`` (all of them without it: a lesson's page leaves out the steps
    past a question the learner has not answered, docs/lessons.md).

    Without a filter only the page's rows are made (a large trace opened at its middle
    needs 200 rows, not 10,000), and step n is row n.
    """
    offset = int_arg("offset", 0, 0, 10**9)
    limit = int_arg("limit", DEFAULT_PAGE, 1, MAX_PAGE)
    categories = choice_arg("category", CATEGORIES)
    directions = choice_arg("direction", DIRECTIONS)
    endpoints = choice_arg("endpoint", ENDPOINT_NAMES)
    query = request.args.get("q", "").strip().lower()
    end = len(entry.events)
    if "until" in request.args:
        end = min(end, int_arg("until", 0, 0, 10**9))
    filtered = query or request.args.get("stream", "").strip()
    if not filtered and all(choice is None for choice in (categories, directions, endpoints)):
        out: dict[str, Any] = {
            "total": end,
            "offset": offset,
            "limit": limit,
            "events": entry.rows(offset, min(offset + limit, end)),
        }
        if "locate" in request.args:
            seq = int_arg("locate", 0, 0, 10**9)
            out["located"] = seq if seq < end else None
        return out
    summaries = entry.summaries()[:end]
    streams = streams_arg(entry, summaries)
    texts = entry.search_texts()
    matching = [
        row
        for row in summaries
        if (categories is None or row["category"] in categories)
        and (directions is None or row["direction"] in directions)
        and (endpoints is None or row["endpoint"] in endpoints)
        and (streams is None or row["stream_id"] in streams)
        and (not query or query in texts[row["seq"]])
    ]
    out = {
        "total": len(matching),
        "offset": offset,
        "limit": limit,
        "events": matching[offset : offset + limit],
    }
    if "locate" in request.args:
        # Where step ``locate`` is among the matching rows (rows are in seq order).
        seq = int_arg("locate", 0, 0, 10**9)
        position = bisect.bisect_left(matching, seq, key=lambda row: int(row["seq"]))
        found = position < len(matching) and matching[position]["seq"] == seq
        out["located"] = position if found else None
    return out


@bp.get("/traces")
def list_traces() -> Response:
    return jsonify(traces=library().listing())


@bp.post("/traces")
def upload_trace() -> tuple[Response, int]:
    upload = request.files.get("file")
    if upload is None:
        raise ApiError(400, "no file: send the trace as the multipart field 'file'")
    data = upload.read()
    limit = library().max_bytes
    if len(data) > limit:
        raise ApiError(
            413, f"the upload is {len(data)} bytes, more than the limit of {limit_in_words(limit)}"
        )
    if not data:
        raise ApiError(400, "the uploaded file is empty")
    try:
        entry = library().save_upload(data, upload.filename or "upload")
    except TraceFormatError as error:
        raise ApiError(400, str(error)) from None
    out = entry.listing() | {"source_kind": entry.source_kind, "warnings": entry.trace.warnings}
    return jsonify(out), 201


@bp.get("/traces/<trace_id>")
def trace_meta(trace_id: str) -> Response:
    entry = entry_or_404(trace_id)
    return jsonify(
        entry.listing()
        | {
            "meta": entry.trace.meta,
            "warnings": entry.trace.warnings,
            "source_kind": entry.source_kind,
            "count": len(entry.events),
            "page": page_of(entry),
        }
    )


@bp.get("/traces/<trace_id>/events")
def trace_events(trace_id: str) -> Response:
    return jsonify(page_of(entry_or_404(trace_id)))


@bp.get("/traces/<trace_id>/steps/<step>")
def trace_step(trace_id: str, step: str) -> Response:
    """One step, built once and then served from `STEP_ANSWERS` (a class asks all at once)."""
    entry = entry_or_404(trace_id)
    number = step_in_url(step)
    if not isinstance(number, int):
        raise ApiError(404, no_such_step(trace_id, len(entry.events), number))
    answer = STEP_ANSWERS.get(entry, number, lambda: _step_answer(entry, trace_id, number))
    return current_app.response_class(answer, mimetype="application/json")


def _step_answer(entry: Entry, trace_id: str, step: int) -> str:
    count = len(entry.events)
    if not 0 <= step < count:
        raise ApiError(404, no_such_step(trace_id, count, step))
    try:
        event = entry.event(step)
    except TraceFormatError as error:
        raise ApiError(400, str(error)) from None
    state = entry.state_after(step)
    changed = state.pop("changed", [])
    shown = step_event(event, entry.types, imported=imported_from_qlog(entry.trace.meta))
    annotate(shown["rfc"])
    answer = {
        "trace": trace_id,
        "title": entry.trace.title,
        "step": step,
        "count": count,
        "event": shown,
        "state": state,
        "changed": changed,
        # A capture records one endpoint: the other's state is not observed, only inferred.
        "observed": entry.observed,
    }
    return current_app.json.dumps(answer, separators=(",", ":")) + "\n"


@bp.get("/traces/<trace_id>/download")
def download(trace_id: str) -> Response:
    entry = entry_or_404(trace_id)
    name = request.args.get("format", "native")
    if name not in DOWNLOADS:
        raise ApiError(400, f"'format' must be one of {sorted(DOWNLOADS)}, not {name!r}")
    build, ending = DOWNLOADS[name]
    try:
        document = build(entry.full_trace())
    except TraceFormatError as error:
        raise ApiError(400, str(error)) from None
    body = json.dumps(document, ensure_ascii=False, allow_nan=False)
    response = Response(body, mimetype="application/json")
    response.headers["Content-Disposition"] = f'attachment; filename="{trace_id}{ending}"'
    return response
