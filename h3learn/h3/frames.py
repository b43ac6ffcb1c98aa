"""RFC 9114 §7.2: frame definitions, and the §7.1 layout every frame shares.

Every HTTP/3 frame has the same three parts (RFC 9114 §7.1):

    HTTP/3 Frame Format {
      Type (i),              what kind of frame this is
      Length (i),            how many bytes the payload has
      Frame Payload (..),    exactly the fields the frame type defines, nothing more
    }

    type      frame            payload                                       defined in
    0x00      DATA             Data (..)                                     RFC 9114 §7.2.1
    0x01      HEADERS          Encoded Field Section (..)                    RFC 9114 §7.2.2
    0x03      CANCEL_PUSH      Push ID (i)                                   RFC 9114 §7.2.3
    0x04      SETTINGS         (Identifier (i), Value (i)) ...               RFC 9114 §7.2.4
    0x05      PUSH_PROMISE     Push ID (i), Encoded Field Section (..)       RFC 9114 §7.2.5
    0x07      GOAWAY           Stream ID/Push ID (i)                         RFC 9114 §7.2.6
    0x0d      MAX_PUSH_ID      Push ID (i)                                   RFC 9114 §7.2.7
    0xf0700   PRIORITY_UPDATE  Prioritized Element ID (i), Priority Field    RFC 9218 §7.2
    0xf0701                    Value (..)  (for a request / for a push)

Types ``0x1f * N + 0x21`` are reserved: they mean nothing, may appear on any stream, and are
ignored (RFC 9114 §7.2.8). Any other unknown type is ignored too (RFC 9114 §9). The types
HTTP/2 used for frames HTTP/3 dropped (PRIORITY, PING, WINDOW_UPDATE, CONTINUATION) must
never be sent; receiving one is H3_FRAME_UNEXPECTED (RFC 9114 §7.2.8).

Each frame is a frozen dataclass with ``serialize(writer)``, ``describe()`` and ``qlog()``.
``varint_lengths`` records, in wire order (Type, Length, then the payload's integers), how
many bytes each variable-length integer took when the sender used a longer form than needed
(RFC 9000 §16 allows it); None means every one was the shortest. Parsing stores it, so
serialising a parsed frame reproduces its bytes exactly. The incremental parser that cuts a
stream into frames is in `h3learn.h3.frame_parser`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from h3learn.events import FieldSpan
from h3learn.h3.errors import ErrorCode, H3ConnectionError, is_reserved
from h3learn.h3.registry import Registry
from h3learn.h3.settings import (
    explain_setting_identifier,
    explain_setting_value,
    qlog_setting,
    setting_name,
)
from h3learn.h3.stream_types import StreamKind
from h3learn.h3.varint_fields import (
    VarintLengths,
    encoded_size,
    lengths_as_received,
    lengths_to_write,
    peek_varint,
    read_varint,
    write_varint,
)
from h3learn.wire.errors import NeedMoreData
from h3learn.wire.spans import SpanReader, SpanWriter, display


class FrameType(IntEnum):
    """The "HTTP/3 Frame Types" registry (RFC 9114 §11.2.1, RFC 9218 §9)."""

    DATA = 0x00
    HEADERS = 0x01
    CANCEL_PUSH = 0x03
    SETTINGS = 0x04
    PUSH_PROMISE = 0x05
    GOAWAY = 0x07
    MAX_PUSH_ID = 0x0D
    #: IANA registers both values under the one name PRIORITY_UPDATE.
    PRIORITY_UPDATE_REQUEST = 0xF0700
    PRIORITY_UPDATE_PUSH = 0xF0701


#: RFC 9114 §7.2.8, Appendix A.2: HTTP/2 frame types with no HTTP/3 frame. Never sent;
#: receiving one is a connection error of type H3_FRAME_UNEXPECTED.
HTTP2_ONLY_FRAME_TYPES: dict[int, str] = {
    0x02: "PRIORITY",
    0x06: "PING",
    0x08: "WINDOW_UPDATE",
    0x09: "CONTINUATION",
}

#: What each frame does, and the section that defines it.
FRAME_INFO: dict[FrameType, tuple[str, str]] = {
    FrameType.DATA: ("carries request or response content", "9114#7.2.1"),
    FrameType.HEADERS: ("carries a QPACK-encoded field section", "9114#7.2.2"),
    FrameType.CANCEL_PUSH: ("cancels a server push", "9114#7.2.3"),
    FrameType.SETTINGS: (
        "announces the sender's settings, once, as the first frame of its control stream",
        "9114#7.2.4",
    ),
    FrameType.PUSH_PROMISE: ("promises a server push, carrying the promised request", "9114#7.2.5"),
    FrameType.GOAWAY: ("starts a graceful shutdown of the connection", "9114#7.2.6"),
    FrameType.MAX_PUSH_ID: ("raises the largest push ID the server may use", "9114#7.2.7"),
    FrameType.PRIORITY_UPDATE_REQUEST: ("changes the priority of a request", "9218#7.2"),
    FrameType.PRIORITY_UPDATE_PUSH: ("changes the priority of a server push", "9218#7.2"),
}


FRAME_TYPES = Registry(FrameType, "frame type", HTTP2_ONLY_FRAME_TYPES)
known_frame_type = FRAME_TYPES.known


def is_reserved_frame_type(frame_type: int) -> bool:
    """RFC 9114 §7.2.8: ``0x1f * N + 0x21`` types are reserved and carry no meaning."""
    return is_reserved(frame_type)


def is_extension_frame_type(frame_type: int) -> bool:
    """A type an endpoint may send for its peer to ignore: reserved or unknown (RFC 9114 §9).

    Not a registered type (each has its own frame class) and not one of HTTP/2's, which
    RFC 9114 §7.2.8 forbids sending.
    """
    return known_frame_type(frame_type) is None and frame_type not in HTTP2_ONLY_FRAME_TYPES


def frame_type_name(frame_type: int) -> str:
    """e.g. "SETTINGS", "PRIORITY_UPDATE", "PING (HTTP/2 only)", "reserved frame type 0x21"."""
    known = known_frame_type(frame_type)
    if known in (FrameType.PRIORITY_UPDATE_REQUEST, FrameType.PRIORITY_UPDATE_PUSH):
        return "PRIORITY_UPDATE"
    return FRAME_TYPES.name(frame_type)


def frame_section(frame_type: int) -> str:
    """The section that governs a frame type, written ``9114#7.2.4``."""
    known = known_frame_type(frame_type)
    if known is not None:
        return FRAME_INFO[known][1]
    if frame_type in HTTP2_ONLY_FRAME_TYPES or is_reserved_frame_type(frame_type):
        return "9114#7.2.8"
    return "9114#9"


