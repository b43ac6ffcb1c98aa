"""What a classroom does: rooms created, joined, driven by the teacher, left and ended.

`Classroom` holds the room store (shared by every process, rooms.py) and the connections
this process holds itself (which Socket.IO session is in which room, as teacher or
student). It sends through Flask-SocketIO, to Socket.IO rooms, never to students one by
one: one emit reaches a whole class, and with a message queue every process's share of it.

    Socket.IO room        who is in it          what is sent there
    students:<code>       every student         step, question, revealed, ended
    teachers:<code>       the teacher's pages   step (to their other pages), students,
                                                question, tally, revealed, ended

A room shows a trace: a lesson (shown on the lesson's own pages, with its notes and
checkpoints), a saved trace or example, or a live capture (which grows while it runs).
Which of these it is (``kind``) and the page that shows it (``page``) are worked out here
from the trace library, so every page, and the join link, opens the right one. A step
sent to students is only ``{"trace", "step", "move", "kind", "page"}``: each page fetches
the step itself from the JSON API, which the library caches, so a broadcast stays a few
dozen bytes whatever the step holds. ``move`` is the teacher's own counter: Socket.IO handlers
run in threads, so two quick steps can be handled out of order; the store keeps only a
newer move, and pages ignore an older one.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, replace
from typing import Any

from flask_socketio import SocketIO  # type: ignore[import-untyped]  # no stubs published

from h3learn.web.classroom.codes import (
    display_code,
    new_code,
    new_token,
    token_hash,
    token_matches,
)
from h3learn.web.classroom.protocol import (
    Answer,
    Ask,
    Control,
    Join,
    Reveal,
    RoomError,
    Step,
)
from h3learn.web.classroom.questions import LessonCheckpoints, answer_key, tally
from h3learn.web.classroom.rooms import Room, RoomStore
from h3learn.web.library import Entry, TraceLibrary, UnknownTrace

NAMESPACE = "/classroom"

log = logging.getLogger(__name__)

#: Tries at a fresh join code before giving up (a clash is a one-in-a-million event).
CODE_TRIES = 8


@dataclass(frozen=True)
class Membership:
    code: str
    role: str  # "teacher" or "student"


def students_room(code: str) -> str:
    return f"students:{code}"


def teachers_room(code: str) -> str:
    return f"teachers:{code}"


#: What a room shows, by the library's kind of entry (anything else is a plain "trace").
SHOWN_AS = {"lesson": "lesson", "capture": "capture"}


def page_of(kind: str, trace: str, step: int) -> str:
    """The page that shows ``step`` of ``trace``: a lesson's own page, or the step page."""
    base = "/lesson" if kind == "lesson" else "/trace"
    return f"{base}/{trace}/step/{step}"


def unknown_room(code: str) -> RoomError:
    return RoomError(
        f"no open room has the code {display_code(code)}: check the code, or the class has ended",
        404,
    )


