"""Classroom mode's room protocol (docs/web-api.md, "Classroom"), through Flask-SocketIO's
test client: creating a room, joining it, following and re-syncing, the teacher's token,
questions, bad codes and malformed messages, and rooms that end or go idle.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from web_helpers import make_app

from h3learn.scenarios.examples import EXAMPLES
from h3learn.web import socketio
from h3learn.web.classroom.codes import ALPHABET, normalize_code
from h3learn.web.classroom.redis_store import RedisRoomStore

NS = "/classroom"
TRACE = "dynamic-table"


class Clock:
    """A clock the test moves by hand, so rooms can go idle without waiting."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def app(tmp_path: Path, clock: Clock) -> Iterator[Flask]:
    app = make_app(tmp_path, CLASSROOM_IDLE_SECONDS=600, CLASSROOM_CLOCK=clock)
    yield app
    app.extensions["h3learn_live"].close()


class Page:
    """One browser page's Socket.IO connection to the classroom namespace."""

    def __init__(self, app: Flask, client: FlaskClient) -> None:
        self.socket = socketio.test_client(app, namespace=NS, flask_test_client=client)

    def ask(self, event: str, payload: Any = None) -> Any:
        """Send ``event`` and return the server's answer (the Socket.IO acknowledgement)."""
        return self.socket.emit(event, payload, namespace=NS, callback=True)

    def received(self, name: str | None = None) -> list[Any]:
        """The payloads of the events received since the last call (only ``name`` if given)."""
        events = self.socket.get_received(NS)
        return [e["args"][0] for e in events if name is None or e["name"] == name]

    def leave(self) -> None:
        self.socket.disconnect(namespace=NS)


@pytest.fixture
def page(app: Flask, client: FlaskClient) -> Any:
    return lambda: Page(app, client)


def create(client: FlaskClient, trace: str = "dynamic-table", step: int = 0) -> dict[str, Any]:
    response = client.post("/api/rooms", json={"trace": trace, "step": step})
    assert response.status_code == 201, response.get_json()
    answer: dict[str, Any] = response.get_json()
    return answer


def teacher_of(page: Any, room: dict[str, Any]) -> Page:
    teacher = page()
    assert teacher.ask("join", {"code": room["code"], "token": room["token"]})["role"] == "teacher"
    return teacher


class Moves:
    """The teacher's move numbers: each step carries a larger one."""

    def __init__(self) -> None:
        self.last = 0

    def step(self, teacher: Page, room: dict[str, Any], step: int, trace: str = "") -> Any:
        self.last += 1
        message = {
            "code": room["code"],
            "token": room["token"],
            "trace": trace or room["trace"],
            "step": step,
            "move": self.last,
        }
        return teacher.ask("step", message)


# -- creating a room -------------------------------------------------------------------


def test_a_new_room_has_a_readable_code_a_secret_token_and_a_join_link(
    client: FlaskClient,
) -> None:
    room = create(client, "first-get", 3)
    assert len(room["code"]) == 6 and set(room["code"]) <= set(ALPHABET)
    assert room["display"] == f"{room['code'][:3]}-{room['code'][3:]}"
    assert room["code"] not in room["token"] and len(room["token"]) >= 40
    assert room["join_url"] == f"http://localhost/join/{room['code']}"
    assert room["teacher_url"] == f"/trace/first-get/step/3?room={room['code']}"
    assert (room["trace"], room["step"], room["students"]) == ("first-get", 3, 0)
    public = client.get(f"/api/rooms/{room['code']}").get_json()
    assert public["trace"] == "first-get" and "token" not in public
    assert "token_hash" not in str(public)


def test_the_room_api_refuses_bad_and_unknown_codes(client: FlaskClient) -> None:
    bad = client.get("/api/rooms/ABC")
    assert bad.status_code == 400
    assert bad.get_json() == {"error": "a join code has 6 letters and digits, not 3"}
    unknown = client.get("/api/rooms/abc-def")
    assert unknown.status_code == 404
    assert "no open room has the code ABC-DEF" in unknown.get_json()["error"]


def test_two_rooms_get_different_codes_and_tokens(client: FlaskClient) -> None:
    first, second = create(client), create(client)
    assert first["code"] != second["code"] and first["token"] != second["token"]


@pytest.mark.parametrize(
    ("body", "status", "words"),
    [
        ({"trace": "no-such-trace"}, 404, "no trace with id 'no-such-trace'"),
        ({"trace": "first-get", "step": 10_000}, 400, "has steps 0 to"),
        ({"trace": "first-get", "step": "3"}, 400, "'step' must be a whole number"),
        ({"trace": 7}, 400, "'trace' must be a trace id"),
        ([1, 2], 400, "send a JSON object"),
    ],
)
def test_creating_a_room_refuses_bad_requests_with_a_reason(
    client: FlaskClient, body: Any, status: int, words: str
) -> None:
    response = client.post("/api/rooms", json=body)
    assert response.status_code == status
    assert words in response.get_json()["error"]


