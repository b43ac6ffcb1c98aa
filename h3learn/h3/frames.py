"""RFC 9114 §7.2: the frame definitions, one frozen dataclass per frame type.

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

Every payload sits inside the Type and Length fields all frames share (RFC 9114 §7.1, in
`h3learn.h3.frame_layout`). A reserved (RFC 9114 §7.2.8) or unknown (RFC 9114 §9) type
becomes an `UnknownFrame`; PRIORITY_UPDATE, an extension, has its own module
(`h3learn.h3.priority_update`); which frame may arrive on which stream is decided in
`h3learn.h3.frame_placement`.

Each frame has ``serialize(writer)``, ``parse_payload(reader)``, ``describe()`` and
``qlog()``. Its ``varint_lengths`` lists, in wire order (Type, Length, then the integers of
the payload), how many bytes each variable-length integer took, for a sender that chose a
longer encoding than needed (RFC 9000 §16 permits it); None means all were the shortest.
The parser fills it in, so a parsed frame serialises back to exactly the bytes it came from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from h3learn.events import FieldSpan
from h3learn.h3.frame_layout import (
    HTTP2_ONLY_FRAME_TYPES,
    FrameReader,
    FrameType,
    frame_section,
    frame_type_name,
    hex_preview,
    is_reserved_frame_type,
    known_frame_type,
    raw_info,
    text_preview,
    write_frame_header,
)
from h3learn.h3.priority_update import PriorityUpdateFrame
from h3learn.h3.settings import (
    explain_setting_identifier,
    explain_setting_value,
    qlog_setting,
    setting_name,
)
from h3learn.h3.varint_fields import VarintLengths, encoded_size, lengths_to_write, write_varint
from h3learn.wire.spans import SpanWriter

# -- labels for the fields of each frame -----------------------------------------------------

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
EXPLAIN_MAX_PUSH_ID = "The largest push ID the server may now use; it never decreases."
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
class UnknownFrame:
    """A frame of a reserved (RFC 9114 §7.2.8) or unknown (RFC 9114 §9) type: skipped.

    ``frame_type`` may be any value FrameType does not define. The HTTP/2-only types are
    allowed here so that a lesson can send one and show the error; the parser never
    produces them.
    """

    frame_type: int
    payload: bytes
    varint_lengths: VarintLengths = None
    #: Payload bytes dropped as they arrived instead of kept in ``payload``: a payload
    #: larger than the receiver buffers (see `FrameLimits`) is discarded unread.
    discarded: int = 0

    def __post_init__(self) -> None:
        if known_frame_type(self.frame_type) is not None:
            raise ValueError(f"{frame_type_name(self.frame_type)} has its own frame class")

    @property
    def section(self) -> str:
        return frame_section(self.frame_type)

    def payload_length(self) -> int:
        return len(self.payload) + self.discarded

    def serialize(self, writer: SpanWriter) -> None:
        if self.discarded:
            raise ValueError("a frame whose payload was discarded cannot be written again")
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
        if self.discarded:
            fate = "ignored, discarded as it arrived"
        return f"{frame_type_name(self.frame_type)} ({self.payload_length()} bytes, {fate})"

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
