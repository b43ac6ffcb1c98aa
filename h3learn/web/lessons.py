"""Lessons in the web UI (issue 5): the curriculum, a lesson's pages, checkpoints, what-if.

    GET  /lesson/<id>                          the introduction: goals, prerequisites, the
                                               what-if form, and a link to step 0
    GET  /lesson/<id>/step/<n>                 the step-through page, with the lesson's notes
                                               beside each step and its checkpoints
    POST /lesson/<id>/what-if                  record the lesson again with changed settings,
                                               save it as a trace, and open it
    POST /api/lessons/<id>/what-if             the same for a page that stays (a class):
                                               {"overrides": {...}} -> the trace's id
    GET  /lesson/<id>/variants/<n>             the same for the lesson's n-th declared variant
                                               (its row in the comparison table)
    GET  /api/lessons                          the curriculum, in order
    GET  /api/lessons/<id>                     a lesson: its texts (as HTML), its notes by
                                               step, its checkpoints without their answers
    POST /api/lessons/<id>/checkpoints/<cid>   {"answer": "..."} or {"reveal": true}: the
                                               server checks the answer and explains it
    GET  /api/lessons/<id>/comparison          the figures of each declared variant (what-if
                                               lab, h3learn/curriculum/comparison.py)

The lessons come from `h3learn.curriculum` (config ``LESSONS_DIR``, read when the app is
made; a lesson is recorded the first time it is opened, then kept). A lesson's trace is
served to the step-through page like any other trace, under the lesson's id (the library
asks `lesson_entry`). The browser is never sent a checkpoint's answer before the learner
has given it, or asked for it. A what-if trace's step page says which settings changed
from the lesson's (`what_if_note`, a banner), wherever it is opened.
"""

from __future__ import annotations

import hashlib
import json
import threading
from typing import Any

from flask import (
    Blueprint,
    Response,
    abort,
    current_app,
    jsonify,
    redirect,
    render_template,
    request,
)
from werkzeug.wrappers import Response as BaseResponse

from h3learn.curriculum.catalogue import Curriculum
from h3learn.curriculum.comparison import COLUMNS, Figures, Variant
from h3learn.curriculum.lesson import Lesson, RecordedLesson, check_overrides
from h3learn.curriculum.scenario import Overrides
from h3learn.curriculum.source import SourceError
from h3learn.trace.store import write_trace
from h3learn.web.api import ApiError, int_arg
from h3learn.web.library import Entry, TraceLibrary, shown_step, step_in_url
from h3learn.web.markdown import markup, render, render_inline
from h3learn.web.present import rfc_link
from h3learn.web.request_json import json_body

bp = Blueprint("lessons", __name__)

#: What the what-if form offers (issue 5, lesson 16): setting -> the values to choose from.
WHAT_IF_CHOICES: dict[str, tuple[Any, ...]] = {
    "qpack_max_table_capacity": (0, 256, 4096),
    "qpack_blocked_streams": (0, 100),
    "huffman": (True, False),
}


def curriculum() -> Curriculum:
    found: Curriculum = current_app.extensions["h3learn_curriculum"]
    return found


def lesson_or_404(lesson_id: str) -> Lesson:
    lesson = curriculum().get(lesson_id)
    if lesson is None:
        abort(404, f"no lesson with id {lesson_id!r}")
    return lesson


def recorded_or_500(lesson: Lesson) -> RecordedLesson:
    try:
        return curriculum().recorded(lesson.id)
    except SourceError as error:
        abort(500, f"lesson {lesson.id!r} cannot be recorded: {error}")


# -- the lessons as traces (asked by the library) -----------------------------------------


