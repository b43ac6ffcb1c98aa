"""RFC 9000 §20.1, RFC 9001 §4.8: why a fetch failed, said in one line.

Whatever goes wrong while ``h3learn get`` fetches a URL (a bad URL, a CA file with no
certificate, a refused handshake, a closed connection, a reset stream) ends as one
`FetchError`, whose message says why in one line. Two of those reasons are explained here:

- `connection_failure`: why QUIC closed the connection. A transport close whose error code
  is from 0x0100 to 0x01ff carries a TLS alert (RFC 9000 §20.1, RFC 9001 §4.8): the TLS
  handshake failed. An application close (RFC 9000 §19.19) carries the server's HTTP/3
  error code; any other transport close is QUIC's own.
- `check_ca_file`: a CA file given with ``--cafile`` holds at least one PEM certificate
  (RFC 7468 §5), checked before connecting rather than deep inside the handshake.
"""

from __future__ import annotations

from pathlib import Path

from aioquic.quic.events import ConnectionTerminated
from cryptography import x509

from h3learn.transport.quic import close_reason
from h3learn.transport.udp_shared import describe_close

#: RFC 9000 §20.1: the transport error codes 0x0100-0x01ff carry a TLS alert.
CRYPTO_ERROR_FIRST, CRYPTO_ERROR_LAST = 0x0100, 0x01FF


class FetchError(Exception):
    """A request could not be made or answered; the message says why, in one line."""


def connection_failure(event: ConnectionTerminated) -> FetchError:
    """A one-line explanation of why QUIC closed the connection."""
    code = event.error_code
    if event.frame_type is not None and CRYPTO_ERROR_FIRST <= code <= CRYPTO_ERROR_LAST:
        alert = code - CRYPTO_ERROR_FIRST
        return FetchError(
            f"TLS handshake failed (alert {alert}, RFC 9001 §4.8): {event.reason_phrase}"
        )
    if event.frame_type is None:
        return FetchError(f"the server closed the connection with {describe_close(event)}")
    return FetchError(f"the connection ended: {close_reason(event)}")


def check_ca_file(cafile: str) -> None:
    """Raise FetchError unless ``cafile`` holds at least one PEM certificate.

    Checked before connecting: TLS reads the file only while verifying the server's
    certificate, and a file with no certificate then failed deep inside the handshake.
    """
    try:
        data = Path(cafile).read_bytes()
    except OSError as error:
        raise FetchError(f"cannot read the CA file {cafile}: {error.strerror or error}") from None
    try:
        x509.load_pem_x509_certificates(data)
    except ValueError:
        raise FetchError(
            f"the CA file {cafile} holds no certificate (expected PEM blocks"
            " '-----BEGIN CERTIFICATE-----', e.g. the server's cert.pem)"
        ) from None
