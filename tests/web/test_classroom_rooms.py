"""The room stores keep the same promises: `MemoryRoomStore` and `RedisRoomStore` (against a
real redis-server on 127.0.0.1, started and stopped here) run the same tests, with a clock
the test moves by hand.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest
from servers import redis_server

from h3learn.web.classroom.codes import new_token, token_hash, token_matches
from h3learn.web.classroom.redis_store import RedisRoomStore
from h3learn.web.classroom.rooms import MemoryRoomStore, Question, Room, RoomStore

IDLE = 600.0


class Clock:
    def __init__(self) -> None:
        self.now = 2_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    with redis_server() as url:
        yield url


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture(params=["memory", "redis"])
def store(request: pytest.FixtureRequest, clock: Clock) -> Iterator[RoomStore]:
    if request.param == "memory":
        yield MemoryRoomStore(IDLE, clock)
        return
    redis_store = RedisRoomStore(request.getfixturevalue("redis_url"), IDLE, clock)
    redis_store.redis.flushdb()
    yield redis_store
    redis_store.redis.close()


def room(code: str, clock: Clock, trace: str = "first-get") -> Room:
    return Room(code, token_hash("secret"), trace, 0, -1, clock.now, clock.now)


def test_a_created_room_reads_back_as_it_was_stored(store: RoomStore, clock: Clock) -> None:
    assert store.create(room("AAAAAA", clock), limit=10) == "created"
    assert store.get("AAAAAA") == room("AAAAAA", clock)
    assert store.get("BBBBBB") is None


def test_a_code_in_use_cannot_be_created_again(store: RoomStore, clock: Clock) -> None:
    assert store.create(room("AAAAAA", clock), limit=10) == "created"
    assert store.create(room("AAAAAA", clock, "dynamic-table"), limit=10) == "taken"
    stored = store.get("AAAAAA")
    assert stored is not None and stored.trace == "first-get"


def test_no_more_rooms_than_the_limit_are_open(store: RoomStore, clock: Clock) -> None:
    assert store.create(room("AAAAAA", clock), limit=2) == "created"
    assert store.create(room("BBBBBB", clock), limit=2) == "created"
    assert store.create(room("CCCCCC", clock), limit=2) == "full"
    clock.now += IDLE + 1  # both idle: they no longer count
    assert store.create(room("CCCCCC", clock), limit=2) == "created"
    assert store.create(room("AAAAAA", clock), limit=5) == "taken"  # idle, not yet ended


def test_only_a_newer_move_changes_the_position(store: RoomStore, clock: Clock) -> None:
    store.create(room("AAAAAA", clock), limit=10)
    assert store.move("AAAAAA", "dynamic-table", 7, 5) is True
    assert store.move("AAAAAA", "first-get", 3, 4) is False
    assert store.move("AAAAAA", "first-get", 3, 5) is False
    stored = store.get("AAAAAA")
    assert stored is not None and (stored.trace, stored.step, stored.move) == (
        "dynamic-table",
        7,
        5,
    )
    assert store.move("ZZZZZZ", "first-get", 1, 9) is None


def test_a_room_whose_teacher_is_idle_too_long_is_gone(store: RoomStore, clock: Clock) -> None:
    store.create(room("AAAAAA", clock), limit=10)
    store.create(room("BBBBBB", clock), limit=10)
    clock.now += IDLE - 10
    store.move("BBBBBB", "first-get", 1, 1)
    store.touch("AAAAAA")
    clock.now += IDLE - 10
    assert store.get("AAAAAA") is not None  # touched: still open
    clock.now += 20
    assert store.get("AAAAAA") is None and store.get("BBBBBB") is None
    assert sorted(store.idle_rooms()) == ["AAAAAA", "BBBBBB"]
    assert store.move("AAAAAA", "first-get", 2, 2) is None
    store.end("AAAAAA")
    assert store.idle_rooms() == ["BBBBBB"]


def test_students_are_counted_once_each(store: RoomStore, clock: Clock) -> None:
    store.create(room("AAAAAA", clock), limit=10)
    assert store.add_student("AAAAAA", "sid-1") == 1
    assert store.add_student("AAAAAA", "sid-2") == 2
    assert store.add_student("AAAAAA", "sid-2") == 2
    assert store.remove_student("AAAAAA", "sid-1") == 1
    assert store.students("AAAAAA") == 1
    assert store.add_student("NOROOM", "sid-3") == 0


def test_answers_are_counted_and_forgotten_when_a_question_is_asked(
    store: RoomStore, clock: Clock
) -> None:
    store.create(room("AAAAAA", clock), limit=10)
    first = Question("q1", "Which?", ("a", "b", "c"))
    store.set_question("AAAAAA", first, fresh=True)
    for sid, answer in (("s1", "0"), ("s2", "2"), ("s3", "2"), ("s1", "1")):
        store.add_student("AAAAAA", sid)
        store.answer("AAAAAA", sid, answer)
    assert store.answers("AAAAAA") == {"1": 1, "2": 2}
    store.set_question("AAAAAA", replace(first, revealed=True, correct=2), fresh=False)
    assert store.answers("AAAAAA") == {"1": 1, "2": 2}  # revealing keeps the answers
    stored = store.get("AAAAAA")
    assert stored is not None and stored.question == replace(first, revealed=True, correct=2)
    store.remove_student("AAAAAA", "s2")
    assert store.answers("AAAAAA") == {"1": 1, "2": 1}
    store.set_question("AAAAAA", first, fresh=True)  # asked again: the answers start again
    assert store.answers("AAAAAA") == {}


def test_a_checkpoint_question_and_typed_answers_read_back_whole(
    store: RoomStore, clock: Clock
) -> None:
    store.create(room("AAAAAA", clock), limit=10)
    asked = Question(
        "frame-length",
        "How many bytes?",
        kind="number",
        prompt_html="<p>How</p>",
        lesson="02-a-first-get",
        step=12,
    )
    revealed = replace(
        asked, revealed=True, answer="57", explain_html="<p>1 + 1 + 55</p>", right=("57",)
    )
    for question in (asked, revealed):
        store.set_question("AAAAAA", question, fresh=question is asked)
        stored = store.get("AAAAAA")
        assert stored is not None and stored.question == question
    store.answer("AAAAAA", "s1", "the control stream")
    assert store.answers("AAAAAA") == {"the control stream": 1}


def test_ending_a_room_forgets_everything_in_it(store: RoomStore, clock: Clock) -> None:
    store.create(room("AAAAAA", clock), limit=10)
    store.add_student("AAAAAA", "s1")
    store.end("AAAAAA")
    assert store.get("AAAAAA") is None and store.students("AAAAAA") == 0
    assert store.create(room("AAAAAA", clock), limit=1) == "created"


def test_redis_keeps_the_token_hash_never_the_token(redis_url: str, clock: Clock) -> None:
    token = new_token()
    store = RedisRoomStore(redis_url, IDLE, clock)
    store.redis.flushdb()
    store.create(Room("AAAAAA", token_hash(token), "first-get", 0, -1, 0.0, clock.now), limit=5)
    dump = str({key: store.redis.dump(key) for key in store.redis.keys("*")})
    assert token not in dump
    stored = store.get("AAAAAA")
    assert stored is not None and token_matches(token, stored.token_hash)
    assert 0 < store.redis.ttl("h3learn:room:AAAAAA") <= IDLE + 60
    store.redis.close()
