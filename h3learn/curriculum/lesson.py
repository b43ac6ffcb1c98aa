"""A lesson: its text, its scenario, its notes and checkpoints, read and checked strictly.

One TOML file per lesson in lessons/ (``lessons/05-the-dynamic-table.toml``; the file name
is the lesson's id and its number the place in the curriculum). docs/lessons.md describes
every key for teachers. `load_lesson` reads a file, refusing unknown keys and wrong types;
`record_lesson` runs the scenario and finds the step of every note and checkpoint;
`verify_lesson` also checks that each checkpoint's answer is what the trace shows. Every
mistake is a `SourceError` naming the file and the line of the key at fault.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from h3learn.curriculum.actions import Action, read_action
from h3learn.curriculum.checkpoints import Checkpoint, read_checkpoint, verify_checkpoint
from h3learn.curriculum.comparison import Variant, read_variant
from h3learn.curriculum.recording import ActionFailed, Recording
from h3learn.curriculum.rfc_toc import TITLES, is_reference
from h3learn.curriculum.runner import run_scenario
from h3learn.curriculum.scenario import (
    SIDES,
    Overrides,
    Scenario,
    capacity_problem,
    check_setting,
    describe_overrides,
    read_scenario,
)
from h3learn.curriculum.selectors import Selector, SelectorError, read_selector, select
from h3learn.curriculum.source import Document, SourceError, Table
from h3learn.events import Event
from h3learn.h3.connection import H3UsageError
from h3learn.trace.store import Trace

#: A lesson's file name without ".toml": two digits (its place), a dash, words with dashes.
LESSON_ID = re.compile(r"[0-9]{2}-[a-z0-9]+(-[a-z0-9]+)*")

#: The creation time written into every lesson trace, so that a recording is reproducible.
CREATED = "2026-01-01T00:00:00+00:00"

#: A checkpoint or a variant, as `_read_each` reads them.
Item = TypeVar("Item")


@dataclass(frozen=True, slots=True)
class Note:
    """Text a teacher attaches to one step, with the sections it explains."""

    at: Selector
    text: str
    rfc: tuple[str, ...]
    title: str = ""


@dataclass
class Lesson:
    id: str
    file: str
    title: str
    summary: str
    goals: tuple[str, ...]
    prerequisites: tuple[str, ...]
    introduction: str
    conclusion: str
    scenario: Scenario
    actions: list[Action]
    notes: list[Note]
    checkpoints: list[Checkpoint]
    document: Document
    #: What-if variants to record and compare (comparison.py); usually none.
    variants: list[Variant] = field(default_factory=list)

    @property
    def number(self) -> int:
        return int(self.id[:2])


@dataclass
class RecordedLesson:
    """A lesson run once: its trace, and the step of each note and checkpoint."""

    lesson: Lesson
    recording: Recording
    overrides: Overrides = field(default_factory=dict)
    #: For each note, its step (None: its selector matched nothing in a what-if run).
    note_steps: list[int | None] = field(default_factory=list)
    checkpoint_steps: list[int | None] = field(default_factory=list)

    @property
    def events(self) -> list[Event]:
        return self.recording.events

    def notes_at(self, step: int) -> list[Note]:
        return [n for n, s in zip(self.lesson.notes, self.note_steps, strict=True) if s == step]

    def checkpoint(self, checkpoint_id: str) -> tuple[Checkpoint, int] | None:
        for checkpoint, step in zip(self.lesson.checkpoints, self.checkpoint_steps, strict=True):
            if checkpoint.id == checkpoint_id and step is not None:
                return checkpoint, step
        return None

    def trace(self) -> Trace:
        meta: dict[str, Any] = {"source": "h3learn.curriculum", "lesson": self.lesson.id}
        title = self.lesson.title
        if self.overrides:
            meta["overrides"] = self.overrides
            title = f"{title} (what if: {describe_overrides(self.overrides)})"
        return Trace(title=title, meta=meta, events=self.events, created=CREATED)


def check_overrides(overrides: Overrides, scenario: Scenario | None = None) -> None:
    """`ValueError` naming the first override that is not a setting a side can have; with
    the lesson's ``scenario``, also one that does not fit the other side's settings."""
    for side, values in overrides.items():
        if side not in SIDES:
            raise ValueError(f"overrides are per side, 'client' or 'server', not {side!r}")
        for key, value in values.items():
            problem = check_setting(key, value)
            if problem is not None:
                raise ValueError(f"{side}.{key}: {problem}")
    if scenario is None:
        return
    changed = {name: scenario.side(name).with_overrides(overrides.get(name, {})) for name in SIDES}
    for side, peer in zip(SIDES, reversed(SIDES), strict=True):
        problem = capacity_problem(changed[side], changed[peer])
        if problem is not None:
            raise ValueError(f"{side}.encoder_table_capacity: {problem}")


# -- reading -----------------------------------------------------------------------------


def load_lesson(
    path: Path, display: str | None = None, problems: list[SourceError] | None = None
) -> Lesson:
    """Read and check one lesson file (its scenario is not run: see `record_lesson`).

    With a ``problems`` list, a broken ``[[checkpoint]]`` is added to it and left out
    rather than raised, so that checking goes on to the lesson's other mistakes."""
    name = display or str(path)
    if not LESSON_ID.fullmatch(path.stem):
        raise SourceError(
            name,
            1,
            "a lesson file is named like 05-the-dynamic-table.toml (two digits, a"
            " dash, lower-case words joined by dashes)",
        )
    return parse_lesson(Document.read(path, name), path.stem, problems)


