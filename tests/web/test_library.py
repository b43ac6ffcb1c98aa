"""The trace library's speed measures keep what the reader promises (h3learn/web/library.py).

A saved trace is opened with its field spans deferred: every step still gets exactly the
spans `read_trace` gives, and a span that breaks a rule is still reported, with the same
message, when its step is shown. The listing does not re-read unchanged files, and the
replay the library uses (snapshots on demand) answers as the one that takes them all first.
"""

from __future__ import annotations

import gc
import json
import random
import weakref
from pathlib import Path

import pytest
from flask import Flask
from web_helpers import make_app

from h3learn.scenarios.examples import EXAMPLES
from h3learn.trace.replay import Replay
from h3learn.trace.store import read_trace, trace_document, write_trace
from h3learn.trace.stored_events import TraceFormatError
from h3learn.web import library as library_module
from h3learn.web.library import TraceLibrary


def saved(data_dir: Path, trace_id: str = "saved") -> Path:
    traces = data_dir / "traces"
    traces.mkdir(parents=True, exist_ok=True)
    path = traces / f"{trace_id}.json"
    write_trace(path, "saved", EXAMPLES[1].record(), created="2026-01-01T00:00:00+00:00")
    return path


def test_deferred_spans_are_the_spans_read_trace_gives(tmp_path: Path) -> None:
    path = saved(tmp_path)
    library = TraceLibrary(tmp_path, max_bytes=1 << 24)
    entry = library.get("saved")
    assert all(event.fields == () for event in entry.events)  # deferred, not yet built
    expected = read_trace(path).events
    assert [entry.event(step) for step in range(len(expected))] == expected
    assert entry.full_trace().events == expected


def test_an_invalid_span_is_reported_at_its_step_with_the_readers_message(tmp_path: Path) -> None:
    path = saved(tmp_path)
    document = json.loads(path.read_text())
    step = next(n for n, event in enumerate(document["events"]) if len(event["fields"]) > 2)
    document["events"][step]["fields"][1]["length"] = 10_000
    path.write_text(json.dumps(document))
    with pytest.raises(TraceFormatError) as strict:
        read_trace(path)
    client = make_app(tmp_path).test_client()
    assert client.get("/api/traces/saved").status_code == 200
    assert client.get(f"/api/traces/saved/steps/{step - 1}").status_code == 200
    response = client.get(f"/api/traces/saved/steps/{step}")
    assert response.status_code == 400
    assert response.get_json()["error"] == str(strict.value)
    assert "lie outside raw" in str(strict.value)
    assert client.get("/api/traces/saved/download?format=native").status_code == 400


def test_the_listing_does_not_reread_an_unchanged_trace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = saved(tmp_path)
    library = TraceLibrary(tmp_path, max_bytes=1 << 24)
    reads: list[str] = []
    real_read = TraceLibrary._read

    def counting_read(self: TraceLibrary, trace_id: str, file: Path) -> object:
        reads.append(trace_id)
        return real_read(self, trace_id, file)

    monkeypatch.setattr(TraceLibrary, "_read", counting_read)
    first = library.listing()
    library._saved.clear()  # as if the entry had been dropped from the cache
    assert library.listing() == first
    assert reads == ["saved"]
    write_trace(path, "changed", EXAMPLES[0].record(), created="2026-01-01T00:00:00+00:00")
    assert library.listing()[-1]["title"] == "changed"
    assert reads == ["saved", "saved"]


def test_an_upload_is_served_without_reading_it_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app: Flask = make_app(tmp_path)
    library: TraceLibrary = app.extensions["h3learn_library"]
    monkeypatch.setattr(TraceLibrary, "_read", lambda *args: pytest.fail("read back"))
    events = EXAMPLES[0].record()
    data = json.dumps(trace_document("t", events, created="2026-01-01T00:00:00+00:00"))
    entry = library.save_upload(data.encode(), "t.json")
    assert library.get(entry.id) is entry
    assert entry.events == events


def test_snapshots_on_demand_answer_as_snapshots_taken_at_once() -> None:
    events = EXAMPLES[1].record()
    eager = Replay(events, snapshot_every=8)
    on_demand = Replay(events, snapshot_every=8, on_demand=True)
    steps = list(range(len(events))) * 2
    random.Random(4).shuffle(steps)
    for step in steps:
        assert on_demand.state_after(step) == eager.state_after(step), step


