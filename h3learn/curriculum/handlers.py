"""What each action does: one handler per ``do``, on the endpoints of the run.

`RUNNERS` maps each action of actions.py to its handler; runner.py calls it with the `Run`
(recording.py) and the action. A handler drives the sans-IO API of `H3Connection` (send a
request, a response, DATA, a push promise, GOAWAY, ...) or the transport (hold, release,
wait, disconnect); `violate` sends what violations.py builds. What the protocol refuses
(a request after GOAWAY, a push beyond MAX_PUSH_ID), or a key the action needs but lacks,
raises `ActionFailed` with the reason and, if known, the key.
"""

from __future__ import annotations

from collections.abc import Callable

from h3learn.curriculum.actions import REQUEST_FIELD_KEYS, RESPONSE_FIELD_KEYS, Action
from h3learn.curriculum.recording import ActionFailed, Run, name_roles
from h3learn.curriculum.source import Table
from h3learn.curriculum.violations import frame_unit, instruction_unit, raw_unit
from h3learn.h3.connection import H3Connection
from h3learn.h3.errors import ErrorCode
from h3learn.h3.stream_types import StreamHeader, StreamType
from h3learn.qpack.errors import QpackErrorCode

Header = tuple[bytes, bytes]


def _new_connection(run: Run, action: Action) -> None:
    """A lesson in parts: a fresh connection, recorded after the last one in the same trace."""
    title = action.get("title")
    run.recording.part_starts.append(len(run.recording.events))
    for side in ("client", "server"):
        run.network.log.for_endpoint(side).record(
            category="transport",
            name="connection_started",
            stream_id=None,
            data={"title": title},
            rfc=("9114#3.2",),
            summary=f"{side}: a new connection begins: {title}",
        )
    assert run.connect is not None
    run.network = run.connect(action)
    run.labels.clear()
    run.promises.clear()
    run.held.clear()
    run.network.deliver()
    name_roles(run)


def _headers(pairs: list[tuple[str, str]]) -> list[Header]:
    return [(name.encode(), value.encode()) for name, value in pairs]


def _exactly(action: Action, replaced: tuple[str, ...]) -> list[Header] | None:
    """A request's or response's ``fields``, if given (and nothing they replace with them)."""
    if "fields" not in action.values:
        return None
    clash = [key for key in replaced if key in action.values]
    if clash:
        raise ActionFailed(
            f"'fields' is the whole header section: leave out {clash[0]!r}", clash[0]
        )
    return _headers(action.get("fields"))


def _request_fields(action: Action) -> list[Header]:
    exact = _exactly(action, REQUEST_FIELD_KEYS)
    if exact is not None:
        return exact
    pseudo = [
        (":method", action.get("method")),
        (":scheme", action.get("scheme")),
        (":authority", action.get("authority")),
        (":path", action.get("path")),
    ]
    return _headers(pseudo + list(action.get("headers")))


def _send_content(
    connection: H3Connection, stream_id: int, action: Action, unchecked: bool = False
) -> None:
    """DATA frames, then the trailers, then the end of the stream (as the action says)."""
    body = action.get("body") or []
    trailers = action.get("trailers")
    end = action.get("end")
    for index, chunk in enumerate(body):
        last = index == len(body) - 1
        connection.send_data(stream_id, chunk.encode(), end_stream=end and last and not trailers)
    if trailers is not None:
        send = connection.send_headers_unchecked if unchecked else connection.send_headers
        send(stream_id, _headers(trailers), end_stream=end)
    elif end and not body:
        connection.end_stream(stream_id)


def _request(run: Run, action: Action) -> None:
    client = run.network.client
    headers = _request_fields(action)
    body, trailers = action.get("body"), action.get("trailers")
    ends_now = action.get("end") and not body and trailers is None
    if action.get("unchecked"):
        stream_id = client.send_request_unchecked(headers, end_stream=ends_now)
    else:
        stream_id = client.send_request(headers, end_stream=ends_now)
    run.name_stream(action.get("label"), stream_id)
    if not ends_now:
        _send_content(client, stream_id, action, action.get("unchecked"))