# -- labels for the fields of every frame ------------------------------------------------

EXPLAIN_LENGTH = "Length of the Frame Payload in bytes."
EXPLAIN_DATA = "Content of the request or response; HTTP/3 gives these bytes no structure."
EXPLAIN_FIELD_SECTION = (
    "The QPACK-encoded field section (RFC 9204 §4.5); the QPACK layer labels its bytes."
)
EXPLAIN_CANCEL_PUSH_ID = "The push ID of the server push being cancelled."
EXPLAIN_PROMISED_PUSH_ID = "The push ID of the promised push; a push stream will carry it."
EXPLAIN_PROMISED_SECTION = "The promised request's header section, QPACK-encoded (RFC 9204 §4.5)."
EXPLAIN_GOAWAY_ID = (
    "From a server: the first request stream ID it will not process. From a client: the "
    "first push ID it will not accept. Lower IDs may still complete."
)
EXPLAIN_MAX_PUSH_ID = "The largest push ID the server may now use; it can only grow."
EXPLAIN_ELEMENT_ID = {
    False: "The stream ID of the request whose priority changes.",
    True: "The push ID of the server push whose priority changes.",
}
EXPLAIN_PRIORITY_FIELD_VALUE = (
    "The new priority in the Priority header field's syntax (RFC 9218 §4), as ASCII text."
)
EXPLAIN_UNKNOWN_PAYLOAD = "A payload the receiver skips: the frame type has no meaning here."
EXPLAIN_HTTP2_PAYLOAD = (
    "Never read: an HTTP/2-only frame type is a connection error (H3_FRAME_UNEXPECTED)"
    " as soon as its type is seen (RFC 9114 §7.2.8)."
)


def explain_payload(frame_type: int) -> str:
    """What happens to the payload of a frame type HTTP/3 does not define."""
    if frame_type in HTTP2_ONLY_FRAME_TYPES:
        return EXPLAIN_HTTP2_PAYLOAD
    return EXPLAIN_UNKNOWN_PAYLOAD


#: How much of a long payload the label's value shows.
PREVIEW_LIMIT = 64