def install(app_curriculum: Curriculum, library: TraceLibrary) -> None:
    """Let the library find lessons by id: a lesson's trace as an `Entry`, made once."""
    entries: dict[str, Entry] = {}
    lock = threading.Lock()

    def lesson_entry(lesson_id: str) -> Entry | None:
        lesson = app_curriculum.get(lesson_id)
        if lesson is None:
            return None
        with lock:
            if lesson_id not in entries:
                trace = app_curriculum.recorded(lesson_id).trace()
                entries[lesson_id] = Entry(lesson_id, "lesson", trace, description=lesson.summary)
            return entries[lesson_id]

    library.sources.append(lesson_entry)


# -- what the pages and the API say about a lesson ----------------------------------------


def listing(lesson: Lesson) -> dict[str, Any]:
    return {
        "id": lesson.id,
        "number": lesson.number,
        "title": lesson.title,
        "summary": lesson.summary,
        "checkpoints": len(lesson.checkpoints),
        "url": f"/lesson/{lesson.id}",
    }


def checkpoints_public(recorded: RecordedLesson) -> list[dict[str, Any]]:
    """Each checkpoint's question and the step it stops before: never its answer."""
    out = []
    for checkpoint, step in zip(
        recorded.lesson.checkpoints, recorded.checkpoint_steps, strict=True
    ):
        out.append(
            {
                "id": checkpoint.id,
                "step": step,
                "kind": checkpoint.kind,
                "question_html": render(checkpoint.question),
                "choices": list(checkpoint.choices),
            }
        )
    return out


def notes_by_step(recorded: RecordedLesson, until: int) -> dict[str, list[dict[str, Any]]]:
    """The notes of the steps before ``until``, by step."""
    notes: dict[str, list[dict[str, Any]]] = {}
    for note, step in zip(recorded.lesson.notes, recorded.note_steps, strict=True):
        if step is None or step >= until:
            continue
        notes.setdefault(str(step), []).append(
            {
                "title": note.title,
                "html": render(note.text),
                "rfc": [rfc_link(section) for section in note.rfc],
            }
        )
    return notes


def following(lesson: Lesson) -> list[Lesson]:
    """Where to go after ``lesson``: the lessons that name it as a prerequisite, in
    curriculum order; when none does, the next lesson of the curriculum (none after the last)."""
    ordered = curriculum().ordered()
    building_on = [each for each in ordered if lesson.id in each.prerequisites]
    if building_on:
        return building_on
    after = [each for each in ordered if each.number > lesson.number]
    return after[:1]


def lesson_json(lesson: Lesson, recorded: RecordedLesson, until: int) -> dict[str, Any]:
    """A lesson for its page; the notes (and the conclusion, at the last step) only of the
    steps before ``until``: a page holds nothing past a question not yet answered."""
    count = len(recorded.events)
    concluded = bool(lesson.conclusion) and until >= count
    return listing(lesson) | {
        "goals_html": [render_inline(goal) for goal in lesson.goals],
        "prerequisites": [listing(curriculum().lessons[p]) for p in lesson.prerequisites],
        "following": [listing(each) for each in following(lesson)],
        "introduction_html": render(lesson.introduction),
        "conclusion_html": render(lesson.conclusion) if concluded else "",
        "count": count,
        "until": min(until, count),
        "notes": notes_by_step(recorded, until),
        "checkpoint_list": checkpoints_public(recorded),
        "what_if": {
            "choices": {key: list(values) for key, values in WHAT_IF_CHOICES.items()},
            "lesson": {
                side: {key: lesson.scenario.side(side).get(key) for key in WHAT_IF_CHOICES}
                for side in ("client", "server")
            },
        },
    }


def comparison_rows(lesson: Lesson) -> list[dict[str, Any]]:
    """The comparison table of a lesson with variants: one row per variant (none without)."""
    rows = []
    compared: list[tuple[Variant, Figures]] = curriculum().comparison(lesson.id)
    for index, (variant, figures) in enumerate(compared):
        rows.append(
            {
                "name": variant.name,
                "settings": variant.describe(),
                "overrides": variant.overrides,
                "figures": figures.to_json(),
                "url": f"/lesson/{lesson.id}/variants/{index}",
            }
        )
    return rows