def parse_lesson(
    document: Document, lesson_id: str, problems: list[SourceError] | None = None
) -> Lesson:
    root = document.root()
    goals = root.texts("goals")
    if not goals:
        raise root.error("goals" if root.has("goals") else None, "list at least one goal")
    prerequisites = root.texts("prerequisites")
    for index, other in enumerate(prerequisites):
        if not LESSON_ID.fullmatch(other):
            raise document.error(("prerequisites", index), f"{other!r} is not a lesson id")
    lesson = Lesson(
        id=lesson_id,
        file=document.file,
        title=root.required_text("title"),
        summary=root.required_text("summary"),
        goals=goals,
        prerequisites=prerequisites,
        introduction=root.required_text("introduction"),
        conclusion=root.text("conclusion", ""),
        scenario=read_scenario(root.table("scenario")),
        actions=[read_action(table, index) for index, table in enumerate(root.tables("action"))],
        notes=[_read_note(table) for table in root.tables("note")],
        checkpoints=_read_each(root.tables("checkpoint"), read_checkpoint, problems),
        document=document,
        variants=_read_each(root.tables("variant"), lambda table, _: read_variant(table), problems),
    )
    root.finish()
    if not lesson.actions:
        raise root.error(None, "the scenario has no [[action]]")
    _check_unique([a.id for a in lesson.actions if a.id], "action id", document, "action")
    _check_unique([c.id for c in lesson.checkpoints], "checkpoint id", document, "checkpoint")
    _check_unique([v.name for v in lesson.variants], "variant name", document, "variant")
    return lesson


def _check_unique(values: list[str], what: str, document: Document, key: str) -> None:
    seen: set[str] = set()
    for index, value in enumerate(values):
        if value in seen:
            raise document.error((key, index), f"{what} {value!r} is used twice")
        seen.add(value)


def _read_note(table: Table) -> Note:
    at = table.table("at", required=True)
    assert at is not None
    rfc = table.texts("rfc")
    if not rfc:
        raise table.error("rfc" if table.has("rfc") else None, "name the sections it explains")
    for index, section in enumerate(rfc):
        check_section(table, ("rfc", index), section)
    note = Note(
        at=read_selector(at),
        text=table.required_text("text"),
        rfc=rfc,
        title=table.text("title", ""),
    )
    table.finish()
    return note


def check_section(table: Table, key: tuple[str, int], section: str) -> None:
    """A cited section must be written ``9114#7.2.4`` and exist (rfc_toc.py)."""
    if not is_reference(section):
        raise table.document.error(
            (*table.path, *key), f'{section!r} is not written like "9114#7.2.4" or "9204#B.1"'
        )
    if section not in TITLES:
        raise table.document.error((*table.path, *key), f"there is no section {section}")


# -- recording and checking --------------------------------------------------------------


