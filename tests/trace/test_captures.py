"""Captures on disk (h3learn/trace/captures.py): ids, info files, rename, delete, recovery.

A capture is a journal while its connection runs and a native trace afterwards; a process
killed in between leaves the journal, which `recover` turns into a native trace marked
``interrupted`` with every complete event kept (docs/events.md, "Trace files").
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from h3learn.scenarios.examples import EXAMPLES
from h3learn.trace.captures import (
    CLOSED,
    INTERRUPTED,
    MAX_TITLE,
    CaptureError,
    CaptureStore,
    UnknownCapture,
    is_capture_id,
    new_capture_id,
)
from h3learn.trace.store import FORMAT, LiveTrace, read_trace


def journal(store: CaptureStore, events: int, *, pid: int | None = None) -> str:
    """A capture whose journal holds the first ``events`` events of an example, unfinished."""
    capture_id = new_capture_id()
    meta = {"peer_address": "127.0.0.1:5555", "capture_pid": pid}
    live = LiveTrace(store.path_of(capture_id), "Connection from 127.0.0.1:5555", meta)
    for event in EXAMPLES[1].record()[:events]:
        live.append(event)
    live._file.close()  # the process "dies" here: no close(), the journal stays
    return capture_id


def test_capture_ids_are_valid_trace_ids_that_sort_by_time() -> None:
    first = new_capture_id()
    assert is_capture_id(first)
    assert len(first) <= 64 and all(c.isalnum() or c in "-_" for c in first)
    assert not is_capture_id("cap-../../etc")
    assert not is_capture_id("upload-0123456789ab")


def test_only_capture_ids_have_paths(tmp_path: Path) -> None:
    store = CaptureStore(tmp_path)
    for bad in ("../x", "cap-", "cap-20260101T000000Z-zzzzzzzz", "traces"):
        with pytest.raises(UnknownCapture):
            store.path_of(bad)


def test_rename_writes_only_the_info_file_and_checks_the_title(tmp_path: Path) -> None:
    store = CaptureStore(tmp_path)
    capture_id = journal(store, 5)
    before = store.path_of(capture_id).read_bytes()
    assert store.rename(capture_id, "  Chromium\nfirst visit ") == "Chromium first visit"
    assert store.info(capture_id)["title"] == "Chromium first visit"
    assert store.path_of(capture_id).read_bytes() == before
    with pytest.raises(CaptureError, match="visible character"):
        store.rename(capture_id, " \t ")
    with pytest.raises(CaptureError, match=f"at most {MAX_TITLE}"):
        store.rename(capture_id, "x" * (MAX_TITLE + 1))
    with pytest.raises(UnknownCapture):
        store.rename(new_capture_id(), "nothing there")


def test_delete_removes_the_trace_and_its_info(tmp_path: Path) -> None:
    store = CaptureStore(tmp_path)
    capture_id = journal(store, 3)
    store.rename(capture_id, "to go")
    store.delete(capture_id)
    assert store.ids() == [] and list(tmp_path.iterdir()) == []
    with pytest.raises(UnknownCapture):
        store.delete(capture_id)


def test_recover_finishes_a_killed_capture_keeping_every_complete_event(tmp_path: Path) -> None:
    store = CaptureStore(tmp_path)
    capture_id = journal(store, 20, pid=None)
    path = store.path_of(capture_id)
    with open(path, "a", encoding="utf-8") as stream:
        stream.write('{"seq": 20, "time": 1.5, "endpo')  # torn: the process died mid-line
    assert store.is_journal(capture_id)
    assert store.recover() == [capture_id]
    trace = read_trace(path)
    assert path.read_text().startswith(f'{{"format": "{FORMAT}"')
    assert len(trace.events) == 20
    assert trace.meta["capture_state"] == INTERRUPTED
    assert any("unfinished" in warning for warning in trace.meta["capture_warnings"])
    row = store.row(capture_id)
    assert row["state"] == INTERRUPTED and row["events"] == 20
    opened = [
        e
        for e in EXAMPLES[1].record()[:20]
        if e.data.get("stream_type") == "request" and e.endpoint == "client"
    ]
    assert row["peer"] == "127.0.0.1:5555" and row["requests"] == len(opened)
    assert store.recover() == []  # nothing left to do


def test_recover_leaves_the_journal_of_a_server_still_running(tmp_path: Path) -> None:
    store = CaptureStore(tmp_path)
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        capture_id = journal(store, 4, pid=other.pid)
        assert store.recover() == []
        assert store.is_journal(capture_id)
    finally:
        other.kill()
        other.wait(timeout=10)
    assert store.recover() == [capture_id]


def test_a_row_is_summarised_once_and_kept_in_the_info_file(tmp_path: Path) -> None:
    store = CaptureStore(tmp_path)
    capture_id = journal(store, len(EXAMPLES[1].record()))
    store.recover()
    info_path = store.info_path(capture_id)
    info = json.loads(info_path.read_text())
    info["summary"]["requests"] = 99  # a cached summary is what the list shows
    info_path.write_text(json.dumps(info))
    assert store.row(capture_id)["requests"] == 99
    del info["summary"]["rejected"]  # from before rejected requests were counted apart
    info_path.write_text(json.dumps(info))
    assert store.row(capture_id)["requests"] == 4, "such a summary is made again"
    assert store.row(capture_id)["rejected"] == 0
    info_path.unlink()
    row = store.row(capture_id)
    assert row["requests"] == 4 and row["state"] == CLOSED
    assert row["user_agent"] == "h3learn/0.1 (learning HTTP/3)"


def test_a_rename_and_the_end_of_the_connection_do_not_undo_each_other(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The web thread renames while the endpoint's thread writes the final state: each
    rewrite of the info file waits for the other, so the title and "closed" both stay."""
    from h3learn.trace import captures

    store = CaptureStore(tmp_path)
    capture_id = journal(store, 3)
    store.update_info(capture_id, state="live")
    inside, release = threading.Event(), threading.Event()
    write = captures.write_json_atomic

    def slow_first_write(path: Path, obj: object) -> None:
        if not inside.is_set():
            inside.set()
            release.wait(10)  # the connection's end is written here, slowly
        write(path, obj)

    monkeypatch.setattr(captures, "write_json_atomic", slow_first_write)
    ending = threading.Thread(
        target=store.update_info, args=(capture_id,), kwargs={"state": CLOSED}
    )
    ending.start()
    assert inside.wait(10)
    renaming = threading.Thread(target=store.rename, args=(capture_id, "my visit"))
    renaming.start()
    renaming.join(0.3)  # without turns, the rename reads "live" and is written by now
    release.set()
    ending.join(10)
    renaming.join(10)
    info = store.info(capture_id)
    assert (info.get("title"), info.get("state")) == ("my visit", CLOSED)