# -- pages ---------------------------------------------------------------------------------


@bp.app_context_processor
def _lessons_for_templates() -> dict[str, Any]:
    """``curriculum_lessons()`` in any template (the index page lists them)."""
    return {"curriculum_lessons": lambda: [listing(each) for each in curriculum().ordered()]}


@bp.get("/lesson/<lesson_id>")
def lesson_page(lesson_id: str) -> str:
    lesson = lesson_or_404(lesson_id)
    recorded = recorded_or_500(lesson)
    lessons = curriculum().lessons
    return render_template(
        "lessons/lesson.html",
        lesson=lesson,
        count=len(recorded.events),
        markup=markup,
        render_inline=render_inline,
        prerequisites=[lessons[p] for p in lesson.prerequisites],
        following=following(lesson),
        scenario=lesson.scenario,
        choices=WHAT_IF_CHOICES,
        checkpoints=len(lesson.checkpoints),
        comparison=comparison_rows(lesson),
        columns=COLUMNS,
    )


@bp.get("/lesson/<lesson_id>/step/<step>")
def lesson_step(lesson_id: str, step: str) -> str:
    lesson = lesson_or_404(lesson_id)
    recorded = recorded_or_500(lesson)
    library: TraceLibrary = current_app.extensions["h3learn_library"]
    entry = library.get(lesson_id)
    count = len(recorded.events)
    number = step_in_url(step)
    if not isinstance(number, int) or not 0 <= number < count:
        abort(404, f"lesson {lesson_id!r} has steps 0 to {count - 1}, not {shown_step(number)}")
    stops = [{"id": c["id"], "step": c["step"]} for c in checkpoints_public(recorded)]
    return render_template(
        "lessons/step.html",
        entry=entry,
        step=number,
        count=count,
        lesson=lesson,
        base_url=f"/lesson/{lesson_id}",
        checkpoint_stops=stops,
    )


@bp.post("/lesson/<lesson_id>/what-if")
def what_if(lesson_id: str) -> BaseResponse:
    """Rerun the lesson with the form's settings; the trace is saved and opened."""
    lesson = lesson_or_404(lesson_id)
    try:
        overrides = overrides_from_form(request.form)
        if not overrides:
            return redirect(f"/lesson/{lesson_id}/step/0")
        chosen = offered_overrides(overrides)
    except ValueError as error:
        abort(400, str(error))
    trace_id = what_if_trace(lesson, chosen)
    return redirect(f"/trace/{trace_id}/step/0", code=303)


@bp.get("/lesson/<lesson_id>/variants/<index>")
def variant_trace(lesson_id: str, index: str) -> BaseResponse:
    """Open one row of the comparison table: the variant's recording, saved as a trace."""
    lesson = lesson_or_404(lesson_id)
    number = step_in_url(index)
    if not isinstance(number, int) or not 0 <= number < len(lesson.variants):
        count = len(lesson.variants)
        has = f"variants 0 to {count - 1}" if count else "no variants"
        abort(404, f"lesson {lesson_id!r} has {has}, not {shown_step(number)}")
    trace_id = what_if_trace(lesson, lesson.variants[number].overrides)
    return redirect(f"/trace/{trace_id}/step/0", code=303)


def overrides_from_form(form: Any) -> dict[str, Any]:
    """Form fields ``client.huffman=false`` ...; "" means "as in the lesson".

    Each value is the JSON text of one of the choices the form offers; any other text is
    kept as text, which `offered_overrides` (shared with the API) then refuses by name.
    """
    overrides: dict[str, Any] = {}
    for field_name, text in form.items():
        if not text:
            continue
        side, dot, key = field_name.partition(".")
        if not dot:
            raise ValueError(
                f"unknown field {field_name[:40]!r}: the form's fields are side.setting"
            )
        offered = WHAT_IF_CHOICES.get(key, ())
        value = next((choice for choice in offered if json.dumps(choice) == text), text)
        overrides.setdefault(side, {})[key] = value
    return overrides


