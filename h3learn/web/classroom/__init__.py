"""Classroom mode: the teacher steps through a trace and every student's page follows.

The teacher presses "Present" on a step page (of a lesson, a trace or a live capture):
the server creates a room with a short join code and gives that page a secret token; the
projector shows the code, the join link and its QR code. Students open the link (or type
the code at /join) and land on the teacher's current step, on the same kind of page (a
lesson's with its notes); from then on each step the teacher shows is sent to them over
Socket.IO. A student may explore on their own and follow again; a student who reconnects
or joins late is put on the current step. Only a page holding the token drives the room.
On a lesson the teacher can ask the class a predict checkpoint (questions.py) and move
everyone to a what-if rerun of the lesson (a new trace, shown like any other).

    codes.py        join codes and the teacher's token
    rooms.py        a room's state (what it shows, its question) and the in-memory store
    redis_store.py  the same state in Redis, for several processes (--message-queue)
    protocol.py     the Socket.IO messages, checked
    questions.py    answers (chosen or typed) and their spread; lesson checkpoints asked
    service.py      what the classroom does (create, join, step, ask, reveal, end, sweep)
    sockets.py      the Socket.IO event handlers (namespace /classroom)
    views.py        the HTTP routes: POST /api/rooms, /join, the QR code

Configuration keys (``create_app({...})``):

    MESSAGE_QUEUE            redis://... to share rooms between processes (default: none,
                             rooms live in this process)
    PUBLIC_URL               the address students reach this server at, for the join
                             link and QR code (default: the address the teacher used)
    CLASSROOM_IDLE_SECONDS   a room whose teacher did nothing this long ends (default 7200)
    CLASSROOM_MAX_ROOMS      rooms open at once (default 1000)
    CLASSROOM_CLOCK          the clock rooms age by (default time.time; tests pass their own)
"""

from __future__ import annotations

import time

from flask import Flask
from flask_socketio import SocketIO  # type: ignore[import-untyped]  # no stubs published

from h3learn.curriculum.catalogue import Curriculum
from h3learn.web.classroom import sockets, views
from h3learn.web.classroom.questions import LessonCheckpoints
from h3learn.web.classroom.redis_store import RedisRoomStore
from h3learn.web.classroom.rooms import MemoryRoomStore, RoomStore
from h3learn.web.classroom.service import Classroom
from h3learn.web.library import TraceLibrary

DEFAULTS = {
    "MESSAGE_QUEUE": None,
    "PUBLIC_URL": None,
    "CLASSROOM_IDLE_SECONDS": 7200,
    "CLASSROOM_MAX_ROOMS": 1000,
    "CLASSROOM_CLOCK": time.time,
}


def init_app(app: Flask, socketio: SocketIO, library: TraceLibrary, curriculum: Curriculum) -> None:
    """The classroom's routes and its `Classroom` on ``app`` (after the config is final);
    the lessons' checkpoints come from ``curriculum``."""
    for key, value in DEFAULTS.items():
        app.config.setdefault(key, value)
    idle = float(app.config["CLASSROOM_IDLE_SECONDS"])
    clock = app.config["CLASSROOM_CLOCK"]
    queue = app.config["MESSAGE_QUEUE"]
    store: RoomStore = RedisRoomStore(queue, idle, clock) if queue else MemoryRoomStore(idle, clock)
    app.extensions["h3learn_classroom"] = Classroom(
        store,
        library,
        socketio,
        max_rooms=int(app.config["CLASSROOM_MAX_ROOMS"]),
        checkpoints=LessonCheckpoints(curriculum),
    )
    app.register_blueprint(views.bp)


def register_events(socketio: SocketIO) -> None:
    """The Socket.IO handlers, added once to the module-level `socketio`."""
    sockets.register(socketio)
