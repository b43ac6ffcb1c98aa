"""RFC 9114 §6, §7.2.4 and §8: how each HTTP/3 event changes what an endpoint knows.

One rule per event (replay.py's table says which): the SETTINGS each side sent (RFC 9114
§7.2.4) and a resuming client's remembered ones (§7.2.4.2), each stream's type and who
opened it (§6.1, §6.2), a request or push stream's state (§4.1: a push stream this endpoint
opened has nothing to receive, so it is complete at once), streams reset or asked to
stop sending (RFC 9000 §3.5), stream and connection errors (§8), and a new connection in
the same trace, which starts an endpoint again from nothing. A stream first seen in a frame
gets what its ID says (RFC 9000 §2.1).
"""

from __future__ import annotations

import copy
from typing import Any

from h3learn.events import Event
from h3learn.trace.replay_state import EndpointState, is_int

#: Stream ID bits (RFC 9000 §2.1): who opened the stream, and whether it is one-way.
SERVER_INITIATED_BIT = 0x01
UNIDIRECTIONAL_BIT = 0x02


def parameters_set(ep: EndpointState, event: Event) -> None:
    """RFC 9114 §7.2.4: the SETTINGS this endpoint sends (local) or received (remote)."""
    owner = _owner(event.data)
    settings = event.data.get("settings")
    if owner is not None and isinstance(settings, list):
        ep.settings[owner] = [dict(item) for item in settings if isinstance(item, dict)]


def settings_in_force(ep: EndpointState, event: Event) -> None:
    """RFC 9114 §7.2.4.2: the server settings a resuming client follows before SETTINGS."""
    if event.name == "early_data_decision" and ep.name != "client":
        return  # the server's decision changes nothing it knows
    settings = event.data.get("settings")
    if isinstance(settings, list):
        ep.settings["remote"] = [dict(item) for item in settings if isinstance(item, dict)]


def stream_frame(ep: EndpointState, event: Event) -> None:
    """RFC 9000 §3.5: RESET_STREAM ends a sending half; STOP_SENDING asks for that."""
    stream = event.data.get("stream_id", event.stream_id)
    if not is_int(stream):
        return
    info = _stream(ep, stream)
    if event.name == "reset_stream":
        info["state"] = "reset"
    elif info["state"] != "reset":
        info["state"] = f"stop_sending {event.data.get('direction', 'sent')}"


def stream_type_set(ep: EndpointState, event: Event) -> None:
    """RFC 9114 §6.1 and §6.2: what a stream carries."""
    stream = event.data.get("stream_id", event.stream_id)
    if not is_int(stream):
        return
    info = _stream(ep, stream)
    info["type"] = event.data.get("stream_type", info["type"])
    info["owner"] = _owner(event.data) or info["owner"]
    push_id = event.data.get("push_id", event.data.get("associated_push_id"))
    if push_id is not None:
        info["push_id"] = push_id
    if info["type"] == "push" and info["owner"] == "local" and info["state"] == "open":
        info["state"] = SENDING_ONLY_STATE


#: RFC 9114 §4.1, §6.2.2: the state of a push stream this endpoint opened. A request or push
#: stream's state is that of the message the endpoint receives on it, and nothing comes back
#: on a unidirectional stream: there is no message to wait for, so it is complete from the
#: start, as H3Connection marks it (h3/push.py, `create_push_stream`), while the endpoint
#: goes on sending the response on it.
SENDING_ONLY_STATE = "complete"


def frame(ep: EndpointState, event: Event) -> None:
    stream = event.data.get("stream_id", event.stream_id)
    if is_int(stream):
        _stream(ep, stream)


def stream_state_updated(ep: EndpointState, event: Event) -> None:
    """RFC 9114 §4.1: a request or push stream moves in its state table."""
    stream = event.data.get("stream_id", event.stream_id)
    if is_int(stream) and "new" in event.data:
        _stream(ep, stream)["state"] = event.data["new"]


def error(ep: EndpointState, event: Event) -> None:
    """RFC 9114 §8: a stream error resets one stream; a connection error ends everything."""
    ep.errors.append({"seq": event.seq, "kind": event.name, **copy.deepcopy(event.data)})
    stream = event.data.get("stream_id", event.stream_id)
    if event.name == "stream_error" and is_int(stream):
        _stream(ep, stream)["state"] = "reset"


def _stream(ep: EndpointState, stream: int) -> dict[str, Any]:
    """The stream's entry, created on first sight with what its ID says (RFC 9000 §2.1)."""
    if stream not in ep.streams:
        opener = "server" if stream & SERVER_INITIATED_BIT else "client"
        one_way = bool(stream & UNIDIRECTIONAL_BIT)
        ep.streams[stream] = {
            "type": "request" if opener == "client" and not one_way else "unknown",
            "owner": "local" if opener == ep.name else "remote",
            "state": "open",
        }
    return ep.streams[stream]


def connection_started(ep: EndpointState, event: Event) -> None:
    """A new connection in the same trace: everything this endpoint knew is gone."""
    fresh = EndpointState(ep.name)
    for name in ep.__dataclass_fields__:
        setattr(ep, name, getattr(fresh, name))


def _owner(data: dict[str, Any]) -> str | None:
    """``owner`` (docs/events.md), or qlog's newer ``initiator``: "local" or "remote"."""
    owner = data.get("owner", data.get("initiator"))
    if owner == "received":
        owner = "remote"
    return owner if owner in ("local", "remote") else None
