"""The classroom's HTTP side: creating a room, the join page, and the QR code.

    POST /api/rooms                   create a room: {"trace", "step"} -> its code, the
                                      teacher's token (only here, only once), the join link
    GET  /api/rooms/<code>            what anyone may know about an open room
    GET  /join                        the join page: type the code (?code= submits it)
    GET  /join/<code>                 open the room's current step, following the teacher
    GET  /room/<code>/qr.svg          the join link as a QR code (SVG), for the projector

The join link a student follows is ``/join/<code>``; it leads to the page of the room's
current step with ``?room=<code>``: ``/lesson/<id>/step/<n>`` for a lesson (with its
notes), ``/trace/<id>/step/<n>`` for a trace or a capture, where static/js/classroom.js
joins the room. The QR code is drawn by segno on this server, so the page
loads it from its own origin (the Content-Security-Policy allows nothing else).
"""

from __future__ import annotations

import io

import segno
from flask import Blueprint, Response, current_app, jsonify, redirect, render_template, request
from werkzeug.wrappers import Response as BaseResponse

from h3learn.web.classroom.codes import BadCode, normalize_code
from h3learn.web.classroom.protocol import RoomError
from h3learn.web.classroom.rooms import Room
from h3learn.web.classroom.service import Classroom, page_of
from h3learn.web.request_json import json_body

bp = Blueprint("classroom", __name__)


def classroom() -> Classroom:
    found: Classroom = current_app.extensions["h3learn_classroom"]
    return found


def _error(status: int, message: str) -> tuple[Response, int]:
    return jsonify(error=message), status


def join_url(code: str) -> str:
    """The link students follow: on PUBLIC_URL if configured, else where this request came."""
    base = current_app.config.get("PUBLIC_URL") or request.host_url
    return f"{base.rstrip('/')}/join/{code}"


def step_url(room: Room) -> str:
    """The page of the room's current step (a lesson's own page for a lesson), in the room."""
    kind = classroom().kind_of(room.trace)
    return f"{page_of(kind, room.trace, room.step)}?room={room.code}"


@bp.post("/api/rooms")
def create_room() -> tuple[Response, int]:
    body = json_body()
    if not isinstance(body, dict):
        return _error(400, 'send a JSON object: {"trace": "<trace id>", "step": <n>}')
    trace, step = body.get("trace"), body.get("step", 0)
    if not isinstance(trace, str):
        return _error(400, "'trace' must be a trace id (a string)")
    if isinstance(step, bool) or not isinstance(step, int):
        return _error(400, "'step' must be a whole number")
    try:
        room, token = classroom().create(trace, step)
    except RoomError as error:
        return _error(error.status, str(error))
    answer = classroom().public_state(room, 0)
    answer.update(
        token=token,
        join_url=join_url(room.code),
        qr_url=f"/room/{room.code}/qr.svg",
        teacher_url=step_url(room),
    )
    return jsonify(answer), 201


def _room_or_error(text: str) -> Room:
    """The open room a code names; `RoomError` (with the reason) for any other text."""
    try:
        code = normalize_code(text)
    except BadCode as error:
        raise RoomError(str(error)) from None
    return classroom().room(code)


@bp.get("/api/rooms/<text>")
def room_state(text: str) -> tuple[Response, int]:
    try:
        room = _room_or_error(text)
    except RoomError as error:
        return _error(error.status, str(error))
    return jsonify(classroom().public_state(room)), 200


@bp.get("/join")
def join_page() -> BaseResponse | tuple[str, int]:
    text = request.args.get("code")
    if text is None:
        return render_template("classroom/join.html", error=None, typed=""), 200
    try:
        room = _room_or_error(text)
    except RoomError as error:
        return _join_page_refusing(text, error)
    return redirect(f"/join/{room.code}")


@bp.get("/join/<text>")
def join_room(text: str) -> BaseResponse | tuple[str, int]:
    try:
        room = _room_or_error(text)
    except RoomError as error:
        return _join_page_refusing(text, error)
    return redirect(step_url(room))


def _join_page_refusing(text: str, error: RoomError) -> tuple[str, int]:
    """The join page again, with what was typed and why it was refused."""
    page = render_template("classroom/join.html", error=str(error), typed=text[:32])
    return page, error.status


@bp.get("/room/<text>/qr.svg")
def qr_code(text: str) -> Response:
    try:
        room = _room_or_error(text)
    except RoomError as error:
        return Response(str(error), status=404, mimetype="text/plain")
    svg = io.BytesIO()
    # Error correction M (15%): a projected code survives a glare spot. The SVG has a
    # viewBox and no size, so the page scales it; its quiet zone is the standard 4 modules.
    qr = segno.make(join_url(room.code), error="m", boost_error=False)
    qr.save(svg, kind="svg", border=4, xmldecl=False, omitsize=True, dark="#000", light="#fff")
    response = Response(svg.getvalue(), mimetype="image/svg+xml")
    response.headers["Cache-Control"] = "no-store"
    return response
