"""Every lesson in lessons/ runs, and everything it says is true of its trace (issue 5).

Each lesson is recorded; every note and checkpoint selector must match a step, every cited
section must exist, every checkpoint's answer must be what the trace shows
(`verify_lesson`), every byte of every event must be labelled by its field spans, every
deliberate violation must draw an error from the peer, and the same lesson must give the
same trace byte for byte, even in another process.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from rfc9204.span_checks import assert_every_bit_labelled_once

from h3learn.curriculum.catalogue import Curriculum, check_folder, lesson_files
from h3learn.curriculum.lesson import RecordedLesson, load_lesson, record_lesson, verify_lesson
from h3learn.curriculum.rfc_toc import COMPLETE_RFCS, TITLES, split
from h3learn.trace.store import trace_document

LESSONS = Path(__file__).resolve().parents[2] / "lessons"
FILES = lesson_files(LESSONS)


@pytest.fixture(scope="module")
def recorded() -> dict[str, RecordedLesson]:
    return {path.stem: verify_lesson(load_lesson(path)) for path in FILES}


def test_the_curriculum_folder_checks_without_an_error() -> None:
    report = check_folder(LESSONS)
    assert [str(error) for error in report.errors] == []
    assert len(report.lessons) == len(FILES) >= 5


@pytest.mark.parametrize("path", FILES, ids=[path.stem for path in FILES])
def test_every_selector_matches_and_every_answer_is_what_the_trace_shows(
    path: Path, recorded: dict[str, RecordedLesson]
) -> None:
    lesson = recorded[path.stem]
    assert None not in lesson.note_steps
    assert None not in lesson.checkpoint_steps
    assert len(lesson.lesson.notes) >= 3
    assert len(lesson.lesson.checkpoints) >= 2
    for note in lesson.lesson.notes:
        assert all(section in TITLES for section in note.rfc)


@pytest.mark.parametrize("path", FILES, ids=[path.stem for path in FILES])
def test_every_byte_of_every_event_is_inside_a_labelled_field(
    path: Path, recorded: dict[str, RecordedLesson]
) -> None:
    for event in recorded[path.stem].events:
        if event.raw:
            assert_every_bit_labelled_once(event.raw, event.fields)
        for section in event.rfc:
            rfc, _ = split(section)
            assert rfc not in COMPLETE_RFCS or section in TITLES, (event.seq, section)


@pytest.mark.parametrize("path", FILES, ids=[path.stem for path in FILES])
def test_every_section_a_step_cites_has_a_title_and_an_annotation(
    path: Path, recorded: dict[str, RecordedLesson]
) -> None:
    """The step view shows each cited section's title and annotation (test_rfc_citations.py)."""
    annotations = Curriculum.open(LESSONS).annotations
    lesson = recorded[path.stem]
    cited = {section for note in lesson.lesson.notes for section in note.rfc}
    for event in lesson.events:
        cited.update(event.rfc)
        cited.update(span.rfc for span in event.fields if span.rfc)
    assert sorted(s for s in cited if s not in TITLES or annotations.get(s) is None) == []


@pytest.mark.parametrize("path", FILES, ids=[path.stem for path in FILES])
def test_every_deliberate_violation_is_answered_by_an_error_from_the_peer(
    path: Path, recorded: dict[str, RecordedLesson]
) -> None:
    """A `violate` action breaks a rule, so the peer answers with a stream or connection
    error before its connection ends. What breaks nothing (a reserved frame type, say) is
    sent with `extension` instead, and its step does not say "on purpose" (lesson 3)."""
    events = recorded[path.stem].events
    for index, event in enumerate(events):
        if "deliberate" not in event.data:
            continue
        answer = None
        for later in events[index + 1 :]:
            if later.name == "connection_started":
                break
            if (
                later.name in ("stream_error", "connection_error")
                and later.endpoint != event.endpoint
            ):
                answer = later
                break
        assert answer is not None, f"step {event.seq} ({event.summary}) broke no rule"


def _document(lesson: RecordedLesson) -> str:
    trace = lesson.trace()
    return json.dumps(trace_document(trace.title, trace.events, trace.meta, trace.created))


@pytest.mark.parametrize("path", FILES, ids=[path.stem for path in FILES])
def test_a_lesson_gives_the_same_trace_byte_for_byte(path: Path) -> None:
    lesson = load_lesson(path)
    assert _document(record_lesson(lesson)) == _document(record_lesson(lesson))


def test_the_quic_lesson_is_reproducible_in_another_process(tmp_path: Path) -> None:
    quic = next(p for p in FILES if load_lesson(p).scenario.transport == "quic")
    out = tmp_path / "trace.json"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "h3learn",
            "lessons",
            "record",
            quic.stem,
            "-o",
            str(out),
            "--lessons-dir",
            str(LESSONS),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    here = json.loads(_document(record_lesson(load_lesson(quic))))
    assert json.loads(out.read_text()) == here


def test_a_what_if_rerun_changes_the_settings_it_names() -> None:
    lesson = load_lesson(LESSONS / "05-the-dynamic-table.toml")
    plain = record_lesson(lesson)
    no_table = record_lesson(
        lesson,
        {"client": {"qpack_max_table_capacity": 0}, "server": {"qpack_max_table_capacity": 0}},
        strict=False,
    )
    no_huffman = record_lesson(lesson, {"client": {"huffman": False}}, strict=False)
    inserts = [e for e in plain.events if e.name == "dynamic_table_updated"]
    assert inserts and not [e for e in no_table.events if e.name == "dynamic_table_updated"]
    assert "what if: qpack_max_table_capacity = 0" in no_table.trace().title, "named once"
    sent = lambda r: sum(len(e.raw) for e in r.events if e.name == "frame_created")  # noqa: E731
    assert sent(no_huffman) > sent(plain)
    # A what-if run keeps the notes whose steps still exist and drops the others.
    assert None in no_table.note_steps


def test_annotation_files_cover_their_whole_table_of_contents() -> None:
    """Once lessons/rfc/9114.toml and 9204.toml exist, every section has an annotation."""
    annotations = Curriculum.open(LESSONS).annotations
    for rfc in COMPLETE_RFCS:
        if (LESSONS / "rfc" / f"{rfc}.toml").exists():
            assert annotations.missing(rfc) == [], f"RFC {rfc}"
    for section in annotations.by_section:
        assert section in TITLES or split(section)[0] not in COMPLETE_RFCS


def test_docs_describe_every_action_setting_and_selector_key() -> None:
    from h3learn.curriculum.actions import ACTIONS
    from h3learn.curriculum.scenario import SETTING_KEYS
    from h3learn.curriculum.selectors import DATA_SHORTCUTS

    docs = (LESSONS.parent / "docs" / "lessons.md").read_text()
    for name in [*ACTIONS, *SETTING_KEYS, *DATA_SHORTCUTS, "during", "nth", "count_of", "expect"]:
        assert f"`{name}`" in docs, name
