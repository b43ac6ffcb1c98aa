"""RFC 9114 §8: HTTP/3 error codes, and the two ways an error ends something.

When an endpoint finds that its peer broke a rule, RFC 9114 §8 gives it two responses:

- a *stream error* resets one QUIC stream (RFC 9000 §2.4): the request on it is lost, the
  rest of the connection carries on. `H3StreamError` carries the stream's id.
- a *connection error* closes the whole QUIC connection (RFC 9000 §5.3). `H3ConnectionError`.

Either way, an error code from the "HTTP/3 Error Codes" registry (RFC 9114 §8.1, §11.2.3)
travels with it. `ErrorCode` holds the codes RFC 9114 registers; RFC 9204 §6 adds three QPACK
codes, which live with the QPACK layer in `h3learn.qpack.errors.QpackErrorCode` and are
reused here, not repeated.

Each exception carries ``code``, ``rule`` (what went wrong, in plain words) and ``rfc`` (the
section whose requirement was broken, written ``9114#7.2.4``). ``str(error)`` reads like
``H3_FRAME_UNEXPECTED (RFC 9114 §7.2.4): second SETTINGS frame on the control stream``.

Codes of the form ``0x1f * N + 0x21`` are reserved (RFC 9114 §8.1): they mean nothing, and
exist so that a receiver learns to treat a code it does not know as H3_NO_ERROR (RFC 9114 §8).
The same formula reserves values in the frame type, setting identifier and stream type
registries too (RFC 9114 §7.2.8, §7.2.4.1, §6.2.3); `is_reserved` is the one test for all four.
"""

from __future__ import annotations

from enum import IntEnum

from h3learn.qpack.errors import QpackError, QpackErrorCode, cite


class ErrorCode(IntEnum):
    """RFC 9114 §8.1: the codes RFC 9114 registers (RFC 9114 §11.2.3)."""

    H3_NO_ERROR = 0x0100
    H3_GENERAL_PROTOCOL_ERROR = 0x0101
    H3_INTERNAL_ERROR = 0x0102
    H3_STREAM_CREATION_ERROR = 0x0103
    H3_CLOSED_CRITICAL_STREAM = 0x0104
    H3_FRAME_UNEXPECTED = 0x0105
    H3_FRAME_ERROR = 0x0106
    H3_EXCESSIVE_LOAD = 0x0107
    H3_ID_ERROR = 0x0108
    H3_SETTINGS_ERROR = 0x0109
    H3_MISSING_SETTINGS = 0x010A
    H3_REQUEST_REJECTED = 0x010B
    H3_REQUEST_CANCELLED = 0x010C
    H3_REQUEST_INCOMPLETE = 0x010D
    H3_MESSAGE_ERROR = 0x010E
    H3_CONNECT_ERROR = 0x010F
    H3_VERSION_FALLBACK = 0x0110


# -- reserved values: 0x1f * N + 0x21 ----------------------------------------------------

#: The first reserved value (N = 0).
RESERVED_BASE = 0x21
#: The distance between two reserved values.
RESERVED_STEP = 0x1F
#: The largest reserved value a variable-length integer can carry (RFC 9114 §11.2).
RESERVED_MAX = 0x3FFF_FFFF_FFFF_FFFE


def is_reserved(value: int) -> bool:
    """Whether ``value`` is ``0x1f * N + 0x21`` for some N >= 0 (a "GREASE" value).

    RFC 9114 reserves these values in four registries so that senders can exercise the rule
    that unknown values are ignored: error codes (§8.1), frame types (§7.2.8), setting
    identifiers (§7.2.4.1) and stream types (§6.2.3).
    """
    return value >= RESERVED_BASE and (value - RESERVED_BASE) % RESERVED_STEP == 0


def reserved_value(n: int) -> int:
    """The ``n``-th reserved value, ``0x1f * n + 0x21`` (n = 0 gives 0x21)."""
    value = RESERVED_STEP * n + RESERVED_BASE
    if n < 0 or value > RESERVED_MAX:
        raise ValueError(f"no reserved value for N={n} (RFC 9114 §8.1)")
    return value


