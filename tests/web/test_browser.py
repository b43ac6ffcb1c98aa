"""The step-through page in Debian's Chromium, driven by Playwright.

A real server (Werkzeug's, on a free port, in a thread) serves the app on a temporary data
directory. The tests open an example, step with the buttons and the keyboard, follow a
deep link, play, filter, upload and download, check that the XSS probe renders as text,
and take screenshots of the laptop and projector layouts into /tmp.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_helpers import chromium, served, settled_step, wait_for_step
from web_helpers import XSS_PROBE, make_app, probe_step, save_probe_trace

from h3learn.scenarios.examples import EXAMPLES, request
from h3learn.trace.store import trace_document, write_trace
from h3learn.transport.memory import MemoryPair

playwright_api = pytest.importorskip("playwright.sync_api")


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("h3learn-data")


@pytest.fixture(scope="module")
def probe_events(data_dir: Path) -> list:  # type: ignore[type-arg]
    return save_probe_trace(data_dir)


@pytest.fixture(scope="module")
def base_url(data_dir: Path, probe_events: list) -> Iterator[str]:  # type: ignore[type-arg]
    with served(make_app(data_dir)) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with chromium() as launched:
        yield launched


@pytest.fixture
def page(browser: object) -> Iterator[object]:
    context = browser.new_context(viewport={"width": 1440, "height": 900})  # type: ignore[attr-defined]
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    opened.on(
        "console",
        lambda message: errors.append(message.text) if message.type == "error" else None,
    )
    opened.errors = errors
    yield opened
    context.close()
    assert not [e for e in errors if "alert" in e or "Content Security Policy" in e], errors


def open_step(page: object, base_url: str, trace_id: str, step: int) -> None:
    page.goto(f"{base_url}/trace/{trace_id}/step/{step}")  # type: ignore[attr-defined]
    wait_for_step(page, step)


def test_a_step_counts_as_shown_only_once_it_is_drawn(page: object, base_url: str) -> None:
    """The page opens with the step's number already in its heading and the diagram's row
    marked, before the step itself arrives; the helpers above must wait for the drawing.
    (Waiting on the number alone once let a test read the bytes panel still empty.)"""
    page.add_init_script(  # type: ignore[attr-defined]
        "const fetched = window.fetch;"
        "window.fetch = (url, options) => String(url).includes('/steps/')"
        " ? new Promise(wait => setTimeout(wait, 1000)).then(() => fetched(url, options))"
        " : fetched(url, options);"
    )
    open_step(page, base_url, "dynamic-table", 58)
    assert page.locator("#bytes .hex").count() >= 1  # type: ignore[attr-defined]
    assert page.text_content("#step-summary")  # type: ignore[attr-defined]


def test_the_step_is_asked_for_once_and_before_the_modules_run(page: object, base_url: str) -> None:
    """The page preloads its step (the server works it out while the browser reads the
    modules); step.js's own fetch takes that answer rather than asking again."""
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url) if "/steps/" in r.url else None)  # type: ignore[attr-defined]
    open_step(page, base_url, "dynamic-table", 30)
    page.wait_for_timeout(300)  # type: ignore[attr-defined]
    assert [url for url in asked if url.endswith("/steps/30")] == [
        f"{base_url}/api/traces/dynamic-table/steps/30"
    ]
    timing = page.evaluate(  # type: ignore[attr-defined]
        "() => performance.getEntriesByType('resource')"
        ".filter(e => e.name.endsWith('/steps/30')).map(e => e.initiatorType)"
    )
    assert timing == ["link"]


def test_open_an_example_from_the_list_and_step_with_buttons(page: object, base_url: str) -> None:
    page.goto(base_url + "/")  # type: ignore[attr-defined]
    page.locator("#trace-list").get_by_role("link", name="A first GET").click()  # type: ignore[attr-defined]
    wait_for_step(page, 0)
    assert page.url.endswith("/trace/first-get/step/0")  # type: ignore[attr-defined]
    assert page.locator("#first").is_disabled()  # type: ignore[attr-defined]
    page.click("#next")  # type: ignore[attr-defined]
    wait_for_step(page, 1)
    page.click("#last")  # type: ignore[attr-defined]
    last = len(EXAMPLES[0].record()) - 1
    wait_for_step(page, last)
    # Stepping updates the address at most every 250 ms, and always for the last step shown.
    page.wait_for_url(f"**/trace/first-get/step/{last}")  # type: ignore[attr-defined]
    assert page.locator("#next").is_disabled()  # type: ignore[attr-defined]
    page.click("#prev")  # type: ignore[attr-defined]
    wait_for_step(page, last - 1)
    page.click("#first")  # type: ignore[attr-defined]
    wait_for_step(page, 0)


def test_keyboard_steps_plays_and_opens_the_help(page: object, base_url: str) -> None:
    open_step(page, base_url, "dynamic-table", 10)
    keyboard = page.keyboard  # type: ignore[attr-defined]
    keyboard.press("ArrowRight")
    wait_for_step(page, 11)
    keyboard.press("ArrowLeft")
    keyboard.press("ArrowLeft")
    wait_for_step(page, 9)
    keyboard.press("End")
    wait_for_step(page, len(EXAMPLES[1].record()) - 1)
    keyboard.press("Home")
    wait_for_step(page, 0)
    page.select_option("#speed", "10")  # type: ignore[attr-defined]
    page.locator("body").focus()  # type: ignore[attr-defined]
    keyboard.press(" ")
    page.wait_for_function("() => Number(document.getElementById('step-number').textContent) >= 3")  # type: ignore[attr-defined]
    keyboard.press(" ")
    assert page.get_attribute("#play", "aria-pressed") == "false"  # type: ignore[attr-defined]
    keyboard.press("?")
    assert page.locator("#help").is_visible()  # type: ignore[attr-defined]
    keyboard.press("Escape")
    assert not page.locator("#help").is_visible()  # type: ignore[attr-defined]


