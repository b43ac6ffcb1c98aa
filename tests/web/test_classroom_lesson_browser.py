"""A lesson presented to a class, in Debian's Chromium: the teacher's page and two
students' pages, each in its own browser context (separate laptops), against a real
server in a thread.

The teacher presents lesson 2 from its step page; the students land on the lesson's own
page, with its notes, and follow; at a predict checkpoint the teacher asks the class,
each student types an answer (meanwhile the step behind the question is hidden on every
screen, even for a student who answered it alone before), the teacher sees the spread and
reveals it (the answer and its explanation come from the server), and everyone moves past
the checkpoint with the result in their progress; a what-if rerun moves the class to the
new trace at the same step, with a note saying what changed, and back. A running live
capture presented to the class grows on the students' pages as on the teacher's.
Screenshots of the teacher's and a student's view during the question go to /tmp.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from browser_helpers import chromium, served
from test_classroom_browser import Laptops, shows_step, status
from test_live_api import FakeConnection
from web_helpers import make_app

playwright_api = pytest.importorskip("playwright.sync_api")

LESSON = "02-a-first-get"


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Any:
    app = make_app(tmp_path_factory.mktemp("h3learn-class-lesson"), LIVE_BATCH_SECONDS=0.05)
    yield app
    app.extensions["h3learn_live"].close()


@pytest.fixture(scope="module")
def base_url(app: Any) -> Iterator[str]:
    with served(app) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


@pytest.fixture
def laptops(browser: Any) -> Iterator[Laptops]:
    opened = Laptops(browser)
    yield opened
    opened.close()
    assert not opened.errors, opened.errors


def present(teacher: Any, url: str, step: int) -> str:
    """The teacher opens ``url`` (a step page) and presses Present; the room's code."""
    teacher.goto(url)
    shows_step(teacher, step)
    teacher.click("#present-button")
    teacher.wait_for_selector("#join-qr")
    teacher.click("#join-close")
    code: str = teacher.text_content("#join-code").replace("-", "")
    return code


def join(laptops: Laptops, base_url: str, code: str) -> Any:
    student = laptops.open()
    student.goto(f"{base_url}/join/{code}")
    student.wait_for_function(
        "() => document.getElementById('classroom-status').textContent"
        ".startsWith('Following the teacher')"
    )
    return student


def notes(page: Any) -> str:
    text: str = page.text_content("#lesson-notes")
    return text