def what_if_trace(lesson: Lesson, overrides: Overrides) -> str:
    """Record and save the what-if run (once: its id is a hash of what it is)."""
    library: TraceLibrary = current_app.extensions["h3learn_library"]
    digest = hashlib.sha256(
        json.dumps([lesson.id, overrides], sort_keys=True).encode()
    ).hexdigest()[:12]
    trace_id = f"whatif-{lesson.number:02d}-{digest}"
    path = library.path_of(trace_id)
    if not path.exists():
        recorded = curriculum().record_what_if(lesson.id, overrides)
        trace = recorded.trace()
        write_trace(path, trace.title, trace.events, trace.meta, created=trace.created)
    return trace_id


# -- the API ------------------------------------------------------------------------------


def api_lesson(lesson_id: str) -> Lesson:
    lesson = curriculum().get(lesson_id)
    if lesson is None:
        raise ApiError(404, f"no lesson with id {lesson_id!r}")
    return lesson


def api_recorded(lesson: Lesson) -> RecordedLesson:
    try:
        return curriculum().recorded(lesson.id)
    except SourceError as error:
        raise ApiError(500, f"lesson {lesson.id!r} cannot be recorded: {error}") from None


@bp.get("/api/lessons")
def api_lessons() -> Response:
    return jsonify(lessons=[listing(lesson) for lesson in curriculum().ordered()])


@bp.get("/api/lessons/<lesson_id>")
def api_lesson_detail(lesson_id: str) -> Response:
    """The lesson; ``?until=N``: the notes of steps 0 to N - 1 only (lesson.js asks so)."""
    lesson = api_lesson(lesson_id)
    recorded = api_recorded(lesson)
    until = int_arg("until", len(recorded.events), 0, 10**9)
    return jsonify(lesson_json(lesson, recorded, until))


@bp.get("/api/lessons/<lesson_id>/comparison")
def api_comparison(lesson_id: str) -> Response:
    lesson = api_lesson(lesson_id)
    api_recorded(lesson)  # a broken lesson is a 500 with its reason, here as elsewhere
    return jsonify(columns=COLUMNS, variants=comparison_rows(lesson))


@bp.post("/api/lessons/<lesson_id>/checkpoints/<checkpoint_id>")
def api_check(lesson_id: str, checkpoint_id: str) -> Response:
    lesson = api_lesson(lesson_id)
    found = api_recorded(lesson).checkpoint(checkpoint_id)
    if found is None:
        raise ApiError(404, f"lesson {lesson_id!r} has no checkpoint {checkpoint_id!r}")
    checkpoint, step = found
    body = json_body()
    if not isinstance(body, dict):
        raise ApiError(400, 'send JSON: {"answer": "..."} or {"reveal": true}')
    reveal = body.get("reveal") is True
    answer = body.get("answer", "")
    if not isinstance(answer, str) or (not reveal and not answer.strip()):
        raise ApiError(400, "'answer' must be a string (what the learner typed or chose)")
    if len(answer) > 500:
        raise ApiError(400, "'answer' is longer than 500 characters")
    correct = not reveal and checkpoint.is_correct(answer)
    out: dict[str, Any] = {"checkpoint": checkpoint.id, "step": step, "correct": correct}
    if correct or reveal:
        out["answer"] = str(checkpoint.answer)
        out["explain_html"] = render(checkpoint.explain)
    else:
        out["hint_html"] = render(checkpoint.hint) if checkpoint.hint else ""
    return jsonify(out)


