"""Room state in Redis, for several `h3learn serve` processes that share a class.

With ``--message-queue redis://...`` Flask-SocketIO passes every emit through Redis, so a
step the teacher sends to process B reaches students connected to process A. What the
processes must also agree on (where the teacher is, the token hash, the question, who is
connected, the answers) lives here, under these keys:

    h3learn:room:<code>            hash: token_hash, trace, step, move, created, active,
                                   question (JSON, or "")
    h3learn:room:<code>:students   set of the students' Socket.IO session ids
    h3learn:room:<code>:answers    hash: session id -> answer (its key: an option's index,
                                   or a typed answer as questions.py reads it)
    h3learn:rooms                  sorted set: code -> time the teacher was last active

Whether a room is idle is decided from ``active`` and the store's clock, as in
`MemoryRoomStore`; the keys also carry a Redis expiry a little longer than the idle limit,
so a room nobody ends is removed by Redis itself. A teacher's move is a compare-and-set
done by a small Lua script, so two processes (or two threads) can never store an older
move over a newer one. Simplification: a process that dies leaves its students' session
ids in the set until the room ends or expires, so the count can be too high until then.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from typing import Any

import redis

from h3learn.web.classroom.rooms import Clock, Created, Question, Room

PREFIX = "h3learn:room:"
ROOMS = "h3learn:rooms"

#: Seconds Redis keeps a room's keys beyond its idle limit (then it removes them itself).
GRACE_SECONDS = 60

# KEYS: room hash, rooms index. ARGV: move, trace, step, now, idle seconds, expiry seconds.
# Returns -1 if the room is gone or idle, 0 if the move is not newer than the last, else 1.
MOVE_SCRIPT = (
    """
local active = redis.call('HGET', KEYS[1], 'active')
if not active or tonumber(ARGV[4]) - tonumber(active) > tonumber(ARGV[5]) then
  return -1
end
if tonumber(ARGV[1]) <= tonumber(redis.call('HGET', KEYS[1], 'move')) then
  return 0
end
redis.call('HSET', KEYS[1], 'move', ARGV[1], 'trace', ARGV[2], 'step', ARGV[3], 'active', ARGV[4])
redis.call('EXPIRE', KEYS[1], ARGV[6])
redis.call('ZADD', KEYS[2], ARGV[4], string.sub(KEYS[1], string.len('"""
    + PREFIX
    + """') + 1))
return 1
"""
)


class RedisRoomStore:
    def __init__(self, url: str, idle_seconds: float, clock: Clock = time.time) -> None:
        self.idle_seconds = idle_seconds
        self.clock = clock
        self.redis: redis.Redis = redis.Redis.from_url(url, decode_responses=True)
        self._move = self.redis.register_script(MOVE_SCRIPT)

    @property
    def _expiry(self) -> int:
        return int(self.idle_seconds) + GRACE_SECONDS

    def _keys(self, code: str) -> tuple[str, str, str]:
        room = PREFIX + code
        return room, room + ":students", room + ":answers"

    def _refresh(self, pipe: Any, code: str, now: float) -> None:
        """Queue on ``pipe``: the room is active at ``now``, and its keys live on."""
        room, students, answers = self._keys(code)
        pipe.hset(room, "active", repr(now))
        pipe.zadd(ROOMS, {code: now})
        for key in (room, students, answers):
            pipe.expire(key, self._expiry)

    def create(self, room: Room, *, limit: int) -> Created:
        key = self._keys(room.code)[0]
        now = self.clock()
        # Rooms idle past the expiry: Redis has removed their keys, the index forgets them.
        self.redis.zremrangebyscore(ROOMS, "-inf", f"({now - self._expiry!r}")
        if self.redis.zcount(ROOMS, repr(now - self.idle_seconds), "+inf") >= limit:
            return "full"
        fields: dict[Any, str | int] = {  # redis-py types its keys as bytes, str or numbers
            "token_hash": room.token_hash,
            "trace": room.trace,
            "step": room.step,
            "move": room.move,
            "created": repr(room.created),
            "active": repr(room.active),
            "question": _question_text(room.question),
        }
        if not self.redis.hsetnx(key, "token_hash", room.token_hash):
            return "taken"
        with self.redis.pipeline() as pipe:
            pipe.hset(key, mapping=fields)
            self._refresh(pipe, room.code, room.active)
            pipe.execute()
        return "created"

    def get(self, code: str) -> Room | None:
        fields: dict[str, str] = self.redis.hgetall(self._keys(code)[0])  # type: ignore[assignment]
        if "active" not in fields or "trace" not in fields:
            return None
        active = float(fields["active"])
        if self.clock() - active > self.idle_seconds:
            return None
        return Room(
            code=code,
            token_hash=fields["token_hash"],
            trace=fields["trace"],
            step=int(fields["step"]),
            move=int(fields["move"]),
            created=float(fields["created"]),
            active=active,
            question=_question_from(fields["question"]),
        )

    def move(self, code: str, trace: str, step: int, move: int) -> bool | None:
        now = repr(self.clock())
        arguments: list[str | int | float] = [
            move,
            trace,
            step,
            now,
            self.idle_seconds,
            self._expiry,
        ]
        result = self._move(keys=[self._keys(code)[0], ROOMS], args=arguments)
        return None if result == -1 else bool(result)

    def touch(self, code: str) -> None:
        if self.get(code) is None:
            return
        with self.redis.pipeline() as pipe:
            self._refresh(pipe, code, self.clock())
            pipe.execute()

    def set_question(self, code: str, question: Question | None, *, fresh: bool) -> None:
        if self.get(code) is None:
            return
        key, _, answers = self._keys(code)
        with self.redis.pipeline() as pipe:
            if fresh:
                pipe.delete(answers)
            pipe.hset(key, "question", _question_text(question))
            self._refresh(pipe, code, self.clock())
            pipe.execute()

    def add_student(self, code: str, sid: str) -> int:
        if self.get(code) is None:
            return 0
        students = self._keys(code)[1]
        with self.redis.pipeline() as pipe:
            pipe.sadd(students, sid)
            pipe.expire(students, self._expiry)
            pipe.scard(students)
            return int(pipe.execute()[-1])

    def remove_student(self, code: str, sid: str) -> int:
        _, students, answers = self._keys(code)
        with self.redis.pipeline() as pipe:
            pipe.srem(students, sid)
            pipe.hdel(answers, sid)
            pipe.scard(students)
            return int(pipe.execute()[-1])

    def students(self, code: str) -> int:
        return int(self.redis.scard(self._keys(code)[1]))

    def answer(self, code: str, sid: str, answer: str) -> None:
        answers = self._keys(code)[2]
        with self.redis.pipeline() as pipe:
            pipe.hset(answers, sid, answer)
            pipe.expire(answers, self._expiry)
            pipe.execute()

    def answers(self, code: str) -> Counter[str]:
        values: list[str] = self.redis.hvals(self._keys(code)[2])  # type: ignore[assignment]
        return Counter(values)

    def end(self, code: str) -> None:
        with self.redis.pipeline() as pipe:
            pipe.delete(*self._keys(code))
            pipe.zrem(ROOMS, code)
            pipe.execute()

    def idle_rooms(self) -> list[str]:
        idle_since = self.clock() - self.idle_seconds
        codes: list[str] = self.redis.zrangebyscore(ROOMS, "-inf", f"({idle_since!r}")  # type: ignore[assignment]
        return codes


def _question_text(question: Question | None) -> str:
    return "" if question is None else json.dumps(question.to_json())


def _question_from(text: str) -> Question | None:
    return Question.from_json(json.loads(text)) if text else None
