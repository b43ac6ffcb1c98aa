"""The printed handout (/trace/<id>/print): every step of a range as one block, from the API's data.

Rendered on the server with Jinja, so the tests read the HTML through Flask's test client:
one block per step with its summary, bytes field by field, state and RFC links; ranges
and their errors; header values from traffic escaped; no inline script or style.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
from flask.testing import FlaskClient
from web_helpers import XSS_PROBE, make_app, probe_step, save_probe_trace

from h3learn.scenarios.examples import EXAMPLES, request
from h3learn.trace.store import write_trace
from h3learn.transport.memory import MemoryPair
from h3learn.web.handout import MAX_STEPS


def blocks(page: str) -> list[str]:
    return re.findall(r'<article class="handout-step" id="step-(\d+)"', page)


def test_a_lesson_prints_every_step_as_one_block(client: FlaskClient) -> None:
    events = EXAMPLES[0].record()
    page = client.get("/trace/first-get/print").get_data(as_text=True)
    assert blocks(page) == [str(n) for n in range(len(events))]
    for event in events:
        assert f"</span> {event.summary}</h2>" in page.replace("&#34;", '"').replace("&#39;", "'")


def test_a_block_has_bytes_by_field_the_state_and_rfc_links(client: FlaskClient) -> None:
    events = EXAMPLES[1].record()
    step = next(e.seq for e in events if e.name == "headers_encoded" and e.data["prefix"]["base"])
    page = client.get(f"/trace/dynamic-table/print?from={step}&to={step}").get_data(as_text=True)
    assert blocks(page) == [str(step)]
    assert "Required Insert Count (encoded)" in page
    assert events[step].raw[:4].hex() in re.sub(r"<[^>]+>", "", page)  # the hex dump
    assert 'class="handout-fields"' in page and "Huffman" in page
    assert "Encoder&#39;s dynamic table" in page or "Encoder's dynamic table" in page
    assert "(changed)" in page  # marked in words, for a black-and-white print
    assert 'href="https://www.rfc-editor.org/rfc/rfc9204#section-4.5.1.1"' in page


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("from=5&to=2", "&#39;from&#39; before &#39;to&#39;"),
        ("from=-1", "must be a step number"),
        ("to=abc", "must be a step number"),
        ("from=0&to=100000", "within 0 to"),
    ],
)
def test_a_bad_range_is_400_with_the_reason(client: FlaskClient, query: str, message: str) -> None:
    response = client.get(f"/trace/dynamic-table/print?{query}")
    assert response.status_code == 400
    assert message in response.get_data(as_text=True)


def test_a_long_trace_prints_a_range_at_a_time(tmp_path: Path) -> None:
    example = EXAMPLES[1].record()
    events = [replace(event, seq=n) for n, event in enumerate(example * 3)]
    traces = tmp_path / "traces"
    traces.mkdir()
    write_trace(traces / "long.json", "long", events)
    client = make_app(tmp_path, UPLOAD_MAX_BYTES=1 << 24).test_client()
    page = client.get("/trace/long/print").get_data(as_text=True)
    assert blocks(page) == [str(n) for n in range(MAX_STEPS)]
    page = client.get("/trace/long/print?from=300").get_data(as_text=True)
    assert blocks(page) == [str(n) for n in range(300, len(events))]
    response = client.get(f"/trace/long/print?from=0&to={MAX_STEPS}")
    assert response.status_code == 400
    assert f"at most {MAX_STEPS} steps" in response.get_data(as_text=True)
    # Opened from step 300, the handout prints the block of steps that holds it.
    page = client.get("/trace/long/print?step=300").get_data(as_text=True)
    assert blocks(page) == [str(n) for n in range(MAX_STEPS, len(events))]
    assert back_link(page) == ("/trace/long/step/300", "Back to step 300")


def back_link(page: str) -> tuple[str, str]:
    """The handout's "Back" link: its address and its words."""
    found = re.search(r'<a class="no-print" id="back-link" href="([^"]+)">([^<]+)</a>', page)
    assert found, "the handout has no back link"
    return found[1], found[2]


