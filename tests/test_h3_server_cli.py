"""``h3learn h3-server`` refuses a set-up that could not work, before it listens.

A certificate whose key is another's would fail every TLS handshake (RFC 8446 §4.4.3:
CertificateVerify is signed with the certificate's key), and a record folder that is a
file could hold no trace; each is one clear line and exit status 1.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from h3learn.cli import main
from h3learn.transport.certificates import (
    ensure_certificate,
    generate_certificate,
    write_certificate,
)


def failure(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(["h3-server", "--port", "0", *argv]) == 1
    captured = capsys.readouterr()
    assert "HTTP/3 on UDP" not in captured.out, "it must not start listening"
    assert captured.err.count("\n") == 1 and captured.err.startswith("h3learn h3-server: ")
    return captured.err


def test_a_key_that_is_not_the_certificates_is_refused_at_start(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    cert, _ = ensure_certificate(tmp_path / "one")
    _, other_key = write_certificate(tmp_path / "two", *generate_certificate())
    error = failure(capsys, "--cert", str(cert), "--key", str(other_key))
    assert f"the key in {other_key} does not belong to the certificate in {cert}" in error
    assert "RFC 8446 §4.4.3" in error


def test_a_record_dir_that_is_a_file_is_named_as_such(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    a_file = tmp_path / "traces"
    a_file.write_text("not a folder\n")
    error = failure(capsys, "--data-dir", str(tmp_path / "data"), "--record-dir", str(a_file))
    assert error == f"h3learn h3-server: --record-dir {a_file} is a file, not a folder\n"
    assert "cannot listen" not in error


def test_a_data_dir_that_is_a_file_is_named_as_such(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    trace = tmp_path / "trace.json"
    trace.write_text("{}\n")
    error = failure(capsys, "--data-dir", str(trace))
    assert error == f"h3learn h3-server: --data-dir {trace} is a file, not a folder\n"