def test_creating_a_room_needs_json(client: FlaskClient) -> None:
    response = client.post("/api/rooms", data="trace=first-get")
    assert response.status_code == 400
    assert "JSON object" in response.get_json()["error"]


def test_a_server_holds_at_most_its_configured_number_of_rooms(tmp_path: Path) -> None:
    client = make_app(tmp_path, CLASSROOM_MAX_ROOMS=2).test_client()
    create(client)
    create(client)
    response = client.post("/api/rooms", json={"trace": "first-get"})
    assert response.status_code == 503
    assert "2 rooms are open" in response.get_json()["error"]


def test_the_qr_code_is_an_svg_of_the_join_link_from_this_origin(client: FlaskClient) -> None:
    room = create(client)
    response = client.get(f"/room/{room['code']}/qr.svg")
    assert response.status_code == 200
    assert response.mimetype == "image/svg+xml"
    svg = response.get_data(as_text=True)
    assert svg.startswith("<svg") and "viewBox" in svg and "<script" not in svg
    assert "default-src 'self'" in response.headers["Content-Security-Policy"]
    assert client.get("/room/ABCDEF/qr.svg").status_code == 404


def test_the_qr_code_and_link_use_the_public_url_when_configured(tmp_path: Path) -> None:
    client = make_app(tmp_path, PUBLIC_URL="http://192.0.2.7:5000/").test_client()
    room = create(client)
    assert room["join_url"] == f"http://192.0.2.7:5000/join/{room['code']}"


# -- the join page -----------------------------------------------------------------------


def test_the_join_link_opens_the_current_step_of_the_room(client: FlaskClient, page: Any) -> None:
    room = create(client, "dynamic-table", 4)
    Moves().step(teacher_of(page, room), room, 9)
    response = client.get(f"/join/{room['code']}")
    assert response.status_code == 302
    assert response.headers["Location"] == f"/trace/dynamic-table/step/9?room={room['code']}"


def test_a_typed_code_is_forgiving_about_case_spaces_and_dashes(client: FlaskClient) -> None:
    room = create(client)
    typed = f" {room['code'][:3].lower()} - {room['code'][3:]} "
    response = client.get("/join", query_string={"code": typed})
    assert response.headers["Location"] == f"/join/{room['code']}"


@pytest.mark.parametrize(
    ("typed", "words"),
    [
        ("ABC", "a join code has 6 letters and digits, not 3"),
        ("ABCDE0", "codes never use 0, 1, I, L, O or U"),
        ("ABC-DEF", "no open room has the code ABC-DEF"),
    ],
)
def test_the_join_page_says_why_a_code_is_refused(
    client: FlaskClient, typed: str, words: str
) -> None:
    response = client.get("/join", query_string={"code": typed})
    assert response.status_code in (400, 404)
    assert words in response.get_data(as_text=True)
    assert client.get("/join").status_code == 200


def test_the_trace_list_leads_students_to_the_join_page(client: FlaskClient) -> None:
    page = client.get("/").get_data(as_text=True)
    assert 'href="/join" id="join-class-link"' in page


def test_normalize_code_reads_what_students_type() -> None:
    assert normalize_code("k7p 3xm") == "K7P3XM"
    assert normalize_code("K7P-3XM") == "K7P3XM"


# -- joining, following, re-syncing --------------------------------------------------------


def test_students_join_and_the_teacher_sees_the_count(client: FlaskClient, page: Any) -> None:
    room = create(client)
    teacher = teacher_of(page, room)
    first, second = page(), page()
    joined = first.ask("join", {"code": room["code"]})
    assert joined["role"] == "student" and joined["students"] == 1
    assert joined["join_url"].endswith(f"/join/{room['code']}")
    assert "token" not in joined and "token_hash" not in str(joined)
    second.ask("join", {"code": room["display"].lower()})
    assert [m["count"] for m in teacher.received("students")] == [1, 2]
    first.leave()
    assert teacher.received("students") == [{"count": 1}]