def registered_code(code: int) -> ErrorCode | QpackErrorCode | None:
    """The registered code with value ``code``, or None if this project does not know it."""
    for registry in (ErrorCode, QpackErrorCode):
        try:
            return registry(code)
        except ValueError:
            continue
    return None


def code_name(code: int) -> str:
    """A readable name for any code: its registered name, or what kind of unknown it is."""
    known = registered_code(code)
    if known is not None:
        return known.name
    if is_reserved(code):
        return f"reserved error code {code:#x}"
    return f"unknown error code {code:#x}"


#: RFC 9000 §20.1: QUIC's own transport error codes. They come with a CONNECTION_CLOSE of
#: type 0x1c, which QUIC itself sends; HTTP/3 codes only ever travel in type 0x1d.
QUIC_TRANSPORT_ERRORS = {
    0x00: "NO_ERROR",
    0x01: "INTERNAL_ERROR",
    0x02: "CONNECTION_REFUSED",
    0x03: "FLOW_CONTROL_ERROR",
    0x04: "STREAM_LIMIT_ERROR",
    0x05: "STREAM_STATE_ERROR",
    0x06: "FINAL_SIZE_ERROR",
    0x07: "FRAME_ENCODING_ERROR",
    0x08: "TRANSPORT_PARAMETER_ERROR",
    0x09: "CONNECTION_ID_LIMIT_ERROR",
    0x0A: "PROTOCOL_VIOLATION",
    0x0B: "INVALID_TOKEN",
    0x0C: "APPLICATION_ERROR",
    0x0D: "CRYPTO_BUFFER_EXCEEDED",
    0x0E: "KEY_UPDATE_ERROR",
    0x0F: "AEAD_LIMIT_REACHED",
    0x10: "NO_VIABLE_PATH",
}
#: RFC 9000 §20.1: 0x0100-0x01ff carry a TLS alert in the low byte (CRYPTO_ERROR).
CRYPTO_ERROR_FIRST, CRYPTO_ERROR_LAST = 0x0100, 0x01FF


def transport_code_name(code: int) -> str:
    """A readable name for a QUIC transport error code (RFC 9000 §20.1)."""
    if code in QUIC_TRANSPORT_ERRORS:
        return f"QUIC {QUIC_TRANSPORT_ERRORS[code]}"
    if CRYPTO_ERROR_FIRST <= code <= CRYPTO_ERROR_LAST:
        return f"QUIC CRYPTO_ERROR (TLS alert {code - CRYPTO_ERROR_FIRST})"
    return f"unknown QUIC transport error code {code:#x}"


def interpret_received_code(code: int) -> ErrorCode | QpackErrorCode:
    """What a received code means: a code this endpoint does not know counts as H3_NO_ERROR.

    RFC 9114 §8: because codes can be added without negotiation, an unknown code (reserved
    ones included) is treated as if it were H3_NO_ERROR.
    """
    known = registered_code(code)
    return ErrorCode.H3_NO_ERROR if known is None else known


class H3Error(Exception):
    """Base class: the peer broke a rule of RFC 9114 (or of an extension it uses).

    ``code`` is the value to send (an `ErrorCode`, a `QpackErrorCode`, or a plain int for a
    code this project has no name for); ``rule`` says what broke; ``rfc`` names the section.
    """

    def __init__(self, code: int, rule: str, rfc: str) -> None:
        super().__init__(f"{code_name(code)} ({cite(rfc)}): {rule}")
        self.code = code
        self.rule = rule
        self.rfc = rfc


class H3ConnectionError(H3Error):
    """A connection error (RFC 9114 §8): the endpoint closes the whole connection."""

    @classmethod
    def from_qpack(cls, error: QpackError) -> H3ConnectionError:
        """A QPACK error as the connection error it is (RFC 9204 §6)."""
        return cls(error.code, error.rule, error.rfc)


class H3StreamError(H3Error):
    """A stream error (RFC 9114 §8): the endpoint resets stream ``stream_id`` only."""

    def __init__(self, code: int, rule: str, rfc: str, *, stream_id: int) -> None:
        super().__init__(code, rule, rfc)
        self.stream_id = stream_id


class H3UsageError(Exception):
    """The application asked for something the protocol forbids (a local mistake).

    Not a protocol error: nothing is sent to the peer, and the connection carries on.
    """
