"""Decode throughput of h3learn's QPACK decoder next to hpack and pylsqpack.

RFC 9204 §2.2 (decoding) and RFC 7541 (HPACK, its HTTP/2 ancestor). The same header lists
(the QPACK interop corpus inputs fb-req, fb-resp and netbsd) are encoded once by each
library's own encoder (4096-byte table, 100 blocked streams allowed, every section
acknowledged at once); then each decoder decodes its library's encoding of all of them,
several rounds taken in turn, and each decoder's best round counts. Printed: header lists
per second, megabytes of encoded input per second, and the ratio to hpack (the goal is
>= 1.0x: a readable pure-Python QPACK decoder should be no slower than the pure-Python
HPACK decoder).

h3learn decodes with recording off (as in production use) and on (as in lessons).

Usage: python benchmarks/qpack_speed.py [--rounds N] [--corpus DIR]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path

import hpack
import pylsqpack

from h3learn.events import EventLog
from h3learn.qpack.decoder import Decoder
from h3learn.qpack.encoder import Encoder

DEFAULT_CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "qifs" / "qifs"
INPUTS = ("fb-req", "fb-resp", "netbsd")
CAPACITY = 4096
BLOCKED_STREAMS = 100

Headers = list[tuple[bytes, bytes]]


def read_qif(path: Path) -> list[Headers]:
    sections: list[Headers] = []
    current: Headers = []
    for line in path.read_bytes().split(b"\n"):
        if line.startswith(b"#"):
            continue
        if not line:
            if current:
                sections.append(current)
                current = []
            continue
        name, _, value = line.partition(b"\t")
        current.append((name, value))
    if current:
        sections.append(current)
    return sections


def timed(work: Callable[[], object]) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def bench_hpack(sections: list[Headers]) -> tuple[Callable[[], None], int]:
    encoder = hpack.Encoder()
    encoder.header_table_size = CAPACITY
    blocks = [encoder.encode(headers) for headers in sections]

    def work() -> None:
        decoder = hpack.Decoder()
        decoder.max_header_list_size = 1 << 30
        for block in blocks:
            decoder.decode(block, raw=True)

    return work, sum(len(block) for block in blocks)


Exchange = list[tuple[bytes, bytes]]  # per section: (encoder stream bytes, field section)


def pylsqpack_encode(sections: list[Headers]) -> Exchange:
    """Encode with pylsqpack, a decoder acknowledging each section at once."""
    encoder = pylsqpack.Encoder()
    settings = encoder.apply_settings(CAPACITY, BLOCKED_STREAMS)
    decoder = pylsqpack.Decoder(CAPACITY, BLOCKED_STREAMS)
    exchange = []
    for number, headers in enumerate(sections):
        instructions, block = encoder.encode(number * 4, headers)
        if number == 0:
            instructions = settings + instructions
        decoder.feed_encoder(instructions)
        acks, _ = decoder.feed_header(number * 4, block)
        encoder.feed_decoder(acks)
        exchange.append((instructions, block))
    return exchange


def h3learn_encode(sections: list[Headers]) -> Exchange:
    """Encode with h3learn's encoder, its own decoder acknowledging each section at once."""
    encoder = Encoder()
    encoder.apply_settings(CAPACITY, BLOCKED_STREAMS)
    decoder = Decoder(CAPACITY, BLOCKED_STREAMS)
    exchange = []
    for number, headers in enumerate(sections):
        instructions, block = encoder.encode(number * 4, headers)
        decoder.feed_encoder(instructions)
        decoder.decode(number * 4, block)
        encoder.feed_decoder(decoder.data_to_send())
        exchange.append((instructions, block))
    return exchange


def size_of(exchange: Exchange) -> int:
    return sum(len(instructions) + len(block) for instructions, block in exchange)


def bench_pylsqpack(sections: list[Headers]) -> tuple[Callable[[], None], int]:
    exchange = pylsqpack_encode(sections)

    def work() -> None:
        decoder = pylsqpack.Decoder(CAPACITY, BLOCKED_STREAMS)
        for number, (instructions, block) in enumerate(exchange):
            decoder.feed_encoder(instructions)
            decoder.feed_header(number * 4, block)

    return work, size_of(exchange)


def bench_h3learn(sections: list[Headers], record: bool) -> tuple[Callable[[], None], int]:
    exchange = h3learn_encode(sections)

    def work() -> None:
        recorder = EventLog().for_endpoint("server") if record else None
        decoder = Decoder(CAPACITY, BLOCKED_STREAMS, recorder=recorder)
        for number, (instructions, block) in enumerate(exchange):
            decoder.feed_encoder(instructions)
            decoder.decode(number * 4, block)
            decoder.data_to_send()

    return work, size_of(exchange)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    args = parser.parse_args()
    sections: list[Headers] = []
    for name in INPUTS:
        sections += read_qif(args.corpus / f"{name}.qif")
    count = len(sections)
    benches = {
        "hpack (pure Python HPACK)": bench_hpack(sections),
        "pylsqpack (ls-qpack, C)": bench_pylsqpack(sections),
        "h3learn, recording off": bench_h3learn(sections, record=False),
        "h3learn, recording on": bench_h3learn(sections, record=True),
    }
    # Rounds alternate between the decoders so that load on the machine hits all alike.
    best = dict.fromkeys(benches, float("inf"))
    for _ in range(args.rounds):
        for label, (work, _size) in benches.items():
            best[label] = min(best[label], timed(work))
    results = {label: (best[label], size) for label, (_work, size) in benches.items()}
    hpack_rate = count / results["hpack (pure Python HPACK)"][0]
    print(
        f"{count} header lists from {', '.join(INPUTS)}; table capacity {CAPACITY};"
        f" best of {args.rounds} rounds"
    )
    print(f"{'decoder':30} {'lists/s':>10} {'MB/s':>8} {'vs hpack':>9}")
    for label, (seconds, size) in results.items():
        rate = count / seconds
        print(f"{label:30} {rate:10.0f} {size / seconds / 1e6:8.2f} {rate / hpack_rate:8.2f}x")


if __name__ == "__main__":
    main()
