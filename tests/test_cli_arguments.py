"""Command-line options out of range are refused in one line, before anything runs.

argparse exits with status 2 and names the option and the rule (RFC 9000 §16 for SETTINGS
values, RFC 768 for UDP ports); none of these may reach the protocol code and end in a
Python traceback.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from h3learn.cli import main


def refused(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """Run ``h3learn ARGV``; assert it stops with status 2 and return its one error line."""
    with pytest.raises(SystemExit) as stopped:
        main(list(argv))
    assert stopped.value.code == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert "Traceback" not in error
    return error


@pytest.mark.parametrize("seconds", ["-1", "0", "nan", "inf", "soon"])
def test_h3_server_idle_timeout_must_be_a_positive_number_of_seconds(
    capsys: pytest.CaptureFixture[str], seconds: str
) -> None:
    error = refused(capsys, "h3-server", "--idle-timeout", seconds)
    assert "--idle-timeout" in error and "seconds" in error


@pytest.mark.parametrize("port", ["70000", "-1", "65536", "http"])
def test_h3_server_port_must_be_a_udp_port(capsys: pytest.CaptureFixture[str], port: str) -> None:
    error = refused(capsys, "h3-server", "--port", port)
    assert "--port" in error
    if port != "http":
        assert "0-65535" in error


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--table-capacity", "4611686018427387904"),  # 2^62: one past the largest varint
        ("--table-capacity", "-1"),
        ("--blocked-streams", "-3"),
    ],
)
def test_walkthrough_settings_must_fit_a_varint_rfc9000_section_16(
    capsys: pytest.CaptureFixture[str], option: str, value: str
) -> None:
    error = refused(capsys, "walkthrough", option, value, "--no-bytes")
    assert option in error and "RFC 9000 §16" in error


def test_lessons_record_to_a_missing_folder_says_it_cannot_write(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    target = tmp_path / "missing" / "x.json"
    status = main(["lessons", "record", "05-the-dynamic-table", "-o", str(target)])
    assert status == 1
    error = capsys.readouterr().err
    assert error == f"h3learn lessons: cannot write {target}: No such file or directory\n"


@pytest.mark.parametrize(
    "argv",
    [
        ("serve", "--port"),
        ("serve", "--h3-port"),
        ("h3-server", "--port"),
    ],
)
@pytest.mark.parametrize("port", ["70000", "65536", "-1"])
def test_every_port_option_refuses_a_number_no_port_can_have(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, str], port: str
) -> None:
    error = refused(capsys, *argv, port)
    assert argv[1] in error and "port (0-65535, RFC" in error


@pytest.mark.parametrize(
    "url", ["notaurl", "ftp://example.org/", "http://", "https://:5000/", "http://host:port/"]
)
def test_serve_public_url_must_be_an_http_url_with_a_host(
    capsys: pytest.CaptureFixture[str], url: str
) -> None:
    error = refused(capsys, "serve", "--public-url", url)
    assert "--public-url" in error and repr(url) in error


@pytest.mark.parametrize("limit", ["-5", "0", "many"])
def test_export_max_bytes_must_be_a_positive_number(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, limit: str
) -> None:
    error = refused(capsys, "export", str(tmp_path / "t.json"), "--format", "qlog", "-o", "-",
                    "--max-bytes", limit)  # fmt: skip
    assert "--max-bytes" in error


def set_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path, lesson: str, value: str) -> str:
    """Run ``lessons record LESSON --set VALUE``; assert status 1, one line, nothing written."""
    target = tmp_path / "x.json"
    assert main(["lessons", "record", lesson, "-o", str(target), "--set", value]) == 1
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and error.startswith("h3learn lessons: --set: "), error
    assert not target.exists()
    return error


@pytest.mark.parametrize(
    "value",
    [
        "client.qpack_max_table_capacity=99999999999999999999",
        "server.qpack_blocked_streams=99999999999999999999",
        "client.max_field_section_size=4611686018427387904",  # 2^62
        "client.extra_settings=[[99999999999999999999,1]]",
        "client.extra_settings=[[33,4611686018427387904]]",
    ],
)
def test_lessons_record_set_values_must_fit_a_varint_rfc9000_section_16(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, value: str
) -> None:
    error = set_refused(capsys, tmp_path, "05-the-dynamic-table", value)
    assert value.partition("=")[0] in error and "RFC 9000 §16" in error


def test_lessons_record_set_quic_credit_must_fit_a_varint_not_blame_the_lesson(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    value = "client.quic_max_data=99999999999999999999"
    error = set_refused(capsys, tmp_path, "07-blocked-streams", value)
    assert "client.quic_max_data" in error and "RFC 9000 §16" in error
    assert ".toml" not in error


def test_lessons_record_set_encoder_capacity_above_the_peers_maximum_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    value = "client.encoder_table_capacity=999999"
    error = set_refused(capsys, tmp_path, "05-the-dynamic-table", value)
    assert "client.encoder_table_capacity: 999999 is above the peer's" in error
    assert "of 4096" in error and "RFC 9204 §3.2.3" in error
