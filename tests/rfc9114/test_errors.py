"""RFC 9114 §8: error codes, reserved codes, and the two kinds of error.

The registry is checked against the table of RFC 9114 §11.2.3 and against aioquic's copy;
reserved values against the formula ``0x1f * N + 0x21``; the exceptions against the message
format every error in the project uses (docs/architecture.md, "Errors").
"""

from __future__ import annotations

import pytest
from aioquic.h3.connection import ErrorCode as AioquicErrorCode
from hypothesis import given
from hypothesis import strategies as st

from h3learn.h3.errors import (
    RESERVED_MAX,
    ErrorCode,
    H3ConnectionError,
    H3Error,
    H3StreamError,
    code_name,
    interpret_received_code,
    is_reserved,
    reserved_value,
)
from h3learn.qpack.errors import DecompressionFailed, QpackErrorCode
from h3learn.wire.varint import VARINT_MAX

# RFC 9114 §11.2.3, "Initial HTTP/3 Error Codes" (a table of facts).
REGISTRY = [
    ("H3_NO_ERROR", 0x0100),
    ("H3_GENERAL_PROTOCOL_ERROR", 0x0101),
    ("H3_INTERNAL_ERROR", 0x0102),
    ("H3_STREAM_CREATION_ERROR", 0x0103),
    ("H3_CLOSED_CRITICAL_STREAM", 0x0104),
    ("H3_FRAME_UNEXPECTED", 0x0105),
    ("H3_FRAME_ERROR", 0x0106),
    ("H3_EXCESSIVE_LOAD", 0x0107),
    ("H3_ID_ERROR", 0x0108),
    ("H3_SETTINGS_ERROR", 0x0109),
    ("H3_MISSING_SETTINGS", 0x010A),
    ("H3_REQUEST_REJECTED", 0x010B),
    ("H3_REQUEST_CANCELLED", 0x010C),
    ("H3_REQUEST_INCOMPLETE", 0x010D),
    ("H3_MESSAGE_ERROR", 0x010E),
    ("H3_CONNECT_ERROR", 0x010F),
    ("H3_VERSION_FALLBACK", 0x0110),
]


# -- §8.1 the registered codes ----------------------------------------------------------------


def test_error_codes_are_exactly_the_seventeen_of_the_iana_table() -> None:
    assert [(code.name, code.value) for code in ErrorCode] == REGISTRY


@pytest.mark.parametrize(("name", "value"), REGISTRY)
def test_error_code_values_match_aioquic(name: str, value: int) -> None:
    assert AioquicErrorCode[name].value == value == ErrorCode[name].value


def test_qpack_codes_are_not_duplicated_in_the_h3_registry() -> None:
    """RFC 9204 §8.3's codes live in h3learn.qpack.errors only."""
    assert not any(code.name.startswith("QPACK_") for code in ErrorCode)
    assert set(ErrorCode).isdisjoint(set(QpackErrorCode))


def test_code_name_knows_h3_and_qpack_codes_and_says_what_an_unknown_one_is() -> None:
    assert code_name(0x0105) == "H3_FRAME_UNEXPECTED"
    assert code_name(0x0200) == "QPACK_DECOMPRESSION_FAILED"
    assert code_name(0x21) == "reserved error code 0x21"
    assert code_name(0x0111) == "unknown error code 0x111"


# -- §8.1 reserved codes: 0x1f * N + 0x21 ------------------------------------------------------


def test_the_first_reserved_values_follow_the_formula() -> None:
    assert [reserved_value(n) for n in range(4)] == [0x21, 0x40, 0x5F, 0x7E]
    assert all(is_reserved(value) for value in (0x21, 0x40, 0x5F, 0x7E))


def test_the_last_reserved_value_is_the_one_rfc_9114_names() -> None:
    """RFC 9114 §11.2: "0x21, 0x40, ..., through 0x3ffffffffffffffe"."""
    assert RESERVED_MAX == 0x3FFF_FFFF_FFFF_FFFE
    assert is_reserved(RESERVED_MAX)
    assert RESERVED_MAX + 0x1F > VARINT_MAX
    with pytest.raises(ValueError):
        reserved_value((RESERVED_MAX - 0x21) // 0x1F + 1)


def test_values_next_to_reserved_ones_are_not_reserved() -> None:
    assert not any(is_reserved(value) for value in (0x00, 0x20, 0x22, 0x3F, 0x41, 0x0100))


def test_no_registered_code_is_reserved() -> None:
    """RFC 9114 §11.2: IANA never assigns a reserved value."""
    assert not any(is_reserved(code) for code in [*ErrorCode, *QpackErrorCode])


@given(st.integers(min_value=0, max_value=(RESERVED_MAX - 0x21) // 0x1F))
def test_every_generated_reserved_value_is_detected(n: int) -> None:
    assert is_reserved(reserved_value(n))
    assert not is_reserved(reserved_value(n) + 1)


# -- §8: unknown codes mean H3_NO_ERROR -------------------------------------------------------


def test_a_received_unknown_or_reserved_code_is_treated_as_h3_no_error() -> None:
    assert interpret_received_code(0x0111) is ErrorCode.H3_NO_ERROR
    assert interpret_received_code(reserved_value(7)) is ErrorCode.H3_NO_ERROR
    assert interpret_received_code(0x0108) is ErrorCode.H3_ID_ERROR
    assert interpret_received_code(0x0201) is QpackErrorCode.QPACK_ENCODER_STREAM_ERROR


# -- §8: connection errors and stream errors ----------------------------------------------------


def test_an_error_message_names_the_code_the_section_and_the_rule() -> None:
    error = H3ConnectionError(
        ErrorCode.H3_FRAME_UNEXPECTED, "second SETTINGS frame on the control stream", "9114#7.2.4"
    )
    assert str(error) == (
        "H3_FRAME_UNEXPECTED (RFC 9114 §7.2.4): second SETTINGS frame on the control stream"
    )
    assert (error.code, error.rfc) == (ErrorCode.H3_FRAME_UNEXPECTED, "9114#7.2.4")


def test_a_stream_error_carries_the_stream_it_resets() -> None:
    error = H3StreamError(
        ErrorCode.H3_MESSAGE_ERROR, "uppercase field name", "9114#4.2", stream_id=8
    )
    assert error.stream_id == 8
    assert str(error).startswith("H3_MESSAGE_ERROR (RFC 9114 §4.2): ")


def test_stream_errors_and_connection_errors_are_distinct() -> None:
    assert issubclass(H3StreamError, H3Error) and issubclass(H3ConnectionError, H3Error)
    assert not issubclass(H3StreamError, H3ConnectionError)
    assert not issubclass(H3ConnectionError, H3StreamError)


def test_a_qpack_error_becomes_a_connection_error_with_its_own_code() -> None:
    """RFC 9204 §6: QPACK errors close the connection."""
    qpack = DecompressionFailed("field line refers to an evicted entry", "9204#2.2.3")
    error = H3ConnectionError.from_qpack(qpack)
    assert error.code == QpackErrorCode.QPACK_DECOMPRESSION_FAILED
    assert str(error) == str(qpack)
