"""RFC 9000 §16: QUIC variable-length integers.

The two most significant bits of the first byte give the length of the whole integer:

    00 -> 1 byte,  6-bit value  (0 .. 63)
    01 -> 2 bytes, 14-bit value (0 .. 16383)
    10 -> 4 bytes, 30-bit value (0 .. 1073741823)
    11 -> 8 bytes, 62-bit value (0 .. 4611686018427387903)

The remaining bits, in network byte order, are the value. An encoder may use a longer
form than needed (RFC 9000 §16 allows it). Only QUIC's own frame types must take the
shortest form (RFC 9000 §12.4); HTTP/3's Type field has no such rule.
"""

from h3learn.wire.errors import NeedMoreData

#: The largest value a variable-length integer can carry: 2^62 - 1.
VARINT_MAX = (1 << 62) - 1

#: The two length bits sit at the top of the first byte.
LENGTH_BITS_SHIFT = 6
#: The rest of the first byte belongs to the value.
FIRST_BYTE_VALUE_MASK = 0x3F

#: Length in bytes for each value of the two length bits.
LENGTH_FOR_PREFIX = (1, 2, 4, 8)


def varint_length(value: int) -> int:
    """The number of bytes of the shortest encoding of ``value``."""
    if value < 0 or value > VARINT_MAX:
        raise ValueError(f"{value} is outside 0..2^62-1 (RFC 9000 §16)")
    if value <= 0x3F:
        return 1
    if value <= 0x3FFF:
        return 2
    if value <= 0x3FFF_FFFF:
        return 4
    return 8


def serialize_varint(value: int, length: int | None = None) -> bytes:
    """Encode ``value`` in its shortest form, or in ``length`` bytes (1, 2, 4 or 8)."""
    shortest = varint_length(value)
    if length is None:
        length = shortest
    elif length not in LENGTH_FOR_PREFIX or length < shortest:
        raise ValueError(f"{value} does not fit a {length}-byte variable-length integer")
    prefix = LENGTH_FOR_PREFIX.index(length)
    encoded = bytearray(value.to_bytes(length, "big"))
    encoded[0] |= prefix << LENGTH_BITS_SHIFT
    return bytes(encoded)


def parse_varint(data: bytes | bytearray | memoryview, offset: int = 0) -> tuple[int, int]:
    """Decode the integer that starts at ``offset``; return (value, bytes used).

    Raises `NeedMoreData` if ``data`` ends before the integer does.
    """
    if offset >= len(data):
        raise NeedMoreData
    first = data[offset]
    length = LENGTH_FOR_PREFIX[first >> LENGTH_BITS_SHIFT]
    if offset + length > len(data):
        raise NeedMoreData
    value = first & FIRST_BYTE_VALUE_MASK
    for index in range(offset + 1, offset + length):
        value = (value << 8) | data[index]
    return value, length
