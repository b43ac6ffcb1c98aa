"""The printed handout: a range of steps, each as one block (summary, bytes, state, RFC).

``/trace/<id>/print?from=A&to=B`` is rendered on the server (Jinja, every value escaped)
from the same answers as the JSON API: `present.step_event` for the event and its bytes,
`Replay.state_after` for the state. Paper cannot be hovered, so what the page shows on
demand is written out here: the bytes of every field beside its name, value and meaning,
and the state as text. To stay a handout rather than a dump, each block shows the QPACK
counts and both dynamic tables of each endpoint, and of the rest (SETTINGS, streams,
the connection's GOAWAY, push IDs and close, errors) only what the step changed; changed
items are marked in words as well as colour, so a black-and-white print keeps them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from h3learn.web.library import Entry
from h3learn.web.present import imported_from_qlog, step_event

#: The most steps one handout may hold (a 10,000-step trace is printed a range at a time).
MAX_STEPS = 200

#: Bytes per line of the hex dump, as on the step page.
PER_LINE = 16
#: A unit longer than FOLD_OVER bytes is folded as on the step page (bytes.js): its first
#: FOLD_HEAD and last FOLD_TAIL bytes or so, in whole lines, and one line for the rest.
FOLD_OVER = 1024
FOLD_HEAD = 256
FOLD_TAIL = 64
#: A field longer than this shows its first FIELD_BYTES_SHOWN bytes and its length.
FIELD_BYTES_SHOWN = 32

ENDPOINT_NAMES = ("client", "server")

TABLE_TITLES = {
    "local_table": "Encoder's dynamic table (filled by this endpoint)",
    "remote_table": "Decoder's dynamic table (the peer's, as this endpoint decoded it)",
}

#: RFC 9114 §5.2, §4.6: the records of the state's ``connection``, as the step page words them.
CONNECTION_LABELS = {
    ("goaway", "sent"): "GOAWAY sent",
    ("goaway", "received"): "GOAWAY received",
    ("max_push_id", "sent"): "MAX_PUSH_ID sent",
    ("max_push_id", "received"): "MAX_PUSH_ID received",
    ("pushes_promised", "sent"): "pushes promised",
    ("pushes_promised", "received"): "pushes promised to it",
    ("pushes_cancelled", "sent"): "CANCEL_PUSH sent",
    ("pushes_cancelled", "received"): "CANCEL_PUSH received",
}


@dataclass
class Row:
    """One line of a table: its cells, and whether the step changed it (or what it is)."""

    cells: list[Any]
    mark: str = ""  # "changed", "inserted", "evicted" or ""


@dataclass
class Table:
    title: str
    metrics: list[tuple[str, Any, bool]]  # (label, value, changed)
    rows: list[Row] = field(default_factory=list)


@dataclass
class EndpointState:
    name: str
    metrics: list[tuple[str, Any, bool]]
    tables: list[Table]
    #: Only what the step changed: (heading, [text lines]).
    changes: list[tuple[str, list[str]]]


@dataclass
class HandoutStep:
    step: int
    event: dict[str, Any]
    hex_lines: list[dict[str, Any]]
    field_bytes: list[str]
    endpoints: list[EndpointState]
    changed: list[str]
    #: The endpoints the trace has events of (a capture records the server's side only).
    observed: list[str]


def step_range(
    count: int, first: int | None, last: int | None, near: int | None = None
) -> tuple[int, int]:
    """The steps a handout covers; `ValueError` with the reason for a range it cannot hold.

    Without ``first`` it starts at 0, or, given ``near`` (the step the reader came from),
    at the start of the block of `MAX_STEPS` steps that holds it (0-199, 200-399, ...).
    """
    if count == 0:
        raise ValueError("this trace has no steps")
    if first is not None:
        start = first
    elif near is not None and (last is None or near <= last):
        start = near // MAX_STEPS * MAX_STEPS
    else:
        start = 0
    end = min(count - 1, start + MAX_STEPS - 1) if last is None else last
    if not 0 <= start <= end < count:
        raise ValueError(f"the steps must be within 0 to {count - 1}, 'from' before 'to'")
    if end - start + 1 > MAX_STEPS:
        raise ValueError(f"a handout holds at most {MAX_STEPS} steps; print a smaller range")
    return start, end


def handout(entry: Entry, start: int, end: int) -> list[HandoutStep]:
    """Steps ``start`` to ``end`` of a trace, ready for the template."""
    steps = []
    imported = imported_from_qlog(entry.trace.meta)
    for step in range(start, end + 1):
        event = step_event(entry.event(step), entry.types, imported=imported)
        state = entry.state_after(step)
        changed: list[str] = state.pop("changed", [])
        raw = bytes.fromhex(event["raw"])
        steps.append(
            HandoutStep(
                step=step,
                event=event,
                hex_lines=hex_lines(event["bytes"]),
                field_bytes=[
                    field_bytes(raw[f["offset"] : f["offset"] + f["length"]])
                    for f in event["fields"]
                ],
                endpoints=[endpoint_state(name, state[name], changed) for name in ENDPOINT_NAMES],
                changed=changed,
                observed=entry.observed,
            )
        )
    return steps


def hex_lines(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The byte rows of `present.byte_rows` in lines of 16, with the offset of each line.

    A long unit is folded: one line ``{"offset": "…", "fold": "N bytes not shown ..."}``
    stands for the lines between its head and its tail.
    """
    starts = range(0, len(rows), PER_LINE)
    if len(rows) <= FOLD_OVER:
        return [
            {"offset": f"{start:04x}", "bytes": rows[start : start + PER_LINE]} for start in starts
        ]
    tail = (len(rows) - FOLD_TAIL) // PER_LINE * PER_LINE
    fold = {
        "offset": "…",
        "fold": f"{tail - FOLD_HEAD} bytes not shown ({FOLD_HEAD:04x} to {tail - 1:04x})",
    }
    head = [
        {"offset": f"{s:04x}", "bytes": rows[s : s + PER_LINE]} for s in starts if s < FOLD_HEAD
    ]
    rest = [{"offset": f"{s:04x}", "bytes": rows[s : s + PER_LINE]} for s in starts if s >= tail]
    return [*head, fold, *rest]


