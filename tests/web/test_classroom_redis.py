"""Several `h3learn serve` processes share a class through Redis (``--message-queue``).

A real redis-server and two `h3learn serve` processes (A and B) run on 127.0.0.1, started
and stopped by this test. The teacher creates the room and drives it on B; a student is
connected to A. The student lands on the teacher's step, follows each step, sees the
question and its reveal; the teacher sees the student counted and their answer; a student
cannot drive from A; the end reaches A. The clients are python-socketio's asyncio client
over WebSocket.
"""

from __future__ import annotations

import asyncio
import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from servers import h3learn_serve, redis_server

socketio = pytest.importorskip("socketio")

NS = "/classroom"
WAIT = 15.0


def post_json(url: str, body: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        answer: dict[str, Any] = json.loads(response.read())
        return answer


def get_json(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url, timeout=10) as response:
        answer: dict[str, Any] = json.loads(response.read())
        return answer


class Page:
    """A page's Socket.IO connection, keeping what each event brought in a queue."""

    def __init__(self) -> None:
        self.client = socketio.AsyncClient(reconnection=False)
        self.inbox: dict[str, asyncio.Queue[Any]] = {}
        for event in ("step", "students", "question", "tally", "revealed", "ended"):
            queue: asyncio.Queue[Any] = asyncio.Queue()
            self.inbox[event] = queue
            self.client.on(event, queue.put_nowait, namespace=NS)

    async def connect(self, url: str) -> None:
        await self.client.connect(url, namespaces=[NS], transports=["websocket"], wait_timeout=10)

    async def ask(self, event: str, payload: Any) -> Any:
        return await self.client.call(event, payload, namespace=NS, timeout=WAIT)

    async def next(self, event: str) -> Any:
        return await asyncio.wait_for(self.inbox[event].get(), WAIT)


async def a_class_across_two_processes(a: str, b: str) -> None:
    room = post_json(f"{b}/api/rooms", {"trace": "dynamic-table", "step": 4})
    code, token = room["code"], room["token"]
    control = {"code": code, "token": token}
    teacher, student = Page(), Page()
    await teacher.connect(b)
    await student.connect(a)
    try:
        assert (await teacher.ask("join", control))["role"] == "teacher"
        joined = await student.ask("join", {"code": code})
        assert (joined["role"], joined["trace"], joined["step"]) == ("student", "dynamic-table", 4)
        assert await teacher.next("students") == {"count": 1}

        for move, step in enumerate((5, 6, 9), start=1):
            step_message = control | {"trace": "dynamic-table", "step": step, "move": move}
            assert (await teacher.ask("step", step_message))["ok"] is True
            followed = await student.next("step")
            assert (followed["trace"], followed["step"]) == ("dynamic-table", step)

        # Process A knows where the teacher on B is (the state is in Redis).
        seen_from_a = await asyncio.to_thread(get_json, f"{a}/api/rooms/{code}")
        assert (seen_from_a["step"], seen_from_a["students"]) == (9, 1)

        forged = {"code": code, "token": "guess", "trace": "first-get", "step": 0, "move": 99}
        assert "only the teacher controls room" in (await student.ask("step", forged))["error"]

        question = {"id": "q1", "prompt": "Which?", "options": ["a", "b"]}
        assert (await teacher.ask("ask", control | {"question": question}))["ok"] is True
        assert (await student.next("question"))["id"] == "q1"
        answer = {"code": code, "question": "q1", "option": 1}
        assert await student.ask("answer", answer) == {"ok": True, "counted_as": "1"}
        assert (await teacher.next("tally"))["counts"] == [0, 1]
        assert await teacher.ask("reveal", control | {"question": "q1"}) == {"ok": True}
        assert (await student.next("revealed"))["counts"] == [0, 1]

        # The class moves to lesson 2 and is asked a checkpoint; a typed answer on A is
        # judged by B at the reveal (the whole question travels through Redis).
        lesson = control | {"trace": "02-a-first-get", "step": 20, "move": 4}
        assert (await teacher.ask("step", lesson))["kind"] == "lesson"
        assert (await student.next("step"))["page"] == "/lesson/02-a-first-get/step/20"
        assert (await teacher.ask("ask", control | {"checkpoint": "prefix"}))["ok"] is True
        assert (await student.next("question"))["kind"] == "number"
        typed = {"code": code, "question": "prefix", "text": "0x0"}
        assert (await student.ask("answer", typed))["counted_as"] == "0"
        assert (await teacher.next("tally"))["top"] == [["0", 1]]
        assert await teacher.ask("reveal", control | {"question": "prefix"}) == {"ok": True}
        revealed = (await student.next("revealed"))["question"]
        assert (revealed["answer"], revealed["right"]) == ("0", ["0"])

        assert await teacher.ask("end", control) == {"ok": True}
        assert (await student.next("ended"))["reason"] == "the teacher ended the class"
        with pytest.raises(urllib.error.HTTPError) as gone:
            await asyncio.to_thread(get_json, f"{a}/api/rooms/{code}")
        assert gone.value.code == 404
    finally:
        await teacher.client.disconnect()
        await student.client.disconnect()


def test_a_student_on_one_process_follows_a_teacher_on_another(tmp_path: Path) -> None:
    with redis_server() as url:
        queue = ("--message-queue", url)
        with h3learn_serve(tmp_path, *queue) as a, h3learn_serve(tmp_path, *queue) as b:
            asyncio.run(a_class_across_two_processes(a, b))


def test_serve_refuses_a_message_queue_it_cannot_reach(tmp_path: Path) -> None:
    from h3learn.cli import main

    assert (
        main(["serve", "--data-dir", str(tmp_path), "--message-queue", "redis://127.0.0.1:1/0"])
        == 1
    )
