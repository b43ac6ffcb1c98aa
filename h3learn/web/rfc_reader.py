"""The annotated RFC in the web UI: the step view's explanations and the RFC reader pages.

    GET /rfc                  the RFCs the project explains
    GET /rfc/<number>         one RFC: its table of contents, each section's annotation (what
                              it says, why, the usual mistakes) with a link to the official
                              text, and the lesson steps that demonstrate it; a normative
                              section no lesson demonstrates is marked

`annotate` adds each governing section's annotation to a step of the JSON API (the step
view's "RFC" panel). The annotations come from lessons/rfc/*.toml (h3learn.curriculum.
annotations), the demonstrations from the recorded lessons (h3learn.curriculum.coverage),
both below the web layer.
"""

from __future__ import annotations

import threading
from typing import Any

from flask import Blueprint, abort, current_app, render_template

from h3learn.curriculum.annotations import Annotation, Annotations
from h3learn.curriculum.catalogue import Curriculum
from h3learn.curriculum.coverage import Demonstration, demonstrations, in_goal
from h3learn.curriculum.rfc_toc import RFC_TITLES, depth, label, split, url
from h3learn.curriculum.source import SourceError
from h3learn.web.markdown import markup, render

bp = Blueprint("rfc", __name__)

#: How many steps of one lesson the reader lists under a section (the rest are counted).
STEPS_PER_LESSON = 3


def known_annotations() -> Annotations:
    curriculum: Curriculum = current_app.extensions["h3learn_curriculum"]
    return curriculum.annotations


def annotation_json(annotation: Annotation) -> dict[str, Any]:
    return {
        "normative": annotation.normative,
        "says_html": render(annotation.says),
        "why_html": render(annotation.why),
        "pitfalls_html": render(annotation.pitfalls),
        "reader": f"/rfc/{split(annotation.section)[0]}#s-{split(annotation.section)[1]}",
    }


def annotate(links: list[dict[str, Any]]) -> None:
    """Give each RFC link of a step its annotation, or say clearly which one is missing."""
    known = known_annotations()
    for link in links:
        annotation = known.get(link["section"])
        if annotation is not None:
            link["annotation"] = annotation_json(annotation)
            if not link.get("title"):
                link["title"] = annotation.title
        else:
            number, part = split(link["section"])
            link["annotation"] = None
            link["missing"] = (
                f"{label(link['section'])} has no annotation yet: lessons/rfc/{number}.toml"
                f' needs a [[section]] with id = "{part}"'
            )


# -- the reader ---------------------------------------------------------------------------

_demonstrated: dict[int, dict[str, list[Demonstration]]] = {}
_lock = threading.Lock()


def demonstrated() -> dict[str, list[Demonstration]]:
    """Section -> steps demonstrating it, from every lesson (recorded once per app)."""
    curriculum: Curriculum = current_app.extensions["h3learn_curriculum"]
    with _lock:
        key = id(curriculum)
        if key not in _demonstrated:
            try:
                recorded = [curriculum.recorded(lesson_id) for lesson_id in curriculum.lessons]
            except SourceError as error:
                abort(500, f"a lesson cannot be recorded: {error}")
            _demonstrated[key] = demonstrations(recorded)
        return _demonstrated[key]


def rfcs() -> list[dict[str, Any]]:
    known = known_annotations()
    numbers = sorted({"9114", "9204", *known.rfcs}, key=int)
    return [
        {
            "number": number,
            "title": known.rfcs.get(number) or RFC_TITLES.get(number, ""),
            "annotated": sum(1 for s in known.by_section if s.startswith(f"{number}#")),
            "sections": len(known.sections_of(number)),
        }
        for number in numbers
    ]


@bp.get("/rfc")
def rfc_index() -> str:
    return render_template("rfc/index.html", rfcs=rfcs())


@bp.get("/rfc/<number>")
def rfc_page(number: str) -> str:
    if not number.isdigit() or number not in {r["number"] for r in rfcs()}:
        abort(404, f"h3learn does not explain RFC {number!r}")
    known = known_annotations()
    found = demonstrated()
    sections = []
    for section in known.sections_of(number):
        annotation = known.get(section)
        steps = found.get(section, [])
        by_lesson: dict[str, list[Demonstration]] = {}
        for demo in steps:
            by_lesson.setdefault(demo.lesson, []).append(demo)
        sections.append(
            {
                "section": section,
                "part": split(section)[1],
                "label": label(section),
                "title": known.title(section),
                "depth": depth(section),
                "url": url(section),
                "annotation": annotation,
                "normative": annotation.normative if annotation else None,
                "in_goal": in_goal(section),
                "lessons": [
                    {
                        "id": lesson_id,
                        "title": demos[0].lesson_title,
                        "steps": demos[:STEPS_PER_LESSON],
                        "more": max(0, len(demos) - STEPS_PER_LESSON),
                    }
                    for lesson_id, demos in by_lesson.items()
                ],
            }
        )
    missing = [s for s in sections if s["annotation"] is None]
    undemonstrated = [s for s in sections if s["normative"] is not False and not s["lessons"]]
    return render_template(
        "rfc/rfc.html",
        number=number,
        title=known.rfcs.get(number) or RFC_TITLES.get(number, ""),
        sections=sections,
        missing=missing,
        undemonstrated=undemonstrated,
        markup=markup,
    )
