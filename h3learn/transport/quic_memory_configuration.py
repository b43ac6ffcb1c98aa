"""RFC 9001 §4, RFC 9000 §18.2: how the two QUIC endpoints of the in-memory pair are configured.

Both offer the ALPN token "h3" (RFC 9114 §3.1). The server uses a self-signed certificate
for localhost (certificates.py): one held in memory with an Ed25519 key (see
`in_memory_certificate` for why), or the P-256 files of a ``certificate_directory``. The
client checks it against that very certificate, for the server name "localhost" (RFC 9114
§3.1.1).

Each endpoint's QUIC grants its peer 1 MiB of flow-control credit per stream and for the
connection at the start (aioquic's defaults), and more as data is read. `ReceiveLimits`
makes that first grant smaller, so that a scenario can show a sender running out of
credit (RFC 9000 §4.1; RFC 9204 §2.1.3 for the QPACK encoder stream).

A resuming client shows the session ticket it kept (RFC 8446 §4.6.1, resumption.py).
"""

from __future__ import annotations

import functools
import ssl
from dataclasses import dataclass
from pathlib import Path

from aioquic.quic.configuration import QuicConfiguration
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

from h3learn.transport.certificates import PrivateKey, ensure_certificate, generate_certificate
from h3learn.transport.quic import H3_ALPN
from h3learn.transport.resumption import Resumption


@dataclass(frozen=True, slots=True)
class ReceiveLimits:
    """The flow-control credit one endpoint's QUIC grants its peer at the start.

    Announced as transport parameters (RFC 9000 §18.2): ``max_data`` as initial_max_data,
    for the whole connection; ``max_stream_data`` as initial_max_stream_data_bidi_local,
    _bidi_remote and _uni, for every stream (aioquic takes one value for the three).
    None keeps aioquic's default, 1 MiB. The endpoint raises both as it reads (aioquic
    doubles a limit once the peer has used half of it).
    """

    max_data: int | None = None
    max_stream_data: int | None = None

    def apply(self, configuration: QuicConfiguration) -> None:
        if self.max_data is not None:
            configuration.max_data = self.max_data
        if self.max_stream_data is not None:
            configuration.max_stream_data = self.max_stream_data


@functools.cache
def in_memory_certificate() -> tuple[x509.Certificate, PrivateKey]:
    """One certificate per process, when no directory is given (none is written to disk).

    Its key is Ed25519, not the P-256 of the files `ensure_certificate` writes: an ECDSA
    signature's DER encoding is 70 to 72 bytes long at random, and one byte more or less
    in the server's CertificateVerify (RFC 8446 §4.4.3) changes the congestion window, the
    pacing and so the moment ACKs go out. Ed25519 signatures are always 64 bytes, so the
    same scenario gives the same datagrams, sizes and times, run after run.
    """
    return generate_certificate(key=ed25519.Ed25519PrivateKey.generate())


def configurations(
    certificate_directory: Path | None,
    limits: dict[str, ReceiveLimits] | None = None,
    resume: Resumption | None = None,
) -> tuple[QuicConfiguration, QuicConfiguration]:
    """The client's and the server's QUIC configurations.

    ``limits`` ("client", "server" -> `ReceiveLimits`): the credit that side grants its
    peer at the start, when not aioquic's default. ``resume``: the client shows its ticket.
    """
    client = QuicConfiguration(alpn_protocols=[H3_ALPN], is_client=True, server_name="localhost")
    client.verify_mode = ssl.CERT_REQUIRED
    server = QuicConfiguration(alpn_protocols=[H3_ALPN], is_client=False)
    if certificate_directory is None:
        certificate, key = in_memory_certificate()
        server.certificate = certificate
        server.private_key = key
        client.load_verify_locations(cadata=certificate.public_bytes(serialization.Encoding.PEM))
    else:
        cert_path, key_path = ensure_certificate(certificate_directory)
        server.load_cert_chain(cert_path, key_path)
        client.load_verify_locations(cafile=str(cert_path))
    for name, configuration in (("client", client), ("server", server)):
        (limits or {}).get(name, ReceiveLimits()).apply(configuration)
    if resume is not None:
        client.session_ticket = resume.ticket
    return client, server
