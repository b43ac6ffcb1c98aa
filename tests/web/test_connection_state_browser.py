"""RFC 9114 §4.6, §5.2, §5.3: the step page shows each endpoint's connection, in Chromium.

The Connection block of each endpoint lists GOAWAY sent and received, the push IDs and how
the connection ended, marks what the step changed, and fits a 375-pixel screen.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from browser_helpers import chromium, served
from connection_trace import GOAWAY_ID, TRACE_ID, save_connection_trace, step_of
from web_helpers import make_app

from h3learn.events import Event

playwright_api = pytest.importorskip("playwright.sync_api")


@pytest.fixture(scope="module")
def events(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, list[Event]]]:
    data_dir = tmp_path_factory.mktemp("h3learn-connection")
    recorded = save_connection_trace(data_dir)
    with served(make_app(data_dir)) as url:
        yield url, recorded


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


@contextmanager
def open_step(browser: Any, base_url: str, step: int, width: int = 1440) -> Iterator[Any]:
    """The step page with its Connection blocks drawn; its browser context closed after."""
    context = browser.new_context(viewport={"width": width, "height": 900})
    try:
        page = context.new_page()
        page.goto(f"{base_url}/trace/{TRACE_ID}/step/{step}")
        page.wait_for_function(
            "step => document.getElementById('stepper').dataset.shown === String(step)"
            " && document.querySelector('#state .connection .metric') !== null",
            arg=step,
        )
        yield page
    finally:
        context.close()


def metric(page: Any, endpoint: str, path: str) -> Any:
    return page.locator(f"#state .ep-{endpoint} .connection [data-path='{endpoint}.{path}']")


def test_the_goaway_step_shows_the_identifier_marked_changed(
    browser: Any, events: tuple[str, list[Event]]
) -> None:
    base_url, recorded = events
    with open_step(
        browser, base_url, step_of(recorded, "server", "frame_created", "goaway")
    ) as page:
        sent = metric(page, "server", "connection.goaway.sent")
        assert sent.text_content() == f"GOAWAY sent{GOAWAY_ID}"
        assert "changed" in sent.get_attribute("class")
        received = metric(page, "client", "connection.goaway.received")
        assert received.text_content() == "GOAWAY received—"
        assert "changed" not in received.get_attribute("class")
        # A client's block lists what it sends for pushes, a server's what it receives.
        assert metric(page, "client", "connection.max_push_id.sent").text_content().endswith("3")
        assert metric(page, "server", "connection.max_push_id.received").count() == 1
        assert metric(page, "client", "connection.max_push_id.received").count() == 0
        promised = metric(page, "client", "connection.pushes_promised.received")
        assert promised.text_content() == "pushes promised to it0, 1"
        assert metric(page, "client", "connection.closed").text_content() == "connectionopen"


def test_a_clean_close_is_shown_on_both_sides(
    browser: Any, events: tuple[str, list[Event]]
) -> None:
    base_url, recorded = events
    with open_step(browser, base_url, step_of(recorded, "client", "connection_closed")) as page:
        closed = metric(page, "client", "connection.closed")
        assert closed.text_content() == "connectionclosed cleanly by the peer: H3_NO_ERROR"
        assert "changed" in closed.get_attribute("class")
        server = metric(page, "server", "connection.closed").text_content()
        assert server == "connectionclosed cleanly by this endpoint: H3_NO_ERROR"


def test_the_connection_block_fits_375_pixels(
    browser: Any, events: tuple[str, list[Event]]
) -> None:
    base_url, recorded = events
    with open_step(browser, base_url, len(recorded) - 1, width=375) as page:
        widths = page.evaluate(
            "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
        )
        assert widths[0] <= widths[1], widths
        page.screenshot(path="/tmp/h3learn-connection-375.png", full_page=True)
