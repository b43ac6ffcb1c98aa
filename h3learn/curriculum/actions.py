"""A lesson's actions as data: the ``[[action]]`` tables, the script, checked key by key.

The actions are carried out in order, with the settings of the ``[scenario]`` table
(scenario.py), and recorded into the lesson's trace (runner.py, handlers.py). Every action
has a ``do`` saying what it is; `ACTIONS` lists, for each, the keys it takes with their
types and defaults, and a sentence for docs/lessons.md. The action vocabulary follows the
sans-IO API of `h3learn.h3.connection.H3Connection` and the controls of
`h3learn.transport.memory.MemoryPair`:

    request       client.send_request (plus DATA and trailers when given)   RFC 9114 §4.1
    respond       server: interim responses, send_headers, send_data, trailers
    interim       server: one informational (1xx) response, send_headers     RFC 9114 §4.1
    data          send_data on a request or push stream
    trailers      send_headers after the content, ending the stream          RFC 9114 §4.1
    end           end_stream: a stream's FIN with no more frames
    max_push_id   client.send_max_push_id                                   RFC 9114 §7.2.7
    push          server.send_push_promise on a request stream              RFC 9114 §4.6
    cancel_push   cancel_push, either side                                  RFC 9114 §7.2.3
    reset         reset_stream: cancel a request or a push                  RFC 9114 §4.1.1
    goaway        send_goaway, either side                                  RFC 9114 §5.2
    close         close the connection with a code                          RFC 9114 §5.3
    hold          MemoryPair.hold: keep back one stream's bytes
    release       MemoryPair.release: deliver them now (after what overtook them)
    wait          move the virtual clock on
    extension     send_extension_frame / open_extension_stream: GREASE      RFC 9114 §9
    disconnect    QuicMemoryPair.disconnect: the network fails, datagrams are lost  RFC 9114 §5.4
    violate       break a rule on purpose (violations.py)                   RFC 9114 §8
    new_connection  start again on a fresh connection (a lesson in parts)

After each action the transport delivers everything in flight (unless ``deliver = false``),
so the next action sees the peer's reaction.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from h3learn.curriculum.scenario import SIDES, read_side, read_transport
from h3learn.curriculum.source import Path_, Table

#: Kinds of value an action key takes (checked by `read_action`):
#:   text, integer, flag: a TOML string, integer, boolean
#:   side: "client" or "server"
#:   headers: a list of [name, value] pairs of strings, in order
#:   body: a string, or a list of DATA frames (strings, or { repeat = "text", length = N })
#:   interim: a list of tables {status = 103, headers = [...]}
#:   unit: a table (a frame or instruction description, see violations.py)
#:   transport: "memory" or "quic"
#:   settings: a table of side settings, the keys of [scenario.client] (SETTING_KEYS)
KINDS = (
    "text",
    "integer",
    "flag",
    "side",
    "headers",
    "body",
    "interim",
    "unit",
    "transport",
    "settings",
)


@dataclass(frozen=True, slots=True)
class Key:
    kind: str
    default: Any = None
    required: bool = False
    doc: str = ""


@dataclass(frozen=True, slots=True)
class ActionSpec:
    doc: str
    keys: dict[str, Key]


#: Keys every action takes.
COMMON_KEYS: dict[str, Key] = {
    "do": Key("text", required=True, doc="which action (the names below)"),
    "id": Key("text", doc="a name for the action, for selectors' `during`"),
    "deliver": Key(
        "flag",
        True,
        doc="let the transport deliver everything in flight afterwards (false: keep it queued"
        " and send it together with the next action's bytes)",
    ),
}

_REQUEST_FIELDS = {
    "method": Key("text", "GET", doc=":method"),
    "scheme": Key("text", "https", doc=":scheme"),
    "authority": Key("text", "www.example.org", doc=":authority"),
    "path": Key("text", "/", doc=":path"),
    "headers": Key("headers", [], doc="more fields after the pseudo-header fields"),
}
#: The keys a request's ``fields`` replaces (a response's replaces "status" and "headers").
REQUEST_FIELD_KEYS = ("method", "scheme", "authority", "path", "headers")
RESPONSE_FIELD_KEYS = ("status", "headers")

ACTIONS: dict[str, ActionSpec] = {
    "request": ActionSpec(
        "The client opens the next request stream and sends a request (RFC 9114 §4.1).",
        {
            "label": Key("text", required=True, doc="a name for this request's stream"),
            **_REQUEST_FIELDS,
            "fields": Key(
                "headers",
                doc="the whole header section exactly as written, pseudo-header fields"
                " included, instead of method, scheme, authority, path and headers: a CONNECT"
                " request (RFC 9114 §4.4), or with `unchecked` a missing or misplaced"
                " pseudo-header field",
            ),
            "body": Key("body", doc="content: DATA frames after the HEADERS"),
            "trailers": Key("headers", doc="a trailer section after the content"),
            "end": Key("flag", True, doc="end the stream after what is sent (false: keep it open)"),
            "unchecked": Key(
                "flag",
                False,
                doc="send the fields exactly as written, even when that makes the request"
                " malformed (RFC 9114 §4.1.2), and content its content-length does not"
                " match: teaching errors",
            ),
        },
    ),
    "respond": ActionSpec(
        "The server answers a request, or fulfils a promised push on its push stream.",
        {
            "to": Key("text", required=True, doc="the request's (or the push's) label"),
            "interim": Key(
                "interim", [], doc="informational (1xx) responses first (RFC 9114 §4.1)"
            ),
            "status": Key("integer", 200, doc=":status of the final response"),
            "headers": Key("headers", [], doc="more fields after :status"),
            "fields": Key(
                "headers",
                doc="the final response's whole header section exactly as written, instead of"
                " status and headers (with `unchecked`: no :status, say)",
            ),
            "body": Key("body", doc="content: DATA frames"),
            "trailers": Key("headers", doc="a trailer section after the content"),
            "end": Key("flag", True, doc="end the stream after what is sent"),
            "unchecked": Key("flag", False, doc="send the fields exactly as written"),
        },
    ),
    "interim": ActionSpec(
        "The server sends one informational (1xx) response on a request or push stream; the"
        " final response comes later with `respond` (RFC 9114 §4.1, RFC 9110 §15.2).",
        {
            "to": Key("text", required=True, doc="the request's (or the push's) label"),
            "status": Key("integer", required=True, doc=":status, 100 to 199"),
            "headers": Key("headers", [], doc="more fields after :status"),
            "unchecked": Key("flag", False, doc="send the fields exactly as written (101)"),
        },
    ),
    "data": ActionSpec(
        "One side sends content on an open request or push stream (RFC 9114 §7.2.1).",
        {
            "from": Key("side", required=True, doc="who sends"),
            "on": Key("text", required=True, doc="the request's or push's label"),
            "body": Key("body", required=True, doc="the content, one DATA frame per string"),
            "end": Key("flag", False, doc="end the stream after it"),
        },
    ),
    "trailers": ActionSpec(
        "One side sends a trailer section and ends the stream (RFC 9114 §4.1).",
        {
            "from": Key("side", required=True, doc="who sends"),
            "on": Key("text", required=True, doc="the request's or push's label"),
            "headers": Key("headers", required=True, doc="the trailer fields"),
        },
    ),
    "end": ActionSpec(
        "One side ends its half of a request or push stream with no more frames.",
        {
            "from": Key("side", required=True, doc="who ends it"),
            "on": Key("text", required=True, doc="the request's or push's label"),
        },
    ),
    "max_push_id": ActionSpec(
        "The client allows server push up to a push ID: MAX_PUSH_ID (RFC 9114 §7.2.7).",
        {"push_id": Key("integer", required=True, doc="the largest push ID allowed")},
    ),
    "push": ActionSpec(
        "The server promises a push on a request stream: PUSH_PROMISE (RFC 9114 §4.6); a"
        " later `respond` to the push's label opens its push stream and sends the response.",
        {
            "on": Key("text", required=True, doc="the label of the request it belongs to"),
            "label": Key("text", required=True, doc="a name for this push"),
            **_REQUEST_FIELDS,
        },
    ),
    "cancel_push": ActionSpec(
        "Either side cancels a push: CANCEL_PUSH on its control stream (RFC 9114 §7.2.3).",
        {
            "from": Key("side", required=True, doc="who cancels"),
            "push": Key("text", required=True, doc="the push's label"),
        },
    ),
    "reset": ActionSpec(
        "One side cancels a request or push stream: RESET_STREAM and STOP_SENDING with a code"
        " (RFC 9114 §4.1.1).",
        {
            "from": Key("side", required=True, doc="who cancels"),
            "on": Key("text", required=True, doc="the request's or push's label"),
            "code": Key("text", "H3_REQUEST_CANCELLED", doc="an error code name (RFC 9114 §8.1)"),
        },
    ),
    "goaway": ActionSpec(
        "One side starts a graceful shutdown: GOAWAY (RFC 9114 §5.2).",
        {
            "from": Key("side", required=True, doc="who sends it"),
            "identifier": Key(
                "integer",
                doc="a stream ID (server) or push ID (client); absent: the next one unprocessed",
            ),
        },
    ),
    "close": ActionSpec(
        "One side closes the connection (RFC 9114 §5.3).",
        {
            "from": Key("side", required=True, doc="who closes"),
            "code": Key("text", "H3_NO_ERROR", doc="an error code name (RFC 9114 §8.1)"),
            "reason": Key("text", "", doc="the reason phrase"),
        },
    ),
    "hold": ActionSpec(
        "Keep back everything one side writes on one stream until `release` (memory"
        " transport): the way to let other streams overtake it, e.g. the QPACK encoder stream.",
        {
            "stream": Key("text", required=True, doc="a stream role or label (see selectors)"),
            "from": Key(
                "side",
                doc="whose bytes (needed for a request stream, which both sides write on);"
                " absent: the stream's opener",
            ),
        },
    ),
    "release": ActionSpec(
        "Deliver what was held on a stream, in order, and stop holding it.",
        {
            "stream": Key("text", required=True, doc="the same stream as the `hold`"),
            "from": Key("side", doc="the same as the `hold`"),
        },
    ),
    "wait": ActionSpec(
        "Move the virtual clock on (every event is stamped with it).",
        {"ms": Key("integer", required=True, doc="milliseconds")},
    ),
    "extension": ActionSpec(
        "One side uses an extension point its peer must ignore (RFC 9114 §9): a frame of a"
        " reserved (GREASE, §7.2.8) or unknown type on a stream, or a new unidirectional"
        " stream of a reserved (§6.2.3) or unknown type. Exactly one of `frame_type` or"
        " `stream_type`.",
        {
            "from": Key("side", required=True, doc="who sends"),
            "frame_type": Key("integer", doc="a frame type no one registered, e.g. 0x21"),
            "on": Key("text", doc="with `frame_type`: the stream, a role or a label"),
            "stream_type": Key("integer", doc="open a stream of this unregistered type"),
            "payload": Key("text", "", doc="the frame's payload, or the bytes after the type"),
            "end": Key("flag", False, doc="with `stream_type`: end the stream after the payload"),
        },
    ),
    "disconnect": ActionSpec(
        "QUIC transport: the network between the endpoints fails, without either being told;"
        " every datagram from now on is lost, until each side's idle timeout (RFC 9000 §10.1)"
        " drops the connection: `wait` past it (RFC 9114 §5.4).",
        {},
    ),
    "violate": ActionSpec(
        "One side breaks a rule on purpose, so that the peer's reaction can be watched"
        " (RFC 9114 §8, RFC 9204 §6). Exactly one of `frame`, `instruction`, `raw`, `fin`"
        " or `open` says what it sends.",
        {
            "from": Key("side", required=True, doc="who misbehaves"),
            "on": Key("text", doc="the stream: a role or label (not with `open`)"),
            "frame": Key("unit", doc="an HTTP/3 frame, sent on any stream (see below)"),
            "instruction": Key("unit", doc="a QPACK encoder or decoder instruction"),
            "raw": Key("text", doc="bytes in hex (spaces allowed), sent as they are"),
            "fin": Key("flag", False, doc="end the stream (a critical stream, for example)"),
            "open": Key(
                "text",
                doc="open a new unidirectional stream of this type (control,"
                " push, qpack_encoder, qpack_decoder, or a number)",
            ),
            "push_id": Key("integer", doc='with open = "push": the push stream\'s push ID'),
            "rule": Key("text", required=True, doc="the rule broken, in words, with its section"),
        },
    ),
    "new_connection": ActionSpec(
        "End this part of the lesson and start a fresh connection (SETTINGS exchanged"
        " again), recorded after the last one in the same trace: a lesson can show several"
        " connection errors. It has the scenario's transport and settings unless the action"
        " changes them. Roles name the new connection's streams; a label names one stream"
        " in the whole lesson, so give a retried request a new one.",
        {
            "title": Key("text", required=True, doc="what the new part shows"),
            "transport": Key("transport", doc='"memory" or "quic" for this connection'),
            "client": Key("settings", doc="the client's settings that differ on this connection"),
            "server": Key("settings", doc="the server's settings that differ on this connection"),
        },
    ),
}


@dataclass(frozen=True, slots=True)
class Action:
    """One ``[[action]]``: its kind, its checked values, and where it is written."""

    do: str
    values: dict[str, Any]
    path: Path_
    index: int
    id: str | None = None
    deliver: bool = True

    def get(self, key: str) -> Any:
        if key in self.values:
            return self.values[key]
        return ACTIONS[self.do].keys[key].default


def read_action(table: Table, index: int) -> Action:
    do = table.required_text("do")
    if do not in ACTIONS:
        raise table.error("do", f"unknown action {do!r} (known: {', '.join(ACTIONS)})")
    spec = ACTIONS[do]
    values: dict[str, Any] = {}
    for key, rule in spec.keys.items():
        if key in table.data:
            values[key] = _read_value(table, key, rule.kind)
        elif rule.required:
            raise table.error(None, f"{do}: {key!r} is missing ({rule.doc})")
    action = Action(
        do=do,
        values=values,
        path=table.path,
        index=index,
        id=table.text("id"),
        deliver=table.flag("deliver", True),
    )
    table.finish()
    return action


def _read_value(table: Table, key: str, kind: str) -> Any:
    if kind == "text":
        return table.text(key)
    if kind == "integer":
        value = table.integer(key)
        if value < 0:
            raise table.error(key, f"must not be negative, not {value}")
        return value
    if kind == "flag":
        return table.flag(key, False)
    if kind == "side":
        side = table.text(key)
        if side not in SIDES:
            raise table.error(key, f'must be "client" or "server", not {side!r}')
        return side
    if kind == "headers":
        return read_headers(table, key)
    if kind == "body":
        return _read_body(table, key)
    if kind == "interim":
        return _read_interim(table, key)
    if kind == "transport":
        return read_transport(table, key)
    if kind == "settings":
        return read_side(table.table(key)).values
    assert kind == "unit"
    unit = table.table(key)
    assert unit is not None
    return unit
    # (violations.py reads the unit's own keys, so that its errors name them too.)


#: The largest DATA frame a ``{ repeat = ..., length = N }`` body item may ask for: enough for
#: a Length that needs four bytes (RFC 9000 §16), small enough to keep a trace readable.
LONGEST_REPEATED_BODY = 100_000


def _read_body(table: Table, key: str) -> list[str]:
    """A body: a string, or a list of DATA frames, each a string or a repeated text.

    ``{ repeat = "0123456789", length = 20000 }`` is one DATA frame of ``length`` bytes:
    the text repeated and cut to that length (ASCII text, so that characters are bytes).
    It lets a lesson show a frame whose Length needs a 2- or 4-byte varint without
    writing kilobytes of TOML.
    """
    problem = (
        'must be a string, or a list of DATA frames: strings or { repeat = "text", length = N }'
    )
    value = table.raw(key)
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list) or not value:
        raise table.error(key, problem)
    chunks: list[str] = []
    for index, item in enumerate(value):
        if isinstance(item, str):
            chunks.append(item)
            continue
        if not isinstance(item, dict):
            raise table.document.error((*table.path, key, index), f"item {index + 1} {problem}")
        child = table.child(key, {}).child(index, item)
        text = child.required_text("repeat")
        length = child.integer("length", required=True)
        child.finish()
        if not text.isascii():
            raise child.error("repeat", "must be ASCII text, so that its length is in bytes")
        if not 0 < length <= LONGEST_REPEATED_BODY:
            raise child.error("length", f"must be between 1 and {LONGEST_REPEATED_BODY}")
        chunks.append((text * (length // len(text) + 1))[:length])
    return chunks


def read_headers(table: Table, key: str) -> list[tuple[str, str]]:
    value = table.raw(key)
    problem = 'must be a list of [name, value] pairs of strings, like [["accept", "*/*"]]'
    if not isinstance(value, list):
        raise table.error(key, problem)
    pairs: list[tuple[str, str]] = []
    for index, pair in enumerate(value):
        if not (
            isinstance(pair, list) and len(pair) == 2 and all(isinstance(x, str) for x in pair)
        ):
            raise table.document.error((*table.path, key, index), f"item {index + 1} {problem}")
        pairs.append((pair[0], pair[1]))
    return pairs


def _read_interim(table: Table, key: str) -> list[tuple[int, list[tuple[str, str]]]]:
    value = table.raw(key)
    if not isinstance(value, list):
        raise table.error(key, "must be a list of tables like {status = 103, headers = [...]}")
    out = []
    for index, item in enumerate(value):
        if not isinstance(item, dict):
            raise table.error(key, f"item {index + 1} must be a table {{status = 1xx, ...}}")
        child = table.child(key, {}).child(index, item)
        status = child.integer("status", required=True)
        headers = read_headers(child, "headers") if child.has("headers") else []
        child.finish()
        out.append((status, headers))
    return out
