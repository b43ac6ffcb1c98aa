"""RFC 9114 §5.2, §5.3 and §4.6: how the events change what an endpoint knows of the connection.

Four control frames say something about the connection as a whole rather than about the
stream they travel on, and the replay keeps the latest of each in `ConnectionState`,
``sent`` for a ``frame_created`` and ``received`` for a ``frame_parsed``:

    GOAWAY        id        RFC 9114 §5.2, §7.2.6   the latest identifier (it may not increase)
    MAX_PUSH_ID   push_id   RFC 9114 §7.2.7         the latest limit (it may not decrease)
    PUSH_PROMISE  push_id   RFC 9114 §7.2.5         a push ID promised (on a request stream)
    CANCEL_PUSH   push_id   RFC 9114 §7.2.3         a push ID cancelled

A frame is shown as it was sent or read, even one that breaks a rule: the receiver's
connection error (the next steps, in ``errors`` and ``closed``) says that it was refused.
``connection_closed`` (a clean close, H3_NO_ERROR or an idle timeout: RFC 9114 §5.3,
§5.1) and ``connection_error`` (RFC 9114 §8) end the connection: the first of them is
kept as ``closed``, since nothing is read once a connection is closed.

A trace imported from qlog has neither event; what it may have is a QUIC packet carrying
a CONNECTION_CLOSE frame (RFC 9000 §19.19), with its code if the file gave it (`packet`).
That close is kept until an HTTP/3 event, if one follows, says how the connection ended.
"""

from __future__ import annotations

from typing import Any

from h3learn.events import Event
from h3learn.h3.errors import ErrorCode, code_name, interpret_received_code, transport_code_name
from h3learn.trace.replay_state import EndpointState, PushIdHistory, is_int

#: Which record of `ConnectionState` a frame type updates, and the field holding its value.
LATEST_VALUE_FRAMES = {"goaway": ("goaway", "id"), "max_push_id": ("max_push_id", "push_id")}
PUSH_ID_LIST_FRAMES = {
    "push_promise": "pushes_promised",
    "cancel_push": "pushes_cancelled",
}

#: What a close keeps of its event, those it has (docs/events.md, ``connection_closed``).
CLOSE_KEYS = ("code", "code_name", "layer", "rule", "direction")


def frame(ep: EndpointState, event: Event) -> None:
    """A GOAWAY, MAX_PUSH_ID, PUSH_PROMISE or CANCEL_PUSH this endpoint sent or read."""
    carried = event.data.get("frame")
    if not isinstance(carried, dict):
        return
    frame_type = carried.get("frame_type")
    direction = "sent" if event.name == "frame_created" else "received"
    state = ep.connection
    if frame_type in LATEST_VALUE_FRAMES:
        record, key = LATEST_VALUE_FRAMES[frame_type]
        value = carried.get(key)
        if is_int(value):
            getattr(state, record)[direction] = value
    elif frame_type in PUSH_ID_LIST_FRAMES:
        push_id = carried.get("push_id")
        push_ids: dict[str, PushIdHistory | None] = getattr(state, PUSH_ID_LIST_FRAMES[frame_type])
        if is_int(push_id):
            push_ids[direction] = PushIdHistory.add(push_ids[direction], push_id)


def closed(ep: EndpointState, event: Event) -> None:
    """RFC 9114 §5.3 and §8: the connection ended, cleanly or with an error."""
    earlier = ep.connection.closed
    if earlier is not None and earlier.get("seen_in") != "packet":
        return  # the first close is the one that took effect
    kept: dict[str, Any] = {"seq": event.seq, "clean": event.name == "connection_closed"}
    for key in CLOSE_KEYS:
        if key in event.data:
            value = event.data[key]
            kept[key] = int(value) if is_int(value) else value
    ep.connection.closed = kept


def packet(ep: EndpointState, event: Event) -> None:
    """RFC 9000 §19.19: a packet carrying CONNECTION_CLOSE, in a trace that may say no more.

    An imported qlog gives the close's error space and code when the file has them: an
    application close (type 0x1d) carries an HTTP/3 code, clean for H3_NO_ERROR or a code
    HTTP/3 does not define (RFC 9114 §8); a transport close (0x1c) a QUIC code, clean for
    NO_ERROR (RFC 9000 §20.1). Without them, ``clean`` stays None: not known.
    """
    frames = event.data.get("frames")
    if ep.connection.closed is not None or not isinstance(frames, list):
        return
    if "connection_close" not in frames:
        return
    closed: dict[str, Any] = {
        "seq": event.seq,
        "clean": None,
        "layer": "quic",
        "rule": "a CONNECTION_CLOSE frame in a QUIC packet (RFC 9000 §19.19); this trace"
        " does not record its code",
        "direction": "sent" if event.name == "packet_sent" else "received",
        "seen_in": "packet",
    }
    close = event.data.get("close")
    close = close if isinstance(close, dict) else {}
    code, space = close.get("error_code"), close.get("error_space")
    if is_int(code) and space == "application":
        closed |= {"code": code, "code_name": code_name(code), "layer": "http3"}
        closed["clean"] = interpret_received_code(code) is ErrorCode.H3_NO_ERROR
    elif is_int(code) and space == "transport":
        closed |= {"code": code, "code_name": transport_code_name(code), "clean": code == 0}
    if closed["clean"] is not None:
        reason = close.get("reason")
        closed["rule"] = reason if isinstance(reason, str) and reason else "no reason given"
    ep.connection.closed = closed