def test_a_class_follows_a_lesson_answers_a_checkpoint_and_reruns_it(
    laptops: Laptops, base_url: str
) -> None:
    teacher = laptops.open(projector=True, width=1920, height=1080)
    code = present(teacher, f"{base_url}/lesson/{LESSON}/step/19", 19)
    assert teacher.url.endswith(f"/lesson/{LESSON}/step/19?room={code}")
    first = join(laptops, base_url, code)
    assert first.url.endswith(f"/lesson/{LESSON}/step/19?room={code}")  # the lesson's own page

    # The teacher steps; the student follows on the lesson's page, with the lesson's notes.
    teacher.keyboard.press("ArrowRight")
    shows_step(teacher, 20)
    shows_step(first, 20)
    for page in (first, teacher):
        page.wait_for_selector("#lesson-notes[aria-busy='false']")
    assert notes(first) == notes(teacher) and "Required Insert Count" not in notes(first)

    # The next step lies past a checkpoint: the teacher's page stops and offers to ask.
    teacher.keyboard.press("ArrowRight")
    teacher.wait_for_selector("#checkpoint-ask-class")
    assert teacher.text_content("#step-number") == "20"
    late = join(laptops, base_url, code)  # a late joiner lands on the same page and step
    shows_step(late, 20)
    assert late.url.endswith(f"/lesson/{LESSON}/step/20?room={code}")
    # The late joiner did this lesson alone before and answered this question then.
    late.evaluate(
        "([key, progress]) => localStorage.setItem(key, progress)",
        [f"h3learn.lesson.{LESSON}", json.dumps({"answered": {"prefix": "right"}, "last": 21})],
    )
    late.reload()
    shows_step(late, 20)
    late.wait_for_selector(".row[data-seq='21']:not(.held)")
    teacher.click("#checkpoint-ask-class")
    # While the class is asked, the step the question is about stays hidden on every screen
    # (the projector's too), even for the one who answered it alone.
    for page in (teacher, first, late):
        page.wait_for_selector(".row.held[data-seq='21']")

    # Each student types an answer on their own screen; the teacher sees the spread.
    for student, typed in ((first, " 0x0 "), (late, "1")):
        student.wait_for_selector("#question-input")
        assert "Required Insert Count" in student.text_content("#question-prompt")
        student.fill("#question-input", typed)
        student.click("#question-send")
        student.wait_for_function(
            "() => document.getElementById('question-note').textContent"
            ".startsWith('Your answer is in')"
        )
    teacher.wait_for_function(
        "() => document.getElementById('question-note').textContent === '2 of 2 answered.'"
    )
    spread = teacher.locator("#question-options .option").all_text_contents()
    assert spread == ["0 · 1 answer (50%)", "1 · 1 answer (50%)"]
    assert first.locator("#question-options .option").count() == 0  # no spread before
    teacher.screenshot(path="/tmp/h3learn-class-question-teacher.png", full_page=True)
    first.screenshot(path="/tmp/h3learn-class-question-student.png", full_page=True)

    # The reveal: the server's answer and explanation, each student's own result, and
    # everyone moves past the checkpoint, the result kept in the student's progress.
    teacher.focus("#question-reveal")
    teacher.keyboard.press("Enter")
    for page in (teacher, first, late):
        page.wait_for_selector("#question-result .question-answer")
        shows_step(page, 21)
        assert page.locator(".row.held[data-seq='21']").count() == 0
    # The Reveal button is replaced by Close: the teacher's focus goes to it.
    assert teacher.evaluate("() => document.activeElement.id") == "question-close"
    assert first.text_content("#question-result .question-answer") == "The answer: 0"
    assert "No dynamic table means no inserts" in first.text_content(".question-explain")
    assert first.text_content(".question-mine") == "Your answer, 0, is right."
    assert late.text_content(".question-mine") == "Your answer, 1, is not right."
    assert "✓ right" in teacher.text_content("#question-options [data-option='0']")
    # The notes' result block comes with the lesson fetched again once the question is solved.
    first.wait_for_selector("#lesson-notes .result.right")
    late.wait_for_selector("#lesson-notes .result.shown")
    assert first.locator("#lesson-notes .result.right").count() == 1
    assert late.locator("#lesson-notes .result.shown").count() == 1
    progress = json.loads(first.evaluate(f"() => localStorage.getItem('h3learn.lesson.{LESSON}')"))
    assert progress["answered"] == {"prefix": "right"}
    first.screenshot(path="/tmp/h3learn-class-revealed-student.png", full_page=True)

    # What if the server had a dynamic table? The class moves to the rerun, at this step.
    teacher.click("#class-what-if summary")
    teacher.select_option("#class-wi-server-qpack_max_table_capacity", "4096")
    teacher.click("#class-what-if-run")
    for page in (teacher, first, late):
        page.wait_for_url(f"**/trace/whatif-02-*/step/21?room={code}")
        shows_step(page, 21)
    note = first.text_content("#what-if-note")
    assert "server qpack_max_table_capacity = 4096 (the lesson: 0)" in " ".join(note.split())
    assert teacher.locator("#what-if-back").is_visible()
    # A new page: the student joins the room again over Socket.IO before it follows.
    first.wait_for_function(
        "() => document.getElementById('classroom-status')"
        ".textContent.startsWith('Following the teacher')"
    )
    assert first.locator("#what-if-back").is_hidden()  # students follow; the teacher leads
    assert status(first).startswith("Following the teacher")
    assert first.locator("#classroom-question").is_hidden()  # the question ended there
    teacher.screenshot(path="/tmp/h3learn-class-what-if-teacher.png", full_page=True)

    # And back to the lesson, at the same step.
    teacher.click("#what-if-back")
    for page in (teacher, first, late):
        page.wait_for_url(f"**/lesson/{LESSON}/step/21?room={code}")
        shows_step(page, 21)


def test_a_class_sees_a_running_capture_grow_as_the_teacher_does(
    app: Any, laptops: Laptops, base_url: str
) -> None:
    connection = FakeConnection(app)
    connection.get("/")
    steps = len(app.extensions["h3learn_library"].get(connection.id).events)
    teacher = laptops.open()
    code = present(teacher, f"{base_url}/trace/{connection.id}/step/0", 0)
    student = join(laptops, base_url, code)
    assert student.url.endswith(f"/trace/{connection.id}/step/0?room={code}")
    student.wait_for_selector("#capture-banner[data-state=live]")

    # The connection goes on; the teacher follows the newest step; so does the class,
    # though the student's page learns of the new steps in its own time.
    teacher.check("#follow-capture")
    for path in ("/a", "/b"):
        connection.get(path)
    total = len(app.extensions["h3learn_library"].get(connection.id).events)
    assert total > steps
    shows_step(teacher, total - 1)
    shows_step(student, total - 1)
    assert student.text_content("#step-count") == f"of {total}"
    connection.close()
    student.wait_for_selector("#capture-banner[data-state=closed]")
