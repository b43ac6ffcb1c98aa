"""Lessons and the annotated RFC in the web UI, through the Flask test client (issue 5).

The server checks checkpoint answers (the browser is never sent an answer before it is
given), lesson ids are validated like trace ids, lesson and annotation text is Markdown
rendered with raw HTML off, and the RFC reader lists each section with its annotation and
the lesson steps that demonstrate it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from flask.testing import FlaskClient
from web_helpers import XSS_PROBE, make_app

from h3learn.curriculum.comparison import COLUMNS, measure
from h3learn.trace.store import read_trace

LESSONS = Path(__file__).resolve().parents[2] / "lessons"

ANNOTATION = f"""\
rfc = 9204
title = "QPACK: Field Compression for HTTP/3"

[[section]]
id = "4.5"
title = "Field Line Representations"
normative = true
says = "A prefix, then field lines. {XSS_PROBE}"
why = "Five ways to send a field."
pitfalls = "Reading the pattern bits backwards."
"""


@pytest.fixture(scope="module")
def lessons_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("lessons")
    for path in LESSONS.glob("*.toml"):
        shutil.copy(path, folder / path.name)
    text = (folder / "02-a-first-get.toml").read_text()
    text = text.replace("HTTP/3 gives **each request", f"{XSS_PROBE} HTTP/3 gives **each request")
    (folder / "02-a-first-get.toml").write_text(text)
    (folder / "rfc").mkdir()
    (folder / "rfc" / "9204.toml").write_text(ANNOTATION)
    return folder


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory, lessons_dir: Path) -> FlaskClient:
    app = make_app(tmp_path_factory.mktemp("data"), LESSONS_DIR=str(lessons_dir))
    return app.test_client()


def test_the_index_lists_the_lessons_in_order_before_the_traces(client: FlaskClient) -> None:
    page = client.get("/").get_data(as_text=True)
    first, second = page.index("Opening an HTTP/3 connection"), page.index("A first GET")
    assert first < second < page.index('id="traces-heading"')
    listed = client.get("/api/lessons").get_json()["lessons"]
    assert [lesson["number"] for lesson in listed] == sorted(item["number"] for item in listed)


def test_every_page_links_the_rfc_reader_and_lessons_leads_to_the_list(client: FlaskClient) -> None:
    page = client.get("/lesson/02-a-first-get").get_data(as_text=True)
    assert 'class="nav-rfc" href="/rfc"' in page
    answer = client.get("/lessons")
    assert answer.status_code == 302
    assert answer.headers["Location"] == "/#lessons-heading"


def test_a_lesson_names_the_lessons_that_follow_it(client: FlaskClient) -> None:
    following = client.get("/api/lessons/01-opening-a-connection").get_json()["following"]
    assert "02-a-first-get" in [lesson["id"] for lesson in following]
    assert all(set(lesson) >= {"id", "number", "title", "url"} for lesson in following)
    # Nothing builds on lesson 9: the next lesson of the curriculum follows it.
    after_nine = client.get("/api/lessons/09-informational-responses").get_json()["following"]
    assert [lesson["id"] for lesson in after_nine] == ["10-server-push"]
    assert client.get("/api/lessons/16-what-if-lab").get_json()["following"] == []


def test_an_error_page_says_what_went_wrong_under_the_sites_top_bar(client: FlaskClient) -> None:
    answer = client.get("/lesson/99-nope")
    page = answer.get_data(as_text=True)
    assert answer.status_code == 404
    assert "no lesson with id &#39;99-nope&#39;" in page
    assert 'class="nav-rfc"' in page and 'class="topbar"' in page
    assert client.get("/api/lessons/99-nope").get_json()["error"]  # the API stays JSON


def test_a_lesson_never_sends_its_answers(client: FlaskClient) -> None:
    answer = client.get("/api/lessons/02-a-first-get").get_json()
    checkpoints = answer["checkpoint_list"]
    assert {c["id"] for c in checkpoints} == {"prefix", "frame-length", "status"}
    assert all(set(c) == {"id", "step", "kind", "question_html", "choices"} for c in checkpoints)
    page = client.get("/lesson/02-a-first-get/step/0").get_data(as_text=True)
    assert "57" not in page.split("data-checkpoints=")[1].split("'")[1]
    assert answer["notes"] and all(isinstance(step, str) for step in answer["notes"])


def test_a_wrong_answer_gets_the_hint_and_a_right_one_the_explanation(client: FlaskClient) -> None:
    url = "/api/lessons/02-a-first-get/checkpoints/frame-length"
    wrong = client.post(url, json={"answer": "55"}).get_json()
    assert wrong["correct"] is False and "answer" not in wrong and "explain_html" not in wrong
    assert "Type and Length" in wrong["hint_html"]
    right = client.post(url, json={"answer": " 57 "}).get_json()
    assert right["correct"] is True and right["answer"] == "57"
    assert "<strong>57 bytes.</strong>" in right["explain_html"]
    shown = client.post(url, json={"reveal": True}).get_json()
    assert shown["correct"] is False and shown["answer"] == "57"


def test_choice_and_text_answers(client: FlaskClient) -> None:
    url = "/api/lessons/01-opening-a-connection/checkpoints/alpn"
    assert client.post(url, json={"answer": "H3."}).get_json()["correct"] is True
    assert client.post(url, json={"answer": "h2"}).get_json()["correct"] is False
    url = "/api/lessons/02-a-first-get/checkpoints/status"
    choice = "As an Indexed Field Line: one static table entry"
    assert client.post(url, json={"answer": choice}).get_json()["correct"] is True
    assert client.post(url, json={"answer": choice.lower()}).get_json()["correct"] is False


@pytest.mark.parametrize(
    ("url", "body", "status"),
    [
        ("/api/lessons/02-a-first-get/checkpoints/prefix", {"answer": 0}, 400),
        ("/api/lessons/02-a-first-get/checkpoints/prefix", {"answer": "x" * 501}, 400),
        ("/api/lessons/02-a-first-get/checkpoints/nope", {"answer": "0"}, 404),
        ("/api/lessons/99-nothing/checkpoints/prefix", {"answer": "0"}, 404),
    ],
)
def test_bad_answers_are_refused_with_a_reason(
    client: FlaskClient, url: str, body: dict[str, object], status: int
) -> None:
    response = client.post(url, json=body)
    assert response.status_code == status
    assert response.get_json()["error"]


@pytest.mark.parametrize(
    "url",
    [
        "/lesson/..%2F..%2Fetc%2Fpasswd",
        "/lesson/02-a-first-get%00",
        "/api/lessons/..",
        "/lesson/02-a-first-get/step/9999",
    ],
)
def test_lesson_ids_are_checked(client: FlaskClient, url: str) -> None:
    assert client.get(url).status_code == 404


def test_lesson_text_is_rendered_as_markdown_with_html_escaped(client: FlaskClient) -> None:
    page = client.get("/lesson/02-a-first-get").get_data(as_text=True)
    assert XSS_PROBE not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "<strong>each request its own QUIC stream</strong>" in page
    intro = client.get("/api/lessons/02-a-first-get").get_json()["introduction_html"]
    assert "&lt;img" in intro and "<img" not in intro


def test_a_step_carries_the_annotation_of_its_sections(client: FlaskClient) -> None:
    lesson = client.get("/api/lessons/02-a-first-get").get_json()
    note_step = next(
        step for step, notes in lesson["notes"].items() if "QPACK" in notes[0]["title"]
    )
    links = client.get(f"/api/traces/02-a-first-get/steps/{note_step}").get_json()["event"]["rfc"]
    annotated = next(link for link in links if link["section"] == "9204#4.5")
    assert "A prefix, then field lines." in annotated["annotation"]["says_html"]
    assert "&lt;img" in annotated["annotation"]["says_html"]
    settings = client.get("/api/traces/02-a-first-get/steps/3").get_json()["event"]["rfc"]
    assert settings[0]["annotation"] is None
    assert 'lessons/rfc/9114.toml needs a [[section]] with id = "7.2.4"' in settings[0]["missing"]


def test_the_rfc_reader_lists_sections_annotations_and_demonstrating_steps(
    client: FlaskClient,
) -> None:
    page = client.get("/rfc/9204").get_data(as_text=True)
    assert 'id="s-4.5.1.1"' in page and 'id="s-B.5"' in page
    assert "A prefix, then field lines." in page and XSS_PROBE not in page
    assert 'href="/lesson/05-the-dynamic-table/step/' in page
    assert "No lesson step demonstrates this section yet." in page
    assert "https://www.rfc-editor.org/rfc/rfc9204#section-4.5" in page
    assert client.get("/rfc/9114").status_code == 200
    assert client.get("/rfc/1234").status_code == 404
    assert "RFC 9204" in client.get("/rfc").get_data(as_text=True)


def test_what_if_records_saves_and_opens_the_rerun(client: FlaskClient) -> None:
    response = client.post(
        "/lesson/05-the-dynamic-table/what-if",
        data={
            "client.qpack_max_table_capacity": "0",
            "server.huffman": "false",
            "client.huffman": "",
        },
    )
    assert response.status_code == 303
    trace_id = response.headers["Location"].split("/")[2]
    assert trace_id.startswith("whatif-05-")
    meta = client.get(f"/api/traces/{trace_id}").get_json()
    assert meta["meta"]["overrides"] == {
        "client": {"qpack_max_table_capacity": 0},
        "server": {"huffman": False},
    }
    again = client.post(
        "/lesson/05-the-dynamic-table/what-if",
        data={"server.huffman": "false", "client.qpack_max_table_capacity": "0"},
    )
    assert again.headers["Location"] == response.headers["Location"]
    bad = client.post("/lesson/05-the-dynamic-table/what-if", data={"client.colour": "1"})
    assert bad.status_code == 400


def test_the_what_if_lab_shows_each_variant_with_the_figures_of_its_saved_trace(
    client: FlaskClient,
) -> None:
    """Lesson 16's table: one row per variant; each row opens its trace, and the figures
    measured on that saved file are the row's, cell by cell."""
    page = client.get("/lesson/16-what-if-lab").get_data(as_text=True)
    table = page[page.index('id="variant-table"') : page.index("</table>")]
    answer = client.get("/api/lessons/16-what-if-lab/comparison").get_json()
    assert answer["columns"] == COLUMNS
    rows = answer["variants"]
    assert len(rows) == 7 and table.count("<tr data-variant=") == 7
    library = client.application.extensions["h3learn_library"]
    for index, row in enumerate(rows):
        assert row["url"] == f"/lesson/16-what-if-lab/variants/{index}"
        assert f'href="{row["url"]}">{row["name"]}</a>' in table
        response = client.get(row["url"])
        assert response.status_code == 303
        trace_id = response.headers["Location"].split("/")[2]
        saved = read_trace(library.path_of(trace_id))
        assert saved.meta["overrides"] == row["overrides"]
        figures = measure(saved.events).to_json()
        assert row["figures"] == figures
        cells = table.split(f'<tr data-variant="{index}"')[1].split("</tr>")[0]
        for key in COLUMNS:
            assert f'data-figure="{key}">{figures[key]}</td>' in cells
    best = min(row["figures"]["http3_bytes"] for row in rows)
    assert table.count('class="best"') == 1 and str(best) in table


