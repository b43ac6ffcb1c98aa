"""Classroom mode on lessons and captures (docs/web-api.md, "Classroom"), through Flask's and
Flask-SocketIO's test clients: what a room shows (a lesson on its own pages, a trace, a
live capture), predict checkpoints asked of the class (the question from the lesson, the
answer and its explanation from the server at the reveal), typed answers and their limits,
the spread the teacher sees, and what-if reruns of a lesson.
"""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from test_classroom import Moves, Page, create, teacher_of
from test_live_api import FakeConnection

from h3learn.web.classroom.protocol import MAX_ANSWER_CHARS
from h3learn.web.classroom.questions import TOP_ANSWERS

LESSON = "02-a-first-get"
#: Lesson 2's checkpoints: (id, the step it stops before, kind).
PREFIX, STATUS = ("prefix", 21, "number"), ("status", 28, "choice")


@pytest.fixture
def page(app: Flask, client: FlaskClient) -> Any:
    return lambda: Page(app, client)


class Class:
    """A room on lesson 2 with its teacher and some students, all joined."""

    def __init__(self, client: FlaskClient, page: Any, students: int = 3, step: int = 20) -> None:
        self.room = create(client, LESSON, step)
        self.teacher = teacher_of(page, self.room)
        self.students = [page() for _ in range(students)]
        for student in self.students:
            student.ask("join", {"code": self.room["code"]})
        self.control = {"code": self.room["code"], "token": self.room["token"]}

    def ask(self, checkpoint: str) -> Any:
        return self.teacher.ask("ask", self.control | {"checkpoint": checkpoint})

    def reveal(self, question: str, **extra: Any) -> Any:
        return self.teacher.ask("reveal", self.control | {"question": question} | extra)

    def answer(self, student: Page, question: str, **given: Any) -> Any:
        return student.ask("answer", {"code": self.room["code"], "question": question} | given)


@pytest.fixture
def lesson_class(client: FlaskClient, page: Any) -> Class:
    return Class(client, page)


# -- what a room shows -------------------------------------------------------------------


def test_a_room_on_a_lesson_shows_the_lessons_own_pages(client: FlaskClient, page: Any) -> None:
    room = create(client, LESSON, 5)
    code = room["code"]
    assert room["kind"] == "lesson" and room["page"] == f"/lesson/{LESSON}/step/5"
    assert room["teacher_url"] == f"/lesson/{LESSON}/step/5?room={code}"
    teacher = teacher_of(page, room)
    student = page()
    moves = Moves()
    moves.step(teacher, room, 9)
    joined = student.ask("join", {"code": code})  # late: lands on the lesson page, step 9
    assert (joined["kind"], joined["page"], joined["step"]) == (
        "lesson",
        f"/lesson/{LESSON}/step/9",
        9,
    )
    assert client.get(f"/join/{code}").headers["Location"] == f"/lesson/{LESSON}/step/9?room={code}"
    moves.step(teacher, room, 11)
    moved = student.received("step")[-1]
    assert moved == {
        "trace": LESSON,
        "step": 11,
        "move": 2,
        "kind": "lesson",
        "page": f"/lesson/{LESSON}/step/11",
    }
    page_html = client.get(f"/lesson/{LESSON}/step/11?room={code}").get_data(as_text=True)
    assert 'id="lesson-notes"' in page_html and "classroom_lesson.js" in page_html


def test_a_room_on_a_live_capture_says_so(app: Flask, client: FlaskClient, page: Any) -> None:
    connection = FakeConnection(app)
    connection.get("/")
    room = create(client, connection.id, 3)
    assert room["kind"] == "capture"
    assert room["teacher_url"] == f"/trace/{connection.id}/step/3?room={room['code']}"
    teacher = teacher_of(page, room)
    connection.get("/more")  # it grows: the teacher may show the newest step
    newest = len(app.extensions["h3learn_library"].get(connection.id).events) - 1
    assert Moves().step(teacher, room, newest)["page"] == f"/trace/{connection.id}/step/{newest}"
    connection.close()


def test_moving_to_another_trace_closes_the_question(lesson_class: Class, page: Any) -> None:
    lesson_class.ask(PREFIX[0])
    moved = Moves().step(lesson_class.teacher, lesson_class.room, 0, trace="first-get")
    assert moved["kind"] == "trace" and moved["page"] == "/trace/first-get/step/0"
    assert page().ask("join", {"code": lesson_class.room["code"]})["question"] is None