def test_controls_keep_their_keys_and_space_presses_the_focused_button(
    page: object, base_url: str
) -> None:
    """A select keeps its keys (defect 13); Space on a focused button presses it (defect 1)."""
    open_step(page, base_url, "dynamic-table", 5)
    keyboard = page.keyboard  # type: ignore[attr-defined]
    page.focus("#speed")  # type: ignore[attr-defined]
    keyboard.press("ArrowDown")
    keyboard.press("ArrowDown")  # 1 -> 2 -> 4 steps/s, chosen with the keyboard
    focused = page.evaluate("() => [document.activeElement.id, document.activeElement.value]")  # type: ignore[attr-defined]
    assert focused == ["speed", "4"]
    for key in ("ArrowRight", "ArrowLeft", "Home", "End"):
        keyboard.press(key)
    page.wait_for_timeout(300)  # type: ignore[attr-defined]
    assert page.text_content("#step-number") == "5"  # type: ignore[attr-defined]
    # Space on the Play button presses it once: it plays (and Space on it again pauses).
    page.focus("#play")  # type: ignore[attr-defined]
    keyboard.press(" ")
    assert page.get_attribute("#play", "aria-pressed") == "true"  # type: ignore[attr-defined]
    wait_for_step(page, 6)
    keyboard.press(" ")
    assert page.get_attribute("#play", "aria-pressed") == "false"  # type: ignore[attr-defined]
    paused = settled_step(page)
    # Space and Enter on Next step once each, and nothing plays.
    page.focus("#next")  # type: ignore[attr-defined]
    keyboard.press(" ")
    wait_for_step(page, paused + 1)
    keyboard.press("Enter")
    wait_for_step(page, paused + 2)
    page.wait_for_timeout(300)  # type: ignore[attr-defined]
    assert page.text_content("#step-number") == str(paused + 2)  # type: ignore[attr-defined]
    assert page.get_attribute("#play", "aria-pressed") == "false"  # type: ignore[attr-defined]
    # A sequence row: Space jumps to its step.
    page.focus("#diagram .row[data-seq='3']")  # type: ignore[attr-defined]
    keyboard.press(" ")
    wait_for_step(page, 3)
    assert page.get_attribute("#play", "aria-pressed") == "false"  # type: ignore[attr-defined]
    # Projector mode: Space turns it on, and nothing plays.
    page.focus("#projector-toggle")  # type: ignore[attr-defined]
    keyboard.press(" ")
    assert page.get_attribute("#projector-toggle", "aria-pressed") == "true"  # type: ignore[attr-defined]
    keyboard.press(" ")
    assert page.get_attribute("#projector-toggle", "aria-pressed") == "false"  # type: ignore[attr-defined]
    assert page.get_attribute("#play", "aria-pressed") == "false"  # type: ignore[attr-defined]
    # The arrows still step with the focus on a button.
    keyboard.press("ArrowRight")
    wait_for_step(page, 4)
    # A checkbox keeps Space (it toggles, nothing plays); the jump box keeps its keys.
    page.focus(".filters input[value=qpack]")  # type: ignore[attr-defined]
    keyboard.press(" ")
    assert not page.is_checked(".filters input[value=qpack]")  # type: ignore[attr-defined]
    assert page.get_attribute("#play", "aria-pressed") == "false"  # type: ignore[attr-defined]
    keyboard.press(" ")
    page.focus("#jump")  # type: ignore[attr-defined]
    keyboard.press("End")
    keyboard.type("2")
    page.wait_for_timeout(300)  # type: ignore[attr-defined]  # a step moved would be fetched
    assert page.text_content("#step-number") == "4"  # type: ignore[attr-defined]


def test_the_single_key_shortcuts_can_be_turned_off(page: object, base_url: str) -> None:
    """Defect 8 (WCAG 2.1.4): Space, P and ? off in the Keys dialog, remembered."""
    open_step(page, base_url, "dynamic-table", 5)
    page.click("#help-button")  # type: ignore[attr-defined]
    page.uncheck("#single-keys")  # type: ignore[attr-defined]
    page.click("#help-close")  # type: ignore[attr-defined]
    page.reload()  # type: ignore[attr-defined]
    wait_for_step(page, 5)
    page.locator("body").focus()  # type: ignore[attr-defined]
    for key in (" ", "p", "?"):
        page.keyboard.press(key)  # type: ignore[attr-defined]
    page.wait_for_timeout(1300)  # type: ignore[attr-defined]  # longer than a step at 1 step/s
    assert page.get_attribute("#play", "aria-pressed") == "false"  # type: ignore[attr-defined]
    assert page.get_attribute("#projector-toggle", "aria-pressed") == "false"  # type: ignore[attr-defined]
    assert not page.locator("#help").is_visible()  # type: ignore[attr-defined]
    assert page.text_content("#step-number") == "5"  # type: ignore[attr-defined]
    page.keyboard.press("ArrowRight")  # type: ignore[attr-defined]  # the arrows still step
    wait_for_step(page, 6)
    page.click("#help-button")  # type: ignore[attr-defined]
    assert not page.is_checked("#single-keys")  # type: ignore[attr-defined]
    page.check("#single-keys")  # type: ignore[attr-defined]
    page.click("#help-close")  # type: ignore[attr-defined]
    page.locator("body").focus()  # type: ignore[attr-defined]
    page.keyboard.press("p")  # type: ignore[attr-defined]
    assert page.get_attribute("#projector-toggle", "aria-pressed") == "true"  # type: ignore[attr-defined]