def count_bytes(count: int) -> str:
    """A count with its unit: "1 byte", "2 bytes"."""
    return f"{count} byte" if count == 1 else f"{count} bytes"


def text_preview(octets: bytes) -> str:
    """Bytes as readable text, cut after PREVIEW_LIMIT bytes."""
    more = "…" if len(octets) > PREVIEW_LIMIT else ""
    return display(octets[:PREVIEW_LIMIT]) + more


def hex_preview(octets: bytes) -> str:
    """Bytes as hex, cut after PREVIEW_LIMIT bytes."""
    more = "…" if len(octets) > PREVIEW_LIMIT else ""
    return octets[:PREVIEW_LIMIT].hex() + more


def explain_frame_type(frame_type: int) -> str:
    """One sentence for the label of a frame's Type field."""
    known = known_frame_type(frame_type)
    if known is not None:
        purpose, _ = FRAME_INFO[known]
        return f"Frame type {frame_type:#04x} is {frame_type_name(frame_type)}: it {purpose}."
    if frame_type in HTTP2_ONLY_FRAME_TYPES:
        return (
            f"Frame type {frame_type:#04x} was HTTP/2's {HTTP2_ONLY_FRAME_TYPES[frame_type]}; "
            "HTTP/3 forbids it (RFC 9114 §7.2.8)."
        )
    if is_reserved_frame_type(frame_type):
        return (
            f"Frame type {frame_type:#x} is reserved (RFC 9114 §7.2.8): it means nothing, and "
            "the receiver skips it."
        )
    return f"Frame type {frame_type:#x} is unknown here, so it is skipped (RFC 9114 §9)."


def write_frame_header(
    writer: SpanWriter, frame_type: int, payload_length: int, lengths: list[int | None]
) -> None:
    """Type and Length (RFC 9114 §7.1), in the lengths given for the first two integers."""
    explain = explain_frame_type(frame_type) if writer.recording else ""
    write_varint(writer, frame_type, "Type", explain, "9114#7.1", lengths[0])
    write_varint(writer, payload_length, "Length", EXPLAIN_LENGTH, "9114#7.1", lengths[1])


def header_size(frame_type: int, payload_length: int, varint_lengths: VarintLengths) -> int:
    """Bytes taken by the Type and Length fields."""
    type_length, length_length = varint_lengths[:2] if varint_lengths else (None, None)
    return encoded_size(frame_type, type_length) + encoded_size(payload_length, length_length)


def raw_info(frame_type: int, payload_length: int, varint_lengths: VarintLengths) -> dict[str, int]:
    """qlog's RawInfo for a frame: its whole length and its payload's length."""
    total = header_size(frame_type, payload_length, varint_lengths) + payload_length
    return {"length": total, "payload_length": payload_length}


class FrameReader:
    """Reads the fields of one whole frame (RFC 9114 §7.1); a field cut short is H3_FRAME_ERROR.

    It also notes each variable-length integer's value and encoded length, for the frame's
    ``varint_lengths``.
    """

    def __init__(self, raw: bytes, record: bool) -> None:
        self.raw = raw
        self.reader = SpanReader(raw, record=record)
        self.values: list[int] = []
        self.lengths: list[int] = []
        self.frame_type = 0
        #: How far the reading got, for error messages: the Type, the Length, the payload.
        self.type_read = False
        self.in_payload = False

    @property
    def part(self) -> str:
        """What is being read, for error messages: "frame", then e.g. "GOAWAY payload"."""
        if not self.type_read:
            return "frame"
        name = frame_type_name(self.frame_type)
        return f"{name} payload" if self.in_payload else f"{name} frame"

    def varint(self, name: str, explain: str | Callable[[int], str], rfc: str) -> int:
        try:
            if callable(explain):  # an explanation that depends on the value
                explain = explain(peek_varint(self.reader)[0]) if self.reader.recording else ""
            value, length = read_varint(self.reader, name, explain, rfc)
        except NeedMoreData:
            raise H3ConnectionError(
                ErrorCode.H3_FRAME_ERROR,
                f"the {self.part} ends inside its {name} field",
                "9114#7.1",
            ) from None
        self.values.append(value)
        self.lengths.append(length)
        return value

    def rest(self, name: str, explain: str, rfc: str, preview: Callable[[bytes], str]) -> bytes:
        """Everything left in the payload, as one field."""
        octets = self.raw[self.reader.position :]
        return self.reader.raw(len(octets), name, explain, rfc, preview)

    def at_end(self) -> bool:
        return self.reader.at_end()

    def expect_end(self, last_field: str) -> None:
        """RFC 9114 §7.1: bytes after the last field make the frame malformed."""
        left = len(self.raw) - self.reader.position
        if left:
            raise H3ConnectionError(
                ErrorCode.H3_FRAME_ERROR,
                f"the {self.part} has {count_bytes(left)} left over after its {last_field} field",
                "9114#7.1",
            )

    def varint_lengths(self) -> VarintLengths:
        return lengths_as_received(self.values, self.lengths)


