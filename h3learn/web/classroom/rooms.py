"""The state of a classroom room, and where it is kept (`RoomStore`).

A room is what every process serving a class must agree on: which trace the teacher shows
and at which step, the teacher's last move number (so a late, out-of-order step from the
same teacher is ignored), the hash of the teacher's token, when the teacher was last
active, the open question (a predict checkpoint) if any, the connected students (counted
by their Socket.IO session ids) and their anonymous answers.

Two stores keep it: `MemoryRoomStore` here, for one process, and `RedisRoomStore`
(redis_store.py) when several processes share a class through Flask-SocketIO's Redis
message queue. Both take a clock, so that a test can age a room past its idle limit, and
both treat a room whose teacher has been idle longer than ``idle_seconds`` as gone.
Which Socket.IO connections a process holds itself is not room state: that stays with
the process (service.py).
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal, Protocol

Clock = Callable[[], float]

#: What `RoomStore.create` did.
Created = Literal["created", "taken", "full"]


#: How a question is answered: by choosing one of its options, or by typing a short answer.
KINDS = ("choice", "number", "text")


@dataclass(frozen=True)
class Question:
    """A question put to the class: a teacher's own, or a lesson's predict checkpoint.

    ``id`` is the question's (or the checkpoint's) id. A "choice" question is answered
    with the index of one of its ``options``; a "number" or "text" question with a short
    typed answer (questions.py says how answers are read and counted). A checkpoint's
    question names its ``lesson`` and the ``step`` it stops the class before, and its
    ``prompt_html`` is the lesson's question as the server rendered it.

    Once ``revealed``, the spread of answers is shown to everyone and no more answers
    count, and the question carries the answer if one is known: ``correct`` (the index of
    the right option), ``answer`` and ``explain_html`` (a checkpoint's answer and its
    explanation, from the lesson on the server), ``right`` (which of the typed answers
    given the server judged right); and ``spread``, the tally as it stood at the reveal
    (students who leave afterwards do not change it). None of these is set before.
    """

    id: str
    prompt: str
    options: tuple[str, ...] = ()
    kind: str = "choice"
    prompt_html: str = ""
    lesson: str | None = None
    step: int | None = None
    revealed: bool = False
    correct: int | None = None
    answer: str | None = None
    explain_html: str = ""
    right: tuple[str, ...] = ()
    spread: dict[str, Any] | None = None

    def public(self) -> dict[str, Any]:
        """What every page is sent: the answer only once it is revealed."""
        return {
            "id": self.id,
            "prompt": self.prompt,
            "options": list(self.options),
            "kind": self.kind,
            "prompt_html": self.prompt_html,
            "lesson": self.lesson,
            "step": self.step,
            "revealed": self.revealed,
            "correct": self.correct if self.revealed else None,
            "answer": self.answer if self.revealed else None,
            "explain_html": self.explain_html if self.revealed else "",
            "right": list(self.right) if self.revealed else [],
        }

    def to_json(self) -> dict[str, Any]:
        """Everything, for a room store (`from_json` reads it back)."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Question:
        return cls(**data | {"options": tuple(data["options"]), "right": tuple(data["right"])})


@dataclass(frozen=True)
class Room:
    code: str
    token_hash: str
    trace: str
    step: int
    move: int
    created: float
    active: float
    question: Question | None = None