def test_the_streams_of_a_growing_trace_grow_with_it(tmp_path: Path) -> None:
    """A live capture's entry is extended in place; a new stream is not refused as unknown."""
    events = EXAMPLES[1].record()
    split = next(e.seq for e in events if e.stream_id == 4)
    traces = tmp_path / "traces"
    traces.mkdir()
    write_trace(traces / "part.json", "part", events[:split])
    entry = TraceLibrary(tmp_path, max_bytes=1 << 24).get("part")
    assert 4 not in entry.streams
    entry.extend(events[split:])
    assert entry.streams == sorted({e.stream_id for e in events if e.stream_id is not None})


def test_catching_up_twice_with_the_same_events_adds_them_once(tmp_path: Path) -> None:
    """The live pump and a page's request can both see a capture N events behind and send
    the same slice (a review found it could be added twice); ``at`` says where it starts."""
    events = EXAMPLES[1].record()
    split = len(events) // 2
    traces = tmp_path / "traces"
    traces.mkdir()
    write_trace(traces / "part.json", "part", events[:split])
    entry = TraceLibrary(tmp_path, max_bytes=1 << 24).get("part")
    assert len(entry.rows(0, 5)) == 5 and entry.summaries()  # the caches grow too
    entry.extend(events[split:], at=split)
    entry.extend(events[split:], at=split)
    entry.extend(events[split + 3 :], at=split + 3)
    assert [e.seq for e in entry.events] == list(range(len(events)))
    assert [row["seq"] for row in entry.summaries()] == list(range(len(events)))
    with pytest.raises(ValueError, match="cannot follow"):
        entry.extend(events[:1], at=len(events) + 1)


def test_the_cache_of_saved_traces_is_bounded_by_their_events(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """However many large traces are opened, the cache holds at most CACHE_EVENTS events
    (and always the trace opened last, even one larger than that)."""
    events = len(EXAMPLES[1].record())
    monkeypatch.setattr(library_module, "CACHE_EVENTS", 3 * events)
    for number in range(10):
        saved(tmp_path, f"saved-{number}")
    library = TraceLibrary(tmp_path, max_bytes=1 << 24)
    for number in range(10):
        library.get(f"saved-{number}").state_after(events - 1)
        kept = [entry for _, entry in library._saved.values()]
        assert sum(len(entry.events) for entry in kept) <= 3 * events
    assert [entry.id for entry in kept] == ["saved-7", "saved-8", "saved-9"]
    monkeypatch.setattr(library_module, "CACHE_EVENTS", events - 1)
    library.get("saved-0")
    assert list(library._saved) == ["saved-0"]


def test_what_runs_while_a_trace_is_read_is_freed_once_it_ends(tmp_path: Path) -> None:
    """A running connection refers to itself through its parts (its recording, its QUIC
    connection): once it ends, the cycle collector must still free it and its capture,
    though a trace was read meanwhile."""

    class Connection:
        pass

    running = Connection()
    running.itself = running  # type: ignore[attr-defined]
    ended = weakref.ref(running)
    saved(tmp_path)
    TraceLibrary(tmp_path, max_bytes=1 << 24).get("saved")
    del running
    gc.collect()
    assert ended() is None


def test_a_trace_deleted_while_it_is_read_does_not_come_back_into_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A capture is deleted (its file removed, then `forget`) while a lookup is reading it:
    the lookup may still answer what it read, but the cache must not keep it afterwards."""
    path = saved(tmp_path)
    library = TraceLibrary(tmp_path, max_bytes=1 << 24)
    read = library._read

    def read_then_deleted(trace_id: str, trace_path: Path) -> library_module.Entry:
        entry = read(trace_id, trace_path)
        trace_path.unlink()  # what the capture store's delete does, then the web layer:
        library.forget(trace_id)
        return entry

    monkeypatch.setattr(library, "_read", read_then_deleted)
    assert library.get("saved").id == "saved"
    assert "saved" not in library._saved
    assert "saved" not in library._listings
    assert not path.exists()