def test_opening_the_keys_help_and_pressing_space_closes_it_and_changes_nothing(
    page: Any, base_url: str
) -> None:
    """The dialog opens with the focus on Close, not on the shortcuts' checkbox: dismissing
    the help with Space must not turn the single-key shortcuts off."""
    open_step(page, base_url, "dynamic-table", 5)
    page.locator("body").focus()
    page.keyboard.press("?")
    assert page.locator("#help").is_visible()
    assert active_id(page) == "help-close"
    page.keyboard.press(" ")
    assert not page.locator("#help").is_visible()
    page.locator("body").focus()
    page.keyboard.press("?")  # still a shortcut: the setting did not change
    assert page.locator("#help").is_visible()
    assert page.is_checked("#single-keys")


def active_id(page: Any) -> str:
    """The id of the element with the focus ("" for one without; "BODY" for the page)."""
    return str(page.evaluate("() => document.activeElement.id || document.activeElement.tagName"))


def test_the_focus_stays_on_a_control_when_the_pressed_one_is_disabled(
    page: object, base_url: str
) -> None:
    """Defect 2: Next pressed at the last step but one, Prev at step 1."""
    last = len(EXAMPLES[0].record()) - 1
    open_step(page, base_url, "first-get", last - 1)
    page.focus("#next")  # type: ignore[attr-defined]
    page.keyboard.press("Enter")  # type: ignore[attr-defined]
    wait_for_step(page, last)
    assert active_id(page) == "prev"
    page.keyboard.press("Enter")  # type: ignore[attr-defined]
    wait_for_step(page, last - 1)
    open_step(page, base_url, "first-get", 1)
    page.focus("#first")  # type: ignore[attr-defined]
    page.keyboard.press(" ")  # type: ignore[attr-defined]
    wait_for_step(page, 0)
    assert active_id(page) == "next"


def test_a_deep_link_opens_that_step_with_its_bytes_and_state(page: object, base_url: str) -> None:
    events = EXAMPLES[1].record()
    step = next(e.seq for e in events if e.name == "dynamic_table_updated")
    open_step(page, base_url, "dynamic-table", step)
    assert page.locator("#jump").input_value() == str(step)  # type: ignore[attr-defined]
    assert "insert [0]" in page.text_content("#step-summary")  # type: ignore[attr-defined]
    inserted = page.locator("#state tr.inserted")  # type: ignore[attr-defined]
    assert inserted.count() == 1
    assert ":authority" in inserted.first.text_content()
    encoded = next(e.seq for e in events if e.name == "headers_encoded" and e.seq > step)
    page.fill("#jump", str(encoded))  # type: ignore[attr-defined]
    page.press("#jump", "Enter")  # type: ignore[attr-defined]
    wait_for_step(page, encoded)
    assert page.locator("#bytes .hex .b").count() == 2 * len(events[encoded].raw)  # type: ignore[attr-defined]
    assert page.locator("#bytes .bit-group").count() > 0  # type: ignore[attr-defined]
    page.hover("#bytes .field-list li:first-child")  # type: ignore[attr-defined]
    detail = page.text_content("#bytes .field-detail")  # type: ignore[attr-defined]
    assert "Required Insert Count" in detail and "Value:" in detail
    assert "null" not in detail  # a field with no Huffman note shows nothing for it
    assert page.locator("#bytes .hex-bytes .b.hl").count() >= 1  # type: ignore[attr-defined]
    href = page.get_attribute("#rfc a", "href")  # type: ignore[attr-defined]
    assert href.startswith("https://www.rfc-editor.org/rfc/rfc9204#section-")


def test_settings_decided_are_not_called_sent_before_the_frame_leaves(
    page: object, base_url: str
) -> None:
    """RFC 9114 §7.2.4: an endpoint decides its SETTINGS before any byte leaves; at that
    step nothing is sent and nothing received, and the state panel must not say otherwise."""
    events = EXAMPLES[0].record()
    step = next(e.seq for e in events if e.name == "parameters_set")
    assert not any(e.name == "frame_created" for e in events[: step + 1])
    open_step(page, base_url, EXAMPLES[0].id, step)
    labels = page.locator("#state .settings h4").all_text_contents()  # type: ignore[attr-defined]
    assert labels == ["SETTINGS it sends", "SETTINGS it received"] * 2
    received = page.locator("#state .settings").nth(1)  # type: ignore[attr-defined]
    assert "not yet" in received.text_content()


def test_a_keyboard_user_can_skip_the_sequence_rows(page: object, base_url: str) -> None:
    """Every row of the sequence is a Tab stop; one link before them leads past them all."""
    open_step(page, base_url, "dynamic-table", 30)
    page.focus("#stream-filter")  # type: ignore[attr-defined]
    page.keyboard.press("Tab")  # type: ignore[attr-defined]
    assert page.evaluate("document.activeElement.id") == "skip-sequence"  # type: ignore[attr-defined]
    assert page.locator("#skip-sequence").is_visible()  # type: ignore[attr-defined]
    page.keyboard.press("Enter")  # type: ignore[attr-defined]
    page.keyboard.press("Tab")  # type: ignore[attr-defined]
    focused = page.evaluate(  # type: ignore[attr-defined]
        "() => ({inDetails: document.getElementById('details').contains(document.activeElement),"
        " inDiagram: document.getElementById('diagram').contains(document.activeElement)})"
    )
    assert focused == {"inDetails": True, "inDiagram": False}
    assert page.evaluate("document.getElementById('step-number').textContent") == "30"  # type: ignore[attr-defined]


