"""RFC 9204 §4.4: decoder instructions, sent by a decoder on its decoder stream.

They tell the encoder what the decoder has done, so the encoder knows which dynamic table
entries the decoder has (and may be referenced without risk of blocking) and which ones are
no longer referenced (and may be evicted):

    1 stream_id(7)     Section Acknowledgment  (§4.4.1): a field section was decoded
    0 1 stream_id(6)   Stream Cancellation     (§4.4.2): a stream was abandoned
    0 0 increment(6)   Insert Count Increment  (§4.4.3): this many more inserts received
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from h3learn.wire.spans import SpanReader, SpanWriter

EXPLAIN_ACKNOWLEDGED_STREAM = (
    "The stream whose field section was decoded; the oldest unacknowledged section on it "
    "is acknowledged."
)
EXPLAIN_CANCELLED_STREAM = "The stream the decoder abandoned: its references are released."
EXPLAIN_INCREMENT = "How many more inserts the decoder has received since it last said so."


@dataclass(frozen=True, slots=True)
class SectionAcknowledgment:
    """RFC 9204 §4.4.1: ``1`` then the stream id as a 7-bit prefixed integer."""

    stream_id: int

    qlog_type = "section_acknowledgement"
    section = "9204#4.4.1"

    def serialize(self, writer: SpanWriter) -> None:
        writer.bits(0b1, 1, "instruction: Section Acknowledgment", "Pattern 1.", "9204#4.4.1")
        writer.integer(self.stream_id, "Stream ID", EXPLAIN_ACKNOWLEDGED_STREAM, "9204#4.4.1")

    def describe(self) -> str:
        return f"Section Acknowledgment (stream {self.stream_id})"

    def qlog(self) -> dict[str, Any]:
        return {"instruction_type": self.qlog_type, "stream_id": self.stream_id}


@dataclass(frozen=True, slots=True)
class StreamCancellation:
    """RFC 9204 §4.4.2: ``01`` then the stream id as a 6-bit prefixed integer."""

    stream_id: int

    qlog_type = "stream_cancellation"
    section = "9204#4.4.2"

    def serialize(self, writer: SpanWriter) -> None:
        writer.bits(0b01, 2, "instruction: Stream Cancellation", "Pattern 01.", "9204#4.4.2")
        writer.integer(self.stream_id, "Stream ID", EXPLAIN_CANCELLED_STREAM, "9204#4.4.2")

    def describe(self) -> str:
        return f"Stream Cancellation (stream {self.stream_id})"

    def qlog(self) -> dict[str, Any]:
        return {"instruction_type": self.qlog_type, "stream_id": self.stream_id}


@dataclass(frozen=True, slots=True)
class InsertCountIncrement:
    """RFC 9204 §4.4.3: ``00`` then the increment as a 6-bit prefixed integer."""

    increment: int

    qlog_type = "insert_count_increment"
    section = "9204#4.4.3"

    def serialize(self, writer: SpanWriter) -> None:
        writer.bits(0b00, 2, "instruction: Insert Count Increment", "Pattern 00.", "9204#4.4.3")
        writer.integer(self.increment, "Increment", EXPLAIN_INCREMENT, "9204#4.4.3")

    def describe(self) -> str:
        return f"Insert Count Increment {self.increment}"

    def qlog(self) -> dict[str, Any]:
        return {"instruction_type": self.qlog_type, "increment": self.increment}


DecoderInstruction = SectionAcknowledgment | StreamCancellation | InsertCountIncrement

SECTION_ACKNOWLEDGMENT_BIT = 0b1000_0000  # 1xxxxxxx
STREAM_CANCELLATION_BIT = 0b0100_0000  # 01xxxxxx


def parse_decoder_instruction(reader: SpanReader) -> DecoderInstruction:
    """Read one decoder instruction; raises NeedMoreData if it is not all there yet."""
    first = reader.peek_byte()
    if first & SECTION_ACKNOWLEDGMENT_BIT:
        reader.bits(1, "instruction: Section Acknowledgment", "Pattern 1.", "9204#4.4.1")
        return SectionAcknowledgment(
            reader.integer("Stream ID", EXPLAIN_ACKNOWLEDGED_STREAM, "9204#4.4.1")
        )
    if first & STREAM_CANCELLATION_BIT:
        reader.bits(2, "instruction: Stream Cancellation", "Pattern 01.", "9204#4.4.2")
        return StreamCancellation(
            reader.integer("Stream ID", EXPLAIN_CANCELLED_STREAM, "9204#4.4.2")
        )
    reader.bits(2, "instruction: Insert Count Increment", "Pattern 00.", "9204#4.4.3")
    return InsertCountIncrement(reader.integer("Increment", EXPLAIN_INCREMENT, "9204#4.4.3"))