def _respond(run: Run, action: Action) -> None:
    server = run.network.server
    target = action.get("to")
    if target in run.promises and target not in run.labels:
        push_id = run.recording.push_ids[target]
        run.name_stream(target, server.create_push_stream(push_id))
    stream_id = run.labelled(target)
    unchecked = action.get("unchecked")
    send = server.send_headers_unchecked if unchecked else server.send_headers
    for status, headers in action.get("interim"):
        send(stream_id, [(b":status", str(status).encode()), *_headers(headers)])
    final = _exactly(action, RESPONSE_FIELD_KEYS) or [
        (b":status", str(action.get("status")).encode()),
        *_headers(action.get("headers")),
    ]
    body, trailers = action.get("body"), action.get("trailers")
    ends_now = action.get("end") and not body and trailers is None
    send(stream_id, final, end_stream=ends_now)
    if not ends_now:
        _send_content(server, stream_id, action, unchecked)


def _interim(run: Run, action: Action) -> None:
    """One informational response (RFC 9114 §4.1): the final one follows with `respond`."""
    status = action.get("status")
    if not 100 <= status <= 199:
        raise ActionFailed(f"an interim response has a 1xx status, not {status}", "status")
    server = run.network.server
    send = server.send_headers_unchecked if action.get("unchecked") else server.send_headers
    send(
        run.labelled(action.get("to")),
        [(b":status", str(status).encode()), *_headers(action.get("headers"))],
    )


def _data(run: Run, action: Action) -> None:
    connection = run.network.endpoint(action.get("from"))
    stream_id = run.labelled(action.get("on"))
    chunks = action.get("body")
    for index, chunk in enumerate(chunks):
        last = index == len(chunks) - 1
        connection.send_data(stream_id, chunk.encode(), end_stream=action.get("end") and last)


def _trailers(run: Run, action: Action) -> None:
    connection = run.network.endpoint(action.get("from"))
    stream_id = run.labelled(action.get("on"))
    connection.send_headers(stream_id, _headers(action.get("headers")), end_stream=True)


def _end(run: Run, action: Action) -> None:
    run.network.endpoint(action.get("from")).end_stream(run.labelled(action.get("on")))


def _max_push_id(run: Run, action: Action) -> None:
    run.network.client.send_max_push_id(action.get("push_id"))


def _push(run: Run, action: Action) -> None:
    label = action.get("label")
    if label in run.recording.streams or label in run.promises:
        raise ActionFailed(f"the label {label!r} is already used", "label")
    stream_id = run.labelled(action.get("on"))
    push_id = run.network.server.send_push_promise(stream_id, _request_fields(action))
    run.promises[label] = action.get("on")
    run.recording.push_ids[label] = push_id


def _cancel_push(run: Run, action: Action) -> None:
    label = action.get("push")
    if label not in run.recording.push_ids:
        raise ActionFailed(f"no push is labelled {label!r}", "push")
    run.network.endpoint(action.get("from")).cancel_push(run.recording.push_ids[label])


def error_code(name: str) -> int:
    """An error code by its registered name (RFC 9114 §8.1, RFC 9204 §6)."""
    for registry in (ErrorCode, QpackErrorCode):
        if name in registry.__members__:
            return int(registry[name])
    known = [*ErrorCode.__members__, *QpackErrorCode.__members__]
    raise ActionFailed(f"unknown error code {name!r} (known: {', '.join(known)})", "code")


def _reset(run: Run, action: Action) -> None:
    connection = run.network.endpoint(action.get("from"))
    connection.reset_stream(run.labelled(action.get("on")), error_code(action.get("code")))


def _goaway(run: Run, action: Action) -> None:
    run.network.endpoint(action.get("from")).send_goaway(action.get("identifier"))


def _close(run: Run, action: Action) -> None:
    connection = run.network.endpoint(action.get("from"))
    connection.close(error_code(action.get("code")), action.get("reason"))


def _sender_of(action: Action, stream_id: int) -> str:
    """Whose bytes: ``from``, else the stream's opener (RFC 9000 §2.1: bit 0x1 is the server)."""
    side: str | None = action.get("from")
    if side is not None:
        return side
    return "server" if stream_id & 0x1 else "client"


def _hold(run: Run, action: Action) -> None:
    stream_id = run.stream(action.get("stream"))
    sender = _sender_of(action, stream_id)
    run.network.pair().hold(sender, stream_id)
    run.held.add((sender, stream_id))