class RoomStore(Protocol):
    """Room state shared by every process that serves the class."""

    idle_seconds: float
    clock: Clock

    def create(self, room: Room, *, limit: int) -> Created:
        """Store a new room: "created", or "taken" (its code is in use), or "full" (``limit``
        rooms are open).

        An idle room stays (it is not counted) until `end` removes it, so that whoever
        sweeps idle rooms can still tell its students that it ended."""

    def get(self, code: str) -> Room | None:
        """The room, or None if there is none or its teacher has been idle too long."""

    def move(self, code: str, trace: str, step: int, move: int) -> bool | None:
        """The teacher's move: None if the room is gone, False if an older move than the
        last one (it arrived late and is ignored), True if it is now the room's position."""

    def touch(self, code: str) -> None:
        """The teacher did something: the room is active now."""

    def set_question(self, code: str, question: Question | None, *, fresh: bool) -> None:
        """Open (``fresh``: the answers start again), reveal or clear the question."""

    def add_student(self, code: str, sid: str) -> int:
        """Count a connected student; the number of students now."""

    def remove_student(self, code: str, sid: str) -> int:
        """Forget a student who left, and their answer; the number of students now."""

    def students(self, code: str) -> int: ...

    def answer(self, code: str, sid: str, answer: str) -> None:
        """Record (or change) this student's answer to the open question: its key, the
        option's index as text or the typed answer as questions.py reads it."""

    def answers(self, code: str) -> Counter[str]:
        """How many students gave each answer (by key); never who gave which."""

    def end(self, code: str) -> None:
        """Forget the room and everything in it."""

    def idle_rooms(self) -> list[str]:
        """The codes of rooms whose teacher has been idle longer than ``idle_seconds``."""


@dataclass
class _Kept:
    room: Room
    students: set[str] = field(default_factory=set)
    answers: dict[str, str] = field(default_factory=dict)


class MemoryRoomStore:
    """Rooms in this process's memory, behind one lock (threading mode serves in threads)."""

    def __init__(self, idle_seconds: float, clock: Clock = time.time) -> None:
        self.idle_seconds = idle_seconds
        self.clock = clock
        self._rooms: dict[str, _Kept] = {}
        self._lock = threading.Lock()

    def _live(self, code: str) -> _Kept | None:
        kept = self._rooms.get(code)
        if kept is not None and self.clock() - kept.room.active > self.idle_seconds:
            return None
        return kept

    def create(self, room: Room, *, limit: int) -> Created:
        with self._lock:
            if room.code in self._rooms:
                return "taken"
            if sum(1 for code in self._rooms if self._live(code) is not None) >= limit:
                return "full"
            self._rooms[room.code] = _Kept(room)
            return "created"

    def get(self, code: str) -> Room | None:
        with self._lock:
            kept = self._live(code)
            return kept.room if kept else None

    def move(self, code: str, trace: str, step: int, move: int) -> bool | None:
        with self._lock:
            kept = self._live(code)
            if kept is None:
                return None
            if move <= kept.room.move:
                return False
            kept.room = replace(kept.room, trace=trace, step=step, move=move, active=self.clock())
            return True

    def touch(self, code: str) -> None:
        with self._lock:
            kept = self._live(code)
            if kept is not None:
                kept.room = replace(kept.room, active=self.clock())

    def set_question(self, code: str, question: Question | None, *, fresh: bool) -> None:
        with self._lock:
            kept = self._live(code)
            if kept is None:
                return
            if fresh:
                kept.answers.clear()
            kept.room = replace(kept.room, question=question, active=self.clock())

    def add_student(self, code: str, sid: str) -> int:
        with self._lock:
            kept = self._live(code)
            if kept is None:
                return 0
            kept.students.add(sid)
            return len(kept.students)

    def remove_student(self, code: str, sid: str) -> int:
        with self._lock:
            kept = self._rooms.get(code)
            if kept is None:
                return 0
            kept.students.discard(sid)
            kept.answers.pop(sid, None)
            return len(kept.students)

    def students(self, code: str) -> int:
        with self._lock:
            kept = self._live(code)
            return len(kept.students) if kept else 0

    def answer(self, code: str, sid: str, answer: str) -> None:
        with self._lock:
            kept = self._live(code)
            if kept is not None:
                kept.answers[sid] = answer

    def answers(self, code: str) -> Counter[str]:
        with self._lock:
            kept = self._live(code)
            return Counter(kept.answers.values() if kept else ())

    def end(self, code: str) -> None:
        with self._lock:
            self._rooms.pop(code, None)

    def idle_rooms(self) -> list[str]:
        with self._lock:
            return [code for code in self._rooms if self._live(code) is None]