def test_every_student_follows_the_teachers_steps(client: FlaskClient, page: Any) -> None:
    room = create(client)
    teacher = teacher_of(page, room)
    students = [page() for _ in range(3)]
    for student in students:
        student.ask("join", {"code": room["code"]})
    moves = Moves()
    for step in (1, 2, 5):
        answer = moves.step(teacher, room, step)
        assert answer == {"ok": True, "kind": "trace", "page": f"/trace/dynamic-table/step/{step}"}
    for student in students:
        steps = [(m["trace"], m["step"], m["page"]) for m in student.received("step")]
        assert steps == [(TRACE, n, f"/trace/{TRACE}/step/{n}") for n in (1, 2, 5)]
    assert teacher.received("step") == []  # the sender is not told its own step


def test_a_late_joiner_lands_on_the_current_step(client: FlaskClient, page: Any) -> None:
    room = create(client)
    teacher = teacher_of(page, room)
    Moves().step(teacher, room, 17)
    late = page().ask("join", {"code": room["code"]})
    assert (late["trace"], late["step"]) == ("dynamic-table", 17)


def test_a_student_who_reconnects_is_put_on_the_current_step(
    client: FlaskClient, page: Any
) -> None:
    room = create(client)
    teacher = teacher_of(page, room)
    student = page()
    student.ask("join", {"code": room["code"]})
    student.leave()
    moves = Moves()
    moves.step(teacher, room, 30)
    again = page().ask("join", {"code": room["code"]})
    assert again["step"] == 30 and again["move"] == moves.last


def test_a_step_older_than_the_last_move_is_ignored(client: FlaskClient, page: Any) -> None:
    room = create(client)
    teacher = teacher_of(page, room)
    student = page()
    student.ask("join", {"code": room["code"]})
    base = {"code": room["code"], "token": room["token"], "trace": "dynamic-table"}
    assert teacher.ask("step", base | {"step": 8, "move": 20})["ok"] is True
    late = teacher.ask("step", base | {"step": 7, "move": 19})
    assert late["ok"] is True and late["stale"] is True
    assert [m["step"] for m in student.received("step")] == [8]
    assert client.get(f"/api/rooms/{room['code']}").get_json()["step"] == 8


def test_the_teacher_switches_the_class_to_another_trace(client: FlaskClient, page: Any) -> None:
    room = create(client, "dynamic-table", 3)
    teacher = teacher_of(page, room)
    student = page()
    student.ask("join", {"code": room["code"]})
    assert Moves().step(teacher, room, 0, trace="blocked-stream")["ok"] is True
    assert student.received("step")[0]["trace"] == "blocked-stream"
    assert page().ask("join", {"code": room["code"]})["trace"] == "blocked-stream"


def test_a_second_teacher_page_follows_the_first(client: FlaskClient, page: Any) -> None:
    room = create(client)
    laptop, projector = teacher_of(page, room), teacher_of(page, room)
    Moves().step(laptop, room, 6)
    assert [m["step"] for m in projector.received("step")] == [6]


# -- only the teacher drives -----------------------------------------------------------------


def test_a_student_cannot_drive(client: FlaskClient, page: Any) -> None:
    room = create(client)
    student = page()
    student.ask("join", {"code": room["code"]})
    other = page()
    other.ask("join", {"code": room["code"]})
    forged = {"code": room["code"], "token": "guess", "trace": "dynamic-table", "step": 9}
    for event, payload in [
        ("step", forged | {"move": 1}),
        ("end", {"code": room["code"], "token": room["code"]}),
        ("ask", {"code": room["code"], "token": "", "question": _question()}),
        ("reveal", {"code": room["code"], "token": "x" * 43, "question": "q1"}),
    ]:
        answer = student.ask(event, payload)
        assert "only the teacher controls room" in answer["error"], event
        assert answer["status"] == 403
    assert other.received("step") == [] and other.received("ended") == []
    assert client.get(f"/api/rooms/{room['code']}").get_json()["step"] == 0


def test_joining_with_a_wrong_token_is_refused_not_turned_into_a_student(
    client: FlaskClient, page: Any
) -> None:
    room = create(client)
    answer = page().ask("join", {"code": room["code"], "token": "not-the-token"})
    assert "only the teacher controls room" in answer["error"]


def test_one_rooms_token_does_not_drive_another(client: FlaskClient, page: Any) -> None:
    mine, theirs = create(client), create(client)
    teacher = teacher_of(page, mine)
    answer = Moves().step(teacher, theirs | {"token": mine["token"]}, 4)
    assert "only the teacher controls room" in answer["error"]


# -- questions (the room side of a lesson's predict checkpoint) -------------------------------


def _question() -> dict[str, Any]:
    return {"id": "q1", "prompt": "Which index?", "options": ["0", "1", "2"]}