def field_bytes(octets: bytes) -> str:
    """A field's bytes in hex; a long field shows its first bytes and its length."""
    if len(octets) <= FIELD_BYTES_SHOWN:
        return octets.hex(" ")
    return f"{octets[:FIELD_BYTES_SHOWN].hex(' ')} … ({len(octets)} bytes)"


def _marks(changed: list[str]) -> set[str]:
    """Every changed path and its ancestors: a path is marked when it or its inside changed."""
    marks = set()
    for path in changed:
        parts = path.split(".")
        for end in range(1, len(parts) + 1):
            marks.add(".".join(parts[:end]))
    return marks


def _listed(values: list[Any]) -> str:
    return ", ".join(str(value) for value in values) if values else "none"


def endpoint_state(name: str, state: dict[str, Any], changed: list[str]) -> EndpointState:
    marks = _marks(changed)
    qpack = state["qpack"]
    path = f"{name}.qpack"
    sections = [
        f"stream {s['stream_id']} (RIC {s['required_insert_count']})"
        for s in qpack["unacknowledged_sections"]
    ]
    metrics = [
        ("known received count", qpack["known_received_count"], "known_received_count"),
        ("blocked streams", _listed(qpack["blocked_streams"]), "blocked_streams"),
        ("blocking streams", _listed(qpack["blocking_streams"]), "blocking_streams"),
        ("sections awaiting ack", _listed(sections), "unacknowledged_sections"),
    ]
    tables = [
        _table(f"{path}.{key}", TABLE_TITLES[key], qpack[key], marks)
        for key in ("local_table", "remote_table")
    ]
    changes: list[tuple[str, list[str]]] = []
    for side, label in (("local", "SETTINGS it sends"), ("remote", "SETTINGS it received")):
        if f"{name}.settings.{side}" in marks:
            values = state["settings"][side] or []
            changes.append((label, [f"{item['name']} = {item['value']}" for item in values]))
    streams = [
        f"stream {stream_id}: {info['type']}, opened by "
        f"{'this endpoint' if info['owner'] == 'local' else 'the peer'}, {info['state']}"
        for stream_id, info in state["streams"].items()
        if f"{name}.streams.{stream_id}" in marks
    ]
    if streams:
        changes.append(("Streams changed", streams))
    connection = [
        _connection_line(record, direction, state["connection"])
        for record, direction in CONNECTION_LABELS
        if f"{name}.connection.{record}.{direction}" in marks
    ]
    if f"{name}.connection.closed" in marks:
        connection.append(_closed_line(state["connection"]["closed"]))
    if connection:
        changes.append(("Connection changed", connection))
    if f"{name}.errors" in marks:
        changes.append(
            (
                "Errors",
                [
                    f"step {e['seq']}: {e['kind']} {e.get('code_name') or ''} {e.get('rule') or ''}"
                    for e in state["errors"]
                ],
            )
        )
    return EndpointState(
        name=name,
        metrics=[(label, value, f"{path}.{key}" in marks) for label, value, key in metrics],
        tables=tables,
        changes=changes,
    )


