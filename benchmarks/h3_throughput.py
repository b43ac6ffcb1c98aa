"""Requests per second of h3learn's HTTP/3 stack next to aioquic's, over the same QUIC.

RFC 9114 §4.1 request/response exchanges, end to end: both sides of every run use aioquic's
QUIC (TLS 1.3, packet protection, ACKs) over the in-memory datagram pair of
h3learn.transport.quic_memory; only the HTTP/3 + QPACK layer differs:

- aioquic: aioquic's H3Connection on both sides (its QPACK is ls-qpack, in C);
- h3learn, recording off: h3learn's H3Connection on both sides, no events built;
- h3learn, recording on: the same, every frame, instruction and table change recorded with
  its labelled bytes (what lessons and live captures do).

Each round opens a new connection and runs the same requests (a browser-like GET, the
response headers and a small body), in batches that are in flight together. Rounds run in
turn so that load on the machine hits all three alike; each stack's best round counts.
Goal: h3learn with recording on >= 0.9x aioquic.

Usage: python benchmarks/h3_throughput.py [--requests N] [--batch B] [--rounds R]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from aioquic.h3 import events as aioquic_events
from aioquic.h3.connection import H3Connection as AioquicH3Connection

from h3learn.events import EventLog
from h3learn.h3.connection import H3Connection
from h3learn.h3.http_events import DataReceived, HeadersReceived, StreamEnded
from h3learn.h3.settings import Settings
from h3learn.transport.quic_memory import QuicMemoryPair, VirtualClock

Header = tuple[bytes, bytes]

SETTINGS = Settings(qpack_max_table_capacity=4096, qpack_blocked_streams=16)
BODY = b"<!doctype html><title>h3learn</title><p>Hello over HTTP/3.</p>\n" * 4


def request_headers(number: int) -> list[Header]:
    return [
        (b":method", b"GET"),
        (b":scheme", b"https"),
        (b":authority", b"localhost:4433"),
        (b":path", f"/page/{number % 50}".encode()),
        (b"user-agent", b"Mozilla/5.0 (X11; Linux x86_64) h3learn-benchmark/1.0"),
        (b"accept", b"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"),
        (b"accept-language", b"en-GB,en;q=0.9"),
        (b"accept-encoding", b"gzip, deflate, br"),
        (b"cookie", b"session=7f3a9c0e1b2d4f6a8c0e2b4d6f8a0c2e"),
    ]


RESPONSE_HEADERS: list[Header] = [
    (b":status", b"200"),
    (b"content-type", b"text/html; charset=utf-8"),
    (b"content-length", str(len(BODY)).encode()),
    (b"cache-control", b"max-age=60"),
    (b"server", b"h3learn-benchmark"),
]


def run_aioquic(requests: int, batch: int) -> int:
    pair = QuicMemoryPair.create(client=AioquicH3Connection, server=AioquicH3Connection)
    pair.pump()
    client, server = pair.aioquic("client"), pair.aioquic("server")
    quic_client = pair.quic["client"]
    completed = 0
    for start in range(0, requests, batch):
        for number in range(start, min(start + batch, requests)):
            stream_id = quic_client.get_next_available_stream_id()
            client.send_headers(stream_id, request_headers(number), end_stream=True)
        events = pair.pump()
        for event in events["server"]:
            if isinstance(event, aioquic_events.HeadersReceived):
                server.send_headers(event.stream_id, RESPONSE_HEADERS)
                server.send_data(event.stream_id, BODY, end_stream=True)
        events = pair.pump()
        completed += sum(
            1
            for event in events["client"]
            if isinstance(event, aioquic_events.DataReceived) and event.stream_ended
        )
    return completed


def run_h3learn(requests: int, batch: int, record: bool) -> int:
    clock = VirtualClock()
    log = EventLog(clock=clock) if record else None
    client = H3Connection(
        is_client=True, settings=SETTINGS, recorder=log.for_endpoint("client") if log else None
    )
    server = H3Connection(
        is_client=False, settings=SETTINGS, recorder=log.for_endpoint("server") if log else None
    )
    pair = QuicMemoryPair.create(client=client, server=server, log=log, clock=clock)
    pair.pump()
    completed = 0
    for start in range(0, requests, batch):
        for number in range(start, min(start + batch, requests)):
            client.send_request(request_headers(number), end_stream=True)
        events = pair.pump()
        for event in events["server"]:
            if isinstance(event, HeadersReceived):
                server.send_headers(event.stream_id, RESPONSE_HEADERS)
                server.send_data(event.stream_id, BODY, end_stream=True)
        events = pair.pump()
        completed += sum(
            1
            for event in events["client"]
            if isinstance(event, StreamEnded)
            or (isinstance(event, DataReceived | HeadersReceived) and event.stream_ended)
        )
    return completed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--batch", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    stacks: dict[str, Callable[[], int]] = {
        "aioquic H3Connection": lambda: run_aioquic(args.requests, args.batch),
        "h3learn, recording off": lambda: run_h3learn(args.requests, args.batch, False),
        "h3learn, recording on": lambda: run_h3learn(args.requests, args.batch, True),
    }
    best = dict.fromkeys(stacks, float("inf"))
    for _ in range(args.rounds):
        for label, run in stacks.items():
            start = time.perf_counter()
            completed = run()
            elapsed = time.perf_counter() - start
            if completed != args.requests:
                raise SystemExit(f"{label}: {completed} of {args.requests} requests completed")
            best[label] = min(best[label], elapsed)
    reference = args.requests / best["aioquic H3Connection"]
    print(
        f"{args.requests} GETs per connection, {args.batch} in flight at a time, over aioquic"
        f" QUIC in memory; best of {args.rounds} rounds"
    )
    print(f"{'HTTP/3 stack':26} {'requests/s':>11} {'vs aioquic':>11}")
    for label, seconds in best.items():
        rate = args.requests / seconds
        print(f"{label:26} {rate:11.0f} {rate / reference:10.2f}x")


if __name__ == "__main__":
    main()
