"""The step-through page on a large trace: time to the first rendered step, step latency.

A trace of about 10,000 events (many requests over one connection with a dynamic table,
RFC 9204 §2.1, recorded over the in-memory transport) is saved in a temporary data
directory and served by the web app (Werkzeug in a thread). Headless Chromium (Debian's,
/usr/bin/chromium) opens its middle step and then presses → N times. Printed: the time
from navigation to the first rendered step (goal < 1 s) and the p50/p95 latency from a key
press to the next step being rendered (goal p95 < 50 ms). Each latency is measured twice:

- in the page, what a learner sees: from the ``keydown`` event to the first frame painted
  after the new step number is in the page (a ``requestAnimationFrame`` callback runs just
  before a frame is painted, and a message posted from it is handled just after);
- from Python, as before 2026-12-03: from sending the key to Playwright's answer that the
  step is rendered. This adds Playwright's round trips to the browser (the key's down and
  up events, then a check polled once a frame), some 20 to 35 ms on a busy 2-core machine.

The server has not read the trace before the page asks for it, so the first step includes
reading the 16 MB file. The machine's load average is printed too: on a shared machine the
numbers move with it.

Usage: python benchmarks/ui_steps.py [--events 10000] [--steps 200] [--chromium PATH]
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import tempfile
import threading
import time
from pathlib import Path

from playwright.sync_api import sync_playwright
from werkzeug.serving import make_server

from h3learn.events import Event
from h3learn.scenarios.examples import DYNAMIC, request, respond
from h3learn.trace.store import write_trace
from h3learn.transport.memory import MemoryPair
from h3learn.web import create_app


def many_requests(events: int) -> list[Event]:
    """Requests with a few changing fields until the trace has at least ``events`` events."""
    pair = MemoryPair.create(client_settings=DYNAMIC, server_settings=DYNAMIC)
    pair.pump()
    number = 0
    while len(pair.log.events) < events:
        number += 1
        pair.advance(1)
        headers = request(f"/item/{number}", "GET", (b"cookie", f"session={number % 50}".encode()))
        stream_id = pair.client.send_request(headers, end_stream=True)
        pair.pump()
        respond(pair, stream_id, f"item {number}\n".encode())
        pair.pump()
    return pair.log.events


#: Run in the page once its first step is shown: each ``keydown`` starts a clock, and the
#: first frame painted after the step number changes stops it (ms, in ``__h3learnLatencies``).
MEASURE_IN_PAGE = """
() => {
  const latencies = (window.__h3learnLatencies = []);
  let pressed = null;
  document.addEventListener("keydown", () => { pressed = performance.now(); }, true);
  const channel = new MessageChannel();
  channel.port1.onmessage = (message) => latencies.push(performance.now() - message.data);
  new MutationObserver(() => {
    if (pressed === null) return;
    const began = pressed;
    pressed = null;
    requestAnimationFrame(() => channel.port2.postMessage(began));
  }).observe(document.getElementById("step-number"), { childList: true, subtree: true });
}
"""


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()

    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as directory:
        traces = Path(directory) / "traces"
        traces.mkdir()
        events = many_requests(args.events)
        write_trace(traces / "large.json", "large", events)
        # The server shares this process: the recorded events would otherwise stay in its
        # memory, and every full collection of Python's garbage collector would walk them.
        count = len(events)
        del events
        gc.collect()
        app = create_app({"DATA_DIR": directory})
        server = make_server("127.0.0.1", 0, app, threaded=True)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        start_step = count // 2
        url = f"http://127.0.0.1:{server.server_port}/trace/large/step/{start_step}"
        rendered = (
            "step => document.getElementById('stepper').dataset.shown === String(step)"
            " && document.querySelector('.row.current') !== null"
        )
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=args.chromium)
                page = browser.new_page(viewport={"width": 1440, "height": 900})
                began = time.perf_counter()
                page.goto(url)
                page.wait_for_function(rendered, arg=start_step)
                first = time.perf_counter() - began
                page.evaluate(MEASURE_IN_PAGE)
                latencies: list[float] = []
                for step in range(start_step + 1, start_step + 1 + args.steps):
                    began = time.perf_counter()
                    page.keyboard.press("ArrowRight")
                    page.wait_for_function(rendered, arg=step, polling="raf")
                    latencies.append(time.perf_counter() - began)
                page.wait_for_function(f"window.__h3learnLatencies.length >= {args.steps}")
                in_page = page.evaluate("window.__h3learnLatencies")
                browser.close()
        finally:
            server.shutdown()
            thread.join(timeout=10)

    print(f"trace: {count} events; opened at step {start_step}")
    print(f"load average (1 min) before / after: {load_before:.1f} / {os.getloadavg()[0]:.1f}")
    print(f"time to the first rendered step: {first * 1000:.0f} ms (goal < 1000 ms)")
    print(f"step latency over {len(latencies)} steps (goal p95 < 50 ms):")
    print(
        f"  in the page, key down to the step painted: p50 {statistics.median(in_page):.1f} ms,"
        f" p95 {percentile(in_page, 0.95):.1f} ms, slowest {max(in_page):.1f} ms"
    )
    p50 = statistics.median(latencies) * 1000
    p95 = percentile(latencies, 0.95) * 1000
    print(f"  from Python, with Playwright's round trips: p50 {p50:.1f} ms, p95 {p95:.1f} ms")


if __name__ == "__main__":
    main()