def _connection_line(record: str, direction: str, connection: dict[str, Any]) -> str:
    value = connection[record][direction]
    shown = _listed(value) if isinstance(value, list) else "—" if value is None else value
    return f"{CONNECTION_LABELS[record, direction]}: {shown}"


def _closed_line(closed: dict[str, Any] | None) -> str:
    """RFC 9114 §5.3, §8: how the connection ended, and who ended it (as on the step page)."""
    if closed is None:
        return "connection: open"
    if closed.get("clean") is None:
        where = closed.get("direction")
        return f"connection: closed: CONNECTION_CLOSE {where} (its code is not in this trace)"
    how = "closed cleanly" if closed.get("clean") else "closed with an error"
    if closed.get("direction") == "sent":
        by = "by this endpoint"
    else:
        by = "by QUIC" if closed.get("layer") == "quic" else "by the peer"
    rule = f" ({closed['rule']})" if closed.get("rule") else ""
    return f"connection: {how} {by}: {closed.get('code_name') or closed.get('code')}{rule}"


def _table(path: str, title: str, table: dict[str, Any], marks: set[str]) -> Table:
    inserted = {entry["index"] for entry in table["inserted_at_this_step"]}
    out = Table(
        title=title,
        metrics=[
            (label, table[key], f"{path}.{key}" in marks)
            for label, key in (
                ("capacity", "capacity"),
                ("maximum", "maximum_capacity"),
                ("size", "size"),
                ("insert count", "insert_count"),
            )
        ],
    )
    for entry in reversed(table["entries"]):
        notes = []
        if entry["index"] in inserted:
            notes.append("inserted")
        if entry.get("unacknowledged"):
            notes.append(f"unacknowledged (streams {_listed(entry.get('referenced_by') or [])})")
        if entry.get("received"):
            notes.append("received")
        if entry.get("evictable"):
            notes.append("evictable")
        if entry["index"] in inserted:
            mark = "inserted"
        elif f"{path}.entries.{entry['index']}" in marks:
            mark = "changed"
        else:
            mark = ""
        cells = [entry["index"], entry["name"], entry["value"], entry["size"], ", ".join(notes)]
        out.rows.append(Row(cells, mark))
    for entry in table["evicted_at_this_step"]:
        cells = [entry["index"], entry["name"], entry["value"], entry["size"], "evicted"]
        out.rows.append(Row(cells, "evicted"))
    return out
