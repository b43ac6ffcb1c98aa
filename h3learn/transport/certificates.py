"""A self-signed TLS certificate for a local HTTP/3 server (RFC 9114 §3.1, RFC 9001 §4).

HTTP/3 always runs over TLS 1.3 inside QUIC, and RFC 9114 §3.1.1 asks a client to check
that the server's certificate covers the origin it wants. On a learner's machine that
origin is ``https://localhost:4433``, so the server needs a certificate for ``localhost``,
``127.0.0.1`` and ``::1``. No authority will sign one, so this module makes a self-signed
one with `cryptography`:

- an EC P-256 key (the curve every TLS 1.3 stack supports, RFC 8446 §9.1), signed with
  ECDSA-SHA256;
- subject alternative names ``DNS:localhost``, ``IP:127.0.0.1``, ``IP:::1`` (RFC 5280
  §4.2.1.6; clients match against these, not the common name);
- valid for 14 days: long enough for a course, well under the 398 days Chromium accepts.

`ensure_certificate(directory)` writes ``cert.pem`` and ``key.pem`` once and keeps them
while they are valid for at least another day, so a browser pinned to the key keeps
working across server restarts. `spki_pin(cert_path)` gives the pin Chromium wants for
``--ignore-certificate-errors-spki-list``: base64 of the SHA-256 of the DER
SubjectPublicKeyInfo (the same value as RFC 7469 §2.4's ``pin-sha256``).
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import ipaddress
import os
import shlex
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from cryptography.hazmat.primitives.asymmetric.types import PrivateKeyTypes
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

CERTIFICATE_FILE = "cert.pem"
PRIVATE_KEY_FILE = "key.pem"

#: The names a local server is reached by.
DNS_NAMES = ("localhost",)
IP_ADDRESSES = ("127.0.0.1", "::1")

#: The keys this module signs with.
PrivateKey = ec.EllipticCurvePrivateKey | ed25519.Ed25519PrivateKey

#: RFC 5280 §4.1.2.2: a positive serial number of at most 20 octets. Setting the top bit of
#: the 159 random bits keeps its DER encoding exactly 20 octets long, so every certificate
#: made here has the same size.
SERIAL_NUMBER_TOP_BIT = 1 << 158

VALIDITY = datetime.timedelta(days=14)
#: A certificate that expires sooner than this is replaced by `ensure_certificate`.
RENEW_BEFORE = datetime.timedelta(days=1)
#: Start the validity a little in the past, so a client whose clock lags still accepts it.
CLOCK_SKEW = datetime.timedelta(hours=1)


def generate_certificate(
    now: datetime.datetime | None = None, key: PrivateKey | None = None
) -> tuple[x509.Certificate, PrivateKey]:
    """A new self-signed certificate for localhost, 127.0.0.1 and ::1, and its key.

    The key is a new P-256 key unless one is given (the in-memory QUIC pair passes an
    Ed25519 key: its signatures always have the same length, see
    quic_memory_configuration.py).
    """
    if now is None:
        now = datetime.datetime.now(datetime.UTC)
    if key is None:
        key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "h3learn"),
            x509.NameAttribute(NameOID.COMMON_NAME, "localhost"),
        ]
    )
    alternative_names: list[x509.GeneralName] = [x509.DNSName(dns) for dns in DNS_NAMES]
    alternative_names += [x509.IPAddress(ipaddress.ip_address(ip)) for ip in IP_ADDRESSES]
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number() | SERIAL_NUMBER_TOP_BIT)
        .not_valid_before(now - CLOCK_SKEW)
        .not_valid_after(now + VALIDITY)
        .add_extension(x509.SubjectAlternativeName(alternative_names), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        # Ed25519 signs the message itself, with no separate hash (RFC 8410 §6).
        .sign(key, None if isinstance(key, ed25519.Ed25519PrivateKey) else hashes.SHA256())
    )
    return certificate, key


def write_certificate(
    directory: Path, certificate: x509.Certificate, key: PrivateKey
) -> tuple[Path, Path]:
    """Write ``cert.pem`` and ``key.pem`` (readable by the owner only) into ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    cert_path = directory / CERTIFICATE_FILE
    key_path = directory / PRIVATE_KEY_FILE
    key_pem = key.private_bytes(
        encoding=serialization.Encoding.PEM,
        format=serialization.PrivateFormat.PKCS8,
        encryption_algorithm=serialization.NoEncryption(),
    )
    _write_private(key_path, key_pem)
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    return cert_path, key_path


