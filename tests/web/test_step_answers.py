"""A step's API answer is built once and served to everyone who asks for it (step_answers.py)."""

from __future__ import annotations

import threading
from pathlib import Path

from flask.testing import FlaskClient
from web_helpers import make_app

from h3learn.web.library import Entry
from h3learn.web.step_answers import StepAnswers


def test_the_same_step_asked_for_at_once_is_built_once(tmp_path: Path) -> None:
    entry = make_app(tmp_path).extensions["h3learn_library"].get("first-get")
    answers = StepAnswers()
    built: list[int] = []
    gate = threading.Event()

    def build() -> str:
        gate.wait(5)
        built.append(1)
        return '{"step": 3}'

    results: list[str] = []
    threads = [
        threading.Thread(target=lambda: results.append(answers.get(entry, 3, build)))
        for _ in range(20)
    ]
    for thread in threads:
        thread.start()
    gate.set()
    for thread in threads:
        thread.join(10)
    assert results == ['{"step": 3}'] * 20 and built == [1]


def test_a_new_entry_for_a_trace_is_never_served_an_old_answer(tmp_path: Path) -> None:
    library = make_app(tmp_path).extensions["h3learn_library"]
    old: Entry = library.get("first-get")
    new = Entry(old.id, old.kind, old.trace)
    answers = StepAnswers(size=2)
    assert answers.get(old, 0, lambda: "old") == "old"
    assert answers.get(new, 0, lambda: "new") == "new"
    assert answers.get(old, 1, lambda: "one") == "one"
    assert answers.get(old, 2, lambda: "two") == "two"  # drops the least recently used
    assert answers.get(new, 0, lambda: "again") == "again"


def test_the_api_serves_the_same_answer_twice_as_compact_json(tmp_path: Path) -> None:
    client: FlaskClient = make_app(tmp_path).test_client()
    first = client.get("/api/traces/dynamic-table/steps/45")
    second = client.get("/api/traces/dynamic-table/steps/45")
    assert first.status_code == 200 and first.mimetype == "application/json"
    assert first.data == second.data and b'","' in first.data and b'", "' not in first.data
    assert first.get_json()["step"] == 45
    assert client.get("/api/traces/dynamic-table/steps/4500").status_code == 404