# -- the frames ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DataFrame:
    """RFC 9114 §7.2.1: ``DATA { Type = 0x00, Length, Data (..) }``."""

    data: bytes
    varint_lengths: VarintLengths = None

    frame_type = FrameType.DATA
    section = "9114#7.2.1"

    def payload_length(self) -> int:
        return len(self.data)

    def serialize(self, writer: SpanWriter) -> None:
        lengths = lengths_to_write(self.varint_lengths, 2)
        write_frame_header(writer, self.frame_type, self.payload_length(), lengths)
        writer.raw(self.data, "Data", EXPLAIN_DATA, self.section, text_preview)

    @classmethod
    def parse_payload(cls, payload: FrameReader) -> DataFrame:
        data = payload.rest("Data", EXPLAIN_DATA, cls.section, text_preview)
        return cls(data, payload.varint_lengths())

    def describe(self) -> str:
        return f"DATA ({len(self.data)} bytes)"

    def qlog(self) -> dict[str, Any]:
        raw = raw_info(self.frame_type, self.payload_length(), self.varint_lengths)
        return {"frame_type": "data", "raw": raw}


@dataclass(frozen=True, slots=True)
class HeadersFrame:
    """RFC 9114 §7.2.2: ``HEADERS { Type = 0x01, Length, Encoded Field Section (..) }``."""

    field_section: bytes
    varint_lengths: VarintLengths = None

    frame_type = FrameType.HEADERS
    section = "9114#7.2.2"

    def payload_length(self) -> int:
        return len(self.field_section)

    def serialize(self, writer: SpanWriter) -> None:
        lengths = lengths_to_write(self.varint_lengths, 2)
        write_frame_header(writer, self.frame_type, self.payload_length(), lengths)
        writer.raw(
            self.field_section,
            "Encoded Field Section",
            EXPLAIN_FIELD_SECTION,
            self.section,
            hex_preview,
        )

    @classmethod
    def parse_payload(cls, payload: FrameReader) -> HeadersFrame:
        section = payload.rest(
            "Encoded Field Section", EXPLAIN_FIELD_SECTION, cls.section, hex_preview
        )
        return cls(section, payload.varint_lengths())

    def describe(self) -> str:
        return f"HEADERS (field section of {len(self.field_section)} bytes)"

    def qlog(self) -> dict[str, Any]:
        """qlog's HEADERS frame; the decoded ``headers`` list is added after QPACK decoding."""
        raw = raw_info(self.frame_type, self.payload_length(), self.varint_lengths)
        return {"frame_type": "headers", "raw": raw}


@dataclass(frozen=True, slots=True)
class CancelPushFrame:
    """RFC 9114 §7.2.3: ``CANCEL_PUSH { Type = 0x03, Length, Push ID (i) }``."""

    push_id: int
    varint_lengths: VarintLengths = None

    frame_type = FrameType.CANCEL_PUSH
    section = "9114#7.2.3"

    def payload_length(self) -> int:
        return encoded_size(self.push_id, lengths_to_write(self.varint_lengths, 3)[2])

    def serialize(self, writer: SpanWriter) -> None:
        lengths = lengths_to_write(self.varint_lengths, 3)
        write_frame_header(writer, self.frame_type, self.payload_length(), lengths)
        write_varint(
            writer, self.push_id, "Push ID", EXPLAIN_CANCEL_PUSH_ID, self.section, lengths[2]
        )

    @classmethod
    def parse_payload(cls, payload: FrameReader) -> CancelPushFrame:
        push_id = payload.varint("Push ID", EXPLAIN_CANCEL_PUSH_ID, cls.section)
        payload.expect_end("Push ID")
        return cls(push_id, payload.varint_lengths())

    def describe(self) -> str:
        return f"CANCEL_PUSH (push ID {self.push_id})"

    def qlog(self) -> dict[str, Any]:
        raw = raw_info(self.frame_type, self.payload_length(), self.varint_lengths)
        return {"frame_type": "cancel_push", "push_id": self.push_id, "raw": raw}