def _release(run: Run, action: Action) -> None:
    stream_id = run.stream(action.get("stream"))
    sender = _sender_of(action, stream_id)
    if (sender, stream_id) not in run.held:
        raise ActionFailed(f"stream {action.get('stream')!r} is not held", "stream")
    run.held.discard((sender, stream_id))
    run.network.pair().release(sender, stream_id)


def _wait(run: Run, action: Action) -> None:
    run.network.wait(action.get("ms"))


def _extension(run: Run, action: Action) -> None:
    """A reserved (GREASE) or unknown frame or stream type the peer ignores (RFC 9114 §9)."""
    connection = run.network.endpoint(action.get("from"))
    payload = action.get("payload").encode()
    frame_type, stream_type = action.get("frame_type"), action.get("stream_type")
    if (frame_type is None) == (stream_type is None):
        raise ActionFailed("say what to send with exactly one of 'frame_type' or 'stream_type'")
    if stream_type is not None:
        if "on" in action.values:
            raise ActionFailed("'stream_type' opens a new stream: leave out 'on'", "on")
        connection.open_extension_stream(stream_type, payload, end_stream=action.get("end"))
        return
    if "on" not in action.values:
        raise ActionFailed("'on' is missing: which stream the frame goes on", "on")
    if action.get("end"):
        raise ActionFailed("'end' goes with 'stream_type' only", "end")
    connection.send_extension_frame(run.stream(action.get("on")), frame_type, payload)


def _disconnect(run: Run, action: Action) -> None:
    run.network.disconnect()


OPENABLE = {
    "control": StreamType.CONTROL,
    "push": StreamType.PUSH,
    "qpack_encoder": StreamType.QPACK_ENCODER,
    "qpack_decoder": StreamType.QPACK_DECODER,
}


def _violate(run: Run, action: Action) -> None:
    side = action.get("from")
    connection = run.network.endpoint(side)
    rule = action.get("rule")
    what = [key for key in ("frame", "instruction", "raw", "open") if key in action.values]
    fin = action.get("fin")
    if len(what) > 1 or (not what and not fin):
        raise ActionFailed(
            "say what to send with exactly one of 'frame', 'instruction', 'raw', 'open'"
            " (or 'fin = true' alone)"
        )
    if what == ["open"]:
        if "on" in action.values:
            raise ActionFailed("'open' makes a new stream: leave out 'on'", "on")
        kind = action.get("open")
        stream_type = OPENABLE.get(kind) if not kind.isdigit() else int(kind)
        if stream_type is None:
            raise ActionFailed(f"'open' takes {', '.join(OPENABLE)} or a number", "open")
        push_id = action.get("push_id") if stream_type == StreamType.PUSH else None
        if stream_type == StreamType.PUSH and push_id is None:
            raise ActionFailed("a push stream needs 'push_id'", "push_id")
        connection.open_stream_deliberately(StreamHeader(stream_type, push_id))
        return
    if "on" not in action.values:
        raise ActionFailed("'on' is missing: which stream to send it on", "on")
    stream_id = run.stream(action.get("on"))
    table: Table | None = action.values.get("frame") or action.values.get("instruction")
    if what == ["frame"]:
        assert table is not None
        unit = frame_unit(table, connection, stream_id, rule)
    elif what == ["instruction"]:
        assert table is not None
        unit = instruction_unit(table, stream_id, rule)
    elif what == ["raw"]:
        unit = raw_unit(parse_hex_text(action.get("raw")), rule)
    else:
        unit = raw_unit(b"", rule)
    connection.send_deliberately(stream_id, unit, end_stream=fin)


def parse_hex_text(text: str) -> bytes:
    try:
        return bytes.fromhex(text)
    except ValueError:
        raise ActionFailed(f'{text!r} is not hex bytes like "00 04 00"', "raw") from None


RUNNERS: dict[str, Callable[[Run, Action], None]] = {
    "request": _request,
    "respond": _respond,
    "interim": _interim,
    "data": _data,
    "trailers": _trailers,
    "end": _end,
    "max_push_id": _max_push_id,
    "push": _push,
    "cancel_push": _cancel_push,
    "reset": _reset,
    "goaway": _goaway,
    "close": _close,
    "hold": _hold,
    "release": _release,
    "wait": _wait,
    "extension": _extension,
    "disconnect": _disconnect,
    "violate": _violate,
    "new_connection": _new_connection,
}