def test_a_lesson_without_variants_has_no_table_and_a_bad_variant_is_404(
    client: FlaskClient,
) -> None:
    assert 'id="variant-table"' not in client.get("/lesson/02-a-first-get").get_data(as_text=True)
    assert client.get("/api/lessons/02-a-first-get/comparison").get_json()["variants"] == []
    assert client.get("/lesson/16-what-if-lab/variants/7").status_code == 404
    assert client.get("/lesson/02-a-first-get/variants/0").status_code == 404
    assert client.get("/api/lessons/99-nothing/comparison").status_code == 404


# -- what a lesson's page holds back before a question is answered (docs/lessons.md) ------

LESSON_9 = "09-informational-responses"


def first_stop(client: FlaskClient, lesson_id: str) -> int:
    stops = client.get(f"/api/lessons/{lesson_id}").get_json()["checkpoint_list"]
    return min(int(stop["step"]) for stop in stops)


def test_events_until_a_step_list_search_and_locate_only_the_steps_before_it(
    client: FlaskClient,
) -> None:
    stop = first_stop(client, LESSON_9)
    url = f"/api/traces/{LESSON_9}/events"
    everything = client.get(f"{url}?limit=2000").get_json()
    # The answer to the first question ("still expecting_headers") is the summary of its step.
    assert "still expecting_headers" in everything["events"][stop]["summary"]
    before = client.get(f"{url}?limit=2000&until={stop}").get_json()
    assert before["total"] == stop and [row["seq"] for row in before["events"]] == list(range(stop))
    searched = client.get(f"{url}?q=still+expecting&until={stop}").get_json()
    assert searched["total"] == 0
    assert client.get(f"{url}?q=still+expecting").get_json()["total"] >= 1
    located = client.get(f"{url}?limit=1&locate={stop}&until={stop}").get_json()
    assert located["located"] is None
    assert client.get(f"{url}?until=x").status_code == 400


