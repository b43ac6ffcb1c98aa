"""RFC 9114 §3.1.1 and RFC 5280 §4.2.1.6: the self-signed certificate for a local server.

The certificate must name every address a local client uses (localhost, 127.0.0.1, ::1),
stay valid long enough for a course but within Chromium's 398-day limit, survive server
restarts unchanged (a browser is pinned to its key), and give the SPKI pin Chromium's
``--ignore-certificate-errors-spki-list`` expects, computed here as ../shared/peers.md
computes it with openssl.
"""

from __future__ import annotations

import datetime
import ipaddress
import subprocess
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec
from optional_tools import require_tool

from h3learn.transport.certificates import (
    ensure_certificate,
    generate_certificate,
    read_certificate,
    spki_pin,
    write_certificate,
)


def test_certificate_names_localhost_and_both_loopback_addresses() -> None:
    certificate, key = generate_certificate()
    names = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert names.get_values_for_type(x509.DNSName) == ["localhost"]
    assert names.get_values_for_type(x509.IPAddress) == [
        ipaddress.ip_address("127.0.0.1"),
        ipaddress.ip_address("::1"),
    ]
    assert isinstance(key, ec.EllipticCurvePrivateKey)
    assert isinstance(key.curve, ec.SECP256R1)
    constraints = certificate.extensions.get_extension_for_class(x509.BasicConstraints)
    assert constraints.critical and not constraints.value.ca


def test_certificate_is_valid_for_more_than_a_day_and_at_most_398_days() -> None:
    now = datetime.datetime.now(datetime.UTC)
    certificate, _ = generate_certificate(now)
    assert certificate.not_valid_before_utc <= now
    lifetime = certificate.not_valid_after_utc - now
    assert datetime.timedelta(days=1) < lifetime <= datetime.timedelta(days=398)


def test_every_certificate_has_the_same_size() -> None:
    """A fixed-length serial number (RFC 5280 §4.1.2.2) keeps the DER length constant."""
    sizes = {len(generate_certificate()[0].tbs_certificate_bytes) for _ in range(30)}
    assert len(sizes) == 1


def test_ensure_certificate_creates_the_files_once_and_keeps_them(tmp_path: Path) -> None:
    cert_path, key_path = ensure_certificate(tmp_path / "certs")
    first = (cert_path.read_bytes(), key_path.read_bytes())
    assert key_path.stat().st_mode & 0o777 == 0o600
    assert ensure_certificate(tmp_path / "certs") == (cert_path, key_path)
    assert (cert_path.read_bytes(), key_path.read_bytes()) == first


def test_ensure_certificate_replaces_one_about_to_expire(tmp_path: Path) -> None:
    old = datetime.datetime.now(datetime.UTC) - datetime.timedelta(days=13, hours=12)
    certificate, key = generate_certificate(old)
    write_certificate(tmp_path, certificate, key)
    cert_path, _ = ensure_certificate(tmp_path)
    assert read_certificate(cert_path).serial_number != certificate.serial_number


def test_ensure_certificate_replaces_a_key_that_does_not_match(tmp_path: Path) -> None:
    certificate, _ = generate_certificate()
    _, other_key = generate_certificate()
    write_certificate(tmp_path, certificate, other_key)
    cert_path, _ = ensure_certificate(tmp_path)
    assert read_certificate(cert_path).serial_number != certificate.serial_number


def test_ensure_certificate_replaces_unreadable_files(tmp_path: Path) -> None:
    (tmp_path / "cert.pem").write_text("not a certificate")
    (tmp_path / "key.pem").write_text("not a key")
    cert_path, _ = ensure_certificate(tmp_path)
    read_certificate(cert_path)


def test_spki_pin_matches_the_openssl_pipeline_chromium_documents(tmp_path: Path) -> None:
    openssl = require_tool("openssl")
    cert_path, _ = ensure_certificate(tmp_path)

    def run(arguments: list[str], data: bytes) -> bytes:
        return subprocess.run(
            [openssl, *arguments], input=data, capture_output=True, check=True
        ).stdout

    public_key = run(["x509", "-pubkey", "-noout", "-in", str(cert_path)], b"")
    der = run(["pkey", "-pubin", "-outform", "der"], public_key)
    digest = run(["dgst", "-sha256", "-binary"], der)
    expected = run(["base64"], digest).decode().strip()
    assert spki_pin(cert_path) == expected
    assert len(expected) == 44  # base64 of 32 bytes
