"""The Event record and the Recorder interface: the contract between the core and the rest.

RFC 9114 §7 and RFC 9204 §4 describe bytes on the wire; h3learn's job is to show a learner
every one of those bytes, what it means, and how each endpoint's state changes. Every layer
(the QPACK encoder and decoder, the HTTP/3 connection, the transports) reports what it does
to a `Recorder` as `Event`s. The trace store, the qlog exporter, the replay engine and the
web UI only ever see events; none of them parses protocol bytes.

An event is one thing a learner should see: a frame parsed, an instruction created, an
entry inserted into a dynamic table, a field section decoded, a stream blocked. It carries:

- ``category`` and ``name``: qlog-style names (``qpack`` / ``instruction_parsed``);
- ``endpoint``: whose view it is ("client" or "server");
- ``stream_id``: the QUIC stream it belongs to, or None;
- ``data``: a qlog-compatible JSON payload;
- ``raw``: the exact bytes of this unit on the wire (may be empty for state changes);
- ``fields``: `FieldSpan`s that label every byte (and every bit of a prefix byte) of ``raw``;
- ``rfc``: the sections that govern it, written ``9204#4.3.2``;
- ``summary``: one line a person can read.

See docs/events.md for the full description of every event name and its data.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

ENDPOINTS = ("client", "server")
#: The categories of events (docs/events.md): one per layer that records them.
CATEGORIES = ("http3", "qpack", "transport")


class FieldSpan(NamedTuple):
    """A labelled run of bytes inside an event's ``raw`` bytes.

    A prefix byte of QPACK packs several fields into one octet (a pattern, a flag or two,
    and the first bits of an integer). Such fields share an ``offset`` and say which bits
    they own with ``bit_offset`` (0 is the most significant bit) and ``bit_length``. A
    prefixed integer that continues into further bytes has ``length`` > 1; its bit range
    describes only its first byte.

    A named tuple, so immutable and cheap to make: a recorded exchange makes about four
    spans for every event.
    """

    #: Short label shown beside the bytes, e.g. "Required Insert Count".
    name: str
    #: Offset of the first byte, counted from the start of the event's ``raw``.
    offset: int
    #: Number of bytes the field touches (at least 1).
    length: int
    #: The decoded value, JSON-compatible (int, str, bool, list or dict).
    value: Any
    #: One sentence saying what the field means.
    explain: str
    #: The RFC section that defines the field, written ``9204#4.5.1``.
    rfc: str
    #: First bit inside the byte at ``offset`` (0 = most significant), for prefix bits.
    bit_offset: int | None = None
    #: Number of bits the field owns inside the byte at ``offset``.
    bit_length: int | None = None

    def shifted(self, delta: int) -> FieldSpan:
        """The same span, moved ``delta`` bytes later (when a unit is embedded in a larger one)."""
        return self._replace(offset=self.offset + delta)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "offset": self.offset,
            "length": self.length,
            "value": self.value,
            "explain": self.explain,
            "rfc": self.rfc,
        }
        if self.bit_offset is not None:
            out["bit_offset"] = self.bit_offset
            out["bit_length"] = self.bit_length
        return out

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> FieldSpan:
        return cls(
            name=obj["name"],
            offset=obj["offset"],
            length=obj["length"],
            value=obj.get("value"),
            explain=obj.get("explain", ""),
            rfc=obj.get("rfc", ""),
            bit_offset=obj.get("bit_offset"),
            bit_length=obj.get("bit_length"),
        )


@dataclass(slots=True, kw_only=True)
class Event:
    """One step of a trace. See the module docstring and docs/events.md.

    Read-only by convention: the trace store, the replay engine and the web UI share these
    objects, so nothing changes an event once recorded (`dataclasses.replace` makes a
    changed copy). It is not a frozen dataclass only because making a frozen one costs
    three times as long, and a recorded exchange makes tens of thousands of them.
    """

    #: Position in the trace: 0, 1, 2, ...
    seq: int
    #: Milliseconds: a virtual clock in lessons, the wall clock in live captures.
    time: float
    #: "client" or "server": whose view this event is.
    endpoint: str
    #: "http3", "qpack" or "transport".
    category: str
    #: qlog-style event name, e.g. "frame_parsed", "instruction_created".
    name: str
    #: The QUIC stream the event belongs to, or None for connection-wide state.
    stream_id: int | None
    #: qlog-compatible payload.
    data: dict[str, Any]
    #: The exact bytes of this unit on the wire.
    raw: bytes = b""
    #: Labels for every byte of ``raw``.
    fields: tuple[FieldSpan, ...] = ()
    #: Governing sections, e.g. ("9204#4.3.2",).
    rfc: tuple[str, ...] = ()
    #: One readable line.
    summary: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "time": self.time,
            "endpoint": self.endpoint,
            "category": self.category,
            "name": self.name,
            "stream_id": self.stream_id,
            "data": self.data,
            "raw": self.raw.hex(),
            "fields": [span.to_json() for span in self.fields],
            "rfc": list(self.rfc),
            "summary": self.summary,
        }

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Event:
        return cls(
            seq=obj["seq"],
            time=obj["time"],
            endpoint=obj["endpoint"],
            category=obj["category"],
            name=obj["name"],
            stream_id=obj.get("stream_id"),
            data=obj.get("data", {}),
            raw=bytes.fromhex(obj.get("raw", "")),
            fields=tuple(FieldSpan.from_json(span) for span in obj.get("fields", [])),
            rfc=tuple(obj.get("rfc", [])),
            summary=obj.get("summary", ""),
        )


class Recorder(Protocol):
    """Where a protocol component reports what it does.

    Components hold a recorder bound to their endpoint and call `record`. ``enabled`` lets a
    component skip building labels nobody will read (benchmarks run with recording off).
    """

    enabled: bool

    def record(
        self,
        *,
        category: str,
        name: str,
        stream_id: int | None,
        data: dict[str, Any],
        raw: bytes = b"",
        fields: tuple[FieldSpan, ...] = (),
        rfc: tuple[str, ...] = (),
        summary: str = "",
    ) -> None: ...


class NullRecorder:
    """A recorder that keeps nothing: recording switched off."""

    enabled = False

    def record(
        self,
        *,
        category: str,
        name: str,
        stream_id: int | None,
        data: dict[str, Any],
        raw: bytes = b"",
        fields: tuple[FieldSpan, ...] = (),
        rfc: tuple[str, ...] = (),
        summary: str = "",
    ) -> None:
        return None


@dataclass
class EventLog:
    """The ordered events of one exchange, with the clock that stamps them.

    Both endpoints of an exchange record into one log (through `for_endpoint`), so the
    sequence numbers give one total order a learner can step through. ``clock`` returns the
    current time in milliseconds; lessons use a virtual clock, live captures the wall clock.
    ``listeners`` are called with every new event (the live trace writer, Socket.IO).
    """

    clock: Callable[[], float] = lambda: 0.0
    events: list[Event] = field(default_factory=list)
    listeners: list[Callable[[Event], None]] = field(default_factory=list)

    def for_endpoint(self, endpoint: str) -> EndpointRecorder:
        if endpoint not in ENDPOINTS:
            raise ValueError(f"endpoint must be one of {ENDPOINTS}, not {endpoint!r}")
        return EndpointRecorder(self, endpoint)

    def append(self, event: Event) -> None:
        self.events.append(event)
        for listener in self.listeners:
            listener(event)


class EndpointRecorder:
    """A `Recorder` that stamps events with one endpoint's name and the log's clock."""

    enabled = True

    def __init__(self, log: EventLog, endpoint: str) -> None:
        self.log = log
        self.endpoint = endpoint

    def record(
        self,
        *,
        category: str,
        name: str,
        stream_id: int | None,
        data: dict[str, Any],
        raw: bytes = b"",
        fields: tuple[FieldSpan, ...] = (),
        rfc: tuple[str, ...] = (),
        summary: str = "",
    ) -> None:
        self.log.append(
            Event(
                seq=len(self.log.events),
                time=self.log.clock(),
                endpoint=self.endpoint,
                category=category,
                name=name,
                stream_id=stream_id,
                data=data,
                raw=raw,
                fields=fields,
                rfc=rfc,
                summary=summary,
            )
        )