def record_lesson(
    lesson: Lesson, overrides: Overrides | None = None, *, strict: bool = True
) -> RecordedLesson:
    """Run the lesson's scenario (with what-if ``overrides``) and place its notes.

    ``strict`` (the default) makes a selector that matches nothing an error; a what-if run
    (``strict=False``) leaves such notes and checkpoints out: the changed settings may
    well have removed the step they were about.
    """
    overrides = overrides or {}
    check_overrides(overrides)
    recording = run_scenario(
        lesson.scenario, lesson.actions, overrides, on_action=_action_error(lesson)
    )
    recorded = RecordedLesson(lesson, recording, overrides)
    for note in lesson.notes:
        recorded.note_steps.append(_place(lesson, note.at, recording, strict))
    for checkpoint in lesson.checkpoints:
        recorded.checkpoint_steps.append(_place(lesson, checkpoint.before, recording, strict))
    if strict:
        _check_checkpoint_steps(recorded)
    return recorded


def verify_lesson(lesson: Lesson) -> RecordedLesson:
    """Record the lesson strictly and check every checkpoint's answer against the trace;
    record each variant too, so that one the protocol refuses is reported at its line.
    Raises the first mistake `check_lesson` finds."""
    recorded, errors = check_lesson(lesson)
    if errors:
        raise errors[0]
    assert recorded is not None
    return recorded


def check_lesson(lesson: Lesson) -> tuple[RecordedLesson | None, list[SourceError]]:
    """What `verify_lesson` checks, every mistake found rather than the first: each variant
    is recorded and each checkpoint's answer compared whatever the others gave. Only a
    lesson whose own recording fails has no trace to compare the answers with."""
    errors: list[SourceError] = []
    recorded = None
    try:
        recorded = record_lesson(lesson)
    except SourceError as error:
        errors.append(error)
    for variant in lesson.variants:
        try:
            check_overrides(variant.overrides, lesson.scenario)
            record_lesson(lesson, variant.overrides, strict=False)
        except ValueError as error:  # a SourceError, or an override the scenario refuses
            message = error.message if isinstance(error, SourceError) else str(error)
            errors.append(
                lesson.document.error(variant.path, f"variant {variant.name!r}: {message}")
            )
    if recorded is None:
        return None, errors
    for checkpoint in lesson.checkpoints:
        try:
            verify_checkpoint(checkpoint, recorded.recording)
        except SelectorError as error:
            errors.append(_selector_error(lesson, checkpoint.proof_path, error))
        except ValueError as error:
            errors.append(lesson.document.error(checkpoint.answer_path, str(error)))
    return recorded, errors


def _read_each(
    tables: Iterable[Table], read: Callable[[Table, int], Item], problems: list[SourceError] | None
) -> list[Item]:
    """Each ``[[checkpoint]]`` or ``[[variant]]`` table read with ``read(table, index)``.

    A broken one is raised, or, when ``problems`` collects them (``lessons check``), noted
    there and left out, so that the lesson's other tables are still checked.
    """
    items = []
    for index, table in enumerate(tables):
        try:
            items.append(read(table, index))
        except SourceError as error:
            if problems is None:
                raise
            problems.append(error)
    return items


def _place(lesson: Lesson, selector: Selector, recording: Recording, strict: bool) -> int | None:
    try:
        return select(selector, recording).seq
    except SelectorError as error:
        if not strict:
            return None
        raise _selector_error(lesson, selector.path, error) from None


def _selector_error(lesson: Lesson, path: tuple[Any, ...], error: SelectorError) -> SourceError:
    where = (*path, error.key) if error.key else path
    return lesson.document.error(where, str(error))


def _check_checkpoint_steps(recorded: RecordedLesson) -> None:
    seen: dict[int, str] = {}
    for checkpoint, step in zip(
        recorded.lesson.checkpoints, recorded.checkpoint_steps, strict=True
    ):
        assert step is not None
        if step == 0:
            raise recorded.lesson.document.error(
                checkpoint.before.path,
                "a checkpoint cannot come before step 0: nothing is shown yet",
            )
        if step in seen:
            raise recorded.lesson.document.error(
                checkpoint.before.path,
                f"checkpoint {seen[step]!r} already stops the learner before step {step}",
            )
        seen[step] = checkpoint.id


def _action_error(lesson: Lesson) -> Any:
    def convert(action: Action, error: Exception) -> SourceError:
        if isinstance(error, SourceError):
            return error
        key = getattr(error, "key", None) if isinstance(error, ActionFailed) else None
        reason = str(error)
        if isinstance(error, H3UsageError):
            reason = f"the {action.values.get('from', 'endpoint')} refuses: {reason}"
        where = (*action.path, key) if key else action.path
        return lesson.document.error(where, f"{action.do}: {reason}")

    return convert