@dataclass(frozen=True, slots=True)
class SettingsFrame:
    """RFC 9114 §7.2.4: ``SETTINGS { Type = 0x04, Length, (Identifier (i), Value (i)) ... }``.

    ``settings`` keeps the pairs as sent, in order, including ones a receiver rejects or
    ignores; `h3learn.h3.settings.Settings.from_frame` applies the rules.
    """

    settings: tuple[tuple[int, int], ...] = ()
    varint_lengths: VarintLengths = None

    frame_type = FrameType.SETTINGS
    section = "9114#7.2.4"

    def _lengths(self) -> list[int | None]:
        return lengths_to_write(self.varint_lengths, 2 + 2 * len(self.settings))

    def payload_length(self) -> int:
        lengths = self._lengths()
        return sum(
            encoded_size(identifier, lengths[2 + 2 * index])
            + encoded_size(value, lengths[3 + 2 * index])
            for index, (identifier, value) in enumerate(self.settings)
        )

    def serialize(self, writer: SpanWriter) -> None:
        lengths = self._lengths()
        write_frame_header(writer, self.frame_type, self.payload_length(), lengths)
        for index, (identifier, value) in enumerate(self.settings):
            write_varint(
                writer,
                identifier,
                "Identifier",
                explain_setting_identifier(identifier),
                "9114#7.2.4.1",
                lengths[2 + 2 * index],
            )
            write_varint(
                writer,
                value,
                "Value",
                explain_setting_value(identifier),
                "9114#7.2.4.1",
                lengths[3 + 2 * index],
            )

    @classmethod
    def parse_payload(cls, payload: FrameReader) -> SettingsFrame:
        settings: list[tuple[int, int]] = []
        while not payload.at_end():
            identifier = payload.varint("Identifier", explain_setting_identifier, "9114#7.2.4.1")
            value = payload.varint("Value", explain_setting_value(identifier), "9114#7.2.4.1")
            settings.append((identifier, value))
        return cls(tuple(settings), payload.varint_lengths())

    def describe(self) -> str:
        pairs = ", ".join(f"{setting_name(i)}={value}" for i, value in self.settings)
        return f"SETTINGS ({pairs})" if pairs else "SETTINGS (empty: every setting at its default)"

    def qlog(self) -> dict[str, Any]:
        raw = raw_info(self.frame_type, self.payload_length(), self.varint_lengths)
        settings = [qlog_setting(identifier, value) for identifier, value in self.settings]
        return {"frame_type": "settings", "settings": settings, "raw": raw}


@dataclass(frozen=True, slots=True)
class PushPromiseFrame:
    """RFC 9114 §7.2.5: ``PUSH_PROMISE { Type = 0x05, Length, Push ID (i), Encoded Field
    Section (..) }``."""

    push_id: int
    field_section: bytes
    varint_lengths: VarintLengths = None

    frame_type = FrameType.PUSH_PROMISE
    section = "9114#7.2.5"

    def payload_length(self) -> int:
        push_id_length = lengths_to_write(self.varint_lengths, 3)[2]
        return encoded_size(self.push_id, push_id_length) + len(self.field_section)

    def serialize(self, writer: SpanWriter) -> None:
        lengths = lengths_to_write(self.varint_lengths, 3)
        write_frame_header(writer, self.frame_type, self.payload_length(), lengths)
        write_varint(
            writer, self.push_id, "Push ID", EXPLAIN_PROMISED_PUSH_ID, self.section, lengths[2]
        )
        writer.raw(
            self.field_section,
            "Encoded Field Section",
            EXPLAIN_PROMISED_SECTION,
            self.section,
            hex_preview,
        )

    @classmethod
    def parse_payload(cls, payload: FrameReader) -> PushPromiseFrame:
        push_id = payload.varint("Push ID", EXPLAIN_PROMISED_PUSH_ID, cls.section)
        section = payload.rest(
            "Encoded Field Section", EXPLAIN_PROMISED_SECTION, cls.section, hex_preview
        )
        return cls(push_id, section, payload.varint_lengths())

    def describe(self) -> str:
        return (
            f"PUSH_PROMISE (push ID {self.push_id}, field section of "
            f"{len(self.field_section)} bytes)"
        )

    def qlog(self) -> dict[str, Any]:
        """qlog's PUSH_PROMISE frame; ``headers`` is added after QPACK decoding."""
        raw = raw_info(self.frame_type, self.payload_length(), self.varint_lengths)
        return {"frame_type": "push_promise", "push_id": self.push_id, "raw": raw}


