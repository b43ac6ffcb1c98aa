"""A check the RFC 9204 tests share: every bit of a unit belongs to exactly one field span.

docs/events.md ("Field spans") promises that the labels of an event cover its raw bytes
completely, and that a byte split into bit fields has each of its bits in exactly one.
"""

from __future__ import annotations

from h3learn.events import FieldSpan


def assert_every_bit_labelled_once(raw: bytes, spans: tuple[FieldSpan, ...]) -> None:
    """Every bit of ``raw`` belongs to exactly one span (docs/events.md, "Field spans")."""
    owners = [[0] * 8 for _ in raw]
    for span in spans:
        assert span.length >= 1
        assert span.offset >= 0 and span.offset + span.length <= len(raw), span
        for position in range(span.offset, span.offset + span.length):
            if position == span.offset and span.bit_offset is not None:
                assert span.bit_length is not None
                bits = range(span.bit_offset, span.bit_offset + span.bit_length)
            else:
                bits = range(8)
            for bit in bits:
                owners[position][bit] += 1
    for position, counts in enumerate(owners):
        assert counts == [1] * 8, f"byte {position}: bits labelled {counts} times"
