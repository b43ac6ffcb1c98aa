"""Accessibility checks in Debian's Chromium: contrast, focus outlines, narrow screens.

The figures are read from the page (getComputedStyle), so they follow the style sheet:
text contrast at least 4.5:1 (WCAG 1.4.3), a focus outline at least 3:1 against what is
around it (1.4.11), and no sideways scrolling at 375 CSS pixels (1.4.10, reflow).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from typing import Any

import pytest
from browser_helpers import chromium, served
from web_helpers import make_app

pytest.importorskip("playwright.sync_api")

STREAM_TYPES = ("control", "request", "qpack_encode", "qpack_decode", "push", "connection")


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with served(make_app(tmp_path_factory.mktemp("h3learn-a11y"))) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


def open_page(browser: Any, url: str, *, width: int = 1280, projector: bool = False) -> Any:
    context = browser.new_context(viewport={"width": width, "height": 800})
    if projector:
        context.add_init_script("localStorage.setItem('h3learn.projector', '1')")
    page = context.new_page()
    page.goto(url)
    page.wait_for_load_state("networkidle")
    return page


def rgb(css: str) -> tuple[float, float, float]:
    numbers = [float(n) for n in re.findall(r"[\d.]+", css)[:3]]
    return numbers[0], numbers[1], numbers[2]


def luminance(colour: tuple[float, float, float]) -> float:
    def channel(value: float) -> float:
        value /= 255
        return value / 12.92 if value <= 0.03928 else ((value + 0.055) / 1.055) ** 2.4

    red, green, blue = (channel(v) for v in colour)
    return 0.2126 * red + 0.7152 * green + 0.0722 * blue


def contrast(first: str, second: str) -> float:
    lighter, darker = sorted((luminance(rgb(first)), luminance(rgb(second))), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def css_colour(page: Any, value: str) -> str:
    """A CSS colour (a custom property's value too) as the browser computes it: rgb(…)."""
    return str(
        page.evaluate(
            """value => { const probe = document.createElement('span');
                 probe.style.color = value; document.body.append(probe);
                 const colour = getComputedStyle(probe).color; probe.remove(); return colour; }""",
            value,
        )
    )


@pytest.mark.parametrize("projector", [False, True], ids=["laptop", "projector"])
def test_stream_colours_are_readable_on_every_background_they_stand_on(
    browser: Any, base_url: str, projector: bool
) -> None:
    """Defect 7: a row's coloured text on white, on the page and on the current step's
    highlight (and on a row under the pointer)."""
    page = open_page(browser, f"{base_url}/trace/dynamic-table/step/3", projector=projector)
    try:
        backgrounds = {
            name: css_colour(page, f"var(--{name})") for name in ("bg", "panel", "current")
        }
        backgrounds["white"] = "rgb(255, 255, 255)"
        backgrounds["hover"] = css_colour(page, "#eef3fa")  # .row:hover
        low = []
        for stream_type in STREAM_TYPES:
            text = css_colour(page, f"var(--st-{stream_type})")
            for name, background in backgrounds.items():
                ratio = contrast(text, background)
                if ratio < 4.5:
                    low.append((stream_type, name, round(ratio, 2)))
        assert low == []
    finally:
        page.context.close()


@pytest.mark.parametrize("projector", [False, True], ids=["laptop", "projector"])
def test_the_focus_outline_in_the_top_bar_stands_out(
    browser: Any, base_url: str, projector: bool
) -> None:
    """Defect 5: the outline of a focused control in the dark top bar, at least 3:1."""
    page = open_page(browser, f"{base_url}/trace/first-get/step/0", projector=projector)
    try:
        bar = page.evaluate(
            "() => getComputedStyle(document.querySelector('.topbar')).backgroundColor"
        )
        for selector in (".brand", "#help-button", "#projector-toggle"):
            page.focus(selector)
            page.keyboard.press("Shift+Tab")
            page.keyboard.press("Tab")  # focused by the keyboard: :focus-visible applies
            style = page.evaluate(
                "s => { const e = document.querySelector(s); const c = getComputedStyle(e);"
                " return [e === document.activeElement, c.outlineStyle, c.outlineColor]; }",
                selector,
            )
            assert style[:2] == [True, "solid"], selector
            assert contrast(style[2], bar) >= 3, (selector, style[2], bar)
    finally:
        page.context.close()


@pytest.mark.parametrize(
    ("path", "projector"),
    [
        ("/trace/dynamic-table/step/40", False),
        ("/trace/dynamic-table/step/40", True),
        ("/lesson/02-a-first-get/step/5", True),
        ("/lesson/05-the-dynamic-table", False),
        ("/live", False),
        ("/", False),
        ("/trace/first-get/print?from=3&to=3", False),
    ],
)
def test_nothing_scrolls_sideways_at_375_pixels(
    browser: Any, base_url: str, path: str, projector: bool
) -> None:
    """Defect 11 (and 4): a phone, or a laptop at 200% or more zoom (in projector mode too)."""
    page = open_page(browser, base_url + path, width=375, projector=projector)
    try:
        widths = page.evaluate(
            "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
        )
        assert widths[0] <= widths[1], widths
        if path.startswith("/trace/") and "/step/" in path:
            for selector in ("#help-button", "#projector-toggle"):
                assert page.locator(selector).is_visible(), selector
    finally:
        page.context.close()


@pytest.mark.parametrize("projector", [False, True], ids=["laptop", "projector"])
def test_the_hex_dump_scrolls_in_its_own_box_at_375_pixels(
    browser: Any, base_url: str, projector: bool
) -> None:
    """Sixteen bytes a line, hex and text, are wider than a phone: the dump scrolls in its
    own box, and its last column can be brought into view (the panel must not cut it off)."""
    page = open_page(
        browser, f"{base_url}/trace/dynamic-table/step/45", width=375, projector=projector
    )
    try:
        page.wait_for_selector("#bytes .hex .ascii", state="attached")
        edges = page.evaluate(
            "() => { const hex = document.querySelector('#bytes .hex');"
            " hex.scrollLeft = hex.scrollWidth;"
            " const last = [...hex.querySelectorAll('.ascii')].pop().getBoundingClientRect();"
            " const panel = document.querySelector('.bytes-panel').getBoundingClientRect();"
            " return [last.right, panel.right, hex.scrollWidth > hex.clientWidth]; }"
        )
        assert edges[0] <= edges[1] and edges[2], edges
        # By keyboard too: focused, the dump takes the arrows and scrolls; the step stays.
        page.evaluate("() => { document.querySelector('#bytes .hex').scrollLeft = 0; }")
        page.focus("#bytes .hex")
        page.keyboard.press("ArrowRight")
        page.keyboard.press("End")
        page.wait_for_function("() => document.querySelector('#bytes .hex').scrollLeft > 0")
        page.wait_for_timeout(300)  # a step moved by the arrows would be fetched first
        assert page.text_content("#step-number") == "45"
    finally:
        page.context.close()


def test_the_sequence_rows_are_buttons_to_assistive_technology(browser: Any, base_url: str) -> None:
    """Defect 6: a row's role is a button's (a role=listitem on a button hid it)."""
    page = open_page(browser, f"{base_url}/trace/dynamic-table/step/3")
    try:
        page.wait_for_selector("#diagram .row[data-seq='3'].current")
        rows = page.locator("#diagram").get_by_role("button")
        assert rows.count() == page.locator("#diagram .row").count() > 0
        assert page.locator("#diagram [role=listitem]").count() == 0
    finally:
        page.context.close()


def test_headings_go_down_one_level_at_a_time(browser: Any, base_url: str) -> None:
    """Defect 12: the step page's RFC panel (h2, then h3), and one h1 on the handout."""
    page = open_page(browser, f"{base_url}/trace/first-get/step/0")
    try:
        page.wait_for_selector("#rfc .annotation")
        levels = page.evaluate(
            "() => [...document.querySelectorAll('h1, h2, h3, h4, h5, h6')]"
            ".map(e => Number(e.tagName[1]))"
        )
        assert levels[0] == 1 and levels.count(1) == 1
        skips = [(a, b) for a, b in itertools.pairwise(levels) if b > a + 1]
        assert skips == []
        page.goto(f"{base_url}/trace/first-get/print")
        assert page.locator("h1").count() == 1
        assert page.locator(".handout-head h1").count() == 1
    finally:
        page.context.close()
