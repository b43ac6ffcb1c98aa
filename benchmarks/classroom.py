"""Classroom mode under a class: step-to-student latency next to a raw Flask-SocketIO broadcast.

Two servers run as their own processes on 127.0.0.1, both Werkzeug with Flask-SocketIO in
threading mode: `h3learn serve` (the real thing: a room created through POST /api/rooms,
the teacher's token checked, the move stored, one emit to the room's Socket.IO rooms),
and a minimal Flask-SocketIO app that only puts clients in a room and emits to it what a
driver sends (the same payload size). N students, python-socketio's asyncio clients over
WebSocket, connect to each server, so each simulated student holds one connection to
each. The teacher then steps S times, alternating with the raw driver (h3learn step 1,
raw step 1, h3learn step 2, ...), so both see the same machine load. Each latency runs
from the moment the teacher's (or driver's) emit is sent to the moment a student's
handler sees the step, all on one clock in this process; it includes this process's own
time to take in N messages, which is the same for both servers. Printed: p50, p95 and
max over all N x S deliveries for each server, and the ratio of the p95s (goal at
N=200: h3learn's p95 within 1.5x the raw broadcast's). The machine's load average is
printed too: on a shared machine the numbers move with it.

Then a question to the class (h3learn only: the raw server has none): the teacher asks
for a typed number, all N students answer at once, and the benchmark prints how long it
took until the teacher's live spread counted all N, each answer's round trip (p50/p95),
and the reveal's latency to the students (p50/p95).

With ``--message-queue redis://...`` both servers send every emit through that Redis, as
several processes sharing a class would (`h3learn serve --message-queue`), so the
figures include the trip through Redis; start a redis-server first.

Usage: python benchmarks/classroom.py --clients N [--steps 50] [--trace dynamic-table]
                                      [--message-queue redis://127.0.0.1:6379/0]
       (--raw-server --port P runs the raw broadcast server; the benchmark starts it)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

NS = "/classroom"
RAW_ROOM = "class"
CONNECT_BATCH = 25
STEP_TIMEOUT = 60.0


# -- the raw broadcast server (runs in its own process) ---------------------------------


def run_raw_server(port: int, message_queue: str | None) -> None:
    from flask import Flask, request
    from flask_socketio import SocketIO, join_room

    app = Flask(__name__)
    # Its own channel on a shared queue, so the two servers' messages never meet.
    raw = SocketIO(app, async_mode="threading", message_queue=message_queue, channel="raw")

    @raw.on("join")
    def join(message: Any = None) -> dict[str, bool]:
        join_room(RAW_ROOM)
        return {"ok": True}

    @raw.on("go")
    def go(message: dict[str, Any]) -> None:
        raw.emit("step", message, to=RAW_ROOM, skip_sid=request.sid)

    @app.get("/ready")
    def ready() -> str:
        return "ok"

    raw.run(app, host="127.0.0.1", port=port, allow_unsafe_werkzeug=True, log_output=False)


# -- servers as processes -----------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def server(command: list[str], ready_url: str) -> Iterator[None]:
    with tempfile.TemporaryFile() as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
        try:
            for _ in range(300):
                if process.poll() is not None:
                    break
                try:
                    with urllib.request.urlopen(ready_url, timeout=2):
                        break
                except OSError:
                    time.sleep(0.1)
            else:
                raise RuntimeError(f"{command[:4]} did not start")
            if process.poll() is not None:
                output.seek(0)
                raise RuntimeError(f"{command[:4]} stopped:\n{output.read().decode()}")
            yield
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)


# -- the class --------------------------------------------------------------------------------


@dataclass
class Round:
    """One step's deliveries: when it was sent, and each student's delay in ms."""

    move: int
    expected: int
    sent: float = 0.0
    delays: list[float] = field(default_factory=list)
    done: asyncio.Event = field(default_factory=asyncio.Event)

    def arrived(self, message: dict[str, Any]) -> None:
        if message.get("move") != self.move:
            return
        self.delays.append((time.perf_counter() - self.sent) * 1000)
        if len(self.delays) == self.expected:
            self.done.set()


class Class:
    """N student connections to one server, and what they received."""

    def __init__(self, name: str, url: str, namespace: str) -> None:
        self.name = name
        self.url = url
        self.namespace = namespace
        self.students: list[Any] = []
        self.current: Round | None = None
        self.delays: list[float] = []
        self.missed = 0
        self.revealed: list[float] = []  # when each student heard of a reveal

    def on_step(self, message: dict[str, Any]) -> None:
        if self.current is not None:
            self.current.arrived(message)

    async def connect(self, count: int, join: dict[str, Any] | None) -> None:
        import socketio

        async def one() -> Any:
            client = socketio.AsyncClient(reconnection=False)
            client.on("step", self.on_step, namespace=self.namespace)
            client.on("revealed", self.on_revealed, namespace=self.namespace)
            await client.connect(
                self.url, namespaces=[self.namespace], transports=["websocket"], wait_timeout=30
            )
            answer = await client.call("join", join, namespace=self.namespace, timeout=30)
            if not answer or "error" in answer:
                raise RuntimeError(f"{self.name}: join refused: {answer}")
            return client

        for start in range(0, count, CONNECT_BATCH):
            batch = min(CONNECT_BATCH, count - start)
            self.students += await asyncio.gather(*(one() for _ in range(batch)))

    async def step(self, driver: Any, event: str, message: dict[str, Any]) -> None:
        self.current = Round(message["move"], len(self.students))
        self.current.sent = time.perf_counter()
        await driver.emit(event, message, namespace=self.namespace)
        try:
            await asyncio.wait_for(self.current.done.wait(), STEP_TIMEOUT)
        except TimeoutError:
            self.missed += len(self.students) - len(self.current.delays)
        self.delays += self.current.delays
        self.current = None

    def on_revealed(self, message: dict[str, Any]) -> None:
        self.revealed.append(time.perf_counter())

    async def close(self) -> None:
        for start in range(0, len(self.students), CONNECT_BATCH):
            batch = self.students[start : start + CONNECT_BATCH]
            await asyncio.gather(*(client.disconnect() for client in batch))


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def measure(h3learn_url: str, raw_url: str, args: argparse.Namespace) -> None:
    import socketio

    request = urllib.request.Request(
        f"{h3learn_url}/api/rooms",
        data=json.dumps({"trace": args.trace, "step": 0}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        room = json.loads(response.read())
    control = {"code": room["code"], "token": room["token"]}

    teacher = socketio.AsyncClient(reconnection=False)
    await teacher.connect(h3learn_url, namespaces=[NS], transports=["websocket"])
    await teacher.call("join", control, namespace=NS, timeout=30)
    driver = socketio.AsyncClient(reconnection=False)
    await driver.connect(raw_url, namespaces=["/"], transports=["websocket"])

    h3learn = Class("h3learn room", h3learn_url, NS)
    raw = Class("raw Flask-SocketIO", raw_url, "/")
    started = time.perf_counter()
    await h3learn.connect(args.clients, {"code": room["code"]})
    await raw.connect(args.clients, {})
    connected = time.perf_counter() - started
    print(f"{2 * args.clients} connections in {connected:.1f} s")
    await asyncio.sleep(1.0)  # let the connection storm settle

    for move in range(1, args.steps + 1):
        step = move % 20
        await h3learn.step(
            teacher, "step", control | {"trace": args.trace, "step": step, "move": move}
        )
        await asyncio.sleep(0.05)
        # What h3learn's room sends each student, to the byte: where the step is shown too.
        shown = {"kind": "trace", "page": f"/trace/{args.trace}/step/{step}"}
        await raw.step(driver, "go", {"trace": args.trace, "step": step, "move": move} | shown)
        await asyncio.sleep(0.05)

    print(f"{'':22}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}{'mean ms':>9}  delivered")
    for taught in (raw, h3learn):
        values = taught.delays
        print(
            f"{taught.name:22}{percentile(values, 0.5):9.1f}{percentile(values, 0.95):9.1f}"
            f"{max(values):9.1f}{statistics.fmean(values):9.1f}"
            f"  {len(values)}/{len(values) + taught.missed}"
        )
    ratio = percentile(h3learn.delays, 0.95) / percentile(raw.delays, 0.95)
    print(f"p95 ratio h3learn / raw: {ratio:.2f} (goal at N=200: <= 1.5)")

    await question_round(teacher, h3learn, control)

    # Hundreds of clients closing at once make the Engine.IO client log each write loop it
    # stops ("packet queue is empty"): expected here, and not a result.
    logging.getLogger("engineio.client").setLevel(logging.CRITICAL)
    await h3learn.close()
    await raw.close()
    await teacher.disconnect()
    await driver.disconnect()


async def question_round(teacher: Any, taught: Class, control: dict[str, Any]) -> None:
    """A typed question: N answers at once, the teacher's spread, the reveal (docstring)."""
    counted = asyncio.Event()
    students = len(taught.students)

    def on_tally(tally: dict[str, Any]) -> None:
        if tally.get("answered") == students:
            counted.set()

    teacher.on("tally", on_tally, namespace=NS)
    question = {"id": "bench", "prompt": "How many bytes?", "kind": "number"}
    await teacher.call("ask", control | {"question": question}, namespace=NS, timeout=30)
    await asyncio.sleep(0.5)

    async def answer(client: Any, index: int) -> float:
        message = {"code": control["code"], "question": "bench", "text": str(index % 7)}
        sent = time.perf_counter()
        await client.call("answer", message, namespace=NS, timeout=STEP_TIMEOUT)
        return (time.perf_counter() - sent) * 1000

    started = time.perf_counter()
    trips = await asyncio.gather(*(answer(c, i) for i, c in enumerate(taught.students)))
    await asyncio.wait_for(counted.wait(), STEP_TIMEOUT)
    all_counted = (time.perf_counter() - started) * 1000
    sent = time.perf_counter()
    await teacher.call("reveal", control | {"question": "bench"}, namespace=NS, timeout=30)
    deadline = time.perf_counter() + STEP_TIMEOUT
    while len(taught.revealed) < students and time.perf_counter() < deadline:
        await asyncio.sleep(0.01)
    reveals = [(arrived - sent) * 1000 for arrived in taught.revealed]
    print(
        f"question: {students} typed answers at once, all counted in the teacher's spread "
        f"after {all_counted:.0f} ms; an answer's round trip p50 {percentile(trips, 0.5):.1f} "
        f"/ p95 {percentile(trips, 0.95):.1f} ms; the reveal reached {len(reveals)}/{students} "
        f"students, p50 {percentile(reveals, 0.5):.1f} / p95 {percentile(reveals, 0.95):.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--clients", type=int, default=200, help="students (N)")
    parser.add_argument("--steps", type=int, default=50, help="teacher's steps (S)")
    parser.add_argument("--trace", default="dynamic-table")
    parser.add_argument(
        "--message-queue",
        default=None,
        metavar="URL",
        help="run both servers with this Redis message queue (redis://...), as several "
        "processes would: every emit then goes through Redis",
    )
    parser.add_argument("--raw-server", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.raw_server:
        run_raw_server(args.port, args.message_queue)
        return

    queue = ["--message-queue", args.message_queue] if args.message_queue else []
    print(
        f"classroom: {args.clients} students, {args.steps} steps"
        f"{', through ' + args.message_queue if queue else ''}; "
        f"load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} cores"
    )
    h3learn_port, raw_port = free_port(), free_port()
    with tempfile.TemporaryDirectory() as data_dir:
        h3learn_command = [sys.executable, "-m", "h3learn", "serve", "--host", "127.0.0.1"]
        h3learn_command += ["--port", str(h3learn_port), "--data-dir", data_dir, *queue]
        raw_command = [sys.executable, __file__, "--raw-server", "--port", str(raw_port), *queue]
        h3learn_url = f"http://127.0.0.1:{h3learn_port}"
        raw_url = f"http://127.0.0.1:{raw_port}"
        with (
            server(h3learn_command, f"{h3learn_url}/api/traces"),
            server(raw_command, f"{raw_url}/ready"),
        ):
            asyncio.run(measure(h3learn_url, raw_url, args))
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
