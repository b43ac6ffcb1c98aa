"""Lesson and annotation text (Markdown) as HTML, with raw HTML switched off.

Lessons and RFC annotations are written in Markdown (docs/lessons.md). markdown-it-py
renders them with ``html`` off: a ``<script>`` or an ``<img onerror=...>`` written in a lesson
comes out as visible text, never as markup, and link targets such as ``javascript:`` are
refused by markdown-it's link validation. The result is the only HTML the page inserts
that the server did not write itself (static/js/markdown.js).
"""

from __future__ import annotations

import functools

from markdown_it import MarkdownIt
from markupsafe import Markup


@functools.cache
def _renderer() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable(
        "table"
    )


def render(text: str) -> str:
    """Markdown -> HTML (a block: paragraphs, lists, code)."""
    html: str = _renderer().render(text)
    return html


def render_inline(text: str) -> str:
    """Markdown -> HTML for one line (a goal, a choice): no surrounding paragraph."""
    html: str = _renderer().renderInline(text)
    return html


def markup(text: str) -> Markup:
    """For Jinja: rendered Markdown, marked safe (raw HTML is already escaped by ``render``)."""
    return Markup(render(text))


def markup_inline(text: str) -> Markup:
    return Markup(render_inline(text))