# -- predict checkpoints asked of the class ---------------------------------------------


def test_a_checkpoint_is_asked_from_the_lesson_without_its_answer(lesson_class: Class) -> None:
    asked = lesson_class.ask(PREFIX[0])
    assert asked["ok"] is True
    question = lesson_class.students[0].received("question")[0]
    assert (question["id"], question["step"], question["kind"]) == PREFIX
    assert question["lesson"] == LESSON and question["options"] == []
    assert "<strong>Required Insert Count</strong>" in question["prompt_html"]
    assert (question["answer"], question["explain_html"], question["right"]) == (None, "", [])
    assert "is the number of dynamic table inserts" not in str(question)  # the explanation


def test_typed_answers_are_read_counted_and_judged_by_the_server(lesson_class: Class) -> None:
    lesson_class.ask(PREFIX[0])
    first, second, third = lesson_class.students
    assert lesson_class.answer(first, "prefix", text=" 0x0 ") == {"ok": True, "counted_as": "0"}
    assert lesson_class.answer(second, "prefix", text="0")["counted_as"] == "0"
    wrong = lesson_class.answer(third, "prefix", text="three")
    assert "takes a whole number (like 57 or 0x39), not 'three'" in wrong["error"]
    assert lesson_class.answer(third, "prefix", text="1")["counted_as"] == "1"
    tally = lesson_class.teacher.received("tally")[-1]
    assert tally == {"id": "prefix", "answered": 3, "top": [["0", 2], ["1", 1]], "distinct": 2}
    assert first.received("tally") == []  # students see no spread before the reveal

    assert lesson_class.reveal("prefix") == {"ok": True}
    revealed = third.received("revealed")[0]
    assert revealed["question"]["answer"] == "0" and revealed["question"]["right"] == ["0"]
    assert "Required Insert Count is the number" in revealed["question"]["explain_html"]
    assert (revealed["answered"], revealed["top"]) == (3, [["0", 2], ["1", 1]])
    late = lesson_class.answer(first, "prefix", text="1")
    assert "have been revealed" in late["error"]


def test_a_choice_checkpoint_is_answered_by_option_and_revealed_with_the_right_one(
    lesson_class: Class,
) -> None:
    lesson_class.ask(STATUS[0])
    first, second, _ = lesson_class.students
    assert (
        "answered by choosing: send 'option'"
        in lesson_class.answer(first, "status", text="As an Indexed Field Line")["error"]
    )
    lesson_class.answer(first, "status", option=0)
    lesson_class.answer(second, "status", option=2)
    assert lesson_class.teacher.received("tally")[-1]["counts"] == [1, 0, 1]
    lesson_class.reveal("status")
    question = first.received("revealed")[0]["question"]
    assert question["correct"] == 0 and question["answer"].startswith("As an Indexed Field Line")


def test_the_answer_to_a_checkpoint_never_comes_from_the_teachers_page(
    lesson_class: Class,
) -> None:
    lesson_class.ask(STATUS[0])
    refused = lesson_class.reveal("status", correct=2)
    assert "is checked by the server: send no 'correct'" in refused["error"]
    assert lesson_class.reveal("status") == {"ok": True}
    again = lesson_class.reveal("status")
    assert "has been revealed already" in again["error"]


def test_students_can_neither_ask_nor_reveal(lesson_class: Class) -> None:
    student = lesson_class.students[0]
    forged = {"code": lesson_class.room["code"], "token": "guess"}
    asked = student.ask("ask", forged | {"checkpoint": "prefix"})
    assert asked["status"] == 403 and "only the teacher controls room" in asked["error"]
    lesson_class.ask(PREFIX[0])
    revealed = student.ask("reveal", forged | {"question": "prefix"})
    assert revealed["status"] == 403
    assert lesson_class.students[1].received("revealed") == []


def test_answers_count_only_while_a_question_is_open(lesson_class: Class) -> None:
    student = lesson_class.students[0]
    before = lesson_class.answer(student, "prefix", text="0")
    assert "question 'prefix' is not open in this room" in before["error"]
    lesson_class.ask(PREFIX[0])
    other = lesson_class.answer(student, "status", option=0)
    assert "question 'status' is not open" in other["error"]
    lesson_class.reveal("prefix")
    assert "have been revealed" in lesson_class.answer(student, "prefix", text="0")["error"]


