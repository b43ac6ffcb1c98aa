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
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Literal, Protocol

Clock = Callable[[], float]

#: What `RoomStore.create` did.
Created = Literal["created", "taken", "full"]


@dataclass(frozen=True)
class Question:
    """A question put to the class: the room side of a lesson's predict checkpoint.

    ``id`` is the checkpoint's own id; students answer with the index of an option. Once
    ``revealed``, the spread of answers is shown to everyone and no more answers count;
    ``correct`` is the index of the right option, if the teacher gives one.
    """

    id: str
    prompt: str
    options: tuple[str, ...]
    revealed: bool = False
    correct: int | None = None

    def public(self) -> dict[str, object]:
        return {
            "id": self.id,
            "prompt": self.prompt,
            "options": list(self.options),
            "revealed": self.revealed,
            "correct": self.correct if self.revealed else None,
        }


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

    def set_question(self, code: str, question: Question | None) -> None:
        """Open, reveal or clear the question; opening a new one forgets the old answers."""

    def add_student(self, code: str, sid: str) -> int:
        """Count a connected student; the number of students now."""

    def remove_student(self, code: str, sid: str) -> int:
        """Forget a student who left, and their answer; the number of students now."""

    def students(self, code: str) -> int: ...

    def answer(self, code: str, sid: str, option: int) -> None:
        """Record (or change) this student's answer to the open question."""

    def tally(self, code: str, options: int) -> list[int]:
        """How many students chose each of the ``options`` options."""

    def end(self, code: str) -> None:
        """Forget the room and everything in it."""

    def idle_rooms(self) -> list[str]:
        """The codes of rooms whose teacher has been idle longer than ``idle_seconds``."""


@dataclass
class _Kept:
    room: Room
    students: set[str] = field(default_factory=set)
    answers: dict[str, int] = field(default_factory=dict)


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

    def set_question(self, code: str, question: Question | None) -> None:
        with self._lock:
            kept = self._live(code)
            if kept is None:
                return
            before = kept.room.question
            if question is None or before is None or before.id != question.id:
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

    def answer(self, code: str, sid: str, option: int) -> None:
        with self._lock:
            kept = self._live(code)
            if kept is not None:
                kept.answers[sid] = option

    def tally(self, code: str, options: int) -> list[int]:
        with self._lock:
            kept = self._live(code)
            return count_answers(kept.answers.values() if kept else (), options)

    def end(self, code: str) -> None:
        with self._lock:
            self._rooms.pop(code, None)

    def idle_rooms(self) -> list[str]:
        with self._lock:
            return [code for code in self._rooms if self._live(code) is None]


def count_answers(answers: Iterable[int], options: int) -> list[int]:
    """How many of ``answers`` (option indexes) chose each option; others are not counted."""
    counts = [0] * options
    for option in answers:
        if 0 <= option < options:
            counts[option] += 1
    return counts
