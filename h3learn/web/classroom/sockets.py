"""The classroom's Socket.IO events, on the ``/classroom`` namespace (docs/web-api.md).

Each handler checks its payload (protocol.py), asks the `Classroom` (service.py), and
returns its answer, which Socket.IO hands back to the sender's callback: the room's state
for ``join``, ``{"ok": true}`` for the others, or ``{"error": "...", "status": n}`` saying
what was refused and why (``status`` as in `RoomError`). A refusal, a malformed message
or an unreachable room store is an answer to that one client; it never ends the
connection or the server.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import redis
from flask import current_app, request
from flask_socketio import SocketIO  # type: ignore[import-untyped]  # no stubs published

from h3learn.web.classroom import protocol, views
from h3learn.web.classroom.protocol import RoomError
from h3learn.web.classroom.service import NAMESPACE, Classroom

Handler = Callable[[Classroom, str, Any], dict[str, Any]]


def classroom() -> Classroom:
    found: Classroom = current_app.extensions["h3learn_classroom"]
    return found


def _answering(event: str, handler: Handler) -> Callable[..., dict[str, Any]]:
    """``handler`` as a Socket.IO handler whose refusals start with the event's name."""

    def handle(payload: Any = None, *extra: Any) -> dict[str, Any]:
        sid: str = request.sid  # type: ignore[attr-defined]  # set by Flask-SocketIO
        try:
            return handler(classroom(), sid, payload)
        except RoomError as error:
            message, status = str(error), error.status
        except redis.RedisError as error:
            message, status = f"the room store (Redis) cannot be reached: {error}", 503
        prefix = f"{event}: "
        message = message if message.startswith(prefix) else prefix + message
        return {"error": message, "status": status}

    return handle


def _joined(state: dict[str, Any]) -> dict[str, Any]:
    """The join answer, with the link students follow (as the teacher's page shows it)."""
    return state | {"join_url": views.join_url(state["code"])}


#: event name -> what it does (sid is the sender's Socket.IO session id).
HANDLERS: dict[str, Handler] = {
    "join": lambda room, sid, payload: _joined(room.join(sid, protocol.parse_join(payload))),
    "step": lambda room, sid, payload: room.step(sid, protocol.parse_step(payload)),
    "ask": lambda room, sid, payload: room.ask(protocol.parse_ask(payload)),
    "reveal": lambda room, sid, payload: room.reveal(protocol.parse_reveal(payload)),
    "answer": lambda room, sid, payload: room.answer(sid, protocol.parse_answer(payload)),
    "end": lambda room, sid, payload: room.end(protocol.parse_end(payload)),
}


def _disconnected(*reason: Any) -> None:
    try:
        classroom().leave(request.sid)  # type: ignore[attr-defined]  # set by Flask-SocketIO
    except redis.RedisError:
        current_app.logger.exception("a student left, but the room store cannot be reached")


def register(socketio: SocketIO) -> None:
    """Add the classroom's event handlers to ``socketio`` (once, at import of the web UI)."""
    for event, handler in HANDLERS.items():
        socketio.on_event(event, _answering(event, handler), namespace=NAMESPACE)
    socketio.on_event("disconnect", _disconnected, namespace=NAMESPACE)