@bp.post("/api/lessons/<lesson_id>/what-if")
def api_what_if(lesson_id: str) -> Response:
    """Record and save a what-if run of the form's choices; its trace id and what changed."""
    lesson = api_lesson(lesson_id)
    body = json_body()
    overrides = body.get("overrides") if isinstance(body, dict) else None
    if not isinstance(overrides, dict):
        raise ApiError(400, 'send JSON: {"overrides": {"server": {"qpack_max_table_capacity": 0}}}')
    try:
        chosen = offered_overrides(overrides)
    except ValueError as error:
        raise ApiError(400, str(error)) from None
    trace_id = what_if_trace(lesson, chosen)
    library: TraceLibrary = current_app.extensions["h3learn_library"]
    entry = library.get(trace_id)
    return jsonify(
        trace=trace_id,
        title=entry.trace.title,
        count=len(entry.events),
        changes=what_if_changes(lesson, chosen),
        url=f"/trace/{trace_id}/step/0",
    )


def offered_overrides(overrides: dict[str, Any]) -> Overrides:
    """``overrides`` if it holds only what the what-if form offers (`WHAT_IF_CHOICES`), and
    at least one of it: every other value would be one more trace saved on this server."""
    chosen: Overrides = {}
    for side, values in overrides.items():
        if side not in ("client", "server") or not isinstance(values, dict):
            raise ValueError(
                f"'overrides' maps 'client' or 'server' to settings, not {side[:40]!r}"
            )
        for key, value in values.items():
            offered = WHAT_IF_CHOICES.get(key)
            if offered is None:
                offers = ", ".join(WHAT_IF_CHOICES)
                raise ValueError(f"{side}.{key[:40]}: the what-if form offers {offers}")
            if not any(value == choice and type(value) is type(choice) for choice in offered):
                choices = ", ".join(json.dumps(choice) for choice in offered)
                raise ValueError(f"{side}.{key}: choose one of {choices}, not {json_shown(value)}")
            chosen.setdefault(side, {})[key] = value
    if not chosen:
        raise ValueError("choose at least one setting to change")
    check_overrides(chosen)
    return chosen


def json_shown(value: Any) -> str:
    """A value as JSON for a message, cut after 40 characters (form fields are any text)."""
    text = json.dumps(value)
    return text if len(text) <= 40 else f"{text[:40]}… ({len(text)} characters)"


def what_if_changes(lesson: Lesson, overrides: Overrides) -> list[dict[str, Any]]:
    """Each changed setting: its side, its name, the lesson's value and the what-if value."""
    return [
        {
            "side": side,
            "setting": key,
            "lesson": lesson.scenario.side(side).get(key),
            "value": value,
        }
        for side, values in sorted(overrides.items())
        for key, value in sorted(values.items())
    ]


@bp.app_context_processor
def _what_if_for_templates() -> dict[str, Any]:
    """``what_if_note(entry)`` in any template (the step page shows it as a banner)."""
    return {"what_if_note": what_if_note}


def what_if_note(entry: Entry) -> dict[str, Any] | None:
    """For a what-if trace: its lesson and the settings changed from the lesson's; else None."""
    meta = entry.trace.meta
    lesson = curriculum().get(str(meta.get("lesson", "")))
    overrides = meta.get("overrides")
    if lesson is None or not isinstance(overrides, dict) or entry.kind == "lesson":
        return None
    try:
        check_overrides(overrides)
    except (ValueError, AttributeError):
        return None  # a hand-edited trace: say nothing rather than something wrong
    changes = what_if_changes(lesson, overrides)
    count = len(recorded_or_500(lesson).events)
    return {"lesson": listing(lesson) | {"count": count}, "changes": changes}


@bp.errorhandler(ApiError)
def _api_error(error: ApiError) -> tuple[Response, int]:
    return jsonify(error=error.message), error.status


@bp.app_errorhandler(SourceError)
def _broken_lesson(error: SourceError) -> tuple[str, int]:
    """A lesson file broken after the app started (never expected): say where, as text."""
    return f"a lesson file is broken: {error}", 500
