"""The answers of ``GET /api/traces/<id>/steps/<n>``, built once and kept as JSON text.

In a class, every student's page asks for the step the teacher just showed within a few
milliseconds of each other. The answer (the event with its byte rows and fields, and both
endpoints' state: some 30 KB of JSON) is the same for all of them, so it is built by the
first request, while the others for the same step wait for it, and kept for the next.
Keyed by the trace's `Entry` object and the step: a saved trace whose file changed is a
new Entry, so an old answer is never served for it. The least recently used of at most
`SIZE` answers is dropped first; entries are held weakly, so the cache never keeps a
trace alive.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable

from h3learn.web.library import Entry

SIZE = 256


class StepAnswers:
    def __init__(self, size: int = SIZE) -> None:
        self.size = size
        self._answers: OrderedDict[tuple[int, int], tuple[weakref.ref[Entry], str]] = OrderedDict()
        self._building: dict[tuple[int, int], threading.Lock] = {}
        self._lock = threading.Lock()

    def _cached(self, key: tuple[int, int], entry: Entry) -> str | None:
        kept = self._answers.get(key)
        if kept is None or kept[0]() is not entry:
            return None
        self._answers.move_to_end(key)
        return kept[1]

    def get(self, entry: Entry, step: int, build: Callable[[], str]) -> str:
        """The answer for ``step`` of ``entry``: kept, or made by ``build`` (errors pass)."""
        key = (id(entry), step)
        with self._lock:
            answer = self._cached(key, entry)
            if answer is not None:
                return answer
            building = self._building.setdefault(key, threading.Lock())
        with building:  # the same step asked for at once is built once
            with self._lock:
                answer = self._cached(key, entry)
            if answer is not None:
                return answer
            try:
                answer = build()
            finally:
                with self._lock:
                    self._building.pop(key, None)
            with self._lock:
                self._answers[key] = (weakref.ref(entry), answer)
                self._answers.move_to_end(key)
                while len(self._answers) > self.size:
                    self._answers.popitem(last=False)
            return answer
