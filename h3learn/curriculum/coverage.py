"""Which RFC sections the lessons demonstrate, step by step (the RFC reader and its report).

A step *demonstrates* a section when the event at that step cites it: as a governing
section (``Event.rfc``), as the section of one of its labelled fields (a prefix byte cites
RFC 9204 §4.5.1.1), or in a lesson note attached to that step. Computed from the recorded
lesson traces alone, so it is always as true as the lessons are.

The goal of the curriculum (issue 5): every normative section of RFC 9114 §4-§8 and of
RFC 9204 §2-§4 is demonstrated by at least one step. Whether a section is normative comes
from its annotation (lessons/rfc/*.toml); a section not annotated yet counts as normative.
"""

from __future__ import annotations

from dataclasses import dataclass

from h3learn.curriculum.annotations import Annotations
from h3learn.curriculum.lesson import RecordedLesson
from h3learn.curriculum.rfc_toc import sections_of, split

#: RFC -> the top-level sections the curriculum must demonstrate (normative ones only).
GOAL = {"9114": range(4, 9), "9204": range(2, 5)}


@dataclass(frozen=True, slots=True)
class Demonstration:
    """One step of one lesson that shows a section at work."""

    lesson: str
    lesson_title: str
    step: int
    summary: str
    how: str  # "event", "field" or "note"

    def link(self) -> str:
        return f"/lesson/{self.lesson}/step/{self.step}"


def demonstrations(recorded: list[RecordedLesson]) -> dict[str, list[Demonstration]]:
    """Section -> the steps demonstrating it, lesson by lesson in curriculum order."""
    found: dict[str, list[Demonstration]] = {}
    for lesson in sorted(recorded, key=lambda r: r.lesson.id):
        noted: dict[int, set[str]] = {}
        for note, step in zip(lesson.lesson.notes, lesson.note_steps, strict=True):
            if step is not None:
                noted.setdefault(step, set()).update(note.rfc)
        for event in lesson.events:
            cited: dict[str, str] = {}
            for section in noted.get(event.seq, ()):
                cited.setdefault(section, "note")
            for section in event.rfc:
                cited.setdefault(section, "event")
            for span in event.fields:
                if span.rfc:
                    cited.setdefault(span.rfc, "field")
            for section, how in cited.items():
                found.setdefault(section, []).append(
                    Demonstration(
                        lesson.lesson.id, lesson.lesson.title, event.seq, event.summary, how
                    )
                )
    return found


def in_goal(section: str) -> bool:
    rfc, part = split(section)
    head = part.split(".")[0]
    return rfc in GOAL and head.isdigit() and int(head) in GOAL[rfc]


def is_normative(section: str, annotations: Annotations) -> bool:
    annotation = annotations.get(section)
    return True if annotation is None else annotation.normative


@dataclass(frozen=True, slots=True)
class CoverageLine:
    section: str
    title: str
    normative: bool
    in_goal: bool
    steps: int


def coverage(
    found: dict[str, list[Demonstration]],
    annotations: Annotations,
    rfcs: tuple[str, ...] = ("9114", "9204"),
) -> list[CoverageLine]:
    """Every section of ``rfcs``, with how many steps demonstrate it."""
    lines = []
    for rfc in rfcs:
        for section in sections_of(rfc):
            lines.append(
                CoverageLine(
                    section=section,
                    title=annotations.title(section),
                    normative=is_normative(section, annotations),
                    in_goal=in_goal(section),
                    steps=len(found.get(section, ())),
                )
            )
    return lines