def test_a_checkpoint_belongs_to_the_lesson_the_room_is_on(
    client: FlaskClient, page: Any, lesson_class: Class
) -> None:
    unknown = lesson_class.ask("no-such-checkpoint")
    assert unknown["status"] == 404 and "has no checkpoint 'no-such-checkpoint'" in unknown["error"]
    room = create(client, "first-get")
    teacher = teacher_of(page, room)
    answer = teacher.ask(
        "ask", {"code": room["code"], "token": room["token"], "checkpoint": "prefix"}
    )
    assert "the class is not on a lesson (it shows 'first-get')" in answer["error"]


@pytest.mark.parametrize(
    ("checkpoint", "words"),
    [
        (5, "'checkpoint' must be a string, not the number 5"),
        ("../prefix", "'checkpoint' may hold only letters, digits and _ . : -"),
        ("x" * 65, "'checkpoint' is longer than 64 characters"),
    ],
)
def test_a_malformed_checkpoint_ask_is_refused(
    lesson_class: Class, checkpoint: Any, words: str
) -> None:
    answer = lesson_class.ask(checkpoint)
    assert answer["status"] == 400 and words in answer["error"]
    assert lesson_class.students[0].received("question") == []


def test_the_revealed_spread_stays_when_students_leave(lesson_class: Class, page: Any) -> None:
    lesson_class.ask(PREFIX[0])
    for student in lesson_class.students:
        lesson_class.answer(student, "prefix", text="0")
    lesson_class.reveal("prefix")
    for student in lesson_class.students:
        student.leave()  # e.g. their pages move on to the next trace
    rejoined = page().ask("join", {"code": lesson_class.room["code"]})
    assert rejoined["tally"]["answered"] == 3 and rejoined["question"]["answer"] == "0"


# -- typed answers: a question of the teacher's own, limits --------------------------------


def ask_typed(lesson_class: Class, kind: str = "text") -> None:
    question = {"id": "word", "prompt": "Which stream carries SETTINGS?", "kind": kind}
    assert lesson_class.teacher.ask("ask", lesson_class.control | {"question": question})["ok"]


def test_typed_answers_that_mean_the_same_are_counted_together(lesson_class: Class) -> None:
    ask_typed(lesson_class)
    for student, typed in zip(
        lesson_class.students, ("The Control  stream.", "the control stream", "QPACK"), strict=True
    ):
        lesson_class.answer(student, "word", text=typed)
    tally = lesson_class.teacher.received("tally")[-1]
    assert tally["top"] == [["the control stream", 2], ["qpack", 1]]
    lesson_class.reveal("word")  # no answer is known for a question of the teacher's own
    question = lesson_class.students[0].received("revealed")[0]["question"]
    assert (question["answer"], question["right"]) == (None, [])


def test_the_teacher_sees_the_most_given_typed_answers_and_how_many_others(
    client: FlaskClient, page: Any
) -> None:
    crowd = Class(client, page, students=TOP_ANSWERS + 3)
    ask_typed(crowd)
    for index, student in enumerate(crowd.students):
        crowd.answer(student, "word", text="same" if index < 3 else f"answer {index}")
    tally = crowd.teacher.received("tally")[-1]
    assert tally["answered"] == TOP_ANSWERS + 3 and tally["distinct"] == TOP_ANSWERS + 1
    assert len(tally["top"]) == TOP_ANSWERS and tally["top"][0] == ["same", 3]
    assert not any(sid in str(tally) for sid in (s.socket.eio_sid for s in crowd.students))


@pytest.mark.parametrize(
    ("given", "words"),
    [
        ({"text": "x" * (MAX_ANSWER_CHARS + 1)}, f"'text' is longer than {MAX_ANSWER_CHARS}"),
        ({"text": ""}, "'text' is empty"),
        ({"text": "   "}, "'text' is empty"),
        ({"text": "two\nlines"}, "may not hold control characters"),
        ({"text": 57}, "'text' must be a string, not the number 57"),
        ({}, "send either 'option' (a choice) or 'text' (a typed answer)"),
        ({"text": "a", "option": 1}, "send either 'option'"),
        ({"option": 0}, "takes a typed answer: send 'text'"),
        ({"text": " . "}, "holds nothing but spaces and full stops"),
    ],
)
def test_a_typed_answer_is_checked(lesson_class: Class, given: dict[str, Any], words: str) -> None:
    ask_typed(lesson_class)
    answer = lesson_class.answer(lesson_class.students[0], "word", **given)
    assert words in answer["error"] and answer["status"] == 400
    assert lesson_class.teacher.received("tally") == []