def _write_private(path: Path, data: bytes) -> None:
    """Write a file that only its owner may read (the private key)."""
    path.unlink(missing_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as file:
        file.write(data)


def read_certificate(cert_path: Path | str) -> x509.Certificate:
    return x509.load_pem_x509_certificate(Path(cert_path).read_bytes())


def ensure_certificate(directory: Path | str) -> tuple[Path, Path]:
    """The paths of ``cert.pem`` and ``key.pem`` in ``directory``, made if needed.

    Existing files are kept while they are readable, belong together and stay valid for at
    least another day; otherwise a new pair replaces them.
    """
    directory = Path(directory)
    cert_path = directory / CERTIFICATE_FILE
    key_path = directory / PRIVATE_KEY_FILE
    if not _usable(cert_path, key_path):
        certificate, key = generate_certificate()
        write_certificate(directory, certificate, key)
    return cert_path, key_path


def _usable(cert_path: Path, key_path: Path) -> bool:
    try:
        certificate = read_certificate(cert_path)
        key = serialization.load_pem_private_key(key_path.read_bytes(), password=None)
    except (OSError, ValueError):
        return False
    now = datetime.datetime.now(datetime.UTC)
    if (
        not certificate.not_valid_before_utc
        <= now
        <= certificate.not_valid_after_utc - RENEW_BEFORE
    ):
        return False
    return key_belongs_to(certificate, key)


def key_belongs_to(certificate: x509.Certificate, key: PrivateKeyTypes) -> bool:
    """Is ``key`` the private half of the certificate's public key (RFC 5280 §4.1.2.7)?

    TLS proves the server holds the key in CertificateVerify (RFC 8446 §4.4.3); with the
    wrong key every handshake fails, so a server checks the pair before it listens.
    """
    return _public_key_der(certificate) == key.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def check_key_pair(cert_path: Path | str, key_path: Path | str) -> str | None:
    """None if the first certificate in ``cert_path`` and the key in ``key_path`` belong
    together; otherwise what is wrong, in a few words."""
    try:
        certificate = read_certificate(cert_path)
        key = serialization.load_pem_private_key(Path(key_path).read_bytes(), password=None)
    except (OSError, ValueError, TypeError) as error:
        return str(error)
    if not key_belongs_to(certificate, key):
        return (
            f"the key in {key_path} does not belong to the certificate in {cert_path}"
            " (their public keys differ), so no TLS handshake could succeed (RFC 8446 §4.4.3)"
        )
    return None


def _public_key_der(certificate: x509.Certificate) -> bytes:
    return certificate.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def spki_pin(cert_path: Path | str) -> str:
    """base64(SHA-256(DER SubjectPublicKeyInfo)): Chromium's SPKI pin for the certificate."""
    digest = hashlib.sha256(_public_key_der(read_certificate(cert_path))).digest()
    return base64.b64encode(digest).decode("ascii")


def chromium_command(host: str, port: int, pin: str) -> str:
    """The command line that makes Chromium load a local server over QUIC, trusting its
    self-signed certificate by its SPKI ``pin`` (`spki_pin`) rather than by an authority."""
    target = host if host not in ("0.0.0.0", "::", "") else "127.0.0.1"
    if ":" in target:
        target = f"[{target}]"
    origin = f"localhost:{port}"
    arguments = [
        "/usr/lib/chromium/chromium",
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--enable-quic",
        f"--origin-to-force-quic-on={origin}",
        f"--ignore-certificate-errors-spki-list={pin}",
        f"--host-resolver-rules=MAP localhost {target}",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
    ]
    quoted = " ".join(shlex.quote(argument) for argument in arguments)
    return f'{quoted} --user-data-dir="$(mktemp -d)" --dump-dom https://{origin}/'
