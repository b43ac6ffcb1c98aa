"""A byte reader and a byte writer that label every field they touch.

Every QPACK instruction and field line (RFC 9204 §4.3-§4.5) and every HTTP/3 frame
(RFC 9114 §7) is parsed with a `SpanReader` and serialised with a `SpanWriter`. Both
work left to right, a few bits or bytes at a time, and (when recording) note a `FieldSpan`
for each field: its name, where it lies, its decoded value, one sentence of explanation and
the RFC section that defines it. That is what lets the UI colour every byte, and every bit
of a prefix byte, of every unit on the wire.

QPACK packs a pattern, flags and the start of a prefixed integer into one byte, so both
classes keep a bit position inside the current byte:

- `bits(count)` takes the next ``count`` bits of the current byte (a pattern or a flag);
- `integer()` takes the rest of the current byte as the prefix of an RFC 7541 §5.1 integer,
  plus its continuation bytes;
- `string()` reads the H flag, then a prefixed length, then the string (RFC 9204 §4.1.2);
- `varint()` and `raw()` read whole bytes (RFC 9000 §16 integers, frame payloads).

Recording is off when ``record=False``: the same code runs, no spans are built.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from h3learn.events import FieldSpan
from h3learn.wire.errors import MalformedInput, NeedMoreData
from h3learn.wire.huffman import huffman_decode, huffman_encode, huffman_encoded_length
from h3learn.wire.prefixed_int import parse_prefixed_int, serialize_prefixed_int
from h3learn.wire.varint import LENGTH_FOR_PREFIX, parse_varint, serialize_varint, varint_length

EXPLAIN_HUFFMAN_FLAG = (
    "H bit: 1 if the string is Huffman-encoded, 0 if its bytes follow as they are."
)


def varint_how(length: int) -> str:
    """How a variable-length integer of ``length`` bytes is laid out (RFC 9000 §16).

    Appended to the explanation of every varint span, so that the byte view says how the
    bytes give the value.
    """
    length_bits = LENGTH_FOR_PREFIX.index(length)
    return (
        f" ({length}-byte variable-length integer, RFC 9000 §16: the first two bits,"
        f" {length_bits:02b}, give its length; the other {8 * length - 2} bits, the value.)"
    )


def prefixed_how(value: int, prefix_bits: int, length: int) -> str:
    """How a prefixed integer continues past its prefix (RFC 9204 §4.1.1), or "" if it fits.

    Appended to the explanation of an integer span that takes more than its first byte;
    ``length`` is the bytes the integer takes.
    """
    limit = (1 << prefix_bits) - 1
    if value < limit:
        return ""
    more = length - 1
    return (
        f" (The {prefix_bits}-bit prefix is full, all ones = {limit}, so the integer continues"
        f" in {more} more byte{'s' if more > 1 else ''}, carrying {value} - {limit} ="
        f" {value - limit} in 7-bit groups, low group first; a top bit of 1 means another"
        " byte follows. RFC 9204 §4.1.1.)"
    )


def display(value: bytes) -> str:
    """Bytes from the wire as text for a person: UTF-8 where valid, escapes where not."""
    return value.decode("utf-8", "backslashreplace")


def uses_huffman(value: bytes, huffman: bool | None) -> bool:
    """Whether a string literal is sent Huffman-coded: as asked, or (None) when shorter."""
    if huffman is None:
        return huffman_encoded_length(value) < len(value)
    return huffman


#: Every value of every bit field up to a byte, written out: BIT_STRINGS[3][1] == "001".
BIT_STRINGS = [[format(value, f"0{count}b") for value in range(1 << count)] for count in range(9)]


def bit_string(value: int, count: int) -> str:
    """``value`` written as ``count`` binary digits, e.g. bit_string(1, 3) == "001"."""
    return BIT_STRINGS[count][value]


class _Labeller:
    """What the reader and the writer share: the list of spans and how one is noted."""

    #: Where the unit starts in the underlying bytes; span offsets are counted from here.
    start = 0
    spans: list[FieldSpan] | None

    @property
    def recording(self) -> bool:
        """Are labels being kept? (Callers skip building label text when they are not.)"""
        return self.spans is not None

    def _note(
        self,
        name: str,
        offset: int,
        length: int,
        value: Any,
        explain: str,
        rfc: str,
        bit_offset: int | None = None,
        bit_length: int | None = None,
    ) -> None:
        assert self.spans is not None
        offset -= self.start
        self.spans.append(
            FieldSpan(name, offset, length, value, explain, rfc, bit_offset, bit_length)
        )


class SpanReader(_Labeller):
    """Reads fields from ``data`` starting at ``offset``; see the module docstring.

    Span offsets are counted from ``offset`` (the start of the unit being parsed). Raises
    `NeedMoreData` when the data ends inside a field and `MalformedInput` on a broken rule.
    """

    def __init__(
        self, data: bytes | bytearray | memoryview, offset: int = 0, record: bool = True
    ) -> None:
        self.data = data
        self.start = offset
        self.position = offset
        self.bit = 0
        self.spans: list[FieldSpan] | None = [] if record else None

    # -- position ------------------------------------------------------------------------

    def at_end(self) -> bool:
        return self.position >= len(self.data) and self.bit == 0

    def consumed(self) -> int:
        """Bytes consumed since ``offset`` (a partly read byte counts)."""
        return self.position - self.start + (1 if self.bit else 0)

    def peek_byte(self) -> int:
        try:
            return self.data[self.position]
        except IndexError:
            raise NeedMoreData from None

    # -- fields --------------------------------------------------------------------------

    def bits(self, count: int, name: str, explain: str, rfc: str, shown: Any = None) -> int:
        """The next ``count`` bits of the current byte, most significant first."""
        try:
            byte = self.data[self.position]
        except IndexError:
            raise NeedMoreData from None
        first_bit = self.bit
        if first_bit + count > 8:
            raise ValueError("a bit field cannot cross a byte boundary")
        value = (byte >> (8 - first_bit - count)) & ((1 << count) - 1)
        if self.spans is not None:
            self._note(
                name,
                self.position,
                1,
                bit_string(value, count) if shown is None else shown,
                explain,
                rfc,
                first_bit,
                count,
            )
        self.bit += count
        if self.bit == 8:
            self.bit = 0
            self.position += 1
        return value

    def flag(self, name: str, explain: str, rfc: str) -> bool:
        """One bit as a boolean."""
        try:
            byte = self.data[self.position]
        except IndexError:
            raise NeedMoreData from None
        value = bool(byte & (0x80 >> self.bit))
        if self.spans is not None:
            self._note(name, self.position, 1, value, explain, rfc, self.bit, 1)
        self.bit += 1
        if self.bit == 8:
            self.bit = 0
            self.position += 1
        return value

    def integer(self, name: str, explain: str, rfc: str) -> int:
        """A prefixed integer (RFC 7541 §5.1) in the rest of the current byte and after."""
        prefix_bits = 8 - self.bit
        start = self.position
        value, end = parse_prefixed_int(self.data, start, prefix_bits)
        if self.spans is not None:
            how = prefixed_how(value, prefix_bits, end - start)
            self._note(name, start, end - start, value, explain + how, rfc, self.bit, prefix_bits)
        self.position = end
        self.bit = 0
        return value

    def string(self, name: str, explain: str, rfc: str) -> tuple[bytes, bool]:
        """A string literal (RFC 9204 §4.1.2): H flag, prefixed length, then the octets.

        Returns (decoded value, whether it was Huffman-encoded).
        """
        if self.spans is None:
            # The same two steps as below without labels: the decoder's hot path.
            huffman = bool(self.peek_byte() & (0x80 >> self.bit))
            # An H flag in the last bit of a byte pushes the length into the next byte,
            # with an 8-bit prefix, exactly as `flag` then `integer` would read it.
            after_flag = self.position * 8 + self.bit + 1
            length, self.position = parse_prefixed_int(
                self.data, after_flag >> 3, 8 - (after_flag & 7)
            )
            self.bit = 0
        else:
            huffman = self.flag(f"{name}: H", EXPLAIN_HUFFMAN_FLAG, "9204#4.1.2")
            length = self.integer(
                f"{name}: length", f"Length in bytes of the {name.lower()} as sent.", "9204#4.1.2"
            )
        start = self.position
        end = start + length
        if end > len(self.data):
            raise NeedMoreData
        octets = bytes(self.data[start:end])
        value = huffman_decode(octets) if huffman else octets
        if self.spans is not None and length:
            shown = display(value)
            how = " (Huffman-encoded)" if huffman else " (sent as-is)"
            self._note(name, start, length, shown, explain + how, rfc)
        self.position = end
        return value, huffman

    def varint(self, name: str, explain: str, rfc: str) -> int:
        """A QUIC variable-length integer (RFC 9000 §16)."""
        if self.bit:
            raise ValueError("a variable-length integer starts on a byte boundary")
        value, length = parse_varint(self.data, self.position)
        if self.spans is not None:
            self._note(name, self.position, length, value, explain + varint_how(length), rfc)
        self.position += length
        return value

    def raw(
        self,
        length: int,
        name: str,
        explain: str,
        rfc: str,
        preview: Callable[[bytes], str] = bytes.hex,
    ) -> bytes:
        """``length`` bytes as they are; ``preview`` shows them in the label (when recording)."""
        if self.bit:
            raise ValueError("raw bytes start on a byte boundary")
        start = self.position
        if start + length > len(self.data):
            raise NeedMoreData
        octets = bytes(self.data[start : start + length])
        if self.spans is not None and length:
            self._note(name, start, length, preview(octets), explain, rfc)
        self.position += length
        return octets

    def expect_end(self, what: str, rfc: str) -> None:
        if not self.at_end():
            raise MalformedInput(f"bytes left over after {what}", rfc)

    def unit(self) -> bytes:
        """The bytes consumed so far, from ``offset``."""
        return bytes(self.data[self.start : self.position])

    def field_spans(self) -> tuple[FieldSpan, ...]:
        return tuple(self.spans) if self.spans is not None else ()


class SpanWriter(_Labeller):
    """Writes fields into a buffer, left to right, noting a span for each (when recording)."""

    def __init__(self, record: bool = True) -> None:
        self.buffer = bytearray()
        self.bit = 0
        self.spans: list[FieldSpan] | None = [] if record else None

    def bits(
        self, value: int, count: int, name: str, explain: str, rfc: str, shown: Any = None
    ) -> None:
        if self.bit == 0:
            self.buffer.append(0)
        first_bit = self.bit
        if first_bit + count > 8 or value >> count:
            raise ValueError(f"{value} does not fit {count} bits at bit {first_bit}")
        self.buffer[-1] |= value << (8 - first_bit - count)
        if self.spans is not None:
            self._note(
                name,
                len(self.buffer) - 1,
                1,
                bit_string(value, count) if shown is None else shown,
                explain,
                rfc,
                first_bit,
                count,
            )
        self.bit = (first_bit + count) % 8

    def flag(self, value: bool, name: str, explain: str, rfc: str) -> None:
        self.bits(1 if value else 0, 1, name, explain, rfc, shown=bool(value))

    def integer(self, value: int, name: str, explain: str, rfc: str) -> None:
        first_bit = self.bit
        prefix_bits = 8 - first_bit
        high_bits = self.buffer.pop() if first_bit else 0
        start = len(self.buffer)
        self.buffer += serialize_prefixed_int(value, prefix_bits, high_bits)
        if self.spans is not None:
            length = len(self.buffer) - start
            how = prefixed_how(value, prefix_bits, length)
            self._note(name, start, length, value, explain + how, rfc, first_bit, prefix_bits)
        self.bit = 0

    def string(
        self, value: bytes, name: str, explain: str, rfc: str, huffman: bool | None = None
    ) -> bool:
        """Write a string literal; ``huffman=None`` picks whichever form is shorter.

        Returns whether the Huffman form was used.
        """
        huffman = uses_huffman(value, huffman)
        octets = huffman_encode(value) if huffman else value
        if self.spans is None:
            # The same two steps as below without labels: the encoder's hot path.
            self.bits(1 if huffman else 0, 1, "", "", "")
            self.integer(len(octets), "", "", "")
        else:
            self.flag(huffman, f"{name}: H", EXPLAIN_HUFFMAN_FLAG, "9204#4.1.2")
            self.integer(
                len(octets),
                f"{name}: length",
                f"Length in bytes of the {name.lower()} as sent.",
                "9204#4.1.2",
            )
        start = len(self.buffer)
        self.buffer += octets
        if self.spans is not None and octets:
            shown = display(value)
            how = " (Huffman-encoded)" if huffman else " (sent as-is)"
            self._note(name, start, len(octets), shown, explain + how, rfc)
        return huffman

    def varint(
        self, value: int, name: str, explain: str, rfc: str, length: int | None = None
    ) -> None:
        if self.bit:
            raise ValueError("a variable-length integer starts on a byte boundary")
        start = len(self.buffer)
        self.buffer += serialize_varint(value, length)
        if self.spans is not None:
            written = len(self.buffer) - start
            self._note(name, start, written, value, explain + varint_how(written), rfc)

    def raw(
        self,
        octets: bytes,
        name: str,
        explain: str,
        rfc: str,
        preview: Callable[[bytes], str] = bytes.hex,
    ) -> None:
        """``octets`` as they are; ``preview`` shows them in the label (when recording)."""
        if self.bit:
            raise ValueError("raw bytes start on a byte boundary")
        start = len(self.buffer)
        self.buffer += octets
        if self.spans is not None and octets:
            self._note(name, start, len(octets), preview(octets), explain, rfc)

    def unit(self) -> bytes:
        return bytes(self.buffer)

    def field_spans(self) -> tuple[FieldSpan, ...]:
        return tuple(self.spans) if self.spans is not None else ()


__all__ = [
    "SpanReader",
    "SpanWriter",
    "bit_string",
    "display",
    "prefixed_how",
    "uses_huffman",
    "varint_how",
    "varint_length",
]
