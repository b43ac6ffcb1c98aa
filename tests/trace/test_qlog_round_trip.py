"""A trace exported as qlog 0.3 (`to_qlog_03`, ``h3learn export --format qlog-0.3``) and
read again (`from_aioquic_qlog`, `load_trace`): what comes back (docs/events.md, "qlog
import"). The title comes back; so does the order of the events the 0.3 reader imports,
those of the two endpoints at the same time included (the examples run on a virtual clock,
where many are).
"""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from h3learn.cli import main
from h3learn.events import Event
from h3learn.scenarios.examples import EXAMPLES
from h3learn.trace.load import load_trace
from h3learn.trace.qlog import to_qlog_03
from h3learn.trace.qlog_import import from_aioquic_qlog
from h3learn.trace.store import Trace, write_trace

TITLE = "The dynamic table fills: <b>step</b> by step"

#: The kinds of event the 0.3 reader imports (the rest of an h3learn trace is skipped).
IMPORTED = {
    ("http3", "frame_created"),
    ("http3", "frame_parsed"),
    ("http3", "stream_type_set"),
    ("transport", "packet_sent"),
    ("transport", "packet_received"),
}


@pytest.fixture(scope="module")
def trace() -> Trace:
    return Trace(TITLE, {}, EXAMPLES[1].record())


def exported(trace: Trace) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(json.dumps(to_qlog_03(trace)))  # as read from a file
    return document


def steps(events: list[Event]) -> list[tuple[str, str, int | None]]:
    """Each event the 0.3 reader imports, as (endpoint, name, stream), in trace order."""
    return [(e.endpoint, e.name, e.stream_id) for e in events if (e.category, e.name) in IMPORTED]


def same_time_pairs(events: list[Event]) -> int:
    kept = [e for e in events if (e.category, e.name) in IMPORTED]
    return sum(1 for a, b in pairwise(kept) if a.time == b.time and a.endpoint != b.endpoint)


def test_the_title_comes_back(trace: Trace) -> None:
    assert from_aioquic_qlog(exported(trace)).title == TITLE


def test_without_the_files_own_title_the_traces_titles_give_it(trace: Trace) -> None:
    document = exported(trace)
    del document["title"]
    assert from_aioquic_qlog(document).title == TITLE
    document["traces"][1]["title"] = "something else (server)"
    assert from_aioquic_qlog(document).title.startswith("aioquic qlog ")


def test_events_of_both_endpoints_at_the_same_time_keep_their_order(trace: Trace) -> None:
    assert same_time_pairs(trace.events) >= 5  # what makes this test able to fail
    again = from_aioquic_qlog(exported(trace))
    assert steps(again.events) == steps(trace.events)
    assert again.warnings == []


def test_an_order_that_does_not_fit_the_file_is_not_used_and_ties_are_warned_of(
    trace: Trace,
) -> None:
    document = exported(trace)
    document["traces"][0]["events"].pop()  # an edited file
    again = from_aioquic_qlog(document)
    assert steps(again.events) != steps(trace.events)
    assert len(again.warnings) == 1
    assert "at the same time as an event of the other endpoint" in again.warnings[0]
    assert "in the order of the file's traces" in again.warnings[0]


def test_the_export_command_and_load_trace_keep_title_and_order(
    trace: Trace, tmp_path: Path
) -> None:
    native = tmp_path / "dynamic.json"
    write_trace(native, TITLE, trace.events)
    out = tmp_path / "dynamic-0.3.qlog"
    assert main(["export", str(native), "--format", "qlog-0.3", "-o", str(out)]) == 0
    kind, again = load_trace(out)
    assert kind == "aioquic-qlog"
    assert again.title == TITLE
    assert steps(again.events) == steps(trace.events)