def test_a_long_frame_is_folded_until_the_learner_asks_for_every_byte(
    page: object, base_url: str, data_dir: Path
) -> None:
    pair = MemoryPair.create()
    pair.pump()
    stream_id = pair.client.send_request(request("/upload", "POST"))
    pair.client.send_data(stream_id, b"0123456789abcdef" * 1250, end_stream=True)
    pair.pump()
    step = next(e.seq for e in pair.log.events if len(e.raw) == 1 + 4 + 20000)
    write_trace(data_dir / "traces" / "big-frame.json", "big frame", pair.log.events)
    open_step(page, base_url, "big-frame", step)
    lines = page.locator("#bytes .hex .hex-line")  # type: ignore[attr-defined]
    fold = page.locator("#bytes .hex-fold")  # type: ignore[attr-defined]
    assert "19680 bytes not shown (0100 to 4ddf)" in fold.text_content()
    assert lines.count() == 16 + 1 + 5  # the head, the fold, the tail (0x4de0 to 0x4e24)
    assert page.locator("#bytes .hex-bytes .b").first.text_content() == "00"  # type: ignore[attr-defined]
    page.click("#bytes .show-all-bytes")  # type: ignore[attr-defined]
    assert fold.count() == 0
    assert lines.count() == (20005 + 15) // 16


def test_clicking_the_diagram_jumps_and_filters_narrow_it(page: object, base_url: str) -> None:
    open_step(page, base_url, "first-get", 0)
    page.click(".row[data-seq='3']")  # type: ignore[attr-defined]
    wait_for_step(page, 3)
    page.wait_for_url("**/trace/first-get/step/3")  # type: ignore[attr-defined]
    page.uncheck(".filters input[value=qpack]")  # type: ignore[attr-defined]
    page.wait_for_function(  # type: ignore[attr-defined]
        "() => document.getElementById('diagram-count').textContent.includes('matching')"
    )
    assert page.locator(".row.cat-qpack").count() == 0  # type: ignore[attr-defined]
    page.fill("#search", "DATA")  # type: ignore[attr-defined]
    page.wait_for_function(  # type: ignore[attr-defined]
        "() => { const rows = [...document.querySelectorAll('.row')];"
        " return rows.length > 0 && rows.every(r => r.textContent.includes('DATA')); }"
    )
    assert page.locator(".row").count() >= 2  # type: ignore[attr-defined]


def test_the_xss_probe_renders_as_text(
    page: object,
    base_url: str,
    probe_events: list,  # type: ignore[type-arg]
) -> None:
    dialogs: list[str] = []

    def on_dialog(dialog: Any) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)  # type: ignore[attr-defined]
    step = probe_step(probe_events)
    open_step(page, base_url, "xss-probe", step)
    page.wait_for_timeout(300)  # type: ignore[attr-defined]
    assert dialogs == []
    assert page.locator("img").count() == 0  # type: ignore[attr-defined]
    values = page.locator("#bytes .field-value").all_text_contents()  # type: ignore[attr-defined]
    assert XSS_PROBE in values
    assert page.text_content("#trace-title") == f"title {XSS_PROBE}"  # type: ignore[attr-defined]
    page.goto(base_url + "/")  # type: ignore[attr-defined]
    assert page.locator("img").count() == 0  # type: ignore[attr-defined]
    assert page.get_by_text(f"title {XSS_PROBE}").count() == 1  # type: ignore[attr-defined]


def test_upload_opens_the_trace_and_errors_are_shown(
    page: object, base_url: str, tmp_path: Path
) -> None:
    bad = tmp_path / "broken.json"
    bad.write_text("{ not json")
    page.goto(base_url + "/")  # type: ignore[attr-defined]
    page.set_input_files("#upload-file", str(bad))  # type: ignore[attr-defined]
    page.click("#upload-form button[type=submit]")  # type: ignore[attr-defined]
    page.wait_for_selector("#upload-error:not([hidden])")  # type: ignore[attr-defined]
    assert "broken.json: not JSON" in page.text_content("#upload-error")  # type: ignore[attr-defined]
    good = tmp_path / "mine.json"
    good.write_text(json.dumps(trace_document("My upload", EXAMPLES[3].record())))
    page.set_input_files("#upload-file", str(good))  # type: ignore[attr-defined]
    page.click("#upload-form button[type=submit]")  # type: ignore[attr-defined]
    page.wait_for_url("**/trace/upload-*/step/0")  # type: ignore[attr-defined]
    wait_for_step(page, 0)
    assert page.text_content("#trace-title") == "My upload"  # type: ignore[attr-defined]


def test_a_double_click_on_upload_saves_the_file_once(
    page: object, base_url: str, tmp_path: Path
) -> None:
    def saved() -> list[str]:
        answer = page.request.get(f"{base_url}/api/traces").json()  # type: ignore[attr-defined]
        return [t["id"] for t in answer["traces"] if t["id"].startswith("upload-")]

    before = saved()
    good = tmp_path / "twice.json"
    good.write_text(json.dumps(trace_document("Clicked twice", EXAMPLES[3].record())))
    page.goto(base_url + "/")  # type: ignore[attr-defined]
    page.set_input_files("#upload-file", str(good))  # type: ignore[attr-defined]
    page.dblclick("#upload-form button[type=submit]")  # type: ignore[attr-defined]
    page.wait_for_url("**/trace/upload-*/step/0")  # type: ignore[attr-defined]
    wait_for_step(page, 0)
    page.wait_for_timeout(500)  # type: ignore[attr-defined]  # time for a second upload to land
    assert len(saved()) == len(before) + 1