@dataclass(frozen=True, slots=True)
class GoawayFrame:
    """RFC 9114 §7.2.6: ``GOAWAY { Type = 0x07, Length, Stream ID/Push ID (i) }``."""

    id: int
    varint_lengths: VarintLengths = None

    frame_type = FrameType.GOAWAY
    section = "9114#7.2.6"

    def payload_length(self) -> int:
        return encoded_size(self.id, lengths_to_write(self.varint_lengths, 3)[2])

    def serialize(self, writer: SpanWriter) -> None:
        lengths = lengths_to_write(self.varint_lengths, 3)
        write_frame_header(writer, self.frame_type, self.payload_length(), lengths)
        write_varint(
            writer, self.id, "Stream ID/Push ID", EXPLAIN_GOAWAY_ID, self.section, lengths[2]
        )

    @classmethod
    def parse_payload(cls, payload: FrameReader) -> GoawayFrame:
        identifier = payload.varint("Stream ID/Push ID", EXPLAIN_GOAWAY_ID, cls.section)
        payload.expect_end("Stream ID/Push ID")
        return cls(identifier, payload.varint_lengths())

    def describe(self) -> str:
        return f"GOAWAY (ID {self.id})"

    def qlog(self) -> dict[str, Any]:
        raw = raw_info(self.frame_type, self.payload_length(), self.varint_lengths)
        return {"frame_type": "goaway", "id": self.id, "raw": raw}


@dataclass(frozen=True, slots=True)
class MaxPushIdFrame:
    """RFC 9114 §7.2.7: ``MAX_PUSH_ID { Type = 0x0d, Length, Push ID (i) }``."""

    push_id: int
    varint_lengths: VarintLengths = None

    frame_type = FrameType.MAX_PUSH_ID
    section = "9114#7.2.7"

    def payload_length(self) -> int:
        return encoded_size(self.push_id, lengths_to_write(self.varint_lengths, 3)[2])

    def serialize(self, writer: SpanWriter) -> None:
        lengths = lengths_to_write(self.varint_lengths, 3)
        write_frame_header(writer, self.frame_type, self.payload_length(), lengths)
        write_varint(writer, self.push_id, "Push ID", EXPLAIN_MAX_PUSH_ID, self.section, lengths[2])

    @classmethod
    def parse_payload(cls, payload: FrameReader) -> MaxPushIdFrame:
        push_id = payload.varint("Push ID", EXPLAIN_MAX_PUSH_ID, cls.section)
        payload.expect_end("Push ID")
        return cls(push_id, payload.varint_lengths())

    def describe(self) -> str:
        return f"MAX_PUSH_ID (push ID {self.push_id})"

    def qlog(self) -> dict[str, Any]:
        raw = raw_info(self.frame_type, self.payload_length(), self.varint_lengths)
        return {"frame_type": "max_push_id", "push_id": self.push_id, "raw": raw}


@dataclass(frozen=True, slots=True)
class PriorityUpdateFrame:
    """RFC 9218 §7.2: ``PRIORITY_UPDATE { Type = 0xf0700..0xf0701, Length, Prioritized
    Element ID (i), Priority Field Value (..) }``.

    ``push`` False (type 0xf0700): ``element_id`` is a request's stream ID; True (0xf0701):
    a push ID. ``priority_field_value`` is ASCII text such as ``b"u=1, i"``.
    """

    element_id: int
    priority_field_value: bytes
    push: bool = False
    varint_lengths: VarintLengths = None

    section = "9218#7.2"

    @property
    def frame_type(self) -> FrameType:
        if self.push:
            return FrameType.PRIORITY_UPDATE_PUSH
        return FrameType.PRIORITY_UPDATE_REQUEST

    def payload_length(self) -> int:
        element_id_length = lengths_to_write(self.varint_lengths, 3)[2]
        return encoded_size(self.element_id, element_id_length) + len(self.priority_field_value)

    def serialize(self, writer: SpanWriter) -> None:
        lengths = lengths_to_write(self.varint_lengths, 3)
        write_frame_header(writer, self.frame_type, self.payload_length(), lengths)
        write_varint(
            writer,
            self.element_id,
            "Prioritized Element ID",
            EXPLAIN_ELEMENT_ID[self.push],
            self.section,
            lengths[2],
        )
        writer.raw(
            self.priority_field_value,
            "Priority Field Value",
            EXPLAIN_PRIORITY_FIELD_VALUE,
            self.section,
            text_preview,
        )

    @classmethod
    def parse_payload(cls, payload: FrameReader) -> PriorityUpdateFrame:
        push = payload.frame_type == FrameType.PRIORITY_UPDATE_PUSH
        element_id = payload.varint("Prioritized Element ID", EXPLAIN_ELEMENT_ID[push], cls.section)
        value = payload.rest(
            "Priority Field Value", EXPLAIN_PRIORITY_FIELD_VALUE, cls.section, text_preview
        )
        return cls(element_id, value, push, payload.varint_lengths())

    def describe(self) -> str:
        target = f"push ID {self.element_id}" if self.push else f"stream {self.element_id}"
        return f"PRIORITY_UPDATE ({target}: {display(self.priority_field_value)!r})"

    def qlog(self) -> dict[str, Any]:
        raw = raw_info(self.frame_type, self.payload_length(), self.varint_lengths)
        target = "push_id" if self.push else "stream_id"
        return {
            "frame_type": "priority_update",
            target: self.element_id,
            "priority_field_value": display(self.priority_field_value),
            "raw": raw,
        }


