"""RFC 7541 §5.1: prefixed integers, as QPACK uses them (RFC 9204 §4.1.1).

An integer starts in the low N bits of a byte whose high 8-N bits belong to something else
(a pattern, a flag). If the value is below 2^N - 1 it fits there. Otherwise those N bits are
all ones and the rest, value - (2^N - 1), follows in 7-bit groups, least significant group
first; the top bit of each byte says whether another byte follows:

      0   1   2   3   4   5   6   7
    +---+---+---+---+---+---+---+---+
    | ? | ? | ? | 1    1   1   1   1 |   N = 5: prefix all ones
    +---+---+---+-------------------+
    | 1 |    value - 31, bits 0-6   |   continuation bit set: more follows
    +---+---------------------------+
    | 0 |    value - 31, bits 7-13  |   last byte
    +---+---------------------------+

A QPACK decoder must handle integers of up to 62 bits (RFC 9204 §4.1.1); h3learn accepts
exactly that, up to 2^62 - 1 (what a QUIC varint can carry), and treats a larger value as
beyond its limit (§7.4). Three encodings are rejected as malformed:
values above that limit, encodings padded with redundant zero continuation bytes, and
encodings longer than any value up to that limit needs. RFC 7541 §5.1 asks for the last:
"Integer encodings that exceed implementation limits -- in value or octet length -- MUST be
treated as decoding errors." Without it a run of 0x80 bytes (zero groups, each saying more
follows) would never end, and a stream parser would wait, buffering, for ever.

How long can an accepted encoding be? The value that follows the prefix is below 2^62, so
it has at most 62 bits, ceil(62 / 7) = 9 groups of seven: at most 9 continuation bytes, for
every prefix size. A tenth could only add zero bits (padding, refused above) or bits past
2^62 - 1, so a ninth byte that still says "more follows" is already an error.

Deliberate simplification of RFC 7541 §5.1: the RFC does not forbid padding (it only says
nothing about it); rejecting it is one of the implementation limits RFC 9204 §7.4 allows,
and it keeps every integer's encoding unique, so parsing then serialising gives back the
same bytes. No encoder we know of pads.
"""

from h3learn.wire.errors import MalformedInput, NeedMoreData

#: The largest integer h3learn accepts in a prefixed integer: 2^62 - 1, as a QUIC varint.
PREFIXED_INT_MAX = (1 << 62) - 1

#: Top bit of a continuation byte: another byte follows.
CONTINUATION_FLAG = 0x80
#: Low seven bits of a continuation byte: the next 7-bit group of the value.
CONTINUATION_VALUE_MASK = 0x7F
#: The most continuation bytes a value up to 2^62 - 1 needs: ceil(62 / 7) groups of 7 bits.
MAX_CONTINUATION_BYTES = 9


def serialize_prefixed_int(value: int, prefix_bits: int, high_bits: int = 0) -> bytes:
    """Encode ``value`` with an N-bit prefix; ``high_bits`` fills the byte's top 8-N bits.

    ``high_bits`` is given already in position (e.g. 0b1100_0000 for a pattern "11").
    """
    if not 1 <= prefix_bits <= 8:
        raise ValueError("a prefix has between 1 and 8 bits (RFC 7541 §5.1)")
    if value < 0 or value > PREFIXED_INT_MAX:
        raise ValueError(f"{value} is outside 0..2^62-1 (RFC 9204 §4.1.1)")
    limit = (1 << prefix_bits) - 1
    if value < limit:
        return bytes((high_bits | value,))
    encoded = bytearray((high_bits | limit,))
    value -= limit
    while value >= CONTINUATION_FLAG:
        encoded.append(CONTINUATION_FLAG | (value & CONTINUATION_VALUE_MASK))
        value >>= 7
    encoded.append(value)
    return bytes(encoded)


def prefixed_int_length(value: int, prefix_bits: int) -> int:
    """How many bytes `serialize_prefixed_int` would write for ``value``."""
    limit = (1 << prefix_bits) - 1
    if value < limit:
        return 1
    value -= limit
    length = 2
    while value >= CONTINUATION_FLAG:
        value >>= 7
        length += 1
    return length


def parse_prefixed_int(
    data: bytes | bytearray | memoryview, offset: int, prefix_bits: int
) -> tuple[int, int]:
    """Decode the integer whose prefix is the low ``prefix_bits`` of ``data[offset]``.

    Returns (value, offset just past the integer). Raises `NeedMoreData` if the input ends
    first and `MalformedInput` for a value above 2^62 - 1, a padded encoding or one longer
    than `MAX_CONTINUATION_BYTES` continuation bytes (so it never waits for more than that).
    """
    if offset >= len(data):
        raise NeedMoreData
    limit = (1 << prefix_bits) - 1
    value = data[offset] & limit
    offset += 1
    if value < limit:
        return value, offset
    shift = 0
    first_continuation = offset
    while True:
        if offset >= len(data):
            raise NeedMoreData
        byte = data[offset]
        offset += 1
        value += (byte & CONTINUATION_VALUE_MASK) << shift
        if value > PREFIXED_INT_MAX:
            raise MalformedInput(
                "prefixed integer exceeds 2^62-1, the largest value h3learn accepts",
                "9204#4.1.1",
                beyond_limit=True,
            )
        if not byte & CONTINUATION_FLAG:
            if byte == 0 and offset - 1 > first_continuation:
                raise MalformedInput(
                    "prefixed integer padded with a redundant zero continuation byte"
                    " (an h3learn limit)",
                    "9204#7.4",
                    beyond_limit=True,
                )
            return value, offset
        if offset - first_continuation == MAX_CONTINUATION_BYTES:
            raise MalformedInput(
                f"prefixed integer goes on past {MAX_CONTINUATION_BYTES} continuation bytes,"
                " more than any value up to 2^62-1 needs (an h3learn limit on octet length)",
                "7541#5.1",
                beyond_limit=True,
            )
        shift += 7
