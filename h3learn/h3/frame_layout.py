"""RFC 9114 §7.1: the layout every HTTP/3 frame shares, and the registry of frame types.

Whatever the frame, its bytes start the same way (RFC 9114 §7.1):

    HTTP/3 Frame Format {
      Type (i),              which frame this is
      Length (i),            the number of bytes in the payload
      Frame Payload (..),    the fields that frame type defines, and nothing else
    }

The frame types are an IANA registry (RFC 9114 §11.2.1, with PRIORITY_UPDATE added by
RFC 9218 §16), kept here as `FrameType`. A type that is not registered is one of three things:

- reserved, ``0x1f * N + 0x21``: it carries no meaning, may be sent on any stream, and the
  receiver skips it (RFC 9114 §7.2.8);
- one HTTP/2 had (PRIORITY, PING, WINDOW_UPDATE, CONTINUATION): no endpoint may send it, and
  receiving it is H3_FRAME_UNEXPECTED (RFC 9114 §7.2.8);
- anything else: unknown, and skipped like a reserved type (RFC 9114 §9).

This module also holds what every frame uses to write and read that layout: the Type and
Length fields with their labels (`write_frame_header`, `FrameReader`), their sizes
(`header_size`, `raw_info`), and the helpers that turn bytes into a label's value. The
frames themselves are in `h3learn.h3.frames`, and the parser that cuts a stream into frames
is in `h3learn.h3.frame_parser`.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import IntEnum

from h3learn.h3.errors import ErrorCode, H3ConnectionError, is_reserved
from h3learn.h3.registry import Registry
from h3learn.h3.varint_fields import (
    VarintLengths,
    encoded_size,
    lengths_as_received,
    peek_varint,
    read_varint,
    write_varint,
)
from h3learn.wire.errors import NeedMoreData
from h3learn.wire.spans import SpanReader, SpanWriter, display


class FrameType(IntEnum):
    """The "HTTP/3 Frame Types" registry (RFC 9114 §11.2.1, RFC 9218 §16)."""

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


# -- labels shared by every frame ------------------------------------------------------------

EXPLAIN_LENGTH = "Length of the Frame Payload in bytes."

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