@pytest.mark.parametrize(
    ("link", "key"), [("#download-native", "events"), ("#download-qlog03", "qlog_version")]
)
def test_download_links_save_the_trace(page: object, base_url: str, link: str, key: str) -> None:
    open_step(page, base_url, "post-with-trailers", 0)
    with page.expect_download() as info:  # type: ignore[attr-defined]
        page.click(link)  # type: ignore[attr-defined]
    download = info.value
    assert download.suggested_filename.startswith("post-with-trailers")
    assert key in json.loads(Path(download.path()).read_text())


def test_socketio_connects_over_websocket(page: object, base_url: str) -> None:
    open_step(page, base_url, "first-get", 0)
    page.wait_for_function(  # type: ignore[attr-defined]
        "() => window.h3learnSocket && window.h3learnSocket.connected"
        " && window.h3learnSocket.io.engine.transport.name === 'websocket'"
    )
    assert page.text_content("#live-status") == "live: connected"  # type: ignore[attr-defined]


def test_projector_mode_toggles_and_screenshots(page: object, base_url: str) -> None:
    open_step(page, base_url, "dynamic-table", 45)
    page.wait_for_timeout(300)  # type: ignore[attr-defined]
    page.screenshot(path="/tmp/h3learn-laptop.png")  # type: ignore[attr-defined]
    small = page.evaluate("() => getComputedStyle(document.documentElement).fontSize")  # type: ignore[attr-defined]
    page.click("#projector-toggle")  # type: ignore[attr-defined]
    assert page.get_attribute("html", "class") == "projector"  # type: ignore[attr-defined]
    large = page.evaluate("() => getComputedStyle(document.documentElement).fontSize")  # type: ignore[attr-defined]
    assert float(large.removesuffix("px")) > float(small.removesuffix("px"))
    page.set_viewport_size({"width": 1920, "height": 1080})  # type: ignore[attr-defined]
    wait_for_step(page, 45)
    page.wait_for_timeout(300)  # type: ignore[attr-defined]
    page.screenshot(path="/tmp/h3learn-projector.png")  # type: ignore[attr-defined]
    page.reload()  # type: ignore[attr-defined]
    wait_for_step(page, 45)
    assert page.get_attribute("html", "class") == "projector"  # type: ignore[attr-defined]
    page.keyboard.press("p")  # type: ignore[attr-defined]
    assert page.get_attribute("html", "class") == ""  # type: ignore[attr-defined]


def test_the_handout_prints_clean_blocks_and_a_pdf(page: object, base_url: str) -> None:
    open_step(page, base_url, "dynamic-table", 45)
    page.click("#next")  # type: ignore[attr-defined]
    wait_for_step(page, 46)
    # The handout knows the step the reader came from, and "Back" returns there.
    page.click("#handout-link")  # type: ignore[attr-defined]
    page.wait_for_url("**/trace/dynamic-table/print?step=46#step-46")  # type: ignore[attr-defined]
    assert page.text_content("#back-link") == "Back to step 46"  # type: ignore[attr-defined]
    page.click("#back-link")  # type: ignore[attr-defined]
    wait_for_step(page, 46)
    page.goto(f"{base_url}/trace/dynamic-table/print?from=44&to=47")  # type: ignore[attr-defined]
    page.emulate_media(media="print")  # type: ignore[attr-defined]
    steps = page.locator("article.handout-step")  # type: ignore[attr-defined]
    assert steps.count() == 4
    block = page.locator("#step-45")  # type: ignore[attr-defined]
    assert "Required Insert Count 3" in block.locator("h2").text_content()
    assert block.locator(".handout-fields tbody tr").count() > 10
    assert block.locator(".handout-endpoint").count() == 2
    link = block.locator(".rfc-list a").first
    assert link.get_attribute("href").startswith("https://www.rfc-editor.org/rfc/rfc9204#")
    # The screen-only parts are gone on paper; the URL of each RFC link is printed after it.
    for hidden in ("#projector-toggle", ".handout-range"):
        assert not page.locator(hidden).is_visible()  # type: ignore[attr-defined]
    after = page.evaluate(  # type: ignore[attr-defined]
        "() => getComputedStyle(document.querySelector('#step-45 .rfc-list a'), '::after').content"
    )
    assert "rfc-editor.org" in after
    block.screenshot(path="/tmp/h3learn-handout-step45.png")
    page.screenshot(path="/tmp/h3learn-handout-print.png", full_page=True)  # type: ignore[attr-defined]
    pdf = page.pdf(path="/tmp/h3learn-handout.pdf", format="A4")  # type: ignore[attr-defined]
    assert pdf.startswith(b"%PDF") and len(pdf) > 10_000


def test_the_step_page_prints_as_one_step(page: object, base_url: str) -> None:
    open_step(page, base_url, "dynamic-table", 45)
    page.emulate_media(media="print")  # type: ignore[attr-defined]
    assert page.locator("#only-stream").text_content().startswith("Show only stream")
    hidden_on_paper = (".diagram-panel", ".controls", "#projector-toggle", "#only-stream")
    for hidden in (*hidden_on_paper, ".nav-live", ".nav-rfc"):
        assert not page.locator(hidden).is_visible()  # type: ignore[attr-defined]
    for shown in ("#step-summary", "#bytes .hex", "#rfc a", "#state .endpoint"):
        assert page.locator(shown).first.is_visible()  # type: ignore[attr-defined]
    page.screenshot(path="/tmp/h3learn-step-print.png", full_page=True)  # type: ignore[attr-defined]


