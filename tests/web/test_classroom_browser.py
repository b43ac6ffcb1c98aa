"""Classroom mode in Debian's Chromium: a teacher's page and students' pages, each in its
own browser context (as on separate laptops), against a real server in a thread.

The teacher presents a trace and steps; the student's page follows; the student explores
on their own and follows again; a student cannot drive; a late joiner lands on the current
step; the teacher moves the class to another trace and ends it. Screenshots of the
projector's join view and of a student's page go to /tmp.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from browser_helpers import chromium, served, settled_step
from web_helpers import make_app

playwright_api = pytest.importorskip("playwright.sync_api")


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with served(make_app(tmp_path_factory.mktemp("h3learn-classroom"))) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


class Laptops:
    """Browser contexts that share nothing (cookies, storage), like separate laptops."""

    def __init__(self, browser: Any) -> None:
        self.browser = browser
        self.contexts: list[Any] = []
        self.errors: list[str] = []

    def open(self, *, projector: bool = False, width: int = 1440, height: int = 900) -> Any:
        context = self.browser.new_context(viewport={"width": width, "height": height})
        if projector:
            context.add_init_script("localStorage.setItem('h3learn.projector', '1')")
        self.contexts.append(context)
        page = context.new_page()
        page.on("pageerror", lambda error: self.errors.append(str(error)))
        page.on(
            "console",
            lambda message: self.errors.append(message.text) if message.type == "error" else None,
        )
        return page

    def close(self) -> None:
        for context in self.contexts:
            context.close()


@pytest.fixture
def laptops(browser: Any) -> Iterator[Laptops]:
    opened = Laptops(browser)
    yield opened
    opened.close()
    assert not [e for e in opened.errors if "Content Security Policy" in e], opened.errors


def shows_step(page: Any, step: int, trace: str | None = None) -> None:
    """Wait until ``page`` shows ``step`` (of ``trace``, if given) with its diagram row."""
    page.wait_for_function(
        "([step, trace]) => document.getElementById('stepper').dataset.shown === String(step)"
        " && document.querySelector('.row.current')?.dataset.seq === String(step)"
        " && (trace === null || document.getElementById('stepper').dataset.trace === trace)",
        arg=[step, trace],
    )


def status(page: Any) -> str:
    text: str = page.text_content("#classroom-status")
    return text


def present(teacher: Any, base_url: str, trace: str, step: int) -> str:
    """The teacher opens ``trace`` at ``step`` and presses Present; the room's code."""
    teacher.goto(f"{base_url}/trace/{trace}/step/{step}")
    shows_step(teacher, step)
    teacher.click("#present-button")
    teacher.wait_for_selector("#classroom-join[open]")
    teacher.wait_for_selector("#join-qr")
    code: str = teacher.text_content("#join-code").replace("-", "")
    assert f"?room={code}" in teacher.url and "present" not in teacher.url
    return code


