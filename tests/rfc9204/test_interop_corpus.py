"""RFC 9204 §2 end to end on the QPACK interop corpus: h3learn's encoder against pylsqpack.

The six header-list files of the qpackers/qifs corpus (copied into tests/vectors/qif-inputs)
are encoded by h3learn at the configurations the corpus uses, then decoded by pylsqpack
(ls-qpack, an independent implementation) and by h3learn's own decoder: both must give back
exactly the input. The ``h3learn qif`` command does the same through files.
"""

from __future__ import annotations

from pathlib import Path

import pylsqpack
import pytest

from h3learn.cli import main
from h3learn.qpack.interop import (
    Record,
    decode_records,
    encode_records,
    parse_qif,
    read_records,
    write_records,
)

INPUTS = Path(__file__).resolve().parent.parent / "vectors" / "qif-inputs"
CORPUS = ("fb-req", "fb-resp", "netbsd", "fb-req-hq", "fb-resp-hq", "netbsd-hq")
#: (table capacity, blocked streams, immediate acknowledgment), as in the corpus file names.
CONFIGURATIONS = ((4096, 100, True), (4096, 0, True), (256, 100, True), (4096, 100, False))

Header = tuple[bytes, bytes]


def decode_with_pylsqpack(
    records: list[Record], table_capacity: int, blocked_streams: int
) -> list[list[Header]]:
    """Decode a record file with ls-qpack, resuming blocked sections as inserts arrive."""
    decoder = pylsqpack.Decoder(table_capacity, blocked_streams)
    decoded: dict[int, list[Header]] = {}
    for stream_id, data in records:
        if stream_id == 0:
            for unblocked in decoder.feed_encoder(data):
                _, headers = decoder.resume_header(unblocked)
                decoded[unblocked] = headers
            continue
        try:
            _, headers = decoder.feed_header(stream_id, data)
        except pylsqpack.StreamBlocked:
            continue
        decoded[stream_id] = headers
    return [decoded[stream_id] for stream_id in sorted(decoded)]


@pytest.mark.parametrize("name", CORPUS)
@pytest.mark.parametrize(("capacity", "blocked", "ack"), CONFIGURATIONS)
def test_pylsqpack_decodes_every_h3learn_encoding_to_its_input(
    name: str, capacity: int, blocked: int, ack: bool
) -> None:
    sections = parse_qif((INPUTS / f"{name}.qif").read_bytes())
    records = encode_records(sections, capacity, blocked, ack)
    assert decode_with_pylsqpack(records, capacity, blocked) == sections
    assert decode_records(write_records(records), capacity, blocked) == sections


@pytest.mark.parametrize("name", ["netbsd", "fb-resp"])
def test_dynamic_table_compresses_below_static_only(name: str) -> None:
    """The dynamic table pays for itself: C=4096 is far smaller than C=0 (static only)."""
    sections = parse_qif((INPUTS / f"{name}.qif").read_bytes())
    with_table = sum(len(data) for _, data in encode_records(sections, 4096, 100, True))
    static_only = encode_records(sections, 0, 0, True)
    assert all(stream_id != 0 for stream_id, _ in static_only)
    assert with_table < 0.7 * sum(len(data) for _, data in static_only)


def test_qif_command_encodes_and_decodes_through_files(tmp_path: Path) -> None:
    encoded = tmp_path / "netbsd.out.4096.100.1"
    decoded = tmp_path / "netbsd.decoded.qif"
    source = INPUTS / "netbsd.qif"
    table = ["--table-capacity", "4096", "--blocked-streams", "100"]
    assert main(["qif", "encode", str(source), str(encoded), *table, "--immediate-ack", "1"]) == 0
    assert main(["qif", "decode", str(encoded), str(decoded), *table]) == 0
    assert parse_qif(decoded.read_bytes()) == parse_qif(source.read_bytes())
    records = read_records(encoded.read_bytes())
    first_instructions = next(data for stream_id, data in records if stream_id == 0)
    assert first_instructions[:3] == bytes.fromhex("3fe11f")  # Set Dynamic Table Capacity 4096
    sections = parse_qif(source.read_bytes())
    assert {stream_id for stream_id, _ in records} == set(range(len(sections) + 1))


def test_qif_decode_of_malformed_records_exits_non_zero_naming_the_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken.out"
    broken.write_bytes(write_records([(1, b"\x00\x00\xff")]))  # static index 63+ overflow
    status = main(
        [
            "qif",
            "decode",
            str(broken),
            str(tmp_path / "x.qif"),
            "--table-capacity",
            "0",
            "--blocked-streams",
            "0",
        ]
    )
    assert status == 1
    error = capsys.readouterr().err
    assert "QPACK_DECOMPRESSION_FAILED" in error and "RFC 9204" in error


def test_qif_decode_of_a_cut_record_exits_non_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cut = tmp_path / "cut.out"
    cut.write_bytes(write_records([(1, b"\x00\x00\xd1")])[:-1])
    status = main(
        [
            "qif",
            "decode",
            str(cut),
            str(tmp_path / "x.qif"),
            "--table-capacity",
            "0",
            "--blocked-streams",
            "0",
        ]
    )
    assert status == 1
    assert "cut short" in capsys.readouterr().err


def test_qif_encode_of_a_missing_file_exits_non_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(
        [
            "qif",
            "encode",
            str(tmp_path / "nope.qif"),
            str(tmp_path / "o"),
            "--table-capacity",
            "0",
            "--blocked-streams",
            "0",
        ]
    )
    assert status == 1
    assert "cannot read" in capsys.readouterr().err