def test_huffman_strings_and_the_prefix_arithmetic_are_written_out(
    page: object, base_url: str
) -> None:
    events = EXAMPLES[1].record()
    step = next(e.seq for e in events if e.name == "headers_decoded" and e.data["prefix"]["base"])
    open_step(page, base_url, "dynamic-table", step)
    tags = page.locator("#bytes .field-list .huffman-tag")  # type: ignore[attr-defined]
    assert tags.count() >= 1
    tag = page.locator(".huffman-tag")  # type: ignore[attr-defined]
    item = page.locator("#bytes .field-list li", has=tag).first  # type: ignore[attr-defined]
    item.hover()
    detail = page.text_content("#bytes .field-detail")  # type: ignore[attr-defined]
    assert "Huffman-coded (RFC 7541 Appendix B)" in detail
    assert "/style.css" in detail  # the decoded text, not the octets
    calculation = page.text_content("#bytes .calculation")  # type: ignore[attr-defined]
    assert "ReqInsertCount = MaxWrapped + EncodedInsertCount − 1" in calculation
    assert "absolute = Base − 1 −" in calculation
    page.locator("#bytes .calculation").screenshot(path="/tmp/h3learn-calculation.png")  # type: ignore[attr-defined]


def test_the_diagram_filters_by_stream(page: object, base_url: str) -> None:
    open_step(page, base_url, "dynamic-table", 45)
    assert page.text_content("#only-stream") == "Show only stream 4"  # type: ignore[attr-defined]
    page.click("#only-stream")  # type: ignore[attr-defined]
    page.wait_for_function(  # type: ignore[attr-defined]
        "() => document.getElementById('diagram-count').textContent.includes('matching')"
    )
    seqs = page.eval_on_selector_all(".row", "rows => rows.map(r => Number(r.dataset.seq))")  # type: ignore[attr-defined]
    four = {e.seq for e in EXAMPLES[1].record() if e.stream_id == 4}
    assert seqs and set(seqs) <= four
    assert page.text_content("#only-stream") == "Show all streams"  # type: ignore[attr-defined]
    page.fill("#stream-filter", "4, x")  # type: ignore[attr-defined]
    page.wait_for_selector("#stream-filter-error:not([hidden])")  # type: ignore[attr-defined]
    assert page.text_content("#stream-filter-error").startswith("'x' is not a stream ID: ")  # type: ignore[attr-defined]
    # The last good filter stays.
    assert page.locator(".row").count() == len(seqs)  # type: ignore[attr-defined]
    page.fill("#stream-filter", "")  # type: ignore[attr-defined]
    page.wait_for_function(  # type: ignore[attr-defined]
        "() => !document.getElementById('diagram-count').textContent.includes('matching')"
    )


def test_a_stream_the_trace_lacks_is_named_in_words_and_the_page_keeps_working(
    page: object, base_url: str
) -> None:
    open_step(page, base_url, "dynamic-table", 45)
    rows = page.locator(".row").count()  # type: ignore[attr-defined]
    page.fill("#stream-filter", "99")  # type: ignore[attr-defined]
    page.wait_for_selector("#stream-filter-error:not([hidden])")  # type: ignore[attr-defined]
    message = page.text_content("#stream-filter-error")  # type: ignore[attr-defined]
    streams = sorted({e.stream_id for e in EXAMPLES[1].record() if e.stream_id is not None})
    listed = ", ".join(str(s) for s in streams[:-1]) + f" and {streams[-1]}"
    assert message == (
        f"This trace has no stream 99; the trace's streams are {listed}."
        " The sequence still shows every stream."
    )
    assert page.get_attribute("#stream-filter", "aria-invalid") == "true"  # type: ignore[attr-defined]
    assert page.locator(".row").count() == rows  # type: ignore[attr-defined]
    # Still working: stepping, and a stream the trace has.
    page.click("#next")  # type: ignore[attr-defined]
    wait_for_step(page, 46)
    page.fill("#stream-filter", "4")  # type: ignore[attr-defined]
    page.wait_for_selector("#stream-filter-error[hidden]", state="attached")  # type: ignore[attr-defined]
    assert page.get_attribute("#stream-filter", "aria-invalid") is None  # type: ignore[attr-defined]
    four = sum(1 for e in EXAMPLES[1].record() if e.stream_id == 4)
    page.wait_for_function(  # type: ignore[attr-defined]
        "n => document.getElementById('diagram-count').textContent === `${n} matching steps`",
        arg=four,
    )
    page.fill("#stream-filter", "4, 98")  # type: ignore[attr-defined]
    page.wait_for_selector("#stream-filter-error:not([hidden])")  # type: ignore[attr-defined]
    assert page.text_content("#stream-filter-error").endswith(  # type: ignore[attr-defined]
        "The sequence still shows the streams last asked for (4)."
    )


# -- lessons (issue 5) --------------------------------------------------------------------