@dataclass(frozen=True, slots=True)
class UnknownFrame:
    """A frame of a reserved (RFC 9114 §7.2.8) or unknown (RFC 9114 §9) type: skipped.

    ``frame_type`` may be any value FrameType does not define. The HTTP/2-only types are
    allowed here so that a lesson can send one and show the error; the parser never
    produces them.
    """

    frame_type: int
    payload: bytes
    varint_lengths: VarintLengths = None

    def __post_init__(self) -> None:
        if known_frame_type(self.frame_type) is not None:
            raise ValueError(f"{frame_type_name(self.frame_type)} has its own frame class")

    @property
    def section(self) -> str:
        return frame_section(self.frame_type)

    def payload_length(self) -> int:
        return len(self.payload)

    def serialize(self, writer: SpanWriter) -> None:
        lengths = lengths_to_write(self.varint_lengths, 2)
        write_frame_header(writer, self.frame_type, self.payload_length(), lengths)
        writer.raw(
            self.payload,
            "Frame Payload",
            explain_payload(self.frame_type),
            self.section,
            hex_preview,
        )

    @classmethod
    def parse_payload(cls, payload: FrameReader) -> UnknownFrame:
        section = frame_section(payload.frame_type)
        octets = payload.rest(
            "Frame Payload", explain_payload(payload.frame_type), section, hex_preview
        )
        return cls(payload.frame_type, octets, payload.varint_lengths())

    def describe(self) -> str:
        fate = "forbidden" if self.frame_type in HTTP2_ONLY_FRAME_TYPES else "ignored"
        return f"{frame_type_name(self.frame_type)} ({len(self.payload)} bytes, {fate})"

    def qlog(self) -> dict[str, Any]:
        raw = raw_info(self.frame_type, self.payload_length(), self.varint_lengths)
        kind = "reserved" if is_reserved_frame_type(self.frame_type) else "unknown"
        return {"frame_type": kind, "frame_type_bytes": self.frame_type, "raw": raw}


Frame = (
    DataFrame
    | HeadersFrame
    | CancelPushFrame
    | SettingsFrame
    | PushPromiseFrame
    | GoawayFrame
    | MaxPushIdFrame
    | PriorityUpdateFrame
    | UnknownFrame
)


#: The class that reads each frame type's payload; any other type is an UnknownFrame.
FRAME_CLASSES: dict[FrameType, type[Frame]] = {
    FrameType.DATA: DataFrame,
    FrameType.HEADERS: HeadersFrame,
    FrameType.CANCEL_PUSH: CancelPushFrame,
    FrameType.SETTINGS: SettingsFrame,
    FrameType.PUSH_PROMISE: PushPromiseFrame,
    FrameType.GOAWAY: GoawayFrame,
    FrameType.MAX_PUSH_ID: MaxPushIdFrame,
    FrameType.PRIORITY_UPDATE_REQUEST: PriorityUpdateFrame,
    FrameType.PRIORITY_UPDATE_PUSH: PriorityUpdateFrame,
}


