"""RFC 9204 §5: the two settings a QPACK decoder announces, and the values they may take."""

from __future__ import annotations

import pytest

from h3learn.qpack.decoder import Decoder
from h3learn.qpack.encoder import Encoder


@pytest.mark.parametrize(("capacity", "blocked"), [(-1, 0), (0, -3), (2**62, 0), (0, 2**62)])
def test_qpack_settings_outside_a_varint_are_refused_by_name(capacity: int, blocked: int) -> None:
    """A setting is a variable-length integer in SETTINGS (RFC 9204 §5, RFC 9000 §16)."""
    name = "MAX_TABLE_CAPACITY" if capacity != 0 else "BLOCKED_STREAMS"
    with pytest.raises(ValueError, match=rf"SETTINGS_QPACK_{name} .* outside 0\.\.2\^62-1"):
        Decoder(capacity, blocked)
    with pytest.raises(ValueError, match=rf"SETTINGS_QPACK_{name}"):
        Encoder().apply_settings(capacity, blocked)
    Decoder(2**62 - 1, 2**62 - 1)  # the largest values are fine