def test_a_lesson_stops_at_a_checkpoint_until_it_is_answered(page: object, base_url: str) -> None:
    page.goto(base_url + "/")  # type: ignore[attr-defined]
    page.locator("#lesson-list").get_by_role("link", name="A first GET").click()  # type: ignore[attr-defined]
    page.wait_for_url("**/lesson/02-a-first-get")  # type: ignore[attr-defined]
    page.click("#start-lesson")  # type: ignore[attr-defined]
    wait_for_step(page, 0)
    page.keyboard.press("End")  # type: ignore[attr-defined]
    # The first question stops the learner just before the step it is about.
    page.wait_for_selector("#checkpoint:not([hidden]) #checkpoint-answer")  # type: ignore[attr-defined]
    stop = int(page.text_content("#checkpoint h3").split()[-1])  # type: ignore[attr-defined]
    wait_for_step(page, stop - 1)
    page.fill("#checkpoint-answer", "3")  # type: ignore[attr-defined]
    page.click("#checkpoint-check")  # type: ignore[attr-defined]
    page.wait_for_selector(".feedback .wrong")  # type: ignore[attr-defined]
    page.screenshot(path="/tmp/h3learn-lesson-wrong.png", full_page=True)  # type: ignore[attr-defined]
    page.fill("#checkpoint-answer", "0")  # type: ignore[attr-defined]
    page.click("#checkpoint-check")  # type: ignore[attr-defined]
    page.wait_for_selector("#checkpoint-result")  # type: ignore[attr-defined]
    assert "Right." in page.text_content("#checkpoint-result")  # type: ignore[attr-defined]
    page.click("#checkpoint-continue")  # type: ignore[attr-defined]
    wait_for_step(page, stop)
    assert page.url.endswith(f"/lesson/02-a-first-get/step/{stop}")  # type: ignore[attr-defined]
    # The notes of the steps the answer revealed are fetched once it is given.
    page.wait_for_selector("#lesson-notes[aria-busy='false']")  # type: ignore[attr-defined]
    notes = page.text_content("#lesson-notes")  # type: ignore[attr-defined]
    assert "QPACK with the static table only" in notes
    progress = page.evaluate("localStorage.getItem('h3learn.lesson.02-a-first-get')")  # type: ignore[attr-defined]
    assert json.loads(progress)["answered"] == {"prefix": "right"}
    page.screenshot(path="/tmp/h3learn-lesson-note.png", full_page=True)  # type: ignore[attr-defined]
    # Answered: the learner may now pass it; the next question stops them again.
    page.keyboard.press("End")  # type: ignore[attr-defined]
    page.wait_for_selector("#checkpoint:not([hidden]) #checkpoint-answer")  # type: ignore[attr-defined]
    assert "How many bytes will the whole HEADERS" in page.text_content("#checkpoint")  # type: ignore[attr-defined]
    page.click("#projector-toggle")  # type: ignore[attr-defined]
    page.screenshot(path="/tmp/h3learn-lesson-projector.png", full_page=True)  # type: ignore[attr-defined]


def test_a_deep_link_past_a_question_shows_the_question_first(page: object, base_url: str) -> None:
    page.goto(base_url + "/lesson/07-blocked-streams/step/80")  # type: ignore[attr-defined]
    page.wait_for_selector("#checkpoint:not([hidden]) .choices")  # type: ignore[attr-defined]
    stop = int(page.text_content("#checkpoint h3").split()[-1])  # type: ignore[attr-defined]
    wait_for_step(page, stop - 1)
    # The learner is told why they are not at step 80, and how many questions stand before it.
    stops = json.loads(page.get_attribute("#stepper", "data-checkpoints"))  # type: ignore[attr-defined]
    before = sum(1 for checkpoint in stops if checkpoint["step"] <= 80)
    detour = page.text_content("#checkpoint-detour")  # type: ignore[attr-defined]
    assert detour.startswith(f"You asked for step 80: {before} questions stand before it.")
    # The radio group is a fieldset described by the question (defect 10).
    described = page.evaluate(  # type: ignore[attr-defined]
        "() => document.getElementById(document.querySelector('#checkpoint fieldset')"
        ".getAttribute('aria-describedby')).textContent"
    )
    assert described.strip() and described.strip() in page.text_content("#checkpoint")  # type: ignore[attr-defined]
    page.check("#checkpoint .choices input >> nth=0")  # type: ignore[attr-defined]
    # Home and End on the radio group are the group's: the question stays, with the focus.
    page.keyboard.press("Home")  # type: ignore[attr-defined]
    page.keyboard.press("End")  # type: ignore[attr-defined]
    page.wait_for_timeout(300)  # type: ignore[attr-defined]
    wait_for_step(page, stop - 1)
    assert page.locator("#checkpoint .choices").is_visible()  # type: ignore[attr-defined]
    assert active_id(page) == "choice-0"
    page.click("#checkpoint-check")  # type: ignore[attr-defined]
    page.wait_for_selector(".feedback .wrong")  # type: ignore[attr-defined]
    page.click("#checkpoint-reveal")  # type: ignore[attr-defined]
    page.wait_for_selector("#checkpoint-result")  # type: ignore[attr-defined]
    assert "blocks stream 4" in page.text_content("#checkpoint-result")  # type: ignore[attr-defined]


