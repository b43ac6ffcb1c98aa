"""Decode every file of the QPACK interop corpus and compare with its .qif (RFC 9204 §4.5).

A developer's check, reading ../shared/qifs (tests use the copies in tests/vectors): for each
encoded file of each implementation (ls-qpack, F5, the RFC examples) h3learn's decoder runs
with the file's table capacity and blocked-streams limit, feeding a synthetic Set Dynamic
Table Capacity first (the files predate RFC 9204 §3.2.2; see h3learn.qpack.interop), and the
decoded header lists must equal the .qif exactly. Prints one line per implementation and
every mismatch; exits non-zero if any file fails.

Usage: python benchmarks/qifs_corpus.py [--corpus DIR]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from h3learn.qpack.errors import QpackError
from h3learn.qpack.interop import decode_records, parse_qif

DEFAULT_CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "qifs"


def settings_of(name: str) -> tuple[str, int, int]:
    """'fb-req.out.4096.100.1' -> ('fb-req', 4096, 100); the RFC examples use C=220, B=100."""
    qif, _, rest = name.partition(".out")
    numbers = [int(part) for part in rest.split(".") if part]
    if len(numbers) >= 2:
        return qif, numbers[0], numbers[1]
    return qif, 220, 100


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    args = parser.parse_args()
    passed: Counter[str] = Counter()
    failed: Counter[str] = Counter()
    for path in sorted((args.corpus / "encoded").glob("*/*")):
        implementation = path.parent.name
        qif, capacity, blocked = settings_of(path.name)
        expected_path = args.corpus / "qifs" / f"{qif}.qif"
        if not expected_path.exists():
            continue
        try:
            decoded = decode_records(path.read_bytes(), capacity, blocked)
        except (QpackError, ValueError) as error:
            failed[implementation] += 1
            print(f"FAIL {implementation}/{path.name}: {error}")
            continue
        if decoded != parse_qif(expected_path.read_bytes()):
            failed[implementation] += 1
            print(f"FAIL {implementation}/{path.name}: decoded lists differ from {qif}.qif")
            continue
        passed[implementation] += 1
    for implementation in sorted(passed | failed):
        total = passed[implementation] + failed[implementation]
        print(f"{implementation:10} {passed[implementation]:4} of {total:4} files match their .qif")
    print(f"all        {sum(passed.values()):4} of {sum((passed + failed).values()):4}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
