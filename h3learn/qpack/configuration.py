"""RFC 9204 §5: the two settings a QPACK decoder announces, and the values they may take.

SETTINGS_QPACK_MAX_TABLE_CAPACITY (0x01) caps the dynamic table the peer's encoder may
build for this decoder; SETTINGS_QPACK_BLOCKED_STREAMS (0x07) caps how many streams may wait
for inserts at once. Both travel in an HTTP/3 SETTINGS frame as variable-length integers
(RFC 9114 §7.2.4, RFC 9000 §16), so each lies in 0..2^62-1; both default to 0.
"""

from h3learn.wire.varint import VARINT_MAX


def check_qpack_settings(max_table_capacity: int, blocked_streams: int) -> None:
    """`ValueError` naming the setting when either value could not be sent in SETTINGS."""
    for name, value in (
        ("SETTINGS_QPACK_MAX_TABLE_CAPACITY", max_table_capacity),
        ("SETTINGS_QPACK_BLOCKED_STREAMS", blocked_streams),
    ):
        if not 0 <= value <= VARINT_MAX:
            raise ValueError(
                f"{name} {value} is outside 0..2^62-1: a setting is a variable-length"
                " integer (RFC 9204 §5, RFC 9000 §16)"
            )
