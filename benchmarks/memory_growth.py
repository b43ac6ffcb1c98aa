"""Memory of `h3learn serve` while many large captures are opened through the web API.

Starts ``h3learn serve`` (web UI and recording endpoint on free loopback ports, a fresh
data directory) and, for a bounded number of rounds:

1. opens ``--connections`` connections to its endpoint at once with the project's client
   (h3learn.transport.udp_client.fetch), each sending ``--requests`` requests (about 13
   server events per request: 600 requests make an 8,000-event capture);
2. while they run (live captures, still being appended to) and after they end (finished
   captures, read back from their files), opens captures through the HTTP API as the step
   page does: the trace with its first page of rows, steps at random positions (event and
   state), a filtered page of rows, an export (native, qlog, qlog 0.3), a comparison of
   three, and a rename; and watches them over Socket.IO (``/live``: ``watch_list``,
   ``watch``, ``unwatch``), as the Live page and a capture's step page do;
3. every ``--delete-every`` rounds, deletes the oldest finished captures but the last
   ``--keep``.

The server's resident memory (VmRSS of /proc/<pid>/status) is printed after each round,
with the number of captures on disk. Every loop is bounded; the server is stopped by its
own pid (SIGTERM, `ServeProcess.stop`) at the end, or on any error.

Usage: python benchmarks/memory_growth.py [--rounds 12] [--connections 4] [--requests 600]
                                          [--opens 12] [--keep 24] [--delete-every 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

from h3learn.transport.udp_client import fetch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "web"))
from serve_helpers import ServeProcess, start_serve


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for {pid}")


class Server:
    """The API of ``h3learn serve`` (started by tests/web/serve_helpers.py), over urllib."""

    def __init__(self, serve: ServeProcess) -> None:
        self.serve = serve
        self.base = serve.base_url
        self.origin = serve.origin
        self.cert = serve.cert
        self.pid = serve.process.pid

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, bytes]:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()

    def json(self, path: str) -> Any:
        status, body = self.call("GET", path)
        if status != 200:
            raise RuntimeError(f"GET {path}: {status} {body[:200]!r}")
        return json.loads(body)


class LiveSocket:
    """A Socket.IO client of the ``/live`` namespace over HTTP long-polling (Engine.IO 4),
    written with urllib alone: the page's ``watch_list``, ``watch`` and ``unwatch``."""

    def __init__(self, base: str) -> None:
        self.base = f"{base}/socket.io/?EIO=4&transport=polling"
        opened = self._get(self.base)
        self.url = f"{self.base}&sid={json.loads(opened[0][1:])['sid']}"
        self._post("40/live,")
        self._next_ack = 0
        self._read_until(lambda packet: packet.startswith("40/live,"))

    def _get(self, url: str) -> list[str]:
        with urllib.request.urlopen(url, timeout=30) as response:
            return str(response.read().decode()).split("\x1e")

    def _post(self, packet: str) -> None:
        request = urllib.request.Request(self.url, data=packet.encode(), method="POST")
        request.add_header("Content-Type", "text/plain;charset=UTF-8")
        with urllib.request.urlopen(request, timeout=30) as response:
            response.read()

    def _read_until(self, wanted: Any) -> str:
        for _ in range(200):  # each poll returns what was queued (batches of rows)
            for packet in self._get(self.url):
                if packet == "2":
                    self._post("3")  # the server's ping
                elif wanted(packet):
                    return packet
        raise RuntimeError("no answer over Socket.IO")

    def call(self, event: str, data: dict[str, Any]) -> Any:
        number = self._next_ack
        self._next_ack += 1
        self._post(f"42/live,{number}" + json.dumps([event, data]))
        answer = self._read_until(lambda packet: packet.startswith(f"43/live,{number}["))
        return json.loads(answer[len(f"43/live,{number}") :])[0]

    def emit(self, event: str, data: dict[str, Any]) -> None:
        self._post("42/live," + json.dumps([event, data]))

    def close(self) -> None:
        self._post("41/live,")
        self._post("1")


