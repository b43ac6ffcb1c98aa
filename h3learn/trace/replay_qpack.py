"""RFC 9204 §2, §3.2 and §4: how each QPACK event changes what an endpoint knows.

One rule per event (replay.py's table says which): inserts into and evictions from the
local or remote dynamic table (RFC 9204 §3.2.2, §3.2.4), a table's capacity, the field
sections an encoder sent that await their Section Acknowledgment (§2.1.1, §4.4.1), the
decoder instructions an encoder reads (§4.4) and those a decoder sends, and the streams a
decoder holds blocked (§2.2.1). The rules read event data from files, so they check every
value before they trust it and pass over what they cannot use.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from h3learn.events import Event
from h3learn.trace.replay_state import EndpointState, UnacknowledgedSection, is_int

#: The decoder instructions (RFC 9204 §4.4) whose effect on the encoder the replay shows.
DECODER_INSTRUCTIONS = ("section_acknowledgement", "stream_cancellation", "insert_count_increment")


class Effect(Enum):
    """When a decoder instruction an encoder parsed changes what the encoder knows."""

    AT_ONCE = "at the instruction itself: the trace reports nothing after it"
    AT_REPORT = "at the encoder's next event, the state_updated that reports the change"
    NONE = "never: the encoder's next event is the connection error the instruction caused"


#: The encoder's next event after a decoder instruction, and what it says of the effect.
INSTRUCTION_EFFECT_SHOWN_BY = {
    ("qpack", "state_updated"): Effect.AT_REPORT,
    ("http3", "connection_error"): Effect.NONE,
}


def dynamic_table_updated(ep: EndpointState, event: Event) -> None:
    """RFC 9204 §3.2.2 and §3.2.4: entries inserted (newest last) or evicted (oldest first)."""
    data = event.data
    table = ep.table(data.get("owner"))
    if table is None:
        return
    for entry in _list(data.get("entries")):
        index = entry.get("index") if isinstance(entry, dict) else None
        if not is_int(index):
            continue
        if data.get("update_type") == "inserted":
            stored = {key: entry.get(key) for key in ("index", "name", "value", "size")}
            table.entries[index] = stored
            table.inserted.append(dict(stored))
            table.insert_count = max(table.insert_count, index + 1)
        elif data.get("update_type") == "evicted":
            table.evicted.append(dict(table.entries.pop(index, entry)))
    table.size = sum(_int_or_zero(entry.get("size")) for entry in table.entries.values())
    _set_int(table, "size", data.get("dynamic_table_size"))
    _set_int(table, "insert_count", data.get("current_insert_count"))


def state_updated(ep: EndpointState, event: Event) -> None:
    """RFC 9204 §3.2.2, §2.1.4: a table's capacity, or what the encoder learnt from the decoder."""
    data = event.data
    table = ep.table(data.get("owner"))
    if table is None:
        return
    _set_int(table, "capacity", data.get("dynamic_table_capacity"))
    _set_int(table, "size", data.get("dynamic_table_size"))
    _set_int(table, "insert_count", data.get("current_insert_count"))
    if ep.pending is not None:
        _decoder_instruction_effect(ep, ep.pending)
        ep.pending = None
    _set_int(ep, "known_received_count", data.get("known_received_count"))


def instruction_parsed(ep: EndpointState, event: Event, effect: Effect) -> None:
    """An encoder reads a decoder instruction.

    h3learn's encoder records the instruction, then carries it out, then reports the new
    state (a state_updated event): the change is shown at that report, as it happened. An
    instruction that breaks a rule (an Insert Count Increment past the inserts sent, say) is
    followed by the connection error instead, and changes nothing. Traces without reports
    show the change here.
    """
    if event.data.get("instruction_type") not in DECODER_INSTRUCTIONS:
        return
    if effect is Effect.AT_REPORT:
        ep.pending = dict(event.data)
    elif effect is Effect.AT_ONCE:
        _decoder_instruction_effect(ep, event.data)


def _decoder_instruction_effect(ep: EndpointState, instruction: dict[str, Any]) -> None:
    """RFC 9204 §4.4: what a decoder instruction does to the encoder that reads it."""
    kind, stream = instruction.get("instruction_type"), instruction.get("stream_id")
    if kind == "section_acknowledgement" and is_int(stream) and ep.unacknowledged.get(stream):
        section = ep.unacknowledged[stream].pop(0)  # RFC 9204 §4.4.1: the oldest one
        ep.known_received_count = max(ep.known_received_count, section.required_insert_count)
    elif kind == "stream_cancellation" and is_int(stream):
        ep.unacknowledged.pop(stream, None)  # RFC 9204 §4.4.2: all of them
    elif kind == "insert_count_increment" and is_int(instruction.get("increment")):
        ep.known_received_count += instruction["increment"]  # RFC 9204 §4.4.3
    if is_int(stream) and stream in ep.unacknowledged and not ep.unacknowledged[stream]:
        del ep.unacknowledged[stream]


def instruction_created(ep: EndpointState, event: Event) -> None:
    """RFC 9204 §4.4: a decoder's own instructions, what it has told the peer's encoder.

    An instruction a lesson sends on purpose to break a rule (``deliberate`` in its data,
    h3learn/h3/deliberate.py) is bytes put on the stream by hand: the decoder's own counts
    and blocked streams do not change, so neither do they here.
    """
    if "deliberate" in event.data:
        return
    kind, stream = event.data.get("instruction_type"), event.data.get("stream_id")
    if kind == "section_acknowledgement" and is_int(stream):
        ep.acknowledged_insert_count = max(ep.acknowledged_insert_count, ep.decoded.get(stream, 0))
    elif kind == "insert_count_increment" and is_int(event.data.get("increment")):
        ep.acknowledged_insert_count += event.data["increment"]
    elif kind == "stream_cancellation" and is_int(stream):
        ep.blocked.pop(stream, None)


def headers_encoded(ep: EndpointState, event: Event) -> None:
    """RFC 9204 §2.1.1, §4.4.1: a section with dynamic references awaits acknowledgment."""
    required = _dict(event.data.get("prefix")).get("required_insert_count")
    stream = event.data.get("stream_id", event.stream_id)
    if not (is_int(required) and required > 0 and is_int(stream)):
        return  # Required Insert Count 0: the decoder will not acknowledge it
    references = {
        line["absolute_index"]
        for line in _list(event.data.get("field_lines"))
        if isinstance(line, dict) and is_int(line.get("absolute_index"))
    }
    section = UnacknowledgedSection(stream, required, tuple(sorted(references)))
    ep.unacknowledged.setdefault(stream, []).append(section)


def headers_decoded(ep: EndpointState, event: Event) -> None:
    required = _dict(event.data.get("prefix")).get("required_insert_count")
    stream = event.data.get("stream_id", event.stream_id)
    if is_int(required) and is_int(stream):
        ep.decoded[stream] = required


def stream_state_updated(ep: EndpointState, event: Event) -> None:
    """RFC 9204 §2.2.1: a stream waits for inserts, or has them."""
    stream, state = event.data.get("stream_id", event.stream_id), event.data.get("state")
    if not is_int(stream):
        return
    if state == "blocked":
        ep.blocked[stream] = _int_or_zero(event.data.get("required_insert_count"))
    elif state == "unblocked":
        ep.blocked.pop(stream, None)


def _int_or_zero(value: Any) -> int:
    return value if is_int(value) else 0


def _set_int(target: Any, attribute: str, value: Any) -> None:
    """Set ``target.attribute`` to ``value`` if the event gave an integer for it."""
    if is_int(value):
        setattr(target, attribute, value)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
