"""Live capture over Socket.IO: the namespace ``/live`` and its rooms (docs/web-api.md).

A page only gets what it watches:

    room "captures"          the Live page: every change to the list of captures
    room "capture:<id>"      a step page showing capture <id>: its new steps

Client -> server (each answered through the Socket.IO acknowledgement):

    watch_list  {}                   join "captures"; answer {"captures": [row, ...],
                                     "refused": n}
    watch       {"capture": id}      join "capture:<id>"; answer {"capture", "count",
                                     "state"} or {"error"}
    unwatch     {"capture": id}      leave it

Server -> client, at most once per batch interval (100 ms) per room (h3learn/web/captures.py):

    captures    {"captures": [row, ...], "removed": [id, ...], "refused": n}
                                                                    to "captures"
    events      {"capture", "from", "count", "state", "rows": [summary, ...]}
                                                                    to "capture:<id>"
"""

from __future__ import annotations

from typing import Any

from flask import current_app, request
from flask_socketio import SocketIO, join_room, leave_room  # type: ignore[import-untyped]

from h3learn.trace.captures import LIVE, is_capture_id
from h3learn.web.captures import LiveService
from h3learn.web.classroom.protocol import describe

NAMESPACE = "/live"


def service() -> LiveService:
    live: LiveService = current_app.extensions["h3learn_live"]
    return live


def register(socketio: SocketIO) -> None:
    """Add the handlers of the ``/live`` namespace to the app's SocketIO object."""

    def start_pump(live: LiveService) -> None:
        server = socketio.server

        def emit(event: str, payload: dict[str, Any], room: str) -> None:
            server.emit(event, payload, to=room, namespace=NAMESPACE)

        live.start_pump(emit)

    def watch_list(_data: Any = None, *_extra: Any) -> dict[str, Any]:
        live = service()
        start_pump(live)
        join_room("captures")
        return {"captures": live.rows(), "refused": live.hub.refused}

    # Every handler takes what a client may send: no payload, or more than one.
    def watch(data: Any = None, *_extra: Any) -> dict[str, Any]:
        if not isinstance(data, dict):
            return {"error": f"watch: the message must be a JSON object, not {describe(data)}"}
        capture_id = data.get("capture")
        if not isinstance(capture_id, str) or not is_capture_id(capture_id):
            return {"error": f"watch: 'capture' is not a capture id: {describe(capture_id)}"}
        live = service()
        entry = live.entries(capture_id)
        if entry is None:
            return {"error": f"no capture with id {capture_id!r}"}
        start_pump(live)
        join_room(f"capture:{capture_id}")
        with live.watch_lock:
            live.watchers.setdefault(capture_id, set()).add(request.sid)  # type: ignore[attr-defined]
        state = LIVE if live.hub.live(capture_id) is not None else "closed"
        return {"capture": capture_id, "count": len(entry.events), "state": state}

    def unwatch(data: Any = None, *_extra: Any) -> None:
        capture_id = data.get("capture") if isinstance(data, dict) else None
        if isinstance(capture_id, str):
            leave_room(f"capture:{capture_id}")
            _drop_watcher(service(), request.sid, capture_id)  # type: ignore[attr-defined]

    def disconnect(*_reason: Any) -> None:
        _drop_watcher(service(), request.sid)  # type: ignore[attr-defined]

    socketio.on_event("watch_list", watch_list, namespace=NAMESPACE)
    socketio.on_event("watch", watch, namespace=NAMESPACE)
    socketio.on_event("unwatch", unwatch, namespace=NAMESPACE)
    socketio.on_event("disconnect", disconnect, namespace=NAMESPACE)


def _drop_watcher(live: LiveService, sid: str, capture_id: str | None = None) -> None:
    with live.watch_lock:
        keys = [capture_id] if capture_id is not None else list(live.watchers)
        for key in keys:
            sids = live.watchers.get(key)
            if sids is not None:
                sids.discard(sid)
                if not sids:
                    del live.watchers[key]