def test_students_answer_anonymously_and_the_teacher_sees_the_spread(
    client: FlaskClient, page: Any
) -> None:
    room = create(client)
    teacher = teacher_of(page, room)
    students = [page() for _ in range(3)]
    for student in students:
        student.ask("join", {"code": room["code"]})
    control = {"code": room["code"], "token": room["token"]}
    assert teacher.ask("ask", control | {"question": _question()})["ok"] is True
    assert students[0].received("question")[0]["options"] == ["0", "1", "2"]
    for student, option in zip(students, (1, 1, 2), strict=True):
        answer = student.ask("answer", {"code": room["code"], "question": "q1", "option": option})
        assert answer == {"ok": True, "counted_as": str(option)}
    students[0].ask("answer", {"code": room["code"], "question": "q1", "option": 0})  # changed
    tallies = teacher.received("tally")
    assert tallies[-1] == {"id": "q1", "counts": [1, 1, 1], "answered": 3}
    assert students[1].received("tally") == []  # no spread for students before the reveal
    late = page().ask("join", {"code": room["code"]})
    assert late["question"]["id"] == "q1" and "tally" not in late
    assert teacher.ask("reveal", control | {"question": "q1", "correct": 1}) == {"ok": True}
    revealed = students[2].received("revealed")[0]
    assert revealed["counts"] == [1, 1, 1] and revealed["question"]["correct"] == 1
    too_late = students[0].ask("answer", {"code": room["code"], "question": "q1", "option": 2})
    assert "have been revealed" in too_late["error"]
    assert page().ask("join", {"code": room["code"]})["tally"]["counts"] == [1, 1, 1]


def test_answers_are_checked(client: FlaskClient, page: Any) -> None:
    room = create(client)
    teacher = teacher_of(page, room)
    student, outsider = page(), page()
    student.ask("join", {"code": room["code"]})
    answer = {"code": room["code"], "question": "q1", "option": 0}
    assert "is not open" in student.ask("answer", answer)["error"]
    teacher.ask("ask", {"code": room["code"], "token": room["token"], "question": _question()})
    assert "join room" in outsider.ask("answer", answer)["error"]
    assert "students answer" in teacher.ask("answer", answer)["error"]
    assert "must be below 3" in student.ask("answer", answer | {"option": 5})["error"]
    assert "is not open" in student.ask("answer", answer | {"question": "q2"})["error"]


def test_a_student_who_leaves_takes_their_answer_along(client: FlaskClient, page: Any) -> None:
    room = create(client)
    teacher = teacher_of(page, room)
    student = page()
    student.ask("join", {"code": room["code"]})
    teacher.ask("ask", {"code": room["code"], "token": room["token"], "question": _question()})
    student.ask("answer", {"code": room["code"], "question": "q1", "option": 2})
    student.leave()
    rejoined = teacher_of(page, room).ask("join", {"code": room["code"], "token": room["token"]})
    assert rejoined["tally"] == {"id": "q1", "counts": [0, 0, 0], "answered": 0}


# -- bad codes and malformed messages ------------------------------------------------------------


@pytest.mark.parametrize(
    ("event", "payload", "words"),
    [
        ("join", None, "join: the message must be a JSON object, not nothing"),
        ("join", "K7P3XM", "join: the message must be a JSON object, not 'K7P3XM'"),
        ("join", [1], "the message must be a JSON object, not a list"),
        ("join", {}, "join: 'code' must be a string, not nothing"),
        ("join", {"code": 123456}, "'code' must be a string, not the number 123456"),
        ("join", {"code": "ABCDEFG"}, "a join code has 6 letters and digits, not 7"),
        ("join", {"code": "ABCDE1"}, "codes never use 0, 1, I, L, O or U"),
        ("join", {"code": "x" * 5000}, "'code' is longer than 32 characters"),
        ("join", {"code": "ABCDEF"}, "no open room has the code ABC-DEF"),
        ("step", {"code": "ABCDEF"}, "'token' must be a string"),
        (
            "step",
            {"code": "ABCDEF", "token": "t", "trace": "x", "step": True, "move": 1},
            "not true/false",
        ),
        (
            "step",
            {"code": "ABCDEF", "token": "t", "trace": "x", "step": -1, "move": 1},
            "'step' must be between 0 and",
        ),
        ("ask", {"code": "ABCDEF", "token": "t", "question": {"id": "a b"}}, "may hold only"),
        ("answer", {"code": "ABCDEF", "question": "q1", "option": 1.5}, "whole number"),
        ("end", {"code": "ABCDEF", "token": ["t"]}, "'token' must be a string, not a list"),
    ],
)
def test_malformed_messages_get_a_clear_error(
    page: Any, event: str, payload: Any, words: str
) -> None:
    answer = page().ask(event, payload)
    assert set(answer) == {"error", "status"} and answer["status"] in (400, 404)
    assert words in answer["error"]
    assert answer["error"].startswith(f"{event}: ")