def test_students_follow_the_teacher_and_cannot_drive(laptops: Laptops, base_url: str) -> None:
    teacher = laptops.open(projector=True, width=1920, height=1080)
    code = present(teacher, base_url, "dynamic-table", 10)

    student = laptops.open()
    student.goto(f"{base_url}/join")
    student.fill("#code", f"{code[:3].lower()}-{code[3:].lower()}")
    student.click(".join-form button[type=submit]")
    student.wait_for_url(f"**/trace/dynamic-table/step/10?room={code}")
    shows_step(student, 10)
    student.wait_for_function(
        "() => document.getElementById('classroom-status')"
        ".textContent.startsWith('Following the teacher')"
    )
    teacher.wait_for_function(
        "() => document.getElementById('join-count').textContent === '1 student connected'"
    )
    # The projector's view while students join: the code and the QR code, large.
    qr = teacher.locator("#join-qr").bounding_box()
    assert qr["width"] >= 300 and qr["height"] >= 300
    assert (
        teacher.locator("#join-code").evaluate("e => parseFloat(getComputedStyle(e).fontSize)")
        >= 60
    )
    teacher.wait_for_function(
        "() => { const qr = document.getElementById('join-qr');"
        " return qr.complete && qr.naturalWidth > 0; }"
    )
    teacher.screenshot(path="/tmp/h3learn-classroom-projector.png")

    teacher.click("#join-close")
    teacher.keyboard.press("ArrowRight")
    teacher.keyboard.press("ArrowRight")
    shows_step(teacher, 12)
    shows_step(student, 12)
    assert "1 student" in status(teacher)
    teacher.screenshot(path="/tmp/h3learn-classroom-teacher.png")

    # The student explores: their page moves, the teacher's does not.
    student.locator("body").focus()
    student.keyboard.press("ArrowRight")
    shows_step(student, 13)
    student.wait_for_function(
        "() => document.getElementById('classroom-status')"
        ".textContent.startsWith('Exploring on your own')"
    )
    # A student's page sending a teacher's event is refused by the server.
    refused = student.evaluate(
        """code => new Promise(resolve => window.h3learnClassroom.emit('step',
             {code, token: 'guessed', trace: 'dynamic-table', step: 40, move: 1e15}, resolve))""",
        code,
    )
    assert "only the teacher controls room" in refused["error"]
    teacher.wait_for_timeout(300)
    assert teacher.text_content("#step-number") == "12"
    # While exploring, the teacher's steps are noted but not followed.
    teacher.keyboard.press("ArrowRight")
    shows_step(teacher, 13)
    teacher.keyboard.press("ArrowRight")
    shows_step(teacher, 14)
    student.wait_for_function(
        "() => document.getElementById('classroom-status')"
        ".textContent.includes('the teacher is at step 14')"
    )
    assert student.text_content("#step-number") == "13"
    student.screenshot(path="/tmp/h3learn-classroom-student-exploring.png")
    # Pressed with the keyboard, the button is replaced by the other: the focus moves to it.
    student.focus("#classroom-follow")
    student.keyboard.press("Enter")
    shows_step(student, 14)
    assert student.evaluate("() => document.activeElement.id") == "classroom-explore"

    # A late joiner, by the join link, lands on the current step.
    late = laptops.open()
    late.goto(f"{base_url}/join/{code}")
    shows_step(late, 14)
    teacher.wait_for_function(
        "() => document.getElementById('classroom-status').textContent.includes('2 students')"
    )
    student.screenshot(path="/tmp/h3learn-classroom-student.png", full_page=True)

    # A student whose connection drops is put back on the teacher's step when it returns.
    late.evaluate("() => window.h3learnClassroom.disconnect()")
    late.wait_for_function(
        "() => document.getElementById('classroom-status')"
        ".textContent.startsWith('Connection lost')"
    )
    teacher.keyboard.press("ArrowRight")
    shows_step(teacher, 15)
    shows_step(student, 15)
    assert late.text_content("#step-number") == "14"
    late.evaluate("() => window.h3learnClassroom.connect()")
    shows_step(late, 15)

    # The teacher jumps, then plays and pauses: the class ends where the teacher does.
    teacher.fill("#jump", "40")
    teacher.press("#jump", "Enter")
    shows_step(student, 40)
    shows_step(late, 40)
    teacher.select_option("#speed", "10")
    teacher.click("#play")
    teacher.wait_for_function(
        "() => Number(document.getElementById('step-number').textContent) >= 45"
    )
    teacher.click("#play")
    paused = settled_step(teacher)
    shows_step(student, paused)
    shows_step(late, paused)

    # The teacher opens another trace and shows it in the room: everyone follows.
    teacher.goto(f"{base_url}/trace/first-get/step/2")
    shows_step(teacher, 2)
    assert teacher.text_content("#present-button").startswith("Show in room")
    teacher.click("#present-button")
    teacher.wait_for_url(f"**/trace/first-get/step/2?room={code}")
    shows_step(student, 2, "first-get")
    shows_step(late, 2, "first-get")
    assert late.url.endswith(f"/trace/first-get/step/2?room={code}")

    # A predict checkpoint: the lesson page asks through classroom.js's hooks; the student
    # answers, the teacher sees the count, the reveal shows everyone the spread.
    asked = teacher.evaluate(
        """async () => (await import('/static/js/classroom.js')).askQuestion({id: 'ric',
             prompt: 'What will the Required Insert Count be?', options: ['0', '1', '2']})"""
    )
    assert asked["ok"] is True
    student.wait_for_selector("#classroom-question:not([hidden]) #question-options button")
    assert student.text_content("#question-prompt") == "What will the Required Insert Count be?"
    # The status a screen reader says holds the question itself (defect 9).
    assert student.text_content("#question-note") == (
        "Question: What will the Required Insert Count be? Choose an answer."
    )
    student.focus("#question-options button[data-option='1']")
    student.keyboard.press(" ")
    student.wait_for_selector("#question-options button[data-option='1'][aria-pressed='true']")
    # The options are drawn again: the focus stays on the option chosen.
    assert student.evaluate("() => document.activeElement.dataset.option") == "1"
    teacher.wait_for_function(
        "() => document.getElementById('question-note').textContent === '1 of 2 answered.'"
    )
    revealed = teacher.evaluate(
        "async () => (await import('/static/js/classroom.js')).revealQuestion('ric', 1)"
    )
    assert revealed == {"ok": True}
    for page in (student, late):
        page.wait_for_selector("#question-options .option .correct")
    # The student's focused option became text: the focus goes to Close, not the page.
    assert student.evaluate("() => document.activeElement.id") == "question-close"
    assert "1 · 1 answer (100%)" in student.text_content("#question-options [data-option='1']")
    assert "2 · 0 answers (0%)" in late.text_content("#question-options [data-option='2']")
    student.locator("#classroom-question").screenshot(path="/tmp/h3learn-classroom-question.png")

    # The teacher ends the class; the revealed question goes with it.
    assert student.locator("#classroom-question").is_visible()
    teacher.once("dialog", lambda dialog: dialog.accept())
    teacher.focus("#classroom-end")
    teacher.keyboard.press("Enter")
    for page in (student, late, teacher):
        page.wait_for_function(
            "() => document.getElementById('classroom-status')"
            ".textContent.startsWith('The class has ended')"
        )
        assert page.locator("#classroom-question").is_hidden()
    assert student.locator("#classroom-follow").is_hidden()
    # The End button went: the teacher's focus is on the status that says so.
    assert teacher.evaluate("() => document.activeElement.id") == "classroom-status"
    assert "room=" not in student.url  # a reload shows the trace, outside the ended class
    # The teacher can start another class at once, without reloading.
    assert "Present starts a new one" in teacher.text_content("#classroom-status")
    assert teacher.locator("#present-button").is_visible()
    assert teacher.text_content("#present-button") == "Present"
    assert student.locator("#present-button").is_hidden()
    teacher.click("#present-button")
    teacher.wait_for_url("**present=1*")
    teacher.wait_for_selector("#join-code:not(:empty)")


def test_an_unknown_code_on_the_step_page_says_so(laptops: Laptops, base_url: str) -> None:
    page = laptops.open()
    page.goto(f"{base_url}/trace/first-get/step/0?room=ABCDEF")
    page.wait_for_function(
        "() => document.getElementById('classroom-status')"
        ".textContent.includes('no open room has the code ABC-DEF')"
    )
    page.goto(f"{base_url}/join/ABCDE0")
    assert "codes never use 0, 1, I, L, O or U" in page.text_content("#join-error")
    assert page.input_value("#code") == "ABCDE0"
    page.screenshot(path="/tmp/h3learn-classroom-join-page.png")