def test_back_returns_to_the_step_the_reader_came_from(client: FlaskClient) -> None:
    page = client.get("/trace/dynamic-table/print?step=46").get_data(as_text=True)
    assert blocks(page)[0] == "0" and "46" in blocks(page)
    assert back_link(page) == ("/trace/dynamic-table/step/46", "Back to step 46")
    # A range chosen on the handout keeps the step to return to.
    page = client.get("/trace/dynamic-table/print?from=44&to=47&step=46").get_data(as_text=True)
    assert blocks(page) == ["44", "45", "46", "47"]
    assert back_link(page) == ("/trace/dynamic-table/step/46", "Back to step 46")
    assert '<input type="hidden" name="step" value="46">' in page
    # Without it, "Back" goes to the first step printed.
    page = client.get("/trace/dynamic-table/print?from=44&to=47").get_data(as_text=True)
    assert back_link(page) == ("/trace/dynamic-table/step/44", "Back to step 44")
    assert 'name="step"' not in page


def test_a_step_to_return_to_outside_the_trace_is_400(client: FlaskClient) -> None:
    response = client.get("/trace/dynamic-table/print?step=100000")
    assert response.status_code == 400
    assert "&#39;step&#39; must be within 0 to" in response.get_data(as_text=True)
    assert client.get("/trace/dynamic-table/print?step=x").status_code == 400


def test_a_long_frame_prints_folded_with_its_head_and_tail(tmp_path: Path) -> None:
    pair = MemoryPair.create()
    pair.pump()
    stream_id = pair.client.send_request(request("/upload", "POST"))
    pair.client.send_data(stream_id, bytes(range(256)) * 80, end_stream=True)  # 20480 bytes
    pair.pump()
    events = pair.log.events
    step = next(e.seq for e in events if e.name == "frame_created" and len(e.raw) > 20000)
    traces = tmp_path / "traces"
    traces.mkdir()
    write_trace(traces / "big.json", "big", events)
    client = make_app(tmp_path).test_client()
    page = client.get(f"/trace/big/print?from={step}&to={step}").get_data(as_text=True)
    text = re.sub(r"<[^>]+>", "", page)
    # A 20485-byte frame: 256 bytes shown first, then the lines from 0x4fc0 (69 bytes).
    assert "20160 bytes not shown (0100 to 4fbf)" in text
    assert page.count('<div class="hex-line">') == 256 // 16 + 5
    assert "4fc0" in text and "5000" in text and "4fb0" not in text
    assert "… (20480 bytes)" in text  # the payload field's bytes, shortened
    assert len(page) < 100_000


def test_header_values_and_titles_print_as_text(tmp_path: Path) -> None:
    events = save_probe_trace(tmp_path)
    step = probe_step(events)
    client = make_app(tmp_path).test_client()
    page = client.get(f"/trace/xss-probe/print?from={step}&to={step}").get_data(as_text=True)
    assert XSS_PROBE not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page


def test_the_handout_has_no_inline_script_or_style(client: FlaskClient) -> None:
    response = client.get("/trace/first-get/print")
    page = response.get_data(as_text=True)
    assert "unsafe-inline" not in response.headers["Content-Security-Policy"]
    assert "<style" not in page and " style=" not in page
    for chunk in page.split("<script")[1:]:
        assert " src=" in chunk.split(">")[0]


def test_unknown_traces_and_ids_that_leave_the_folder_are_404(client: FlaskClient) -> None:
    for trace_id in ("no-such-trace", "..%2fsecret", "a.b"):
        assert client.get(f"/trace/{trace_id}/print").status_code == 404


def test_a_trace_of_one_side_prints_the_other_as_not_observed(tmp_path: Path) -> None:
    """A live capture holds the server's events only; the client's state was never seen."""
    server = [event for event in EXAMPLES[1].record() if event.endpoint == "server"]
    traces = tmp_path / "traces"
    traces.mkdir()
    write_trace(traces / "server.json", "server", [replace(e, seq=n) for n, e in enumerate(server)])
    client = make_app(tmp_path).test_client()
    page = client.get("/trace/server/print?from=5&to=5").get_data(as_text=True)
    assert page.count("Not observed: this trace records only the server's side.") == 1
    assert "What the client knows" in page and "What the server knows" not in page
    both = client.get("/trace/dynamic-table/print?from=5&to=5").get_data(as_text=True)
    assert "Not observed" not in both
