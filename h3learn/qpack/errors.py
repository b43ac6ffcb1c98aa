"""RFC 9204 §6: QPACK's three error codes, as exceptions that say which rule broke.

QPACK errors are connection errors of HTTP/3 (RFC 9114 §8): the endpoint that detects one
closes the whole connection with the code. One exception: a field section that exceeds the
decoder's implementation limits (not a broken rule) costs only its stream (RFC 9204 §7.4,
`DecompressionFailed.beyond_limit`). Each exception carries

- ``code``: the value registered in the HTTP/3 error code registry (RFC 9204 §8.3);
- ``rule``: what went wrong, in words a learner can follow;
- ``rfc``: the section whose MUST was broken, written ``9204#2.2.3``.

``str(error)`` reads like ``QPACK_DECOMPRESSION_FAILED (RFC 9204 §2.2.3): field line refers
to dynamic entry 7, at or above the Required Insert Count 5``.
"""

from enum import IntEnum


class QpackErrorCode(IntEnum):
    """RFC 9204 §6 and §8.3: values in the HTTP/3 Error Codes registry."""

    QPACK_DECOMPRESSION_FAILED = 0x0200
    QPACK_ENCODER_STREAM_ERROR = 0x0201
    QPACK_DECODER_STREAM_ERROR = 0x0202


def cite(rfc: str) -> str:
    """``9204#4.5.1.1`` -> ``RFC 9204 §4.5.1.1``."""
    number, _, section = rfc.partition("#")
    return f"RFC {number} §{section}" if section else f"RFC {number}"


class QpackError(Exception):
    """Base class: a QPACK connection error (RFC 9204 §6)."""

    code: QpackErrorCode

    def __init__(self, rule: str, rfc: str) -> None:
        super().__init__(f"{self.code.name} ({cite(rfc)}): {rule}")
        self.rule = rule
        self.rfc = rfc


class DecompressionFailed(QpackError):
    """The decoder cannot interpret an encoded field section (QPACK_DECOMPRESSION_FAILED).

    ``beyond_limit``: the section broke no rule but exceeded this implementation's limits
    (an integer past 2^62-1, say); RFC 9204 §7.4 makes that a *stream* error of this type
    on the ``stream_id`` that carried the section, not a connection error.
    """

    code = QpackErrorCode.QPACK_DECOMPRESSION_FAILED

    def __init__(
        self, rule: str, rfc: str, *, stream_id: int | None = None, beyond_limit: bool = False
    ) -> None:
        super().__init__(rule, rfc)
        self.stream_id = stream_id
        self.beyond_limit = beyond_limit


class EncoderStreamError(QpackError):
    """The decoder cannot interpret an encoder instruction (QPACK_ENCODER_STREAM_ERROR)."""

    code = QpackErrorCode.QPACK_ENCODER_STREAM_ERROR


class DecoderStreamError(QpackError):
    """The encoder cannot interpret a decoder instruction (QPACK_DECODER_STREAM_ERROR)."""

    code = QpackErrorCode.QPACK_DECODER_STREAM_ERROR
