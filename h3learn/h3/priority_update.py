"""RFC 9218 §7.2: the PRIORITY_UPDATE frame, an HTTP/3 extension frame.

RFC 9218 (Extensible Prioritization Scheme for HTTP) lets a client change a priority after
it sent the request: a PRIORITY_UPDATE frame on the control stream names the request (type
0xf0700, by stream ID) or the server push (type 0xf0701, by push ID) and carries the new
priority as text in the syntax of the Priority header field (RFC 9218 §5). The frame has the
layout every HTTP/3 frame shares (RFC 9114 §7.1, in `h3learn.h3.frame_layout`); RFC 9218 §16
registers its two types. Which endpoint may send it, and on which stream, is checked in
`h3learn.h3.frame_placement`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from h3learn.h3.frame_layout import (
    FrameReader,
    FrameType,
    raw_info,
    text_preview,
    write_frame_header,
)
from h3learn.h3.varint_fields import VarintLengths, encoded_size, lengths_to_write, write_varint
from h3learn.wire.spans import SpanWriter, display

EXPLAIN_ELEMENT_ID = {
    False: "The stream ID of the request whose priority changes.",
    True: "The push ID of the server push whose priority changes.",
}
EXPLAIN_PRIORITY_FIELD_VALUE = (
    "The new priority in the Priority header field's syntax (RFC 9218 §5), as ASCII text."
)


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
