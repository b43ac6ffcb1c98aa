"""The annotated RFC 9114 (lessons/rfc/9114.toml): one annotation per section, all filled in.

The file is data a teacher edits by hand, so these checks keep it complete: it parses, every
entry has the six keys with the right types, the ids and titles of §1-§11 are those of the
RFC's table of contents (`h3learn.curriculum.rfc_toc.TITLES`), Appendix A follows, and the ids
appear once each, in the RFC's order.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from h3learn.curriculum.rfc_toc import TITLES

ANNOTATIONS = Path(__file__).resolve().parents[2] / "lessons" / "rfc" / "9114.toml"

#: Each key of a [[section]] entry and the type of its value.
SECTION_KEYS: dict[str, type] = {
    "id": str,
    "title": str,
    "normative": bool,
    "says": str,
    "why": str,
    "pitfalls": str,
}


def load() -> dict[str, Any]:
    with ANNOTATIONS.open("rb") as file:
        return tomllib.load(file)


def sections() -> list[dict[str, Any]]:
    return list(load()["section"])


def rfc_order(section_id: str) -> tuple[tuple[int, int], ...]:
    """Sort key for "7.2.4.1" or "A.2.5": numbered sections first, then the appendices."""
    first, *rest = section_id.split(".")
    head = (0, int(first)) if first.isdigit() else (1, ord(first))
    return (head, *((0, int(part)) for part in rest))


def test_the_file_parses_and_names_rfc_9114() -> None:
    data = load()
    assert data["rfc"] == 9114
    assert data["title"] == "HTTP/3"
    assert isinstance(data["section"], list) and data["section"]


def test_every_section_has_the_six_keys_with_their_types() -> None:
    for section in sections():
        assert set(section) == set(SECTION_KEYS), section.get("id")
        for key, kind in SECTION_KEYS.items():
            assert isinstance(section[key], kind), (section["id"], key)


def test_no_field_is_empty() -> None:
    for section in sections():
        for key in ("id", "title", "says", "why", "pitfalls"):
            assert section[key].strip(), (section["id"], key)


def test_every_section_1_to_11_is_annotated_with_its_rfc_title() -> None:
    expected = {
        key.split("#")[1]: title
        for key, title in TITLES.items()
        if key[:5] == "9114#" and key[5].isdigit()
    }
    numbered = {s["id"]: s["title"] for s in sections() if s["id"][0].isdigit()}
    assert numbered == expected


def test_appendix_a_follows_the_numbered_sections() -> None:
    appendix = [s["id"] for s in sections() if not s["id"][0].isdigit()]
    assert appendix[0] == "A"
    assert all(section_id.startswith("A.") for section_id in appendix[1:])


def test_ids_are_unique_and_in_rfc_order() -> None:
    ids = [section["id"] for section in sections()]
    assert len(ids) == len(set(ids))
    assert ids == sorted(ids, key=rfc_order)