def test_a_lesson_until_a_step_sends_only_the_notes_before_it(client: FlaskClient) -> None:
    stop = first_stop(client, LESSON_9)
    whole = client.get(f"/api/lessons/{LESSON_9}").get_json()
    assert whole["until"] == whole["count"] and whole["conclusion_html"]
    assert any(int(step) >= stop for step in whole["notes"])
    held = client.get(f"/api/lessons/{LESSON_9}?until={stop}").get_json()
    assert held["until"] == stop and held["notes"]
    assert all(int(step) < stop for step in held["notes"])
    assert held["conclusion_html"] == ""  # it is shown at the last step, past every question
    assert held["checkpoint_list"] == whole["checkpoint_list"]
    assert client.get(f"/api/lessons/{LESSON_9}?until=-1").status_code == 400


def test_a_lessons_trace_opens_on_the_lessons_page_with_its_questions(client: FlaskClient) -> None:
    response = client.get(f"/trace/{LESSON_9}/step/3?room=ABCDEF")
    assert response.status_code == 302
    assert response.headers["Location"] == f"/lesson/{LESSON_9}/step/3?room=ABCDEF"
    plain = client.get(f"/trace/{LESSON_9}/step/3")
    assert plain.headers["Location"] == f"/lesson/{LESSON_9}/step/3"


def test_quic_steps_go_one_way_and_say_why_they_show_no_bytes(client: FlaskClient) -> None:
    """A datagram is drawn as sent, QUIC stream data as sent or received (present.py), and
    the byte view says its bytes are encrypted rather than "a change inside one endpoint"."""
    rows = client.get("/api/traces/01-opening-a-connection/events?category=transport").get_json()
    ways = {(row["name"], row["direction"]) for row in rows["events"]}
    assert {("datagram_sent", "sent"), ("stream_data_received", "received")} <= ways
    datagram = next(row for row in rows["events"] if row["name"] == "datagram_sent")
    step = client.get(f"/api/traces/01-opening-a-connection/steps/{datagram['seq']}").get_json()
    note = step["event"]["bytes_note"]
    assert note.startswith(f"QUIC's own step: {step['event']['data']['length']} bytes")
    assert "RFC 9001 §5" in note
    table_update = client.get("/api/traces/01-opening-a-connection/steps/0").get_json()["event"]
    assert table_update["direction"] == "local"
    assert table_update["bytes_note"].endswith("a change inside one endpoint.")