def test_a_longest_typed_answer_is_taken(lesson_class: Class) -> None:
    ask_typed(lesson_class)
    typed = "y" * MAX_ANSWER_CHARS
    assert lesson_class.answer(lesson_class.students[0], "word", text=typed)["counted_as"] == typed


@pytest.mark.parametrize(
    ("question", "words"),
    [
        ({"id": "q", "prompt": "?", "kind": "essay"}, "'kind' must be one of choice, number, text"),
        ({"id": "q", "prompt": "?", "kind": "number", "options": ["1", "2"]}, "has no 'options'"),
    ],
)
def test_a_malformed_typed_question_is_refused(
    lesson_class: Class, question: dict[str, Any], words: str
) -> None:
    answer = lesson_class.teacher.ask("ask", lesson_class.control | {"question": question})
    assert words in answer["error"]


# -- what-if reruns -----------------------------------------------------------------------


def test_a_what_if_rerun_is_recorded_and_says_what_changed(client: FlaskClient) -> None:
    overrides = {"server": {"qpack_max_table_capacity": 4096}, "client": {"huffman": False}}
    response = client.post(f"/api/lessons/{LESSON}/what-if", json={"overrides": overrides})
    assert response.status_code == 200
    rerun = response.get_json()
    assert rerun["trace"].startswith("whatif-02-") and rerun["count"] > 0
    assert rerun["changes"] == [
        {"side": "client", "setting": "huffman", "lesson": True, "value": False},
        {"side": "server", "setting": "qpack_max_table_capacity", "lesson": 0, "value": 4096},
    ]
    again = client.post(f"/api/lessons/{LESSON}/what-if", json={"overrides": overrides})
    assert again.get_json()["trace"] == rerun["trace"]  # recorded once
    step_page = client.get(rerun["url"]).get_data(as_text=True)
    assert 'id="what-if-note"' in step_page and f'data-lesson="{LESSON}"' in step_page
    assert "(the lesson: <code>0</code>)" in step_page
    assert 'id="what-if-note"' not in client.get(f"/lesson/{LESSON}/step/0").get_data(as_text=True)
    choices = client.get(f"/api/lessons/{LESSON}").get_json()["what_if"]
    assert choices["choices"]["qpack_max_table_capacity"] == [0, 256, 4096]
    assert choices["lesson"]["server"]["huffman"] is True


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({}, 'send JSON: {"overrides"'),
        ({"overrides": {}}, "choose at least one setting to change"),
        ({"overrides": {"proxy": {"huffman": False}}}, "maps 'client' or 'server'"),
        ({"overrides": {"server": {"colour": 1}}}, "server.colour: the what-if form offers"),
        (
            {"overrides": {"server": {"qpack_max_table_capacity": 12345}}},
            "choose one of 0, 256, 4096, not 12345",
        ),
        ({"overrides": {"client": {"huffman": 0}}}, "choose one of true, false, not 0"),
    ],
)
def test_a_what_if_rerun_takes_only_what_the_form_offers(
    client: FlaskClient, body: dict[str, Any], words: str
) -> None:
    response = client.post(f"/api/lessons/{LESSON}/what-if", json=body)
    assert response.status_code == 400 and words in response.get_json()["error"]


def test_the_class_moves_to_a_what_if_rerun_at_the_same_step(lesson_class: Class) -> None:
    overrides = {"server": {"qpack_max_table_capacity": 4096}}
    client = lesson_class.teacher.socket.flask_test_client
    rerun = client.post(f"/api/lessons/{LESSON}/what-if", json={"overrides": overrides})
    trace = rerun.get_json()["trace"]
    moved = Moves().step(lesson_class.teacher, lesson_class.room, 20, trace=trace)
    assert (moved["kind"], moved["page"]) == ("trace", f"/trace/{trace}/step/20")
    assert lesson_class.students[2].received("step")[-1]["trace"] == trace