def test_a_link_to_the_very_step_a_question_stands_before_says_why_it_stops(
    page: object, base_url: str
) -> None:
    """The RFC reader links a section to step 21 of lesson 2, which the first question
    stands before: the learner lands on step 20 and is told why; one stepping on from
    step 20 with → meets the question as usual, without being told they asked for it."""
    page.goto(base_url + "/lesson/02-a-first-get/step/21")  # type: ignore[attr-defined]
    page.wait_for_selector("#checkpoint:not([hidden]) #checkpoint-answer")  # type: ignore[attr-defined]
    assert page.text_content("#checkpoint h3") == "Predict before step 21"  # type: ignore[attr-defined]
    wait_for_step(page, 20)
    detour = page.text_content("#checkpoint-detour")  # type: ignore[attr-defined]
    assert detour.startswith("You asked for step 21: this question stands before it.")
    page.goto(base_url + "/lesson/02-a-first-get/step/20")  # type: ignore[attr-defined]
    wait_for_step(page, 20)
    page.keyboard.press("ArrowRight")  # type: ignore[attr-defined]
    page.wait_for_selector("#checkpoint:not([hidden]) #checkpoint-answer")  # type: ignore[attr-defined]
    assert page.locator("#checkpoint-detour").count() == 0  # type: ignore[attr-defined]
    # The answer box is described by the question (defect 10).
    described = page.evaluate(  # type: ignore[attr-defined]
        "() => document.getElementById("
        "document.getElementById('checkpoint-answer').getAttribute('aria-describedby')).textContent"
    )
    assert described.strip() and described.strip() in page.text_content("#checkpoint")  # type: ignore[attr-defined]
    # Answered: the verdict and explanation are said in a status region (defect 3).
    page.fill("#checkpoint-answer", "0")  # type: ignore[attr-defined]
    page.keyboard.press("Enter")  # type: ignore[attr-defined]
    page.wait_for_selector("#checkpoint-continue:focus")  # type: ignore[attr-defined]
    said = page.locator("[role=status]#checkpoint-status").text_content()  # type: ignore[attr-defined]
    assert said.startswith("Right.") and said == page.text_content("#checkpoint-result")  # type: ignore[attr-defined]
    # "Reveal step 21 →" pressed: the box goes, the focus goes to the step's heading.
    page.keyboard.press("Enter")  # type: ignore[attr-defined]
    wait_for_step(page, 21)
    assert page.locator("#checkpoint").is_hidden()  # type: ignore[attr-defined]
    assert active_id(page) == "step-heading"


def test_the_rfc_reader_links_to_the_steps_that_demonstrate_a_section(
    page: object, base_url: str
) -> None:
    page.goto(base_url + "/rfc/9204")  # type: ignore[attr-defined]
    section = page.locator("#s-4\\.5\\.1\\.1")  # type: ignore[attr-defined]
    assert "Required Insert Count" in section.text_content()
    link = section.locator("a.step-link").first
    href = link.get_attribute("href")
    page.screenshot(path="/tmp/h3learn-rfc-reader.png")  # type: ignore[attr-defined]
    link.click()
    step = int(href.rsplit("/", 1)[1])
    page.wait_for_url(f"**{href}")  # type: ignore[attr-defined]
    page.wait_for_selector("#lesson-panel")  # type: ignore[attr-defined]
    # Either the step itself, or (a question before it unanswered) the question first.
    page.wait_for_function(  # type: ignore[attr-defined]
        "step => document.getElementById('stepper').dataset.shown === String(step)"
        " || !document.getElementById('checkpoint').hidden",
        arg=step,
    )


def test_tab_walks_the_sequence_rows_in_step_order(page: object, base_url: str) -> None:
    """The diagram draws only the rows in view and adds more as it scrolls; Tab must still
    meet them in step order, past the rows first drawn (keyboard-only use)."""
    open_step(page, base_url, "dynamic-table", 45)
    page.focus("#diagram .row[data-seq='45']")  # type: ignore[attr-defined]
    seq = "() => Number(document.activeElement.dataset.seq)"
    backwards = []
    for _ in range(40):  # upwards: rows above are drawn as the list scrolls up
        page.keyboard.press("Shift+Tab")  # type: ignore[attr-defined]
        backwards.append(page.evaluate(seq))  # type: ignore[attr-defined]
    assert backwards == list(range(44, 4, -1))
    forwards = []
    for _ in range(60):
        page.keyboard.press("Tab")  # type: ignore[attr-defined]
        forwards.append(page.evaluate(seq))  # type: ignore[attr-defined]
    assert forwards == list(range(6, 66))


def test_an_rfc_section_the_learner_folded_stays_folded_while_steps_cite_it(
    page: object, base_url: str
) -> None:
    """The RFC panel is redrawn only when a step cites other sections: stepping through a
    run of steps that cite the same ones keeps what the learner folded."""

    def cited(step: int) -> tuple[list[str], list[str]]:
        answer = page.request.get(f"{base_url}/api/traces/dynamic-table/steps/{step}").json()  # type: ignore[attr-defined]
        event = answer["event"]
        return [r["section"] for r in event["rfc"]], [r["section"] for r in event["field_rfc"]]

    count = len(EXAMPLES[1].record())
    same = next(n for n in range(count - 1) if cited(n)[0] and cited(n) == cited(n + 1))
    other = next(n for n in range(same + 2, count) if cited(n)[0] and cited(n) != cited(same))
    open_step(page, base_url, "dynamic-table", same)
    annotation = page.locator("#rfc details.annotation").first  # type: ignore[attr-defined]
    assert annotation.evaluate("details => details.open")
    annotation.locator("summary").click()
    assert not annotation.evaluate("details => details.open")
    page.keyboard.press("ArrowRight")  # type: ignore[attr-defined]
    wait_for_step(page, same + 1)
    assert not page.locator("#rfc details.annotation").first.evaluate("details => details.open")  # type: ignore[attr-defined]
    page.fill("#jump", str(other))  # type: ignore[attr-defined]
    page.press("#jump", "Enter")  # type: ignore[attr-defined]
    wait_for_step(page, other)
    first = page.locator("#rfc details.annotation").first  # type: ignore[attr-defined]
    assert first.evaluate("details => details.open")
    expected = page.request.get(f"{base_url}/api/traces/dynamic-table/steps/{other}").json()  # type: ignore[attr-defined]
    assert expected["event"]["rfc"][0]["label"] in first.locator("summary").text_content()
