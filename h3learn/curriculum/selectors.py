"""Selectors: how a note or a checkpoint names the step of the trace it belongs to.

A lesson never says "step 14" (the number would change whenever the scenario does); it
describes the event instead, and the selector finds it in the recorded trace::

    at = { endpoint = "server", event = "frame_parsed", frame_type = "settings" }
    at = { event = "headers_decoded", stream = "page", nth = 2 }
    at = { event = "qpack:instruction_created", instruction_type = "insert_count_increment" }
    at = { event = "connection_error", during = "bad-settings" }

Every key narrows the events; ``nth`` (from 1) or ``last = true`` picks one of those left
(the first by default). The keys:

    endpoint          "client" or "server": whose view the event is
    event             an event name ("frame_parsed"), or "category:name" when the name is in
                      two categories ("qpack:stream_state_updated")
    stream            a request's or push's label (its events only, on the connection
                      where the label was given), a role ("client control stream",
                      "server encoder stream", "client decoder stream"), a stream ID, or
                      "none" for events about the whole connection
    frame_type        data.frame.frame_type ("settings", "headers", ...)
    instruction_type  data.instruction_type ("insert_with_name_reference", ...)
    stream_type       data.stream_type ("control", "qpack_encode", ...)
    code_name         data.code_name ("H3_FRAME_UNEXPECTED", ...), for errors
    data              { "path.in.data" = value, ... }: any values of the event's data,
                      by dotted path ("prefix.required_insert_count" = 2)
    during            the id of an action: only events that action recorded
    nth, last         which of the matching events (default: the first)

A selector that matches nothing (or fewer than ``nth`` events) is an error naming the file
and line, and saying how many events matched each key in turn, so the mistake is found.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from h3learn.curriculum.recording import Recording
from h3learn.curriculum.source import Path_, Table
from h3learn.events import CATEGORIES, Event

#: Shortcut keys: selector key -> path in the event's data.
DATA_SHORTCUTS: dict[str, str] = {
    "frame_type": "frame.frame_type",
    "instruction_type": "instruction_type",
    "stream_type": "stream_type",
    "code_name": "code_name",
}


class SelectorError(ValueError):
    """A selector that cannot be resolved; ``key`` is the key at fault, if one is."""

    def __init__(self, message: str, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key


@dataclass(frozen=True, slots=True)
class Selector:
    endpoint: str | None = None
    category: str | None = None
    name: str | None = None
    stream: str | int | None = None
    data: dict[str, Any] = field(default_factory=dict)
    during: str | None = None
    nth: int = 1
    last: bool = False
    path: Path_ = ()

    def describe(self) -> str:
        parts = []
        if self.endpoint:
            parts.append(self.endpoint)
        if self.name:
            parts.append(f"{self.category}:{self.name}" if self.category else self.name)
        if self.stream is not None:
            parts.append(f"on {self.stream}")
        parts.extend(f"{key}={value!r}" for key, value in self.data.items())
        if self.during:
            parts.append(f"during {self.during!r}")
        which = "last" if self.last else f"#{self.nth}"
        return f"{which} {' '.join(parts) or 'event'}"


def read_selector(table: Table) -> Selector:
    endpoint = table.text("endpoint")
    if endpoint is not None and endpoint not in ("client", "server"):
        raise table.error("endpoint", f'must be "client" or "server", not {endpoint!r}')
    category = name = None
    event = table.text("event")
    if event is not None:
        category, _, name = event.rpartition(":")
        if category and category not in CATEGORIES:
            raise table.error("event", f"category must be one of {', '.join(CATEGORIES)}")
        category = category or None
    stream = table.raw("stream")
    if stream is not None and (isinstance(stream, bool) or not isinstance(stream, str | int)):
        raise table.error("stream", 'must be a label, a role, a stream ID or "none"')
    data: dict[str, Any] = {}
    for key, path in DATA_SHORTCUTS.items():
        value = table.text(key)
        if value is not None:
            data[path] = value
    extra = table.table("data")
    if extra is not None:
        for key in extra.data:
            data[key] = extra.raw(key)
    nth = table.integer("nth", 1)
    if nth < 1:
        raise table.error("nth", "counts from 1")
    last = table.flag("last", False)
    if last and table.has("nth"):
        raise table.error("last", "give either 'nth' or 'last', not both")
    selector = Selector(
        endpoint=endpoint,
        category=category,
        name=name,
        stream=stream,
        data=data,
        during=table.text("during"),
        nth=nth,
        last=last,
        path=table.path,
    )
    table.finish()
    return selector


def data_value(data: Any, path: str) -> tuple[bool, Any]:
    """(found, value) at a dotted path ("prefix.required_insert_count", "field_lines.0.name")."""
    value = data
    for piece in path.split("."):
        if isinstance(value, dict) and piece in value:
            value = value[piece]
        elif isinstance(value, list) and piece.isdigit() and int(piece) < len(value):
            value = value[int(piece)]
        else:
            return False, None
    return True, value


def _stream_id(selector: Selector, recording: Recording) -> int | None:
    stream = selector.stream
    if isinstance(stream, int):
        return stream
    assert isinstance(stream, str)
    if stream in recording.streams:
        return recording.streams[stream]
    known = ", ".join(sorted(recording.streams))
    raise SelectorError(f'no stream is called {stream!r} (known: {known}, or "none")', "stream")


def matching(selector: Selector, recording: Recording) -> list[Event]:
    """Every event the selector's keys allow, in trace order (``nth`` / ``last`` not applied)."""
    events = recording.events
    filters: list[tuple[str, Any]] = []
    if selector.during is not None:
        if selector.during not in recording.action_ids:
            known = ", ".join(sorted(recording.action_ids)) or "no action has an id"
            raise SelectorError(f"no action has the id {selector.during!r} ({known})", "during")
        start, end = recording.action_ranges[recording.action_ids[selector.during]]
        filters.append(("during", lambda e: start <= e.seq < end))
    if selector.endpoint is not None:
        filters.append(("endpoint", lambda e: e.endpoint == selector.endpoint))
    if selector.name is not None:
        filters.append(
            (
                "event",
                lambda e: (
                    e.name == selector.name
                    and (selector.category is None or e.category == selector.category)
                ),
            )
        )
    if selector.stream is not None:
        if selector.stream == "none":
            filters.append(("stream", lambda e: e.stream_id is None))
        else:
            stream_id = _stream_id(selector, recording)
            # A label names a stream of one connection: stream IDs repeat in the next ones.
            part = recording.label_parts.get(str(selector.stream))
            filters.append(
                (
                    "stream",
                    lambda e: (
                        e.stream_id == stream_id
                        and (part is None or recording.part_of(e.seq) == part)
                    ),
                )
            )
    for path, wanted in selector.data.items():
        filters.append((path, lambda e, p=path, w=wanted: data_value(e.data, p) == (True, w)))
    left = list(events)
    for key, keep in filters:
        narrowed = [event for event in left if keep(event)]
        if not narrowed:
            raise SelectorError(
                f"selects nothing: {len(left)} events were left before {_key_of(key)!r}"
                f"{'' if _key_of(key) != 'data' else f' ({key})'}, none after it",
                _key_of(key),
            )
        left = narrowed
    if selector.name is not None and selector.category is None:
        categories = {event.category for event in left}
        if len(categories) > 1:
            raise SelectorError(
                f"the event name {selector.name!r} is used by {', '.join(sorted(categories))}:"
                f' write event = "{sorted(categories)[0]}:{selector.name}"',
                "event",
            )
    return left


def _key_of(filter_name: str) -> str:
    for key, path in DATA_SHORTCUTS.items():
        if path == filter_name:
            return key
    return filter_name if filter_name in ("during", "endpoint", "event", "stream") else "data"


def select(selector: Selector, recording: Recording) -> Event:
    """The one event the selector names; `SelectorError` saying why when there is none."""
    events = matching(selector, recording)
    if selector.last:
        return events[-1]
    if selector.nth > len(events):
        raise SelectorError(
            f"asks for match {selector.nth}, but only {len(events)} events match", "nth"
        )
    return events[selector.nth - 1]