def connections(server: Server, count: int, requests: int, number: int) -> threading.Thread:
    """``count`` connections of ``requests`` requests each, in a thread of their own."""

    async def one(n: int) -> None:
        urls = [f"{server.origin}/round{number}/c{n}/r{r}" for r in range(requests)]
        await fetch(urls, cafile=str(server.cert), timeout=120)

    async def every() -> None:
        results = await asyncio.gather(*(one(n) for n in range(count)), return_exceptions=True)
        failed = [result for result in results if isinstance(result, BaseException)]
        if failed:  # a round without its load would measure nothing: say so
            print(f"  round {number}: {len(failed)} of {count} connections failed: {failed[0]}")

    thread = threading.Thread(target=asyncio.run, args=(every(),), daemon=True)
    thread.start()
    return thread


def open_capture(server: Server, sio: LiveSocket, capture_id: str, rng: random.Random) -> int:
    """What a step page asks of one capture; answers the requests made."""
    made = 0
    ack = sio.call("watch", {"capture": capture_id})
    if "error" in ack:
        return made
    meta = server.json(f"/api/traces/{capture_id}?limit=200")
    made += 1
    count = meta["count"]
    if count:
        for _ in range(6):
            step = rng.randrange(count)
            status, _ = server.call("GET", f"/api/traces/{capture_id}/steps/{step}")
            made += 1
            assert status == 200, (capture_id, step, status)
        offset = rng.randrange(count)
        server.json(f"/api/traces/{capture_id}/events?offset={offset}&category=qpack&q=path")
        made += 1
    sio.emit("unwatch", {"capture": capture_id})
    return made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument("--requests", type=int, default=600)
    parser.add_argument("--opens", type=int, default=12, help="captures opened per round")
    parser.add_argument("--keep", type=int, default=24, help="finished captures kept")
    parser.add_argument("--delete-every", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as directory:
        serve = start_serve(
            Path(directory) / "data", "--max-requests", str(args.requests), "--max-events", "10000"
        )
        server = Server(serve)
        try:
            began = time.monotonic()
            print(f"serve pid {server.pid}: {rss_mib(server.pid):.0f} MiB at start", flush=True)
            for number in range(1, args.rounds + 1):
                load = connections(server, args.connections, args.requests, number)
                # A session per round: long-polling ends one not polled for 45 s (pings).
                sio = LiveSocket(server.base)
                sio.call("watch_list", {})
                made = opened = 0
                exports = ("native", "qlog", "qlog-0.3")
                for turn in range(args.opens):
                    rows = server.json("/api/captures")["captures"]
                    if not rows:
                        time.sleep(0.2)
                        continue
                    live = [row["id"] for row in rows if row["state"] == "live"]
                    done = [row["id"] for row in rows if row["state"] != "live"]
                    # Half the time a running capture, while there is one.
                    pool = live if live and turn % 2 == 0 else (done or live)
                    made += open_capture(server, sio, rng.choice(pool), rng)
                    opened += 1
                    if done and turn % 4 == 1:
                        form = exports[turn % len(exports)]
                        server.call("GET", f"/api/traces/{rng.choice(done)}/download?format={form}")
                        made += 1
                    if len(done) >= 3 and turn % 4 == 3:
                        ids = ",".join(rng.sample(done, 3))
                        server.json(f"/api/captures/compare?ids={ids}")
                        server.call("PATCH", f"/api/captures/{done[0]}", {"title": f"t{turn}"})
                        made += 2
                sio.close()
                load.join(180)
                deleted = 0
                if number % args.delete_every == 0:
                    rows = server.json("/api/captures")["captures"]
                    done = [row["id"] for row in rows if row["state"] != "live"]
                    for capture_id in done[args.keep :]:
                        status, _ = server.call("DELETE", f"/api/captures/{capture_id}")
                        deleted += status == 204
                rows = server.json("/api/captures")["captures"]
                events = sum(row["events"] or 0 for row in rows)
                print(
                    f"round {number:2d} at {time.monotonic() - began:5.0f} s:"
                    f" RSS {rss_mib(server.pid):6.0f} MiB; {len(rows)} captures on disk"
                    f" ({events} events), {opened} opened ({made} requests),"
                    f" {deleted} deleted; load {os.getloadavg()[0]:.1f}",
                    flush=True,
                )
        finally:
            print(f"serve stopped: exit status {serve.stop()}")


if __name__ == "__main__":
    main()
