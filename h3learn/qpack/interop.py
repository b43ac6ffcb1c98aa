"""The QPACK interop harness: .qif header lists and encoded record files (RFC 9204 §4.5).

The QPACK interop corpus (qpackers/qifs) compares encoders offline. Its two file formats:

- A ``.qif`` file holds field sections as text: one field per line, ``name<TAB>value``; an
  empty line ends a section; a line starting with ``#`` is a comment.
- An encoded file is a sequence of records, each a stream id (64-bit big-endian), a length
  (32-bit big-endian) and that many bytes. Stream 0 is the encoder stream (RFC 9204 §4.2);
  stream N >= 1 carries the encoded field section of the N-th section of the .qif.

`encode_qif` runs h3learn's `Encoder` over a .qif's sections and `decode_records` runs
h3learn's `Decoder` over a record file; the ``h3learn qif`` command and the compression
benchmark are built on them.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

from h3learn.qpack.decoder import Decoder
from h3learn.qpack.encoder import Encoder
from h3learn.qpack.encoder_instructions import SetDynamicTableCapacity
from h3learn.qpack.errors import DecompressionFailed
from h3learn.wire.spans import SpanWriter

Header = tuple[bytes, bytes]
Record = tuple[int, bytes]

#: A record header: stream id (u64) and data length (u32), both big-endian.
RECORD_HEADER = struct.Struct(">QI")
#: The stream id that stands for the encoder stream in a record file.
ENCODER_STREAM = 0


# --- .qif files ---------------------------------------------------------------------------


def parse_qif(data: bytes) -> list[list[Header]]:
    """The field sections of a .qif file's contents."""
    sections: list[list[Header]] = []
    current: list[Header] = []
    for line in data.split(b"\n"):
        if line.startswith(b"#"):
            continue
        if not line:
            if current:
                sections.append(current)
                current = []
            continue
        name, _, value = line.partition(b"\t")
        current.append((name, value))
    if current:
        sections.append(current)
    return sections


def serialize_qif(sections: Sequence[Sequence[Header]]) -> bytes:
    """A .qif file's contents for these field sections."""
    out = bytearray()
    for section in sections:
        for name, value in section:
            out += name + b"\t" + value + b"\n"
        out += b"\n"
    return bytes(out)


# --- record files -------------------------------------------------------------------------


def read_records(data: bytes) -> list[Record]:
    """The (stream id, data) records of an encoded file."""
    records: list[Record] = []
    position = 0
    while position < len(data):
        if position + RECORD_HEADER.size > len(data):
            raise ValueError(f"record file ends inside a record header at byte {position}")
        stream_id, length = RECORD_HEADER.unpack_from(data, position)
        position += RECORD_HEADER.size
        if position + length > len(data):
            raise ValueError(f"record for stream {stream_id} is cut short at byte {position}")
        records.append((stream_id, data[position : position + length]))
        position += length
    return records


def write_records(records: Sequence[Record]) -> bytes:
    """An encoded file holding these (stream id, data) records, in order."""
    out = bytearray()
    for stream_id, data in records:
        out += RECORD_HEADER.pack(stream_id, len(data)) + data
    return bytes(out)


# --- running the encoder and the decoder --------------------------------------------------


def encode_records(
    sections: Sequence[Sequence[Header]],
    table_capacity: int,
    blocked_streams: int,
    immediate_ack: bool,
    encoder: Encoder | None = None,
) -> list[Record]:
    """Encode each section on its own stream (1, 2, ...); see `encode_qif`."""
    encoder = encoder if encoder is not None else Encoder()
    encoder.apply_settings(table_capacity, blocked_streams)
    decoder = Decoder(table_capacity, blocked_streams) if immediate_ack else None
    records: list[Record] = []
    for stream_id, headers in enumerate(sections, start=1):
        encoder_stream, field_section = encoder.encode(stream_id, headers)
        if encoder_stream:
            records.append((ENCODER_STREAM, encoder_stream))
        records.append((stream_id, field_section))
        if decoder is not None:
            decoder.feed_encoder(encoder_stream)
            decoded = decoder.decode(stream_id, field_section)
            if decoded is None or decoded.headers != list(headers):
                raise ValueError(f"section {stream_id} did not decode to its input")
            encoder.feed_decoder(decoder.data_to_send())
    return records


def encode_qif(
    sections: Sequence[Sequence[Header]],
    table_capacity: int,
    blocked_streams: int,
    immediate_ack: bool,
) -> bytes:
    """Encode a .qif's sections as the interop corpus does; returns a record file.

    ``immediate_ack`` models a decoder that acknowledges at once: after each section
    h3learn's own `Decoder` decodes it and whatever it writes on its decoder stream (Section
    Acknowledgment, Insert Count Increment) is fed back to the encoder. Without it nothing
    ever comes back, so no entry becomes evictable and no reference becomes safe.
    """
    return write_records(encode_records(sections, table_capacity, blocked_streams, immediate_ack))


def decode_records(records: bytes, table_capacity: int, blocked_streams: int) -> list[list[Header]]:
    """Decode a record file; returns the field sections in stream order.

    A section that arrives before the inserts it needs waits (a blocked stream, RFC 9204
    §2.2.1) and is decoded when the encoder-stream records bring them.
    """
    decoder = Decoder(table_capacity, blocked_streams)
    if table_capacity:
        # The corpus files were written for QPACK drafts, whose dynamic table started at its
        # maximum capacity; RFC 9204 §3.2.2 starts it at 0, and many files insert without a
        # Set Dynamic Table Capacity. Feeding one first lets a strict decoder read them.
        writer = SpanWriter(record=False)
        SetDynamicTableCapacity(table_capacity).serialize(writer)
        decoder.feed_encoder(writer.unit())
    decoded: dict[int, list[Header]] = {}
    for stream_id, data in read_records(records):
        if stream_id == ENCODER_STREAM:
            released = decoder.feed_encoder(data)
            if released.failures:
                raise released.failures[0]  # as `decode` would have raised it
            for section in released.sections:
                decoded[section.stream_id] = section.headers
            continue
        result = decoder.decode(stream_id, data)
        if result is not None:
            decoded[stream_id] = result.headers
    if decoder.blocked_streams:
        raise DecompressionFailed(
            f"streams {decoder.blocked_streams} still blocked at the end of the records",
            "9204#2.2.1",
        )
    return [decoded[stream_id] for stream_id in sorted(decoded)]
