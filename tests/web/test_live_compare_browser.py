"""The Live page's compare button in Debian's Chromium: it takes 2 to 8 captures.

The captures are fed by in-memory endpoints (`FakeConnection` of test_live_api.py); the
app runs on Werkzeug's server in a thread, stopped by the test's own handle.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_helpers import chromium, served
from test_live_api import FakeConnection, service
from web_helpers import make_app

from h3learn.web.live import MAX_COMPARE

pytest.importorskip("playwright.sync_api")


@pytest.fixture
def base_url(tmp_path: Path) -> Iterator[str]:
    app = make_app(tmp_path, LIVE_BATCH_SECONDS=0.02)
    for number in range(MAX_COMPARE + 1):
        connection = FakeConnection(app, agent=f"client-{number}/1.0")
        connection.get()
        connection.close()
    try:
        with served(app) as url:
            yield url
    finally:
        service(app).close()


def test_the_compare_button_takes_two_to_eight_captures(base_url: str) -> None:
    with chromium() as browser:
        page: Any = browser.new_page()
        page.goto(base_url + "/live")
        page.wait_for_selector("tr.capture")
        boxes = page.locator("tr.capture input[type=checkbox]")
        assert boxes.count() == MAX_COMPARE + 1
        button = page.locator("#compare-button")
        boxes.nth(0).check()
        assert button.is_disabled()  # one is nothing to compare
        for number in range(1, MAX_COMPARE):
            boxes.nth(number).check()
        assert button.is_enabled() and button.text_content() == "Compare selected (8)"
        boxes.nth(MAX_COMPARE).check()
        assert button.is_disabled()
        assert button.text_content() == "Compare selected (9): at most 8 at a time"
        page.screenshot(path="/tmp/h3learn-live-compare-nine.png", full_page=True)
        boxes.nth(0).uncheck()
        assert button.is_enabled()


def test_rename_gives_the_focus_back_to_the_rename_button(base_url: str) -> None:
    """Defect 2: the rename form goes (Cancel, or Enter to save); the focus is not lost."""
    with chromium() as browser:
        page: Any = browser.new_page()
        page.goto(base_url + "/live")
        page.wait_for_selector("tr.capture")
        row = page.locator("tr.capture").nth(0)
        row_id = row.get_attribute("data-id")
        focused_rename = "id => document.activeElement.matches(`tr[data-id='${id}'] button.rename`)"
        row.locator("button.rename").click()
        page.wait_for_selector(".rename-form input:focus")
        page.click(".rename-form button[type=button]")  # Cancel
        assert page.evaluate(focused_rename, row_id)
        page.focus(f"tr[data-id='{row_id}'] button.rename")
        page.keyboard.press("Enter")
        page.wait_for_selector(".rename-form input:focus")
        page.keyboard.type(" again")
        page.keyboard.press("Enter")
        page.wait_for_function(
            "id => document.querySelector(`tr[data-id='${id}'] .rename-form`) === null", arg=row_id
        )
        assert page.evaluate(focused_rename, row_id)


def test_a_fetch_still_running_when_the_page_stops_asking_is_not_called_failed(
    tmp_path: Path,
) -> None:
    """The page asks about a fetch for a bounded time (three times the server's timeout and
    5 s more); a job still running then is said to be so, and the button is free again."""
    app = make_app(tmp_path, LIVE_FETCH_TIMEOUT=0.2)
    job = {"id": 7, "state": "running", "url": "https://127.0.0.1:9/"}
    asked: list[str] = []

    def still_running(route: Any) -> None:
        asked.append(route.request.method)
        route.fulfill(status=200, content_type="application/json", body=json.dumps(job))

    try:
        with served(app) as url, chromium() as browser:
            page: Any = browser.new_page()
            assert page.goto(url + "/live").ok
            assert page.get_attribute("#fetch-form", "data-wait-seconds") == "5.6"
            assert "(at most 0.2 s)" in " ".join(page.text_content("#fetch-heading + p").split())
            page.route("**/api/captures/fetch**", still_running)
            page.fill("#fetch-url", job["url"])
            page.click("#fetch-button")
            page.wait_for_function("() => document.getElementById('fetch-button').disabled")
            page.wait_for_function(
                "() => document.getElementById('fetch-result').textContent.startsWith('No answer')",
                timeout=15_000,
            )
            result = page.text_content("#fetch-result")
            assert result.startswith("No answer yet after 5.6 s.") and "failed" not in result
            assert "under Connections" in result
            assert page.is_enabled("#fetch-button")
            assert asked[0] == "POST" and asked.count("GET") >= 10  # polled every 250 ms
    finally:
        service(app).close()
