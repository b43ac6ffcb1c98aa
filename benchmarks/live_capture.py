"""Live capture under load: the soak, how fast the UI absorbs a growing capture, its memory.

Three measurements, each printed with the machine's load average (on a shared machine the
numbers move with it):

1. *Soak*: C clients x R requests (the project's client, every request of a client in
   flight together on one connection) against the recording endpoint in this process
   (`LiveEndpoint`, its own thread, as `h3learn serve` runs it), no browser. Printed: the
   time, requests/s, events recorded and journalled per second, and how long until every
   capture was finished.
2. *UI absorption*: one connection fed as fast as the in-memory transport can record into a
   capture of the web app (a `MemoryPair` recording into a `CaptureRecording`, so no network
   limits the rate), while headless Chromium shows that capture's step page. Printed: the
   events recorded per second, the steps per second the page's count followed, the lag at
   the end, the batches sent, and the time of a step taken while it streams.
3. *Memory* of a long capture: the events held while it runs (`LiveCapture.events`), and
   what opening it in the step view adds (the `Entry` with its summaries and replay), by
   tracemalloc, per event.

Usage: python benchmarks/live_capture.py [--clients 50] [--requests 20]
                                         [--events 10000] [--chromium /usr/bin/chromium]
The suite proves 50 x 20 with a browser watching (tests/web/test_live_soak.py); this
script is where larger runs go (e.g. --clients 100 --requests 50).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import tempfile
import threading
import time
import tracemalloc
from pathlib import Path
from typing import Any

from werkzeug.serving import make_server

from h3learn.capture.endpoint import EndpointOptions, LiveEndpoint
from h3learn.capture.hub import CaptureHub, CaptureRecording
from h3learn.scenarios.examples import DYNAMIC, request, respond
from h3learn.trace.captures import CaptureStore
from h3learn.transport.memory import MemoryPair
from h3learn.transport.udp_client import fetch
from h3learn.web import create_app
from h3learn.web.captures import LiveService

#: The step the page has drawn (step.js sets it once a step is shown).
SHOWN = "() => document.getElementById('stepper').dataset.shown"


def load_average() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def soak(clients: int, requests: int) -> None:
    with tempfile.TemporaryDirectory() as directory:
        hub = CaptureHub(CaptureStore(Path(directory) / "captures"), max_events=100_000)
        live = LiveEndpoint(
            hub, EndpointOptions(port=0, max_requests=max(requests, 200)), Path(directory)
        )
        live.start()
        assert live.address is not None
        origin = f"https://localhost:{live.address[1]}"

        async def client(number: int) -> int:
            urls = [f"{origin}/c{number}/r{n}" for n in range(requests)]
            return len(await fetch(urls, cafile=str(live.cert_path), timeout=120))

        async def everyone() -> list[Any]:
            return await asyncio.gather(
                *(client(n) for n in range(clients)), return_exceptions=True
            )

        began = time.monotonic()
        results = asyncio.run(everyone())
        elapsed = time.monotonic() - began
        while hub.live_ids() and time.monotonic() - began < elapsed + 60:
            time.sleep(0.05)
        finished = time.monotonic() - began
        live.stop()
        rows = hub.rows()
        failed = [r for r in results if isinstance(r, BaseException)]
        events = sum(row["events"] or 0 for row in rows if row["view"] == "server")
        print(
            f"soak: {clients} clients x {requests} requests in {elapsed:.1f} s"
            f" ({clients * requests / elapsed:.0f} requests/s, {len(failed)} failed);"
            f" {events} server events ({events / elapsed:.0f}/s recorded and journalled);"
            f" every capture finished after {finished:.1f} s; load {load_average()}"
        )


def fake_connection(service: LiveService) -> tuple[CaptureRecording, MemoryPair]:
    make = service.hub.recording_factory()
    recording = make("bench", {"peer_address": "127.0.0.1:9", "capture": "h3learn h3-server"})
    assert isinstance(recording, CaptureRecording)
    pair = MemoryPair.create(client_settings=DYNAMIC, server_settings=DYNAMIC, log=recording.log)
    pair.pump()
    return recording, pair


def one_request(pair: MemoryPair, number: int) -> None:
    headers = request(f"/item/{number}", "GET", (b"cookie", f"session={number % 50}".encode()))
    stream_id = pair.client.send_request(headers, end_stream=True)
    pair.pump()
    respond(pair, stream_id, f"item {number}\n".encode())
    pair.pump()


def absorption(events: int, chromium: str) -> None:
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as directory:
        app = create_app({"DATA_DIR": directory, "LIVE_MAX_EVENTS": events * 2})
        service: LiveService = app.extensions["h3learn_live"]
        server = make_server("127.0.0.1", 0, app, threaded=True)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        recording, pair = fake_connection(service)
        capture = recording.capture
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium)
            page = browser.new_page(viewport={"width": 1440, "height": 900})
            page.goto(f"http://127.0.0.1:{server.server_port}/trace/{capture.id}/step/0")
            page.wait_for_selector("#capture-banner[data-state='live']")
            page.wait_for_function(f"() => ({SHOWN})() === '0'")
            shown: list[tuple[float, int]] = []
            began = time.monotonic()
            number = 0
            step_times = []
            while len(capture.events) < events:
                number += 1
                one_request(pair, number)
                if number % 40 == 0:
                    count = page.evaluate(
                        "() => Number(document.getElementById('step-count')"
                        ".textContent.split(' ').pop())"
                    )
                    shown.append((time.monotonic() - began, count))
                    before = int(page.evaluate(SHOWN))
                    pressed = time.monotonic()
                    page.click("#next")
                    page.wait_for_function(f"n => ({SHOWN})() === String(n)", arg=before + 1)
                    step_times.append(time.monotonic() - pressed)
            produced = time.monotonic() - began
            recorded = len(capture.events)
            page.wait_for_function(
                "n => Number(document.getElementById('step-count').textContent"
                ".split(' ').pop()) === n",
                arg=recorded,
                timeout=60_000,
            )
            caught_up = time.monotonic() - began
            browser.close()
        recording.finish()
        service.close()
        server.shutdown()
        step_times.sort()
        print(
            f"ui: {recorded} events recorded in {produced:.1f} s ({recorded / produced:.0f}/s,"
            f" while the page was asked {len(shown)} times); the page showed all of them"
            f" {caught_up - produced:.2f} s after the last; {service.batches} batches,"
            f" {service.rows_sent} rows pushed; a step while streaming: median"
            f" {1000 * step_times[len(step_times) // 2]:.0f} ms, worst"
            f" {1000 * step_times[-1]:.0f} ms; load {load_average()}"
        )


def memory(events: int) -> None:
    with tempfile.TemporaryDirectory() as directory:
        app = create_app({"DATA_DIR": directory, "LIVE_MAX_EVENTS": events * 2})
        service: LiveService = app.extensions["h3learn_live"]
        gc.collect()
        tracemalloc.start()
        recording, pair = fake_connection(service)
        number = 0
        while len(recording.capture.events) < events:
            number += 1
            one_request(pair, number)
        pair.log.events.clear()  # the capture's list is the one the web reads; count it once
        gc.collect()
        held = tracemalloc.get_traced_memory()[0]
        entry = service.entries(recording.capture.id)
        assert entry is not None
        entry.summaries()
        entry.state_after(len(entry.events) - 1)
        gc.collect()
        opened = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        count = len(recording.capture.events)
        recording.finish()
        service.close()
        print(
            f"memory: a {count}-event live capture holds {held / 2**20:.1f} MiB"
            f" ({held / count / 1024:.1f} KiB/event, {number} requests); opening it in the"
            f" step view (summaries, replay to its last step) adds"
            f" {(opened - held) / 2**20:.1f} MiB"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--requests", type=int, default=20)
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()
    soak(args.clients, args.requests)
    memory(args.events)
    absorption(args.events, args.chromium)


if __name__ == "__main__":
    main()