def serialize_frame(frame: Frame, record: bool = True) -> tuple[bytes, tuple[FieldSpan, ...]]:
    """The frame's bytes and (when recording) the label of every byte, from offset 0."""
    writer = SpanWriter(record=record)
    frame.serialize(writer)
    return writer.unit(), writer.field_spans()


# -- which frames may appear where (RFC 9114 §7.2, Table 1; RFC 9218 §7.2) -----------------

_REQUEST_OR_PUSH = frozenset({StreamKind.REQUEST, StreamKind.PUSH})
_CONTROL = frozenset({StreamKind.CONTROL})

#: The stream kinds each frame type may be received on. SETTINGS is allowed on the control
#: stream only as its first frame (RFC 9114 §6.2.1), which the connection checks. Reserved
#: and unknown types may appear on any stream; HTTP/2-only types on none.
ALLOWED_ON: dict[FrameType, frozenset[StreamKind]] = {
    FrameType.DATA: _REQUEST_OR_PUSH,
    FrameType.HEADERS: _REQUEST_OR_PUSH,
    FrameType.CANCEL_PUSH: _CONTROL,
    FrameType.SETTINGS: _CONTROL,
    FrameType.PUSH_PROMISE: frozenset({StreamKind.REQUEST}),
    FrameType.GOAWAY: _CONTROL,
    FrameType.MAX_PUSH_ID: _CONTROL,
    FrameType.PRIORITY_UPDATE_REQUEST: _CONTROL,
    FrameType.PRIORITY_UPDATE_PUSH: _CONTROL,
}

#: Frames only one endpoint may send; every other frame type either may send.
SENT_ONLY_BY: dict[FrameType, tuple[str, str]] = {
    FrameType.PUSH_PROMISE: ("server", "9114#7.2.5"),
    FrameType.MAX_PUSH_ID: ("client", "9114#7.2.7"),
    FrameType.PRIORITY_UPDATE_REQUEST: ("client", "9218#7.2"),
    FrameType.PRIORITY_UPDATE_PUSH: ("client", "9218#7.2"),
}

_STREAM_PHRASE = {
    StreamKind.CONTROL: "the control stream",
    StreamKind.REQUEST: "a request stream",
    StreamKind.PUSH: "a push stream",
}


def check_frame_type_receivable(frame_type: int) -> None:
    """RFC 9114 §7.2.8: raise H3_FRAME_UNEXPECTED for a type HTTP/3 reserved from HTTP/2."""
    if frame_type in HTTP2_ONLY_FRAME_TYPES:
        raise H3ConnectionError(
            ErrorCode.H3_FRAME_UNEXPECTED,
            f"frame type {frame_type:#04x} is HTTP/2's {HTTP2_ONLY_FRAME_TYPES[frame_type]}, "
            "which HTTP/3 reserves and no endpoint may send",
            "9114#7.2.8",
        )


def check_frame_allowed(frame: Frame | int, stream_kind: str, sender: str | None = None) -> None:
    """Raise H3_FRAME_UNEXPECTED if this frame (or frame type) may not arrive on this stream.

    ``stream_kind`` is "control", "request" or "push" (a `StreamKind`). ``sender`` ("client"
    or "server"), when given, also checks the frames only one side may send (PUSH_PROMISE,
    MAX_PUSH_ID, PRIORITY_UPDATE). These are all connection errors (RFC 9114 §7.2.1-§7.2.7,
    and §4.1 for frames out of place on a request or push stream).
    """
    frame_type = frame if isinstance(frame, int) else frame.frame_type
    kind = StreamKind(stream_kind)
    check_frame_type_receivable(frame_type)
    known = known_frame_type(frame_type)
    if known is None:
        return
    allowed = ALLOWED_ON[known]
    if kind in allowed and (sender is None or known not in SENT_ONLY_BY):
        return  # the usual case, decided without building any message text
    name = frame_type_name(frame_type)
    if kind not in allowed:
        where = " or ".join(_STREAM_PHRASE[other] for other in StreamKind if other in allowed)
        raise H3ConnectionError(
            ErrorCode.H3_FRAME_UNEXPECTED,
            f"{name} frame on {_STREAM_PHRASE[kind]}; it may appear only on {where}",
            FRAME_INFO[known][1],
        )
    if sender is not None and known in SENT_ONLY_BY:
        only, section = SENT_ONLY_BY[known]
        if sender != only:
            raise H3ConnectionError(
                ErrorCode.H3_FRAME_UNEXPECTED,
                f"{name} frame sent by the {sender}; only the {only} sends it",
                section,
            )
