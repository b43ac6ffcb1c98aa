""" "Fetch with the readable client": the Live page asks the project's own client for a URL.

The request is made by `fetch` (h3learn/transport/udp_client.py, what ``h3learn get`` runs), in a
background thread with its own event loop, and its connection is recorded as a capture of
the client's view (`CaptureHub.recording_factory`), so it shows up in the list like any
other. Everything about it is bounded:

- the URL is checked first (`parse_url`: an https URL with a host, no user information,
  RFC 9114 §3.1), and so are the page's own header lines (`parse_field_line`, with the
  whole request as the server will check it, RFC 9114 §4.1.2, §4.2, §4.3.1): a bad one is
  refused with the reason before any thread starts;
- at most ``max_jobs`` fetches run at once; another is refused with "busy";
- each fetch has ``timeout`` seconds for connecting and its response (`fetch`'s own bound);
- the last `KEEP_JOBS` jobs are remembered, so the page can ask how one went.

Which certificate is trusted: for the endpoint's own origin (localhost, 127.0.0.1 or ::1
at its port) the kept self-signed certificate, so the check is real; for any other URL
the system's authorities, unless the page asked for ``insecure`` (a self-signed test
server such as ngtcp2's gtlsserver).
"""

from __future__ import annotations

import asyncio
import itertools
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from h3learn.capture.hub import CaptureHub
from h3learn.h3.messages import Header
from h3learn.transport.fetch_errors import FetchError
from h3learn.transport.request_fields import check_request, parse_field_line
from h3learn.transport.udp_client import fetch
from h3learn.transport.urls import parse_url

KEEP_JOBS = 50
DEFAULT_TIMEOUT = 10.0
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")


@dataclass
class FetchJob:
    """One fetch and how it went."""

    id: int
    url: str
    #: The user's own field lines, sent after h3learn's (h3learn/transport/request_fields.py).
    fields: tuple[Header, ...] = ()
    #: How many requests for the URL go out together on the one connection.
    times: int = 1
    state: str = "running"  # running, done, failed
    status: int | None = None
    body_bytes: int | None = None
    error: str | None = None
    capture_id: str | None = None
    done: threading.Event = field(default_factory=threading.Event)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "url": self.url,
            "times": self.times,
            "state": self.state,
            "status": self.status,
            "body_bytes": self.body_bytes,
            "error": self.error,
            "capture": self.capture_id,
        }


class Fetcher:
    """Runs the project's client in background threads, recording each connection."""

    def __init__(
        self,
        hub: CaptureHub,
        *,
        trusted_origin: tuple[int, Path] | None = None,
        max_jobs: int = 4,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        self.hub = hub
        #: (port, certificate) of the endpoint: its origin is checked against that certificate.
        self.trusted_origin = trusted_origin
        self.timeout = timeout
        self._slots = threading.BoundedSemaphore(max_jobs)
        self.max_jobs = max_jobs
        self._jobs: OrderedDict[int, FetchJob] = OrderedDict()
        self._numbers = itertools.count(1)
        self._lock = threading.Lock()

    def start(
        self,
        url: str,
        *,
        insecure: bool = False,
        header_lines: Sequence[str] = (),
        times: int = 1,
    ) -> FetchJob:
        """Check the URL and ``header_lines`` (``Name: value`` each) and start fetching it
        ``times`` times on one connection (a second request can refer to what the first
        put in QPACK's dynamic table); raises FetchError (a bad URL or header line, or
        busy)."""
        url = url.strip()
        target = parse_url(url)
        fields = tuple(parse_field_line(line) for line in header_lines)
        check_request(target, "GET", None, fields)
        if not self._slots.acquire(blocking=False):
            raise FetchError(
                f"busy: {self.max_jobs} fetches are running already; try again when one is done"
            )
        cafile: str | None = None
        if self.trusted_origin is not None:
            port, cert = self.trusted_origin
            if target.host in LOOPBACK_HOSTS and target.port == port:
                cafile = str(cert)
                insecure = False
        with self._lock:
            job = FetchJob(next(self._numbers), url, fields, times)
            self._jobs[job.id] = job
            while len(self._jobs) > KEEP_JOBS:
                self._jobs.popitem(last=False)
        thread = threading.Thread(
            target=self._run, args=(job, cafile, insecure), name=f"h3learn-fetch-{job.id}"
        )
        thread.daemon = True
        thread.start()
        return job

    def job(self, number: int) -> FetchJob | None:
        with self._lock:
            return self._jobs.get(number)

    def _run(self, job: FetchJob, cafile: str | None, insecure: bool) -> None:
        make_recording = self.hub.recording_factory()

        def record(title: str, meta: dict[str, Any]) -> Any:
            recording = make_recording(title, meta | {"capture": "h3learn serve: fetch"})
            job.capture_id = recording.meta.get("capture_id")
            return recording

        try:
            *_, response = asyncio.run(
                fetch(
                    [job.url] * job.times,
                    insecure=insecure,
                    cafile=cafile,
                    record=record,
                    timeout=self.timeout,
                    fields=job.fields,
                )
            )
            job.status, job.body_bytes, job.state = response.status, len(response.body), "done"
        except FetchError as error:
            job.error, job.state = str(error), "failed"
        except Exception as error:  # a bug must not kill the thread silently
            job.error, job.state = f"internal error: {error!r}", "failed"
        finally:
            self._slots.release()
            job.done.set()
