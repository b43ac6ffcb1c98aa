"""A lesson's step page holds back the steps past a question not yet answered (Chromium).

Lesson 9 asks, before step 35, in which state stream 0 is after a 103 response; the summary
of step 35 says "still expecting_headers". Until the learner answers, that summary must be
nowhere on the page (the diagram, its search) and the page must fetch nothing of the later
steps; once answered, the steps up to the next question appear (docs/lessons.md, "What the
page holds back while a question waits").

Once answered, a question's result (the "Right." box and its "Reveal step N →" button)
belongs to the step just before it: a learner who moves on with Next no longer sees it. A
link to a step past several questions (the RFC reader's "Shown in the lessons") stops the
learner at the first one; each answered question then leads on to the step asked for,
stopping at the next question before it, until the learner gets there.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from browser_helpers import chromium, served, wait_for_step
from web_helpers import make_app

playwright_api = pytest.importorskip("playwright.sync_api")

LESSON = "09-informational-responses"
ANSWER = "still expecting_headers"


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with served(make_app(tmp_path_factory.mktemp("data"))) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    opened.asked = []  # every URL the page requested
    opened.on("request", lambda request: opened.asked.append(request.url))
    yield opened
    context.close()
    assert not errors, errors


def diagram_text(page: Any) -> str:
    text: str = page.text_content("#diagram")
    return text


def search(page: Any, text: str) -> str:
    """Type ``text`` into the diagram's search box; the diagram's count line once it applies."""
    page.fill("#search", text)
    page.wait_for_function(
        "text => (text === '') !== document.getElementById('diagram-count').textContent"
        ".includes('matching')",
        arg=text,
    )
    count: str = page.text_content("#diagram-count")
    return count


def fetched_past(asked: list[str], stop: int) -> list[str]:
    """The requests that could carry anything of step ``stop`` or later."""
    past = []
    for url in asked:
        step = re.search(r"/steps/(\d+)$", url)
        if step and int(step.group(1)) >= stop:
            past.append(url)
        until = re.search(r"[?&]until=(\d+)", url)
        holds = until is not None and int(until.group(1)) <= stop
        if ("/events?" in url or re.search(r"/api/lessons/[^/]+(\?|$)", url)) and not holds:
            past.append(url)
        if "/download" in url or "/print" in url:
            past.append(url)
    return past


def test_before_its_question_is_answered_a_step_is_nowhere_on_the_page(
    page: Any, base_url: str
) -> None:
    page.goto(f"{base_url}/lesson/{LESSON}/step/0")
    wait_for_step(page, 0)
    page.keyboard.press("End")  # "Last": the first question stops the learner
    page.wait_for_selector("#checkpoint:not([hidden]) .choices")
    stop = int(page.text_content("#checkpoint h3").split()[-1])
    wait_for_step(page, stop - 1)

    # The diagram: every row from the question on is drawn as hidden, without its summary.
    page.wait_for_selector(f".row.held[data-seq='{stop}']")
    held = page.text_content(f".row[data-seq='{stop}']")
    assert held == f"{stop}hidden until the question before step {stop} is answered"
    assert ANSWER not in diagram_text(page)
    assert page.locator(f".row[data-seq='{stop - 1}']:not(.held)").count() == 1
    # The search box finds nothing past the question.
    count = search(page, "still expecting")
    assert count.startswith(f"0 matching steps before step {stop}"), count
    page.screenshot(path="/tmp/h3learn-lesson-held-search.png", full_page=True)
    search(page, "")
    # The handout covers the steps before the question; the downloads wait for the answers.
    handout = page.get_attribute("#handout-link", "href")
    assert handout is not None
    assert handout.endswith(f"/print?step={stop - 1}&from=0&to={stop - 1}#step-{stop - 1}")
    assert page.locator("#downloads").is_hidden() and page.locator("#downloads-held").is_visible()
    page.screenshot(path="/tmp/h3learn-lesson-held.png", full_page=True)
    # Clicking a hidden row asks the question rather than showing the step.
    page.click(f".row[data-seq='{stop + 2}']")
    wait_for_step(page, stop - 1)
    assert not page.locator("#checkpoint").is_hidden()
    assert fetched_past(page.asked, stop) == []

    # Answered: the steps up to the next question appear, in the diagram and its search.
    page.check("#checkpoint .choices input[value='expecting_headers']")
    page.click("#checkpoint-check")
    page.wait_for_selector("#checkpoint-result")
    page.wait_for_selector(f".row[data-seq='{stop}']:not(.held)")
    assert ANSWER in page.text_content(f".row[data-seq='{stop}']")
    assert search(page, "still expecting").startswith("1 matching step before step ")
    search(page, "")
    next_stop = int(page.get_attribute("#stepper", "data-hidden-from"))
    assert next_stop > stop
    assert page.locator(f".row.held[data-seq='{next_stop}']").count() == 1
    assert page.get_attribute("#handout-link", "href").split("#")[0].endswith(f"to={next_stop - 1}")
    page.screenshot(path="/tmp/h3learn-lesson-answered.png", full_page=True)
    # The learner last asked for the hidden row's step: the button leads on to it.
    assert page.text_content("#checkpoint-continue") == f"On to step {stop + 2} →"
    page.click("#checkpoint-continue")
    wait_for_step(page, stop + 2)
    page.click("#prev")
    wait_for_step(page, stop + 1)
    page.click("#prev")
    wait_for_step(page, stop)
    page.wait_for_function(
        "() => document.getElementById('lesson-notes').getAttribute('aria-busy') === 'false'"
    )
    assert "Still waiting for the final response" in page.text_content("#lesson-notes")
    assert fetched_past(page.asked, next_stop) == []


def test_with_every_question_answered_nothing_is_held_back(page: Any, base_url: str) -> None:
    page.goto(f"{base_url}/lesson/{LESSON}/step/0")
    wait_for_step(page, 0)
    stops = json.loads(page.get_attribute("#stepper", "data-checkpoints"))
    answered = {"answered": {stop["id"]: "shown" for stop in stops}, "last": 0}
    # The page saves its progress once step 0 is drawn (the step number and the diagram's
    # row may show it first): wait for that, or it would overwrite the progress set here.
    page.wait_for_function(
        "key => localStorage.getItem(key) !== null", arg=f"h3learn.lesson.{LESSON}"
    )
    page.evaluate(
        "([key, progress]) => localStorage.setItem(key, progress)",
        [f"h3learn.lesson.{LESSON}", json.dumps(answered)],
    )
    page.reload()
    wait_for_step(page, 0)
    page.keyboard.press("End")
    last = int(page.text_content("#step-count").split()[-1]) - 1
    wait_for_step(page, last)
    assert page.get_attribute("#stepper", "data-hidden-from") is None
    assert page.locator(".row.held").count() == 0
    assert page.locator("#downloads").is_visible() and page.locator("#downloads-held").is_hidden()
    handout = page.get_attribute("#handout-link", "href")
    # No range: every step may be printed.
    assert handout.endswith(f"/print?step={last}#step-{last}")
    # The last step concludes the lesson and links the lessons that follow it.
    page.wait_for_selector("#lesson-notes .conclusion .next-lessons a")
    assert (
        page.locator("#lesson-notes .next-lessons a")
        .first.get_attribute("href")
        .startswith("/lesson/")
    )


SCREENSHOTS = "/tmp/h3learn-lesson-checkpoint-flow"


def notes_loaded(page: Any) -> str:
    page.wait_for_selector("#lesson-notes[aria-busy='false']")
    text: str = page.text_content("#lesson-notes")
    return text


def test_a_questions_result_goes_once_the_learner_steps_on_with_next(
    page: Any, base_url: str
) -> None:
    page.goto(f"{base_url}/lesson/01-opening-a-connection/step/0")
    wait_for_step(page, 0)
    page.click("#next")
    page.wait_for_selector("#checkpoint:not([hidden]) #checkpoint-answer")
    assert page.text_content("#checkpoint h3") == "Predict before step 1"
    page.fill("#checkpoint-answer", "2")
    page.click("#checkpoint-check")
    page.wait_for_selector("#checkpoint-result")
    assert page.text_content("#checkpoint-continue") == "Reveal step 1 →"
    # Next rather than the box's button: the question's step shows the result in its notes,
    # and the box (with its button) is gone.
    page.click("#next")
    wait_for_step(page, 1)
    assert page.locator("#checkpoint").is_hidden()
    assert "Right." in notes_loaded(page)
    page.screenshot(path=f"{SCREENSHOTS}-step1.png", full_page=True)
    for step in range(2, 11):
        page.click("#next")
        wait_for_step(page, step)
    assert page.locator("#checkpoint").is_hidden()
    assert not page.is_visible("#checkpoint-continue")
    assert "Right." not in notes_loaded(page)
    page.screenshot(path=f"{SCREENSHOTS}-step10.png", full_page=True)
    # Back at the step before the question: it is answered, so nothing stops the learner.
    page.goto(f"{base_url}/lesson/01-opening-a-connection/step/0")
    wait_for_step(page, 0)
    page.click("#next")
    wait_for_step(page, 1)
    assert page.locator("#checkpoint").is_hidden()


def test_a_link_past_several_questions_leads_on_to_its_step_after_each(
    page: Any, base_url: str
) -> None:
    lesson = "06-capacity-eviction-and-duplicate"
    page.goto(f"{base_url}/rfc/9204#s-4.3.4")
    page.locator("#s-4\\.3\\.4 a.step-link", has_text="step 71").first.click()
    page.wait_for_selector("#checkpoint:not([hidden]) #checkpoint-answer")
    stops = json.loads(page.get_attribute("#stepper", "data-checkpoints"))
    before = sorted(stop["step"] for stop in stops if stop["step"] <= 71)
    assert len(before) == 2, before
    first, second = before
    wait_for_step(page, first - 1)
    assert page.text_content("#checkpoint-detour").startswith(
        "You asked for step 71: 2 questions stand before it."
    )
    page.fill("#checkpoint-answer", "39")
    page.click("#checkpoint-check")
    page.wait_for_selector("#checkpoint-result")
    assert "Right." in page.text_content("#checkpoint-result")
    assert page.text_content("#checkpoint-continue") == "On to step 71 →"
    page.screenshot(path=f"{SCREENSHOTS}-detour-answered.png", full_page=True)
    page.click("#checkpoint-continue")
    # On the way to step 71, the next question stops the learner again, and says why.
    page.wait_for_selector(f"#checkpoint:not([hidden]) >> text=Predict before step {second}")
    wait_for_step(page, second - 1)
    assert page.text_content("#checkpoint-detour").startswith(
        "You asked for step 71: this question stands before it."
    )
    page.screenshot(path=f"{SCREENSHOTS}-detour-second.png", full_page=True)
    page.click("#checkpoint-reveal")
    page.wait_for_selector("#checkpoint-result")
    # The second question stands before step 71 itself: its button reveals that step.
    assert second == 71
    assert page.text_content("#checkpoint-continue") == "Reveal step 71 →"
    page.click("#checkpoint-continue")
    wait_for_step(page, 71)
    assert page.url.endswith(f"/lesson/{lesson}/step/71")
    assert page.locator("#checkpoint").is_hidden()
    notes_loaded(page)
    page.screenshot(path=f"{SCREENSHOTS}-detour-arrived.png", full_page=True)
