"""The HTML pages and the browser's Socket.IO client.

    GET /                              the trace list, with an upload form
    GET /trace/<id>                    redirects to step 0
    GET /trace/<id>/step/<n>           the step-through page, opened at step n (a link a
                                       teacher can share: "look at step 14"); a lesson's
                                       trace redirects to the lesson's own page
    GET /trace/<id>/print?from=&to=    a handout: every step of a range as one block,
        &step=                         rendered here (handout.py), for the printer; `step`
                                       is the step the reader came from ("Back" goes there)
    GET /vendor/socket.io.min.js       the npm package socket.io-client, served locally

Templates only lay out the page; the step-through page fills itself from the JSON API
(api.py), the handout is rendered from the same answers on the server. Jinja escapes every
value, so titles and header values from uploaded traces stay text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

from flask import (
    Blueprint,
    Response,
    abort,
    current_app,
    redirect,
    render_template,
    request,
    send_file,
    url_for,
)
from werkzeug.wrappers import Response as BaseResponse

from h3learn.trace.stored_events import TraceFormatError
from h3learn.web.handout import MAX_STEPS, handout, step_range
from h3learn.web.library import (
    Entry,
    TraceLibrary,
    UnknownTrace,
    UnreadableTrace,
    no_such_step,
    step_in_url,
)

bp = Blueprint("pages", __name__)

#: Where `npm ci --prefix web` (scripts/setup) puts the browser client, from the repository root.
SOCKETIO_CLIENT = Path("web/node_modules/socket.io-client/dist/socket.io.min.js")


def library() -> TraceLibrary:
    lib: TraceLibrary = current_app.extensions["h3learn_library"]
    return lib


def default_socketio_client() -> Path:
    """The client file next to the package when installed, else in the source tree's web/."""
    packaged = Path(__file__).parent / "static" / "vendor" / "socket.io.min.js"
    if packaged.is_file():
        return packaged
    return Path(__file__).resolve().parents[2] / SOCKETIO_CLIENT


@bp.app_context_processor
def _trace_notes_for_templates() -> dict[str, Any]:
    """``trace_notes(entry)`` in any template (the step page lists them above the steps)."""
    return {"trace_notes": trace_notes}


#: How many kinds of left-out events a note names (the rest are counted).
NAMED_KINDS = 6


def trace_notes(entry: Entry) -> list[str]:
    """What a reader should know before stepping through a trace: what an import left out
    (``meta["skipped"]``, docs/events.md "qlog import"), that it holds no bytes
    (``meta["note"]``), and the warnings the reader gave (kept only while it is cached)."""
    meta = entry.trace.meta
    notes: list[str] = []
    counts = left_out(meta.get("skipped"))
    if counts:
        total = sum(n for _, n in counts)
        named = ", ".join(f"{kind} ({n})" for kind, n in counts[:NAMED_KINDS])
        rest = len(counts) - NAMED_KINDS
        more = f" and {rest} more kind{'s' if rest > 1 else ''}" if rest > 0 else ""
        source = meta.get("source")
        imported = f"imported from {source}" if isinstance(source, str) else "imported"
        events = "event" if total == 1 else "events"
        notes.append(
            f"This trace was {imported}: {total} {events} of kinds the import does not read"
            f" were left out: {named}{more}. Steps, states and tables show only what was kept."
        )
    note = meta.get("note")
    if isinstance(note, str) and note:
        notes.append(f"From the import: {note}.")
    notes.extend(entry.trace.warnings)
    return notes


def left_out(skipped: object) -> list[tuple[str, int]]:
    """The kinds of event an import left out (``meta["skipped"]``), each with how many, the
    most first; nothing for a value that is not such a count."""
    if not isinstance(skipped, dict):
        return []
    counts = [(str(kind), n) for kind, n in skipped.items() if type(n) is int and n > 0]
    return sorted(counts, key=lambda item: (-item[1], item[0]))


@bp.get("/")
def index() -> str:
    return render_template("pages/index.html", traces=library().listing())


@bp.get("/lessons")
def lessons() -> BaseResponse:
    """The lessons are listed on the front page; a typed /lessons goes there."""
    return redirect(url_for("pages.index", _anchor="lessons-heading"))


@bp.get("/trace/<trace_id>")
def trace(trace_id: str) -> BaseResponse:
    return redirect(f"/trace/{trace_id}/step/0")


def entry_or_404(trace_id: str) -> Entry:
    try:
        return library().get(trace_id)
    except UnreadableTrace as error:
        abort(422, str(error))
    except UnknownTrace:
        abort(404, f"no trace with id {trace_id!r}")


@bp.get("/trace/<trace_id>/step/<step>")
def step(trace_id: str, step: str) -> str | BaseResponse:
    entry = entry_or_404(trace_id)
    if entry.kind == "lesson":
        # A lesson's trace is shown on the lesson's page, with its notes and questions.
        query = request.query_string.decode()
        path = f"/lesson/{trace_id}/step/{quote(step, safe='')}"
        return redirect(path + (f"?{query}" if query else ""))
    number = step_in_url(step)
    if not isinstance(number, int) or not 0 <= number < len(entry.events):
        abort(404, no_such_step(trace_id, len(entry.events), number))
    return render_template("pages/step.html", entry=entry, step=number, count=len(entry.events))


@bp.get("/trace/<trace_id>/print")
def handout_page(trace_id: str) -> str:
    """Steps ``from`` to ``to`` as a handout; ``step``: where the reader came from.

    Without ``from`` the handout starts at the block of as many steps as it holds that
    holds ``step`` (or at 0); "Back" returns to ``step`` (or to the first step printed).
    """
    entry = entry_or_404(trace_id)
    count = len(entry.events)
    try:
        first = _step_arg("from")
        last = _step_arg("to")
        came_from = _step_arg("step")
        if came_from is not None and came_from >= count:
            raise ValueError(f"'step' must be within 0 to {count - 1}, not {came_from}")
        start, end = step_range(count, first, last, came_from)
        steps = handout(entry, start, end)
    except (ValueError, TraceFormatError) as error:
        abort(400, str(error))
    return render_template(
        "pages/print.html",
        entry=entry,
        steps=steps,
        start=start,
        end=end,
        back=start if came_from is None else came_from,
        came_from=came_from,
        count=len(entry.events),
        max_steps=MAX_STEPS,
    )


def _step_arg(name: str) -> int | None:
    text = request.args.get(name, "").strip()
    if not text:
        return None
    if not text.isdigit():
        raise ValueError(f"{name!r} must be a step number, not {text!r}")
    return int(text)


@bp.get("/vendor/socket.io.min.js")
def socketio_client() -> Response:
    path = Path(current_app.config.get("SOCKETIO_CLIENT") or default_socketio_client())
    if not path.is_file():
        message = (
            "socket.io-client is not installed: run scripts/setup (it runs "
            "`npm ci --prefix web`); live updates are off until then."
        )
        return Response(message, status=503, mimetype="text/plain")
    return send_file(path, mimetype="text/javascript", max_age=3600)
