"""Compression of h3learn's QPACK encoder next to ls-qpack (RFC 9204 §2.1).

For each configuration (C = the decoder's maximum table capacity, B = its maximum blocked
streams, A = 1: every section acknowledged at once) and each of the six interop corpus
inputs, this prints the total size in bytes of what the encoder produced (encoder stream +
encoded field sections; the record headers of the corpus files are not counted) for:

- h3learn: `h3learn.qpack.interop.encode_records`, with the encoder's defaults;
- ls-qpack (corpus): ls-qpack's files in the corpus (shared/qifs/encoded/ls-qpack);
- pylsqpack (live): pylsqpack's encoder run now, each section acknowledged at once (see
  `pylsqpack_total` for who sends the acknowledgments).

and the ratio h3learn / ls-qpack (below 1.0 means h3learn is smaller). The corpus files were
written for QPACK drafts and carry no Set Dynamic Table Capacity; h3learn and pylsqpack send
one (3 bytes for 4096), as RFC 9204 §3.2.2 requires. h3learn also keeps cookie values under
20 bytes out of the table (RFC 9204 §7.1.3), which ls-qpack does not: that is what fb-req
costs more with B=0. Every h3learn output is
decoded back (by h3learn's decoder while encoding) and checked against its input.

Usage: python benchmarks/qpack_compression.py [--corpus DIR]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pylsqpack

from h3learn.qpack.decoder import Decoder
from h3learn.qpack.interop import encode_records, parse_qif, read_records

DEFAULT_CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "qifs"
INPUTS = ("fb-req", "fb-resp", "netbsd", "fb-req-hq", "fb-resp-hq", "netbsd-hq")
#: (C, B, A) as in the corpus file names.
CONFIGURATIONS = ((4096, 100, 1), (4096, 0, 1), (256, 100, 1))

Headers = list[tuple[bytes, bytes]]


def h3learn_total(sections: list[Headers], capacity: int, blocked: int, ack: int) -> int:
    records = encode_records(sections, capacity, blocked, bool(ack))
    return sum(len(data) for _, data in records)


def corpus_total(path: Path) -> int:
    return sum(len(data) for _, data in read_records(path.read_bytes()))


def pylsqpack_total(sections: list[Headers], capacity: int, blocked: int, ack: int) -> int:
    """pylsqpack's encoder, acknowledged like h3learn's: by h3learn's decoder.

    pylsqpack's own Decoder sends Section Acknowledgments but never an Insert Count
    Increment (RFC 9204 §4.4.3), so with B=0 its encoder would never learn that an insert
    arrived. The acknowledgments therefore come from h3learn's Decoder, as they do for
    h3learn's encoder in `encode_records`; pylsqpack's Decoder checks the output.
    """
    encoder = pylsqpack.Encoder()
    checker = pylsqpack.Decoder(capacity, blocked)
    acknowledger = Decoder(capacity, blocked)
    encoder_stream = encoder.apply_settings(capacity, blocked)
    total = len(encoder_stream)
    checker.feed_encoder(encoder_stream)
    acknowledger.feed_encoder(encoder_stream)
    for stream_id, headers in enumerate(sections, start=1):
        encoder_stream, field_section = encoder.encode(stream_id, headers)
        total += len(encoder_stream) + len(field_section)
        checker.feed_encoder(encoder_stream)
        _, decoded = checker.feed_header(stream_id, field_section)
        assert list(decoded) == headers
        if ack:
            acknowledger.feed_encoder(encoder_stream)
            acknowledger.decode(stream_id, field_section)
            encoder.feed_decoder(acknowledger.data_to_send())
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    args = parser.parse_args()
    qifs = args.corpus / "qifs"
    inputs = {name: parse_qif((qifs / f"{name}.qif").read_bytes()) for name in INPUTS}
    for capacity, blocked, ack in CONFIGURATIONS:
        print(f"\nC={capacity} B={blocked} A={ack}")
        print(f"  {'input':<12}{'h3learn':>10}{'ls-qpack':>10}{'ratio':>8}{'pylsqpack':>11}")
        totals = [0, 0, 0]
        for name, sections in inputs.items():
            ours = h3learn_total(sections, capacity, blocked, ack)
            corpus_file = (
                args.corpus / "encoded" / "ls-qpack" / f"{name}.out.{capacity}.{blocked}.{ack}"
            )
            theirs = corpus_total(corpus_file)
            live = pylsqpack_total(sections, capacity, blocked, ack)
            for position, value in enumerate((ours, theirs, live)):
                totals[position] += value
            print(f"  {name:<12}{ours:>10,}{theirs:>10,}{ours / theirs:>8.3f}{live:>11,}")
        ours, theirs, live = totals
        print(f"  {'total':<12}{ours:>10,}{theirs:>10,}{ours / theirs:>8.3f}{live:>11,}")


if __name__ == "__main__":
    main()