def test_recover_settles_a_finished_capture_whose_info_still_says_live(tmp_path: Path) -> None:
    """A finished (native) trace is no live connection, whatever an old info file says."""
    store = CaptureStore(tmp_path)
    capture_id = journal(store, 12, pid=None)
    store.recover()  # now native, "interrupted"
    store.update_info(capture_id, state="live")  # what a lost write once left behind
    assert store.recover() == []
    assert store.info(capture_id)["state"] == CLOSED


def test_info_rewrites_take_turns_with_another_process(tmp_path: Path) -> None:
    """Two `h3learn serve` processes may share a data directory: a rename in one waits for
    a rewrite in the other (and the other way round), so neither undoes the other."""
    from h3learn.trace import captures

    store = CaptureStore(tmp_path)
    capture_id = journal(store, 3)
    rename = (
        "import sys; from pathlib import Path; from h3learn.trace.captures import CaptureStore;"
        " CaptureStore(Path(sys.argv[1])).rename(sys.argv[2], 'my visit')"
    )
    repository = Path(__file__).resolve().parents[2]
    environment = os.environ | {"PYTHONPATH": str(repository)}
    with captures.info_rewrite(store.directory):
        other = subprocess.Popen(
            [sys.executable, "-c", rename, str(tmp_path), capture_id], env=environment
        )
        with pytest.raises(subprocess.TimeoutExpired):
            other.wait(1)  # it waits for this rewrite to finish
        info = store.info(capture_id) | {"state": CLOSED}
        captures.write_json_atomic(store.info_path(capture_id), info)
    assert other.wait(30) == 0
    info = store.info(capture_id)
    assert (info.get("title"), info.get("state")) == ("my visit", CLOSED)