class Classroom:
    """The rooms of this server: what every classroom event does (see the module docstring)."""

    def __init__(
        self,
        store: RoomStore,
        library: TraceLibrary,
        socketio: SocketIO,
        *,
        max_rooms: int,
        checkpoints: LessonCheckpoints,
    ) -> None:
        self.store = store
        self.library = library
        self.checkpoints = checkpoints
        self.socketio = socketio
        self.max_rooms = max_rooms
        self._members: dict[str, Membership] = {}
        self._lock = threading.Lock()
        self._sweeper: Any = None

    # -- sending ------------------------------------------------------------------------

    def _emit(self, event: str, data: dict[str, Any], *rooms: str, skip: str | None = None) -> None:
        to = rooms[0] if len(rooms) == 1 else list(rooms)
        self.socketio.emit(event, data, to=to, namespace=NAMESPACE, skip_sid=skip)

    # -- rooms --------------------------------------------------------------------------

    def create(self, trace: str, step: int) -> tuple[Room, str]:
        """A new room showing ``trace`` at ``step``, and the teacher's token (given once)."""
        self._check_step(trace, step)
        token = new_token()
        now = self.store.clock()
        for _ in range(CODE_TRIES):
            room = Room(new_code(), token_hash(token), trace, step, -1, now, now)
            created = self.store.create(room, limit=self.max_rooms)
            if created == "created":
                self._start_sweeper()
                return room, token
            if created == "full":
                break
        raise RoomError(
            f"{self.max_rooms} rooms are open, the most this server holds; "
            "end one or wait until an idle one closes",
            503,
        )

    def room(self, code: str) -> Room:
        room = self.store.get(code)
        if room is None:
            raise unknown_room(code)
        return room

    def _teacher(self, control: Control) -> Room:
        """The room, if ``control`` carries its teacher's token; else a clear refusal."""
        room = self.room(control.code)
        if not token_matches(control.token, room.token_hash):
            raise RoomError(
                f"only the teacher controls room {display_code(room.code)}: "
                "this page does not hold its teacher's token",
                403,
            )
        return room

    def _check_step(self, trace: str, step: int) -> Entry:
        try:
            entry = self.library.get(trace)
        except UnknownTrace:
            raise RoomError(f"no trace with id {trace!r}", 404) from None
        count = len(entry.events)
        if not 0 <= step < count:
            raise RoomError(f"trace {trace!r} has steps 0 to {count - 1}, not {step}")
        return entry

    def kind_of(self, trace: str) -> str:
        """ "lesson", "capture" or "trace": what the room shows (see the module docstring)."""
        try:
            entry = self.library.get(trace)
        except UnknownTrace:  # deleted since: the step page will say so
            return "trace"
        return SHOWN_AS.get(entry.kind, "trace")

    # -- joining and leaving --------------------------------------------------------------

    def join(self, sid: str, join: Join) -> dict[str, Any]:
        """Put ``sid`` in the room; the room's state, read after it is in (so a step the
        teacher sends meanwhile is either in this answer or sent to it, never lost)."""
        code = self.room(join.code).code
        role = "student"
        if join.token is not None:
            self._teacher(Control(code, join.token))
            role = "teacher"
        self.leave(sid)
        with self._lock:
            self._members[sid] = Membership(code, role)
        server = self.socketio.server
        if role == "teacher":
            server.enter_room(sid, teachers_room(code), namespace=NAMESPACE)
            self.store.touch(code)
            students = self.store.students(code)
        else:
            server.enter_room(sid, students_room(code), namespace=NAMESPACE)
            students = self.store.add_student(code, sid)
            self._emit("students", {"count": students}, teachers_room(code))
        self._start_sweeper()
        room = self.room(code)
        state = self.public_state(room, students)
        state["role"] = role
        question = room.question
        if question is not None and (role == "teacher" or question.revealed):
            state["tally"] = self._tally(room)  # students see the spread only once revealed
        return state

    def public_state(self, room: Room, students: int | None = None) -> dict[str, Any]:
        """What anyone may know about a room (never its token or hash)."""
        kind = self.kind_of(room.trace)
        return {
            "code": room.code,
            "display": display_code(room.code),
            "trace": room.trace,
            "step": room.step,
            "move": room.move,
            "kind": kind,
            "page": page_of(kind, room.trace, room.step),
            "students": self.store.students(room.code) if students is None else students,
            "question": room.question.public() if room.question else None,
            "idle_seconds": self.store.idle_seconds,
        }

    def leave(self, sid: str) -> None:
        """A connection left (or joined another room): its student is no longer counted."""
        with self._lock:
            membership = self._members.pop(sid, None)
        if membership is None:
            return
        server = self.socketio.server
        if membership.role == "teacher":
            server.leave_room(sid, teachers_room(membership.code), namespace=NAMESPACE)
            return
        server.leave_room(sid, students_room(membership.code), namespace=NAMESPACE)
        if self.store.get(membership.code) is not None:
            count = self.store.remove_student(membership.code, sid)
            self._emit("students", {"count": count}, teachers_room(membership.code))

    # -- the teacher drives ----------------------------------------------------------------

    def step(self, sid: str, step: Step) -> dict[str, Any]:
        room = self._teacher(step.control)
        kind = SHOWN_AS.get(self._check_step(step.trace, step.step).kind, "trace")
        where = {"kind": kind, "page": page_of(kind, step.trace, step.step)}
        moved = self.store.move(room.code, step.trace, step.step, step.move)
        if moved is None:
            raise unknown_room(room.code)
        if not moved:
            return {"ok": True, "stale": True, **where}
        if step.trace != room.trace and room.question is not None:
            # A question is about what the class was looking at: it ends with it.
            self.store.set_question(room.code, None, fresh=True)
        message = {"trace": step.trace, "step": step.step, "move": step.move, **where}
        self._emit("step", message, students_room(room.code), teachers_room(room.code), skip=sid)
        return {"ok": True, **where}

    def ask(self, ask: Ask) -> dict[str, Any]:
        """Open a question (answers start again), the teacher's own or a lesson checkpoint."""
        room = self._teacher(ask.control)
        question = ask.question
        if ask.checkpoint is not None:
            question = self.checkpoints.question(room.trace, ask.checkpoint)
        assert question is not None
        self.store.set_question(room.code, question, fresh=True)
        message = question.public()
        self._emit("question", message, students_room(room.code), teachers_room(room.code))
        return {"ok": True, "question": message}

    def reveal(self, reveal: Reveal) -> dict[str, Any]:
        """Show everyone the spread and, where it is known, the answer. A checkpoint's
        answer comes from its lesson here, never from the teacher's page."""
        room = self._teacher(reveal.control)
        question = room.question
        if question is None or question.id != reveal.question_id:
            raise RoomError(f"reveal: question {reveal.question_id!r} is not the open question")
        if question.revealed:
            raise RoomError(f"reveal: question {question.id!r} has been revealed already")
        answers = self.store.answers(room.code)
        if question.lesson is not None:
            if reveal.correct is not None:
                raise RoomError(
                    f"reveal: checkpoint {question.id!r} is checked by the server: "
                    "send no 'correct'"
                )
            revealed = self.checkpoints.reveal(question, answers)
        else:
            if reveal.correct is not None and reveal.correct >= len(question.options):
                raise RoomError(
                    f"reveal: 'correct' must be an option index below {len(question.options)}"
                )
            revealed = replace(question, revealed=True, correct=reveal.correct)
        spread = tally(revealed, answers)  # as it stands now, for good
        revealed = replace(revealed, spread=spread)
        self.store.set_question(room.code, revealed, fresh=False)
        message = {"question": revealed.public(), **spread}
        self._emit("revealed", message, students_room(room.code), teachers_room(room.code))
        return {"ok": True}

    def end(self, control: Control, reason: str = "the teacher ended the class") -> dict[str, Any]:
        room = self._teacher(control)
        self._close(room.code, reason)
        return {"ok": True}

    # -- students answer -------------------------------------------------------------------

    def answer(self, sid: str, answer: Answer) -> dict[str, Any]:
        with self._lock:
            membership = self._members.get(sid)
        if membership is None or membership.code != answer.code:
            raise RoomError(f"answer: join room {display_code(answer.code)} first")
        if membership.role != "student":
            raise RoomError("answer: the teacher asks; students answer", 403)
        room = self.room(answer.code)
        question = room.question
        if question is None or question.id != answer.question_id:
            raise RoomError(f"answer: question {answer.question_id!r} is not open in this room")
        if question.revealed:
            raise RoomError("answer: the answers to this question have been revealed")
        key = answer_key(question, answer)
        self.store.answer(room.code, sid, key)
        self._emit("tally", self._tally(room), teachers_room(room.code))
        return {"ok": True, "counted_as": key}

    def _tally(self, room: Room) -> dict[str, Any]:
        """The spread of answers to the room's question (questions.py), and no names: as
        the answers stand, or once revealed as they stood then."""
        question = room.question
        assert question is not None
        if question.spread is not None:
            return question.spread
        return tally(question, self.store.answers(room.code))

    # -- ending -----------------------------------------------------------------------------

    def _close(self, code: str, reason: str) -> None:
        self.store.end(code)
        rooms = (students_room(code), teachers_room(code))
        self._emit("ended", {"code": code, "reason": reason}, *rooms)
        for room in rooms:
            self.socketio.close_room(room, namespace=NAMESPACE)
        with self._lock:
            for sid in [s for s, m in self._members.items() if m.code == code]:
                del self._members[sid]

    def sweep(self) -> list[str]:
        """End every room whose teacher has been idle too long; their codes."""
        idle = self.store.idle_rooms()
        for code in idle:
            self._close(code, "the room was idle too long and has closed")
        return idle

    def _start_sweeper(self) -> None:
        """Once this process holds a room, a background task sweeps idle rooms."""
        with self._lock:
            if self._sweeper is not None:
                return
            self._sweeper = self.socketio.start_background_task(self._sweep_forever)

    def _sweep_forever(self) -> None:
        period = min(60.0, max(1.0, self.store.idle_seconds / 10))
        while True:
            self.socketio.sleep(period)
            try:
                self.sweep()
            except Exception:  # a store briefly unreachable: say so, and try again later
                log.exception("sweeping idle classroom rooms failed")