def test_an_unknown_room_is_refused_for_every_event(page: Any) -> None:
    control = {"code": "ABCDEF", "token": "t"}
    for event, payload in [
        ("step", control | {"trace": "first-get", "step": 0, "move": 1}),
        ("end", control),
        ("reveal", control | {"question": "q1"}),
    ]:
        assert "no open room has the code ABC-DEF" in page().ask(event, payload)["error"]


@pytest.mark.parametrize(
    ("question", "words"),
    [
        ({"id": "q", "prompt": "?", "options": ["only one"]}, "a list of 2 to 12 strings"),
        ({"id": "q", "prompt": "?", "options": ["a", ""]}, "option 1 must be a string of 1"),
        ({"id": "q", "prompt": 3, "options": ["a", "b"]}, "'prompt' must be a string"),
        ({"id": "q", "prompt": "?", "options": ["a"] * 13}, "a list of 2 to 12 strings"),
    ],
)
def test_a_malformed_question_is_refused(
    client: FlaskClient, page: Any, question: dict[str, Any], words: str
) -> None:
    room = create(client)
    teacher = teacher_of(page, room)
    answer = teacher.ask(
        "ask", {"code": room["code"], "token": room["token"], "question": question}
    )
    assert words in answer["error"]


def test_a_step_outside_the_trace_or_an_unknown_trace_is_refused(
    client: FlaskClient, page: Any
) -> None:
    room = create(client, "first-get")
    teacher = teacher_of(page, room)
    moves = Moves()
    count = len(EXAMPLES[0].record())
    assert f"has steps 0 to {count - 1}" in moves.step(teacher, room, count)["error"]
    assert "no trace with id '../etc'" in moves.step(teacher, room, 0, "../etc")["error"]


def test_the_server_keeps_serving_after_garbage(client: FlaskClient, page: Any) -> None:
    student = page()
    for garbage in (None, 0, "", [], {"code": None}, {"code": {"$gt": ""}}, "\x00" * 100):
        assert "error" in student.ask("join", garbage)
    room = create(client)
    assert student.ask("join", {"code": room["code"]})["role"] == "student"


def test_an_unreachable_room_store_is_an_answer_not_a_crash(
    app: Flask, client: FlaskClient, page: Any
) -> None:
    classroom = app.extensions["h3learn_classroom"]
    classroom.store = RedisRoomStore("redis://127.0.0.1:1/0", 600)  # nothing listens there
    student = page()
    answer = student.ask("join", {"code": "ABCDEF"})
    assert answer["status"] == 503
    assert answer["error"].startswith("join: the room store (Redis) cannot be reached")
    student.leave()


# -- rooms end ---------------------------------------------------------------------------------


def test_the_teacher_ends_the_class_for_everyone(client: FlaskClient, page: Any) -> None:
    room = create(client)
    teacher = teacher_of(page, room)
    student = page()
    student.ask("join", {"code": room["code"]})
    assert teacher.ask("end", {"code": room["code"], "token": room["token"]}) == {"ok": True}
    assert student.received("ended")[0]["reason"] == "the teacher ended the class"
    assert client.get(f"/api/rooms/{room['code']}").status_code == 404
    assert "no open room" in page().ask("join", {"code": room["code"]})["error"]
    assert "no open room" in Moves().step(teacher, room, 1)["error"]


def test_a_room_whose_teacher_is_idle_too_long_ends(
    app: Flask, client: FlaskClient, page: Any, clock: Clock
) -> None:
    idle, busy = create(client), create(client)
    busy_teacher = teacher_of(page, busy)
    student = page()
    student.ask("join", {"code": idle["code"]})
    clock.now += 500
    Moves().step(busy_teacher, busy, 2)  # the busy teacher keeps theirs open
    clock.now += 200  # idle: 700 s without its teacher (limit 600); busy: 200 s
    classroom = app.extensions["h3learn_classroom"]
    assert classroom.sweep() == [idle["code"]]
    assert "idle too long" in student.received("ended")[0]["reason"]
    assert client.get(f"/api/rooms/{idle['code']}").status_code == 404
    assert client.get(f"/api/rooms/{busy['code']}").status_code == 200


def test_students_joining_do_not_keep_an_idle_room_open(
    client: FlaskClient, page: Any, clock: Clock
) -> None:
    room = create(client)
    clock.now += 590
    page().ask("join", {"code": room["code"]})
    clock.now += 20
    assert "no open room" in page().ask("join", {"code": room["code"]})["error"]
