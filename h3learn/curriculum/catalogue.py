"""The curriculum: every lesson of a folder, in order, recorded when first needed.

`Curriculum.open(folder)` reads every ``NN-name.toml`` of the folder (quickly: nothing is
recorded yet) and its RFC annotations (``rfc/*.toml``), and checks what can be checked
without running anything: the files, the prerequisites (each an earlier lesson). A
lesson's trace is recorded the first time it is asked for and kept (`recorded`), and so
are the figures of its variants (`comparison`, comparison.py); a what-if run
(`record_what_if`) is recorded each time it is asked for, and not kept here.

`check_folder` is what ``h3learn lessons check`` and the tests run: every lesson loaded,
recorded, every selector placed, every checkpoint's answer compared with its trace, every
prerequisite found, and the annotations read; it returns every error found, each naming
its file and line, rather than stopping at the first.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

from h3learn.curriculum.annotations import Annotations, load_annotations
from h3learn.curriculum.comparison import Figures, Variant, measure
from h3learn.curriculum.lesson import (
    LESSON_ID,
    Lesson,
    RecordedLesson,
    check_lesson,
    load_lesson,
    record_lesson,
)
from h3learn.curriculum.scenario import Overrides
from h3learn.curriculum.source import SourceError

#: Inside an installed package the lessons travel here (setup.py copies them at build).
PACKAGED_LESSONS = Path(__file__).parent / "lessons"
#: In a source checkout they are at the repository root.
SOURCE_LESSONS = Path(__file__).resolve().parents[2] / "lessons"


def default_lessons_dir() -> Path:
    """The lessons an installed h3learn carries, else those of the source tree."""
    return PACKAGED_LESSONS if PACKAGED_LESSONS.is_dir() else SOURCE_LESSONS


def lesson_files(folder: Path) -> list[Path]:
    """The lesson files of a folder, in curriculum order (by their number, then name)."""
    return sorted(path for path in folder.glob("*.toml") if path.is_file())


def display_name(path: Path, folder: Path) -> str:
    """How error messages name a file: relative to the folder's parent when possible."""
    try:
        return str(path.relative_to(folder.parent))
    except ValueError:
        return str(path)


@dataclass
class Curriculum:
    folder: Path
    lessons: dict[str, Lesson]
    annotations: Annotations
    _recorded: dict[str, RecordedLesson] = field(default_factory=dict)
    _compared: dict[str, list[tuple[Variant, Figures]]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def open(cls, folder: Path) -> Curriculum:
        """Read the folder; the first error found is raised (`check_folder` lists them all)."""
        lessons: dict[str, Lesson] = {}
        for path in lesson_files(folder):
            lesson = load_lesson(path, display_name(path, folder))
            lessons[lesson.id] = lesson
        check_prerequisites(list(lessons.values()))
        annotations = load_annotations(folder / "rfc")
        return cls(folder, lessons, annotations)

    def ordered(self) -> list[Lesson]:
        return sorted(self.lessons.values(), key=lambda lesson: lesson.id)

    def get(self, lesson_id: str) -> Lesson | None:
        if not LESSON_ID.fullmatch(lesson_id):
            return None
        return self.lessons.get(lesson_id)

    def recorded(self, lesson_id: str) -> RecordedLesson:
        """The lesson's trace, recorded once (strictly) and kept."""
        with self._lock:
            if lesson_id not in self._recorded:
                self._recorded[lesson_id] = record_lesson(self.lessons[lesson_id])
            return self._recorded[lesson_id]

    def record_what_if(self, lesson_id: str, overrides: Overrides) -> RecordedLesson:
        return record_lesson(self.lessons[lesson_id], overrides, strict=False)

    def comparison(self, lesson_id: str) -> list[tuple[Variant, Figures]]:
        """Each of the lesson's variants with the figures of its recording, made once."""
        with self._lock:
            if lesson_id not in self._compared:
                lesson = self.lessons[lesson_id]
                self._compared[lesson_id] = [
                    (
                        variant,
                        measure(record_lesson(lesson, variant.overrides, strict=False).events),
                    )
                    for variant in lesson.variants
                ]
            return self._compared[lesson_id]


def check_prerequisites(lessons: list[Lesson]) -> None:
    ids = [lesson.id for lesson in lessons]
    for lesson in lessons:
        for index, other in enumerate(lesson.prerequisites):
            if other not in ids:
                raise lesson.document.error(("prerequisites", index), f"no lesson {other!r}")
            if other >= lesson.id:
                raise lesson.document.error(
                    ("prerequisites", index), f"{other!r} does not come before this lesson"
                )


@dataclass
class CheckReport:
    lessons: list[RecordedLesson] = field(default_factory=list)
    errors: list[SourceError] = field(default_factory=list)
    annotations: Annotations = field(default_factory=Annotations)


def check_folder(folder: Path) -> CheckReport:
    """Check every lesson and annotation file of ``folder`` (see the module docstring)."""
    report = CheckReport()
    loaded: list[tuple[Lesson, list[SourceError]]] = []
    for path in lesson_files(folder):
        problems: list[SourceError] = []
        try:
            loaded.append((load_lesson(path, display_name(path, folder), problems), problems))
        except SourceError as error:
            report.errors.append(error)
    try:
        check_prerequisites([lesson for lesson, _ in loaded])
    except SourceError as error:
        report.errors.append(error)
    for lesson, problems in loaded:
        recorded, errors = check_lesson(lesson)
        report.errors += problems + errors
        if recorded is not None and not problems and not errors:
            report.lessons.append(recorded)
    try:
        report.annotations = load_annotations(folder / "rfc")
    except SourceError as error:
        report.errors.append(error)
    return report
