"""The annotated RFC (issue 5): lessons/rfc/*.toml, one file per RFC, one entry per section.

Each file is ``rfc`` (the number), ``title`` and a list of ``[[section]]`` tables with
``id``, ``title``, ``normative``, ``says``, ``why`` and ``pitfalls``, in the RFC's order.
The web UI shows every cited section with its title from `h3learn.curriculum.rfc_toc.TITLES`;
each of those sections of RFC 9204, RFC 9000 and RFC 7541 must have an annotation under the
same title. (These checks will move next to the loader that reads the files.)
"""

from __future__ import annotations

import re
import tomllib
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from h3learn.curriculum.rfc_toc import TITLES

ANNOTATIONS = Path(__file__).resolve().parents[2] / "lessons" / "rfc"
TEXT_KEYS = ("says", "why", "pitfalls")
SECTION_KEYS = {"id": str, "title": str, "normative": bool} | dict.fromkeys(TEXT_KEYS, str)
#: RFCs whose cited sections (in TITLES) must all be annotated.
FULLY_CITED = ("9204", "9000", "7541")
#: "4.5.1.1", or an appendix such as "A" or "B.3".
SECTION_ID = re.compile(r"(?:[1-9][0-9]*|[A-Z])(?:\.[1-9][0-9]*)*")
HTML_TAG = re.compile(r"<[A-Za-z/!]")
LINK = re.compile(r"https?://|\]\(")


def load(path: Path) -> dict[str, Any]:
    with path.open("rb") as file:
        return tomllib.load(file)


FILES = sorted(ANNOTATIONS.glob("*.toml"))
DOCS = {path.stem: load(path) for path in FILES}


def order_key(section_id: str) -> tuple[tuple[int, int], ...]:
    """Numbered sections first, in numeric order, then appendices A, B, ... in order."""
    first, *rest = section_id.split(".")
    head = (0, int(first)) if first.isdigit() else (1, ord(first))
    return (head, *((0, int(part)) for part in rest))


def test_every_rfc_the_ui_cites_in_full_has_an_annotation_file() -> None:
    assert set(FULLY_CITED) <= set(DOCS)


@pytest.mark.parametrize("path", FILES, ids=lambda path: path.name)
def test_file_names_its_rfc_and_title(path: Path) -> None:
    doc = DOCS[path.stem]
    assert set(doc) == {"rfc", "title", "section"}
    assert doc["rfc"] == int(path.stem)
    assert isinstance(doc["title"], str) and doc["title"].strip()
    assert isinstance(doc["section"], list) and doc["section"]


@pytest.mark.parametrize("path", FILES, ids=lambda path: path.name)
def test_every_section_has_all_keys_with_their_types_and_no_empty_text(path: Path) -> None:
    for section in DOCS[path.stem]["section"]:
        where = f"{path.name} §{section.get('id')}"
        assert set(section) == set(SECTION_KEYS), where
        for key, kind in SECTION_KEYS.items():
            assert isinstance(section[key], kind), f"{where}: {key}"
        assert SECTION_ID.fullmatch(section["id"]), where
        for key in ("title", *TEXT_KEYS):
            assert section[key].strip(), f"{where}: empty {key}"
        for key in TEXT_KEYS:
            assert not HTML_TAG.search(section[key]), f"{where}: raw HTML in {key}"
            assert not LINK.search(section[key]), f"{where}: link in {key}"


@pytest.mark.parametrize("path", FILES, ids=lambda path: path.name)
def test_section_ids_are_unique_and_in_rfc_order(path: Path) -> None:
    ids = [section["id"] for section in DOCS[path.stem]["section"]]
    keys = [order_key(section_id) for section_id in ids]
    assert all(a < b for a, b in pairwise(keys)), ids


@pytest.mark.parametrize(
    "cited", [key for key in TITLES if key.split("#")[0] in FULLY_CITED], ids=str
)
def test_every_section_the_ui_titles_is_annotated_under_the_same_title(cited: str) -> None:
    rfc, section_id = cited.split("#")
    titles = {section["id"]: section["title"] for section in DOCS[rfc]["section"]}
    assert titles.get(section_id) == TITLES[cited]
